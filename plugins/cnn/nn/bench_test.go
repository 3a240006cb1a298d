package nn

import (
	"math/rand/v2"
	"syscall"

	"gonum.org/v1/gonum/blas"
	"testing"
	"time"
)

// benchTrain measures training throughput (images/s) of NewCNN with
// `filters` filters and `dense` units on random images of the given shape:
// one SGD update per mini-batch of `batch` images, as in Train.
func benchTrain(b *testing.B, in Shape, filters, dense, batch int) {
	net, err := NewCNN[float32](Config{Input: in, Classes: 10, Filters: filters, Dense: dense, Dropout: 0.25}, 1)
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	x := make([]float32, batch*in.Size())
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	y := make([]int, batch)
	for i := range y {
		y[i] = rng.IntN(10)
	}
	opt := &sgd[float32]{LR: 0.01, Decay: 1e-4, Momentum: 0.9, L2: 1e-5}
	params := net.Params()
	step := func() {
		net.zeroGrad()
		net.gradient(x, y, batch)
		opt.Update(params)
	}
	step() // allocate buffers
	b.ResetTimer()
	start, cpu0 := time.Now(), cpuTime()
	for b.Loop() {
		step()
	}
	b.ReportMetric(float64(b.N*batch)/time.Since(start).Seconds(), "images/s")
	// Images per CPU-second (user+system time of the process) is less
	// sensitive to other load on a shared machine than wall-clock time.
	b.ReportMetric(float64(b.N*batch)/(cpuTime()-cpu0).Seconds(), "images/cpu-s")
}

// BenchmarkTrainFashion is the mid-size configuration: 64 filters,
// 512 dense units, batch 128, on 28×28×1 images.
func BenchmarkTrainFashion(b *testing.B) { benchTrain(b, Shape{28, 28, 1}, 64, 512, 128) }

// BenchmarkTrainCIFAR is the same network on 32×32×3 images.
func BenchmarkTrainCIFAR(b *testing.B) { benchTrain(b, Shape{32, 32, 3}, 64, 512, 128) }

// benchGemm reports GFLOP/s of one of the network's GEMM shapes.
func benchGemm(b *testing.B, tA, tB blas.Transpose, m, n, k int) {
	a, bb, c := make([]float32, m*k), make([]float32, k*n), make([]float32, m*n)
	for i := range a {
		a[i] = float32(i%7) - 3
	}
	for i := range bb {
		bb[i] = float32(i%5) - 2
	}
	lda, ldb := k, n
	if tA == blas.Trans {
		lda = m
	}
	if tB == blas.Trans {
		ldb = k
	}
	start, cpu0 := time.Now(), cpuTime()
	for b.Loop() {
		gemm(tA, tB, m, n, k, a, lda, bb, ldb, 0, c, n)
	}
	flop := 2 * float64(m) * float64(n) * float64(k) * float64(b.N)
	b.ReportMetric(flop/time.Since(start).Seconds()/1e9, "GFLOP/s")
	b.ReportMetric(flop/(cpuTime()-cpu0).Seconds()/1e9, "GFLOP/cpu-s")
}

// The second convolution of BenchmarkTrainFashion on a 64-image chunk
// (12,544 output pixels, K = 9·64, F = 64) and the hidden dense layer.
func BenchmarkGemmConvForward(b *testing.B) { benchGemm(b, blas.NoTrans, blas.Trans, 12544, 64, 576) }
func BenchmarkGemmConvWeights(b *testing.B) { benchGemm(b, blas.NoTrans, blas.Trans, 64, 576, 12544) }
func BenchmarkGemmConvInput(b *testing.B)   { benchGemm(b, blas.NoTrans, blas.Trans, 12544, 576, 64) }
func BenchmarkGemmDenseForward(b *testing.B) {
	benchGemm(b, blas.NoTrans, blas.Trans, 64, 512, 3136)
}

// cpuTime returns the process's user+system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

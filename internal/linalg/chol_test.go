package linalg

import (
	"errors"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
)

// kernelMatrix returns a Matérn-5/2 kernel matrix on n uniform points in
// [0,1]^d with length-scale 0.3 plus noise·I (row-major, full), the kind
// of matrix the GP factors.
func kernelMatrix(n, d int, noise float64, seed uint64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 1))
	x := make([]float64, n*d)
	for i := range x {
		x[i] = rng.Float64()
	}
	a := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			var r2 float64
			for t := 0; t < d; t++ {
				dt := (x[i*d+t] - x[j*d+t]) / 0.3
				r2 += dt * dt
			}
			r := math.Sqrt(5 * r2)
			v := (1 + r + r*r/3) * math.Exp(-r)
			a[i*n+j], a[j*n+i] = v, v
		}
		a[i*n+i] += noise
	}
	return a
}

// forEachPath runs test as a subtest on each trailing-update path of the
// blocked kernel: "kernel" (skipped where there is no micro-kernel) and
// "fallback" (gonum's Gemm, forced through useKernel).
func forEachPath(t *testing.T, test func(*testing.T)) {
	defer func(u bool) { useKernel = u }(useKernel)
	for _, path := range []struct {
		name string
		on   bool
	}{{"kernel", true}, {"fallback", false}} {
		t.Run(path.name, func(t *testing.T) {
			if path.on && !hasKernel {
				t.Skip("no assembly micro-kernel on this CPU/build")
			}
			useKernel = path.on
			test(t)
		})
	}
}

// potrf is gonum's factorization of a's lower triangle, upper zeroed.
func potrf(t *testing.T, a []float64, n int) []float64 {
	l := append([]float64(nil), a...)
	if _, ok := lapack64.Potrf(blas64.Symmetric{Uplo: blas.Lower, N: n, Stride: n, Data: l}); !ok {
		t.Fatal("gonum Potrf failed")
	}
	zeroUpper(l, n)
	return l
}

// maxRelDiff returns max |x−y| / max |y|.
func maxRelDiff(x, y []float64) float64 {
	var d, m float64
	for i := range y {
		d = math.Max(d, math.Abs(x[i]-y[i]))
		m = math.Max(m, math.Abs(y[i]))
	}
	return d / m
}

// The blocked kernel agrees with gonum's Potrf to 1e-12 relative, for
// orders that are and are not multiples of the tile, below and above
// BlockedMin.
// Both trailing-update paths are checked: the micro-kernel (where the CPU
// has one) and gonum's Gemm fallback.
func TestCholeskyBlockedMatchesPotrf(t *testing.T) {
	forEachPath(t, testCholeskyBlockedMatchesPotrf)
}

func testCholeskyBlockedMatchesPotrf(t *testing.T) {
	for _, n := range []int{1, 7, blockSize, blockSize + 1, 3*blockSize - 5, BlockedMin + 37} {
		a := kernelMatrix(n, 6, 1e-3, uint64(n))
		want := potrf(t, a, n)
		got := append([]float64(nil), a...)
		if !CholeskyBlocked(got, n, 3) {
			t.Fatalf("n=%d: blocked Cholesky failed", n)
		}
		zeroUpper(got, n)
		if d := maxRelDiff(got, want); d > 1e-12 {
			t.Errorf("n=%d: blocked factor differs from Potrf by %.3g relative", n, d)
		}
	}
}

// The blocked factor is bit-for-bit the same for every number of workers
// and every GOMAXPROCS (gonum's Gemm inside it goes parallel by size).
func TestCholeskyBlockedBitwiseAcrossWorkers(t *testing.T) {
	forEachPath(t, testCholeskyBlockedBitwiseAcrossWorkers)
}

func testCholeskyBlockedBitwiseAcrossWorkers(t *testing.T) {
	n := 2*blockSize + 45
	if !testing.Short() {
		n = BlockedMin + 3*blockSize + 11
	}
	a := kernelMatrix(n, 6, 1e-4, 7)
	sameBitsAcross(t, []int{1, 2, 4, 8}, []int{1, 2, 3, 8}, func(w int) []float64 {
		l := append([]float64(nil), a...)
		if !CholeskyBlocked(l, n, w) {
			t.Fatal("blocked Cholesky failed")
		}
		return l
	})
}

// sameBitsAcross runs run(workers) under every GOMAXPROCS in procs and
// every worker count in workers and fails unless every result is bit for
// bit the first one.
func sameBitsAcross(t *testing.T, procs, workers []int, run func(workers int) []float64) {
	t.Helper()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	var ref []float64
	for _, p := range procs {
		runtime.GOMAXPROCS(p)
		for _, w := range workers {
			x := run(w)
			if ref == nil {
				ref = x
				continue
			}
			for i := range x {
				if math.Float64bits(x[i]) != math.Float64bits(ref[i]) {
					t.Fatalf("GOMAXPROCS=%d workers=%d: entry %d is %v, want %v bit for bit", p, w, i, x[i], ref[i])
				}
			}
		}
	}
}

// Below BlockedMin Cholesky is gonum's Potrf bit for bit when no jitter is
// needed, so small factorizations are unchanged by the shared policy.
func TestCholeskySmallIsPotrf(t *testing.T) {
	for _, n := range []int{1, 5, 40, 200} {
		a := kernelMatrix(n, 3, 1e-2, 3)
		want := potrf(t, a, n)
		got := make([]float64, n*n)
		j, err := Cholesky(got, a, n)
		if err != nil || j != (Jitter{}) {
			t.Fatalf("n=%d: jitter %+v, err %v", n, j, err)
		}
		for i := range got {
			if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
				t.Fatalf("n=%d: entry %d differs from Potrf", n, i)
			}
		}
	}
}

// Exactly singular matrices (duplicate rows, noise free) escalate to the
// first jitter level that clears the pivot floor, and the factor
// reproduces A + jI; a strongly indefinite matrix fails with
// ErrNotPositiveDefinite, as does a NaN diagonal.
func TestCholeskyJitterEscalation(t *testing.T) {
	for _, n := range []int{6, BlockedMin + 5} {
		base := kernelMatrix(n/2, 2, 0, 11)
		m := n / 2
		a := make([]float64, n*n) // each point twice
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				a[i*n+j] = base[(i%m)*m+j%m]
			}
		}
		l := make([]float64, n*n)
		j, err := Cholesky(l, a, n)
		if err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		if j.Rel < MinJitter || j.Rel > MaxJitter*(1+1e-9) || math.Abs(j.Abs-j.Rel) > 1e-15 {
			t.Fatalf("n=%d: jitter %+v, want a level in [MinJitter, MaxJitter] of mean diagonal 1", n, j)
		}
		if minPivot(l, n) < MinPivot {
			t.Errorf("n=%d: accepted pivot² %g below the floor", n, minPivot(l, n))
		}
		// L Lᵀ = A + jI to round-off of the jitter's size.
		llt := make([]float64, n*n)
		blas64.Gemm(blas.NoTrans, blas.Trans, 1, view(l, n, 0, 0, n, n), view(l, n, 0, 0, n, n), 0, view(llt, n, 0, 0, n, n))
		for i := 0; i < n; i++ {
			a[i*n+i] += j.Abs
		}
		if d := maxRelDiff(llt, a); d > 1e-12 {
			t.Errorf("n=%d: L Lᵀ differs from A + jI by %.3g", n, d)
		}
	}

	a := []float64{1, 0, 0, -1} // eigenvalue −1 ≫ MaxJitter
	if _, err := Cholesky(make([]float64, 4), a, 2); !errors.Is(err, ErrNotPositiveDefinite) {
		t.Errorf("indefinite: err = %v, want ErrNotPositiveDefinite", err)
	}
	a = []float64{math.NaN(), 0, 0, 1}
	if _, err := Cholesky(make([]float64, 4), a, 2); !errors.Is(err, ErrNotPositiveDefinite) {
		t.Errorf("NaN diagonal: err = %v, want ErrNotPositiveDefinite", err)
	}
	if _, err := Cholesky(make([]float64, 3), make([]float64, 4), 2); err == nil {
		t.Error("short destination accepted")
	}
}

// A failed pivot in a late tile is reported by the blocked kernel.
func TestCholeskyBlockedIndefinite(t *testing.T) {
	n := 2*blockSize + 3
	a := kernelMatrix(n, 4, 1e-3, 5)
	a[(n-2)*n+n-2] = -1
	if CholeskyBlocked(a, n, 2) {
		t.Fatal("indefinite matrix factored")
	}
}

package nn

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"gonum.org/v1/gonum/blas"
)

// naiveGemm is the textbook triple loop for C = op(A)·op(B) + beta·C.
func naiveGemm(tA, tB blas.Transpose, m, n, k int, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	for i := range m {
		for j := range n {
			var s float64
			for l := range k {
				var av, bv float64
				if tA == blas.Trans {
					av = a[l*lda+i]
				} else {
					av = a[i*lda+l]
				}
				if tB == blas.Trans {
					bv = b[j*ldb+l]
				} else {
					bv = b[l*ldb+j]
				}
				s += av * bv
			}
			c[i*ldc+j] = s + beta*c[i*ldc+j]
		}
	}
}

func TestGemmMatchesNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	for _, sz := range [][3]int{{1, 1, 1}, {3, 5, 7}, {70, 130, 9}, {200, 33, 150}, {129, 257, 64}} {
		m, n, k := sz[0], sz[1], sz[2]
		for _, tA := range []blas.Transpose{blas.NoTrans, blas.Trans} {
			for _, tB := range []blas.Transpose{blas.NoTrans, blas.Trans} {
				for _, beta := range []float64{0, 1} {
					lda, ldb := k, n
					if tA == blas.Trans {
						lda = m
					}
					if tB == blas.Trans {
						ldb = k
					}
					a, b := randSlice(rng, m*k), randSlice(rng, k*n)
					c0 := randSlice(rng, m*n)
					want := append([]float64(nil), c0...)
					naiveGemm(tA, tB, m, n, k, a, lda, b, ldb, beta, want, n)
					got := append([]float64(nil), c0...)
					gemm(tA, tB, m, n, k, a, lda, b, ldb, beta, got, n)
					for i := range got {
						if math.Abs(got[i]-want[i]) > 1e-10*float64(k) {
							t.Fatalf("gemm %v %v m=%d n=%d k=%d beta=%v: c[%d] = %v, want %v", tA, tB, m, n, k, beta, i, got[i], want[i])
						}
					}
					// float32 path through Sgemm.
					a32, b32, c32 := to32(a), to32(b), to32(c0)
					gemm(tA, tB, m, n, k, a32, lda, b32, ldb, float32(beta), c32, n)
					for i := range c32 {
						if math.Abs(float64(c32[i])-want[i]) > 1e-5*float64(k)*(1+math.Abs(want[i])) {
							t.Fatalf("float32 gemm %v %v m=%d n=%d k=%d: c[%d] = %v, want %v", tA, tB, m, n, k, i, c32[i], want[i])
						}
					}
				}
			}
		}
	}
}

func to32(s []float64) []float32 {
	r := make([]float32, len(s))
	for i, v := range s {
		r[i] = float32(v)
	}
	return r
}

// TestGemmDeterministic checks that the parallel driver gives bit-identical
// results for one and for several goroutines (each element is reduced by a
// single serial call in a fixed order).
func TestGemmDeterministic(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 34))
	m, n, k := 300, 200, 500
	a, b := to32(randSlice(rng, m*k)), to32(randSlice(rng, n*k))
	run := func(procs int) []float32 {
		old := runtime.GOMAXPROCS(procs)
		defer runtime.GOMAXPROCS(old)
		c := make([]float32, m*n)
		gemm(blas.NoTrans, blas.Trans, m, n, k, a, k, b, k, 0, c, n)
		return c
	}
	ref := run(1)
	for _, p := range []int{2, 3, 8} {
		got := run(p)
		for i := range ref {
			if got[i] != ref[i] {
				t.Fatalf("GOMAXPROCS=%d: c[%d] = %v, with 1 goroutine %v", p, i, got[i], ref[i])
			}
		}
	}
}

func TestTranspose(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 36))
	for _, rc := range [][2]int{{1, 1}, {3, 70}, {65, 33}} {
		r, c := rc[0], rc[1]
		src := randSlice(rng, r*c)
		dst := make([]float64, r*c)
		transpose(dst, src, r, c)
		for i := range r {
			for j := range c {
				if dst[j*r+i] != src[i*c+j] {
					t.Fatalf("%d×%d transpose wrong at (%d,%d)", r, c, i, j)
				}
			}
		}
	}
}

func TestSGDUpdate(t *testing.T) {
	w := &Param[float64]{W: []float64{1, -2}, G: []float64{0.5, 0.25}, Decay: true}
	b := &Param[float64]{W: []float64{3}, G: []float64{1}}
	s := &sgd[float64]{LR: 0.1, Decay: 0.5, Momentum: 0.9, L2: 0.01}
	params := []*Param[float64]{w, b}
	s.Update(params)
	// Step 0: η = 0.1; v = g + λw.
	v0 := []float64{0.5 + 0.01*1, 0.25 + 0.01*-2}
	want := []float64{1 - 0.1*v0[0], -2 - 0.1*v0[1]}
	wantB := 3 - 0.1*1.0
	if math.Abs(w.W[0]-want[0]) > 1e-15 || math.Abs(w.W[1]-want[1]) > 1e-15 || math.Abs(b.W[0]-wantB) > 1e-15 {
		t.Fatalf("after step 0: w = %v b = %v, want %v %v", w.W, b.W, want, wantB)
	}
	// Step 1: η = 0.1/(1+0.5); v = 0.9 v0 + g + λw.
	w0 := append([]float64(nil), w.W...)
	s.Update(params)
	eta := 0.1 / 1.5
	for i := range w0 {
		v := 0.9*v0[i] + w.G[i] + 0.01*w0[i]
		if math.Abs(w.W[i]-(w0[i]-eta*v)) > 1e-15 {
			t.Fatalf("after step 1: w[%d] = %v, want %v", i, w.W[i], w0[i]-eta*v)
		}
	}
	if s.steps() != 2 || math.Abs(s.rate()-0.1/2) > 1e-15 {
		t.Fatalf("steps %d rate %v, want 2 and 0.05", s.steps(), s.rate())
	}
}

// TestSGDInlineL2MatchesAddL2Grad ties SGD's inline L2 term (g = G + λ·w
// inside Update) to addL2Grad, whose gradient TestL2Gradient checks against
// central differences of l2Penalty: SGD with L2 = λ must move the weights
// as addL2Grad followed by SGD with L2 = 0 does, and leave the biases alone.
// The first update is bit-identical (v starts at 0, so both compute G + λw);
// later ones add μv, G and λw in another order and agree to rounding. If
// Update dropped the L2 term or applied it to biases, the two would differ.
func TestSGDInlineL2MatchesAddL2Grad(t *testing.T) {
	const lambda, steps = 0.03, 5
	rng := rand.New(rand.NewPCG(31, 32))
	newParams := func() []*Param[float64] {
		// 40,000 weights: Update splits them among goroutines (parallelFor).
		return []*Param[float64]{
			{Name: "w", W: make([]float64, 40000), G: make([]float64, 40000), Decay: true},
			{Name: "b", W: make([]float64, 7), G: make([]float64, 7)},
		}
	}
	inline, split := newParams(), newParams()
	for i, p := range inline {
		copy(p.W, randSlice(rng, len(p.W)))
		copy(split[i].W, p.W)
	}
	optInline := &sgd[float64]{LR: 0.1, Decay: 0.1, Momentum: 0.9, L2: lambda}
	optSplit := &sgd[float64]{LR: 0.1, Decay: 0.1, Momentum: 0.9}
	for step := range steps {
		for i, p := range inline {
			copy(p.G, randSlice(rng, len(p.G)))
			copy(split[i].G, p.G)
		}
		optInline.Update(inline)
		addL2Grad(split, lambda)
		optSplit.Update(split)
		for i, p := range inline {
			for j, w := range p.W {
				got := split[i].W[j]
				if step == 0 && got != w || math.Abs(got-w) > 1e-13*max(1, math.Abs(w)) {
					t.Fatalf("step %d, %s[%d]: inline L2 gives %v, AddL2Grad then SGD %v", step, p.Name, j, w, got)
				}
			}
		}
	}
}

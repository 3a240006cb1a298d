package acq

import (
	"context"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/gp"
)

// TestPESDerivativeCovariances checks the closed-form covariances between
// f, ∇f and ∇²f entries against finite differences of the kernel itself.
func TestPESDerivativeCovariances(t *testing.T) {
	ls := []float64{0.3, 0.5, 0.8}
	for _, k := range []gp.Kernel{gp.NewSE(ls, 1.7), gp.NewMatern52(ls, 1.7)} {
		r, err := radialOf(k)
		if err != nil {
			t.Fatal(err)
		}
		a := []float64{0.4, 0.55, 0.2}
		b := []float64{0.52, 0.31, 0.44}
		Fs := functionals([]float64{0.5, 0.5, 0.5})
		// ∂^F_a k(a, b) by central differences of k.Eval in a.
		const h = 1e-4
		kat := func(da []float64) float64 {
			x := append([]float64(nil), a...)
			for i := range x {
				x[i] += da[i]
			}
			return k.Eval(x, b)
		}
		e := func(i int, s float64) []float64 { v := make([]float64, 3); v[i] = s; return v }
		add := func(u, v []float64) []float64 {
			w := make([]float64, 3)
			for i := range w {
				w[i] = u[i] + v[i]
			}
			return w
		}
		delta := []float64{a[0] - b[0], a[1] - b[1], a[2] - b[2]}
		for _, F := range Fs {
			var fd float64
			switch F.kind {
			case fnValue:
				fd = kat(make([]float64, 3))
			case fnGrad:
				fd = (kat(e(F.i, h)) - kat(e(F.i, -h))) / (2 * h)
			case fnHessDiag:
				fd = (kat(e(F.i, h)) - 2*kat(make([]float64, 3)) + kat(e(F.i, -h))) / (h * h)
			case fnHessOff:
				fd = (kat(add(e(F.i, h), e(F.j, h))) - kat(add(e(F.i, h), e(F.j, -h))) -
					kat(add(e(F.i, -h), e(F.j, h))) + kat(add(e(F.i, -h), e(F.j, -h)))) / (4 * h * h)
			}
			if got := r.cross(F, delta); math.Abs(got-fd) > 1e-5*math.Max(1, math.Abs(fd)) {
				t.Errorf("%T cross %+v: %v, finite difference %v", k, F, got, fd)
			}
		}
		// Same-point covariances: differentiate cross(A, a − b) in b at b = a
		// (cov(A f(a), B f(b)) = ∂^B_b ∂^A_a k(a, b)); orders up to 2 in b.
		for _, A := range Fs {
			at := func(db []float64) float64 {
				d := make([]float64, 3)
				for i := range d {
					d[i] = -db[i] // δ = a − (a + db)
				}
				return r.cross(A, d)
			}
			zero := make([]float64, 3)
			fdAt := func(B functional, hb float64) float64 {
				switch B.kind {
				case fnGrad:
					return (at(e(B.i, hb)) - at(e(B.i, -hb))) / (2 * hb)
				case fnHessDiag:
					return (at(e(B.i, hb)) - 2*at(zero) + at(e(B.i, -hb))) / (hb * hb)
				case fnHessOff:
					return (at(add(e(B.i, hb), e(B.j, hb))) - at(add(e(B.i, hb), e(B.j, -hb))) -
						at(add(e(B.i, -hb), e(B.j, hb))) + at(add(e(B.i, -hb), e(B.j, -hb)))) / (4 * hb * hb)
				}
				return at(zero)
			}
			for _, B := range Fs {
				// The Matérn-5/2 fourth derivative is only Lipschitz at 0, so
				// differences converge at O(h): Richardson-extrapolate.
				const hb = 1e-3
				fd := 2*fdAt(B, hb/2) - fdAt(B, hb)
				scale := math.Sqrt(math.Abs(r.same(A, A) * r.same(B, B)))
				if got := r.same(A, B); math.Abs(got-fd) > 1e-3*scale {
					t.Errorf("%T same %+v,%+v: %v, finite difference %v", k, A, B, got, fd)
				}
			}
		}
	}
}

// TestEPSingleSiteIsExact: with one truncation EP is exact, so its moments
// must equal the truncated Gaussian's closed form.
func TestEPSingleSiteIsExact(t *testing.T) {
	mu := []float64{0.3, -0.2}
	S := mat.NewDense(2, 2, []float64{1.0, 0.6, 0.6, 2.0})
	// Soft condition B on a 1-D Gaussian N(0.3, 1).
	best, sn := 0.8, 0.1
	m, V, err := epTruncations(mu[:1], mat.NewDense(1, 1, []float64{1.0}), []functional{{site: siteAboveBest}}, best, sn)
	if err != nil {
		t.Fatal(err)
	}
	den := math.Sqrt(1 + sn*sn)
	z := (mu[0] - best) / den
	lam := invMills(z)
	wantM := mu[0] + lam/den
	wantV := 1 - lam*(z+lam)/(1+sn*sn)
	if math.Abs(m[0]-wantM) > 1e-8 || math.Abs(V.At(0, 0)-wantV) > 1e-8 {
		t.Errorf("EP soft site: (%v, %v), exact (%v, %v)", m[0], V.At(0, 0), wantM, wantV)
	}
	// Hard site u_0 ≤ 0 on a 2-D Gaussian; u_1 carries no site (a kind
	// epTruncations skips), so it follows by linear regression on u_0.
	m2, V2, err := epTruncations(mu, S, []functional{{site: siteLE0}, {site: siteEqZero}}, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	z = -mu[0] / 1
	lam = invMills(z)
	m0 := mu[0] - lam
	v0 := 1 - lam*(z+lam)
	beta := 0.6 / 1.0
	wantM1 := mu[1] + beta*(m0-mu[0])
	wantV1 := 2 - beta*0.6 + beta*beta*v0
	if math.Abs(m2[0]-m0) > 1e-8 || math.Abs(V2.At(0, 0)-v0) > 1e-8 ||
		math.Abs(m2[1]-wantM1) > 1e-8 || math.Abs(V2.At(1, 1)-wantV1) > 1e-8 {
		t.Errorf("EP hard site: mean %v var (%v, %v), exact mean (%v, %v) var (%v, %v)",
			m2, V2.At(0, 0), V2.At(1, 1), m0, wantM1, v0, wantV1)
	}
}

// TestPESValues: PES is finite everywhere, and the information about x* is
// larger away from the data than at an observed point of a nearly
// noise-free model (where nothing is left to learn).
func TestPESValues(t *testing.T) {
	s := testState(t, 12, 2, 8)
	f, err := pes{Samples: 5, Features: 500}.Prepare(context.Background(), s, 1)
	if err != nil {
		t.Fatal(err)
	}
	at := func(x ...float64) float64 { return f.Eval(mat.NewDense(1, 2, x), nil) }
	x0 := s.GP.X().RawRowView(0)
	vData := at(x0...)
	for _, u := range [][]float64{{0.1, 0.1}, {0.5, 0.5}, {0.9, 0.2}, {0.33, 0.77}} {
		v := at(u...)
		if math.IsNaN(v) || math.IsInf(v, 0) {
			t.Fatalf("PES(%v) = %v", u, v)
		}
	}
	if vData > 0.05 {
		t.Errorf("PES at an observed point = %v, expected ≈ 0", vData)
	}
	Xb, _, err := Maximize(context.Background(), f, 1, 2, OptimizeSettings{RawSamples: 64, Restarts: 2}, s.Rand)
	if err != nil {
		t.Fatal(err)
	}
	if v := f.Eval(Xb, nil); !(v > vData) {
		t.Errorf("PES maximum %v not above its value at data %v", v, vData)
	}
}

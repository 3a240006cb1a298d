package acq

import (
	"math"
	"testing"
)

// Reference values below were computed with mpmath at 50 significant digits
// from the defining formulas (erfcx = exp(x²)·erfc(x), Φ = ncdf, φ = npdf,
// h = φ + zΦ); they are independent of the code under test.

func relClose(got, want, tol float64) bool {
	if got == want {
		return true
	}
	return math.Abs(got-want) <= tol*math.Max(math.Abs(want), 1e-300)
}

func TestErfcx(t *testing.T) {
	for _, c := range []struct{ x, want float64 }{
		{-5, 144009798674.66104041},
		{-1, 5.0089800807622834663},
		{0, 1.0},
		{0.5, 0.61569034419292587487},
		{1.9, 0.26650937366167264968},
		{2, 0.25539567631050574387},
		{2.1, 0.24511912334517234674},
		{5, 0.11070463773306862637},
		{10, 0.056140992743822585858},
		{30, 0.018795888861416751497},
		{1e3, 0.0005641893014533876542},
		{1e8, 5.6418958354775625874e-9},
	} {
		if got := erfcx(c.x); !relClose(got, c.want, 1e-14) {
			t.Errorf("Erfcx(%v) = %.17g, want %.17g", c.x, got, c.want)
		}
	}
	if !math.IsInf(erfcx(-30), 1) || erfcx(math.Inf(1)) != 0 {
		t.Error("Erfcx limits wrong")
	}
}

func TestLogPhi(t *testing.T) {
	for _, c := range []struct{ z, want float64 }{
		{-1e4, -50000010.129278915181},
		{-100, -5005.5242086942050886},
		{-40, -804.60844201375378817},
		{-38, -726.5572160188201301},
		{-10, -53.231285150512470578},
		{-3, -6.6077262215103495433},
		{0, -0.69314718055994530942},
		{3, -0.0013508099647481937988},
		{10, -7.619853024160526066e-24},
	} {
		if got := LogPhi(c.z); !relClose(got, c.want, 1e-14) {
			t.Errorf("LogPhi(%v) = %.17g, want %.17g", c.z, got, c.want)
		}
	}
	if got := LogPhi(40); got > 0 || got < -1e-300 {
		t.Errorf("LogPhi(40) = %v, want ≈ 0", got)
	}
}

func TestInvMills(t *testing.T) {
	for _, c := range []struct{ z, want float64 }{
		{-1e4, 10000.000099999998},
		{-100, 100.00999800099926071},
		{-10, 10.098093233962511963},
		{-5, 5.1865039671258421156},
		{-1, 1.5251352761609812091},
		{0, 0.79788456080286535588},
		{3, 0.0044378390421256637933},
		{10, 7.6945986267064193463e-23},
	} {
		if got := invMills(c.z); !relClose(got, c.want, 1e-13) {
			t.Errorf("InvMills(%v) = %.17g, want %.17g", c.z, got, c.want)
		}
	}
	// λ is the derivative of log Φ.
	for _, z := range []float64{-30, -7, -2, 0.5, 4} {
		h := 1e-5 * math.Max(1, math.Abs(z))
		fd := (LogPhi(z+h) - LogPhi(z-h)) / (2 * h)
		if !relClose(invMills(z), fd, 1e-7) {
			t.Errorf("InvMills(%v) = %v, central difference of LogPhi %v", z, invMills(z), fd)
		}
	}
}

func TestLogH(t *testing.T) {
	for _, c := range []struct{ z, logh, dlogh float64 }{
		{-1e4, -50000019.339619307157, 10000.000199999994},
		{-100, -5010.1295788002497923, 100.01999400419586505},
		{-40, -808.29856835661996024, 40.049906657648518193},
		{-10, -55.553122036122355927, 10.194383033412553306},
		{-5, -16.744301162660990143, 5.3618162412880885298},
		{-3.0001, -7.8700392977567776583, 3.5324255574346376502},
		{-2.9999, -7.8693328302532372312, 3.5322494782775359136},
		{-1, -2.4851210257126413368, 1.9042712333296918229},
		{0, -0.91893853320467274178, 1.2533141373155002512},
		{1, 0.080026218849306940029, 0.77663872520173925975},
		{5, 1.6094379231264313851, 0.19999994053122004649},
		{30, 3.4011973816621553754, 0.033333333333333333333},
	} {
		lh, dlh := logH(c.z)
		// Direct evaluation just above −3 loses about a digit to
		// cancellation in φ + zΦ.
		if !relClose(lh, c.logh, 1e-13) || !relClose(dlh, c.dlogh, 1e-12) {
			t.Errorf("LogH(%v) = (%.17g, %.17g), want (%.17g, %.17g)", c.z, lh, dlh, c.logh, c.dlogh)
		}
	}
}

// TestLogEIWhereEIUnderflows shows the point of log-EI: at z = −40 plain EI
// is exactly 0 in float64 (no gradient for the optimizer), log-EI is finite,
// matches the reference and has the right slope.
func TestLogEIWhereEIUnderflows(t *testing.T) {
	const mu, sigma, best = -39.0, 0.5, -19.0 // z = −40
	z := (mu - best) / sigma
	plain := sigma * (normPDF(z) + z*NormCDF(z))
	if plain != 0 {
		t.Fatalf("expected plain EI to underflow at z=%v, got %v", z, plain)
	}
	v, dmu, dsigma := logEI(mu, sigma, best)
	want := math.Log(sigma) + -808.29856835661996024
	if math.IsInf(v, 0) || !relClose(v, want, 1e-13) {
		t.Errorf("LogEI = %v, want %v", v, want)
	}
	h := 1e-6
	fdmu := func() float64 {
		a, _, _ := logEI(mu+h, sigma, best)
		b, _, _ := logEI(mu-h, sigma, best)
		return (a - b) / (2 * h)
	}()
	fds := func() float64 {
		a, _, _ := logEI(mu, sigma+h, best)
		b, _, _ := logEI(mu, sigma-h, best)
		return (a - b) / (2 * h)
	}()
	if !relClose(dmu, fdmu, 1e-6) || !relClose(dsigma, fds, 1e-6) {
		t.Errorf("LogEI gradient (%v, %v), central differences (%v, %v)", dmu, dsigma, fdmu, fds)
	}
	// In the bulk, log-EI is the log of the textbook closed form.
	for _, c := range []struct{ mu, sigma, best float64 }{{0.3, 0.7, 0.1}, {-0.2, 1.3, 0.9}, {1, 0.1, 1}} {
		z := (c.mu - c.best) / c.sigma
		ei := (c.mu-c.best)*NormCDF(z) + c.sigma*normPDF(z)
		if v, _, _ := logEI(c.mu, c.sigma, c.best); !relClose(v, math.Log(ei), 1e-13) {
			t.Errorf("LogEI(%v) = %v, want log %v = %v", c, v, ei, math.Log(ei))
		}
	}
}

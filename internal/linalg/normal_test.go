package linalg

import (
	"math"
	"testing"
)

// relErr returns |got − want| / |want|.
func relErr(got, want float64) float64 { return math.Abs(got-want) / math.Abs(want) }

// MillsTails reproduces R(u) = Φ(−u)/φ(u) = 1/(u + t) to full precision
// from u = 2.5 on (references from 40-digit arithmetic), and t(s − t) is
// the truncated variance factor 1 − λ(λ − u) computed the long way where
// that does not cancel.
func TestMillsTails(t *testing.T) {
	for _, c := range []struct{ u, r float64 }{
		{2.5, 0.35426511132979366678}, {3, 0.30459029871010329573},
		{4, 0.23665238291356067062}, {5, 0.19280810471531576488},
		{8, 0.12313196325793229628}, {20, 0.049875925981836783658},
		{100, 0.0099990002998501049056},
	} {
		tt, s := MillsTails(c.u)
		if e := relErr(1/(c.u+tt), c.r); e > 2e-15 {
			t.Errorf("R(%g) = %.17g, want %.17g (rel. error %.2g)", c.u, 1/(c.u+tt), c.r, e)
		}
		lam := 1 / c.r
		if v, want := tt*(s-tt), 1-lam*(lam-c.u); c.u <= 4 && relErr(v, want) > 1e-12 {
			t.Errorf("u=%g: t(s−t) = %.15g, want %.15g", c.u, v, want)
		}
	}
}

// Erfcx, LogPhi and InvMills against 40-digit references, across the
// switch points and far into the tail.
func TestGaussianTails(t *testing.T) {
	for _, c := range []struct{ x, want float64 }{
		{-1.5, 18.653886256262733939}, {0.5, 0.61569034419292587487},
		{2, 0.25539567631050574387}, {3, 0.17900115118138995042},
		{10, 0.056140992743822585858}, {1000, 0.0005641893014533876542},
	} {
		if e := relErr(Erfcx(c.x), c.want); e > 4e-15 {
			t.Errorf("Erfcx(%g) = %.17g, want %.17g", c.x, Erfcx(c.x), c.want)
		}
	}
	for _, c := range []struct{ z, logPhi, invMills float64 }{
		{-3, -6.6077262215103495433, 3.2830986549304365069},
		{-10, -53.231285150512470578, 10.098093233962511963},
		{-40, -804.60844201375378817, 40.024968847207263723},
	} {
		if e := relErr(LogPhi(c.z), c.logPhi); e > 4e-15 {
			t.Errorf("LogPhi(%g) = %.17g, want %.17g", c.z, LogPhi(c.z), c.logPhi)
		}
		if e := relErr(InvMills(c.z), c.invMills); e > 4e-15 {
			t.Errorf("InvMills(%g) = %.17g, want %.17g", c.z, InvMills(c.z), c.invMills)
		}
	}
}

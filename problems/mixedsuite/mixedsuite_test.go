package mixedsuite

import (
	"context"
	"math"
	"testing"

	"github.com/tesbo/tesbo/sdk"
)

// grid returns the values a dense search tries for parameter p.
func grid(p sdk.Param) []float64 {
	var v []float64
	switch p.Kind {
	case sdk.Categorical:
		for k := range p.Choices {
			v = append(v, float64(k))
		}
	case sdk.Int:
		for k := math.Ceil(p.Low); k <= p.High; k++ {
			v = append(v, k)
		}
	case sdk.LogFloat:
		for t := 0; t <= 50; t++ {
			v = append(v, math.Exp(math.Log(p.Low)+float64(t)/50*(math.Log(p.High)-math.Log(p.Low))))
		}
	default:
		for t := 0; t <= 60; t++ {
			v = append(v, p.Low+float64(t)/60*(p.High-p.Low))
		}
	}
	return v
}

// Every problem's stated minimizer attains its stated f*, and no point of a
// dense grid over its space goes below f* (continuous coordinates on a
// 61-point grid, categoricals and Ints exhaustively).
func TestOptima(t *testing.T) {
	for _, p := range Problems() {
		if !sdk.Space(p.Params).Contains(p.Best) {
			t.Fatalf("%s: best %v outside the space", p.Name, p.Best)
		}
		if f := p.F(p.Best); math.Abs(f-p.Opt) > 1e-9 {
			t.Errorf("%s: F(best) = %.12g, f* = %.12g", p.Name, f, p.Opt)
		}
		gs := make([][]float64, len(p.Params))
		for i, q := range p.Params {
			gs[i] = grid(q)
		}
		x := make([]float64, len(gs))
		low := math.Inf(1)
		var rec func(i int)
		rec = func(i int) {
			if i == len(gs) {
				low = math.Min(low, p.F(x))
				return
			}
			for _, v := range gs[i] {
				x[i] = v
				rec(i + 1)
			}
		}
		rec(0)
		if low < p.Opt-1e-9 {
			t.Errorf("%s: grid reaches %.9g below f* = %.9g", p.Name, low, p.Opt)
		}
		oh := p.oneHot()
		if f := oh.F(oh.Best); math.Abs(f-p.Opt) > 1e-9 || len(oh.Best) != len(oh.Params) {
			t.Errorf("%s: one-hot F(best) = %v", p.Name, f)
		}
	}
}

func TestObjectives(t *testing.T) {
	if len(Names()) != 2*len(Problems()) {
		t.Fatal(Names())
	}
	for _, name := range Names() {
		o, err := New(name)
		if err != nil {
			t.Fatal(err)
		}
		info, _ := o.Info(context.Background())
		if err := info.Validate(); err != nil || !info.Minimize || info.Name != name {
			t.Fatalf("%s: %+v: %v", name, info, err)
		}
		v, err := o.Evaluate(context.Background(), o.p.Best)
		if err != nil || math.Abs(v-*info.Optimum) > 1e-9 {
			t.Fatalf("%s: f(best) = %v, %v", name, v, err)
		}
	}
	if _, err := New("mixed/nope"); err == nil {
		t.Fatal("unknown name accepted")
	}
	o, _ := New("mixed/func2c-onehot")
	// h1 = camel (largest of the three), h2 = camel: the decoded point is
	// the minimizer.
	x := []float64{0.1, 0.9, 0.3, 0.2, 0.8, 0.1, 0, 0, camelArg[0], camelArg[1]}
	if v, _ := o.Evaluate(context.Background(), x); math.Abs(v-0.2*camelMin) > 1e-9 {
		t.Fatalf("one-hot decode: %v", v)
	}
}

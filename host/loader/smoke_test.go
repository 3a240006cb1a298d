package loader

import "testing"

const envTestHost = "TESBO_LOADER_TEST_HOST"

func testHostMain() int { return 0 }

func TestSmoke(t *testing.T) {
	dir := pluginsDir(t, []string{"objective"}, map[string]string{"quad.go": "testdata/scripts/objective.go"})
	r := open(t, dir, Options{})
	for _, p := range r.List(ctxT(t)) {
		t.Logf("%+v", p)
	}
	o, err := r.Objective(ctxT(t), "objective")
	if err != nil {
		t.Fatal(err)
	}
	v, err := o.Evaluate(ctxT(t), []float64{0.3, 0.7})
	t.Log(v, err)
	o, err = r.Objective(ctxT(t), "quad")
	if err != nil {
		t.Fatal(err)
	}
	v, err = o.Evaluate(ctxT(t), []float64{0.3, 0.7})
	t.Log(v, err)
}

package evalserve

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/tesbo/tesbo/host"
	"github.com/tesbo/tesbo/problems/synthetic"
	"github.com/tesbo/tesbo/problems/usersuite"
	"github.com/tesbo/tesbo/sdk"
)

// serve runs Serve on input and returns the output lines.
func serve(t *testing.T, s *Server, input string) []string {
	t.Helper()
	var out strings.Builder
	if err := s.Serve(context.Background(), strings.NewReader(input), &out); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	return strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
}

// line decodes one output line into a generic map.
func line(t *testing.T, l string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(l), &m); err != nil {
		t.Fatalf("output line %q is not JSON: %v", l, err)
	}
	return m
}

// configured opens a synthetic or user-suite objective configured as a
// study with that seed and noise variance would configure it.
func configured(t *testing.T, name string, seed uint64, noiseVar float64, params map[string]string) sdk.Objective {
	t.Helper()
	var obj sdk.Objective
	var err error
	if short, ok := strings.CutPrefix(name, synthetic.Prefix); ok {
		obj, err = synthetic.New(short)
	} else {
		obj, err = usersuite.New(name)
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := host.ConfigureObjective(context.Background(), obj, name, host.Options{Seed: seed, NoiseVar: noiseVar, Params: params}); err != nil {
		t.Fatal(err)
	}
	return obj
}

func newServer(t *testing.T, obj sdk.Objective, name string) *Server {
	t.Helper()
	s, err := New(context.Background(), obj, name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestRoundTrip: the description line, then for each point the objective's
// observed and noise-free values at the mapped native point (maximized),
// with the noise a study would see (y ≠ f, |y − f| a few σ).
func TestRoundTrip(t *testing.T) {
	ctx := context.Background()
	obj := configured(t, "synthetic/hartmann3", 7, 1e-2, nil)
	s := newServer(t, obj, "synthetic/hartmann3")
	pts := [][]float64{{0.1, 0.2, 0.3}, {0.114614, 0.555649, 0.852547}, {0, 1, 0.5}}
	var in strings.Builder
	for _, u := range pts {
		b, _ := json.Marshal(map[string]any{"x": u})
		in.Write(append(b, '\n'))
	}
	out := serve(t, s, in.String())
	if len(out) != 1+len(pts) {
		t.Fatalf("got %d lines, want %d: %q", len(out), 1+len(pts), out)
	}
	h := line(t, out[0])
	if h["name"] != "synthetic/hartmann3" || h["dim"] != 3.0 || math.Abs(h["optimum"].(float64)-3.86278) > 1e-4 {
		t.Errorf("description %v, want name synthetic/hartmann3, dim 3, optimum 3.86278", h)
	}
	nf := obj.(sdk.NoiseFree)
	for i, u := range pts {
		r := line(t, out[1+i])
		y, err := obj.Evaluate(ctx, u) // hartmann3 lives on [0,1]^3: native = unit
		if err != nil {
			t.Fatal(err)
		}
		want, _ := nf.EvaluateNoiseFree(ctx, u)
		if r["y"] != y || r["f"] != want {
			t.Errorf("point %v: got %v, want y %v f %v", u, r, y, want)
		}
		if d := math.Abs(y - want); d == 0 || d > 5*math.Sqrt(1e-2) {
			t.Errorf("point %v: |y − f| = %v, want the noise of σ = 0.1 (nonzero, < 5σ)", u, d)
		}
	}
}

// TestMinimizingNegated: a minimizing objective's values and optimum are
// reported negated, and the native point is the mapped one (rosen3 lives
// on [−2, 2]³).
func TestMinimizingNegated(t *testing.T) {
	ctx := context.Background()
	obj := configured(t, "user/rosen3", 1, 1e-4, nil)
	info, _ := obj.Info(ctx)
	if !info.Minimize {
		t.Fatal("user/rosen3 should minimize")
	}
	s := newServer(t, obj, "user/rosen3")
	if h := s.Header(); h.Optimum == nil || *h.Optimum != -*info.Optimum {
		t.Errorf("optimum %v, want −%v", h.Optimum, *info.Optimum)
	}
	y, f, err := s.Eval(ctx, []float64{0.75, 0.25, 1})
	if err != nil {
		t.Fatal(err)
	}
	x := []float64{1, -1, 2}
	wy, _ := obj.Evaluate(ctx, x)
	wf, _ := obj.(sdk.NoiseFree).EvaluateNoiseFree(ctx, x)
	if y != -wy || f == nil || *f != -wf || wf <= 0 {
		t.Errorf("got y %v f %v, want −%v and −%v", y, f, wy, wf)
	}
}

// TestBadInput: each kind of bad line gets an error on its own line and
// serving goes on.
func TestBadInput(t *testing.T) {
	s := newServer(t, configured(t, "synthetic/branin", 1, 1e-4, nil), "synthetic/branin")
	cases := []struct{ in, want string }{
		{`{"x": [0.5]}`, "1 coordinates, the objective has 2"},
		{`{"x": [0.5, 0.5, 0.5]}`, "3 coordinates"},
		{`{"x": [NaN, 0.5]}`, "bad input line"},
		{`{"x": [0.5, Infinity]}`, "bad input line"},
		{`{"x": [1e999, 0.5]}`, "bad input line"},
		{`{"x": [1.001, 0.5]}`, "outside [0, 1]"},
		{`{"x": [0.5, -1e-6]}`, "outside [0, 1]"},
		{`{"x": [0.5, 0.5]`, "bad input line"},
		{`not json`, "bad input line"},
		{`{"y": [0.5, 0.5]}`, "bad input line"},
		{`{}`, `no "x"`},
		{`{"x": "0.5"}`, "bad input line"},
		{`{"x": [0.5, 0.5]} {"x": [0.5, 0.5]}`, "more than one JSON value"},
		{`{"x": [0.5, 0.5]} }`, "more than one JSON value"},
		{`{"x": [0.5, 0.5]}]`, "more than one JSON value"},
		{`{"X": [0.5, 0.5]}`, `unknown key "X"`},
		{`{"x": [0.5, 0.5], "x2": 1}`, `unknown key "x2"`},
		{`{"x": [0.5, 0.5` + strings.Repeat(" ", MaxLine) + `]}`, "longer than"},
	}
	var in strings.Builder
	for _, c := range cases {
		in.WriteString(c.in + "\n")
		in.WriteString(`{"x": [0.5, 0.5]}` + "\n") // a good line after each bad one
	}
	out := serve(t, s, in.String())
	if len(out) != 1+2*len(cases) {
		t.Fatalf("got %d lines, want %d", len(out), 1+2*len(cases))
	}
	for i, c := range cases {
		bad, good := line(t, out[1+2*i]), line(t, out[2+2*i])
		msg, _ := bad["error"].(string)
		if !strings.Contains(msg, c.want) || len(bad) != 1 {
			t.Errorf("input %.60q: got %v, want only an error holding %q", c.in, bad, c.want)
		}
		if _, ok := good["y"].(float64); !ok || good["error"] != nil {
			t.Errorf("after input %.60q: got %v, want a value", c.in, good)
		}
	}
}

// TestNaNRefused: non-finite coordinates that reach Eval (JSON cannot
// carry them) are refused, and the tolerance admits (and clamps) rounding
// just outside the cube.
func TestNaNRefused(t *testing.T) {
	s := newServer(t, configured(t, "synthetic/branin", 1, 1e-4, nil), "synthetic/branin")
	for _, u := range [][]float64{{math.NaN(), 0.5}, {0.5, math.Inf(1)}, {math.Inf(-1), 0}} {
		if _, _, err := s.Eval(context.Background(), u); err == nil {
			t.Errorf("Eval(%v) accepted", u)
		}
	}
	x, err := s.Native([]float64{1 + 0.5e-9, -0.5e-9})
	if err != nil || x[0] != 1 || x[1] != 0 { // branin is served on [0,1]²
		t.Errorf("Native at the tolerance: %v, %v; want [1 0]", x, err)
	}
}

// recorder is an objective that records the native points it is given: a
// LogFloat, an Int and a Categorical parameter, minimized, without a
// noise-free evaluation; it fails where its categorical is "c".
type recorder struct{ got [][]float64 }

func (r *recorder) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{Name: "rec", Minimize: true, Params: []sdk.Param{
		{Name: "lr", Kind: sdk.LogFloat, Low: 1e-4, High: 1},
		{Name: "n", Kind: sdk.Int, Low: 1, High: 4},
		{Name: "opt", Kind: sdk.Categorical, Choices: []string{"a", "b", "c"}},
	}}, nil
}

func (r *recorder) Evaluate(_ context.Context, x []float64) (float64, error) {
	r.got = append(r.got, append([]float64(nil), x...))
	if x[2] == 2 {
		return 0, errors.New("no c")
	}
	return x[0] + x[1] + 10*x[2], nil
}

// TestSpaceMapping: unit-cube coordinates reach the objective as a study
// maps them (log scale, integer and categorical bins), the values come
// back negated with f null, and a failed evaluation is an error line.
func TestSpaceMapping(t *testing.T) {
	r := &recorder{}
	s := newServer(t, r, "rec")
	out := serve(t, s, `{"x": [0.5, 0.1, 0.5]}`+"\n"+`{"x": [0.25, 0.99, 0.2]}`+"\n"+`{"x": [1, 0.3, 0.7]}`+"\n")
	if h := line(t, out[0]); h["optimum"] != nil || h["dim"] != 3.0 {
		t.Errorf("description %v: want dim 3 and optimum null", h)
	}
	want := [][]float64{{1e-2, 1, 1}, {1e-3, 4, 0}, {1, 2, 2}}
	if len(r.got) != len(want) {
		t.Fatalf("objective got %v, want %v", r.got, want)
	}
	for i := range want {
		for j := range want[i] {
			if math.Abs(r.got[i][j]-want[i][j]) > 1e-12*math.Max(1, want[i][j]) {
				t.Errorf("point %d: native %v, want %v", i, r.got[i], want[i])
				break
			}
		}
	}
	for i, l := range out[1:3] {
		m := line(t, l)
		w := -(want[i][0] + want[i][1] + 10*want[i][2])
		if math.Abs(m["y"].(float64)-w) > 1e-12 || m["f"] != nil {
			t.Errorf("line %q: want y %v, f null", l, w)
		}
	}
	if m := line(t, out[3]); !strings.Contains(m["error"].(string), "no c") {
		t.Errorf("failed evaluation: got %v", m)
	}
}

// TestSeedDeterminism: the same seed gives bit-identical observations,
// another seed other ones (the noise follows the seed as in a study).
func TestSeedDeterminism(t *testing.T) {
	ctx := context.Background()
	u := []float64{0.3, 0.7}
	val := func(seed uint64) float64 {
		s := newServer(t, configured(t, "synthetic/branin", seed, 1e-2, nil), "synthetic/branin")
		y, _, err := s.Eval(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		return y
	}
	a, b, c := val(5), val(5), val(6)
	if math.Float64bits(a) != math.Float64bits(b) {
		t.Errorf("seed 5 gave %v and %v", a, b)
	}
	if a == c {
		t.Errorf("seeds 5 and 6 gave the same observation %v", a)
	}
}

// TestReadLineLimit: lines up to the limit pass whole (with or without a
// newline, \r\n too); longer ones are consumed and flagged.
func TestReadLineLimit(t *testing.T) {
	in := "abc\r\n" + strings.Repeat("x", 10) + "\n" + strings.Repeat("y", 11) + "\n" + strings.Repeat("z", 10) + "\r\nlast"
	br := bufio.NewReaderSize(strings.NewReader(in), 16)
	for _, w := range []struct {
		line    string
		tooLong bool
		eof     bool
	}{{"abc", false, false}, {strings.Repeat("x", 10), false, false}, {"", true, false}, {strings.Repeat("z", 10), false, false}, {"last", false, true}} {
		l, long, err := readLine(br, 10)
		if string(l) != w.line || long != w.tooLong || (err != nil) != w.eof {
			t.Errorf("got %q %v %v, want %q %v eof=%v", l, long, err, w.line, w.tooLong, w.eof)
		}
	}
}

// FuzzServe: any input gives the description line and then exactly one
// JSON reply per non-blank line, each a value or an error, never a panic.
func FuzzServe(f *testing.F) {
	for _, s := range []string{`{"x": [0.5, 0.5]}`, `{"x": [0.5]}` + "\n\n" + `{"x": [1, 0]}`, "\r\n", `{"x": null}`, `{"x": [1e400, 0]}`, `[]`, "\x00\xff"} {
		f.Add(s)
	}
	obj, err := synthetic.New("branin")
	if err != nil {
		f.Fatal(err)
	}
	s, err := New(context.Background(), obj, "synthetic/branin")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, in string) {
		var out strings.Builder
		if err := s.Serve(context.Background(), strings.NewReader(in), &out); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
		want := 1
		for _, l := range strings.Split(in, "\n") {
			if len(strings.TrimSpace(l)) > 0 {
				want++
			}
		}
		if len(lines) != want {
			t.Fatalf("input %q: %d output lines, want %d: %q", in, len(lines), want, lines)
		}
		for _, l := range lines[1:] {
			var m map[string]any
			if err := json.Unmarshal([]byte(l), &m); err != nil {
				t.Fatalf("reply %q is not JSON: %v", l, err)
			}
			_, isErr := m["error"]
			_, isVal := m["y"]
			if isErr == isVal {
				t.Fatalf("reply %q: want a value or an error", l)
			}
		}
	})
}

package serve

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strconv"

	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/host"
	"github.com/tesbo/tesbo/sdk"
)

// Limits of the 2-D slices and of the importance estimate.
const (
	gridDefault = 31 // points per axis of a 2-D slice unless ?res= says
	gridMax     = 61 // at most (61² = 3721 predictions per request)
	gridMin     = 5
)

// axisJSON is an axis of a 2-D slice.
type axisJSON struct {
	Param int       `json:"param"` // index in the study's parameters
	Name  string    `json:"name"`
	X     []float64 `json:"x"` // native values (a categorical's indices)
}

// gridJSON is /api/model2d's answer: the posterior of f over a grid of two
// parameters, the others at x̄. Mean[i][k] and SD[i][k] are at
// (X.X[k], Y.X[i]).
type gridJSON struct {
	Iteration int         `json:"iteration"`
	X         axisJSON    `json:"x"`
	Y         axisJSON    `json:"y"`
	Mean      [][]float64 `json:"mean"`
	SD        [][]float64 `json:"sd"`
	XBar      point       `json:"xbar"` // native; an inactive parameter null
	Note      string      `json:"note,omitempty"`
}

// bins returns how many values a parameter takes (0 when continuous).
func bins(p sdk.Param) int {
	if p.Kind != sdk.Int && p.Kind != sdk.Categorical {
		return 0
	}
	lo, hi := p.Bounds()
	return int(math.Floor(hi)-math.Ceil(lo)) + 1
}

// levels returns the unit-cube values at which parameter p is evaluated:
// m evenly spaced over [0, 1], or, for an Int or Categorical with at most
// m values, the centre of each value's bin.
func levels(p sdk.Param, m int) []float64 {
	if n := bins(p); n > 0 && n <= m {
		out := make([]float64, n)
		for k := range out {
			out[k] = (float64(k) + 0.5) / float64(n)
		}
		return out
	}
	out := make([]float64, m)
	for k := range out {
		out[k] = float64(k) / float64(max(m-1, 1))
	}
	return out
}

// choiceSlice is StoredPosterior.Slice for a categorical parameter j: the
// posterior at each choice (native x = its index), the others at u.
func choiceSlice(p *host.StoredPosterior, u []float64, j int) (x, mean, sd []float64) {
	lv := levels(p.Space.Params()[j], math.MaxInt)
	X := mat.NewDense(len(lv), len(u), nil)
	for i, l := range lv {
		row := X.RawRowView(i)
		copy(row, u)
		row[j] = l
	}
	return predictNative(p, X, j)
}

// predictNative predicts at the rows of X and returns coordinate j of each
// row in native units with the posterior mean and sd there, native too.
func predictNative(p *host.StoredPosterior, X *mat.Dense, j int) (x, mean, sd []float64) {
	q, _ := X.Dims()
	x, mean, sd = make([]float64, q), make([]float64, q), make([]float64, q)
	p.Predict(X, mean, sd)
	for i := range q {
		x[i] = p.Space.NativeCoord(j, X.At(i, j))
		mean[i], sd[i] = p.Native(mean[i]), p.NativeSD(math.Sqrt(sd[i]))
	}
	return x, mean, sd
}

// apiModel2D answers /api/model2d?name=N&x=I&y=J[&res=R]: the latest
// model's posterior over parameters I and J (indices), the others at x̄,
// on an R×R grid (a categorical or integer parameter with fewer values:
// one row or column per value).
func (s *Server) apiModel2D(w http.ResponseWriter, r *http.Request) {
	answerStudy(s, w, r, func(ctx context.Context, name string) (*gridJSON, error) {
		q := r.URL.Query()
		ix, errX := strconv.Atoi(q.Get("x"))
		iy, errY := strconv.Atoi(q.Get("y"))
		res := gridDefault
		if q.Has("res") {
			v, err := strconv.Atoi(q.Get("res"))
			if err != nil || v < gridMin || v > gridMax {
				return nil, fmt.Errorf("%w: res=%q: want an integer from %d to %d", errBadRequest, q.Get("res"), gridMin, gridMax)
			}
			res = v
		}
		if errX != nil || errY != nil || ix == iy {
			return nil, fmt.Errorf("%w: want two different parameter indices x=I&y=J", errBadRequest)
		}
		e, err := s.model(ctx, name)
		if err != nil {
			return nil, err
		}
		if e.post == nil {
			return &gridJSON{Iteration: e.view.Iteration, Note: e.view.Note, Mean: [][]float64{}, SD: [][]float64{}}, nil
		}
		d := e.post.Space.Dim()
		if ix < 0 || iy < 0 || ix >= d || iy >= d {
			return nil, fmt.Errorf("%w: parameter index out of range: the study has %d parameters (0 to %d)", errBadRequest, d, d-1)
		}
		return grid(e.post, e.u, ix, iy, res), nil
	})
}

// grid computes the 2-D slice of p through u over parameters ix and iy.
func grid(p *host.StoredPosterior, u []float64, ix, iy, res int) *gridJSON {
	params := p.Space.Params()
	lx, ly := levels(params[ix], res), levels(params[iy], res)
	d := len(u)
	X := mat.NewDense(len(lx)*len(ly), d, nil)
	for i, vy := range ly {
		for k, vx := range lx {
			row := X.RawRowView(i*len(lx) + k)
			copy(row, u)
			row[ix], row[iy] = vx, vy
		}
	}
	_, mean, sd := predictNative(p, X, ix)
	g := &gridJSON{Iteration: p.Iteration, XBar: p.Space.ToNative(u),
		X: axisJSON{Param: ix, Name: params[ix].Name, X: nativeAxis(p, ix, lx)},
		Y: axisJSON{Param: iy, Name: params[iy].Name, X: nativeAxis(p, iy, ly)}}
	for i := range ly {
		g.Mean = append(g.Mean, mean[i*len(lx):(i+1)*len(lx)])
		g.SD = append(g.SD, sd[i*len(lx):(i+1)*len(lx)])
	}
	return g
}

// nativeAxis maps the unit-cube levels of parameter j to native values
// (an inactive parameter's too: its axis is its range).
func nativeAxis(p *host.StoredPosterior, j int, lv []float64) []float64 {
	out := make([]float64, len(lv))
	for i, l := range lv {
		out[i] = p.Space.NativeCoord(j, l)
	}
	return out
}

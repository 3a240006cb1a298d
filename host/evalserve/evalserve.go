// Package evalserve serves an objective over JSON lines in the host's
// unit-cube coordinates and maximized sign convention, so that another tool
// (an external BO runner such as a BoTorch baseline) optimizes exactly the
// problem a tesbo study sees: the same space transform (log scales,
// integer rounding, categorical bins), the same observation noise and the
// same sign.
//
// Protocol: one description line
//
//	{"name": "user/bumps2", "dim": 2, "optimum": 1.23}   (optimum null when unknown)
//
// then, for every input line {"x": [d numbers in [0,1]]}, one output line
//
//	{"y": observed value, "f": noise-free value or null}
//
// Bad input (malformed JSON, wrong length, NaN/Inf, a coordinate outside
// [0,1] by more than Tolerance, a line longer than MaxLine bytes) and
// failed evaluations get {"error": "..."} on their line, and serving goes
// on; end of input ends it.
package evalserve

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/tesbo/tesbo/host"
	"github.com/tesbo/tesbo/sdk"
)

// MaxLine bounds one input line in bytes (the newline excluded): far more
// than any point needs (a float prints in at most 24 bytes), small enough
// that a runaway writer cannot exhaust memory.
const MaxLine = 1 << 20

// Tolerance is how far outside [0,1] a coordinate may lie (rounding in the
// caller's arithmetic) before it is refused; accepted coordinates are
// clamped to the cube.
const Tolerance = 1e-9

// Header is the description line.
type Header struct {
	Name    string   `json:"name"`
	Dim     int      `json:"dim"`
	Optimum *float64 `json:"optimum"` // f* maximized, or null
}

// Reply is one output line: Y and F, or Error alone.
type Reply struct {
	Y     float64
	F     *float64
	Error string
}

// MarshalJSON writes {"y", "f"} or {"error"}.
func (r Reply) MarshalJSON() ([]byte, error) {
	if r.Error != "" {
		return json.Marshal(struct {
			Error string `json:"error"`
		}{r.Error})
	}
	return json.Marshal(struct {
		Y float64  `json:"y"`
		F *float64 `json:"f"`
	}{r.Y, r.F})
}

// Server evaluates one configured objective at unit-cube points.
type Server struct {
	obj   sdk.Objective
	info  sdk.Info
	space *host.Space
	nf    sdk.NoiseFree // nil when the objective has no noise-free evaluation
	name  string
}

// New prepares obj, already configured (host.ConfigureObjective), for
// serving under name (the name the caller opened it by).
func New(ctx context.Context, obj sdk.Objective, name string) (*Server, error) {
	info, err := obj.Info(ctx)
	if err != nil {
		return nil, fmt.Errorf("objective %s: info: %w", name, err)
	}
	if err := info.Validate(); err != nil {
		return nil, err
	}
	if len(info.Outputs) > 0 {
		// The protocol carries one value per point.
		return nil, fmt.Errorf("objective %s returns %d outputs; eval serves objectives of one value (run a study of it instead)", name, len(info.Outputs))
	}
	sp, err := host.NewSpace(info.Params)
	if err != nil {
		return nil, fmt.Errorf("objective %s: %w", name, err)
	}
	s := &Server{obj: obj, info: info, space: sp, name: name}
	if nf, ok := host.NoiseFreeOf(obj); ok {
		s.nf = nf
	}
	return s, nil
}

// sign is −1 for a minimizing objective (values are reported maximized).
func (s *Server) sign() float64 {
	if s.info.Minimize {
		return -1
	}
	return 1
}

// Header describes the problem: the caller's name, d and f* (maximized).
func (s *Server) Header() Header {
	h := Header{Name: s.name, Dim: s.space.Dim()}
	if s.info.Optimum != nil {
		v := s.sign() * *s.info.Optimum
		h.Optimum = &v
	}
	return h
}

// Native checks a unit-cube point and maps it to native units exactly as a
// study does (host.Space: log scales, integer and categorical bins).
func (s *Server) Native(u []float64) ([]float64, error) {
	if len(u) != s.space.Dim() {
		return nil, fmt.Errorf("x has %d coordinates, the objective has %d", len(u), s.space.Dim())
	}
	for i, v := range u {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("x[%d] is %v: want a finite number in [0, 1]", i, v)
		}
		if v < -Tolerance || v > 1+Tolerance {
			return nil, fmt.Errorf("x[%d] = %v is outside [0, 1]", i, v)
		}
	}
	return s.space.ToNative(u), nil
}

// Eval evaluates the objective at unit-cube point u: the observation (with
// the objective's noise, as a study sees it) and, when the objective has
// one, the noise-free value, both maximized. Errors are bad points and
// failed evaluations.
func (s *Server) Eval(ctx context.Context, u []float64) (y float64, f *float64, err error) {
	x, err := s.Native(u)
	if err != nil {
		return 0, nil, err
	}
	if d, ok := s.obj.(sdk.Detailed); ok {
		var r sdk.Result
		r, err = d.EvaluateDetail(ctx, x)
		y = r.Value
	} else {
		y, err = s.obj.Evaluate(ctx, x)
	}
	if err != nil {
		return 0, nil, fmt.Errorf("evaluation failed: %w", err)
	}
	if math.IsNaN(y) || math.IsInf(y, 0) {
		return 0, nil, fmt.Errorf("evaluation returned %v", y)
	}
	y *= s.sign()
	if s.nf != nil {
		v, err := s.nf.EvaluateNoiseFree(ctx, x)
		if err != nil {
			return 0, nil, fmt.Errorf("noise-free evaluation failed: %w", err)
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, nil, fmt.Errorf("noise-free evaluation returned %v", v)
		}
		v *= s.sign()
		f = &v
	}
	return y, f, nil
}

// request is one input line.
type request struct {
	X *[]float64 `json:"x"`
}

// reply answers one input line.
func (s *Server) reply(ctx context.Context, line []byte) Reply {
	var req request
	var fields map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(line))
	if err := dec.Decode(&fields); err != nil {
		return Reply{Error: fmt.Sprintf("bad input line: %v (want {\"x\": [%d numbers in [0,1]]})", err, s.space.Dim())}
	}
	if rest := bytes.TrimSpace(line[dec.InputOffset():]); len(rest) > 0 {
		return Reply{Error: fmt.Sprintf("bad input line: more than one JSON value (%q after the object)", cut(rest))}
	}
	for k := range fields {
		if k != "x" { // exactly: encoding/json would also take "X"
			return Reply{Error: fmt.Sprintf("bad input line: unknown key %q (want {\"x\": [%d numbers in [0,1]]})", cut([]byte(k)), s.space.Dim())}
		}
	}
	if raw, ok := fields["x"]; ok {
		if err := json.Unmarshal(raw, &req.X); err != nil {
			return Reply{Error: fmt.Sprintf("bad input line: x: %v (want %d numbers in [0,1])", err, s.space.Dim())}
		}
	}
	if req.X == nil {
		return Reply{Error: fmt.Sprintf("bad input line: no \"x\" (want {\"x\": [%d numbers in [0,1]]})", s.space.Dim())}
	}
	y, f, err := s.Eval(ctx, *req.X)
	if err != nil {
		return Reply{Error: err.Error()}
	}
	return Reply{Y: y, F: f}
}

// cut shortens b for an error message.
func cut(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "…"
	}
	return string(b)
}

// Serve writes the description line, then answers every line of r on w
// (flushed per line, so a caller can wait for each reply) until r ends
// (nil) or ctx is cancelled, reading or writing fails (the error).
// Blank lines are skipped.
func (s *Server) Serve(ctx context.Context, r io.Reader, w io.Writer) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	emit := func(v any) error {
		if err := enc.Encode(v); err != nil {
			return fmt.Errorf("write reply: %w", err)
		}
		return bw.Flush()
	}
	if err := emit(s.Header()); err != nil {
		return err
	}
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		line, tooLong, err := readLine(br, MaxLine)
		if errors.Is(err, io.EOF) && len(line) == 0 && !tooLong {
			return nil
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("read input: %w", err)
		}
		var rep Reply
		switch {
		case tooLong:
			rep = Reply{Error: fmt.Sprintf("input line longer than %d bytes", MaxLine)}
		case len(bytes.TrimSpace(line)) == 0:
			if errors.Is(err, io.EOF) {
				return nil
			}
			continue
		default:
			rep = s.reply(ctx, line)
		}
		if err := emit(rep); err != nil {
			return err
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
	}
}

// readLine reads one line (without its newline) of at most limit bytes. A
// longer line is consumed to its end and reported tooLong, without being
// held in memory. err is io.EOF for a last line without a newline (line
// then holds it) and at the end of input.
func readLine(br *bufio.Reader, limit int) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > limit+2 { // +2: room for "\r\n"
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
		if len(line) > limit {
			tooLong, line = true, nil
		}
		return line, tooLong, err
	}
}

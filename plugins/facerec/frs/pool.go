package frs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
)

// Options configures a Pool. The zero value runs one bundled face-api
// sidecar on the WASM backend.
type Options struct {
	// Backend selects the FRS: "" or "wasm" (bundled face-api sidecar, WASM
	// backend), "cpu" (bundled sidecar, pure-JS CPU backend: same
	// descriptors, ~30× slower), or "exec:COMMAND" (any program speaking
	// PROTOCOL.md; COMMAND is run by /bin/sh, e.g.
	// "exec:python3 my_dlib_frs.py").
	Backend string
	// Workers is the number of sidecar processes (parallel requests); 0
	// means 1. The bundled sidecar is single-threaded: use one per core.
	Workers int
	// Dir is the bundled sidecar's directory (frs.js and node_modules); ""
	// means sidecarDir(). For exec: backends, the working directory ("" =
	// the current one).
	Dir string
	// Timeout bounds one request; a sidecar that does not answer in time is
	// killed and restarted on its next request. 0 means 2 minutes.
	Timeout time.Duration
	// StartTimeout bounds the start of one sidecar up to its ready line
	// (model loading). 0 means 3 minutes.
	StartTimeout time.Duration
	// Log receives structured logs (sidecar stderr at debug level, restarts
	// at info). The zero Logger discards them.
	Log zerolog.Logger
}

// Pool is a set of warm sidecar processes speaking PROTOCOL.md. It
// implements FRS and is safe for concurrent use: each request takes an idle
// sidecar, so up to Workers requests run in parallel and the rest wait.
type Pool struct {
	argv         []string
	dir          string
	timeout      time.Duration
	startTimeout time.Duration
	log          zerolog.Logger
	info         Info

	idle      chan *worker
	workers   []*worker
	closeOnce sync.Once
	closed    chan struct{}

	// retries counts requests retried because their sidecar died while
	// they were in flight.
	retries atomic.Int64
	// onSent, if set, is called with the sidecar's pid each time a request
	// has been written to it (tests use it to kill a sidecar mid-request).
	onSent atomic.Pointer[func(pid int)]
}

// worker owns one sidecar slot; proc is replaced when the process dies.
// The pool hands a worker to one request at a time; mu guards proc against
// Close, which runs concurrently.
type worker struct {
	idx  int
	mu   sync.Mutex
	proc *process
}

func (w *worker) current() *process {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.proc
}

// Start resolves o.Backend, starts o.Workers sidecars in parallel and waits
// until all are ready. The error wraps errNotInstalled when the bundled
// sidecar's npm packages or node are missing.
func Start(ctx context.Context, o Options) (*Pool, error) {
	argv, dir, err := resolveCommand(o)
	if err != nil {
		return nil, err
	}
	n := o.Workers
	if n <= 0 {
		n = 1
	}
	p := &Pool{
		argv:         argv,
		dir:          dir,
		timeout:      durationOr(o.Timeout, 2*time.Minute),
		startTimeout: durationOr(o.StartTimeout, 3*time.Minute),
		log:          o.Log.With().Str("component", "frs").Logger(),
		idle:         make(chan *worker, n),
		closed:       make(chan struct{}),
	}
	p.workers = make([]*worker, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range p.workers {
		p.workers[i] = &worker{idx: i}
		wg.Add(1)
		go func(w *worker) {
			defer wg.Done()
			_, errs[w.idx] = p.ensure(w)
		}(p.workers[i])
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		<-done // starts are bounded by StartTimeout; never leave one behind
		p.Close()
		return nil, fmt.Errorf("start frs: %w", ctx.Err())
	}
	if err := errors.Join(errs...); err != nil {
		p.Close()
		return nil, fmt.Errorf("start frs %q: %w", strings.Join(argv, " "), err)
	}
	p.info = p.workers[0].current().info
	for _, w := range p.workers {
		p.idle <- w
	}
	p.log.Info().Str("frs", p.info.FRS).Str("backend", p.info.Backend).Int("workers", n).
		Float64("load_ms", p.info.LoadMS).Msg("frs ready")
	return p, nil
}

func durationOr(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// resolveCommand turns Options into argv and working directory.
func resolveCommand(o Options) ([]string, string, error) {
	switch b := strings.TrimSpace(o.Backend); {
	case strings.HasPrefix(b, "exec:"):
		cmd := strings.TrimSpace(strings.TrimPrefix(b, "exec:"))
		if cmd == "" {
			return nil, "", fmt.Errorf("backend %q: no command after \"exec:\"", o.Backend)
		}
		// exec replaces the shell, so the parent-death signal and kills
		// reach the user's program itself.
		return []string{"/bin/sh", "-c", "exec " + cmd}, o.Dir, nil
	case b == "" || b == "wasm" || b == "cpu":
		if b == "" {
			b = "wasm"
		}
		dir := o.Dir
		if dir == "" {
			var err error
			if dir, err = sidecarDir(); err != nil {
				return nil, "", err
			}
		} else if err := checkSidecarDir(dir); err != nil {
			return nil, "", err
		}
		node, err := exec.LookPath("node")
		if err != nil {
			return nil, "", fmt.Errorf("%w: node not found in PATH (install Node.js ≥ 18): %v", errNotInstalled, err)
		}
		return []string{node, filepath.Join(dir, "frs.js"), "--backend", b}, dir, nil
	default:
		return nil, "", fmt.Errorf("unknown frs backend %q: want wasm, cpu or exec:COMMAND", o.Backend)
	}
}

// sidecarDir locates the bundled sidecar: $TESBO_FRS_DIR if set, else this
// package's source directory (where the plugin was built from), else
// plugins/facerec/frs under the working directory. The directory must hold
// frs.js and an installed node_modules; otherwise the error wraps
// errNotInstalled and says how to install it.
func sidecarDir() (string, error) {
	var cands []string
	if d := os.Getenv("TESBO_FRS_DIR"); d != "" {
		return d, checkSidecarDir(d)
	}
	if _, file, _, ok := runtime.Caller(0); ok {
		cands = append(cands, filepath.Dir(file))
	}
	if wd, err := os.Getwd(); err == nil {
		cands = append(cands, filepath.Join(wd, "plugins", "facerec", "frs"))
	}
	var firstErr error
	for _, d := range cands {
		if _, err := os.Stat(filepath.Join(d, "frs.js")); err != nil {
			continue
		}
		err := checkSidecarDir(d)
		if err == nil {
			return d, nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	if firstErr != nil {
		return "", firstErr
	}
	return "", fmt.Errorf("%w: frs.js not found in %v (set TESBO_FRS_DIR to plugins/facerec/frs)", errNotInstalled, cands)
}

func checkSidecarDir(d string) error {
	if _, err := os.Stat(filepath.Join(d, "frs.js")); err != nil {
		return fmt.Errorf("%w: %s has no frs.js", errNotInstalled, d)
	}
	for _, pkg := range []string{"@vladmandic/face-api", "@tensorflow/tfjs", "@tensorflow/tfjs-backend-wasm"} {
		if _, err := os.Stat(filepath.Join(d, "node_modules", pkg, "package.json")); err != nil {
			return fmt.Errorf("%w: npm package %s missing in %s: run scripts/deps.sh (or `npm ci` in that directory)", errNotInstalled, pkg, d)
		}
	}
	return nil
}

// ensure starts w's sidecar if it is not running and returns it.
func (p *Pool) ensure(w *worker) (*process, error) {
	old := w.current()
	if old != nil && old.alive() {
		return old, nil
	}
	if old != nil {
		p.log.Info().Int("worker", w.idx).Msg("restarting dead sidecar")
		old.kill()
	}
	t0 := time.Now()
	proc, err := startProcess(p.argv, p.dir, nil, p.startTimeout, p.log.With().Int("worker", w.idx).Logger())
	if err != nil {
		return nil, fmt.Errorf("sidecar %d: %w", w.idx, err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if p.isClosed() {
		proc.kill()
		return nil, errClosed
	}
	w.proc = proc
	p.log.Debug().Int("worker", w.idx).Dur("start", time.Since(t0)).Msg("sidecar started")
	return proc, nil
}

// Info returns what the sidecars announced when they became ready.
func (p *Pool) Info() Info { return p.info }

// size returns the number of sidecar processes.
func (p *Pool) size() int { return len(p.workers) }

// call runs one request on an idle sidecar and decodes its reply. If the
// sidecar died during the request (not timed out), the request is retried
// once on a restarted sidecar. When ctx ends first, call returns ctx.Err();
// the request finishes in the background and then frees its sidecar.
func (p *Pool) call(ctx context.Context, req *request) (*reply, error) {
	var w *worker
	select {
	case w = <-p.idle:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-p.closed:
		return nil, errClosed
	}
	type result struct {
		r   *reply
		err error
	}
	res := make(chan result, 1)
	go func() {
		defer func() { p.idle <- w }()
		r, err := p.attempt(w, req)
		if errors.Is(err, errDied) && !p.isClosed() {
			p.log.Warn().Int("worker", w.idx).Err(err).Msg("sidecar died during a request; retrying once")
			p.retries.Add(1)
			r, err = p.attempt(w, req)
		}
		res <- result{r, err}
	}()
	select {
	case out := <-res:
		return out.r, out.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (p *Pool) attempt(w *worker, req *request) (*reply, error) {
	if p.isClosed() {
		return nil, errClosed
	}
	proc, err := p.ensure(w)
	if err != nil {
		return nil, err
	}
	var sent func()
	if hook := p.onSent.Load(); hook != nil {
		pid := proc.cmd.Process.Pid
		sent = func() { (*hook)(pid) }
	}
	line, err := proc.roundTripNotify(req, p.timeout, sent)
	if err != nil {
		return nil, err
	}
	var r reply
	if err := json.Unmarshal(line, &r); err != nil {
		return nil, fmt.Errorf("decode sidecar reply: %w", err)
	}
	if !r.OK {
		return nil, fmt.Errorf("sidecar: %s", r.Error)
	}
	return &r, nil
}

func (p *Pool) isClosed() bool {
	select {
	case <-p.closed:
		return true
	default:
		return false
	}
}

// Analyze implements FRS: detection, 68 landmarks and (unless
// o.NoDescriptor) descriptors, most confident face first. Coordinates are in
// img's own coordinate system (img.Bounds().Min is honoured).
func (p *Pool) Analyze(ctx context.Context, img image.Image, o AnalyzeOptions) ([]Face, error) {
	wi, err := encodeImage(img)
	if err != nil {
		return nil, fmt.Errorf("analyze: %w", err)
	}
	req := &request{Op: "analyze", Image: wi, Detector: o.Detector, MinScore: o.MinScore}
	if o.NoDescriptor {
		f := false
		req.Descriptor = &f
	}
	r, err := p.call(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("analyze: %w", err)
	}
	min := img.Bounds().Min
	faces := make([]Face, 0, len(r.Faces))
	for _, wf := range r.Faces {
		f, err := wf.face()
		if err != nil {
			return nil, fmt.Errorf("analyze: %w", err)
		}
		f.Box.X += float64(min.X)
		f.Box.Y += float64(min.Y)
		for i := range f.Landmarks {
			f.Landmarks[i].X += float64(min.X)
			f.Landmarks[i].Y += float64(min.Y)
		}
		faces = append(faces, f)
	}
	return faces, nil
}

// Describe implements FRS: the descriptor of the dlib-style chip aligned
// from landmarks (in img's coordinates).
func (p *Pool) Describe(ctx context.Context, img image.Image, landmarks []Point) ([]float64, error) {
	r, err := p.describe(ctx, img, landmarks, false)
	if err != nil {
		return nil, err
	}
	return r.Descriptor, nil
}

// chip returns the 150×150 aligned face chip the sidecar feeds to its
// recognition network for these landmarks, with its descriptor (for
// inspection and tests; exec: backends may not support it).
func (p *Pool) chip(ctx context.Context, img image.Image, landmarks []Point) (*image.RGBA, []float64, error) {
	r, err := p.describe(ctx, img, landmarks, true)
	if err != nil {
		return nil, nil, err
	}
	if r.Chip == nil {
		return nil, nil, fmt.Errorf("chip: sidecar returned no chip (backend %q does not support return_chip)", p.info.FRS)
	}
	chip, err := decodeWireImage(r.Chip)
	if err != nil {
		return nil, nil, fmt.Errorf("chip: %w", err)
	}
	return chip, r.Descriptor, nil
}

func (p *Pool) describe(ctx context.Context, img image.Image, landmarks []Point, chip bool) (*reply, error) {
	if err := checkLandmarks(landmarks); err != nil {
		return nil, fmt.Errorf("describe: %w", err)
	}
	wi, err := encodeImage(img)
	if err != nil {
		return nil, fmt.Errorf("describe: %w", err)
	}
	min := img.Bounds().Min
	lm := make([]Point, len(landmarks))
	for i, q := range landmarks {
		lm[i] = Point{X: q.X - float64(min.X), Y: q.Y - float64(min.Y)}
	}
	req := &request{Op: "describe", Image: wi, Landmarks: toWirePoints(lm), ReturnChip: chip}
	r, err := p.call(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("describe: %w", err)
	}
	if err := checkDescriptor(r.Descriptor); err != nil {
		return nil, fmt.Errorf("describe: sidecar reply: %w", err)
	}
	return r, nil
}

// Close stops all sidecars (closing their stdin, then killing any that
// have not exited within a second) and waits for them. Requests in flight
// fail. Close is idempotent.
func (p *Pool) Close() error {
	p.closeOnce.Do(func() {
		close(p.closed)
		var wg sync.WaitGroup
		for _, w := range p.workers {
			if proc := w.current(); proc != nil {
				wg.Add(1)
				go func() { defer wg.Done(); proc.stop(time.Second) }()
			}
		}
		wg.Wait()
	})
	return nil
}

// pids returns the process ids of the running sidecars (for tests).
func (p *Pool) pids() []int {
	var out []int
	for _, w := range p.workers {
		if proc := w.current(); proc != nil && proc.alive() {
			out = append(out, proc.cmd.Process.Pid)
		}
	}
	return out
}

// DemoDir returns the directory of face-api's sample photos
// (node_modules/@vladmandic/face-api/demo), the plugin's default gallery and
// attacker.
func DemoDir() (string, error) {
	dir, err := sidecarDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "node_modules", "@vladmandic", "face-api", "demo"), nil
}

package attack

import (
	"context"
	"errors"
	"fmt"
	"image"
	"image/draw"
	"math"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/rs/zerolog"

	"github.com/tesbo/tesbo/plugins/facerec/frs"
	"github.com/tesbo/tesbo/plugins/facerec/synth"
)

// ErrNoFace is wrapped by evaluation errors for a synthesized image in which
// the FRS finds no face at the attacker's position.
var ErrNoFace = errors.New("no face detected in the synthesized image")

// Match is the gallery entry nearest to a descriptor.
type Match struct {
	Index    int     // index in the gallery
	Identity string  // the entry's name
	Distance float64 // Euclidean distance of the descriptors
}

// Outcome is one evaluated set of edits.
//
// Two distances describe it. Distance is the evaluated one, the objective
// value: in the default landmarks mode the recognition network runs on the
// unedited face's landmarks (fast, deterministic, but not what a deployed
// FRS does). Verified is the nearest entry when the synthesized image goes
// through full face detection, as a deployed FRS would see it; the two
// differ by a few hundredths because detection aligns the edited face
// anew. Success is decided on Verified only.
type Outcome struct {
	Eval   int          // 1-based evaluation number (0 for Recheck)
	Label  string       // where the edits came from, for figure captions ("" = "evaluation Eval")
	Params synth.Params // the edits
	Match               // nearest gallery entry by the evaluated descriptor; Distance is the objective value
	// BelowThreshold is Distance < θ: the evaluated distance is below θ.
	// In landmarks mode this is not yet a success (see Success).
	BelowThreshold bool
	// Success is Verified.Distance < θ: with full face detection the FRS
	// accepts the edited attacker. False when the image was not re-checked.
	Success bool
	// Shift is the distance between the edited and the unedited attacker's
	// descriptors: how far the edits moved the face for the FRS.
	Shift float64
	// Verified is the nearest entry when the synthesized image goes through
	// full face detection, else nil. In landmarks mode Evaluate re-checks
	// new bests and every evaluation below θ; in ssd/tiny mode every image
	// is detected, so Verified equals Match.
	Verified *Match
	// NoFace: the re-check ran and detection found no face (Recheck only;
	// Evaluate fails with ErrNoFace instead).
	NoFace bool
	Image  *image.RGBA // the synthesized face region
	Saved  string      // path of the saved image, if any
}

// logFields adds o's match, distances and verdict to a log event.
func (o *Outcome) logFields(ev *zerolog.Event) *zerolog.Event {
	ev = ev.Str("identity", o.Identity).Float64("distance", o.Distance)
	if o.Verified != nil {
		ev = ev.Float64("verified_distance", o.Verified.Distance)
	}
	return ev.Bool("success", o.Success)
}

// Attack is a configured face attack: the attacker's face, its
// synthesizer, the FRS and the gallery. Evaluate is safe for concurrent use.
type Attack struct {
	cfg       Config
	frs       frs.FRS
	ownFRS    bool
	gallery   *frs.Gallery
	original  *image.RGBA // the attacker's face region, origin (0,0)
	landmarks []frs.Point // in original's coordinates
	synth     *synth.Synthesizer
	unedited  Match
	baseDesc  []float64 // the unedited attacker's descriptor
	log       zerolog.Logger

	noSave  bool // Fig8: write nothing but the requested figure
	evals   atomic.Int64
	mu      sync.Mutex
	best    *Outcome
	figured int // Eval of the best outcome last drawn
}

// newAttack sets the attack up: it starts the FRS (unless f is given), loads the
// gallery, finds the attacker's face and measures its unedited distance.
func newAttack(ctx context.Context, cfg Config, f frs.FRS, log zerolog.Logger) (a *Attack, err error) {
	cfg, err = cfg.defaults()
	if err != nil {
		return nil, err
	}
	if err := cfg.outputDirs(); err != nil {
		return nil, err
	}
	a = &Attack{cfg: cfg, frs: f, log: log}
	tag := "custom"
	if f == nil {
		pool, err := frs.Start(ctx, frs.Options{Backend: cfg.Backend, Workers: cfg.Sidecars, Timeout: cfg.Timeout, Log: log})
		if err != nil {
			return nil, fmt.Errorf("facerec: %w", err)
		}
		a.frs, a.ownFRS = pool, true
		tag = pool.Info().FRS + "/" + pool.Info().Backend
	}
	// The error returns below set a to nil: keep the attack to stop its
	// sidecars.
	self := a
	defer func() {
		if err != nil {
			self.Close()
		}
	}()
	a.gallery, err = frs.LoadGallery(ctx, a.frs, cfg.Gallery, frs.GalleryOptions{
		CacheDir: cfg.CacheDir, CacheTag: tag, Exclude: []string{cfg.Attacker}, Pattern: cfg.GalleryGlob, Parallel: cfg.Sidecars,
	})
	if err != nil {
		return nil, fmt.Errorf("facerec: %w", err)
	}
	if err := a.findAttacker(ctx); err != nil {
		return nil, err
	}
	lm := make([]synth.Point, len(a.landmarks))
	for i, p := range a.landmarks {
		lm[i] = synth.Point(p)
	}
	if a.synth, err = synth.New(a.original, lm); err != nil {
		return nil, fmt.Errorf("facerec: attacker %s: %w", cfg.Attacker, err)
	}
	d, err := a.frs.Describe(ctx, a.original, a.landmarks)
	if err != nil {
		return nil, fmt.Errorf("facerec: attacker %s: %w", cfg.Attacker, err)
	}
	if a.unedited, err = a.nearest(d); err != nil {
		return nil, fmt.Errorf("facerec: attacker %s: %w", cfg.Attacker, err)
	}
	a.baseDesc = d
	log.Info().Str("attacker", cfg.Attacker).Int("gallery_faces", len(a.gallery.Entries)).
		Str("nearest", a.unedited.Identity).Float64("distance", a.unedited.Distance).
		Float64("threshold", cfg.Threshold).Msg("facerec attack ready (unedited attacker)")
	return a, nil
}

// findAttacker detects the faces of the attacker's photo, picks one and
// crops a region around it generous enough for every edit and for
// re-detection.
func (a *Attack) findAttacker(ctx context.Context) error {
	img, err := frs.DecodeImageFile(a.cfg.Attacker)
	if err != nil {
		return fmt.Errorf("facerec: attacker photo: %w", err)
	}
	faces, err := a.frs.Analyze(ctx, img, frs.AnalyzeOptions{NoDescriptor: true})
	if err != nil {
		return fmt.Errorf("facerec: attacker photo %s: %w", a.cfg.Attacker, err)
	}
	if len(faces) == 0 {
		return fmt.Errorf("facerec: no face found in the attacker photo %s", a.cfg.Attacker)
	}
	if a.cfg.AttackerFace >= len(faces) {
		return fmt.Errorf("facerec: attacker photo %s has %d faces; attacker_face must be in [0, %d]", a.cfg.Attacker, len(faces), len(faces)-1)
	}
	lm := faces[a.cfg.AttackerFace].Landmarks
	x0, y0, x1, y1 := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
	for _, p := range lm {
		x0, y0, x1, y1 = math.Min(x0, p.X), math.Min(y0, p.Y), math.Max(x1, p.X), math.Max(y1, p.Y)
	}
	s := math.Max(x1-x0, y1-y0)
	r := image.Rect(int(x0-0.6*s), int(y0-0.8*s), int(x1+0.6*s), int(y1+0.5*s)).Intersect(img.Bounds())
	a.original = image.NewRGBA(image.Rect(0, 0, r.Dx(), r.Dy()))
	draw.Draw(a.original, a.original.Bounds(), img, r.Min, draw.Src)
	a.landmarks = make([]frs.Point, len(lm))
	for i, p := range lm {
		a.landmarks[i] = frs.Point{X: p.X - float64(r.Min.X), Y: p.Y - float64(r.Min.Y)}
	}
	return nil
}

// nearest returns the gallery entry nearest to descriptor d, or an error
// when no entry lies at a finite distance (values whose squares overflow,
// from the FRS or in the gallery).
func (a *Attack) nearest(d []float64) (Match, error) {
	i, dist := a.gallery.Nearest(d)
	if i < 0 {
		return Match{}, fmt.Errorf("no gallery face lies at a finite distance from the descriptor (its values or the gallery's overflow): check the FRS backend and the gallery")
	}
	return Match{Index: i, Identity: a.gallery.Entries[i].Name, Distance: dist}, nil
}

// Config returns the attack's configuration with defaults filled in.
func (a *Attack) Config() Config { return a.cfg }

// evaluate renders the edits x (synth.Names order, each in [0, 1]),
// obtains the FRS descriptor and returns the nearest gallery entry. In
// landmarks mode a new best, and any evaluation whose distance is below θ,
// is re-checked with full SSD detection (Outcome.Verified), which decides
// Outcome.Success; a face that detection cannot find fails the evaluation
// with ErrNoFace. A new best is saved and drawn as the Fig. 8 figure in
// FigureDir.
func (a *Attack) evaluate(ctx context.Context, x []float64) (Outcome, error) {
	o, err := a.render(x)
	if err != nil {
		return Outcome{}, err
	}
	o.Eval = int(a.evals.Add(1))
	if a.cfg.SaveAll {
		o.Saved = filepath.Join(a.cfg.SaveDir, fmt.Sprintf("eval-%05d.png", o.Eval))
		if err := synth.SavePNG(o.Saved, o.Image); err != nil {
			a.log.Warn().Err(err).Msg("facerec: could not save the synthesized image")
			o.Saved = ""
		}
	}
	recheck := func(d float64) bool { return d < a.cfg.Threshold || a.isNewBest(d) }
	if err := a.measure(ctx, &o, recheck); err != nil {
		return Outcome{}, err
	}
	a.offer(o)
	return o, nil
}

// Recheck evaluates the edits x as Evaluate does and always re-checks them
// with full detection, recording nothing: no evaluation number, no best,
// no saved file. Reproductions use it to verify recorded results. When
// detection finds no face, the error wraps ErrNoFace and the returned
// outcome still carries the evaluated distance (Verified nil, NoFace set).
func (a *Attack) Recheck(ctx context.Context, x []float64) (Outcome, error) {
	o, err := a.render(x)
	if err != nil {
		return Outcome{}, err
	}
	err = a.measure(ctx, &o, func(float64) bool { return true })
	return o, err
}

// render synthesizes the edits x.
func (a *Attack) render(x []float64) (Outcome, error) {
	p, err := synth.FromVector(x)
	if err != nil {
		return Outcome{}, fmt.Errorf("facerec: %w", err)
	}
	img, err := a.synth.Render(p)
	if err != nil {
		return Outcome{}, fmt.Errorf("facerec: %w", err)
	}
	return Outcome{Params: p, Image: img}, nil
}

// measure fills in o's distances for its rendered image. In landmarks mode
// the image is re-checked with SSD detection when recheck(evaluated
// distance) says so; on ErrNoFace o keeps the evaluated distance.
func (a *Attack) measure(ctx context.Context, o *Outcome, recheck func(float64) bool) error {
	switch a.cfg.Detect {
	case detectLandmarks:
		d, err := a.frs.Describe(ctx, o.Image, a.landmarks)
		if err != nil {
			return fmt.Errorf("facerec: %w", err)
		}
		if o.Match, err = a.nearest(d); err != nil {
			return fmt.Errorf("facerec: %w", err)
		}
		o.Shift = frs.Distance(d, a.baseDesc)
		o.BelowThreshold = o.Distance < a.cfg.Threshold
		if recheck(o.Distance) {
			v, _, err := a.detect(ctx, o.Image, frs.SSD)
			if err != nil {
				o.NoFace = errors.Is(err, ErrNoFace)
				return fmt.Errorf("facerec: re-checking the edits (d = %.4f) with detection: %w", o.Distance, err)
			}
			o.Verified = &v
		}
	default:
		m, d, err := a.detect(ctx, o.Image, frs.Detector(a.cfg.Detect))
		if err != nil {
			return fmt.Errorf("facerec: %w", err)
		}
		o.Match, o.Shift = m, frs.Distance(d, a.baseDesc)
		o.BelowThreshold = o.Distance < a.cfg.Threshold
		o.Verified = &m
	}
	o.Success = o.Verified != nil && o.Verified.Distance < a.cfg.Threshold
	return nil
}

// detect runs face detection on img and matches the face at the
// attacker's position; it also returns that face's descriptor.
func (a *Attack) detect(ctx context.Context, img image.Image, det frs.Detector) (Match, []float64, error) {
	faces, err := a.frs.Analyze(ctx, img, frs.AnalyzeOptions{Detector: det})
	if err != nil {
		return Match{}, nil, err
	}
	c0, iod := centroid(a.landmarks), interOcular(a.landmarks)
	best, bestD := -1, math.Inf(1)
	for i, f := range faces {
		if d := dist(centroid(f.Landmarks), c0); d < bestD {
			best, bestD = i, d
		}
	}
	if best < 0 || bestD > 0.5*iod {
		return Match{}, nil, fmt.Errorf("%w (%d faces elsewhere; the edits may hide the face)", ErrNoFace, len(faces))
	}
	m, err := a.nearest(faces[best].Descriptor)
	return m, faces[best].Descriptor, err
}

func centroid(lm []frs.Point) frs.Point {
	var c frs.Point
	for _, p := range lm {
		c.X += p.X / float64(len(lm))
		c.Y += p.Y / float64(len(lm))
	}
	return c
}

func dist(a, b frs.Point) float64 { return math.Hypot(a.X-b.X, a.Y-b.Y) }

func interOcular(lm []frs.Point) float64 {
	return dist(centroid(lm[36:42]), centroid(lm[42:48]))
}

func (a *Attack) isNewBest(d float64) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.best == nil || d < a.best.Distance
}

// offer records o if it is the best so far and redraws the figure.
func (a *Attack) offer(o Outcome) {
	a.mu.Lock()
	if a.best != nil && o.Distance >= a.best.Distance {
		a.mu.Unlock()
		return
	}
	a.best = &o
	a.mu.Unlock()
	if a.noSave {
		return
	}
	o.logFields(a.log.Info().Int("eval", o.Eval)).Msg("facerec: new best")
	if err := a.saveBest(false); err != nil {
		a.log.Warn().Err(err).Msg("facerec: could not save the best result")
	}
}

// currentBest returns the best outcome so far (nil before any evaluation).
func (a *Attack) currentBest() *Outcome {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.best
}

// Close saves the best result's figure one last time, with best.json's
// "final" set (so a reader can tell the end-of-run save from the saves on
// each improvement), and stops the FRS if the attack started it.
func (a *Attack) Close() error {
	var errs []error
	if a.currentBest() != nil && !a.noSave {
		errs = append(errs, a.saveBest(true))
	}
	if a.ownFRS && a.frs != nil {
		errs = append(errs, a.frs.Close())
	}
	return errors.Join(errs...)
}

// bestFigurePath is where the best result's figure is saved.
func (a *Attack) bestFigurePath() string { return filepath.Join(a.cfg.FigureDir, "best.png") }

// saveBest writes best.png (Fig. 8) and best.json in FigureDir for the
// current best, unless it was already written; final (the end-of-run save)
// always writes, with best.json's "final" set.
func (a *Attack) saveBest(final bool) error {
	a.mu.Lock()
	o := a.best
	if o == nil || (a.figured == o.Eval && !final) {
		a.mu.Unlock()
		return nil
	}
	a.figured = o.Eval
	a.mu.Unlock()
	if err := a.SaveFigure(a.bestFigurePath(), *o); err != nil {
		return err
	}
	s := a.summary(*o)
	s.Final = final
	return writeJSON(filepath.Join(a.cfg.FigureDir, "best.json"), s)
}

func writeJSON(path string, v any) error {
	b, err := jsonMarshal(v)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

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
type Outcome struct {
	Eval    int          // 1-based evaluation number
	Params  synth.Params // the edits
	Match                // nearest gallery entry; Distance is the objective value
	Success bool         // Distance < θ
	// Shift is the distance between the edited and the unedited attacker's
	// descriptors: how far the edits moved the face for the FRS.
	Shift float64
	// Verified is the nearest entry when the synthesized image goes through
	// full face detection (landmarks mode: only for new bests), else nil.
	Verified *Match
	Image    *image.RGBA // the synthesized face region
	Saved    string      // path of the saved image, if any
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

// New sets the attack up: it starts the FRS (unless f is given), loads the
// gallery, finds the attacker's face and measures its unedited distance.
func New(ctx context.Context, cfg Config, f frs.FRS, log zerolog.Logger) (a *Attack, err error) {
	cfg, err = cfg.Defaults()
	if err != nil {
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
	defer func() {
		if err != nil {
			a.Close()
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
	a.unedited, a.baseDesc = a.nearest(d), d
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

func (a *Attack) nearest(d []float64) Match {
	i, dist := a.gallery.Nearest(d)
	return Match{Index: i, Identity: a.gallery.Entries[i].Name, Distance: dist}
}

// Config returns the attack's configuration with defaults filled in.
func (a *Attack) Config() Config { return a.cfg }

// Gallery returns the gallery (do not modify).
func (a *Attack) Gallery() *frs.Gallery { return a.gallery }

// Original returns the attacker's unedited face region.
func (a *Attack) Original() *image.RGBA { return a.original }

// Unedited returns the nearest gallery entry of the unedited attacker.
func (a *Attack) Unedited() Match { return a.unedited }

// Evaluate renders the edits x (synth.Names order, each in [0, 1]),
// obtains the FRS descriptor and returns the nearest gallery entry. A new
// best is re-checked with full detection (in landmarks mode), saved and
// drawn as the Fig. 8 figure in SaveDir.
func (a *Attack) Evaluate(ctx context.Context, x []float64) (Outcome, error) {
	p, err := synth.FromVector(x)
	if err != nil {
		return Outcome{}, fmt.Errorf("facerec: %w", err)
	}
	img, err := a.synth.Render(p)
	if err != nil {
		return Outcome{}, fmt.Errorf("facerec: %w", err)
	}
	o := Outcome{Eval: int(a.evals.Add(1)), Params: p, Image: img}
	if a.cfg.SaveAll {
		o.Saved = filepath.Join(a.cfg.SaveDir, fmt.Sprintf("eval-%05d.png", o.Eval))
		if err := synth.SavePNG(o.Saved, img); err != nil {
			a.log.Warn().Err(err).Msg("facerec: could not save the synthesized image")
			o.Saved = ""
		}
	}
	switch a.cfg.Detect {
	case DetectLandmarks:
		d, err := a.frs.Describe(ctx, img, a.landmarks)
		if err != nil {
			return Outcome{}, fmt.Errorf("facerec: %w", err)
		}
		o.Match, o.Shift = a.nearest(d), frs.Distance(d, a.baseDesc)
		if a.isNewBest(o.Distance) {
			v, _, err := a.detect(ctx, img, frs.SSD)
			if err != nil {
				return Outcome{}, fmt.Errorf("facerec: re-checking a new best (d = %.4f) with detection: %w", o.Distance, err)
			}
			o.Verified = &v
		}
	default:
		m, d, err := a.detect(ctx, img, frs.Detector(a.cfg.Detect))
		if err != nil {
			return Outcome{}, fmt.Errorf("facerec: %w", err)
		}
		o.Match, o.Shift = m, frs.Distance(d, a.baseDesc)
		o.Verified = &m
	}
	o.Success = o.Distance < a.cfg.Threshold
	a.offer(o)
	return o, nil
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
	return a.nearest(faces[best].Descriptor), faces[best].Descriptor, nil
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
	a.log.Info().Int("eval", o.Eval).Str("identity", o.Identity).Float64("distance", o.Distance).
		Bool("success", o.Success).Msg("facerec: new best")
	if err := a.saveBest(); err != nil {
		a.log.Warn().Err(err).Msg("facerec: could not save the best result")
	}
}

// Best returns the best outcome so far (nil before any evaluation).
func (a *Attack) Best() *Outcome {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.best
}

// Close saves the best result's figure one last time and stops the FRS
// if the attack started it.
func (a *Attack) Close() error {
	var errs []error
	if a.Best() != nil && !a.noSave {
		errs = append(errs, a.saveBest())
	}
	if a.ownFRS && a.frs != nil {
		errs = append(errs, a.frs.Close())
	}
	return errors.Join(errs...)
}

// BestFigurePath is where the best result's figure is saved.
func (a *Attack) BestFigurePath() string { return filepath.Join(a.cfg.FigureDir, "best.png") }

// saveBest writes best.png (Fig. 8) and best.json in FigureDir for the
// current best,
// unless it was already written.
func (a *Attack) saveBest() error {
	a.mu.Lock()
	o := a.best
	if o == nil || a.figured == o.Eval {
		a.mu.Unlock()
		return nil
	}
	a.figured = o.Eval
	a.mu.Unlock()
	if err := a.SaveFigure(a.BestFigurePath(), *o); err != nil {
		return err
	}
	return writeJSON(filepath.Join(a.cfg.FigureDir, "best.json"), a.summary(*o))
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

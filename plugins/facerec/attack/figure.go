package attack

import (
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/draw"
	"path/filepath"

	"github.com/rs/zerolog"

	"github.com/tesbo/tesbo/plugins/facerec/frs"
	"github.com/tesbo/tesbo/plugins/facerec/synth"
)

// Summary is what best.json records about an outcome.
type Summary struct {
	Eval      int                `json:"eval"`
	Params    map[string]float64 `json:"params"`
	Glasses   string             `json:"glasses"`
	Identity  string             `json:"identity"`
	Distance  float64            `json:"distance"`
	Threshold float64            `json:"threshold"`
	Success   bool               `json:"success"`
	Shift     float64            `json:"shift"`
	Verified  *Match             `json:"verified,omitempty"`
	Unedited  Match              `json:"unedited"`
	Attacker  string             `json:"attacker"`
	Gallery   string             `json:"gallery"`
	Detect    string             `json:"detect"`
}

func (a *Attack) summary(o Outcome) Summary {
	params := map[string]float64{}
	for i, v := range o.Params.Vector() {
		params[synth.Names[i]] = v
	}
	return Summary{
		Eval: o.Eval, Params: params, Glasses: o.Params.Glasses().String(),
		Identity: o.Identity, Distance: o.Distance, Threshold: a.cfg.Threshold, Success: o.Success, Shift: o.Shift,
		Verified: o.Verified, Unedited: a.unedited, Attacker: a.cfg.Attacker, Gallery: a.cfg.Gallery, Detect: a.cfg.Detect,
	}
}

func jsonMarshal(v any) ([]byte, error) { return json.MarshalIndent(v, "", "  ") }

// SaveFigure draws outcome o as the paper's Fig. 8 — the attacker's
// unedited face | the synthesized face | the matched gallery face (a grey
// placeholder when the gallery is a descriptor file) — and saves it as a
// PNG at path.
func (a *Attack) SaveFigure(path string, o Outcome) error {
	verdict := "no match"
	if o.Success {
		verdict = "MATCH: the FRS accepts the edited attacker"
	}
	title := fmt.Sprintf("facerec: d = %.4f to %q, threshold %.2f: %s", o.Distance, o.Identity, a.cfg.Threshold, verdict)
	p := o.Params
	synthCaption := []string{
		fmt.Sprintf("(b) synthesized, evaluation %d", o.Eval),
		fmt.Sprintf("beard %.2f  mustache %.2f", p.Beard, p.Mustache),
		fmt.Sprintf("scars %.2f / %.2f  mole %.2f", p.ForeheadScar, p.CheekScar, p.Mole),
		fmt.Sprintf("glasses %s  smile %.2f", p.Glasses(), p.Smile),
		fmt.Sprintf("d = %.4f", o.Distance),
	}
	if o.Verified != nil && a.cfg.Detect == DetectLandmarks {
		synthCaption = append(synthCaption, fmt.Sprintf("re-detected: d = %.4f (%s)", o.Verified.Distance, o.Verified.Identity))
	}
	e := a.gallery.Entries[o.Index]
	victim := []string{"(c) gallery: " + e.Name}
	if e.Source != "" {
		victim = append(victim, filepath.Base(e.Source))
	} else {
		victim = append(victim, "(descriptor file: no image)")
	}
	return synth.SaveFigure(path, title,
		synth.Panel{Image: a.original, Caption: []string{"(a) attacker, unedited",
			fmt.Sprintf("nearest %s", a.unedited.Identity), fmt.Sprintf("d = %.4f", a.unedited.Distance)}},
		synth.Panel{Image: o.Image, Caption: synthCaption},
		synth.Panel{Image: a.galleryFace(o.Index), Caption: victim},
	)
}

// galleryFace crops gallery entry i's face from its photo (nil when the
// entry has no photo or it cannot be read).
func (a *Attack) galleryFace(i int) image.Image {
	e := a.gallery.Entries[i]
	if e.Source == "" {
		return nil
	}
	img, err := frs.DecodeImageFile(e.Source)
	if err != nil {
		a.log.Warn().Err(err).Msg("facerec: gallery photo for the figure")
		return nil
	}
	b := e.Box
	r := image.Rect(int(b.X-0.3*b.W), int(b.Y-0.3*b.H), int(b.X+1.3*b.W), int(b.Y+1.3*b.H)).Intersect(img.Bounds())
	if r.Empty() {
		return img
	}
	out := image.NewRGBA(image.Rect(0, 0, r.Dx(), r.Dy()))
	draw.Draw(out, out.Bounds(), img, r.Min, draw.Src)
	return out
}

// Fig8 sets up the attack described by cfg, evaluates the edits x once and
// saves the Fig. 8 figure at path (nothing else is written); it returns the
// outcome. A reproduction
// calls it with the best x of a run to redraw its result.
func Fig8(ctx context.Context, cfg Config, x []float64, path string, log zerolog.Logger) (Outcome, error) {
	cfg.SaveAll = false
	a, err := New(ctx, cfg, nil, log)
	if err != nil {
		return Outcome{}, err
	}
	a.noSave = true
	defer a.Close()
	o, err := a.Evaluate(ctx, x)
	if err != nil {
		return Outcome{}, err
	}
	return o, a.SaveFigure(path, o)
}

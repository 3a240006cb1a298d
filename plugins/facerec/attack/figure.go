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

// summary is what best.json records about an outcome. Distance is the
// evaluated (objective) distance; Verified, when present, the distance
// with full face detection; Success is Verified.Distance < Threshold.
type summary struct {
	Eval           int                `json:"eval"`
	Label          string             `json:"label,omitempty"`
	Params         map[string]float64 `json:"params"`
	Glasses        string             `json:"glasses"`
	Identity       string             `json:"identity"`
	Distance       float64            `json:"distance"`
	Threshold      float64            `json:"threshold"`
	BelowThreshold bool               `json:"below_threshold"`
	Success        bool               `json:"success"`
	Shift          float64            `json:"shift"`
	Verified       *Match             `json:"verified,omitempty"`
	Unedited       Match              `json:"unedited"`
	Attacker       string             `json:"attacker"`
	Gallery        string             `json:"gallery"`
	Detect         string             `json:"detect"`
	// Final is set by the end-of-run save (Close); saves on each
	// improvement leave it false.
	Final bool `json:"final"`
}

func (a *Attack) summary(o Outcome) summary {
	params := map[string]float64{}
	for i, v := range o.Params.Vector() {
		params[synth.Names[i]] = v
	}
	return summary{
		Eval: o.Eval, Label: o.Label, Params: params, Glasses: o.Params.Glasses().String(),
		Identity: o.Identity, Distance: o.Distance, Threshold: a.cfg.Threshold, BelowThreshold: o.BelowThreshold,
		Success: o.Success, Shift: o.Shift, Verified: o.Verified, Unedited: a.unedited,
		Attacker: a.cfg.Attacker, Gallery: a.cfg.Gallery, Detect: a.cfg.Detect,
	}
}

func jsonMarshal(v any) ([]byte, error) { return json.MarshalIndent(v, "", "  ") }

// Title is the figure's title line for o. It says MATCH only when o is a
// success, i.e. the distance with full face detection is below θ; an
// evaluated distance below θ that detection does not confirm, or that was
// not re-checked, is said to be so.
func (a *Attack) Title(o Outcome) string {
	th := a.cfg.Threshold
	switch {
	case o.NoFace:
		return fmt.Sprintf("facerec: evaluated d = %.4f to %q, threshold %.2f: full face detection finds no face, no match", o.Distance, o.Identity, th)
	case o.Verified == nil:
		return fmt.Sprintf("facerec: evaluated d = %.4f to %q, threshold %.2f: not re-checked with face detection, no verdict", o.Distance, o.Identity, th)
	case o.Success:
		return fmt.Sprintf("facerec: re-detected d = %.4f < %.2f to %q (evaluated %.4f): MATCH, the FRS accepts the edited attacker",
			o.Verified.Distance, th, o.Verified.Identity, o.Distance)
	case o.BelowThreshold:
		return fmt.Sprintf("facerec: re-detected d = %.4f >= %.2f to %q (evaluated %.4f < %.2f): no match",
			o.Verified.Distance, th, o.Verified.Identity, o.Distance, th)
	default:
		return fmt.Sprintf("facerec: re-detected d = %.4f to %q (evaluated %.4f), threshold %.2f: no match",
			o.Verified.Distance, o.Verified.Identity, o.Distance, th)
	}
}

// SaveFigure draws outcome o as the paper's Fig. 8 — the attacker's
// unedited face | the synthesized face | the matched gallery face (a grey
// placeholder when the gallery is a descriptor file) — and saves it as a
// PNG at path. The title is Title(o); the synthesized panel's caption
// names where the edits came from (o.Label, else the evaluation number)
// and both distances.
func (a *Attack) SaveFigure(path string, o Outcome) error {
	title, panels := a.figure(o)
	return synth.SaveFigure(path, title, panels...)
}

// figure returns SaveFigure's title and panels.
func (a *Attack) figure(o Outcome) (string, []synth.Panel) {
	p := o.Params
	from := o.Label
	if from == "" {
		from = fmt.Sprintf("evaluation %d", o.Eval)
	}
	synthCaption := []string{
		"(b) synthesized, " + from,
		fmt.Sprintf("beard %.2f  mustache %.2f", p.Beard, p.Mustache),
		fmt.Sprintf("scars %.2f / %.2f  mole %.2f", p.ForeheadScar, p.CheekScar, p.Mole),
		fmt.Sprintf("glasses %s  smile %.2f", p.Glasses(), p.Smile),
		fmt.Sprintf("evaluated d = %.4f (%s, %s)", o.Distance, o.Identity, a.cfg.Detect),
	}
	if o.Verified != nil && a.cfg.Detect == detectLandmarks {
		synthCaption = append(synthCaption, fmt.Sprintf("re-detected d = %.4f (%s)", o.Verified.Distance, o.Verified.Identity))
	}
	e := a.gallery.Entries[o.Index]
	victim := []string{"(c) gallery: " + e.Name}
	if e.Source != "" {
		victim = append(victim, filepath.Base(e.Source))
	} else {
		victim = append(victim, "(descriptor file: no image)")
	}
	return a.Title(o), []synth.Panel{
		{Image: a.original, Caption: []string{"(a) attacker, unedited",
			fmt.Sprintf("nearest %s", a.unedited.Identity), fmt.Sprintf("d = %.4f", a.unedited.Distance)}},
		{Image: o.Image, Caption: synthCaption},
		{Image: a.galleryFace(o.Index), Caption: victim},
	}
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

// NewOffline sets the attack up like New, for re-examining recorded edits
// (Recheck, SaveFigure): it writes nothing by itself, neither synthesized
// images nor the best figure.
func NewOffline(ctx context.Context, cfg Config, f frs.FRS, log zerolog.Logger) (*Attack, error) {
	cfg.SaveAll = false
	a, err := newAttack(ctx, cfg, f, log)
	if err != nil {
		return nil, err
	}
	a.noSave = true
	return a, nil
}

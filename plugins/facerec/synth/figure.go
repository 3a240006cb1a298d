package synth

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"os"
	"path/filepath"

	xdraw "golang.org/x/image/draw"
	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

// Panel is one image of a Figure with caption lines under it. A nil Image
// draws a grey placeholder (e.g. a gallery given only as descriptors).
type Panel struct {
	Image   image.Image
	Caption []string
}

// FigureHeight is the height panels are scaled to.
const FigureHeight = 320

// Figure lays panels side by side, each scaled to FigureHeight pixels high,
// with its caption below and an optional title line on top: the layout of
// the paper's Fig. 8 (original | synthesized | matched gallery face).
func Figure(title string, panels ...Panel) *image.RGBA {
	const margin, lineH = 12, 15
	face := basicfont.Face7x13
	widths := make([]int, len(panels))
	total := margin
	maxLines := 0
	for i, p := range panels {
		w := FigureHeight * 3 / 4
		if p.Image != nil && !p.Image.Bounds().Empty() {
			b := p.Image.Bounds()
			w = int(float64(FigureHeight) * float64(b.Dx()) / float64(b.Dy()))
		}
		for _, line := range p.Caption {
			if tw := font.MeasureString(face, line).Ceil(); tw > w {
				w = tw
			}
		}
		widths[i] = w
		total += w + margin
		maxLines = max(maxLines, len(p.Caption))
	}
	top := margin
	if title != "" {
		top += lineH + 4
		total = max(total, font.MeasureString(face, title).Ceil()+2*margin)
	}
	h := top + FigureHeight + 6 + maxLines*lineH + margin
	out := image.NewRGBA(image.Rect(0, 0, total, h))
	draw.Draw(out, out.Bounds(), image.White, image.Point{}, draw.Src)
	text := func(x, y int, s string) {
		d := &font.Drawer{Dst: out, Src: image.NewUniform(color.Black), Face: face, Dot: fixed.P(x, y)}
		d.DrawString(s)
	}
	if title != "" {
		text(margin, margin+11, title)
	}
	x := margin
	for i, p := range panels {
		if p.Image != nil && !p.Image.Bounds().Empty() {
			b := p.Image.Bounds()
			iw := int(float64(FigureHeight) * float64(b.Dx()) / float64(b.Dy()))
			off := (widths[i] - iw) / 2
			xdraw.CatmullRom.Scale(out, image.Rect(x+off, top, x+off+iw, top+FigureHeight), p.Image, b, draw.Src, nil)
		} else {
			r := image.Rect(x, top, x+widths[i], top+FigureHeight)
			draw.Draw(out, r, image.NewUniform(color.Gray{Y: 200}), image.Point{}, draw.Src)
			text(x+8, top+FigureHeight/2, "(no image)")
		}
		for k, line := range p.Caption {
			text(x, top+FigureHeight+6+(k+1)*lineH-3, line)
		}
		x += widths[i] + margin
	}
	return out
}

// SavePNG writes img to path as PNG, creating the directory; the file is
// replaced atomically (written beside it, then renamed), so a reader never
// sees half a file even if the process is killed.
func SavePNG(path string, img image.Image) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("save %s: %w", path, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*.png")
	if err != nil {
		return fmt.Errorf("save %s: %w", path, err)
	}
	defer os.Remove(tmp.Name()) // no-op after a successful rename
	if err := png.Encode(tmp, img); err != nil {
		tmp.Close()
		return fmt.Errorf("save %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("save %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("save %s: %w", path, err)
	}
	return nil
}

// SaveFigure renders Figure(title, panels...) and saves it as a PNG at path.
func SaveFigure(path, title string, panels ...Panel) error {
	return SavePNG(path, Figure(title, panels...))
}

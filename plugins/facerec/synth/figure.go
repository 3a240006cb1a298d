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

// Layout is where Figure puts things: the figure's size and, per panel,
// the rectangle its image is scaled into (for a nil image, the grey
// placeholder's rectangle).
type Layout struct {
	Size   image.Point
	Images []image.Rectangle
	// captionY is the top of the caption lines, x0 each panel's left edge.
	captionY int
	x0       []int
}

const (
	figMargin = 12
	figLineH  = 15
)

var figFace = basicfont.Face7x13

// FigureLayout computes Figure's layout: each panel's image scaled to
// FigureHeight pixels high (a placeholder is 3/4 as wide), its column as
// wide as the wider of image and caption, the image centred in it, columns
// separated by a margin, an optional title line on top.
func FigureLayout(title string, panels ...Panel) Layout {
	widths := make([]int, len(panels))
	imgW := make([]int, len(panels))
	total := figMargin
	maxLines := 0
	for i, p := range panels {
		w := FigureHeight * 3 / 4
		if p.Image != nil && !p.Image.Bounds().Empty() {
			b := p.Image.Bounds()
			w = int(float64(FigureHeight) * float64(b.Dx()) / float64(b.Dy()))
		}
		imgW[i] = w
		for _, line := range p.Caption {
			if tw := font.MeasureString(figFace, line).Ceil(); tw > w {
				w = tw
			}
		}
		widths[i] = w
		total += w + figMargin
		maxLines = max(maxLines, len(p.Caption))
	}
	top := figMargin
	if title != "" {
		top += figLineH + 4
		total = max(total, font.MeasureString(figFace, title).Ceil()+2*figMargin)
	}
	l := Layout{
		Size:     image.Pt(total, top+FigureHeight+6+maxLines*figLineH+figMargin),
		captionY: top + FigureHeight + 6,
	}
	x := figMargin
	for i, p := range panels {
		r := image.Rect(x, top, x+widths[i], top+FigureHeight)
		if p.Image != nil && !p.Image.Bounds().Empty() {
			off := (widths[i] - imgW[i]) / 2
			r = image.Rect(x+off, top, x+off+imgW[i], top+FigureHeight)
		}
		l.Images = append(l.Images, r)
		l.x0 = append(l.x0, x)
		x += widths[i] + figMargin
	}
	return l
}

// figure lays panels side by side as FigureLayout says, each with its
// caption below and an optional title line on top: the layout of the
// paper's Fig. 8 (original | synthesized | matched gallery face).
func figure(title string, panels ...Panel) *image.RGBA {
	l := FigureLayout(title, panels...)
	out := image.NewRGBA(image.Rectangle{Max: l.Size})
	draw.Draw(out, out.Bounds(), image.White, image.Point{}, draw.Src)
	text := func(x, y int, s string) {
		d := &font.Drawer{Dst: out, Src: image.NewUniform(color.Black), Face: figFace, Dot: fixed.P(x, y)}
		d.DrawString(s)
	}
	if title != "" {
		text(figMargin, figMargin+11, title)
	}
	for i, p := range panels {
		r := l.Images[i]
		if p.Image != nil && !p.Image.Bounds().Empty() {
			xdraw.CatmullRom.Scale(out, r, p.Image, p.Image.Bounds(), draw.Src, nil)
		} else {
			draw.Draw(out, r, image.NewUniform(PlaceholderGrey), image.Point{}, draw.Src)
			text(r.Min.X+8, r.Min.Y+FigureHeight/2, "(no image)")
		}
		for k, line := range p.Caption {
			text(l.x0[i], l.captionY+(k+1)*figLineH-3, line)
		}
	}
	return out
}

// PlaceholderGrey fills the panel of a nil image.
var PlaceholderGrey = color.Gray{Y: 200}

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
	return SavePNG(path, figure(title, panels...))
}

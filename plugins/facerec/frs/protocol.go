package frs

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
)

// wireImage is an image on the wire: raw 8-bit RGB, row-major, base64.
type wireImage struct {
	Width  int    `json:"width"`
	Height int    `json:"height"`
	RGB    string `json:"rgb"`
}

// request is one protocol request (PROTOCOL.md). Unused fields are omitted.
type request struct {
	V          int          `json:"v"`
	ID         uint64       `json:"id"`
	Op         string       `json:"op"`
	Image      *wireImage   `json:"image,omitempty"`
	Detector   Detector     `json:"detector,omitempty"`
	MinScore   float64      `json:"min_score,omitempty"`
	Descriptor *bool        `json:"descriptors,omitempty"`
	Landmarks  [][2]float64 `json:"landmarks,omitempty"`
	ReturnChip bool         `json:"return_chip,omitempty"`
}

// reply is the union of all protocol replies.
type reply struct {
	ID         *uint64    `json:"id"`
	OK         bool       `json:"ok"`
	Error      string     `json:"error"`
	MS         float64    `json:"ms"`
	Faces      []wireFace `json:"faces"`
	Descriptor []float64  `json:"descriptor"`
	Info       *Info      `json:"info"`
	Chip       *wireImage `json:"chip"`
}

type wireFace struct {
	Box        [4]float64   `json:"box"`
	Score      float64      `json:"score"`
	Landmarks  [][2]float64 `json:"landmarks"`
	Descriptor []float64    `json:"descriptor"`
}

// readyLine is the first line a sidecar prints.
type readyLine struct {
	Ready bool `json:"ready"`
	Info
	Error string `json:"error"`
}

// Info describes a running FRS, as announced by its ready line.
type Info struct {
	Protocol int     `json:"protocol"`
	FRS      string  `json:"frs"`     // e.g. "face-api 1.7.15"
	Backend  string  `json:"backend"` // e.g. "wasm"
	TFJS     string  `json:"tfjs,omitempty"`
	LoadMS   float64 `json:"load_ms,omitempty"` // model load time of the first process
}

func (f wireFace) face() (Face, error) {
	out := Face{
		Box:   Box{X: f.Box[0], Y: f.Box[1], W: f.Box[2], H: f.Box[3]},
		Score: f.Score,
	}
	out.Landmarks = fromWirePoints(f.Landmarks)
	if err := checkLandmarks(out.Landmarks); err != nil {
		return Face{}, fmt.Errorf("sidecar reply: %w", err)
	}
	if f.Descriptor != nil {
		if err := checkDescriptor(f.Descriptor); err != nil {
			return Face{}, fmt.Errorf("sidecar reply: %w", err)
		}
		out.Descriptor = f.Descriptor
	}
	return out, nil
}

func toWirePoints(p []Point) [][2]float64 {
	out := make([][2]float64, len(p))
	for i, q := range p {
		out[i] = [2]float64{q.X, q.Y}
	}
	return out
}

func fromWirePoints(p [][2]float64) []Point {
	out := make([]Point, len(p))
	for i, q := range p {
		out[i] = Point{X: q[0], Y: q[1]}
	}
	return out
}

// encodeImage converts img to the wire format (RGB bytes; alpha is dropped,
// so a translucent image is seen as if composited over black).
func encodeImage(img image.Image) (*wireImage, error) {
	if img == nil {
		return nil, fmt.Errorf("nil image")
	}
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	if w <= 0 || h <= 0 {
		return nil, fmt.Errorf("empty image (%dx%d)", w, h)
	}
	return &wireImage{Width: w, Height: h, RGB: base64.StdEncoding.EncodeToString(rgbBytes(img))}, nil
}

// rgbBytes returns img's pixels as row-major 8-bit RGB (3 bytes per pixel,
// alpha dropped), the layout of the protocol's images.
func rgbBytes(img image.Image) []byte {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	buf := make([]byte, 0, w*h*3)
	switch m := img.(type) {
	case *image.RGBA:
		for y := b.Min.Y; y < b.Max.Y; y++ {
			row := m.Pix[m.PixOffset(b.Min.X, y):]
			for x := 0; x < w; x++ {
				buf = append(buf, row[4*x], row[4*x+1], row[4*x+2])
			}
		}
	case *image.NRGBA:
		for y := b.Min.Y; y < b.Max.Y; y++ {
			row := m.Pix[m.PixOffset(b.Min.X, y):]
			for x := 0; x < w; x++ {
				a := uint32(row[4*x+3])
				buf = append(buf, byte(uint32(row[4*x])*a/255), byte(uint32(row[4*x+1])*a/255), byte(uint32(row[4*x+2])*a/255))
			}
		}
	default:
		for y := b.Min.Y; y < b.Max.Y; y++ {
			for x := b.Min.X; x < b.Max.X; x++ {
				c := color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)
				buf = append(buf, c.R, c.G, c.B)
			}
		}
	}
	return buf
}

// decodeWireImage turns a wire image back into an *image.RGBA.
func decodeWireImage(wi *wireImage) (*image.RGBA, error) {
	raw, err := base64.StdEncoding.DecodeString(wi.RGB)
	if err != nil {
		return nil, fmt.Errorf("decode image: %w", err)
	}
	if len(raw) != wi.Width*wi.Height*3 {
		return nil, fmt.Errorf("image has %d bytes, want %d", len(raw), wi.Width*wi.Height*3)
	}
	img := image.NewRGBA(image.Rect(0, 0, wi.Width, wi.Height))
	for i := 0; i < wi.Width*wi.Height; i++ {
		img.Pix[4*i], img.Pix[4*i+1], img.Pix[4*i+2], img.Pix[4*i+3] = raw[3*i], raw[3*i+1], raw[3*i+2], 255
	}
	return img, nil
}

// replyID extracts the id of a reply line without decoding the rest.
func replyID(line []byte) (*uint64, error) {
	var r struct {
		ID *uint64 `json:"id"`
	}
	if err := json.Unmarshal(line, &r); err != nil {
		return nil, err
	}
	return r.ID, nil
}

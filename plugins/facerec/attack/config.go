package attack

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tesbo/tesbo/plugins/facerec/frs"
)

// Detect modes: how the descriptor of a synthesized face is obtained.
const (
	// detectLandmarks reuses the unedited face's landmarks (fast and
	// deterministic: only the recognition network runs). Each new best,
	// and each evaluation below θ, is re-checked with full SSD detection,
	// which decides success.
	detectLandmarks = "landmarks"
	// detectSSD and detectTiny run face detection on every synthesized image.
	detectSSD  = "ssd"
	detectTiny = "tiny"
)

// Config is the attack's set-up. The zero value (after Defaults) attacks
// with the most confident face of face-api's demo/sample6.jpg against the
// faces of the other demo photos.
type Config struct {
	// Attacker is the attacker's photo; "" means face-api's demo/sample6.jpg.
	Attacker string
	// AttackerFace picks one face of the attacker's photo, in order of
	// detection confidence (0 = most confident).
	AttackerFace int
	// Gallery is a directory of face photos or a descriptor file (.npy
	// float64 N×128, or .json); "" means face-api's demo photos
	// sample*.jpg without the attacker's photo (the demo's screenshots are
	// left out: they show the sample photos again).
	Gallery string
	// GalleryGlob keeps only the gallery directory's photos whose base name
	// matches it ("" = all JPEG and PNG files).
	GalleryGlob string
	// Threshold θ: the attack succeeds when the distance with full face
	// detection is below θ. 0 means 0.5 (the paper's).
	Threshold float64
	// SaveDir receives the best result's figure (best.png, best.json) and,
	// when SaveAll, every synthesized image. "" means FigureDir, or
	// out/facerec.
	SaveDir string
	// FigureDir, if set, receives the best result's figure instead of
	// SaveDir.
	FigureDir string
	// SaveAll saves every synthesized image (eval-NNNNN.png) in SaveDir.
	SaveAll bool
	// Sidecars is the number of FRS processes; 0 means runtime.NumCPU().
	Sidecars int
	// Backend is the FRS: "wasm" (default), "cpu" or "exec:COMMAND" (see
	// frs.Options.Backend).
	Backend string
	// Detect is detectLandmarks (default), detectSSD or detectTiny.
	Detect string
	// Timeout bounds one FRS request; 0 means 2 minutes.
	Timeout time.Duration
	// CacheDir caches gallery descriptors per photo (frs.GalleryOptions);
	// "" means the user cache directory, "off" disables it.
	CacheDir string
}

// paramDocs documents the --param keys Configure accepts.
var paramDocs = map[string]string{
	"attacker":      "attacker's photo (default: face-api demo/sample6.jpg)",
	"attacker_face": "which face of the attacker's photo, by detection confidence (default 0)",
	"gallery":       "gallery: a directory of face photos, or a .npy (float64 N×128) / .json descriptor file (default: the other face-api demo photos)",
	"gallery_glob":  "only gallery photos whose file name matches this pattern, e.g. 'id*.jpg' (default: all .jpg/.jpeg/.png)",
	"threshold":     "match threshold θ; success when the distance with full face detection is < θ (default 0.5)",
	"save_dir":      "save every synthesized image here, plus the best result's figure (default: only the figure, in out/facerec)",
	"figure_dir":    "where the best result's figure (best.png, best.json) goes (default: save_dir, else out/facerec)",
	"sidecars":      "number of FRS sidecar processes (default: number of CPUs)",
	"backend":       "FRS backend: wasm (default), cpu, or exec:COMMAND speaking plugins/facerec/PROTOCOL.md",
	"detect":        "landmarks (default: reuse the unedited face's landmarks, re-check new bests and evaluations below θ with detection), ssd or tiny (detect in every image)",
	"frs_timeout":   "timeout of one FRS request, e.g. 2m (default 2m)",
	"cache_dir":     "gallery descriptor cache directory, or off (default: user cache dir)",
}

// reservedParams are sent by the host to every Configurable objective.
var reservedParams = map[string]bool{"noise_var": true, "seed": true}

// paramHelp returns one line per accepted --param key.
func paramHelp() string {
	keys := make([]string, 0, len(paramDocs))
	for k := range paramDocs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "  %s: %s\n", k, paramDocs[k])
	}
	return b.String()
}

// ParseParams builds a Config from the host's --param key=value pairs.
// Unknown keys are an error that lists the accepted ones; the host's
// reserved keys (noise_var, seed) are accepted and ignored (the FRS is
// deterministic).
func ParseParams(params map[string]string) (Config, error) {
	var c Config
	for k, v := range params {
		var err error
		switch k {
		case "attacker":
			c.Attacker = v
		case "attacker_face":
			c.AttackerFace, err = strconv.Atoi(v)
			if err == nil && c.AttackerFace < 0 {
				err = fmt.Errorf("must be ≥ 0")
			}
		case "gallery":
			c.Gallery = v
		case "gallery_glob":
			c.GalleryGlob = v
		case "threshold":
			c.Threshold, err = strconv.ParseFloat(v, 64)
			if err == nil && !(c.Threshold > 0 && !math.IsInf(c.Threshold, 0)) {
				err = fmt.Errorf("must be a positive distance")
			}
		case "save_dir":
			c.SaveDir, c.SaveAll = v, v != ""
		case "figure_dir":
			c.FigureDir = v
		case "sidecars":
			c.Sidecars, err = strconv.Atoi(v)
			if err == nil && (c.Sidecars < 1 || c.Sidecars > 64) {
				err = fmt.Errorf("must be in [1, 64]")
			}
		case "backend":
			c.Backend = v
		case "detect":
			c.Detect = v
			if v != detectLandmarks && v != detectSSD && v != detectTiny {
				err = fmt.Errorf("must be %s, %s or %s", detectLandmarks, detectSSD, detectTiny)
			}
		case "frs_timeout":
			c.Timeout, err = time.ParseDuration(v)
			if err == nil && c.Timeout <= 0 {
				err = fmt.Errorf("must be positive")
			}
		case "cache_dir":
			c.CacheDir = v
		default:
			if reservedParams[k] {
				continue
			}
			return Config{}, fmt.Errorf("facerec: unknown parameter %q; accepted --param keys:\n%s", k, paramHelp())
		}
		if err != nil {
			return Config{}, fmt.Errorf("facerec: --param %s=%s: %v", k, v, err)
		}
	}
	return c, nil
}

// defaults fills in the zero-value defaults (locating face-api's demo
// photos when Attacker or Gallery is empty).
func (c Config) defaults() (Config, error) {
	if c.Threshold == 0 {
		c.Threshold = 0.5
	}
	if c.SaveDir == "" {
		c.SaveDir = filepath.Join("out", "facerec")
	}
	if c.FigureDir == "" {
		c.FigureDir = c.SaveDir
	}
	if c.Sidecars == 0 {
		c.Sidecars = runtime.NumCPU()
	}
	if c.Detect == "" {
		c.Detect = detectLandmarks
	}
	if c.Attacker == "" || c.Gallery == "" {
		demo, err := frs.DemoDir()
		if err != nil {
			return c, fmt.Errorf("facerec: default attacker/gallery are face-api's demo photos: %w", err)
		}
		if c.Attacker == "" {
			c.Attacker = filepath.Join(demo, "sample6.jpg")
		}
		if c.Gallery == "" {
			c.Gallery = demo
			if c.GalleryGlob == "" {
				c.GalleryGlob = "sample*.jpg"
			}
		}
	}
	return c, nil
}

// outputDirs makes SaveDir and FigureDir, so that one that cannot be made
// (under a file, without permission) is refused when the attack is set
// up, not found out by the first save, whose failure is only logged.
func (c Config) outputDirs() error {
	for _, d := range []struct{ param, dir string }{{"save_dir", c.SaveDir}, {"figure_dir", c.FigureDir}} {
		if err := os.MkdirAll(d.dir, 0o755); err != nil {
			return fmt.Errorf("facerec: %s %s cannot be made: %w (choose a writable directory)", d.param, d.dir, err)
		}
	}
	return nil
}

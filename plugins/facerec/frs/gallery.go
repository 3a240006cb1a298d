package frs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	_ "image/jpeg" // gallery photos
	_ "image/png"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// Entry is one enrolled face of a Gallery.
type Entry struct {
	Name       string    // identity label
	Descriptor []float64 // DescriptorLen values
	Source     string    // the photo it came from; "" for descriptor files
	Box        Box       // the face's box in Source (zero without a photo)
}

// Gallery is the set of enrolled faces an attack tries to be matched to.
type Gallery struct {
	Entries []Entry
}

// Nearest returns the index of the entry closest to descriptor d and its
// Euclidean distance (-1, +Inf for an empty gallery).
func (g *Gallery) Nearest(d []float64) (int, float64) {
	best, bestD := -1, math.Inf(1)
	for i, e := range g.Entries {
		if dist := Distance(d, e.Descriptor); dist < bestD {
			best, bestD = i, dist
		}
	}
	return best, bestD
}

// GalleryOptions configures LoadGallery for photo directories.
type GalleryOptions struct {
	// Analyze configures face detection in gallery photos.
	Analyze AnalyzeOptions
	// CacheDir holds per-photo results keyed by a hash of the photo's bytes,
	// CacheTag and the detection options; "" means
	// $XDG_CACHE_HOME/tesbo/facerec (os.UserCacheDir), "off" disables it.
	CacheDir string
	// CacheTag names the FRS that computed the descriptors (e.g. "face-api
	// 1.7.15/wasm"): descriptors of different systems never mix.
	CacheTag string
	// Exclude lists photo paths to leave out (e.g. the attacker's photo).
	Exclude []string
	// Pattern, if set, keeps only photos whose base name matches it
	// (filepath.Match syntax, e.g. "sample*.jpg").
	Pattern string
	// Parallel is the number of photos analyzed at once; 0 means 1.
	Parallel int
}

// LoadGallery loads a gallery from path: a directory of photos (.jpg,
// .jpeg, .png; every face found becomes an entry named after the file, with
// "#k" appended when a photo holds several faces), or a descriptor file:
// .npy (float64 N×128, entries named "row k") or .json (a list of
// {"name": ..., "descriptor": [...]} objects, or a list of 128-value lists).
// f is used only for directories.
func LoadGallery(ctx context.Context, f FRS, path string, o GalleryOptions) (*Gallery, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("gallery: %w", err)
	}
	var g *Gallery
	if st.IsDir() {
		g, err = buildGallery(ctx, f, path, o)
	} else {
		g, err = loadDescriptorFile(path)
	}
	if err != nil {
		return nil, err
	}
	if len(g.Entries) == 0 {
		return nil, fmt.Errorf("gallery %s: no faces (put face photos or a descriptor file there)", path)
	}
	return g, nil
}

// loadDescriptorFile reads a .npy or .json descriptor file (see LoadGallery).
func loadDescriptorFile(path string) (*Gallery, error) {
	var rows [][]float64
	var names []string
	switch strings.ToLower(filepath.Ext(path)) {
	case ".npy":
		fh, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("gallery: %w", err)
		}
		defer fh.Close()
		if rows, err = readNPY(fh); err != nil {
			return nil, fmt.Errorf("gallery %s: %w", path, err)
		}
		for i := range rows {
			names = append(names, fmt.Sprintf("row %d", i))
		}
	case ".json":
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("gallery: %w", err)
		}
		var objs []struct {
			Name       string    `json:"name"`
			Descriptor []float64 `json:"descriptor"`
		}
		if err := json.Unmarshal(data, &objs); err == nil {
			for i, o := range objs {
				name := o.Name
				if name == "" {
					name = fmt.Sprintf("row %d", i)
				}
				names = append(names, name)
				rows = append(rows, o.Descriptor)
			}
		} else if err2 := json.Unmarshal(data, &rows); err2 == nil {
			for i := range rows {
				names = append(names, fmt.Sprintf("row %d", i))
			}
		} else {
			return nil, fmt.Errorf("gallery %s: want a JSON list of {\"name\", \"descriptor\"} objects or of %d-value lists: %v", path, DescriptorLen, err)
		}
	default:
		return nil, fmt.Errorf("gallery %s: unknown descriptor file type (want .npy or .json, or a directory of photos)", path)
	}
	g := &Gallery{}
	for i, r := range rows {
		if err := checkDescriptor(r); err != nil {
			return nil, fmt.Errorf("gallery %s: entry %d: %w", path, i, err)
		}
		g.Entries = append(g.Entries, Entry{Name: names[i], Descriptor: r})
	}
	return g, nil
}

// imageExts are the photo types a gallery directory may hold.
var imageExts = map[string]bool{".jpg": true, ".jpeg": true, ".png": true}

// GalleryPhotos lists the photos LoadGallery would read in dir, sorted:
// JPEG and PNG files whose base name matches pattern ("" matches all),
// minus exclude.
func GalleryPhotos(dir, pattern string, exclude []string) ([]string, error) {
	if pattern != "" {
		if _, err := filepath.Match(pattern, "x"); err != nil {
			return nil, fmt.Errorf("gallery: bad pattern %q: %w", pattern, err)
		}
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("gallery: %w", err)
	}
	skip := map[string]bool{}
	for _, e := range exclude {
		if abs, err := filepath.Abs(e); err == nil {
			skip[abs] = true
		}
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() || !imageExts[strings.ToLower(filepath.Ext(e.Name()))] {
			continue
		}
		if ok, _ := filepath.Match(pattern, e.Name()); pattern != "" && !ok {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if abs, err := filepath.Abs(p); err == nil && skip[abs] {
			continue
		}
		out = append(out, p)
	}
	sort.Strings(out)
	return out, nil
}

func buildGallery(ctx context.Context, f FRS, dir string, o GalleryOptions) (*Gallery, error) {
	photos, err := GalleryPhotos(dir, o.Pattern, o.Exclude)
	if err != nil {
		return nil, err
	}
	if f == nil {
		return nil, errors.New("gallery: a photo directory needs an FRS")
	}
	faces := make([][]Face, len(photos))
	errs := make([]error, len(photos))
	sem := make(chan struct{}, max(1, o.Parallel))
	var wg sync.WaitGroup
	for i, p := range photos {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			faces[i], errs[i] = analyzeCached(ctx, f, p, o)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("gallery %s: %w", dir, err)
	}
	g := &Gallery{}
	for i, p := range photos {
		base := strings.TrimSuffix(filepath.Base(p), filepath.Ext(p))
		for k, fc := range faces[i] {
			name := base
			if len(faces[i]) > 1 {
				name = fmt.Sprintf("%s#%d", base, k)
			}
			g.Entries = append(g.Entries, Entry{Name: name, Descriptor: fc.Descriptor, Source: p, Box: fc.Box})
		}
	}
	return g, nil
}

// DecodeImageFile reads a JPEG or PNG file.
func DecodeImageFile(path string) (image.Image, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	img, _, err := image.Decode(fh)
	if err != nil {
		return nil, fmt.Errorf("decode %s: %w", path, err)
	}
	return img, nil
}

// analyzeCached analyzes one photo, reading and writing the cache.
func analyzeCached(ctx context.Context, f FRS, path string, o GalleryOptions) ([]Face, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	cacheFile := ""
	if dir := cacheDir(o.CacheDir); dir != "" {
		h := sha256.New()
		fmt.Fprintf(h, "tesbo-frs-gallery/v%d/%s/%s/%g\n", protocolVersion, o.CacheTag, o.Analyze.Detector, o.Analyze.MinScore)
		h.Write(data)
		cacheFile = filepath.Join(dir, hex.EncodeToString(h.Sum(nil))+".json")
		if b, err := os.ReadFile(cacheFile); err == nil {
			var faces []Face
			if json.Unmarshal(b, &faces) == nil && validFaces(faces) {
				return faces, nil
			}
		}
	}
	img, err := DecodeImageFile(path)
	if err != nil {
		return nil, err
	}
	opt := o.Analyze
	opt.NoDescriptor = false
	faces, err := f.Analyze(ctx, img, opt)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if cacheFile != "" {
		if b, err := json.Marshal(faces); err == nil {
			if os.MkdirAll(filepath.Dir(cacheFile), 0o755) == nil {
				tmp := cacheFile + ".tmp" + fmt.Sprint(os.Getpid())
				if os.WriteFile(tmp, b, 0o644) == nil {
					_ = os.Rename(tmp, cacheFile)
				}
			}
		}
	}
	return faces, nil
}

func validFaces(faces []Face) bool {
	for _, f := range faces {
		if checkDescriptor(f.Descriptor) != nil || checkLandmarks(f.Landmarks) != nil {
			return false
		}
	}
	return true
}

func cacheDir(d string) string {
	switch d {
	case "off":
		return ""
	case "":
		base, err := os.UserCacheDir()
		if err != nil {
			return ""
		}
		return filepath.Join(base, "tesbo", "facerec")
	}
	return d
}

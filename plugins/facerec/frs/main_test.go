package frs

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"math"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/tesbo/tesbo/internal/testenv"
)

// The test binary doubles as a fake sidecar (FRS_FAKE_SIDECAR=1) speaking
// the protocol without node, and as a fake plugin process
// (FRS_FAKE_PARENT=1) that starts sidecars and waits to be killed.
func TestMain(m *testing.M) {
	switch {
	case os.Getenv("FRS_FAKE_SIDECAR") != "":
		fakeSidecarMain()
		os.Exit(0)
	case os.Getenv("FRS_FAKE_PARENT") != "":
		fakeParentMain()
		os.Exit(0)
	}
	code := m.Run()
	if shared.pool != nil {
		shared.pool.Close()
	}
	os.Exit(code)
}

// shared is the one real face-api pool all tests of the package use (model
// loading takes seconds).
var shared struct {
	once sync.Once
	pool *Pool
	err  error
}

// requireInstalled skips (or, under CI, fails) when the sidecar's npm
// packages are missing.
func requireInstalled(t testing.TB) {
	t.Helper()
	if _, err := sidecarDir(); err != nil {
		testenv.Need(t, fmt.Sprintf("face-api sidecar not installed: %v\nrun scripts/deps.sh (it runs `npm ci` in plugins/facerec/frs)", err))
	}
}

func realPool(t testing.TB) *Pool {
	t.Helper()
	requireInstalled(t)
	shared.once.Do(func() {
		shared.pool, shared.err = Start(context.Background(), Options{Workers: 2})
	})
	if shared.err != nil {
		t.Fatalf("start face-api sidecars: %v", shared.err)
	}
	return shared.pool
}

func demoPhoto(t testing.TB, name string) image.Image {
	t.Helper()
	dir, err := DemoDir()
	if err != nil {
		t.Fatal(err)
	}
	img, err := DecodeImageFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// ---------------------------------------------------------------------------
// Fake sidecar: ready line, then describe/analyze with descriptors derived
// from the image's mean colour. Image width 13 makes it hang, width 17 makes
// it exit mid-request; FRS_FAKE_PROTOCOL overrides the announced version.

func fakeSidecarMain() {
	proto := 1
	if v := os.Getenv("FRS_FAKE_PROTOCOL"); v != "" {
		fmt.Sscan(v, &proto)
	}
	out := bufio.NewWriter(os.Stdout)
	emit := func(v any) {
		b, _ := json.Marshal(v)
		out.Write(b)
		out.WriteByte('\n')
		out.Flush()
	}
	emit(map[string]any{"ready": true, "protocol": proto, "frs": "fake 0", "backend": "fake"})
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var req struct {
			ID        *uint64      `json:"id"`
			Op        string       `json:"op"`
			Image     *wireImage   `json:"image"`
			Landmarks [][2]float64 `json:"landmarks"`
		}
		if err := json.Unmarshal(sc.Bytes(), &req); err != nil {
			emit(map[string]any{"id": nil, "ok": false, "error": "malformed JSON request: " + err.Error()})
			continue
		}
		fail := func(msg string) { emit(map[string]any{"id": req.ID, "ok": false, "error": msg}) }
		if req.Image == nil {
			fail("image missing")
			continue
		}
		switch req.Image.Width {
		case 13:
			time.Sleep(time.Minute)
		case 17:
			os.Exit(3)
		}
		raw, err := base64.StdEncoding.DecodeString(req.Image.RGB)
		if err != nil || len(raw) != 3*req.Image.Width*req.Image.Height {
			fail("bad image")
			continue
		}
		desc := fakeDescriptor(raw)
		switch req.Op {
		case "describe":
			if len(req.Landmarks) != NumLandmarks {
				fail("landmarks must be 68 points")
				continue
			}
			emit(map[string]any{"id": req.ID, "ok": true, "descriptor": desc})
		case "analyze":
			w, h := float64(req.Image.Width), float64(req.Image.Height)
			lm := make([][2]float64, NumLandmarks)
			for i := range lm {
				lm[i] = [2]float64{w * (0.2 + 0.6*float64(i)/67), h / 2}
			}
			emit(map[string]any{"id": req.ID, "ok": true, "faces": []map[string]any{{
				"box": []float64{1, 1, w - 2, h - 2}, "score": 0.9, "landmarks": lm, "descriptor": desc}}})
		default:
			fail("unknown op")
		}
	}
}

// fakeDescriptor: channel means in the first 3 values, the rest fixed.
func fakeDescriptor(raw []byte) []float64 {
	d := make([]float64, DescriptorLen)
	for i, b := range raw {
		d[i%3] += float64(b) / 255
	}
	n := float64(len(raw) / 3)
	for k := 0; k < 3; k++ {
		d[k] /= n
	}
	for k := 3; k < DescriptorLen; k++ {
		d[k] = math.Sin(float64(k))
	}
	return d
}

// fakeParentMain starts two fake sidecars, prints their pids and blocks.
func fakeParentMain() {
	os.Setenv("FRS_FAKE_SIDECAR", "1")
	p, err := Start(context.Background(), Options{Backend: "exec:" + os.Args[0], Workers: 2})
	if err != nil {
		fmt.Println(`{"error":"` + err.Error() + `"}`)
		return
	}
	b, _ := json.Marshal(p.pids())
	fmt.Println(string(b))
	select {}
}

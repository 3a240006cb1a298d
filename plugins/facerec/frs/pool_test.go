package frs

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"math"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// fakePool starts n fake sidecars (the test binary in fake mode) through the
// exec: backend.
func fakePool(t *testing.T, n int, timeout time.Duration) *Pool {
	t.Helper()
	t.Setenv("FRS_FAKE_SIDECAR", "1")
	p, err := Start(context.Background(), Options{Backend: "exec:" + os.Args[0], Workers: n, Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func uniform(w, h int, c color.RGBA) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for i := 0; i < len(img.Pix); i += 4 {
		img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = c.R, c.G, c.B, 255
	}
	return img
}

func someLandmarks() []Point {
	lm := make([]Point, NumLandmarks)
	for i := range lm {
		lm[i] = Point{X: float64(i), Y: float64(i % 7)}
	}
	return lm
}

func TestExecBackendRoundTrip(t *testing.T) {
	p := fakePool(t, 2, 10*time.Second)
	if info := p.Info(); info.FRS != "fake 0" || info.Protocol != protocolVersion {
		t.Fatalf("info %+v", info)
	}
	img := uniform(20, 10, color.RGBA{255, 0, 51, 255})
	d, err := p.Describe(context.Background(), img, someLandmarks())
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(d[0]-1) > 1e-9 || d[1] != 0 || math.Abs(d[2]-0.2) > 1e-9 {
		t.Errorf("descriptor starts %v, want the image's channel means [1 0 0.2]", d[:3])
	}
	// Analyze reports coordinates in the sub-image's own system.
	sub := uniform(100, 60, color.RGBA{10, 20, 30, 255}).SubImage(image.Rect(40, 30, 90, 60))
	faces, err := p.Analyze(context.Background(), sub, AnalyzeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(faces) != 1 || faces[0].Box.X != 41 || faces[0].Box.Y != 31 || faces[0].Landmarks[0].X != 40+50*0.2 {
		t.Errorf("analyze on a sub-image: %+v", faces)
	}
}

func TestConcurrentRequests(t *testing.T) {
	p := fakePool(t, 2, 10*time.Second)
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			img := uniform(20+i, 8, color.RGBA{uint8(10 * i), 0, 0, 255}) // widths 13 and 17 are the fake's traps
			d, err := p.Describe(context.Background(), img, someLandmarks())
			if err == nil && math.Abs(d[0]-float64(10*i)/255) > 1e-9 {
				err = fmt.Errorf("request %d got the reply of another (d[0] = %v)", i, d[0])
			}
			errs <- err
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

func TestTimeoutKillsAndRestarts(t *testing.T) {
	p := fakePool(t, 1, 500*time.Millisecond)
	before := p.pids()
	_, err := p.Describe(context.Background(), uniform(13, 4, color.RGBA{}), someLandmarks())
	if !errors.Is(err, errTimeout) {
		t.Fatalf("hanging request: err = %v, want a timeout", err)
	}
	if _, err := p.Describe(context.Background(), uniform(5, 5, color.RGBA{}), someLandmarks()); err != nil {
		t.Fatalf("request after a timeout: %v", err)
	}
	if after := p.pids(); len(after) != 1 || after[0] == before[0] {
		t.Errorf("pids before %v, after %v: want a fresh process", before, after)
	}
}

func TestCrashMidRequestIsRetriedThenReported(t *testing.T) {
	p := fakePool(t, 1, 5*time.Second)
	// Width 17 kills the fake every time: the retry fails too and the error
	// says the sidecar exited, with its exit status.
	_, err := p.Describe(context.Background(), uniform(17, 3, color.RGBA{}), someLandmarks())
	if !errors.Is(err, errDied) || !strings.Contains(err.Error(), "exit status 3") {
		t.Fatalf("crashing request: err = %v", err)
	}
	if _, err := p.Describe(context.Background(), uniform(5, 5, color.RGBA{}), someLandmarks()); err != nil {
		t.Fatalf("request after a crash: %v", err)
	}
}

func TestContextCancelFreesCallerNotSidecar(t *testing.T) {
	p := fakePool(t, 1, 2*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	_, err := p.Describe(ctx, uniform(13, 4, color.RGBA{}), someLandmarks())
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(t0) > time.Second {
		t.Fatalf("cancelled request returned %v after %v", err, time.Since(t0))
	}
	// The sidecar is freed once the pool's own timeout has handled the hang.
	if _, err := p.Describe(context.Background(), uniform(5, 5, color.RGBA{}), someLandmarks()); err != nil {
		t.Fatal(err)
	}
}

func TestErrorsAreReplies(t *testing.T) {
	p := fakePool(t, 1, 5*time.Second)
	if _, err := p.Describe(context.Background(), uniform(5, 5, color.RGBA{}), someLandmarks()[:10]); err == nil {
		t.Error("10 landmarks accepted")
	}
	before := p.pids()
	proc := p.workers[0].current()
	line, err := proc.roundTrip(&request{Op: "nonsense", Image: &wireImage{Width: 1, Height: 1, RGB: "AAAA"}}, time.Second)
	if err != nil || !strings.Contains(string(line), `"ok":false`) {
		t.Fatalf("unknown op: %s, %v", line, err)
	}
	if after := p.pids(); after[0] != before[0] {
		t.Error("sidecar restarted after an error reply")
	}
}

func TestProtocolMismatchRefused(t *testing.T) {
	t.Setenv("FRS_FAKE_SIDECAR", "1")
	t.Setenv("FRS_FAKE_PROTOCOL", "2")
	_, err := Start(context.Background(), Options{Backend: "exec:" + os.Args[0]})
	if err == nil || !strings.Contains(err.Error(), "protocol 2") {
		t.Fatalf("err = %v, want a protocol mismatch", err)
	}
}

func TestBadBackends(t *testing.T) {
	for _, b := range []string{"exec:", "tensorflow", "exec:/nonexistent/frs-program"} {
		_, err := Start(context.Background(), Options{Backend: b, StartTimeout: 5 * time.Second})
		if err == nil {
			t.Errorf("backend %q: started", b)
		}
	}
	if _, err := Start(context.Background(), Options{Dir: t.TempDir()}); !errors.Is(err, errNotInstalled) ||
		!strings.Contains(err.Error(), "frs.js") {
		t.Errorf("empty sidecar dir: err = %v, want ErrNotInstalled", err)
	}
}

// TestSidecarsDieWithTheirParent kills a process that started two sidecars
// with SIGKILL (no chance to clean up) and checks the sidecars are gone.
func TestSidecarsDieWithTheirParent(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("parent-death signal is Linux-only")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "FRS_FAKE_PARENT=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatal(err)
	}
	var pids []int
	if err := json.Unmarshal([]byte(line), &pids); err != nil || len(pids) != 2 {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("parent said %q", line)
	}
	for _, pid := range pids {
		if !processAlive(pid) {
			t.Fatalf("sidecar %d not running before the kill", pid)
		}
	}
	cmd.Process.Kill()
	cmd.Wait()
	deadline := time.Now().Add(5 * time.Second)
	for _, pid := range pids {
		for processAlive(pid) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if processAlive(pid) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Errorf("sidecar %d outlived its killed parent", pid)
		}
	}
}

// processAlive reports whether pid runs (a zombie counts as dead).
func processAlive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] != 'Z' && s[i+2] != 'X'
}

func TestCloseStopsSidecars(t *testing.T) {
	p := fakePool(t, 2, 5*time.Second)
	pids := p.pids()
	p.Close()
	for _, pid := range pids {
		if processAlive(pid) {
			t.Errorf("sidecar %d still running after Close", pid)
		}
	}
	if _, err := p.Describe(context.Background(), uniform(5, 5, color.RGBA{}), someLandmarks()); !errors.Is(err, errClosed) {
		t.Errorf("request after Close: %v, want ErrClosed", err)
	}
}

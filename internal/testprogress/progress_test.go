package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// stream is a go test -json stream, one event per line.
func stream(events ...string) *strings.Reader {
	return strings.NewReader(strings.Join(events, "\n") + "\n")
}

func TestPassingPackagesPrintGoTestsLines(t *testing.T) {
	var out bytes.Buffer
	code := run(stream(
		`{"Action":"start","Package":"m/a"}`,
		`{"Action":"run","Package":"m/a","Test":"TestA"}`,
		`{"Action":"output","Package":"m/a","Test":"TestA","Output":"=== RUN   TestA\n"}`,
		`{"Action":"output","Package":"m/a","Test":"TestA","Output":"    a_test.go:9: chatter\n"}`,
		`{"Action":"pass","Package":"m/a","Test":"TestA","Elapsed":0.5}`,
		`{"Action":"output","Package":"m/a","Output":"PASS\n"}`,
		`{"Action":"output","Package":"m/a","Output":"ok  \tm/a\t0.512s\n"}`,
		`{"Action":"pass","Package":"m/a","Elapsed":0.512}`,
		`{"Action":"start","Package":"m/b"}`,
		`{"Action":"output","Package":"m/b","Output":"?   \tm/b\t[no test files]\n"}`,
		`{"Action":"skip","Package":"m/b","Elapsed":0}`,
	), &out, 0)
	if code != 0 {
		t.Errorf("exit status %d, want 0\n%s", code, &out)
	}
	got := out.String()
	for _, want := range []string{"ok  \tm/a\t0.512s\n", "?   \tm/b\t[no test files]\n", "all 2 packages ok"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "chatter") {
		t.Errorf("a passing test's output was printed:\n%s", got)
	}
}

func TestFailingTestPrintsItsOutputAndExits1(t *testing.T) {
	var out bytes.Buffer
	code := run(stream(
		`{"Action":"start","Package":"m/a"}`,
		`{"Action":"output","Package":"m/a","Test":"TestOK","Output":"ok chatter\n"}`,
		`{"Action":"pass","Package":"m/a","Test":"TestOK"}`,
		`{"Action":"output","Package":"m/a","Test":"TestBad/sub","Output":"    a_test.go:12: got 2, want 3\n"}`,
		`{"Action":"output","Package":"m/a","Test":"TestBad/sub","Output":"--- FAIL: TestBad/sub (0.00s)\n"}`,
		`{"Action":"fail","Package":"m/a","Test":"TestBad/sub"}`,
		`{"Action":"fail","Package":"m/a","Test":"TestBad"}`,
		`{"Action":"output","Package":"m/a","Output":"FAIL\n"}`,
		`{"Action":"output","Package":"m/a","Output":"FAIL\tm/a\t0.020s\n"}`,
		`{"Action":"fail","Package":"m/a","Elapsed":0.02}`,
	), &out, 0)
	if code != 1 {
		t.Errorf("exit status %d, want 1", code)
	}
	got := out.String()
	for _, want := range []string{"got 2, want 3", "--- FAIL: TestBad/sub", "FAIL\tm/a\t0.020s\n", "1 of 1 packages FAILED"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "ok chatter") {
		t.Errorf("a passing test's output was printed:\n%s", got)
	}
}

func TestUnfinishedOrEmptyStreamFails(t *testing.T) {
	for name, in := range map[string]string{
		"empty":        "",
		"unfinished":   `{"Action":"start","Package":"m/a"}` + "\n" + `{"Action":"output","Package":"m/a","Test":"TestHang","Output":"=== RUN   TestHang\n"}` + "\n",
		"go error":     `{"Action":"start","Package":"m/a"}` + "\n" + `{"Action":"pass","Package":"m/a"}` + "\n" + "go: updates to go.mod needed\n",
		"build failed": `{"ImportPath":"m/c","Action":"build-output","Output":"c.go:3:1: syntax error\n"}` + "\n" + `{"ImportPath":"m/c","Action":"build-fail"}` + "\n" + `{"Action":"fail","Package":"m/c","FailedBuild":"m/c"}` + "\n",
	} {
		var out bytes.Buffer
		if code := run(strings.NewReader(in), &out, 0); code != 1 {
			t.Errorf("%s: exit status %d, want 1\n%s", name, code, &out)
		}
	}
}

func TestHeartbeatNamesRunningPackages(t *testing.T) {
	var out bytes.Buffer
	now := time.Unix(0, 0)
	p := newProgress(&out, func() time.Time { return now })
	p.read(stream(`{"Action":"start","Package":"m/slow"}`))
	now = now.Add(90 * time.Second)
	p.still()
	if want := "still running m/slow (1m30s)"; !strings.Contains(out.String(), want) {
		t.Errorf("heartbeat %q lacks %q", out.String(), want)
	}
}

// TestRealGoTest runs go test -json on a module with a passing, a failing
// and an unbuildable package and checks what testprogress makes of the
// real stream.
func TestRealGoTest(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"go.mod":            "module example.com/m\n\ngo 1.22\n",
		"good/good_test.go": "package good\n\nimport \"testing\"\n\nfunc TestGood(t *testing.T) { t.Log(\"quiet\") }\n",
		"bad/bad_test.go":   "package bad\n\nimport \"testing\"\n\nfunc TestBad(t *testing.T) { t.Fatal(\"the bad news\") }\n",
		"ugly/ugly.go":      "package ugly\n\nfunc F() int { return \"not an int\" }\n",
		"ugly/ugly_test.go": "package ugly\n\nimport \"testing\"\n\nfunc TestUgly(t *testing.T) { F() }\n",
	}
	for name, content := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("go", "test", "-json", "-count=1", "./...")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=", "GOTOOLCHAIN=local")
	js, _ := cmd.Output() // exits 1: a package fails
	var out bytes.Buffer
	if code := run(bytes.NewReader(js), &out, 0); code != 1 {
		t.Errorf("exit status %d, want 1", code)
	}
	got := out.String()
	for _, want := range []string{"ok  \texample.com/m/good\t", "the bad news", "FAIL\texample.com/m/bad\t", "not an int", "FAIL\texample.com/m/ugly [build failed]"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "quiet") {
		t.Errorf("a passing test's output was printed:\n%s", got)
	}
}

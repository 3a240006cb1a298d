package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"
)

// event is one record of `go test -json` (cmd/test2json's TestEvent, with
// the build events go test adds).
type event struct {
	Action      string
	Package     string
	Test        string
	Elapsed     float64
	Output      string
	ImportPath  string // build-output, build-fail
	FailedBuild string // the package whose build failed this package
}

// line is one line of a test's output, kept until the test passes.
type line struct {
	test, text string
}

// pkgState is what is kept of a package while it runs.
type pkgState struct {
	started time.Time
	lines   []line   // output of tests that have not passed (yet)
	own     []string // the package's own output (not a test's)
}

// progress is the state of one run: what runs, what failed, and the
// output needed to explain a failure. Its methods are safe for the
// heartbeat goroutine and the reader together.
type progress struct {
	mu      sync.Mutex
	out     io.Writer
	now     func() time.Time
	start   time.Time
	pkgs    map[string]*pkgState
	builds  map[string][]string // build output by import path
	ok      int
	noTests int
	failed  []string
	broken  bool // a line outside the JSON stream reported an error
}

func newProgress(out io.Writer, now func() time.Time) *progress {
	return &progress{out: out, now: now, start: now(), pkgs: map[string]*pkgState{}, builds: map[string][]string{}}
}

// read consumes the stream until its end.
func (p *progress) read(in io.Reader) {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20) // a test may print long lines
	for sc.Scan() {
		text := sc.Text()
		var e event
		if !strings.HasPrefix(text, "{") || json.Unmarshal([]byte(text), &e) != nil {
			p.foreign(text)
			continue
		}
		p.handle(e)
	}
	if err := sc.Err(); err != nil {
		p.foreign("testprogress: reading the go test -json stream: " + err.Error())
		p.mu.Lock()
		p.broken = true
		p.mu.Unlock()
	}
}

// foreign prints a line that is not a JSON event (the go command's own
// messages) and remembers whether it reports a failure.
func (p *progress) foreign(text string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintln(p.out, text)
	for _, bad := range []string{"FAIL", "go: ", "# ", "panic:", "testprogress:"} {
		if strings.HasPrefix(text, bad) {
			p.broken = true
		}
	}
}

func (p *progress) handle(e event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch e.Action {
	case "build-output":
		p.builds[e.ImportPath] = append(p.builds[e.ImportPath], e.Output)
		return
	case "build-fail":
		return // the packages it breaks report a fail with FailedBuild
	}
	st := p.pkgs[e.Package]
	if st == nil {
		st = &pkgState{started: p.now()}
		p.pkgs[e.Package] = st
	}
	switch {
	case e.Action == "output" && e.Test != "":
		st.lines = append(st.lines, line{e.Test, e.Output})
	case e.Action == "output":
		st.own = append(st.own, e.Output)
	case (e.Action == "pass" || e.Action == "skip") && e.Test != "":
		st.lines = slices.DeleteFunc(st.lines, func(l line) bool {
			return l.test == e.Test || strings.HasPrefix(l.test, e.Test+"/")
		})
	case e.Action == "pass" || e.Action == "skip" || e.Action == "fail":
		if e.Test == "" {
			p.done(e, st)
		}
	}
}

// done reports a finished package: go test's closing line, and for a
// failure everything that explains it first.
func (p *progress) done(e event, st *pkgState) {
	delete(p.pkgs, e.Package)
	closing := closingLine(e, st.own)
	if e.Action != "fail" {
		if strings.HasPrefix(closing, "?") {
			p.noTests++
		} else {
			p.ok++
		}
		fmt.Fprint(p.out, closing)
		return
	}
	p.failed = append(p.failed, e.Package)
	if e.FailedBuild != "" {
		for _, l := range p.builds[e.FailedBuild] {
			fmt.Fprint(p.out, l)
		}
	}
	for _, l := range st.lines {
		fmt.Fprint(p.out, l.text)
	}
	for _, l := range st.own {
		if l != closing {
			fmt.Fprint(p.out, l)
		}
	}
	fmt.Fprint(p.out, closing)
}

// closingLine is go test's line for a finished package: the one go test
// printed when there is one, else one in its format.
func closingLine(e event, own []string) string {
	for i := len(own) - 1; i >= 0; i-- {
		l := own[i]
		if strings.HasPrefix(l, "ok  \t") || strings.HasPrefix(l, "FAIL\t") || strings.HasPrefix(l, "?   \t") {
			return l
		}
	}
	switch {
	case e.Action == "fail" && e.FailedBuild != "":
		return fmt.Sprintf("FAIL\t%s [build failed]\n", e.Package)
	case e.Action == "fail":
		return fmt.Sprintf("FAIL\t%s\t%.3fs\n", e.Package, e.Elapsed)
	case e.Action == "skip":
		return fmt.Sprintf("?   \t%s\t[no test files]\n", e.Package)
	}
	return fmt.Sprintf("ok  \t%s\t%.3fs\n", e.Package, e.Elapsed)
}

// heartbeat says every interval which packages are still running; the
// returned function stops it.
func (p *progress) heartbeat(interval time.Duration) (stop func()) {
	t := time.NewTicker(interval)
	quit := make(chan struct{})
	go func() {
		for {
			select {
			case <-t.C:
				p.still()
			case <-quit:
				return
			}
		}
	}()
	return func() { t.Stop(); close(quit) }
}

// still prints the packages running now and for how long.
func (p *progress) still() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.pkgs) == 0 {
		return
	}
	now := p.now()
	names := make([]string, 0, len(p.pkgs))
	for name := range p.pkgs {
		names = append(names, name)
	}
	slices.Sort(names)
	parts := make([]string, len(names))
	for i, name := range names {
		parts[i] = fmt.Sprintf("%s (%s)", name, now.Sub(p.pkgs[name].started).Round(time.Second))
	}
	fmt.Fprintf(p.out, "testprogress: %s: still running %s\n", now.Sub(p.start).Round(time.Second), strings.Join(parts, ", "))
}

// finish reports packages the stream left unfinished, prints the summary
// and returns the exit status.
func (p *progress) finish() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	names := make([]string, 0, len(p.pkgs))
	for name := range p.pkgs {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		for _, l := range p.pkgs[name].lines {
			fmt.Fprint(p.out, l.text)
		}
		fmt.Fprintf(p.out, "FAIL\t%s [no result: the go test -json stream ended first]\n", name)
		p.failed = append(p.failed, name)
	}
	total := p.ok + p.noTests + len(p.failed)
	took := p.now().Sub(p.start).Round(time.Second)
	switch {
	case len(p.failed) > 0:
		fmt.Fprintf(p.out, "testprogress: %d of %d packages FAILED in %s: %s\n", len(p.failed), total, took, strings.Join(p.failed, ", "))
		fmt.Fprintln(p.out, "FAIL")
		return 1
	case p.broken:
		fmt.Fprintf(p.out, "testprogress: go test reported an error outside its packages (above); %d packages ok in %s\n", p.ok, took)
		fmt.Fprintln(p.out, "FAIL")
		return 1
	case total == 0:
		fmt.Fprintln(p.out, "testprogress: no package results on stdin: run it as go test -json ./... | go run ./internal/testprogress")
		fmt.Fprintln(p.out, "FAIL")
		return 1
	}
	fmt.Fprintf(p.out, "testprogress: all %d packages ok (%d without tests) in %s\n", total, p.noTests, took)
	return 0
}

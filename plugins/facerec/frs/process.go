package frs

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
)

// maxLine bounds one protocol line (a 150×150 chip in base64 is ~90 kB; a
// reply with many faces a few tens of kB).
const maxLine = 64 << 20

// errDied is wrapped by errors about a sidecar process that exited.
var errDied = errors.New("sidecar exited")

// errTimeout is wrapped by errors about a request that timed out.
var errTimeout = errors.New("sidecar request timed out")

// process is one running sidecar. Requests are strictly sequential: the
// pool hands a process to one caller at a time.
type process struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan []byte   // stdout lines; closed at EOF
	dead   chan struct{} // closed by kill; unblocks the stdout reader
	done   chan struct{} // closed after the process has been reaped
	killed sync.Once
	tail   *tailBuffer
	log    zerolog.Logger
	nextID atomic.Uint64
	info   Info
}

// startProcess starts argv in dir and waits for its ready line.
func startProcess(argv []string, dir string, env []string, startTimeout time.Duration, log zerolog.Logger) (*process, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	setProcAttr(cmd)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("start sidecar: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("start sidecar: %w", err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, fmt.Errorf("start sidecar: %w", err)
	}
	if err := startCmd(cmd); err != nil {
		return nil, fmt.Errorf("start sidecar %q: %w", strings.Join(argv, " "), err)
	}
	p := &process{
		cmd:   cmd,
		stdin: stdin,
		lines: make(chan []byte, 4),
		dead:  make(chan struct{}),
		done:  make(chan struct{}),
		tail:  newTailBuffer(20),
		log:   log.With().Int("sidecar_pid", cmd.Process.Pid).Logger(),
	}
	var readers sync.WaitGroup
	readers.Add(2)
	go func() { defer readers.Done(); p.readStdout(stdout) }()
	go func() { defer readers.Done(); p.readStderr(stderr) }()
	go func() {
		// exec: Wait only after the pipes have been read to EOF.
		readers.Wait()
		err := cmd.Wait()
		p.log.Debug().Err(err).Msg("sidecar exited")
		close(p.done)
	}()
	if err := p.awaitReady(startTimeout); err != nil {
		p.kill()
		return nil, err
	}
	return p, nil
}

func (p *process) readStdout(r io.Reader) {
	br := bufio.NewReaderSize(r, 1<<16)
	defer close(p.lines)
	for {
		line, err := readLine(br)
		if len(line) > 0 {
			select {
			case p.lines <- line:
			case <-p.dead:
			}
		}
		if err != nil {
			return
		}
	}
}

func (p *process) readStderr(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<16), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		p.tail.add(line)
		p.log.Debug().Str("stderr", line).Msg("sidecar")
	}
	// Drain whatever is left so the child never blocks on a full pipe.
	_, _ = io.Copy(io.Discard, r)
}

// readLine reads one '\n'-terminated line (without the newline), refusing
// lines longer than maxLine.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > maxLine {
			return nil, fmt.Errorf("sidecar line longer than %d bytes", maxLine)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if n := len(line); n > 0 && line[n-1] == '\n' {
			line = line[:n-1]
		}
		return line, err
	}
}

func (p *process) awaitReady(timeout time.Duration) error {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		select {
		case line, ok := <-p.lines:
			if !ok {
				return fmt.Errorf("%w before its ready line: %s", errDied, p.exitReport())
			}
			var r readyLine
			if err := json.Unmarshal(line, &r); err != nil {
				// Not JSON: a stray print from the program. Log and keep waiting.
				p.log.Warn().Str("line", truncate(string(line), 200)).Msg("sidecar printed a non-protocol line on stdout")
				continue
			}
			if !r.Ready {
				return fmt.Errorf("sidecar failed to start: %s (stderr: %s)", r.Error, p.tail.String())
			}
			if r.Protocol != protocolVersion {
				return fmt.Errorf("sidecar speaks protocol %d, this client speaks %d", r.Protocol, protocolVersion)
			}
			p.info = r.Info
			return nil
		case <-timer.C:
			return fmt.Errorf("sidecar not ready after %v (stderr: %s)", timeout, p.tail.String())
		}
	}
}

// exitReport describes why the process ended, waiting briefly for it to be
// reaped so that its last stderr lines are in the tail.
func (p *process) exitReport() string {
	select {
	case <-p.done:
	case <-time.After(2 * time.Second):
	}
	state := "still running"
	if ps := p.cmd.ProcessState; ps != nil {
		state = ps.String()
	}
	return fmt.Sprintf("%s; last stderr: %s", state, p.tail.String())
}

// alive reports whether the process is still running and not being killed.
func (p *process) alive() bool {
	select {
	case <-p.done:
		return false
	case <-p.dead:
		return false
	default:
		return true
	}
}

// kill ends the process (and its process group) at once. Safe to call twice.
func (p *process) kill() {
	p.killed.Do(func() {
		close(p.dead)
		killTree(p.cmd)
	})
}

// stop closes stdin (the sidecar exits at end of input) and kills the
// process if it has not exited within grace.
func (p *process) stop(grace time.Duration) {
	_ = p.stdin.Close()
	select {
	case <-p.done:
	case <-time.After(grace):
	}
	p.kill()
	<-p.done
}

// roundTrip sends req and returns its reply line. If no reply arrives within
// timeout the process is killed (a stuck computation cannot be cancelled
// otherwise) and the error wraps errTimeout; if the process dies the error
// wraps errDied.
func (p *process) roundTrip(req *request, timeout time.Duration) ([]byte, error) {
	return p.roundTripNotify(req, timeout, nil)
}

// roundTripNotify is roundTrip that calls sent, if not nil, once the
// request line has been written to the sidecar: from then on the request
// is in flight.
func (p *process) roundTripNotify(req *request, timeout time.Duration, sent func()) ([]byte, error) {
	req.V = protocolVersion
	req.ID = p.nextID.Add(1)
	data, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("encode request: %w", err)
	}
	data = append(data, '\n')
	var timedOut atomic.Bool
	t := time.AfterFunc(timeout, func() { timedOut.Store(true); p.kill() })
	defer t.Stop()
	failed := func() error {
		if timedOut.Load() {
			return fmt.Errorf("%w: no reply to %q within %v (sidecar killed; it is restarted on the next request)", errTimeout, req.Op, timeout)
		}
		return fmt.Errorf("%w during %q: %s", errDied, req.Op, p.exitReport())
	}
	if _, err := p.stdin.Write(data); err != nil {
		return nil, failed()
	}
	if sent != nil {
		sent()
	}
	for {
		line, ok := <-p.lines
		if !ok {
			return nil, failed()
		}
		id, err := replyID(line)
		if err != nil {
			p.log.Warn().Str("line", truncate(string(line), 200)).Msg("sidecar printed a non-protocol line on stdout")
			continue
		}
		if id != nil && *id != req.ID {
			p.log.Warn().Uint64("got", *id).Uint64("want", req.ID).Msg("sidecar reply with unexpected id skipped")
			continue
		}
		return line, nil
	}
}

// tailBuffer keeps the last n lines written to it.
type tailBuffer struct {
	mu    sync.Mutex
	n     int
	lines []string
}

func newTailBuffer(n int) *tailBuffer { return &tailBuffer{n: n} }

func (t *tailBuffer) add(s string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lines = append(t.lines, truncate(s, 500))
	if len(t.lines) > t.n {
		t.lines = t.lines[len(t.lines)-t.n:]
	}
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.lines) == 0 {
		return "(none)"
	}
	return strings.Join(t.lines, " | ")
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

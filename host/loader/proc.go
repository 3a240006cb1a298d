package loader

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc/status"

	"github.com/tesbo/tesbo/internal/pluginwire"
	"github.com/tesbo/tesbo/internal/pluginwire/hostside"
	"github.com/tesbo/tesbo/sdk"
	pb "github.com/tesbo/tesbo/sdk/proto"
)

// proc runs one unit's plugin process: it starts it on demand, restarts it
// after it died or was killed, and turns transport failures into *Error.
type proc struct {
	u *unit

	mu      sync.Mutex
	cur     *session
	gen     int
	closed  bool
	configs map[string]map[string]string // Configure calls to replay after a restart, by remote name

	gate gate // calls run together, or alone after a crash that several calls saw

	logs procLogs // what its processes write is re-logged through these
}

// session is one running process of a unit.
type session struct {
	gen    int
	client *plugin.Client
	cmd    *exec.Cmd
	grp    *procGroup // the process group it runs in
	conn   *pluginwire.Conn
	desc   *pb.DescribeResponse
	stderr *tail
	socket string // the Unix socket the process serves on ("" before the handshake)
	dead   atomic.Bool

	stopped  atomic.Int32 // why the loader killed the process: a stop... value
	inflight atomic.Int32 // calls running in this process
	exitOnce sync.Once
	crowded  atomic.Bool // the process exited on its own while several calls were running

	postOnce sync.Once
	postID   uint32
}

// Why the loader killed a session's process, which decides what the calls
// that were running in it report.
const (
	stopNone    int32 = iota
	stopTimeout       // another call timed out: the running calls are its neighbours (ErrNeighbourFault)
	stopClose         // the registry closed (ErrExited)
	stopDiscard       // the process exited on its own or never became usable; what is left of it is killed
)

// markStopped records why the process is being killed (the first reason wins)
// and marks the session dead.
func (s *session) markStopped(reason int32) {
	s.stopped.CompareAndSwap(stopNone, reason)
	s.dead.Store(true)
}

func newProc(u *unit) *proc { return &proc{u: u, logs: newProcLogs(u.r.opts.logger(), u.name)} }

// get returns the running session, starting a new process if there is
// none or the last one died.
func (p *proc) get(ctx context.Context) (*session, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, &Error{Plugin: p.u.name, Op: "start", Cause: ErrClosed}
	}
	if s := p.cur; s != nil {
		if !s.dead.Load() && !s.client.Exited() {
			return s, nil
		}
		p.cur = nil
		go p.kill(s, stopDiscard) // whatever of its process group is left
		p.u.r.log.Info().Str("plugin", p.u.name).Msg("restarting plugin process")
	}
	// Close cancels builds and starts in progress.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(p.u.r.ctx, cancel)
	defer stop()
	s, err := p.start(ctx)
	if err != nil {
		return nil, err
	}
	if err := p.replay(ctx, s); err != nil {
		p.kill(s, stopDiscard)
		return nil, err
	}
	if err := p.sameInfos(ctx, s); err != nil {
		p.kill(s, stopDiscard)
		return nil, err
	}
	p.cur = s
	return s, nil
}

// sameInfos checks that a (re)started process describes each of its
// objectives as the Objective handles hold them: a binary rebuilt or a
// script edited while a study runs would otherwise be sent points of the
// old space, or have its values recorded as the old objective's.
func (p *proc) sameInfos(ctx context.Context, s *session) error {
	for rn, o := range p.u.objective {
		if !o.used.Load() {
			continue // never handed out: nothing depends on it
		}
		cctx, cancel := p.callContext(ctx, p.u.r.opts.setupTimeout())
		resp, err := pb.NewObjectiveClient(s.rpc()).Info(cctx, &pb.InfoRequest{Objective: rn})
		cancel()
		if err != nil {
			return &Error{Plugin: o.name, Op: "info (after restart)", Cause: ErrRemote, Err: errors.New(status.Convert(err).Message())}
		}
		o.mu.RLock()
		want := o.info
		o.mu.RUnlock()
		if got := hostside.InfoFromProto(resp); !reflect.DeepEqual(got, want) {
			return &Error{Plugin: o.name, Op: "restart", Cause: ErrChanged,
				Err: fmt.Errorf("the restarted process describes the objective differently (%s) from when it was loaded: the run stops; restore the plugin and resume, which checks it against the study", infoDiff(want, got))}
		}
	}
	return nil
}

// infoDiff names what differs between two Infos.
func infoDiff(a, b sdk.Info) string {
	var d []string
	switch {
	case len(a.Params) != len(b.Params):
		d = append(d, fmt.Sprintf("%d parameters, now %d", len(a.Params), len(b.Params)))
	case !reflect.DeepEqual(a.Params, b.Params):
		d = append(d, "its parameters")
	}
	if !reflect.DeepEqual(a.Outputs, b.Outputs) {
		d = append(d, "its outputs")
	}
	if a.Minimize != b.Minimize {
		d = append(d, "its direction")
	}
	if len(d) == 0 {
		d = append(d, "its name, optimum or steps")
	}
	return strings.Join(d, ", ")
}

// replay re-sends the Configure calls the previous process received.
func (p *proc) replay(ctx context.Context, s *session) error {
	for rn, params := range p.configs {
		cctx, cancel := p.callContext(ctx, p.u.r.opts.setupTimeout())
		_, err := pb.NewObjectiveClient(s.rpc()).Configure(cctx, &pb.ConfigureRequest{Objective: rn, Params: params})
		cancel()
		if err != nil {
			return &Error{Plugin: p.u.name, Op: "configure (after restart)", Cause: ErrRemote, Err: errors.New(status.Convert(err).Message())}
		}
	}
	return nil
}

// start launches the process and completes the handshake and Describe.
func (p *proc) start(ctx context.Context) (*session, error) {
	u, r := p.u, p.u.r
	cmd, secure, err := u.startCommand(ctx)
	if err != nil {
		return nil, err
	}
	grp, err := newProcGroup(cmd)
	if err != nil {
		r.log.Warn().Str("plugin", u.name).Err(err).Msg("the plugin's children may outlive a killed host")
	}

	p.gen++
	name := u.name
	stderr := newTail(40)
	client := r.newClient(name, cmd, secure, stderr, p.logs)
	s := &session{gen: p.gen, client: client, cmd: cmd, grp: grp, stderr: stderr}
	fail := func(cause error, err error) (*session, error) {
		// Kill returns once the process is reaped and its output drained,
		// so the error carries the whole stderr tail; killing the group
		// first stops children that would hold the output open.
		grp.kill()
		client.Kill()
		grp.release()
		s.removeSocket()
		return nil, &Error{Plugin: name, Op: "start", Cause: cause, Err: err, Stderr: s.stderr.String(), Fatal: s.stderr.Fatal()}
	}
	watched := watchOrphans()
	rpc, err := client.Client()
	watched()
	if err != nil {
		// go-plugin kills the process when the handshake fails but not what
		// it started: a wrapper's child still holding stdout (`echo junk;
		// sleep 100`) would keep it from being reaped, and Kill waiting,
		// until the child ends. Kill the group, then wait until the process
		// is reaped so classifyStart sees the exit status (a process that
		// already exited keeps its own).
		grp.kill()
		p.waitExit(s, exitWait)
		cause, detail := classifyStart(err, cmd)
		if errors.Is(detail, errNoHandshake) {
			hint := ""
			if u.source == SourceScript {
				hint = "; a script's package-level code and init() run before it serves"
			}
			detail = fmt.Errorf("%w: it did not serve within %s%s", detail, r.opts.startTimeout(), hint)
		}
		return fail(cause, detail)
	}
	if rc := client.ReattachConfig(); rc != nil && rc.Addr != nil && rc.Addr.Network() == "unix" {
		s.socket = rc.Addr.String()
	}
	if lim := r.opts.MemoryLimit; lim > 0 {
		if err := limitMemory(grp, lim); err != nil {
			return fail(ErrStart, fmt.Errorf("apply the memory limit (--plugin-memory): %w", err))
		}
	}
	raw, err := rpc.Dispense(pluginwire.PluginName)
	if err != nil {
		return fail(ErrStart, err)
	}
	conn, ok := raw.(*pluginwire.Conn)
	if !ok {
		return fail(ErrStart, fmt.Errorf("dispensed %T", raw))
	}
	s.conn = conn
	dctx, cancel := context.WithTimeout(ctx, r.opts.startTimeout())
	desc, err := pb.NewPluginClient(s.rpc()).Describe(dctx, &pb.DescribeRequest{})
	cancel()
	if err != nil {
		return fail(ErrStart, fmt.Errorf("describe: %s (is it a tesbo plugin built with sdk.Serve...?)", status.Convert(err).Message()))
	}
	s.desc = desc
	r.log.Debug().Str("plugin", name).Int("pid", cmd.Process.Pid).Int("generation", s.gen).Msg("plugin started")
	return s, nil
}

// exitWait bounds waitExit. A process that crashed, or that go-plugin
// killed after a failed handshake, is normally reaped within milliseconds,
// but on a loaded machine the reaping goroutine can lag by far more; a
// short bound would then misreport a crash as a transient error and lose
// its exit status. waitExit returns as soon as the process is reaped, so
// the bound only costs time when the process really is still running.
const exitWait = 5 * time.Second

// waitExit waits up to d for the session's process to exit and be reaped
// (after a call failed, to tell a crash from a transient error and to
// collect the exit status and stderr). It reports false at once for a
// process that never started.
func (p *proc) waitExit(s *session, d time.Duration) bool {
	if s.cmd.Process == nil {
		return s.client.Exited()
	}
	deadline := time.Now().Add(d)
	for i := 0; ; i++ {
		if s.client.Exited() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		if i%20 == 0 && leaderExited(s.cmd) {
			// Exited, but children it left hold its output open, so
			// go-plugin cannot finish with it: end them.
			s.grp.kill()
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// orphanPoll is how often a starting plugin is checked for having exited
// while children it started hold its output.
const orphanPoll = 100 * time.Millisecond

// watchOrphans kills, until the returned function is called, the groups
// of plugins that exited leaving children that hold their output
// (killOrphanedGroups): while a plugin starts its pid is not known yet,
// and go-plugin would wait for those children (`sleep 20 &; exit 3` took
// 20 s to be reported) up to the start timeout.
func watchOrphans() (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(orphanPoll)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				killOrphanedGroups()
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}

// kill stops a session's process and its process group at once (SIGKILL)
// and forgets it; reason says why (stopTimeout, ...).
func (p *proc) kill(s *session, reason int32) {
	s.markStopped(reason)
	s.grp.kill()
	s.client.Kill()
	s.grp.release()
	s.removeSocket()
}

// removeSocket removes the Unix socket file of a session whose process is
// gone. The plugin's go-plugin server creates it in $TMPDIR and removes
// it only when it exits gracefully: a killed or crashed plugin left one
// file per restart, without bound over a long study. Only a socket is
// removed, in case the name was taken again since.
func (s *session) removeSocket() {
	if s.socket == "" {
		return
	}
	if fi, err := os.Lstat(s.socket); err == nil && fi.Mode()&os.ModeSocket != 0 {
		os.Remove(s.socket)
	}
}

// stopGrace is how long close lets a plugin shut down when asked (go-plugin
// waits 2 s for a graceful exit before it kills the process) before it
// kills the plugin's process group.
const stopGrace = 3 * time.Second

// stop asks a session's process to exit, kills its process group if it has
// not within stopGrace, and in any case kills what the group still holds
// (children the plugin started), so that nothing outlives it.
func (p *proc) stop(s *session) {
	s.markStopped(stopClose)
	done := make(chan struct{})
	go func() {
		s.client.Kill()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(stopGrace):
	}
	s.grp.kill()
	<-done
	s.grp.release()
	s.removeSocket()
}

// callContext derives the per-call context.
func (p *proc) callContext(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	if timeout > 0 {
		return context.WithTimeout(ctx, timeout)
	}
	return context.WithCancel(ctx)
}

// call runs fn against a live session with the given timeout and turns a
// failure into an *Error naming the plugin and the cause. A call that times
// out kills the process (it may be stuck forever), and the calls running
// beside it fail with ErrNeighbourFault; a process that died is restarted
// by the next call.
//
// A process that exits on its own while several calls run does not say
// which of them crashed it, so each of them is run once more, alone: the
// culprit crashes again and reports ErrExited, its neighbours complete.
func (p *proc) call(ctx context.Context, op string, timeout time.Duration, fn func(context.Context, *session) error) error {
	err, crowded := p.try(ctx, op, timeout, fn, false)
	if !crowded {
		return err
	}
	p.u.r.log.Info().Str("plugin", p.u.name).Str("op", op).Err(err).
		Msg("plugin process exited with several calls running; re-running this one alone to tell which call crashed it")
	err, _ = p.try(ctx, op, timeout, fn, true)
	return err
}

// try runs fn once, together with other calls or alone. crowded reports
// that the process exited during the call while other calls were running.
func (p *proc) try(ctx context.Context, op string, timeout time.Duration, fn func(context.Context, *session) error, alone bool) (err error, crowded bool) {
	if err := p.gate.enter(ctx, alone); err != nil {
		return &Error{Plugin: p.u.name, Op: op, Cause: err, Err: errors.New("gave up waiting for the plugin process")}, false
	}
	defer p.gate.leave(alone)
	s, err := p.get(ctx)
	if err != nil {
		return err, false
	}
	s.inflight.Add(1)
	defer s.inflight.Add(-1)
	cctx, cancel := p.callContext(ctx, timeout)
	defer cancel()
	started := time.Now()
	err = fn(cctx, s)
	if err == nil {
		return nil, false
	}
	err = p.classify(ctx, cctx, s, op, timeout, started, err)
	return err, errors.Is(err, ErrExited) && s.crowded.Load()
}

// close stops the running process, if any, for good.
func (p *proc) close() {
	p.mu.Lock()
	p.closed = true
	s := p.cur
	p.cur = nil
	p.mu.Unlock()
	if s != nil {
		p.stop(s)
	}
}

// info fetches and validates one objective's Info.
func (p *proc) info(ctx context.Context, public, remote string) (sdk.Info, caps, error) {
	var resp *pb.ObjectiveInfo
	err := p.call(ctx, "info", p.u.r.opts.setupTimeout(), func(ctx context.Context, s *session) error {
		var err error
		resp, err = pb.NewObjectiveClient(s.rpc()).Info(ctx, &pb.InfoRequest{Objective: remote})
		return err
	})
	if err != nil {
		if le, ok := err.(*Error); ok {
			le.Plugin = public
		}
		return sdk.Info{}, caps{}, err
	}
	info := hostside.InfoFromProto(resp)
	if err := info.Validate(); err != nil {
		return sdk.Info{}, caps{}, &Error{Plugin: public, Op: "info", Cause: ErrBadSpace, Err: err}
	}
	return info, caps{configurable: resp.Configurable, detailed: resp.Detailed, noiseFree: resp.NoiseFree, reports: resp.Reports}, nil
}

// caps are the optional interfaces an objective implements.
type caps struct{ configurable, detailed, noiseFree, reports bool }

// evalTimeout is the timeout for Evaluate and Suggest calls of u:
// EvalTimeout when set (an objective script may legitimately run longer than
// ScriptTimeout, and the user said how long), else ScriptTimeout for scripts
// and no limit for processes.
func (u *unit) evalTimeout() time.Duration {
	t := u.r.opts.EvalTimeout
	if t <= 0 && u.source == SourceScript {
		t = u.r.opts.scriptTimeout()
	}
	return t
}

// command returns the command that runs u's plugin (building a Go source
// plugin first).
func (u *unit) command(ctx context.Context) (*exec.Cmd, error) {
	switch u.source {
	case SourceExecutable:
		return exec.Command(u.path), nil
	case SourceGoDir:
		bin, err := u.r.build(ctx, u)
		if err != nil {
			return nil, err
		}
		return exec.Command(bin), nil
	case SourceScript:
		if !runnerReady.Load() {
			return nil, &Error{Plugin: u.name, Op: "start", Cause: ErrStart,
				Err: errors.New("this program cannot run script plugins: call loader.RunScriptRunnerIfRequested() first thing in its main (or TestMain)")}
		}
		exe, err := os.Executable()
		if err != nil {
			return nil, &Error{Plugin: u.name, Op: "start", Cause: ErrStart, Err: fmt.Errorf("find the host executable to run the script runner: %w", err)}
		}
		cmd := exec.Command(exe)
		cmd.Env = []string{
			envRunnerScript + "=" + u.path,
			envRunnerKind + "=" + u.kind.String(),
			envRunnerUnrestricted + "=" + fmt.Sprint(u.r.opts.Unrestricted),
		}
		return cmd, nil
	}
	return nil, &Error{Plugin: u.name, Op: "start", Cause: ErrStart, Err: fmt.Errorf("unknown source %v", u.source)}
}

func kindFromProto(k pb.Kind) Kind {
	switch k {
	case pb.Kind_KIND_OBJECTIVE:
		return KindObjective
	case pb.Kind_KIND_SUGGESTER:
		return KindSuggester
	case pb.Kind_KIND_ACQUISITION:
		return KindAcquisition
	}
	return KindUnknown
}

package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/tesbo/tesbo/store"
)

// keepAlive is how often an idle event stream gets a comment line, so that
// proxies and browsers keep it open.
const keepAlive = 15 * time.Second

// subBuffer is how many events a slow client may lag behind before its
// stream is closed (the browser reconnects and reloads the study).
const subBuffer = 64

// event is one Server-Sent Event.
type event struct {
	name string
	data []byte
	v    any // what data encodes, until encodeEvents has
}

// activityKey is a comparable form of store.Activity: any committed change
// to a study's trials or iterations changes it.
type activityKey struct {
	counts        [8]int
	last          int64
	maxV, minV    float64
	hasCompletion bool
}

func keyOf(a store.Activity) activityKey {
	k := activityKey{counts: [8]int{a.Trials, a.Pending, a.Running, a.Complete, a.Failed, a.Attempts, a.Iterations, a.Records},
		last: a.LastChange.UnixNano()}
	if a.MaxValue != nil {
		k.maxV, k.minV, k.hasCompletion = *a.MaxValue, *a.MinValue, true
	}
	return k
}

// hub runs one poller per watched study and fans its events out to the
// study's streams.
type hub struct {
	srv     *Server
	mu      sync.Mutex
	watches map[string]*watch
	done    chan struct{}
	closed  bool
}

// watch is a watched study: its subscribers and what its poller last saw.
type watch struct {
	name string
	id   int64
	subs map[chan event]bool
	stop chan struct{}

	// Owned by the poller.
	key     activityKey
	trials  map[int]trialState
	iters   map[int]iterState
	lastErr string
}

// trialState is what the poller compares to notice a changed trial.
type trialState struct {
	status            store.Status
	attempts          int
	started, finished int64
}

type iterState struct{ model, record bool }

func newHub(s *Server) *hub {
	return &hub{srv: s, watches: map[string]*watch{}, done: make(chan struct{})}
}

// subscribe returns a stream of the study's events from now on, and the
// function that ends it.
func (h *hub) subscribe(ctx context.Context, name string) (<-chan event, func(), error) {
	if err := h.srv.checkDB(); err != nil {
		return nil, nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, nil, fmt.Errorf("the server is shutting down")
	}
	w := h.watches[name]
	if w == nil {
		row, err := h.srv.db.Study(ctx, name)
		if err != nil {
			return nil, nil, err
		}
		w = &watch{name: name, id: row.ID, subs: map[chan event]bool{}, stop: make(chan struct{})}
		if _, err := w.poll(ctx, h.srv); err != nil { // the baseline
			return nil, nil, err
		}
		h.watches[name] = w
		go h.run(w)
	}
	ch := make(chan event, subBuffer)
	w.subs[ch] = true
	return ch, func() { h.unsubscribe(w, ch) }, nil
}

func (h *hub) unsubscribe(w *watch, ch chan event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(w.subs, ch)
	if len(w.subs) == 0 && h.watches[w.name] == w {
		delete(h.watches, w.name)
		close(w.stop)
	}
}

// run polls w until its last subscriber leaves or the hub closes.
func (h *hub) run(w *watch) {
	tick := time.NewTicker(h.srv.set.Poll)
	defer tick.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-h.done:
			return
		case <-tick.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		evs, err := w.poll(ctx, h.srv)
		cancel()
		if err != nil {
			if msg := err.Error(); msg != w.lastErr {
				w.lastErr = msg
				h.srv.log.Warn().Err(err).Str("study", w.name).Msg("live update")
				b, _ := json.Marshal(map[string]string{"error": msg})
				evs = []event{{name: "dberror", data: b}}
			}
		} else if w.lastErr != "" {
			w.lastErr = ""
			evs = append([]event{{name: "dbok", data: []byte("{}")}}, evs...)
		}
		h.broadcast(w, evs)
	}
}

// broadcast sends evs to every subscriber of w, closing the stream of one
// that lags too far behind.
func (h *hub) broadcast(w *watch, evs []event) {
	if len(evs) == 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range w.subs {
		for _, ev := range evs {
			select {
			case ch <- ev:
				continue
			default:
			}
			delete(w.subs, ch)
			close(ch)
			break
		}
	}
}

// close ends every stream and stops the pollers.
func (h *hub) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return
	}
	h.closed = true
	close(h.done)
	for _, w := range h.watches {
		for ch := range w.subs {
			close(ch)
		}
		w.subs = nil
	}
	h.watches = map[string]*watch{}
}

// poll reads the study's activity and, when it changed, the trials and
// iterations that changed since the last poll, as events: "trials" (an
// array of trials), "iterations" (an array of iterations) and "summary".
func (w *watch) poll(ctx context.Context, s *Server) ([]event, error) {
	if err := s.checkDB(); err != nil {
		return nil, err
	}
	act, err := s.db.Activity(ctx, w.id)
	if err != nil {
		return nil, err
	}
	key := keyOf(act)
	if w.trials != nil && key == w.key {
		return nil, nil
	}
	trials, err := s.db.Trials(ctx, w.id)
	if err != nil {
		return nil, err
	}
	its, err := s.db.Iterations(ctx, w.id)
	if err != nil {
		return nil, err
	}
	sm, err := s.loadSummary(ctx, w.name)
	if err != nil {
		return nil, err
	}
	var payloads []event
	if ch := w.changedTrials(trials); len(ch) > 0 {
		payloads = append(payloads, event{name: "trials", v: ch})
	}
	ci, err := w.changedIterations(its)
	if err != nil {
		return nil, err
	}
	if len(ci) > 0 {
		payloads = append(payloads, event{name: "iterations", v: ci})
	}
	payloads = append(payloads, event{name: "summary", v: sm})
	evs, err := encodeEvents(payloads)
	if err != nil {
		return nil, fmt.Errorf("study %q: %w", w.name, err)
	}
	w.key = key
	return evs, nil
}

// encodeEvents encodes each event's v as its data. Stored values JSON
// cannot carry (±Inf in a hand-edited database) are an error of the
// study's, not a crash of the server.
func encodeEvents(evs []event) ([]event, error) {
	for i := range evs {
		b, err := json.Marshal(evs[i].v)
		if err != nil {
			return nil, fmt.Errorf("encode %s event: %w", evs[i].name, err)
		}
		evs[i].data, evs[i].v = b, nil
	}
	return evs, nil
}

// changedTrials returns the trials that are new or changed since the last
// call, and remembers them.
func (w *watch) changedTrials(trials []store.Trial) []trialJSON {
	first := w.trials == nil
	if first {
		w.trials = make(map[int]trialState, len(trials))
	}
	var out []trialJSON
	for _, t := range trials {
		st := trialState{t.Status, t.Attempts, t.StartedAt.UnixNano(), t.FinishedAt.UnixNano()}
		if old, ok := w.trials[t.ID]; ok && old == st {
			continue
		}
		w.trials[t.ID] = st
		if !first {
			out = append(out, trialOf(t))
		}
	}
	return out
}

// changedIterations is changedTrials for iterations.
func (w *watch) changedIterations(its []store.Iteration) ([]iterationJSON, error) {
	first := w.iters == nil
	if first {
		w.iters = make(map[int]iterState, len(its))
	}
	var out []iterationJSON
	for _, it := range its {
		st := iterState{it.Model != nil, it.Record != nil}
		if old, ok := w.iters[it.Iteration]; ok && old == st {
			continue
		}
		w.iters[it.Iteration] = st
		if first {
			continue
		}
		ij, err := iterationOf(it)
		if err != nil {
			return nil, err
		}
		out = append(out, ij)
	}
	return out, nil
}

func (s *Server) apiEvents(w http.ResponseWriter, r *http.Request) {
	name, err := studyName(r)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	fl, ok := w.(http.Flusher)
	if !ok {
		s.fail(w, r, http.StatusInternalServerError, fmt.Errorf("this connection cannot stream events"))
		return
	}
	ch, stop, err := s.hub.subscribe(r.Context(), name)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	defer stop()
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	hello, _ := json.Marshal(map[string]string{"study": name})
	fmt.Fprintf(w, "retry: 2000\n\nevent: hello\ndata: %s\n\n", hello)
	fl.Flush()
	ping := time.NewTicker(keepAlive)
	defer ping.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-ping.C:
			fmt.Fprint(w, ": ping\n\n")
		case ev, ok := <-ch:
			if !ok {
				return
			}
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", ev.name, ev.data)
		}
		fl.Flush()
	}
}

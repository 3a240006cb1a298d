package serve

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"
)

// sse reads Server-Sent Events from a response body.
type sse struct {
	events chan [2]string // name, data
}

func readEvents(t *testing.T, url string) *sse {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("events: %d %v", resp.StatusCode, resp.Header)
	}
	s := &sse{events: make(chan [2]string, 100)}
	go func() {
		defer resp.Body.Close()
		defer close(s.events)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<24)
		var name, data string
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				name = line[len("event: "):]
			case strings.HasPrefix(line, "data: "):
				data = line[len("data: "):]
			case line == "" && name != "":
				s.events <- [2]string{name, data}
				name, data = "", ""
			}
		}
	}()
	return s
}

// next returns the next event called name, skipping others, failing t
// after timeout.
func (s *sse) next(t *testing.T, name string, timeout time.Duration) string {
	t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case ev, ok := <-s.events:
			if !ok {
				t.Fatalf("stream ended waiting for %q", name)
			}
			if ev[0] == name {
				return ev[1]
			}
		case <-deadline:
			t.Fatalf("no %q event within %v", name, timeout)
		}
	}
}

// Trials and iterations committed by another writer reach the stream
// within a poll or two, each once, with the summary; several watchers of
// one study share one poller, which stops when the last leaves.
func TestEvents(t *testing.T) {
	db, _ := newDB(t)
	st := openStudy(t, db, "live", "random", 3)
	step(t, st) // the initial design
	srv := newServer(t, db, Settings{Poll: 50 * time.Millisecond})
	ts := httptest.NewServer(srv)
	defer ts.Close()

	a := readEvents(t, ts.URL+"/api/events?name=live")
	b := readEvents(t, ts.URL+"/api/events?name=live")
	for _, s := range []*sse{a, b} {
		if hello := s.next(t, "hello", 2*time.Second); hello != `{"study":"live"}` {
			t.Fatalf("hello %s", hello)
		}
	}
	srv.hub.mu.Lock()
	if n := len(srv.hub.watches); n != 1 || len(srv.hub.watches["live"].subs) != 2 {
		t.Fatalf("%d watches", n)
	}
	srv.hub.mu.Unlock()

	batch := step(t, st) // iteration 1: two new, finished trials
	for _, s := range []*sse{a, b} {
		var got []trialJSON
		json.Unmarshal([]byte(s.next(t, "trials", 2*time.Second)), &got)
		// The poll may see the trials pending, then finished: wait for
		// both finished.
		done := map[int]bool{}
		for {
			for _, tr := range got {
				if tr.Iteration != 1 {
					t.Fatalf("event holds trial %+v of another iteration", tr)
				}
				if tr.Status == "complete" {
					done[tr.ID] = true
				}
			}
			if len(done) == len(batch) {
				break
			}
			json.Unmarshal([]byte(s.next(t, "trials", 2*time.Second)), &got)
		}
		var its []iterationJSON
		json.Unmarshal([]byte(s.next(t, "iterations", 2*time.Second)), &its)
		if len(its) != 1 || its[0].Iter != 1 || !its[0].HasModel {
			t.Fatalf("iterations event %+v", its)
		}
		var sm summary
		json.Unmarshal([]byte(s.next(t, "summary", 2*time.Second)), &sm)
		if sm.Complete < 4 || sm.Name != "live" {
			t.Fatalf("summary %+v", sm)
		}
	}
	// Nothing changes: no event but pings.
	select {
	case ev := <-a.events:
		if ev[0] == "trials" {
			t.Fatalf("unchanged study sent %v", ev)
		}
	case <-time.After(300 * time.Millisecond):
	}

	// The database disappears: the stream says so.
	os.Remove(db.Path())
	if msg := a.next(t, "dberror", 2*time.Second); !strings.Contains(msg, "the study database is gone") {
		t.Fatalf("dberror %s", msg)
	}

	srv.Close()
	for range a.events { // the stream ends
	}
	srv.hub.mu.Lock()
	defer srv.hub.mu.Unlock()
	if len(srv.hub.watches) != 0 {
		t.Fatal("pollers left after Close")
	}
}

// A poller stops when its last watcher leaves.
func TestEventsUnsubscribe(t *testing.T) {
	db, _ := newDB(t)
	runStudy(t, db, "a", "random", 0)
	srv := newServer(t, db, Settings{Poll: 20 * time.Millisecond})
	ch, stop, err := srv.hub.subscribe(context.Background(), "a")
	if err != nil {
		t.Fatal(err)
	}
	_, stop2, _ := srv.hub.subscribe(context.Background(), "a")
	stop()
	srv.hub.mu.Lock()
	w := srv.hub.watches["a"]
	srv.hub.mu.Unlock()
	if w == nil {
		t.Fatal("the poller stopped with a watcher left")
	}
	stop2()
	select {
	case <-w.stop:
	default:
		t.Fatal("the poller did not stop with its last watcher")
	}
	_ = ch
	if _, _, err := srv.hub.subscribe(context.Background(), "zz"); err == nil {
		t.Fatal("subscribed to an unknown study")
	}
}

// A hand-edited ±Inf in one study's trials is an error of that study: the
// live update reports it (the server panicked, killing every view), and
// the study list keeps the other studies (it answered 500 for all).
func TestNonFiniteStoredValue(t *testing.T) {
	db, path := newDB(t)
	runStudy(t, db, "good", "random", 1)
	runStudy(t, db, "bad", "random", 1)
	sq, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sq.Exec(`UPDATE trials SET value=9e999 WHERE id=2 AND study_id=(SELECT id FROM studies WHERE name='bad')`); err != nil {
		t.Fatal(err)
	}
	sq.Close()
	srv := newServer(t, db, Settings{})
	row, err := db.Study(context.Background(), "bad")
	if err != nil {
		t.Fatal(err)
	}
	w := &watch{name: "bad", id: row.ID}
	if _, err := w.poll(context.Background(), srv); err == nil {
		t.Fatal("poll of the bad study: no error")
	}
	var list struct{ Studies []summary }
	decodeJSON(t, get(t, srv, "/api/studies"), 200, &list)
	if len(list.Studies) != 1 || list.Studies[0].Name != "good" {
		t.Fatalf("study list %+v, want the good study alone", list.Studies)
	}
}

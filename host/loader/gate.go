package loader

import (
	"context"
	"sync"
)

// gate lets the calls into one plugin process run together (shared) or
// one call run alone (exclusive). A process that crashes while several
// calls are running does not say which call crashed it; the loader then
// re-runs each of them alone, so the culprit crashes alone and its
// neighbours complete. A waiting exclusive call keeps new shared calls
// out, so a busy plugin cannot starve it.
type gate struct {
	mu      sync.Mutex
	shared  int           // calls running together
	alone   bool          // a call is running alone
	waiting int           // calls waiting to run alone
	changed chan struct{} // closed (and replaced) whenever the above change
}

// enter waits until the call may run (alone or with others) or ctx ends.
// Every successful enter must be paired with leave(alone).
func (g *gate) enter(ctx context.Context, alone bool) error {
	g.mu.Lock()
	if alone {
		g.waiting++
	}
	for {
		if alone && !g.alone && g.shared == 0 {
			g.waiting--
			g.alone = true
			g.mu.Unlock()
			return nil
		}
		if !alone && !g.alone && g.waiting == 0 {
			g.shared++
			g.mu.Unlock()
			return nil
		}
		if g.changed == nil {
			g.changed = make(chan struct{})
		}
		ch := g.changed
		g.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			if alone {
				g.mu.Lock()
				g.waiting--
				g.broadcastLocked()
				g.mu.Unlock()
			}
			return ctx.Err()
		}
		g.mu.Lock()
	}
}

// leave ends a call admitted by enter(ctx, alone).
func (g *gate) leave(alone bool) {
	g.mu.Lock()
	if alone {
		g.alone = false
	} else {
		g.shared--
	}
	g.broadcastLocked()
	g.mu.Unlock()
}

func (g *gate) broadcastLocked() {
	if g.changed != nil {
		close(g.changed)
		g.changed = nil
	}
}

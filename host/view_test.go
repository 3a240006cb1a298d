package host

import (
	"context"
	"testing"
	"time"
)

// Tell, Trials and InFlight do not wait for a proposal: Ask fits and
// proposes on a snapshot with no lock held. (Before, Ask held the study's
// lock through the fit, and this test timed out.)
func TestTellDuringFit(t *testing.T) {
	ctx := context.Background()
	s, err := NewStudy(ctx, unitInfo(2), Options{Acquisition: "random", Init: 2, Iters: 3, Batch: 1})
	if err != nil {
		t.Fatal(err)
	}
	design, err := s.Ask(ctx, 0)
	if err != nil || len(design) != 2 {
		t.Fatalf("design %v, %v", design, err)
	}
	if err := s.Tell(ctx, design[0].ID, 1, nil); err != nil {
		t.Fatal(err)
	}
	fitting, release := make(chan struct{}), make(chan struct{})
	s.testHooks().fit = func(_ context.Context, ds *dataset, warm *modelState, it int) (*fitResult, error) {
		close(fitting)
		<-release
		return s.fitModel(context.Background(), ds, warm, it)
	}
	asked := make(chan error, 1)
	go func() {
		_, err := s.Ask(ctx, 1)
		asked <- err
	}()
	<-fitting
	told := make(chan error, 1)
	go func() {
		told <- s.Tell(ctx, design[1].ID, 2, nil)
		_ = s.Trials()
		_ = s.InFlight()
	}()
	select {
	case err := <-told:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		close(release)
		t.Fatal("Tell waited for Ask's fit")
	}
	close(release)
	if err := <-asked; err != nil {
		t.Fatal(err)
	}
	if n := len(s.Trials()); n != 3 {
		t.Fatalf("%d trials after the proposal, want 3", n)
	}
}

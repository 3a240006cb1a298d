package host

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/acq"
)

// declaringProposer is an acquisition that declares every capability the
// host checks (a batch limit, pending points, sizing); plainProposer
// declares none. Registered under new names, they are accepted and refused
// by the one check in capabilities.go without any list naming them.
type declaringProposer struct{ randomProposer }

func (declaringProposer) BatchLimit() acq.Limit {
	return acq.Limit{Max: 7, Name: "MaxBatchTest", Why: "a test says so"}
}
func (declaringProposer) HandlesPending() bool { return true }
func (p declaringProposer) ProposeSized(ctx context.Context, s *acq.State, maxQ int, _ acq.GainRule) (*mat.Dense, error) {
	return p.Propose(ctx, s, maxQ)
}

type plainProposer struct{ randomProposer }

// pendingBlind declares PendingAware but reports false.
type pendingBlind struct{ randomProposer }

func (pendingBlind) HandlesPending() bool { return false }

func init() {
	acq.Register("test-declaring", func(acq.Options) (acq.Proposer, error) { return declaringProposer{}, nil })
	acq.Register("test-plain", func(acq.Options) (acq.Proposer, error) { return plainProposer{}, nil })
	acq.Register("test-pending-blind", func(acq.Options) (acq.Proposer, error) { return pendingBlind{}, nil })
}

func TestCapabilitiesDeclaredByNewAcquisition(t *testing.T) {
	ctx := context.Background()
	refused := func(o Options, want string) {
		t.Helper()
		s, err := NewStudy(ctx, unitInfo(2), o)
		if err == nil {
			s.Close()
		}
		switch {
		case want == "" && err != nil:
			t.Fatalf("%s batch %d auto %v: refused: %v", o.Acquisition, o.Batch, o.AutoBatch, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Fatalf("%s batch %d auto %v: got %v, want %q", o.Acquisition, o.Batch, o.AutoBatch, err, want)
		}
	}
	// The batch limit it declares, with its name and reason.
	refused(Options{Acquisition: "test-declaring", Batch: 8, Iters: 1}, "batch 8 exceeds 7, the limit for test-declaring (MaxBatchTest): a test says so; use a smaller batch")
	refused(Options{Acquisition: "test-declaring", Batch: 7, Iters: 1}, "")
	refused(Options{Acquisition: "test-plain", Batch: 8, Iters: 1}, "")
	// A custom Proposer's declaration counts too.
	refused(Options{Acquisition: "mine", Proposer: declaringProposer{}, Batch: 8, Iters: 1}, "(MaxBatchTest)")
	// Sizing.
	refused(Options{Acquisition: "test-declaring", AutoBatch: true, Batch: 5, Iters: 1}, "")
	refused(Options{Acquisition: "test-plain", AutoBatch: true, Batch: 5, Iters: 1}, `acquisition "test-plain" cannot size its batches by information gain`)
	if err := CheckAutoBatch("test-plain"); err == nil || !strings.Contains(err.Error(), "test-declaring") {
		t.Fatalf("CheckAutoBatch(test-plain) = %v, want a refusal listing test-declaring", err)
	}
	// Pending points (worker mode).
	if err := CheckAsync("test-declaring"); err != nil {
		t.Fatalf("CheckAsync(test-declaring): %v", err)
	}
	for _, name := range []string{"test-plain", "test-pending-blind", "no-such-acquisition"} {
		err := CheckAsync(name)
		if err == nil || !strings.Contains(err.Error(), `acquisition "`+name+`" cannot condition its proposals on running trials`) {
			t.Fatalf("CheckAsync(%s) = %v", name, err)
		}
		if !strings.Contains(err.Error(), "test-declaring") {
			t.Fatalf("CheckAsync(%s) = %v, want a list naming test-declaring", name, err)
		}
	}
	// The lists read off the registry.
	if !slices.Contains(SizedAcquisitions(), "test-declaring") || slices.Contains(SizedAcquisitions(), "test-plain") {
		t.Fatalf("SizedAcquisitions() = %v", SizedAcquisitions())
	}
	if AsyncAcquisitions := AsyncAcquisitions(); !slices.Contains(AsyncAcquisitions, "test-declaring") || slices.Contains(AsyncAcquisitions, "test-pending-blind") {
		t.Fatalf("AsyncAcquisitions() = %v", AsyncAcquisitions)
	}
	if n, ok := BatchLimits()["test-declaring"]; !ok || n != 7 {
		t.Fatalf("BatchLimits() = %v", BatchLimits())
	}
}

// The built-in acquisitions declare exactly what the host's name lists
// said before capabilities were declared: the same batch limits, the same
// acquisitions that size batches and that run in worker mode.
func TestBuiltinCapabilitiesAsBefore(t *testing.T) {
	builtin := func(names []string) []string {
		return slices.DeleteFunc(slices.Clone(names), func(n string) bool { return strings.HasPrefix(n, "test-") })
	}
	if got, want := builtin(SizedAcquisitions()), []string{"tes", "tes-ep", "tes-sp"}; !slices.Equal(got, want) {
		t.Errorf("SizedAcquisitions() = %v, want %v", got, want)
	}
	// The several-output acquisitions (cei, nehvi, parego) fantasize
	// pending points too.
	async := []string{"tes", "tes-ep", "tes-sp", "qei", "qei-cl", "bucb", "lp-ei", "random", "cei", "nehvi", "parego"}
	slices.Sort(async)
	if got := builtin(AsyncAcquisitions()); !slices.Equal(got, async) {
		t.Errorf("AsyncAcquisitions() = %v, want %v", got, async)
	}
	if got, want := builtin(MultiAcquisitions()), []string{"cei", "nehvi", "parego", "tes"}; !slices.Equal(got, want) {
		t.Errorf("MultiAcquisitions() = %v, want %v", got, want)
	}
	limits := BatchLimits()
	delete(limits, "test-declaring")
	want := map[string]int{"tes": MaxBatchTES, "tes-ep": MaxBatchTES, "tes-sp": MaxBatchTES, "qei": MaxBatchQEI, "nehvi": MaxBatchNEHVI}
	if !maps.Equal(limits, want) {
		t.Errorf("BatchLimits() = %v, want %v", limits, want)
	}
}

// A suggester is an acquisition of its own kind (Options.Suggester), never
// given with a Proposer, and declares no capability.
func TestSuggesterOptions(t *testing.T) {
	ctx := context.Background()
	if _, err := NewStudy(ctx, unitInfo(2), Options{Acquisition: "grid", Suggester: gridSuggester{t}, Proposer: randomProposer{}}); err == nil || !strings.Contains(err.Error(), "not both") {
		t.Fatalf("Proposer and Suggester: %v", err)
	}
	if _, err := NewStudy(ctx, unitInfo(2), Options{Acquisition: "grid", Suggester: gridSuggester{t}, AutoBatch: true}); err == nil || !strings.Contains(err.Error(), `the custom acquisition "grid" does not implement acq.Sizer`) {
		t.Fatalf("AutoBatch with a suggester: %v", err)
	}
	if (Options{Suggester: gridSuggester{t}}).Stored().Suggester != nil {
		t.Fatal("Stored keeps the Suggester")
	}
}

// The stored trusted maximizers are decoded by the study's acquisition
// (acq.MaximizerCarrier), and by nobody else.
func TestTrustedMaximizers(t *testing.T) {
	state := []byte(`{"xstar":[[0.1,0.2],[0.7,0.9]]}`)
	for _, name := range []string{"tes", "tes-ep", "tes-sp"} {
		xs, err := (&StoredPosterior{AcqState: state, acquisition: name}).TrustedMaximizers()
		if err != nil || len(xs) != 2 || xs[1][1] != 0.9 {
			t.Fatalf("%s: %v, %v", name, xs, err)
		}
	}
	for _, name := range []string{"ei", "a-plugin"} {
		if xs, err := (&StoredPosterior{AcqState: state, acquisition: name}).TrustedMaximizers(); xs != nil || err != nil {
			t.Fatalf("%s: %v, %v; want none", name, xs, err)
		}
	}
	if _, err := (&StoredPosterior{AcqState: []byte("not json"), acquisition: "tes"}).TrustedMaximizers(); err == nil {
		t.Fatal("a bad state decoded")
	}
}

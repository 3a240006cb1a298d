package host

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tesbo/tesbo/acq"
	"github.com/tesbo/tesbo/sdk"
)

// Sizes beyond the limits are refused at once, with the limit and its
// reason, before anything is allocated for them; sizes at the limits are
// accepted.
func TestLimits(t *testing.T) {
	ctx := context.Background()
	wide := sdk.Info{Name: "wide"}
	for i := range MaxDim + 1 {
		wide.Params = append(wide.Params, sdk.Param{Name: fmt.Sprint("x", i), Kind: sdk.Float, Low: 0, High: 1})
	}
	twoObjectives := unitInfo(2)
	twoObjectives.Outputs = []sdk.Output{{Name: "f1"}, {Name: "f2", Goal: sdk.Minimize}}
	const huge = 1_000_000_000
	cases := []struct {
		name string
		info sdk.Info
		o    Options
		want string // "" = accepted
	}{
		{"batch", unitInfo(2), Options{Acquisition: "random", Batch: huge}, "exceeds 1000, the limit (MaxBatch)"},
		{"batch of a custom proposer", unitInfo(2), Options{Proposer: randomProposer{}, Batch: MaxBatch + 1}, "MaxBatch"},
		{"batch at the limit", unitInfo(2), Options{Acquisition: "random", Batch: MaxBatch, Iters: 1}, ""},
		{"tes batch", unitInfo(2), Options{Acquisition: "tes-ep", Batch: MaxBatchTES + 1, Iters: 1}, "limit for tes-ep (MaxBatchTES)"},
		{"default tes batch", unitInfo(2), Options{Batch: 1000, Iters: 1}, "limit for tes (MaxBatchTES)"},
		{"tes batch at the limit", unitInfo(2), Options{Acquisition: "tes-sp", Batch: MaxBatchTES, Iters: 1}, ""},
		{"qei batch", unitInfo(2), Options{Acquisition: "qei", Batch: MaxBatchQEI + 1, Iters: 1}, "limit for qei (MaxBatchQEI)"},
		{"qei batch at the limit", unitInfo(2), Options{Acquisition: "qei", Batch: MaxBatchQEI, Iters: 1}, ""},
		{"qei-cl batch beyond qei's", unitInfo(2), Options{Acquisition: "qei-cl", Batch: MaxBatch, Iters: 1}, ""},
		{"nehvi batch", twoObjectives, Options{Acquisition: "nehvi", Batch: MaxBatchNEHVI + 1, Iters: 1}, "limit for nehvi (MaxBatchNEHVI)"},
		{"nehvi batch at the limit", twoObjectives, Options{Acquisition: "nehvi", Batch: MaxBatchNEHVI, Iters: 1}, ""},
		{"trusted", unitInfo(2), Options{Acquisition: "tes-ep", AcqOptions: acq.Options{Trusted: huge}}, "MaxTrusted"},
		{"init", unitInfo(2), Options{Acquisition: "random", Init: huge}, "initial design of 1000000000 points exceeds the limit of 5000 (MaxInit)"},
		{"iters", unitInfo(2), Options{Acquisition: "random", Iters: huge}, "MaxTrials"},
		{"iters overflowing the budget", unitInfo(2), Options{Acquisition: "random", Iters: 1 << 62, Batch: 4}, "MaxTrials"},
		{"budget", unitInfo(2), Options{Acquisition: "random", Iters: 50, Batch: 101}, "exceeds the limit of 5000 trials (MaxTrials)"},
		{"budget at the limit", unitInfo(2), Options{Acquisition: "random", Init: 100, Iters: 49, Batch: 100}, ""},
		{"parallel", unitInfo(2), Options{Acquisition: "random", Parallel: huge}, "MaxParallel"},
		{"retries", unitInfo(2), Options{Acquisition: "random", Retries: huge}, "MaxRetries"},
		{"dimension", wide, Options{Acquisition: "random"}, "1001 parameters, more than the limit of 1000 (MaxDim)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			_, err := NewStudy(ctx, c.info, c.o)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("got %v, want %q", err, c.want)
			}
			if d := time.Since(start); d > time.Second {
				t.Fatalf("took %v", d)
			}
		})
	}
}

// Ask refuses a q beyond the acquisition's batch limit; a stored study
// reopened with a budget beyond MaxTrials is refused too.
func TestLimitsAskAndOpen(t *testing.T) {
	ctx := context.Background()
	db := tempDB(t)
	s, err := NewStudy(ctx, unitInfo(2), Options{Name: "s", DB: wrap(db), Acquisition: "random", Init: 1, Iters: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tr, err := s.Ask(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Tell(ctx, tr[0].ID, 1, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Ask(ctx, MaxBatch+1); err == nil || !strings.Contains(err.Error(), "MaxBatch") {
		t.Fatalf("Ask(%d): %v", MaxBatch+1, err)
	}
	if _, err := OpenStudy(ctx, wrap(db), "s", Options{Iters: MaxTrials + 1}); err == nil || !strings.Contains(err.Error(), "MaxTrials") {
		t.Fatalf("reopened with %d iterations: %v", MaxTrials+1, err)
	}
}

// Study names: at most MaxStudyName bytes of printable UTF-8; a default
// name built from a long objective name is cut to fit, at a rune.
func TestCheckStudyName(t *testing.T) {
	for _, ok := range []string{"a", "synthetic/branin-20261124-181516-3fa2c1", "étude 1", strings.Repeat("n", MaxStudyName)} {
		if err := CheckStudyName(ok); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
	for _, bad := range []string{"", strings.Repeat("n", MaxStudyName+1), "a\xffb", "a\nb", "a\tb", "a\x1b[2Jb", "a\u200bb"} {
		if err := CheckStudyName(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	name := DefaultStudyName(strings.Repeat("é", 150), time.Now())
	if err := CheckStudyName(name); err != nil {
		t.Fatalf("default name of a long objective: %v", err)
	}
}

// An objective may declare any initial design the host accepts as Init.
func TestMaxInitialDesignIsMaxInit(t *testing.T) {
	if sdk.MaxInitialDesign != MaxInit {
		t.Fatalf("sdk.MaxInitialDesign = %d, host.MaxInit = %d", sdk.MaxInitialDesign, MaxInit)
	}
}

// A categorical space whose sample paths' random phases would pass
// gp.MaxPathPhaseBytes is refused for an acquisition that draws them (the
// default), before the study starts, and accepted for one that does not.
func TestPathPhasesRefused(t *testing.T) {
	choices := make([]string, sdk.MaxChoices)
	for i := range choices {
		choices[i] = "c" + strconv.Itoa(i)
	}
	info := sdk.Info{Name: "wide", Params: []sdk.Param{
		{Name: "c", Kind: sdk.Categorical, Choices: choices}, {Name: "x", Kind: sdk.Float, Low: 0, High: 1}}}
	_, err := NewStudy(context.Background(), info, Options{Iters: 1})
	if err == nil || !strings.Contains(err.Error(), "65536 categorical choices need 2.62 GB for the acquisition's 5 sample paths of 1000 features") {
		t.Fatalf("tes: %v", err)
	}
	if _, err := NewStudy(context.Background(), info, Options{Iters: 1, Acquisition: "ei"}); err != nil {
		t.Fatalf("ei: %v", err)
	}
	for _, o := range []Options{{Iters: 1, Acquisition: "mes"}, {Iters: 1, Acquisition: "ts", Batch: 5}} {
		if _, err := NewStudy(context.Background(), info, o); err == nil || !strings.Contains(err.Error(), "gp.MaxPathPhaseBytes") {
			t.Fatalf("%s batch %d: %v", o.Acquisition, o.Batch, err)
		}
	}
	if _, err := NewStudy(context.Background(), info, Options{Iters: 1, Acquisition: "mes", AcqOptions: acq.Options{MESGumbel: true}}); err != nil {
		t.Fatalf("mes with the Gumbel approximation: %v", err)
	}
}

package bench

import (
	"github.com/tesbo/tesbo/host"
	"reflect"
	"strings"
	"testing"
)

func TestSeedDeterministicAndDistinct(t *testing.T) {
	// Pinned: changing the derivation would make every existing output
	// directory's studies incompatible with the suite (see compatible).
	if got, want := seed("synthetic/branin", "", 1, 0), seed("synthetic/branin", "", 1, 0); got != want {
		t.Fatalf("Seed not deterministic: %d vs %d", got, want)
	}
	const pinned = uint64(0x5c4caa0e92c0a538)
	if got := seed("synthetic/branin", "", 1, 0); got != pinned {
		t.Errorf("Seed(branin, -, 1, 0) = %#x, pinned %#x (did the derivation change?)", got, pinned)
	}
	seen := map[uint64]string{}
	add := func(desc string, s uint64) {
		t.Helper()
		if prev, dup := seen[s]; dup {
			t.Errorf("seed collision: %s and %s both give %d", prev, desc, s)
		}
		seen[s] = desc
	}
	for _, label := range []string{"synthetic/branin", "synthetic/hartmann3", "synthetic/gpsample:sample_seed=1"} {
		for _, a := range []string{"", "ei", "tes-ep"} {
			for _, q := range []int{1, 3, 10} {
				for i := range 20 {
					add(strings.Join([]string{label, a, string(rune('0' + q)), string(rune('a' + i))}, "/"), seed(label, a, q, i))
				}
			}
		}
	}
	// Field boundaries are length-prefixed: moving characters between
	// label and acquisition changes the seed.
	if seed("ab", "c", 1, 0) == seed("a", "bc", 1, 0) {
		t.Error("Seed ignores the boundary between label and acquisition")
	}
}

func TestSpecsCommonRandomNumbers(t *testing.T) {
	s := Suite{Problems: []Problem{{Name: "synthetic/branin"}}, Acquisitions: []string{"ei", "random"}, Batches: []int{1, 3}, Seeds: 2}
	specs := s.specs()
	if len(specs) != 8 {
		t.Fatalf("%d specs, want 8", len(specs))
	}
	// Seed index outermost; acquisitions share the seed of (problem, batch, index).
	if specs[0].Index != 0 || specs[len(specs)-1].Index != 1 {
		t.Errorf("seed index is not the outermost loop: %+v", specs)
	}
	bySeed := map[[2]int]uint64{}
	names := map[string]bool{}
	for _, sp := range specs {
		k := [2]int{sp.Batch, sp.Index}
		if prev, ok := bySeed[k]; ok && prev != sp.Seed {
			t.Errorf("acquisitions of %v have different seeds %d and %d", k, prev, sp.Seed)
		}
		bySeed[k] = sp.Seed
		names[sp.studyName()] = true
	}
	if len(names) != len(specs) {
		t.Errorf("study names are not unique: %v", names)
	}
	s.SeedByAcq = true
	specs = s.specs()
	if specs[0].Seed == specs[1].Seed {
		t.Error("SeedByAcq: ei and random share a seed")
	}
}

func TestParseProblem(t *testing.T) {
	tests := []struct {
		spec    string
		want    Problem
		label   string
		wantErr string
	}{
		{spec: "synthetic/branin", want: Problem{Name: "synthetic/branin"}, label: "synthetic/branin"},
		{spec: " synthetic/ackley:dim=5 ", want: Problem{Name: "synthetic/ackley", Params: map[string]string{"dim": "5"}}, label: "synthetic/ackley:dim=5"},
		{spec: "synthetic/log10p:noise_var=2.511e-2:data=/d", want: Problem{Name: "synthetic/log10p", Params: map[string]string{"data": "/d", "noise_var": "2.511e-2"}},
			label: "synthetic/log10p:data=/d:noise_var=2.511e-2"},
		{spec: "", wantErr: "empty name"},
		{spec: "a:dim", wantErr: "want key=value"},
		{spec: "a:=3", wantErr: "want key=value"},
		{spec: "a:dim=2:dim=3", wantErr: "twice"},
		{spec: "a:seed=2", wantErr: "reserved"},
		{spec: "a:noise_var=-1", wantErr: "noise_var"},
		{spec: "a:noise_var=x", wantErr: "noise_var"},
	}
	for _, tc := range tests {
		got, err := ParseProblem(tc.spec)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ParseProblem(%q) error %v, want one containing %q", tc.spec, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseProblem(%q): %v", tc.spec, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseProblem(%q) = %+v, want %+v", tc.spec, got, tc.want)
		}
		if got.Label() != tc.label {
			t.Errorf("Label(%q) = %q, want %q", tc.spec, got.Label(), tc.label)
		}
	}
}

func TestSuiteValidate(t *testing.T) {
	ok := Suite{Problems: []Problem{{Name: "synthetic/branin"}}, Acquisitions: []string{"ei"}, Out: t.TempDir()}
	if err := ok.validate(); err != nil {
		t.Fatalf("valid suite: %v", err)
	}
	tests := []struct {
		name    string
		mod     func(*Suite)
		wantErr string
	}{
		{"no problems", func(s *Suite) { s.Problems = nil }, "no problems"},
		{"unknown acq", func(s *Suite) { s.Acquisitions = []string{"eii"} }, "unknown acquisition"},
		{"dup acq", func(s *Suite) { s.Acquisitions = []string{"ei", "ei"} }, "twice"},
		{"bad batch", func(s *Suite) { s.Batches = []int{0} }, "batch"},
		{"huge batch", func(s *Suite) { s.Batches = []int{host.MaxBatch + 1} }, "MaxBatch"},
		{"many seeds", func(s *Suite) { s.Seeds = maxSeeds + 1 }, "MaxSeeds"},
		{"many jobs", func(s *Suite) { s.Jobs = maxJobs + 1 }, "MaxJobs"},
		{"many iterations", func(s *Suite) { s.Iters = host.MaxTrials + 1 }, "MaxTrials"},
		{"many runs", func(s *Suite) {
			s.Seeds, s.Batches = maxSeeds, nil
			for q := 1; q <= maxRuns/maxSeeds+1; q++ {
				s.Batches = append(s.Batches, q)
			}
		}, "MaxRuns"},
		{"no out", func(s *Suite) { s.Out = "" }, "output directory"},
		{"kernel", func(s *Suite) { s.Kernel = "rbf" }, "unknown kernel"},
		{"noise param", func(s *Suite) { s.Params = map[string]string{"noise_var": "1"} }, "noise_var"},
		{"bad problem noise", func(s *Suite) { s.Problems[0].Params = map[string]string{"noise_var": "-2"} }, "noise_var"},
		{"model", func(s *Suite) { s.Model = "sparse" }, "unknown model"},
		{"local points", func(s *Suite) { s.LocalPoints = host.MaxLocalPoints + 1 }, "local model size"},
	}
	for _, tc := range tests {
		s := ok
		s.Problems = []Problem{{Name: "synthetic/branin"}}
		tc.mod(&s)
		if err := s.validate(); err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.wantErr)
		}
	}
}

func TestStudyOptions(t *testing.T) {
	s := Suite{Init: 2, InitAtLeastBatch: true}
	spec := runSpec{Problem: Problem{Name: "p", Params: map[string]string{"noise_var": "0"}}, Acquisition: "ei", Batch: 4, Seed: 7}
	o := s.studyOptions(spec, nil)
	if o.Init != 4 || o.NoInit {
		t.Errorf("Init = %d (NoInit %v), want max(2, 4) = 4", o.Init, o.NoInit)
	}
	if n := o.Normalized(); n.NoiseVar != 0 || !n.ZeroNoise {
		t.Errorf("noise_var=0 gives NoiseVar %v (ZeroNoise %v), want a noise-free study", n.NoiseVar, n.ZeroNoise)
	}
	spec.Batch = 1
	spec.Problem.Params = nil
	if o := s.studyOptions(spec, nil); o.Init != 2 || o.NoiseVar != 0 || o.Seed != 7 || o.Iters != DefaultIters {
		t.Errorf("options %+v: want Init 2, NoiseVar 0 (host default 1e-4), Seed 7, Iters %d", o, DefaultIters)
	}
	s.Init = -1
	s.InitAtLeastBatch = false
	if o := s.studyOptions(spec, nil); !o.NoInit {
		t.Errorf("Init < 0: NoInit false")
	}
	s.Model, s.LocalPoints = host.ModelLocal, 40
	if o := s.studyOptions(spec, nil); o.Model != host.ModelLocal || o.LocalPoints != 40 {
		t.Errorf("model %q with %d points, want local with 40", o.Model, o.LocalPoints)
	}
}

func TestParseBatches(t *testing.T) {
	if _, err := ParseBatches([]string{"1-100001"}); err == nil || !strings.Contains(err.Error(), "a range spans at most 10001 sizes") {
		t.Errorf("a long range: %v", err)
	}
	for _, big := range []string{"99999999999999999999", "1-99999999999999999999"} {
		if _, err := ParseBatches([]string{big}); err == nil || !strings.Contains(err.Error(), "too large (batch sizes are at most 1000)") {
			t.Errorf("%s: %v", big, err)
		}
	}
	got, err := ParseBatches([]string{"1", " 3", "10-12"})
	if err != nil || !reflect.DeepEqual(got, []int{1, 3, 10, 11, 12}) {
		t.Errorf("ParseBatches = %v, %v", got, err)
	}
	for _, bad := range [][]string{{"0"}, {"x"}, {"3-1"}, {"1", "1"}, {"1-3", "2"}, {"-2"}} {
		if _, err := ParseBatches(bad); err == nil {
			t.Errorf("ParseBatches(%q): no error", bad)
		}
	}
}

func TestParseParams(t *testing.T) {
	got, err := ParseParams([]string{"data=/a=b", "dim=3"})
	if err != nil || !reflect.DeepEqual(got, map[string]string{"data": "/a=b", "dim": "3"}) {
		t.Errorf("ParseParams = %v, %v", got, err)
	}
	for _, bad := range [][]string{{"x"}, {"=1"}, {"noise_var=1"}, {"seed=2"}, {"a=1", "a=2"}} {
		if _, err := ParseParams(bad); err == nil {
			t.Errorf("ParseParams(%q): no error", bad)
		}
	}
}

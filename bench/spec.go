package bench

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"sort"
	"strconv"
	"strings"

	"github.com/tesbo/tesbo/host"
)

// KeyNoiseVar is the problem parameter that sets the run's observation-noise
// variance (host.Options.NoiseVar) instead of being passed to the objective.
const KeyNoiseVar = "noise_var"

// Problem is one objective of a suite with its own run parameters.
type Problem struct {
	// Name is the objective's name ("synthetic/branin").
	Name string
	// Params are the problem's own parameters (the part after ':' in its
	// spec); Suite.Params are added to them when a run starts.
	Params map[string]string
	// Init and Iters, when > 0, replace the suite's initial design size and
	// BO iterations for this problem (the user suite's per-problem budgets).
	// They are not part of the label.
	Init, Iters int
}

// ParseProblem parses "name[:key=value[:key=value]...]" (see the package
// comment). Keys must be unique and non-empty.
func ParseProblem(spec string) (Problem, error) {
	spec = strings.TrimSpace(spec)
	parts := strings.Split(spec, ":")
	p := Problem{Name: strings.TrimSpace(parts[0])}
	if p.Name == "" {
		return p, fmt.Errorf("problem %q: empty name", spec)
	}
	for _, kv := range parts[1:] {
		k, v, ok := strings.Cut(kv, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return p, fmt.Errorf("problem %q: bad parameter %q: want key=value", spec, kv)
		}
		if k == "seed" {
			return p, fmt.Errorf("problem %q: seed is reserved (the bench derives each run's seed; gpsample's draw is sample_seed)", spec)
		}
		if p.Params == nil {
			p.Params = map[string]string{}
		}
		if _, dup := p.Params[k]; dup {
			return p, fmt.Errorf("problem %q: parameter %s given twice", spec, k)
		}
		p.Params[k] = strings.TrimSpace(v)
	}
	if v, ok := p.Params[KeyNoiseVar]; ok {
		if _, err := parseNoiseVar(v); err != nil {
			return p, fmt.Errorf("problem %q: %w", spec, err)
		}
	}
	return p, nil
}

// parseNoiseVar parses a noise_var value: a finite number ≥ 0.
func parseNoiseVar(v string) (float64, error) {
	x, err := strconv.ParseFloat(v, 64)
	if err != nil || x < 0 || x != x || x > 1e300 {
		return 0, fmt.Errorf("bad noise_var %q: want a finite number ≥ 0", v)
	}
	return x, nil
}

// Label is the problem's name in outputs: the name plus its own parameters
// with keys sorted ("synthetic/gpsample:sample_seed=3").
func (p Problem) Label() string {
	if len(p.Params) == 0 {
		return p.Name
	}
	keys := make([]string, 0, len(p.Params))
	for k := range p.Params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString(p.Name)
	for _, k := range keys {
		b.WriteString(":" + k + "=" + p.Params[k])
	}
	return b.String()
}

// seed derives the study seed of run index (0-based) of a problem label,
// batch size and, when acquisition is not "", acquisition: the first 8 bytes
// of a 64-bit FNV-1a hash of the fields, passed through the SplitMix64
// finalizer so that neighbouring indices give unrelated seeds.
func seed(label, acquisition string, batch, index int) uint64 {
	h := fnv.New64a()
	var buf [8]byte
	write := func(s string) {
		binary.LittleEndian.PutUint64(buf[:], uint64(len(s)))
		h.Write(buf[:])
		h.Write([]byte(s))
	}
	write("tesbo-bench/v1")
	write(label)
	write(acquisition)
	binary.LittleEndian.PutUint64(buf[:], uint64(batch))
	h.Write(buf[:])
	binary.LittleEndian.PutUint64(buf[:], uint64(index))
	h.Write(buf[:])
	return mix64(h.Sum64())
}

// mix64 is SplitMix64's output function (a bijection on uint64).
func mix64(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// runSpec identifies one run of a suite.
type runSpec struct {
	Problem     Problem
	Acquisition string
	Batch       int    // |B|
	Index       int    // seed index, 0-based
	Seed        uint64 // the study seed (Seed)
}

// studyName is the run's study name in the suite's database:
// "bench/<label>/<acquisition>/q<batch>/s<index>".
func (r runSpec) studyName() string {
	return fmt.Sprintf("bench/%s/%s/q%d/s%d", r.Problem.Label(), r.Acquisition, r.Batch, r.Index)
}

// groupKey identifies a (problem, batch) figure/table.
type groupKey struct {
	label string
	batch int
}

// specs lists every run of the suite, seed index outermost (so a suite
// interrupted early still holds complete comparisons for its first seeds),
// then problem, batch size and acquisition in the order given.
func (s *Suite) specs() []runSpec {
	var out []runSpec
	for i := 0; i < s.seeds(); i++ {
		for _, p := range s.Problems {
			for _, q := range s.batches() {
				for _, a := range s.Acquisitions {
					sa := ""
					if s.SeedByAcq {
						sa = a
					}
					out = append(out, runSpec{Problem: p, Acquisition: a, Batch: q, Index: i,
						Seed: seed(p.Label(), sa, q, i)})
				}
			}
		}
	}
	return out
}

// ParseBatches parses batch sizes given as numbers and inclusive ranges,
// e.g. ["1", "3", "10-12"] → [1 3 10 11 12] (each ≥ 1, no repeats).
func ParseBatches(items []string) ([]int, error) {
	var out []int
	seen := map[int]bool{}
	for _, it := range items {
		it = strings.TrimSpace(it)
		lo, hi, isRange := strings.Cut(it, "-")
		a, err := strconv.Atoi(strings.TrimSpace(lo))
		b := a
		if err == nil && isRange {
			b, err = strconv.Atoi(strings.TrimSpace(hi))
		}
		if errors.Is(err, strconv.ErrRange) {
			return nil, fmt.Errorf("bad batch size %q: too large (batch sizes are at most %d)", it, host.MaxBatch)
		}
		if err != nil || a < 1 || b < a {
			return nil, fmt.Errorf("bad batch size %q: want N ≥ 1 or a range A-B with 1 ≤ A ≤ B", it)
		}
		if b-a > 10000 {
			return nil, fmt.Errorf("bad batch size %q: a range spans at most 10001 sizes", it)
		}
		for q := a; q <= b; q++ {
			if seen[q] {
				return nil, fmt.Errorf("batch size %d given twice", q)
			}
			seen[q] = true
			out = append(out, q)
		}
	}
	return out, nil
}

// ParseParams parses key=value pairs (the command's --param) into a map;
// keys must be unique, and noise_var and seed are refused with the flag to
// use instead.
func ParseParams(kvs []string) (map[string]string, error) {
	out := map[string]string{}
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		k = strings.TrimSpace(k)
		switch {
		case !ok || k == "":
			return nil, fmt.Errorf("bad parameter %q: want key=value", kv)
		case k == KeyNoiseVar:
			return nil, fmt.Errorf("bad parameter %q: set the noise with --noise-var, or per problem as NAME:noise_var=V", kv)
		case k == "seed":
			return nil, fmt.Errorf("bad parameter %q: seed is reserved (run seeds are derived; gpsample's draw is sample_seed)", kv)
		}
		if _, dup := out[k]; dup {
			return nil, fmt.Errorf("bad parameter %q: %s given twice", kv, k)
		}
		out[k] = v
	}
	return out, nil
}

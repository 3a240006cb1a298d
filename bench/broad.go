package bench

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/tesbo/tesbo/problems/mixedsuite"
	"github.com/tesbo/tesbo/problems/synthetic"
	"github.com/tesbo/tesbo/problems/testfunc"
	"github.com/tesbo/tesbo/problems/usersuite"
)

// The halves of the held-out protocol (docs/results/broad/SPLIT.md): a
// lever of the default is tuned on the tune half and kept only if it helps,
// or does not hurt beyond noise, the held-out half.
const (
	HalfTune    = "tune"
	HalfHeldOut = "held-out"
)

// Halves lists the halves in report order.
var Halves = []string{HalfTune, HalfHeldOut}

// BBOB instances of the protocol: 1–5 tune, 6–15 are held out (COCO's
// instance numbers; see testfunc.BBOB).
const (
	bbobTuneLast     = 5
	bbobHeldOutFirst = 6
	bbobInstanceMax  = 15
)

// bbobPrefix starts the objective names of the BBOB functions
// ("synthetic/bbob-f1" … "synthetic/bbob-f24").
const bbobPrefix = synthetic.Prefix + testfunc.BBOBPrefix

// botorchDims are the dimensions of the any-dimension BoTorch functions in
// the broad suite; botorchAnyDim lists those functions.
var (
	botorchDims   = []int{4, 8}
	botorchAnyDim = []string{"dixonprice", "griewank", "powell", "rastrigin"}
)

// splitFamilies is the one source of truth of the split of the non-BBOB
// problems: family → half, per suite. It alternates the families in
// alphabetical order (first tune, then held-out, ...), fixed here once so
// that adding a problem never moves another one between halves; a new
// family must be added here (TestBroadSplitComplete fails until it is).
// The BoTorch functions are synthetic/<name>; a user-suite or mixed-suite
// family is a problem's name up to its first digit, without the one-hot
// suffix (Family).
var splitFamilies = map[string]map[string]string{
	synthetic.Prefix: {
		"beale": HalfTune, "bukin": HalfHeldOut, "cosine8": HalfTune, "dixonprice": HalfHeldOut,
		"dropwave": HalfTune, "eggholder": HalfHeldOut, "griewank": HalfTune, "holdertable": HalfHeldOut,
		"powell": HalfTune, "rastrigin": HalfHeldOut, "shekel": HalfTune, "threehumpcamel": HalfHeldOut,
	},
	usersuite.Prefix: {
		"bumps": HalfTune, "fail": HalfHeldOut, "heavytail": HalfTune, "hpo": HalfHeldOut,
		"noisy-additive": HalfTune, "noisy-bumps": HalfHeldOut, "plateau": HalfTune, "rosen": HalfHeldOut,
		"sparse": HalfTune, "steps": HalfHeldOut, "throughput": HalfTune, "wiggly": HalfHeldOut,
	},
	mixedsuite.Prefix: {
		"ackley-cat": HalfTune, "branin-shift": HalfHeldOut, "func": HalfTune, "hpo": HalfHeldOut,
	},
}

// botorchFunctions are the BoTorch test functions of the broad suite, in
// order (the keys of splitFamilies[synthetic.Prefix]).
func botorchFunctions() []string {
	names := make([]string, 0, len(splitFamilies[synthetic.Prefix]))
	for n := range splitFamilies[synthetic.Prefix] {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// family is the family of a problem name in the split: the function for
// synthetic/<name> ("bbob-f3" for every instance and dimension of f3); for
// user/ and mixed/ problems the name up to its first digit, without the
// one-hot suffix ("bumps" for user/bumps4-offset, "func" for mixed/func2c).
func family(name string) (prefix, family string) {
	for _, pre := range []string{synthetic.Prefix, usersuite.Prefix, mixedsuite.Prefix} {
		short, ok := strings.CutPrefix(name, pre)
		if !ok {
			continue
		}
		if pre == synthetic.Prefix {
			return pre, short
		}
		short = strings.TrimSuffix(short, mixedsuite.OneHot)
		if i := strings.IndexAny(short, "0123456789"); i > 0 {
			short = short[:i]
		}
		return pre, short
	}
	return "", name
}

// Half is the problem's half in the held-out protocol: BBOB instances
// 1–5 tune and 6–15 held out (instance 1 when the parameter is absent),
// the other broad-suite problems by family (splitFamilies); "" for a
// problem outside the split (synthetic/branin, an instance beyond 15, a
// plugin).
func (p Problem) Half() string {
	if strings.HasPrefix(p.Name, bbobPrefix) {
		inst := 1
		if v, ok := p.Params[synthetic.KeyInstance]; ok {
			var err error
			if inst, err = strconv.Atoi(v); err != nil {
				return ""
			}
		}
		switch {
		case inst >= 1 && inst <= bbobTuneLast:
			return HalfTune
		case inst >= bbobHeldOutFirst && inst <= bbobInstanceMax:
			return HalfHeldOut
		}
		return ""
	}
	pre, fam := family(p.Name)
	return splitFamilies[pre][fam]
}

// BroadOptions select the broad suite's problems.
type BroadOptions struct {
	// Half keeps only that half's problems ("": both).
	Half string
	// BBOBDims are the BBOB dimensions (nil: 2 and 5).
	BBOBDims []int
	// BBOBInstances are the BBOB instances, each in 1–15 (nil: 1 and 6,
	// one of each half).
	BBOBInstances []int
}

// defaultBBOBDims and defaultBBOBInstances are BroadOptions' defaults.
var (
	defaultBBOBDims      = []int{2, 5}
	defaultBBOBInstances = []int{1, bbobHeldOutFirst}
)

// BroadProblems is the broad suite: BoTorch's test functions (the
// any-dimension ones at d = 4 and 8), the 24 BBOB functions at each of
// o.BBOBDims and o.BBOBInstances, the user suite and the mixed suite (its
// problems without their one-hot variants, which are encodings of the same
// problems), each with its budget: the user and mixed suites their own,
// the functions the suite's initial design (2 by default, BoTorch's
// protocol) and usersuite.Budget's iterations for their dimension (25 for
// d ≤ 3, 35 for d ≤ 6, 45 beyond).
func BroadProblems(o BroadOptions) ([]Problem, error) {
	if o.Half != "" && !slices.Contains(Halves, o.Half) {
		return nil, fmt.Errorf("unknown half %q: use %s or %s", o.Half, HalfTune, HalfHeldOut)
	}
	dims := cmpOr(o.BBOBDims, defaultBBOBDims)
	insts := cmpOr(o.BBOBInstances, defaultBBOBInstances)
	for _, d := range dims {
		if d < 2 || d > 40 {
			return nil, fmt.Errorf("BBOB dimension %d: want 2 to 40 (COCO's are 2, 3, 5, 10, 20, 40)", d)
		}
	}
	for _, i := range insts {
		if i < 1 || i > bbobInstanceMax {
			return nil, fmt.Errorf("BBOB instance %d: the protocol's instances are 1–%d (1–%d tune, %d–%d held out)",
				i, bbobInstanceMax, bbobTuneLast, bbobHeldOutFirst, bbobInstanceMax)
		}
	}
	var out []Problem
	fn := func(name string, d int, params map[string]string) {
		_, iters := usersuite.Budget(d)
		out = append(out, Problem{Name: synthetic.Prefix + name, Params: params, Iters: iters})
	}
	for _, name := range botorchFunctions() {
		if !slices.Contains(botorchAnyDim, name) {
			fn(name, fixedDim(name), nil)
			continue
		}
		for _, d := range botorchDims {
			fn(name, d, map[string]string{synthetic.KeyDim: strconv.Itoa(d)})
		}
	}
	for _, d := range dims {
		for _, inst := range insts {
			for f := 1; f <= testfunc.BBOBFunctions; f++ {
				fn(fmt.Sprintf("%s%d", testfunc.BBOBPrefix, f), d, map[string]string{synthetic.KeyDim: strconv.Itoa(d), synthetic.KeyInstance: strconv.Itoa(inst)})
			}
		}
	}
	out = append(out, UserProblems()...)
	for _, p := range mixedsuite.Problems() {
		out = append(out, Problem{Name: mixedsuite.Prefix + p.Name, Init: p.Init, Iters: p.Iters})
	}
	if o.Half != "" {
		out = slices.DeleteFunc(out, func(p Problem) bool { return p.Half() != o.Half })
	}
	return out, nil
}

// fixedDim is the dimension of a fixed-dimension function (for its
// budget).
func fixedDim(name string) int {
	f, err := testfunc.New(name, testfunc.Settings{})
	if err != nil {
		panic(fmt.Sprintf("broad suite: %s: %v", name, err)) // the names are the registry's (TestBroadProblems)
	}
	return f.Dim
}

func cmpOr(xs, def []int) []int {
	if len(xs) == 0 {
		return def
	}
	return xs
}

// ParseInts parses numbers and inclusive ranges ("1-5,8" → 1 2 3 4 5 8),
// each ≥ 1, without repeats; what names the flag in errors.
func ParseInts(what string, items []string) ([]int, error) {
	var out []int
	for _, it := range items {
		for _, part := range strings.Split(it, ",") {
			part = strings.TrimSpace(part)
			lo, hi, isRange := strings.Cut(part, "-")
			a, err := strconv.Atoi(lo)
			b := a
			if err == nil && isRange {
				b, err = strconv.Atoi(hi)
			}
			if err != nil || a < 1 || b < a {
				return nil, fmt.Errorf("bad %s %q: want N ≥ 1 or a range A-B with 1 ≤ A ≤ B", what, part)
			}
			if b-a > 1000 {
				return nil, fmt.Errorf("bad %s %q: a range spans at most 1001 values", what, part)
			}
			for v := a; v <= b; v++ {
				if slices.Contains(out, v) {
					return nil, fmt.Errorf("bad %s: %d given twice", what, v)
				}
				out = append(out, v)
			}
		}
	}
	return out, nil
}

// splitMarkdown renders docs/results/broad/SPLIT.md from splitFamilies
// and the BBOB rule (TestBroadSplitDoc keeps the file equal to it).
func splitMarkdown() string {
	var b strings.Builder
	b.WriteString("# The held-out split of the broad suite\n\n")
	b.WriteString("Generated from `bench/broad.go` (`splitFamilies`, `Problem.Half`); `go test ./bench -run TestBroadSplitDoc`\n")
	b.WriteString("fails when this file differs, and `go test ./bench -run TestBroadSplitDoc -args -update` rewrites it.\n\n")
	b.WriteString("A lever of the default is tuned on the **tune** half and kept only if it helps, or does not hurt beyond\n")
	b.WriteString("noise, the **held-out** half. The split is by family, fixed before measuring, never by chance per run:\n\n")
	fmt.Fprintf(&b, "- BBOB (`synthetic/bbob-f1` … `synthetic/bbob-f%d`, every dimension): instances 1–%d tune, %d–%d held out.\n",
		testfunc.BBOBFunctions, bbobTuneLast, bbobHeldOutFirst, bbobInstanceMax)
	b.WriteString("- BoTorch's test functions (`synthetic/<name>`), the user suite (`user/<name>`) and the mixed suite\n")
	b.WriteString("  (`mixed/<name>`, one-hot variants with their problem): families alternate in alphabetical order, first tune.\n")
	b.WriteString("  A user or mixed family is the name up to its first digit.\n\n")
	b.WriteString("Caveat: the default's levers were tuned on the whole user suite before this split existed, so its held-out\n")
	b.WriteString("user problems are not unseen; BBOB's held-out instances and the held-out BoTorch functions are.\n\n")
	b.WriteString("| suite | family | half | problems |\n|---|---|---|---|\n")
	members := map[string][]string{}
	all, _ := BroadProblems(BroadOptions{BBOBInstances: []int{1}, BBOBDims: []int{2}})
	for _, p := range all {
		if strings.HasPrefix(p.Name, bbobPrefix) {
			continue
		}
		pre, fam := family(p.Name)
		members[pre+fam] = appendUnique(members[pre+fam], p.Name)
	}
	for _, pre := range []string{synthetic.Prefix, usersuite.Prefix, mixedsuite.Prefix} {
		fams := make([]string, 0, len(splitFamilies[pre]))
		for f := range splitFamilies[pre] {
			fams = append(fams, f)
		}
		slices.Sort(fams)
		for _, f := range fams {
			ps := members[pre+f]
			for i := range ps {
				ps[i] = "`" + ps[i] + "`"
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", strings.TrimSuffix(pre, "/"), f, splitFamilies[pre][f], strings.Join(ps, ", "))
		}
	}
	return b.String()
}

func appendUnique(xs []string, x string) []string {
	if slices.Contains(xs, x) {
		return xs
	}
	return append(xs, x)
}

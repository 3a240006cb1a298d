package testfunc

import (
	"fmt"
	"sort"
	"strings"
)

// defaultDim is the dimension of the any-dimension functions (ackley, levy,
// rosenbrock, michalewicz, styblinskitang, griewank, rastrigin, dixonprice,
// the BBOB functions) when Settings.Dim is 0; powell, defined on blocks of
// four coordinates, defaults to 4.
const defaultDim = 2

// Settings selects a member of a function family in New. The zero value
// gives each function's default.
type Settings struct {
	// Dim is the dimension of an any-dimension function; 0 means defaultDim.
	// For a fixed-dimension function it must be 0 or that dimension.
	Dim int
	// SampleSeed selects the draw of gpsample (0 is a valid draw, the default).
	SampleSeed uint64
	// DataDir is the directory of the log10P data set (required by log10p).
	DataDir string
	// Instance is the BBOB instance of a bbob-f* function (its random
	// optimum, rotations and f-offset; see BBOB); 0 means instance 1.
	Instance int
}

type entry struct {
	dim   int // fixed dimension, or 0 for any dimension
	build func(s Settings) (*Function, error)
}

func fixed(f func() *Function) func(Settings) (*Function, error) {
	return func(Settings) (*Function, error) { return f(), nil }
}

func anyDim(f func(int) (*Function, error)) func(Settings) (*Function, error) {
	return anyDimFrom(defaultDim, f)
}

// anyDimFrom is anyDim with its own default dimension.
func anyDimFrom(def int, f func(int) (*Function, error)) func(Settings) (*Function, error) {
	return func(s Settings) (*Function, error) {
		d := s.Dim
		if d == 0 {
			d = def
		}
		return f(d)
	}
}

var registry = map[string]entry{
	"branin":         {2, fixed(Branin)},
	"hartmann3":      {3, fixed(Hartmann3)},
	"hartmann4":      {4, fixed(hartmann4)},
	"hartmann6":      {6, fixed(Hartmann6)},
	"gpsample":       {2, func(s Settings) (*Function, error) { return GPSample(s.SampleSeed), nil }},
	"log10p":         {2, func(s Settings) (*Function, error) { return Log10P(s.DataDir) }},
	"sixhumpcamel":   {2, fixed(sixHumpCamel)},
	"ackley":         {0, anyDim(ackley)},
	"levy":           {0, anyDim(levy)},
	"rosenbrock":     {0, anyDim(rosenbrock)},
	"michalewicz":    {0, anyDim(michalewicz)},
	"styblinskitang": {0, anyDim(styblinskiTang)},
	"shekel":         {4, fixed(shekel)},
	"cosine8":        {8, fixed(cosine8)},
	"griewank":       {0, anyDim(griewank)},
	"rastrigin":      {0, anyDim(rastrigin)},
	"dixonprice":     {0, anyDim(dixonPrice)},
	"powell":         {0, anyDimFrom(4, powell)},
	"beale":          {2, fixed(beale)},
	"bukin":          {2, fixed(bukin)},
	"dropwave":       {2, fixed(dropWave)},
	"eggholder":      {2, fixed(eggHolder)},
	"holdertable":    {2, fixed(holderTable)},
	"threehumpcamel": {2, fixed(threeHumpCamel)},
}

// BBOBPrefix starts the registry names of the 24 BBOB functions,
// "bbob-f1" … "bbob-f24".
const BBOBPrefix = "bbob-f"

func init() {
	for id := 1; id <= BBOBFunctions; id++ {
		registry[fmt.Sprintf("%s%d", BBOBPrefix, id)] = entry{dim: 0, build: func(s Settings) (*Function, error) {
			d := s.Dim
			if d == 0 {
				d = defaultDim
			}
			inst := s.Instance
			if inst == 0 {
				inst = 1
			}
			return BBOB(id, d, inst)
		}}
	}
}

// Names returns the registry names New accepts, sorted.
func Names() []string {
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// AnyDim reports whether the named function accepts Settings.Dim.
func AnyDim(name string) bool {
	e, ok := registry[name]
	return ok && e.dim == 0
}

// HasInstances reports whether the named function accepts
// Settings.Instance (the bbob-f* functions).
func HasInstances(name string) bool {
	_, ok := registry[name]
	return ok && strings.HasPrefix(name, BBOBPrefix)
}

// New builds the named function (see Names) with settings s. Settings that
// do not apply to the function (a SampleSeed for branin, a DataDir for
// hartmann6, an Instance for anything but bbob-f*, a Dim for a
// fixed-dimension function other than its own) are
// errors, so a misspelt or misplaced parameter is never silently ignored.
func New(name string, s Settings) (*Function, error) {
	e, ok := registry[name]
	if !ok {
		return nil, fmt.Errorf("unknown test function %q; known: %s", name, strings.Join(Names(), ", "))
	}
	if e.dim != 0 && s.Dim != 0 && s.Dim != e.dim {
		return nil, fmt.Errorf("%s is %d-dimensional; omit dim or set it to %d", name, e.dim, e.dim)
	}
	if s.Dim < 0 {
		return nil, fmt.Errorf("%s: dimension %d, want a positive number", name, s.Dim)
	}
	if s.SampleSeed != 0 && name != "gpsample" {
		return nil, fmt.Errorf("%s: a sample seed applies only to gpsample", name)
	}
	if s.DataDir != "" && name != "log10p" {
		return nil, fmt.Errorf("%s: a data directory applies only to log10p", name)
	}
	if s.Instance != 0 && !HasInstances(name) {
		return nil, fmt.Errorf("%s: an instance applies only to the BBOB functions (%s1 … %s%d)", name, BBOBPrefix, BBOBPrefix, BBOBFunctions)
	}
	if s.Instance < 0 {
		return nil, fmt.Errorf("%s: instance %d, want a positive number", name, s.Instance)
	}
	return e.build(s)
}

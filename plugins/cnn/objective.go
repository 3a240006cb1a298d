package main

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tesbo/tesbo/plugins/cnn/dataset"
	"github.com/tesbo/tesbo/plugins/cnn/nn"
	"github.com/tesbo/tesbo/sdk"
)

// Space is the paper's search space (§5.3), in the order of x.
var Space = []sdk.Param{
	{Name: "batch_size", Kind: sdk.Int, Low: 16, High: 512},
	{Name: "filters", Kind: sdk.Int, Low: 6, High: 256},
	{Name: "dense_units", Kind: sdk.Int, Low: 128, High: 2048},
	{Name: "dropout", Kind: sdk.Float, Low: 0, High: 0.75},
	{Name: "l2", Kind: sdk.LogFloat, Low: 1e-7, High: 1e-3},
	{Name: "learning_rate", Kind: sdk.LogFloat, Low: 1e-7, High: 1e-1},
	{Name: "lr_decay", Kind: sdk.LogFloat, Low: 1e-7, High: 1e-3},
}

// Momentum is the SGD momentum (not tuned; the paper does not list it).
const Momentum = 0.9

// MixedSpace is Space with two categorical choices after the paper's seven
// parameters: the optimizer (plain SGD, SGD with momentum Momentum — the
// paper's — or Adam) and the hidden layers' activation (ReLU — the
// paper's — or tanh). The plugin serves it as the objective "cnn/mixed".
var MixedSpace = append(append([]sdk.Param(nil), Space...),
	sdk.Param{Name: "optimizer", Kind: sdk.Categorical, Choices: []string{"sgd", "momentum", "adam"}},
	sdk.Param{Name: "activation", Kind: sdk.Categorical, Choices: []string{"relu", "tanh"}},
)

// MixedName is the name of the objective over MixedSpace.
const MixedName = "cnn/mixed"

// ConditionalSpace is MixedSpace with each optimizer's own decay rate as a
// conditional parameter (sdk.Condition): the momentum coefficient, active
// only when optimizer = momentum, and Adam's β₁, active only when optimizer
// = adam. With plain SGD neither exists. MixedSpace is its slice where both
// are 0.9. The plugin serves it as the objective "cnn/cond".
var ConditionalSpace = append(append([]sdk.Param(nil), MixedSpace...),
	sdk.Param{Name: "momentum", Kind: sdk.Float, Low: 0.5, High: 0.99,
		ActiveIf: &sdk.Condition{Parent: "optimizer", Values: []string{"momentum"}}},
	sdk.Param{Name: "adam_beta1", Kind: sdk.Float, Low: 0.5, High: 0.99,
		ActiveIf: &sdk.Condition{Parent: "optimizer", Values: []string{"adam"}}},
)

// ConditionalName is the name of the objective over ConditionalSpace.
const ConditionalName = "cnn/cond"

// Run-parameter keys (see the package comment) and their defaults.
const (
	KeyDataset    = "dataset"
	KeyDataDir    = "data_dir"
	KeyTrainSize  = "train_size"
	KeyTestSize   = "test_size"
	KeyValSize    = "val_size"
	KeyEpochs     = "epochs"
	KeyBudget     = "budget"
	KeyConcurrent = "concurrent"
	KeySeed       = "seed"
	keyNoiseVar   = "noise_var" // sent by the host; the objective's noise is its own

	DatasetFashion = "fashion-mnist"
	DatasetCIFAR10 = "cifar10"

	DefaultTrainSize = 10000
	DefaultTestSize  = 2000
	DefaultEpochs    = 1
	DefaultBudget    = 40 * time.Second
)

// Settings are the objective's run parameters.
type Settings struct {
	Dataset   string // DatasetFashion or DatasetCIFAR10
	DataDir   string // directory of the data files
	TrainSize int    // training images used (the first N)
	TestSize  int    // test images scored (the first N)
	// ValSize, when positive, holds out the ValSize training images after
	// the first TrainSize as a validation set: the objective's value (and
	// every per-epoch report) is the accuracy on them, and the test images
	// are scored once per evaluation for the metadata's test_accuracy, so
	// that the study never selects on the images it is judged on. Zero
	// scores the test images, the paper's protocol (§5.3: regret = 1 −
	// test accuracy).
	ValSize int
	Epochs  float64
	// Budget is the wall-clock limit on one evaluation's training; the
	// network trained so far is scored. Scoring is not bounded by it: it
	// costs up to about 14 ms per test image for the largest network
	// (256 filters, 2048 units), ≈ 28 s at the default TestSize, so the
	// slowest default evaluation measured took 68 s in all. Bounding the
	// scoring instead (scoring fewer images when training ran long) would
	// make the largest networks' accuracies noisier than the others', and
	// the objective less comparable across the space.
	Budget     time.Duration
	Concurrent int    // trainings run at once in this process
	Seed       uint64 // weights, shuffles and dropout masks

	// trainGiven, testGiven: TrainSize and TestSize came from --param. A default
	// larger than a small data set takes all of it; a size asked for
	// must exist, or the study would run on fewer images than it says.
	trainGiven, testGiven bool
}

// DefaultSettings returns the settings used until Configure says otherwise.
func DefaultSettings() Settings {
	return Settings{
		Dataset: DatasetFashion, DataDir: dataset.FashionMNISTDir,
		TrainSize: DefaultTrainSize, TestSize: DefaultTestSize, Epochs: DefaultEpochs,
		Budget: DefaultBudget, Concurrent: 1,
	}
}

// parseSettings applies params on top of the defaults. Unknown keys are an
// error, so a misspelt --param does not pass silently.
func parseSettings(params map[string]string) (Settings, error) {
	s := DefaultSettings()
	dirSet := false
	for k, v := range params {
		v = strings.TrimSpace(v)
		var err error
		switch k {
		case KeyDataset:
			switch strings.ToLower(v) {
			case DatasetFashion, "fashion", "fashion_mnist", "fmnist":
				s.Dataset = DatasetFashion
			case DatasetCIFAR10, "cifar-10", "cifar":
				s.Dataset = DatasetCIFAR10
			default:
				err = fmt.Errorf("unknown data set %q (use %s or %s)", v, DatasetFashion, DatasetCIFAR10)
			}
		case KeyDataDir:
			s.DataDir, dirSet = v, true
		case KeyTrainSize:
			s.TrainSize, err = positiveInt(v)
			s.trainGiven = true
		case KeyTestSize:
			s.TestSize, err = positiveInt(v)
			s.testGiven = true
		case KeyValSize:
			s.ValSize, err = strconv.Atoi(v)
			if err == nil && s.ValSize < 0 {
				err = fmt.Errorf("%d is negative", s.ValSize)
			}
		case KeyEpochs:
			s.Epochs, err = strconv.ParseFloat(v, 64)
			if err == nil && !(s.Epochs > 0 && s.Epochs <= 1000) {
				err = fmt.Errorf("%v is not in (0, 1000]", s.Epochs)
			}
		case KeyBudget:
			s.Budget, err = parseDuration(v)
		case KeyConcurrent:
			s.Concurrent, err = positiveInt(v)
		case KeySeed:
			s.Seed, err = strconv.ParseUint(v, 10, 64)
		case keyNoiseVar:
		default:
			err = fmt.Errorf("unknown parameter (known: %s)", strings.Join([]string{
				KeyDataset, KeyDataDir, KeyTrainSize, KeyTestSize, KeyValSize, KeyEpochs, KeyBudget, KeyConcurrent, KeySeed}, ", "))
		}
		if err != nil {
			return Settings{}, fmt.Errorf("cnn: --param %s=%s: %w", k, v, err)
		}
	}
	if s.Dataset == DatasetCIFAR10 && !dirSet {
		return Settings{}, fmt.Errorf("cnn: dataset=cifar10 needs --param data_dir=DIR: %s", dataset.CIFAR10Hint)
	}
	return s, nil
}

func positiveInt(v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err == nil && n < 1 {
		err = fmt.Errorf("%d is not positive", n)
	}
	return n, err
}

// parseDuration accepts Go durations ("40s", "2m") and plain seconds ("40").
func parseDuration(v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil {
		secs, ferr := strconv.ParseFloat(v, 64)
		if ferr != nil {
			return 0, fmt.Errorf("not a duration (e.g. 40s, 2m): %w", err)
		}
		// A float64 beyond a Duration's range (about 292 years) converts
		// to a negative one.
		if !(secs > 0) || secs > float64(math.MaxInt64/int64(time.Second)) {
			return 0, fmt.Errorf("%s seconds is not a positive duration below %v", v, time.Duration(math.MaxInt64))
		}
		d = time.Duration(secs * float64(time.Second))
	}
	if d <= 0 {
		return 0, fmt.Errorf("%v is not positive", d)
	}
	return d, nil
}

// Objective is the CNN tuning objective. It is safe for concurrent use;
// at most Settings.Concurrent trainings run at once and the others wait
// (their time budget starts when they run).
type Objective struct {
	name  string      // as Info reports it
	space []sdk.Param // Space, MixedSpace or ConditionalSpace
	mu    sync.Mutex
	set   Settings
	sem   chan struct{}
	data  map[dataKey]*data
}

// NewObjective returns the objective over the paper's Space with
// DefaultSettings.
func NewObjective() *Objective {
	return &Objective{name: "cnn", space: Space, set: DefaultSettings(), sem: make(chan struct{}, 1), data: map[dataKey]*data{}}
}

// NewMixedObjective returns the objective over MixedSpace (the optimizer
// and the activation are tuned too) with DefaultSettings.
func NewMixedObjective() *Objective {
	o := NewObjective()
	o.name, o.space = MixedName, MixedSpace
	return o
}

// NewConditionalObjective returns the objective over ConditionalSpace (the
// optimizer's decay rate is tuned too, where the optimizer has one) with
// DefaultSettings.
func NewConditionalObjective() *Objective {
	o := NewObjective()
	o.name, o.space = ConditionalName, ConditionalSpace
	return o
}

// Info describes the search space; Optimum = 1 makes regret = 1 − accuracy.
func (o *Objective) Info(context.Context) (sdk.Info, error) {
	one := 1.0
	o.mu.Lock()
	epochs := o.set.Epochs
	o.mu.Unlock()
	// Each complete epoch reports its test accuracy (sdk.Report).
	return sdk.Info{Name: o.name, Params: append([]sdk.Param(nil), o.space...), Optimum: &one,
		MaxStep: min(int(epochs), sdk.MaxStepLimit)}, nil
}

// Configure applies the run parameters and loads the data set, so that a
// missing or malformed data set is reported before any evaluation.
func (o *Objective) Configure(ctx context.Context, params map[string]string) error {
	s, err := parseSettings(params)
	if err != nil {
		return err
	}
	o.mu.Lock()
	o.set = s
	o.sem = make(chan struct{}, s.Concurrent)
	o.mu.Unlock()
	_, err = o.load(s)
	return err
}

// Evaluate trains the network described by x and returns its test accuracy.
func (o *Objective) Evaluate(ctx context.Context, x []float64) (float64, error) {
	r, err := o.EvaluateDetail(ctx, x)
	return r.Value, err
}

// Hyper is one decoded point of Space, MixedSpace or ConditionalSpace.
type Hyper struct {
	BatchSize, Filters, Dense int
	Dropout, L2, LR, Decay    float64
	// Optimizer and Activation are the paper's (SGD with momentum, ReLU)
	// on Space.
	Optimizer  nn.Optimizer
	Momentum   float64 // nn.TrainSettings.Momentum: Momentum, or −1 for none
	Beta1      float64 // nn.TrainSettings.Beta1: 0 (its default, 0.9) unless tuned
	Activation nn.Activation
}

// decode checks x against space (Space, MixedSpace or ConditionalSpace)
// and rounds the integer parameters. An inactive parameter of
// ConditionalSpace is ignored (the host sends NaN there); an active one
// must be in its range like any other.
func decode(space []sdk.Param, x []float64) (Hyper, error) {
	if len(x) != len(space) {
		return Hyper{}, fmt.Errorf("cnn: got %d values, want %d (%s)", len(x), len(space), paramNames(space))
	}
	v := make([]float64, len(x))
	for i, p := range space {
		v[i] = x[i]
		if p.Kind == sdk.Int || p.Kind == sdk.Categorical {
			v[i] = math.Round(v[i])
		}
	}
	active := sdk.Space(space).Active(v)
	for i, p := range space {
		lo, hi := p.Bounds()
		switch {
		case !active[i]:
			v[i] = math.NaN()
		case math.IsNaN(v[i]) || v[i] < lo || v[i] > hi:
			return Hyper{}, fmt.Errorf("cnn: %s = %v outside [%v, %v]", p.Name, x[i], lo, hi)
		}
	}
	// Read by name, not position: which optional parameters the space
	// has (optimizer, activation, momentum, adam_beta1) says which of its
	// three forms it is.
	named := sdk.Values(sdk.Info{Params: space}, v)
	has := func(name string) bool {
		return slices.ContainsFunc(space, func(p sdk.Param) bool { return p.Name == name })
	}
	h := Hyper{
		BatchSize: named.Int("batch_size"), Filters: named.Int("filters"), Dense: named.Int("dense_units"),
		Dropout: named.Float("dropout"), L2: named.Float("l2"), LR: named.Float("learning_rate"),
		Decay: named.Float("lr_decay"), Momentum: Momentum,
	}
	if has("optimizer") {
		switch named.Choice("optimizer") {
		case "sgd":
			h.Momentum = -1
		case "adam":
			h.Optimizer = nn.AdamOptimizer
		}
	}
	if has("activation") && named.Choice("activation") == "tanh" {
		h.Activation = nn.TanhActivation
	}
	if has("momentum") && named.Active("momentum") {
		h.Momentum = named.Float("momentum")
	}
	if has("adam_beta1") && named.Active("adam_beta1") {
		h.Beta1 = named.Float("adam_beta1")
	}
	return h, nil
}

func paramNames(space []sdk.Param) string {
	names := make([]string, len(space))
	for i, p := range space {
		names[i] = p.Name
	}
	return strings.Join(names, ", ")
}

// EvaluateDetail trains the network described by x on the training subset
// for the configured epochs or until the time budget runs out, and returns
// the accuracy on the scored subset — the test images, or the validation
// images with Settings.ValSize — with metadata: train_s, eval_s, steps,
// epochs_done, budget_hit, diverged, train_loss, train_images,
// test_images, dataset, and with a validation set val_images and
// test_accuracy. When the host stops trials early (tesbo-host run
// --pruner) it reports the scored accuracy after each complete epoch
// (sdk.Report) and, told to stop, returns that accuracy at once.
func (o *Objective) EvaluateDetail(ctx context.Context, x []float64) (sdk.Result, error) {
	h, err := decode(o.space, x)
	if err != nil {
		return sdk.Result{}, err
	}
	o.mu.Lock()
	s, sem := o.set, o.sem
	o.mu.Unlock()
	d, err := o.load(s)
	if err != nil {
		return sdk.Result{}, err
	}
	select {
	case sem <- struct{}{}:
		defer func() { <-sem }()
	case <-ctx.Done():
		return sdk.Result{}, fmt.Errorf("cnn: waiting to train: %w", ctx.Err())
	}
	net, err := nn.NewCNN[float32](nn.Config{
		Input: d.shape, Classes: d.classes, Filters: h.Filters, Dense: h.Dense, Dropout: h.Dropout,
		Activation: h.Activation,
	}, s.Seed)
	if err != nil {
		return sdk.Result{}, fmt.Errorf("cnn: %w", err)
	}
	tctx, cancel := context.WithTimeout(ctx, s.Budget)
	ts := nn.TrainSettings{
		BatchSize: h.BatchSize, Epochs: s.Epochs, LR: h.LR, Decay: h.Decay, L2: h.L2,
		Momentum: h.Momentum, Beta1: h.Beta1, Optimizer: h.Optimizer, Seed: s.Seed,
	}
	rep := epochReporter{ctx: ctx, net: net, d: d}
	if _, ok := sdk.ReporterFrom(ctx); ok {
		ts.AfterEpoch = rep.afterEpoch
	}
	st, err := nn.Train(tctx, net, d.xTrain, d.yTrain, ts)
	cancel()
	if err == nil {
		err = rep.err
	}
	if err != nil {
		return sdk.Result{}, fmt.Errorf("cnn: train: %w", err)
	}
	if ctx.Err() != nil { // the host gave up, not our budget
		return sdk.Result{}, fmt.Errorf("cnn: evaluation cancelled: %w", ctx.Err())
	}
	start := time.Now()
	acc := rep.last
	if !rep.scoredLast(st) {
		acc = score(net, st, d.scored())
	}
	testAcc := math.NaN()
	if d.val != nil {
		testAcc = score(net, st, d.test)
	}
	evalTime := time.Since(start)
	sdk.Logger().Debug("evaluated", "x", x, "accuracy", acc, "train_s", st.Duration.Seconds(),
		"epochs", st.Epochs, "budget_hit", st.Stopped)
	meta := map[string]string{
		"train_s":      strconv.FormatFloat(st.Duration.Seconds(), 'f', 2, 64),
		"eval_s":       strconv.FormatFloat(evalTime.Seconds(), 'f', 2, 64),
		"steps":        strconv.Itoa(st.Steps),
		"epochs_done":  strconv.FormatFloat(st.Epochs, 'f', 3, 64),
		"budget_hit":   strconv.FormatBool(st.Stopped),
		"diverged":     strconv.FormatBool(st.Diverged),
		"train_loss":   strconv.FormatFloat(st.Loss, 'g', 4, 64),
		"train_images": strconv.Itoa(len(d.yTrain)),
		"test_images":  strconv.Itoa(len(d.test.y)),
		"dataset":      s.Dataset,
	}
	if d.val != nil {
		meta["val_images"] = strconv.Itoa(len(d.val.y))
		meta["test_accuracy"] = strconv.FormatFloat(testAcc, 'g', -1, 64)
	}
	return sdk.Result{Value: acc, Meta: meta}, nil
}

// epochReporter reports the scored accuracy (data.scored) after each
// complete epoch and stops training when the host says so.
type epochReporter struct {
	ctx   context.Context
	net   *nn.Net[float32]
	d     *data
	epoch int     // the last epoch reported
	last  float64 // its accuracy
	err   error   // a report the host refused
}

// afterEpoch is nn.TrainSettings.AfterEpoch.
func (r *epochReporter) afterEpoch(epoch int) bool {
	r.epoch, r.last = epoch, score(r.net, nn.TrainStats{}, r.d.scored())
	prune, err := sdk.Report(r.ctx, epoch, r.last)
	r.err = err
	return prune || err != nil
}

// scoredLast reports whether the network was scored after its last update
// (training ended at a reported epoch), so last is its accuracy.
func (r *epochReporter) scoredLast(st nn.TrainStats) bool {
	return r.epoch > 0 && !st.Diverged && st.Epochs == float64(r.epoch)
}

// score returns the accuracy on the images of e. After a diverged
// training it first predicts one chunk of them: if every prediction is
// non-finite the network is broken and scores 0 without the (possibly
// minute-long) full pass, which would give 0 as well.
func score(net *nn.Net[float32], st nn.TrainStats, e *examples) float64 {
	if st.Diverged {
		n := min(nn.DefaultChunk, len(e.y))
		broken := true
		for _, p := range net.Predict(e.x[:n*len(e.x)/len(e.y)], n, nil) {
			broken = broken && p < 0
		}
		if broken {
			return 0
		}
	}
	return net.Accuracy(e.x, e.y)
}

// dataKey identifies a loaded, subset and standardized data set.
type dataKey struct {
	dataset, dir               string
	trainSize, testSz, valSize int
	trainGiven, testGiven      bool
}

// checkSizes refuses a train_size or test_size given beyond the data
// set's nTrain training and nTest test images.
func (k dataKey) checkSizes(nTrain, nTest int) error {
	switch {
	case k.trainGiven && k.trainSize > nTrain:
		return fmt.Errorf("cnn: train_size %d exceeds the %d training images of %s: lower it", k.trainSize, nTrain, k.dataset)
	case k.testGiven && k.testSz > nTest:
		return fmt.Errorf("cnn: test_size %d exceeds the %d test images of %s: lower it", k.testSz, nTest, k.dataset)
	}
	return nil
}

// examples are standardized float32 images and their labels.
type examples struct {
	x []float32
	y []int
}

// data is a data set ready for training: standardized float32 pixels.
type data struct {
	once    sync.Once
	err     error
	shape   nn.Shape
	classes int
	xTrain  []float32
	yTrain  []int
	test    *examples
	val     *examples // nil without Settings.ValSize
}

// scored is what an evaluation's value is the accuracy on: the validation
// images when there are any, else the test images.
func (d *data) scored() *examples {
	if d.val != nil {
		return d.val
	}
	return d.test
}

// load reads and prepares the data set of s once per process.
func (o *Objective) load(s Settings) (*data, error) {
	key := dataKey{s.Dataset, s.DataDir, s.TrainSize, s.TestSize, s.ValSize, s.trainGiven, s.testGiven}
	o.mu.Lock()
	d, ok := o.data[key]
	if !ok {
		d = &data{}
		o.data[key] = d
	}
	o.mu.Unlock()
	d.once.Do(func() { d.err = d.read(key) })
	return d, d.err
}

func (d *data) read(k dataKey) error {
	var train, test *dataset.Set
	var err error
	switch k.dataset {
	case DatasetCIFAR10:
		train, test, err = dataset.CIFAR10(k.dir)
	default:
		train, test, err = dataset.FashionMNIST(k.dir)
	}
	if err != nil {
		return fmt.Errorf("cnn: %w", err)
	}
	// dataset's readers return pairs that pass dataset.checkPair (same
	// image shape); a loader of your own must check it too, or scoring
	// reads test images with the training shape.
	var val *dataset.Set
	if k.valSize > 0 {
		if n := train.Len(); k.valSize > n || k.trainSize > n-k.valSize { // no overflow of the sum
			return fmt.Errorf("cnn: train_size %d + val_size %d exceed the %d training images of %s: lower one of them", k.trainSize, k.valSize, n, k.dataset)
		}
		val = train.Slice(k.trainSize, k.trainSize+k.valSize)
	}
	if err := k.checkSizes(train.Len(), test.Len()); err != nil {
		return err
	}
	train, test = train.Head(k.trainSize), test.Head(k.testSz)
	// Standardize with the training subset's statistics only.
	mean, std := train.ChannelStats()
	d.shape = nn.Shape{H: train.H, W: train.W, C: train.C}
	d.classes = train.Classes
	d.xTrain, d.yTrain = train.Standardized(mean, std), train.IntLabels()
	d.test = &examples{test.Standardized(mean, std), test.IntLabels()}
	if val != nil {
		d.val = &examples{val.Standardized(mean, std), val.IntLabels()}
	}
	return nil
}

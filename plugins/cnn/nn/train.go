package nn

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// TrainSettings configures Train. Zero values take the documented defaults.
type TrainSettings struct {
	BatchSize int     // examples per SGD update; zero means 128
	Epochs    float64 // passes over the data; zero means 1. A fraction trains that share of the last epoch's batches.
	LR        float64 // base learning rate η₀; zero means 0.01
	Decay     float64 // learning-rate decay: η_t = η₀/(1 + Decay·t), t = update count
	L2        float64 // L2 penalty λ: (λ/2)·‖W‖² on weights, not biases
	// Momentum is SGD's heavy-ball coefficient, below 1; zero means 0.9, a
	// negative value means no momentum. Adam ignores it.
	Momentum float64
	// Beta1 is Adam's first-moment decay rate β₁, below 1; zero means 0.9
	// (Kingma & Ba's default), a negative value means β₁ = 0 (no first
	// moment: RMSprop with bias correction). SGD ignores it.
	Beta1 float64
	// Optimizer is the update rule: SGDOptimizer (the zero value, with
	// Momentum) or AdamOptimizer.
	Optimizer Optimizer
	Seed      uint64 // seeds the per-epoch shuffles
	// AfterEpoch, when set, is called after each complete epoch with its
	// number (1, 2, …); returning true stops training there (Halted). It
	// may use the network (e.g. score it: Predict changes nothing Train
	// depends on, so the weights stay bit for bit those of a run without).
	AfterEpoch func(epoch int) (stop bool)
}

func (s TrainSettings) withDefaults() TrainSettings {
	if s.BatchSize <= 0 {
		s.BatchSize = 128
	}
	if s.Epochs <= 0 {
		s.Epochs = 1
	}
	if s.LR == 0 {
		s.LR = 0.01
	}
	switch {
	case s.Momentum == 0:
		s.Momentum = 0.9
	case s.Momentum < 0:
		s.Momentum = 0
	}
	switch {
	case s.Beta1 == 0:
		s.Beta1 = adamBeta1
	case s.Beta1 < 0:
		s.Beta1 = 0
	}
	return s
}

// Optimizer selects Train's update rule.
type Optimizer int

const (
	SGDOptimizer  Optimizer = iota // SGD with TrainSettings.Momentum
	AdamOptimizer                  // Adam
)

// updater is one optimizer's step over a network's parameters.
type updater[T float] interface{ Update(params []*Param[T]) }

// newUpdater returns s's optimizer (s with its defaults applied). A decay
// rate of 1 or more makes the velocity or the moment grow without bound, so
// it is refused rather than left to diverge.
func newUpdater[T float](s TrainSettings) (updater[T], error) {
	switch s.Optimizer {
	case SGDOptimizer:
		if !(s.Momentum < 1) {
			return nil, fmt.Errorf("nn: momentum %v is not below 1", s.Momentum)
		}
		return &sgd[T]{LR: s.LR, Decay: s.Decay, Momentum: s.Momentum, L2: s.L2}, nil
	case AdamOptimizer:
		if !(s.Beta1 < 1) {
			return nil, fmt.Errorf("nn: Adam's beta1 %v is not below 1", s.Beta1)
		}
		return &adam[T]{LR: s.LR, Decay: s.Decay, L2: s.L2, Beta1: s.Beta1}, nil
	}
	return nil, fmt.Errorf("nn: unknown optimizer %d", s.Optimizer)
}

// TrainStats reports what Train did.
type TrainStats struct {
	Steps    int           // SGD updates made
	Epochs   float64       // passes over the data completed (fractional)
	Loss     float64       // mean training loss (without L2) over the last up-to-50 updates
	Duration time.Duration // wall-clock training time
	// Stopped is set when ctx ended (e.g. the evaluation's time budget)
	// before the requested epochs were done.
	Stopped bool
	// Diverged is set when the loss became NaN or infinite; training stops
	// there and the network's predictions are then mostly −1 (wrong).
	Diverged bool
	// Halted is set when TrainSettings.AfterEpoch asked to stop.
	Halted bool
}

// errNoData is returned by Train for an empty training set.
var errNoData = errors.New("nn: no training examples")

// Train fits net to the m = len(labels) examples in x (m·In().Size()
// values, example-major) by mini-batch SGD (or Adam, see Optimizer) on the mean cross-entropy plus
// the L2 penalty. Each epoch visits the examples in a fresh permutation
// drawn from Seed; the last batch of an epoch may be smaller. Training
// stops early, without error, when ctx is done (Stopped) or the loss
// diverges (Diverged). The same seeds give bit-identical weights.
func Train[T float](ctx context.Context, net *Net[T], x []T, labels []int, s TrainSettings) (TrainStats, error) {
	s = s.withDefaults()
	m, size := len(labels), net.in().Size()
	if m == 0 {
		return TrainStats{}, errNoData
	}
	if len(x) != m*size {
		return TrainStats{}, fmt.Errorf("nn: %d input values for %d examples of size %d", len(x), m, size)
	}
	for i, y := range labels {
		if y < 0 || y >= net.Classes {
			return TrainStats{}, fmt.Errorf("nn: label %d of example %d outside [0, %d)", y, i, net.Classes)
		}
	}
	opt, err := newUpdater[T](s)
	if err != nil {
		return TrainStats{}, err
	}
	start := time.Now()
	params := net.Params()
	rng := rand.New(rand.NewPCG(s.Seed, 0x636e6e2d73687566)) // "cnn-shuf"
	batchesPerEpoch := (m + s.BatchSize - 1) / s.BatchSize
	total := int(math.Ceil(s.Epochs * float64(batchesPerEpoch)))
	bx := make([]T, min(s.BatchSize, m)*size)
	by := make([]int, min(s.BatchSize, m))
	var perm []int
	var st TrainStats
	var recent []float64
	for step := range total {
		if ctx.Err() != nil {
			st.Stopped = true
			break
		}
		b := step % batchesPerEpoch
		if b == 0 {
			perm = rng.Perm(m)
		}
		idx := perm[b*s.BatchSize : min((b+1)*s.BatchSize, m)]
		for i, j := range idx {
			copy(bx[i*size:(i+1)*size], x[j*size:(j+1)*size])
			by[i] = labels[j]
		}
		net.zeroGrad()
		loss := net.gradient(bx[:len(idx)*size], by[:len(idx)], len(idx))
		if math.IsNaN(loss) || math.IsInf(loss, 0) {
			st.Diverged = true
			st.Loss = loss
			break
		}
		opt.Update(params)
		st.Steps++
		st.Epochs = float64(st.Steps) / float64(batchesPerEpoch)
		if recent = append(recent, loss); len(recent) > 50 {
			recent = recent[1:]
		}
		if b == batchesPerEpoch-1 && s.AfterEpoch != nil && s.AfterEpoch(st.Steps/batchesPerEpoch) {
			st.Halted = true
			break
		}
	}
	if !st.Diverged && len(recent) > 0 {
		var sum float64
		for _, l := range recent {
			sum += l
		}
		st.Loss = sum / float64(len(recent))
	}
	st.Duration = time.Since(start)
	return st, nil
}

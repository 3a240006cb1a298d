package sdk

import "context"

// Objective is a black-box function to optimize. Evaluate receives x in
// native units, one coordinate per Info.Params entry (Int parameters already
// rounded). It may be called concurrently (the host evaluates a batch in
// parallel) and should honour ctx's deadline.
type Objective interface {
	Info(ctx context.Context) (Info, error)
	Evaluate(ctx context.Context, x []float64) (float64, error)
}

// Configurable is implemented by objectives that take run parameters. The
// host calls Configure once, before any Evaluate, with the run's
// --param key=value pairs plus the reserved keys it always sends:
// "noise_var" (the run's --noise-var) and "seed" (the study seed).
type Configurable interface {
	Configure(ctx context.Context, params map[string]string) error
}

// Detailed is implemented by objectives that return metadata with a value;
// the host calls EvaluateDetail instead of Evaluate when it is present.
type Detailed interface {
	EvaluateDetail(ctx context.Context, x []float64) (Result, error)
}

// NoiseFree is implemented by benchmark objectives that can evaluate f(x)
// without observation noise, which the host uses for the immediate regret.
type NoiseFree interface {
	EvaluateNoiseFree(ctx context.Context, x []float64) (float64, error)
}

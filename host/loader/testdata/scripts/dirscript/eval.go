package twofiles

import "context"

func Evaluate(ctx context.Context, x []float64) (float64, error) { return square(x[0]), nil }

package twofiles

func square(v float64) float64 { return v * v }

#!/bin/sh
# Conditional space against its flattening (issue 32's target): the
# default acquisition on cond/branches (three branches, each with its own
# active parameters, sdk.Condition) and on cond/branches-flat (the same
# function, every parameter always active), 10 seeds, 30 iterations.
# Usage: sh docs/results/tuning/conditional.sh [OUTDIR]   (from the repository root)
set -eu
OUT=${1:-docs/results/tuning/conditional}
go run ./cmd/tesbo-host bench --plugins plugins --problems cond/branches,cond/branches-flat \
	--acqs tes --seeds 10 --iters 30 --out "$OUT"

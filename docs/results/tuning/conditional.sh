#!/bin/sh
# Conditional spaces against their flattening (issue 32's target), and the
# default's trust region on them: the default acquisition on each
# conditional problem of package problems/conditional and on its
# flattened twin (the same function, every parameter always active):
# cond/branches (tuning half, 30 iterations) and cond/hartmann (held out,
# 60 iterations), SEEDS seeds (default 30), 2 initial points, one run at a
# time per bench. HOST is a tesbo-host binary to use instead of this
# checkout's (e.g. an older commit's, for a before/after comparison); its
# plugins directory is PLUGINS (default plugins). The runs resume: the same
# command on the same OUTDIR skips the finished ones.
# conditional_table.py OUTDIR [BASEDIR] [BOTORCHDIR] makes the table.
# Usage: [HOST=path] [PLUGINS=dir] [SEEDS=10] sh docs/results/tuning/conditional.sh [OUTDIR]   (from the repository root)
set -eu
OUT=${1:-/tmp/tesbo-conditional}
mkdir -p "$OUT"
B=${HOST:-}
if [ -z "$B" ]; then
	go build -o "$OUT/tesbo-host" ./cmd/tesbo-host
	B="$OUT/tesbo-host"
fi
for spec in branches:30 hartmann:60; do
	p=${spec%%:*}; iters=${spec#*:}
	"$B" bench --plugins "${PLUGINS:-plugins}" --problems "cond/$p,cond/$p-flat" --acqs tes \
		--seeds "${SEEDS:-30}" --iters "$iters" --jobs 1 --out "$OUT/$p" --log-level error
done

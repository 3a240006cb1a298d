#!/bin/sh
# Warm start from a finished study of the same objective (issue 32's
# target): how many of the new study's first 10 proposals it takes to reach
# the old study's best value. For each problem and seed: a study of
# init 2 + ITERS iterations ("old", seed s), then a study warm-started from it
# (--warm-start old, seed s + 100, 10 iterations, no initial design). Both
# noise-free, so "reach" is value >= old best - TOL without noise luck.
# The summary also gives the new study's recommendation (best_value of its
# --json records) after its first evaluation, and its final regret after
# its 10 iterations. Hartmann-3 (30 old iterations) is held out: it was not
# used to choose the default's warm-start rule (tes/deliver.go).
# ACQ (default tes) is the new study's acquisition; HOST, a tesbo-host
# binary to use instead of this checkout's (e.g. an older commit's, for a
# before/after comparison); PROBLEMS, the problem:iterations list.
# Usage: [ACQ=ei] [HOST=path] [PROBLEMS="branin:20"] sh docs/results/tuning/warmstart.sh [OUTDIR]   (from the repository root)
set -eu
OUT=${1:-docs/results/tuning/warmstart}
mkdir -p "$OUT"
B=${HOST:-}
if [ -z "$B" ]; then
	go build -o "$OUT/tesbo-host" ./cmd/tesbo-host
	B="$OUT/tesbo-host"
fi
for spec in ${PROBLEMS:-branin:20 hartmann6:40 hartmann3:30}; do
	p=${spec%%:*}; iters=${spec#*:}
	for s in 1 2 3 4 5 6 7 8 9 10; do
		db="$OUT/$p-$s.db"; rm -f "$db"
		"$B" run --objective "synthetic/$p" --db "$db" --study old --iters "$iters" --seed "$s" --noise-var 0 --log-level error >/dev/null
		"$B" run --objective "synthetic/$p" --db "$db" --study new --iters 10 --seed $((s + 100)) --noise-var 0 --warm-start old --acq "${ACQ:-tes}" --log-level error --json >"$OUT/$p-$s-new-records.jsonl"
		"$B" trials --db "$db" --study old --format json >"$OUT/$p-$s-old.jsonl"
		"$B" trials --db "$db" --study new --format json >"$OUT/$p-$s-new.jsonl"
		rm -f "$db"
	done
done
[ -n "${HOST:-}" ] || rm -f "$B"
python3 docs/results/tuning/warmstart_summary.py "$OUT"

#!/bin/sh
# eleventh-round.sh re-runs the eleventh round's measurements
# (eleventh-round.md): the new default `tes` on both halves of the broad
# suite, and the tables against the earlier methods. Every step resumes:
# bench skips finished runs.
#
#   [BOTORCH_SH=/path/to/botorch.sh] docs/results/broad/eleventh-round.sh OUT
#
# Only `tes` changed this round (its opening design), so the other
# methods' final regrets — EI, random search, the earlier defaults and
# BoTorch's qLogEI (read again from botorch/, which gained BBOB at d = 5
# in this round) — are the committed finals.csv's, and the tenth
# round's `tes` is kept there as `tes-round10`. The new default's runs
# replace `tes` in it (new-default.sh).
set -eu
OUT=${1:?usage: eleventh-round.sh OUT}
SEEDS=${SEEDS:-10}
HERE=$(cd "$(dirname "$0")" && pwd)
# BoTorch's qLogEI on BBOB at d = 5 (held-out instance 6, 35 iterations),
# through 'tesbo-host eval', seed-major, into the committed botorch/ (a
# file is kept once it holds its last iteration). Skipped without
# BOTORCH_SH; new-default.sh builds tesbo-host for the rest.
if [ -n "${BOTORCH_SH:-}" ]; then
	mkdir -p "$OUT"
	OUT=$(cd "$OUT" && pwd)
	cd "$HERE/../../.."
	BIN="$OUT/tesbo-host"
	go build -o "$BIN" ./cmd/tesbo-host
	for s in $(seq 0 $((SEEDS - 1))); do
		for f in $(seq 1 24); do
			file=docs/results/broad/botorch/bbob-f$f-d5-i6-qlogei-s$s.jsonl
			if [ -s "$file" ] && [ "$(wc -l <"$file")" -ge 35 ]; then continue; fi
			"$BOTORCH_SH" --problem cmd --cmd "$BIN eval --objective synthetic/bbob-f$f --param dim=5 --param instance=6 --seed $s" \
				--acq qlogei --iters 35 --seed "$s" --threads 1 >"$file.tmp" && mv "$file.tmp" "$file"
		done
	done
fi
export SEEDS
exec "$HERE/new-default.sh" "$OUT" tes-round10 qlogei=botorch:docs/results/broad/botorch

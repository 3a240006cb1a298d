#!/bin/sh
# botorch.sh runs BoTorch's qLogEI at full training on the learning-curve
# suite (problems/curves), the peer beside measure.go's runs:
#
#	BOTORCH_SH=/path/to/botorch.sh docs/results/pruning/botorch.sh [OUT]
#	go run docs/results/pruning/measure.go -acq tes -botorch OUT ...
#
# BOTORCH_SH is BoTorch's runner (not part of this repository). It talks
# over JSON lines to 'tesbo-host eval --objective curve/NAME --seed S',
# which serves the problem's value after its last epoch with the noise a
# study sees; every evaluation is a full training, so BoTorch's 2d initial
# points and 30 iterations spend what measure.go's full training spends.
# measure.go -botorch reads OUT/<name>-s<seed>.jsonl (the last line's
# best_observed_regret: the user's rule) and prints them beside its own
# methods at the same epochs.
#
# Per-file resumable: a run whose file exists and is non-empty is skipped;
# a failed run leaves no file. One thread (--threads 1).
#
# Environment:
#   SEEDS   number of seeds, 1..SEEDS as measure.go numbers them (default 10)
#   ITERS   BO iterations after the initial design (default 30)
set -eu
OUT=${1:-${TMPDIR:-/tmp}/tesbo-pruning-botorch}
BOTORCH_SH=${BOTORCH_SH:-}
[ -x "$BOTORCH_SH" ] || { echo "botorch.sh: set BOTORCH_SH to BoTorch's runner script (got '$BOTORCH_SH', not an executable file)" >&2; exit 2; }
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
cd "$(dirname "$0")/../../.."
SEEDS=${SEEDS:-10}
ITERS=${ITERS:-30}
go build -o "$OUT/tesbo-host" ./cmd/tesbo-host
for s in $(seq 1 "$SEEDS"); do
	for p in saturate2:2 cross2:2 overfit2:2 saturate3:3 cross3:3 overfit3:3; do
		name=${p%%:*} dim=${p##*:} f=$OUT/${p%%:*}-s$s.jsonl
		[ -s "$f" ] && continue
		if "$BOTORCH_SH" --problem cmd --cmd "$OUT/tesbo-host eval --objective curve/$name --plugins $PWD/plugins --seed $s" \
			--acq qlogei --init $((2 * dim)) --iters "$ITERS" --seed "$s" --threads 1 >"$f.tmp" 2>"$OUT/$name-s$s.err"; then
			mv "$f.tmp" "$f"
		else
			rm -f "$f.tmp"
			echo "botorch.sh: curve/$name seed $s failed (see $OUT/$name-s$s.err)" >&2
		fi
	done
done

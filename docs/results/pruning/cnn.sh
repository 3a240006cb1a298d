#!/bin/sh
# cnn.sh measures early stopping on the CNN plugin (issue 32's second
# suite): the default acquisition, batch 1, once training every trial to
# its last epoch and once with each pruner, on real Fashion-MNIST, then
# writes the table of cnn_table.py.
#
#	docs/results/pruning/cnn.sh [OUT]
#
# The space is the paper's with the architecture pinned (--fix filters=32
# --fix dense_units=256): the five training hyper-parameters stay free, and
# an epoch costs about 3 s on one core, where the paper's space holds
# networks taking minutes. Every evaluation trains on the first 2,000
# training images for 6 epochs and reports its accuracy on the first 1,000
# test images after each epoch (the value the pruners compare and the
# study maximizes; its standard error is about 1.3 points at 80 %).
# Full training gets 5 initial points and 15 iterations (120 epochs); the
# pruned runs and multi-fidelity TES (`mf`: the default acquisition
# choosing each evaluation's epochs, --multi-fidelity) get 45 iterations,
# and all are compared at equal epochs.
#
# Per-run resumable: a run whose trials file exists is skipped; an
# interrupted run resumes from its database.
#
# Environment:
#   SEEDS    number of seeds, study seeds 1..SEEDS (default 3, at most 10)
#   METHODS  space-separated subset of: full median asha hyperband mf
#            (default "full median asha hyperband mf")
#   BIN      where tesbo-host is built (default OUT/tesbo-host)
#   DEST     the table's file (default docs/results/pruning/cnn.md)
# OUT (made absolute; default $TMPDIR/tesbo-cnn-pruning) holds the runs.
# Each run's host and plugin use one core (GOMAXPROCS=1).
set -eu
OUT=${1:-${TMPDIR:-/tmp}/tesbo-cnn-pruning}
mkdir -p "$OUT/runs"
OUT=$(cd "$OUT" && pwd)
cd "$(dirname "$0")/../../.."
SEEDS=${SEEDS:-3}
METHODS=${METHODS:-full median asha hyperband mf}
BIN=${BIN:-$OUT/tesbo-host}
DEST=${DEST:-docs/results/pruning/cnn.md}
case "$SEEDS" in '' | *[!0-9]*) echo "cnn.sh: SEEDS=$SEEDS, want a whole number from 1 to 10" >&2; exit 2 ;; esac
[ "$SEEDS" -ge 1 ] && [ "$SEEDS" -le 10 ] || { echo "cnn.sh: SEEDS=$SEEDS, want 1 to 10 (each seed takes about 45 minutes on one core)" >&2; exit 2; }
for m in $METHODS; do
	case "$m" in full | median | asha | hyperband | mf) ;; *) echo "cnn.sh: METHODS holds '$m', want full, median, asha, hyperband or mf" >&2; exit 2 ;; esac
done
go build -o "$BIN" ./cmd/tesbo-host

seed=1
while [ "$seed" -le "$SEEDS" ]; do
	for m in $METHODS; do
		out="$OUT/runs/$m-$seed.jsonl"
		[ -s "$out" ] && continue
		db="$OUT/runs/$m-$seed.db"
		iters=45
		case "$m" in
		full) iters=15 flags="" ;;
		median) flags="--pruner median --pruner-startup 5 --pruner-model last" ;;
		asha) flags="--pruner asha --pruner-min-step 1 --pruner-eta 3 --pruner-model last" ;;
		hyperband) flags="--pruner hyperband --pruner-min-step 1 --pruner-eta 3 --pruner-model last" ;;
		mf) flags="--multi-fidelity" ;;
		esac
		if [ -e "$db" ]; then
			# Also extends a finished study to the iterations above.
			GOMAXPROCS=1 "$BIN" resume --db "$db" --study cnn --plugins ./plugins --iters "$iters" --log-level warn >/dev/null
		else
			# shellcheck disable=SC2086 # flags is a list of words
			GOMAXPROCS=1 "$BIN" run --objective cnn --plugins ./plugins --db "$db" --study cnn --seed "$seed" \
				--init 5 --batch 1 --parallel 1 --iters "$iters" $flags \
				--fix filters=32 --fix dense_units=256 \
				--param train_size=2000 --param test_size=1000 --param epochs=6 --param budget=10m \
				--log-level warn >/dev/null
		fi
		"$BIN" trials --db "$db" --study cnn --format json >"$out.tmp"
		mv "$out.tmp" "$out"
	done
	seed=$((seed + 1))
done
python3 docs/results/pruning/cnn_table.py "$OUT/runs" >"$DEST"
echo "cnn.sh: wrote $DEST" >&2

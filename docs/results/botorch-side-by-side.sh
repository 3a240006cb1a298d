#!/bin/sh
# botorch-side-by-side.sh runs tesbo and BoTorch on the same problems in one
# session, seed by seed and alternating sides, so that the machine's load
# affects both alike, then writes docs/results/botorch/table.md and copies
# the raw per-run data beside it (tesbo's runs.csv per configuration,
# BoTorch's JSONL per run).
#
#	BOTORCH=/path/to/botorch.sh docs/results/botorch-side-by-side.sh [OUT]
#
# BOTORCH is a script that runs BoTorch's side of the protocol for one
# problem, acquisition and seed, one JSON line per BO iteration (with
# immediate_regret, best_true, propose_seconds, fit_seconds, and for the
# user's rule user_true: the noise-free value of its evaluated trial with the
# best observed value); it is not part
# of this repository. The protocol on both sides: maximize negated Branin,
# Hartmann-3 and Hartmann-6 on the unit cube; max(2, |B|) initial points;
# Gaussian observation noise of variance 1e-4; a Matérn-5/2 ARD GP with
# inferred noise; β = 2 for UCB; regrets noise-free. Three rules are reported:
#   user   the noise-free regret of the evaluated trial with the best
#          observed value (what a user of a black box keeps): tesbo's
#          best_eval_regret, BoTorch's from user_true (a dash in the table
#          when its runner does not print it);
#   oracle the noise-free regret of the evaluated trial with the best
#          noise-free value: BoTorch's best_true, tesbo's best_true_regret;
#   model  the noise-free regret of the evaluated point with the largest
#          posterior mean (BoTorch's recommendation; tesbo --recommend
#          evaluated, or with RECOMMEND=refine the maximizer of the
#          posterior mean over the whole space, the paper's rule).
#
# Interleaving: for every seed and configuration, tesbo's first acquisition,
# then BoTorch's first, tesbo's second, BoTorch's second, ...; each runs on
# one thread (GOMAXPROCS=1 and one bench job for tesbo, --threads 1 for
# BoTorch).
#
# Environment: SEEDS (default "0 1 2 3 4 5 6 7 8 9"), TESBO_ACQS_Q1
# (tes,tes-ep,ei), TESBO_ACQS_Q4 (tes,tes-ep,qei,ucb), BOTORCH_ACQS_Q1
# (qlogei qei), BOTORCH_ACQS_Q4 (qucb qlogei qei), CONFIGS (the problem
# configurations, default "branin:1:30 hartmann3:1:30 hartmann6:4:10
# hartmann6:4:30" as problem:batch:iterations), RECOMMEND (evaluated),
# DEST (docs/results/botorch). Resumable: finished runs of either side are
# kept in OUT (default out/bench/botorch).
set -eu
cd "$(dirname "$0")/../.."
OUT=${1:-out/bench/botorch}
BOTORCH=${BOTORCH:-}
RECOMMEND=${RECOMMEND:-evaluated}
DEST=${DEST:-docs/results/botorch}
BIN=${BIN:-/tmp/tesbo-host}
SEEDS=${SEEDS:-0 1 2 3 4 5 6 7 8 9}
TESBO_ACQS_Q1=${TESBO_ACQS_Q1:-tes,tes-ep,ei}
TESBO_ACQS_Q4=${TESBO_ACQS_Q4:-tes,tes-ep,qei,ucb}
BOTORCH_ACQS_Q1=${BOTORCH_ACQS_Q1:-qlogei qei}
BOTORCH_ACQS_Q4=${BOTORCH_ACQS_Q4:-qucb qlogei qei}
CONFIGS=${CONFIGS:-branin:1:30 hartmann3:1:30 hartmann6:4:10 hartmann6:4:30}
[ -x "$BOTORCH" ] || { echo "botorch-side-by-side.sh: BoTorch's runner $BOTORCH is not an executable file: set BOTORCH to the script that runs BoTorch's side" >&2; exit 2; }
mkdir -p "$OUT"
go build -o "$BIN" ./cmd/tesbo-host
export GOMAXPROCS=1 OMP_NUM_THREADS=1 # one thread each

# nth N LIST: the N-th (1-based) word of LIST (commas count as spaces), or "".
nth() { echo "$2" | tr ', ' '\n\n' | grep . | sed -n "${1}p"; }

n=0
for seed in $SEEDS; do
	n=$((n + 1)) # tesbo's bench runs seed indices 0..n-1 and skips finished ones
	for cfg in $CONFIGS; do
		problem=${cfg%%:*}
		rest=${cfg#*:}
		batch=${rest%%:*}
		iters=${rest#*:}
		if [ "$batch" = 1 ]; then tacqs=$TESBO_ACQS_Q1 bacqs=$BOTORCH_ACQS_Q1; else tacqs=$TESBO_ACQS_Q4 bacqs=$BOTORCH_ACQS_Q4; fi
		dir="$OUT/tesbo-$problem-q$batch-i$iters"
		k=1
		while [ -n "$(nth $k "$tacqs")$(nth $k "$bacqs")" ]; do
			a=$(nth $k "$tacqs")
			if [ -n "$a" ]; then
				"$BIN" bench --problems "synthetic/$problem" --acqs "$a" --batch "$batch" --seeds "$n" \
					--iters "$iters" --kernel matern52 --init 2 --init-batch --ucb-beta 2 --recommend "$RECOMMEND" \
					--jobs 1 --out "$dir" --log-level error >/dev/null
			fi
			a=$(nth $k "$bacqs")
			f="$OUT/botorch-$problem-q$batch-i$iters-$a-s$seed.jsonl"
			if [ -n "$a" ] && [ ! -s "$f" ]; then
				"$BOTORCH" --problem "$problem" --acq "$a" --batch "$batch" --iters "$iters" --seed "$seed" \
					--threads 1 >"$f.tmp" 2>>"$OUT/botorch.log" && mv "$f.tmp" "$f"
			fi
			k=$((k + 1))
		done
	done
done
# One bench over all of a configuration's acquisitions (every run complete,
# so it only rewrites runs.csv with all of them), then the raw data and the
# table into DEST.
mkdir -p "$DEST"
for cfg in $CONFIGS; do
	problem=${cfg%%:*}
	rest=${cfg#*:}
	batch=${rest%%:*}
	iters=${rest#*:}
	if [ "$batch" = 1 ]; then tacqs=$TESBO_ACQS_Q1; else tacqs=$TESBO_ACQS_Q4; fi
	dir="$OUT/tesbo-$problem-q$batch-i$iters"
	"$BIN" bench --problems "synthetic/$problem" --acqs "$tacqs" --batch "$batch" --seeds "$n" \
		--iters "$iters" --kernel matern52 --init 2 --init-batch --ucb-beta 2 --recommend "$RECOMMEND" \
		--jobs 1 --out "$dir" --log-level error >/dev/null
	cp "$dir/runs.csv" "$DEST/tesbo-$problem-q$batch-i$iters.csv"
done
cp "$OUT"/botorch-*.jsonl "$DEST/"
python3 docs/results/botorch_table.py "$OUT" >"$DEST/table.md"
echo "wrote $DEST/table.md"

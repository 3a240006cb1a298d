#!/bin/sh
# iteration-time.sh measures issue 28's speed target — a whole iteration
# (GP fit + proposal) of the default `tes` at least 5× faster than BoTorch
# qLogEI's at n ≤ 200 — and writes the table of iteration_time_table.py.
#
#	BOTORCH_SH=/path/to/botorch.sh docs/results/broad/iteration-time.sh [OUT]
#
# For every problem and seed, tesbo's run (`tesbo-host bench`, one job,
# GOMAXPROCS=1) and BoTorch's (its runner, --threads 1) run at the same
# time, one core each, so that the machine's load falls on both alike.
# Both start from 2 uniform initial points (BoTorch's protocol), observe
# with noise variance 1e-4 and go on, one point per iteration, until N
# evaluations. Both record per iteration the seconds of the fit and of the
# proposal: tesbo's runs.csv (fit_s, propose_s, evaluations), BoTorch's
# JSON lines (fit_seconds, propose_seconds, n_evals).
#
# Per-file resumable: a pair whose two files exist and are non-empty is
# skipped; a failed side leaves no file and the pair is run again.
#
# Environment:
#   SEEDS     number of seeds, indices 0..SEEDS-1 (default 2, at most 20)
#   N         evaluations per run (default 200)
#   PROBLEMS  space-separated names to keep (default all three below)
#   BIN       where tesbo-host is built (default OUT/tesbo-host)
#   DEST      the table's file (default docs/results/broad/iteration-time.md)
# OUT (made absolute; default $TMPDIR/tesbo-iteration-time) holds the runs.
set -eu
OUT=${1:-${TMPDIR:-/tmp}/tesbo-iteration-time}
mkdir -p "$OUT/runs"
OUT=$(cd "$OUT" && pwd)
cd "$(dirname "$0")/../../.."
BOTORCH_SH=${BOTORCH_SH:-}
SEEDS=${SEEDS:-2}
N=${N:-200}
PROBLEMS=${PROBLEMS:-}
BIN=${BIN:-$OUT/tesbo-host}
DEST=${DEST:-docs/results/broad/iteration-time.md}
[ -x "$BOTORCH_SH" ] || { echo "iteration-time.sh: set BOTORCH_SH to BoTorch's runner script (got '$BOTORCH_SH', not an executable file)" >&2; exit 2; }
case "$SEEDS" in '' | *[!0-9]*) echo "iteration-time.sh: SEEDS=$SEEDS, want a whole number from 1 to 20" >&2; exit 2 ;; esac
[ "$SEEDS" -ge 1 ] && [ "$SEEDS" -le 20 ] || { echo "iteration-time.sh: SEEDS=$SEEDS, want 1 to 20 (each seed takes about 16 minutes)" >&2; exit 2; }
case "$N" in '' | *[!0-9]*) echo "iteration-time.sh: N=$N, want a whole number from 10 to 500" >&2; exit 2 ;; esac
[ "$N" -ge 10 ] && [ "$N" -le 500 ] || { echo "iteration-time.sh: N=$N, want 10 to 500" >&2; exit 2; }
go build -o "$BIN" ./cmd/tesbo-host
ITERS=$((N - 2))

# name, tesbo's problem, BoTorch's problem and flags (d = 2, 6, 8).
cat >"$OUT/problems.tsv" <<'TSV'
branin	synthetic/branin	branin
hartmann6	synthetic/hartmann6	hartmann6
griewank8	synthetic/griewank:dim=8	botorch:Griewank --dim 8
TSV

seed=0
while [ "$seed" -lt "$SEEDS" ]; do
	while IFS='	' read -r name tp bp; do
		if [ -n "$PROBLEMS" ]; then
			case " $PROBLEMS " in *" $name "*) ;; *) continue ;; esac
		fi
		dir="$OUT/runs/$name"
		mkdir -p "$dir"
		tf="$dir/tesbo-s$seed.csv"
		bf="$dir/botorch-s$seed.jsonl"
		if [ -s "$tf" ] && [ -s "$bf" ]; then continue; fi
		echo "iteration-time.sh: $name seed $seed" >&2
		if [ ! -s "$tf" ]; then
			(
				b="$OUT/bench/$name" # earlier seeds' runs there are finished and skipped
				GOMAXPROCS=1 "$BIN" bench --problems "$tp" --acqs tes --seeds $((seed + 1)) --init 2 --iters "$ITERS" \
					--noise-var 1e-4 --jobs 1 --out "$b" --log-level error >/dev/null &&
					awk -F, -v s="$seed" 'NR == 1 || $4 == s' "$b/runs.csv" >"$tf.tmp" && mv "$tf.tmp" "$tf"
			) &
		fi
		if [ ! -s "$bf" ]; then
			# shellcheck disable=SC2086 # $bp is the problem and its flags
			"$BOTORCH_SH" --problem $bp --acq qlogei --init 2 --iters "$ITERS" --seed "$seed" \
				--noise-var 1e-4 --threads 1 >"$bf.tmp" 2>"$dir/botorch-s$seed.log" && mv "$bf.tmp" "$bf" || rm -f "$bf.tmp"
		fi
		wait
	done <"$OUT/problems.tsv"
	seed=$((seed + 1))
done
python3 docs/results/broad/iteration_time_table.py "$OUT/runs" >"$DEST"
echo "iteration-time.sh: wrote $DEST" >&2

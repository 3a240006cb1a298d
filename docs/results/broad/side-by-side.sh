#!/bin/sh
# side-by-side.sh runs tesbo's bench methods and BoTorch on the problems of
# the broad suite (docs/results/broad/README.md), seed by seed and
# alternating sides so that the machine's load affects both alike, and
# writes the table of docs/results/broad/side_by_side_table.py.
#
#	BOTORCH_SH=/path/to/botorch.sh docs/results/broad/side-by-side.sh [OUT]
#
# BOTORCH_SH is BoTorch's runner (not part of this repository): it takes
# --problem cmd --cmd 'COMMAND' and talks to the command over JSON lines;
# the command here is 'tesbo-host eval --objective LABEL --seed SEED', which
# serves tesbo's problem in tesbo's unit-cube coordinates and sign, with the
# noise a study sees. It prints one JSON line per BO iteration with
# best_observed_regret (the user's rule). tesbo's side is 'tesbo-host bench'
# on the same problem, initial design size and iterations, one run at a
# time; each run's rows of runs.csv are exported as JSON lines with the same
# keys.
#
# Per-file resumable: every run writes OUT/runs/<slug>/<side>-<acq>-s<seed>.jsonl
# (slug: the label with / and : as _, = dropped) and a run whose file exists
# and is non-empty is skipped; a run that fails leaves no file (BoTorch's
# runner stops at the first {"error": ...} reply, so it cannot run
# user/fail2 and user/fail4, whose failing regions are part of the problem)
# and is retried next time. Interleaving: for every seed and problem,
# tesbo's first method, BoTorch's first, tesbo's second, ...; one thread
# each (GOMAXPROCS=1 and one bench job, --threads 1 for BoTorch).
#
# Environment:
#   SEEDS           number of seeds, indices 0..SEEDS-1 (default 10); seed i
#                   is bench's run index i, BoTorch's --seed i and eval's --seed i
#   HALF            tune or held-out: one half only (default both)
#   PROBLEMS        space-separated labels to keep from the broad suite's list
#                   (default all), e.g. "synthetic/shekel user/hpo4"
#   BBOB_DIMS       BBOB dimensions (default 2,5); BBOB_INSTANCES (default 1,6)
#   ITERS           BO iterations for every problem (default: each its budget)
#   TESBO_ACQS      tesbo's methods (default "tes ei random"); TESBO_FLAGS extra bench flags
#   BOTORCH_ACQS    BoTorch's methods (default "qlogei")
#   BIN             where tesbo-host is built (default OUT/tesbo-host)
#   DEST            where the table goes (default docs/results/broad/side-by-side)
# OUT (made absolute; default $TMPDIR/tesbo-broad-side-by-side) holds the runs.
set -eu
OUT=${1:-${TMPDIR:-/tmp}/tesbo-broad-side-by-side}
mkdir -p "$OUT/runs"
OUT=$(cd "$OUT" && pwd)
cd "$(dirname "$0")/../../.."
BOTORCH_SH=${BOTORCH_SH:-}
SEEDS=${SEEDS:-10}
HALF=${HALF:-}
PROBLEMS=${PROBLEMS:-}
BBOB_DIMS=${BBOB_DIMS:-2,5}
BBOB_INSTANCES=${BBOB_INSTANCES:-1,6}
ITERS=${ITERS:-}
TESBO_ACQS=${TESBO_ACQS:-tes ei random}
TESBO_FLAGS=${TESBO_FLAGS:-}
BOTORCH_ACQS=${BOTORCH_ACQS:-qlogei}
BIN=${BIN:-$OUT/tesbo-host}
DEST=${DEST:-docs/results/broad/side-by-side}
TABLE=docs/results/broad/side_by_side_table.py
[ -x "$BOTORCH_SH" ] || { echo "side-by-side.sh: set BOTORCH_SH to BoTorch's runner script (got '$BOTORCH_SH', not an executable file)" >&2; exit 2; }
go build -o "$BIN" ./cmd/tesbo-host
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
export GOMAXPROCS=1 OMP_NUM_THREADS=1 # one thread each

# The problems with their halves and budgets (label, half, init, iters).
half=""
[ -z "$HALF" ] || half="--half $HALF"
# shellcheck disable=SC2086
"$BIN" bench --suite broad --list $half --bbob-dims "$BBOB_DIMS" --bbob-instances "$BBOB_INSTANCES" >"$OUT/all.tsv"
if [ -n "$PROBLEMS" ]; then
	: >"$OUT/problems.tsv"
	for p in $PROBLEMS; do
		awk -F '\t' -v p="$p" '$1 == p' "$OUT/all.tsv" | grep . >>"$OUT/problems.tsv" ||
			{ echo "side-by-side.sh: $p is not a problem of the broad suite (see $OUT/all.tsv)" >&2; exit 2; }
	done
else
	cp "$OUT/all.tsv" "$OUT/problems.tsv"
fi
if [ -n "$ITERS" ]; then
	awk -F '\t' -v OFS='\t' -v n="$ITERS" '{ $4 = n; print }' "$OUT/problems.tsv" >"$OUT/problems.tmp" && mv "$OUT/problems.tmp" "$OUT/problems.tsv"
fi

# nth N LIST: the N-th (1-based) word of LIST, or "".
nth() { echo "$2" | tr ' ' '\n' | grep . | sed -n "${1}p"; }

# tesbo LABEL SLUG INIT ITERS ACQ SEED: one bench run, exported to its file.
tesbo() {
	f="$OUT/runs/$2/tesbo-$5-s$6.jsonl"
	[ ! -s "$f" ] || return 0
	dir="$OUT/bench/$2-$5"
	# shellcheck disable=SC2086
	"$BIN" bench --problems "$1" --acqs "$5" --seeds $(($6 + 1)) --init "$3" --iters "$4" --jobs 1 \
		--out "$dir" --log-level error $TESBO_FLAGS </dev/null >/dev/null 2>>"$OUT/tesbo.log" || return 0
	python3 "$TABLE" export "$dir/runs.csv" "$5" "$6" </dev/null >"$f.tmp" && [ -s "$f.tmp" ] && mv "$f.tmp" "$f" || true
}

# botorch LABEL SLUG INIT ITERS ACQ SEED: one BoTorch run on 'tesbo-host eval'.
botorch() {
	f="$OUT/runs/$2/botorch-$5-s$6.jsonl"
	[ ! -s "$f" ] || return 0
	"$BOTORCH_SH" --problem cmd --cmd "$BIN eval --objective '$1' --seed $6" --acq "$5" --init "$3" --iters "$4" \
		--seed "$6" --threads 1 >"$f.tmp" 2>>"$OUT/botorch.log" && [ -s "$f.tmp" ] && mv "$f.tmp" "$f" || true
}

seed=0
while [ "$seed" -lt "$SEEDS" ]; do
	while IFS="$(printf '\t')" read -r label _ init iters; do
		slug=$(echo "$label" | tr '/:' '__' | tr -d '=')
		mkdir -p "$OUT/runs/$slug"
		k=1
		while [ -n "$(nth $k "$TESBO_ACQS")$(nth $k "$BOTORCH_ACQS")" ]; do
			a=$(nth $k "$TESBO_ACQS")
			[ -z "$a" ] || tesbo "$label" "$slug" "$init" "$iters" "$a" "$seed"
			a=$(nth $k "$BOTORCH_ACQS")
			[ -z "$a" ] || botorch "$label" "$slug" "$init" "$iters" "$a" "$seed" </dev/null
			k=$((k + 1))
		done
	done <"$OUT/problems.tsv"
	seed=$((seed + 1))
done
mkdir -p "$DEST"
TESBO_ACQS=$TESBO_ACQS BOTORCH_ACQS=$BOTORCH_ACQS python3 "$TABLE" table "$OUT" >"$DEST/table.md"
echo "wrote $DEST/table.md"

#!/bin/sh
# side-by-side.sh runs tesbo's several-output acquisitions (bench) and
# BoTorch's (its runner's mo: and con: modes) on the shipped several-output
# problems of issue 31, seed by seed and alternating sides so that the
# machine's load affects both alike, and writes the table of mo_table.py.
#
#	BOTORCH_SH=/path/to/botorch.sh docs/results/issue31/side-by-side.sh [OUT]
#
# BOTORCH_SH is BoTorch's runner (not part of this repository): with
# --problem mo:NAME it prints per BO iteration the hypervolume regret of
# the noise-free evaluated front above the class's reference point
# (hv_regret, log_hv_regret), with --problem con:NAME the best feasible
# noise-free objective and its regret. tesbo's side is 'tesbo-host bench'
# on synthetic/<name> (the same functions, bounds and reference points; see
# docs/results/issue31/README.md), whose runs.csv has the same quantities
# (bench/multi.go: best_true_regret is the oracle rule BoTorch reports,
# best_eval_regret the user's rule); each run is exported as JSON lines.
# Both sides: the same initial design size (2(d + 1) uniform or Latin
# hypercube points, each side its own), the same iterations and batch
# size, noise variance 1e-4 on every output.
#
# Per-file resumable: every run writes OUT/q<Q>/<name>/<side>-<acq>-s<seed>.jsonl
# and a run whose file exists and is non-empty is skipped; a failed run
# leaves no file and is retried next time. Interleaving: for every seed and
# problem, tesbo's first method, BoTorch's first, tesbo's second, ...; one
# thread each (GOMAXPROCS=1 and one bench job; --threads 1 for BoTorch).
#
# Environment:
#   Q               points per iteration (default 1); BoTorch's q > 1 is its
#                   joint qLogNEHVI / qLogNEI (25–45 s per proposal), so run Q=4
#                   after Q=1
#   SEEDS           number of seeds, indices 0..SEEDS-1 (default 10); seed i is
#                   bench's run index i and BoTorch's --seed i
#   PROBLEMS        space-separated names to keep (default all 13 below)
#   ITERS           BO iterations (default 25 for Q=1, 6 for Q=4)
#   TESBO_MO_ACQS   tesbo's methods on multi-objective problems (default "tes";
#                   also nehvi parego); TESBO_CON_ACQS on constrained ones
#                   (default "tes"; also cei nehvi)
#   BOTORCH_MO_ACQS (default "qlognehvi qnparego"); BOTORCH_CON_ACQS (default "qlognei")
#   BIN             where tesbo-host is built (default OUT/tesbo-host)
#   DEST            where the table goes (default docs/results/issue31/side-by-side)
# OUT (made absolute; default $TMPDIR/tesbo-issue31-side-by-side) holds the runs.
set -eu
OUT=${1:-${TMPDIR:-/tmp}/tesbo-issue31-side-by-side}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
cd "$(dirname "$0")/../../.."
BOTORCH_SH=${BOTORCH_SH:-}
Q=${Q:-1}
SEEDS=${SEEDS:-10}
PROBLEMS=${PROBLEMS:-}
if [ "$Q" = 1 ]; then ITERS=${ITERS:-25}; else ITERS=${ITERS:-6}; fi
TESBO_MO_ACQS=${TESBO_MO_ACQS:-tes}
TESBO_CON_ACQS=${TESBO_CON_ACQS:-tes}
BOTORCH_MO_ACQS=${BOTORCH_MO_ACQS:-qlognehvi qnparego}
BOTORCH_CON_ACQS=${BOTORCH_CON_ACQS:-qlognei}
BIN=${BIN:-$OUT/tesbo-host}
DEST=${DEST:-docs/results/issue31/side-by-side}
TABLE=docs/results/issue31/mo_table.py
[ -x "$BOTORCH_SH" ] || { echo "side-by-side.sh: set BOTORCH_SH to BoTorch's runner script (got '$BOTORCH_SH', not an executable file)" >&2; exit 2; }
case "$Q" in 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8) ;; *) echo "side-by-side.sh: Q=$Q, want 1 to 8" >&2; exit 2 ;; esac
go build -o "$BIN" ./cmd/tesbo-host
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
export GOMAXPROCS=1 OMP_NUM_THREADS=1 # one thread each

# The problems: tesbo's name, kind, BoTorch's problem and flags (- for none), initial design 2(d + 1).
cat >"$OUT/problems.tsv" <<'TSV'
branincurrin	mo	mo:BraninCurrin	-	6
dtlz2	mo	mo:DTLZ2	--dim 6 --num-objectives 2	14
zdt1	mo	mo:ZDT1	--dim 4	10
zdt2	mo	mo:ZDT2	--dim 4	10
zdt3	mo	mo:ZDT3	--dim 4	10
vehiclesafety	mo	mo:VehicleSafety	-	12
constrainedgramacy	con	con:ConstrainedGramacy	-	6
constrainedhartmann	con	con:ConstrainedHartmann	--dim 6	14
constrainedhartmannsmooth	con	con:ConstrainedHartmannSmooth	--dim 6	14
pressurevessel	con	con:PressureVessel	-	10
weldedbeam	con	con:WeldedBeamSO	-	10
tensioncompressionstring	con	con:TensionCompressionString	-	8
speedreducer	con	con:SpeedReducer	-	16
TSV
if [ -n "$PROBLEMS" ]; then
	for p in $PROBLEMS; do
		grep -q "^$p	" "$OUT/problems.tsv" || { echo "side-by-side.sh: $p is not one of $(cut -f1 "$OUT/problems.tsv" | tr '\n' ' ')" >&2; exit 2; }
	done
fi

# nth N LIST: the N-th (1-based) word of LIST, or "".
nth() { echo "$2" | tr ' ' '\n' | grep . | sed -n "${1}p"; }

RUNS=$OUT/q$Q
mkdir -p "$RUNS"
if [ -s "$RUNS/iters" ] && [ "$(cat "$RUNS/iters")" != "$ITERS" ]; then
	echo "side-by-side.sh: $RUNS holds runs of $(cat "$RUNS/iters") iterations, not ITERS=$ITERS: use another OUT" >&2
	exit 2
fi
echo "$ITERS" >"$RUNS/iters"

# tesbo NAME INIT ACQ SEED: one bench run, exported to its file.
tesbo() {
	f="$RUNS/$1/tesbo-$3-s$4.jsonl"
	[ ! -s "$f" ] || return 0
	dir="$OUT/bench/q$Q/$1-$3"
	"$BIN" bench --problems "synthetic/$1" --acqs "$3" --seeds $(($4 + 1)) --init "$2" --iters "$ITERS" --batch "$Q" \
		--noise-var 1e-4 --jobs 1 --out "$dir" --log-level error </dev/null >/dev/null 2>>"$OUT/tesbo.log" || return 0
	python3 "$TABLE" export "$dir/runs.csv" "$3" "$4" </dev/null >"$f.tmp" && [ -s "$f.tmp" ] && mv "$f.tmp" "$f" || true
}

# botorch NAME PROBLEM FLAGS INIT ACQ SEED: one BoTorch run.
botorch() {
	f="$RUNS/$1/botorch-$5-s$6.jsonl"
	[ ! -s "$f" ] || return 0
	flags=$3
	[ "$flags" != - ] || flags=""
	# shellcheck disable=SC2086
	"$BOTORCH_SH" --problem "$2" $flags --acq "$5" --batch "$Q" --init "$4" --iters "$ITERS" --noise-var 1e-4 \
		--seed "$6" --threads 1 </dev/null >"$f.tmp" 2>>"$OUT/botorch.log" && [ -s "$f.tmp" ] && mv "$f.tmp" "$f" || true
}

seed=0
while [ "$seed" -lt "$SEEDS" ]; do
	while IFS="$(printf '\t')" read -r name kind peer flags init; do
		if [ -n "$PROBLEMS" ] && ! echo " $PROBLEMS " | grep -q " $name "; then continue; fi
		mkdir -p "$RUNS/$name"
		if [ "$kind" = mo ]; then ta=$TESBO_MO_ACQS ba=$BOTORCH_MO_ACQS; else ta=$TESBO_CON_ACQS ba=$BOTORCH_CON_ACQS; fi
		k=1
		while [ -n "$(nth $k "$ta")$(nth $k "$ba")" ]; do
			a=$(nth $k "$ta")
			[ -z "$a" ] || tesbo "$name" "$init" "$a" "$seed"
			a=$(nth $k "$ba")
			[ -z "$a" ] || botorch "$name" "$peer" "$flags" "$init" "$a" "$seed"
			k=$((k + 1))
		done
	done <"$OUT/problems.tsv"
	seed=$((seed + 1))
done
mkdir -p "$DEST"
python3 "$TABLE" table "$OUT" >"$DEST/table.md"
echo "wrote $DEST/table.md"

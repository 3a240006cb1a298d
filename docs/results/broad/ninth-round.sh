#!/bin/sh
# ninth-round.sh re-runs the ninth round's measurements (ninth-round.md):
# tesbo on both halves of the broad suite, BoTorch's qLogEI beside it, and
# the tables. Every step resumes: bench skips finished runs, BoTorch's files
# are kept once they hold their last iteration.
#
#   BOTORCH_SH=/path/to/botorch.sh docs/results/broad/ninth-round.sh OUT
#
# The eighth round's `tes` (the baseline `tes-round8` of the tables: SE
# kernel, output warp fitted to the initial design only) was run in this
# round on the same problems and seeds; the initial-design warp is gone
# from the code, so those runs are kept in finals.csv and not re-made
# here. Without BOTORCH_SH the BoTorch step is skipped.
set -eu
OUT=${1:?usage: ninth-round.sh OUT}
SEEDS=${SEEDS:-10}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
cd "$(dirname "$0")/../../.."
BIN="$OUT/tesbo-host"
go build -o "$BIN" ./cmd/tesbo-host
"$BIN" bench --suite broad --list >"$OUT/problems.tsv"

# 1. tesbo: the default (Matérn-5/2), EI and random search under the same
#    seeds, then EI with the eighth round's kernel for comparison.
for half in tune held-out; do
	"$BIN" bench --suite broad --half "$half" --acqs tes,ei,random --seeds "$SEEDS" --out "$OUT/$half" --log-level warn
	"$BIN" bench --suite broad --half "$half" --acqs ei --kernel se --seeds "$SEEDS" --out "$OUT/$half-se" --log-level warn
done

# 2. BoTorch qLogEI at its defaults, one thread: its own test functions for
#    BoTorch's, the BBOB problems through 'tesbo-host eval'. Held-out half
#    first (BoTorch's functions, then BBOB at d = 2), seed-major.
if [ -n "${BOTORCH_SH:-}" ]; then
	mkdir -p "$OUT/botorch"
	iters() { if [ "$1" -le 3 ]; then echo 25; elif [ "$1" -le 6 ]; then echo 35; else echo 45; fi; }
	run() { # stem dim seed runner-args...
		f="$OUT/botorch/$1-qlogei-s$3.jsonl"
		it=$(iters "$2")
		if [ -s "$f" ] && [ "$(wc -l <"$f")" -ge "$it" ]; then return; fi
		stem=$1 d=$2 s=$3
		shift 3
		"$BOTORCH_SH" "$@" --acq qlogei --iters "$it" --seed "$s" --threads 1 >"$f.tmp" && mv "$f.tmp" "$f"
	}
	fn() { # Class dim fixed? seed
		if [ "$3" = fixed ]; then run "bt-$1-d$2" "$2" "$4" --problem "botorch:$1"; else run "bt-$1-d$2" "$2" "$4" --problem "botorch:$1" --dim "$2"; fi
	}
	for s in $(seq 0 $((SEEDS - 1))); do
		fn Bukin 2 fixed "$s"; fn EggHolder 2 fixed "$s"; fn HolderTable 2 fixed "$s"; fn ThreeHumpCamel 2 fixed "$s"
		fn DixonPrice 4 any "$s"; fn Rastrigin 4 any "$s"; fn DixonPrice 8 any "$s"; fn Rastrigin 8 any "$s"
	done
	for s in $(seq 0 $((SEEDS - 1))); do
		for f in $(seq 1 24); do
			run "bbob-f$f-d2-i6" 2 "$s" --problem cmd --cmd "$BIN eval --objective synthetic/bbob-f$f --param dim=2 --param instance=6 --seed $s"
		done
	done
	for s in $(seq 0 $((SEEDS - 1))); do
		fn Shekel 4 fixed "$s"; fn Cosine8 8 fixed "$s"; fn Beale 2 fixed "$s"; fn DropWave 2 fixed "$s"
		fn Griewank 4 any "$s"; fn Powell 4 any "$s"; fn Griewank 8 any "$s"; fn Powell 8 any "$s"
	done
fi

# 3. The final regrets and the tables.
specs=""
for half in tune held-out; do
	specs="$specs tes=bench:$OUT/$half:tes ei=bench:$OUT/$half:ei random=bench:$OUT/$half:random ei-se=bench:$OUT/$half-se:ei"
	[ -d "$OUT/$half-round8" ] && specs="$specs tes-round8=bench:$OUT/$half-round8:tes"
done
# shellcheck disable=SC2086 # one word per spec
python3 docs/results/broad/finals.py collect "$OUT/problems.tsv" "$OUT/finals.csv" $specs qlogei=botorch:"$OUT/botorch"
python3 docs/results/broad/finals.py table "$OUT/finals.csv" tes tes-round8 ei ei-se random qlogei >"$OUT/tables.md"
FINALS_RULE=paper python3 docs/results/broad/finals.py table "$OUT/finals.csv" tes tes-round8 ei ei-se random qlogei >"$OUT/tables-paper.md"

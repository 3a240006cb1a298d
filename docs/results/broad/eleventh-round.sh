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
# replace `tes` in it.
set -eu
OUT=${1:?usage: eleventh-round.sh OUT}
SEEDS=${SEEDS:-10}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
cd "$(dirname "$0")/../../.."
BIN="$OUT/tesbo-host"
go build -o "$BIN" ./cmd/tesbo-host
"$BIN" bench --suite broad --list >"$OUT/problems.tsv"
for half in tune held-out; do
	"$BIN" bench --suite broad --half "$half" --acqs tes --seeds "$SEEDS" --out "$OUT/$half" --log-level warn
done
# BoTorch's qLogEI on BBOB at d = 5 (held-out instance 6, 35 iterations),
# through 'tesbo-host eval', seed-major, into the committed botorch/ (a
# file is kept once it holds its last iteration). Skipped without
# BOTORCH_SH.
if [ -n "${BOTORCH_SH:-}" ]; then
	for s in $(seq 0 $((SEEDS - 1))); do
		for f in $(seq 1 24); do
			file=docs/results/broad/botorch/bbob-f$f-d5-i6-qlogei-s$s.jsonl
			if [ -s "$file" ] && [ "$(wc -l <"$file")" -ge 35 ]; then continue; fi
			"$BOTORCH_SH" --problem cmd --cmd "$BIN eval --objective synthetic/bbob-f$f --param dim=5 --param instance=6 --seed $s" \
				--acq qlogei --iters 35 --seed "$s" --threads 1 >"$file.tmp" && mv "$file.tmp" "$file"
		done
	done
fi
python3 docs/results/broad/finals.py collect "$OUT/problems.tsv" "$OUT/new.csv" \
	tes=bench:"$OUT/tune":tes tes=bench:"$OUT/held-out":tes qlogei=botorch:docs/results/broad/botorch
F=docs/results/broad/finals.csv
if ! grep -q ',tes-round10,' "$F"; then
	# The first run of this script: the committed `tes` is the tenth round's.
	awk -F, 'BEGIN { OFS = "," } NR > 1 && $3 == "tes" { $3 = "tes-round10" } { print }' "$F" | grep -v ',qlogei,' >"$OUT/old.csv"
else
	grep -v ',tes,' "$F" | grep -v ',qlogei,' >"$OUT/old.csv"
fi
{
	cat "$OUT/old.csv"
	tail -n +2 "$OUT/new.csv"
} >"$OUT/finals.csv"
python3 docs/results/broad/finals.py table "$OUT/finals.csv" tes tes-round10 ei random qlogei >"$OUT/tables.md"
FINALS_RULE=paper python3 docs/results/broad/finals.py table "$OUT/finals.csv" tes tes-round10 ei random qlogei >"$OUT/tables-paper.md"
echo "wrote $OUT/finals.csv, $OUT/tables.md and $OUT/tables-paper.md (copy finals.csv and tables.md into docs/results/broad)"

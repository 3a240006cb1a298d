#!/bin/sh
# thirteenth-round.sh re-runs the thirteenth round's measurements
# (thirteenth-round.md): the new default `tes` (the max-variance query when
# the posterior is sure of x*) on both halves of the broad suite, and the
# tables against the earlier methods. bench skips finished runs, so the
# script resumes.
#
#   docs/results/broad/thirteenth-round.sh OUT
#
# Only `tes` changed this round, so the other methods' final regrets —
# EI, random search, the earlier defaults and BoTorch's qLogEI — are the
# committed finals.csv's, the eleventh round's `tes` is kept there as
# `tes-round11`, and the new default's runs replace `tes`.
set -eu
OUT=${1:?usage: thirteenth-round.sh OUT}
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
python3 docs/results/broad/finals.py collect "$OUT/problems.tsv" "$OUT/new.csv" \
	tes=bench:"$OUT/tune":tes tes=bench:"$OUT/held-out":tes
F=docs/results/broad/finals.csv
if ! grep -q ',tes-round11,' "$F"; then
	# The first run of this script: the committed `tes` is the eleventh round's.
	awk -F, 'BEGIN { OFS = "," } NR > 1 && $3 == "tes" { $3 = "tes-round11" } { print }' "$F" >"$OUT/old.csv"
else
	grep -v ',tes,' "$F" >"$OUT/old.csv"
fi
{
	cat "$OUT/old.csv"
	tail -n +2 "$OUT/new.csv"
} >"$OUT/finals.csv"
python3 docs/results/broad/finals.py table "$OUT/finals.csv" tes tes-round11 ei random qlogei >"$OUT/tables.md"
FINALS_RULE=paper python3 docs/results/broad/finals.py table "$OUT/finals.csv" tes tes-round11 ei random qlogei >"$OUT/tables-paper.md"
echo "wrote $OUT/finals.csv, $OUT/tables.md and $OUT/tables-paper.md (copy finals.csv and tables.md into docs/results/broad)"

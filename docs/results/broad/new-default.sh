#!/bin/sh
# new-default.sh re-runs the default `tes` on both halves of the broad
# suite and merges its final regrets into a copy of the committed
# finals.csv, where the previous `tes` is kept under the name KEEP_AS, then
# writes the tables against the earlier methods. The scripts of the rounds
# that changed the default call it (eleventh-round.sh,
# thirteenth-round.sh). bench skips finished runs, so it resumes.
#
#   docs/results/broad/new-default.sh OUT KEEP_AS [METHOD=SPEC ...]
#
# Each METHOD=SPEC is one more source for 'finals.py collect' (e.g.
# qlogei=botorch:docs/results/broad/botorch); its rows replace METHOD's
# committed ones. SEEDS sets the seeds per problem (default 10). OUT gets
# tesbo-host, the two halves' bench directories, finals.csv, tables.md and
# tables-paper.md.
set -eu
usage="usage: new-default.sh OUT KEEP_AS [METHOD=SPEC ...]"
OUT=${1:?$usage}
KEEP=${2:?$usage}
shift 2
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
	tes=bench:"$OUT/tune":tes tes=bench:"$OUT/held-out":tes "$@"
F=docs/results/broad/finals.csv
if ! grep -q ",$KEEP," "$F"; then
	# The first run of the round's script: the committed `tes` is the one kept.
	awk -F, -v keep="$KEEP" 'BEGIN { OFS = "," } NR > 1 && $3 == "tes" { $3 = keep } { print }' "$F" >"$OUT/old.csv"
else
	grep -v ',tes,' "$F" >"$OUT/old.csv"
fi
for spec in "$@"; do
	grep -v ",${spec%%=*}," "$OUT/old.csv" >"$OUT/old.tmp"
	mv "$OUT/old.tmp" "$OUT/old.csv"
done
{
	cat "$OUT/old.csv"
	tail -n +2 "$OUT/new.csv"
} >"$OUT/finals.csv"
python3 docs/results/broad/finals.py table "$OUT/finals.csv" tes "$KEEP" ei random qlogei >"$OUT/tables.md"
FINALS_RULE=paper python3 docs/results/broad/finals.py table "$OUT/finals.csv" tes "$KEEP" ei random qlogei >"$OUT/tables-paper.md"
echo "wrote $OUT/finals.csv, $OUT/tables.md and $OUT/tables-paper.md (copy finals.csv and tables.md into docs/results/broad)"

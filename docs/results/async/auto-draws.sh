#!/bin/sh
# auto-draws.sh VARIANT: --batch auto runs (batch-max 8, 6 initial points, 8
# iterations) on Hartmann-3 and Hartmann-6, seeds 1-10, one JSONL of --json
# records per run in $OUT. VARIANT names the binary $BIN_DIR/tesbo-ab-VARIANT
# (before: 3f829d8, after: e025335); PLUGINS is the plugins directory.
# Runs already there are skipped.
v=${1:?before or after}
cd "${OUT:?set OUT to a directory for the runs}"
for p in hartmann3 hartmann6; do
  for s in 1 2 3 4 5 6 7 8 9 10; do
    f=$v-$p-s$s.jsonl
    [ -s $f ] && continue
    rm -f $v-$p-s$s.db
    GOMAXPROCS=1 TESBO_PLUGINS="$PLUGINS" nice "$BIN_DIR"/tesbo-ab-$v run --objective synthetic/$p --batch auto --batch-max 8 --init 6 --iters 8 --seed $s --db $v-$p-s$s.db --study s --json > $f.tmp 2>/dev/null && mv $f.tmp $f
    rm -f $v-$p-s$s.db*
  done
done

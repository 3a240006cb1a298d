#!/bin/sh
# user-suite.sh runs the user suite (tesbo-host bench --suite user: 16
# objectives of the kinds users bring, bench/usersuite) and copies its tables
# into docs/results/user-suite/. comparison.md compares the methods under the
# user's rule (the noise-free regret of the best evaluated trial).
#
#	docs/results/user-suite.sh [OUT]    # OUT defaults to /work/bench-out/user-suite
#
# ACQS (default tes,tes-ep,ei,random), SEEDS (10) and JOBS (2) override the
# defaults. Resumable: run it again after an interruption.
set -eu
cd "$(dirname "$0")/../.."
OUT=${1:-/work/bench-out/user-suite}
BIN=${BIN:-/tmp/tesbo-host}
go build -o "$BIN" ./cmd/tesbo-host
"$BIN" bench --suite user --acqs "${ACQS:-tes,tes-ep,ei,random}" --seeds "${SEEDS:-10}" \
	--iters 30 --init 10 --jobs "${JOBS:-2}" --out "$OUT" --log-level error
mkdir -p docs/results/user-suite
cp "$OUT"/summary.md "$OUT"/comparison.md "$OUT"/runs.csv docs/results/user-suite/

#!/bin/sh
# user-suite.sh runs the user suite (tesbo-host bench --suite user: 16
# objectives of the kinds users bring, problems/usersuite) and copies its tables
# into docs/results/user-suite/. comparison.md compares the methods under the
# user's rule (the noise-free regret of the best evaluated trial).
#
#	docs/results/user-suite.sh [OUT]    # OUT defaults to out/bench/user-suite
#
# ACQS (default tes,tes-ep,ei,ucb,ts,mes,random), SEEDS (20) and JOBS (2)
# override the defaults (those of the committed tables). ITERS and INIT
# (default 30 and 10, the committed results') set every problem's budget;
# BUDGET=own gives each problem its own instead
# (usersuite.Budget: 2d initial points, at least 6, and 25/35/45 iterations
# for d ≤ 3/6/12). DEST (docs/results/user-suite) is where the tables go.
# tes-sp is not in the default list: on the shared 2-core machine its
# proposals took 5 s in 4 dimensions and 16 s in 12 (190–770 s per run).
# Resumable: run it again after an interruption.
set -eu
cd "$(dirname "$0")/../.."
OUT=${1:-out/bench/user-suite}
BIN=${BIN:-/tmp/tesbo-host}
DEST=${DEST:-docs/results/user-suite}
budget="--iters ${ITERS:-30} --init ${INIT:-10}"
[ "${BUDGET:-}" = own ] && budget=""
go build -o "$BIN" ./cmd/tesbo-host
# $budget is split into words on purpose.
"$BIN" bench --suite user --kernel se --acqs "${ACQS:-tes,tes-ep,ei,ucb,ts,mes,random}" --seeds "${SEEDS:-20}" \
	$budget --jobs "${JOBS:-2}" --out "$OUT" --log-level "${LOG:-error}"
mkdir -p "$DEST"
cp "$OUT"/summary.md "$OUT"/comparison.md "$OUT"/runs.csv "$DEST"/

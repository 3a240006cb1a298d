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
# `tes-round11`, and the new default's runs replace `tes` (new-default.sh).
set -eu
exec "$(dirname "$0")/new-default.sh" "${1:?usage: thirteenth-round.sh OUT}" tes-round11

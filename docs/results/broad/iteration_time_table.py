"""Table of iteration-time.sh: seconds per BO iteration (GP fit + proposal)
of tesbo's default `tes` and of BoTorch qLogEI, by problem and by the number
of evaluations n after the iteration, and their ratio.

    python3 docs/results/broad/iteration_time_table.py OUT/runs > table.md

OUT/runs/<problem>/tesbo-s<seed>.csv holds rows of tesbo-host bench's
runs.csv (fit_s, propose_s, evaluations); botorch-s<seed>.jsonl BoTorch's
runner's lines (fit_seconds, propose_seconds, n_evals).
"""

import csv
import glob
import json
import os
import statistics
import sys

BINS = [(3, 50), (51, 100), (101, 150), (151, 200), (201, 500)]


def tesbo_rows(path):
    with open(path) as f:
        for r in csv.DictReader(f):
            yield int(r["evaluations"]), float(r["fit_s"]), float(r["propose_s"])


def botorch_rows(path):
    with open(path) as f:
        for line in f:
            r = json.loads(line)
            if "n_evals" in r:
                yield int(r["n_evals"]), float(r["fit_seconds"]), float(r["propose_seconds"])


def load(d, pattern, rows):
    """Per bin, the list of (fit, propose, fit + propose) over every
    iteration of every seed's run; and the number of runs."""
    out = {b: [] for b in BINS}
    files = sorted(glob.glob(os.path.join(d, pattern)))
    for p in files:
        for n, fit, prop in rows(p):
            for b in BINS:
                if b[0] <= n <= b[1]:
                    out[b].append((fit, prop, fit + prop))
    return out, len(files)


def med(xs, i):
    return statistics.median(x[i] for x in xs)


def main():
    if len(sys.argv) != 2 or not os.path.isdir(sys.argv[1]):
        sys.exit("usage: iteration_time_table.py OUT/runs (the runs directory of iteration-time.sh)")
    root = sys.argv[1]
    print("# A whole iteration: tesbo `tes` against BoTorch qLogEI\n")
    print("Made by `docs/results/broad/iteration-time.sh` (both sides at once, one core each, noise")
    print("variance 1e-4, 2 initial points, one point per iteration). Median seconds over the")
    print("iterations of every seed whose number of evaluations n falls in the row's range;")
    print("ratio = BoTorch's iteration ÷ tesbo's (issue 28's target: ≥ 5 at n ≤ 200).\n")
    print("| problem | n | runs (tesbo / BoTorch) | tesbo fit | tesbo proposal | tesbo iteration | BoTorch fit | BoTorch proposal | BoTorch iteration | ratio |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    worst = None
    for prob in sorted(os.listdir(root)):
        d = os.path.join(root, prob)
        if not os.path.isdir(d):
            continue
        t, nt = load(d, "tesbo-s*.csv", tesbo_rows)
        b, nb = load(d, "botorch-s*.jsonl", botorch_rows)
        for rng in BINS:
            if not t[rng] or not b[rng]:
                continue
            ti, bi = med(t[rng], 2), med(b[rng], 2)
            ratio = bi / ti
            if rng[1] <= 200:
                worst = ratio if worst is None else min(worst, ratio)
            print(f"| {prob} | {rng[0]}–{rng[1]} | {nt} / {nb} | {med(t[rng], 0):.3f} | {med(t[rng], 1):.3f} | {ti:.3f} "
                  f"| {med(b[rng], 0):.3f} | {med(b[rng], 1):.3f} | {bi:.3f} | {ratio:.1f}× |")
    if worst is not None:
        print(f"\nSmallest ratio over the rows with n ≤ 200: {worst:.1f}× (target ≥ 5×).")


if __name__ == "__main__":
    main()

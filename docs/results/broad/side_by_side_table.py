#!/usr/bin/env python3
"""side_by_side_table.py — the per-run files and the table of side-by-side.sh.

  side_by_side_table.py export RUNS_CSV ACQ SEED   one JSON line per BO iteration of
      tesbo's run (ACQ, seed index SEED) from a bench runs.csv, with the keys of
      BoTorch's runner: iter, best_observed_regret (the user's rule: the noise-free
      regret of the trial with the best observed value), immediate_regret,
      propose_seconds, fit_seconds; nothing when the run is not in the file.
  side_by_side_table.py table OUT                  the markdown table of OUT: per half
      of the held-out protocol (OUT/problems.tsv: label, half, init, iters, from
      'tesbo-host bench --list'), per problem and method, the median over seeds of
      the final log10 regret by the user's rule ± the bootstrap standard error of the
      median (botorch_table.py's), and the number of seeds; then, per half, how often
      the first tesbo method's median (TESBO_ACQS's order: the default first) is ≤ the
      first BoTorch method's (BOTORCH_ACQS's), and how often it is behind beyond twice
      their combined standard error.

Per-run files: OUT/runs/<slug>/tesbo-<acq>-s<seed>.jsonl and .../botorch-<acq>-s<seed>.jsonl,
slug = the label with '/' and ':' as '_' and '=' dropped. A run counts when its file has
the problem's last iteration.
"""
import csv
import glob
import json
import math
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from botorch_table import boot_se, log10  # noqa: E402  (the side-by-side conventions)


def slug(label):
    return label.replace("/", "_").replace(":", "_").replace("=", "")


def export(runs_csv, acq, seed):
    with open(runs_csv) as f:
        rows = [r for r in csv.DictReader(f) if r["acquisition"] == acq and r["seed"] == seed]
    for r in sorted(rows, key=lambda r: int(r["iteration"])):
        num = lambda k: float(r[k]) if r.get(k) not in (None, "") else None  # noqa: E731
        print(json.dumps({"iter": int(r["iteration"]), "n_evals": int(r["evaluations"]),
                          "best_observed_regret": num("best_eval_regret"), "immediate_regret": num("regret"),
                          "propose_seconds": num("propose_s"), "fit_seconds": num("fit_s"),
                          "problem": r["problem"], "acq": acq, "seed": int(seed)}))


def final(path, iters):
    """log10 of the user's-rule regret at iteration iters, or None."""
    with open(path) as f:
        for line in f:
            if line.strip():
                rec = json.loads(line)
                if rec.get("iter") == iters and rec.get("best_observed_regret") is not None:
                    return log10(max(rec["best_observed_regret"], 0))
    return None


def table(out):
    problems = []
    with open(os.path.join(out, "problems.tsv")) as f:
        for line in f:
            if line.strip():
                label, half, _, iters = line.rstrip("\n").split("\t")
                problems.append((label, half, int(iters)))
    methods, cells = [], {}
    for label, _, iters in problems:
        for path in sorted(glob.glob(os.path.join(out, "runs", slug(label), "*.jsonl"))):
            m = re.match(r"(tesbo|botorch)-([\w.-]+)-s(\d+)\.jsonl$", os.path.basename(path))
            if not m:
                continue
            method = ("tesbo " if m.group(1) == "tesbo" else "BoTorch ") + m.group(2)
            if method not in methods:
                methods.append(method)
            v = final(path, iters)
            if v is not None:
                cells.setdefault((label, method), []).append(v)
    # tesbo's methods in TESBO_ACQS's order (the default first), then BoTorch's in BOTORCH_ACQS's.
    order = ["tesbo " + a for a in os.environ.get("TESBO_ACQS", "tes").split()]
    order += ["BoTorch " + a for a in os.environ.get("BOTORCH_ACQS", "qlogei").split()]
    methods.sort(key=lambda m: (not m.startswith("tesbo"), order.index(m) if m in order else len(order), m))
    print("# tesbo and BoTorch side by side on the broad suite\n")
    print("Made by `docs/results/broad/side-by-side.sh` (runs interleaved, one thread each). Median over seeds of the")
    print("final log10 regret by the user's rule (the noise-free regret of the evaluated trial with the best observed")
    print("value) ± bootstrap standard error of the median, (seeds); lower is better. Halves: docs/results/broad/SPLIT.md.\n")
    tesbo = next((m for m in methods if m.startswith("tesbo")), None)
    peer = next((m for m in methods if m.startswith("BoTorch")), None)
    for half in ("tune", "held-out", "-"):
        rows = [p for p in problems if p[1] == half]
        if not rows:
            continue
        print(f"## {'outside the split' if half == '-' else half}\n")
        print("| problem | iters | " + " | ".join(methods) + " |")
        print("|---|---|" + "---|" * len(methods))
        for label, _, iters in rows:
            print(f"| {label} | {iters} | " + " | ".join(cell(cells.get((label, m))) for m in methods) + " |")
        if tesbo and peer:
            n = le = behind = 0
            for label, _, _ in rows:
                a, b = cells.get((label, tesbo)), cells.get((label, peer))
                if not a or not b:
                    continue
                n += 1
                ma, mb = statistics.median(a), statistics.median(b)
                le += ma <= mb
                tol = 2 * math.hypot(nan0(boot_se(a)), nan0(boot_se(b)))
                behind += ma > mb + tol
            print(f"\n{tesbo} ≤ {peer} (medians) on {le} of {n} problems; behind beyond 2 SE on {behind} of {n}.")
        print()


def nan0(x):
    return 0.0 if math.isnan(x) else x


def cell(xs):
    return f"{statistics.median(xs):.2f} ± {nan0(boot_se(xs)):.2f} ({len(xs)})" if xs else "—"


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "export":
        export(sys.argv[2], sys.argv[3], sys.argv[4])
    elif len(sys.argv) == 3 and sys.argv[1] == "table":
        table(sys.argv[2])
    else:
        sys.exit(__doc__)

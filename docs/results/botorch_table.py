#!/usr/bin/env python3
"""botorch_table.py OUT — the side-by-side table of botorch-side-by-side.sh.

Reads tesbo's runs.csv files (OUT/tesbo-<problem>-q<B>-i<iters>/) and
BoTorch's JSONL files (OUT/botorch-<problem>-q<B>-i<iters>-<acq>-s<seed>.jsonl)
and prints, per configuration and method, the median final log10 regret under
three rules, each with the bootstrap standard error of the median, and the
median propose and fit seconds per iteration:
  user    the evaluated trial with the best observed value (what a user of a
          black box keeps); for BoTorch when its runner prints user_true, the
          noise-free value of its best observed trial (a dash otherwise);
  oracle  the evaluated trial with the best noise-free value (BoTorch's
          runner prints this; tesbo's runs.csv has it as best_true_regret);
  model   the evaluated point with the largest posterior mean.
"""
import csv
import glob
import json
import math
import os
import random
import re
import statistics
import sys

OPT = {"branin": -0.397887357729739, "hartmann3": 3.86278214782076, "hartmann6": 3.32236801141551}
FLOOR = 1e-12


def log10(r):
    return math.log10(max(r, FLOOR))


def boot_se(xs, reps=2000):
    if len(xs) < 2:
        return float("nan")
    rng = random.Random(1)
    meds = [statistics.median(rng.choices(xs, k=len(xs))) for _ in range(reps)]
    return statistics.pstdev(meds)


def tesbo_rows(out):
    res = {}
    for d in sorted(glob.glob(os.path.join(out, "tesbo-*"))):
        m = re.match(r"tesbo-(\w+)-q(\d+)-i(\d+)$", os.path.basename(d))
        path = os.path.join(d, "runs.csv")
        if not m or not os.path.exists(path):
            continue
        cfg = (m.group(1), int(m.group(2)), int(m.group(3)))
        runs = {}
        with open(path) as f:
            for r in csv.DictReader(f):
                runs.setdefault((r["acquisition"], r["seed"]), []).append(r)
        for (acq, _), rows in runs.items():
            last = max(rows, key=lambda r: int(r["iteration"]))
            if int(last["iteration"]) != cfg[2] or not last.get("best_true_regret"):
                continue
            e = res.setdefault((cfg, "tesbo " + acq), {"user": [], "oracle": [], "model": [], "prop": [], "fit": []})
            e["user"].append(log10(float(last["best_eval_regret"])))
            e["oracle"].append(log10(float(last["best_true_regret"])))
            e["model"].append(log10(float(last["regret"])))
            e["prop"] += [float(r["propose_s"]) for r in rows]
            e["fit"] += [float(r["fit_s"]) for r in rows]
    return res


def botorch_rows(out, res):
    for path in sorted(glob.glob(os.path.join(out, "botorch-*.jsonl"))):
        m = re.match(r"botorch-(\w+)-q(\d+)-i(\d+)-(\w+)-s(\d+)\.jsonl$", os.path.basename(path))
        if not m:
            continue
        cfg = (m.group(1), int(m.group(2)), int(m.group(3)))
        with open(path) as f:
            lines = [json.loads(l) for l in f if l.strip()]
        if len(lines) < cfg[2]:
            continue
        last = lines[cfg[2] - 1]
        e = res.setdefault((cfg, "BoTorch " + m.group(4)), {"user": [], "oracle": [], "model": [], "prop": [], "fit": []})
        if "user_true" in last:
            e["user"].append(log10(OPT[cfg[0]] - last["user_true"]))
        e["oracle"].append(log10(OPT[cfg[0]] - last["best_true"]))
        e["model"].append(log10(last["immediate_regret"]))
        e["prop"] += [l["propose_seconds"] for l in lines[: cfg[2]]]
        e["fit"] += [l["fit_seconds"] for l in lines[: cfg[2]]]
    return res


def main():
    out = sys.argv[1]
    res = botorch_rows(out, tesbo_rows(out))
    print("# tesbo and BoTorch side by side\n")
    model = ("the evaluated point with the largest posterior mean (BoTorch's recommendation)"
             if os.environ.get("RECOMMEND", "evaluated") == "evaluated" else
             "tesbo: the maximizer of the posterior mean over the whole space (the paper's rule); "
             "BoTorch: the evaluated point with the largest posterior mean")
    print("Made by `docs/results/botorch-side-by-side.sh` (runs interleaved seed by seed, one thread each).")
    both = all(v["user"] for v in res.values())
    print("Median final log10 regret over seeds ± bootstrap SE of the median; lower is better. *user*: the")
    print("evaluated trial with the best observed value (what a user of a black box keeps; for BoTorch from the")
    print("`user_true` its runner prints, a dash where it did not); *oracle*: the evaluated trial with the best")
    print("noise-free value — never worse than the user's rule, and much better once regrets fall below the")
    print(f"noise (σ = 0.01 here); *model*: {model}. Rows are sorted by the")
    print(f"{'user' if both else 'oracle'} rule. Times are medians per iteration in seconds.\n")
    for cfg in sorted({k[0] for k in res}):
        print(f"## {cfg[0]}, |B| = {cfg[1]}, {cfg[2]} iterations\n")
        print("| method | seeds | user rule | oracle rule | model rule | propose s | fit s |")
        print("|---|---|---|---|---|---|---|")
        key = "user" if both else "oracle"
        rows = sorted(((k[1], v) for k, v in res.items() if k[0] == cfg), key=lambda kv: statistics.median(kv[1][key]))
        for name, v in rows:
            print(f"| {name} | {len(v['oracle'])} | {cell(v['user'])} | {cell(v['oracle'])} | {cell(v['model'])} | "
                  f"{statistics.median(v['prop']):.3g} | {statistics.median(v['fit']):.3g} |")
        print()


def cell(xs):
    """Median ± bootstrap SE, or a dash when the rule is not available."""
    return f"{statistics.median(xs):.2f} ± {boot_se(xs):.2f}" if xs else "—"


if __name__ == "__main__":
    main()

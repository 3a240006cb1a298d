#!/usr/bin/env python3
"""botorch_table.py OUT — the side-by-side table of botorch-side-by-side.sh.

Reads tesbo's runs.csv files (OUT/tesbo-<problem>-q<B>-i<iters>/) and
BoTorch's JSONL files (OUT/botorch-<problem>-q<B>-i<iters>-<acq>-s<seed>.jsonl)
and prints, per configuration and method, the median final log10 regret under
the user's rule (best evaluated trial) and the model's rule (evaluated point
with the largest posterior mean), each with the bootstrap standard error of the
median, and the median propose and fit seconds per iteration.
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
            if int(last["iteration"]) != cfg[2] or not last.get("best_eval_regret"):
                continue
            e = res.setdefault((cfg, "tesbo " + acq), {"user": [], "model": [], "prop": [], "fit": []})
            e["user"].append(log10(float(last["best_eval_regret"])))
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
        e = res.setdefault((cfg, "BoTorch " + m.group(4)), {"user": [], "model": [], "prop": [], "fit": []})
        e["user"].append(log10(OPT[cfg[0]] - last["best_true"]))
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
    print("Median final log10 regret over seeds ± bootstrap SE of the median; lower is better. *user*: the")
    print("best evaluated trial (by observed value) — for BoTorch, whose runner prints only the best noise-free")
    print("value among its evaluated points, that value, which is never worse and so slightly favours BoTorch;")
    print(f"*model*: {model}. Times are medians per iteration in seconds.\n")
    for cfg in sorted({k[0] for k in res}):
        print(f"## {cfg[0]}, |B| = {cfg[1]}, {cfg[2]} iterations\n")
        print("| method | seeds | user rule | model rule | propose s | fit s |")
        print("|---|---|---|---|---|---|")
        rows = sorted((k[1], v) for k, v in res.items() if k[0] == cfg)
        rows.sort(key=lambda kv: statistics.median(kv[1]["user"]))
        for name, v in rows:
            print(f"| {name} | {len(v['user'])} | {statistics.median(v['user']):.2f} ± {boot_se(v['user']):.2f} | "
                  f"{statistics.median(v['model']):.2f} ± {boot_se(v['model']):.2f} | "
                  f"{statistics.median(v['prop']):.3g} | {statistics.median(v['fit']):.3g} |")
        print()


if __name__ == "__main__":
    main()

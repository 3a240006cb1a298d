#!/usr/bin/env python3
"""finals.py — the final regrets of the ninth round and their tables.

  finals.py collect PROBLEMS_TSV OUT_CSV SPEC...
      One row per (problem, method, seed) with the final regret of the run:
      user_regret (the noise-free regret of the trial with the best observed
      value: the user's rule) and paper_regret (the regret of the
      recommendation x̄). PROBLEMS_TSV is 'tesbo-host bench --suite broad
      --list' (label, half, init, iters). Each SPEC is one of
        METHOD=bench:DIR:ACQ        a bench output directory's runs.csv, acquisition ACQ
        METHOD=botorch:DIR          BoTorch runner files DIR/<name>-qlogei-s<seed>.jsonl,
                                    named as in botorch_name() below
      A run counts only when it reached its problem's last iteration.

  finals.py table FINALS_CSV BASE METHOD...
      Markdown: per half, how often BASE's median final log10 regret (user's
      rule) is ≤ each METHOD's and how often it is behind beyond twice their
      combined standard error (bootstrap SE of each median), on the problems
      where both have ≥ 10 seeds; the paired difference BASE − METHOD over
      common seeds (mean over problems); then per problem the medians ± SE.
      FINALS_RULE=paper judges the recommendation x̄ instead.
"""
import csv
import json
import math
import os
import random
import statistics
import sys
from collections import defaultdict


def log10(v):
    return math.log10(max(v, 1e-12))


def boot_se(xs, reps=500, seed=0):
    """Bootstrap standard error of the median (fixed seed: the table is reproducible)."""
    if len(xs) < 2:
        return float("nan")
    rng = random.Random(seed)
    meds = [statistics.median(rng.choices(xs, k=len(xs))) for _ in range(reps)]
    return statistics.pstdev(meds)


def problems(tsv):
    out = {}
    with open(tsv) as f:
        for line in f:
            label, half, _init, iters = line.rstrip("\n").split("\t")
            out[label] = (half, int(iters))
    return out


def botorch_name(label):
    """The runner file stem of a broad-suite problem (queue naming)."""
    name = label.split("/", 1)[1]
    parts = name.split(":")
    fn, kv = parts[0], dict(p.split("=") for p in parts[1:])
    if fn.startswith("bbob-"):
        return f"bbob-{fn[5:]}-d{kv['dim']}-i{kv['instance']}"
    cls = {"shekel": ("Shekel", 4), "cosine8": ("Cosine8", 8), "beale": ("Beale", 2), "bukin": ("Bukin", 2),
           "dropwave": ("DropWave", 2), "eggholder": ("EggHolder", 2), "holdertable": ("HolderTable", 2),
           "threehumpcamel": ("ThreeHumpCamel", 2), "griewank": ("Griewank", 0), "rastrigin": ("Rastrigin", 0),
           "dixonprice": ("DixonPrice", 0), "powell": ("Powell", 0)}.get(fn)
    if cls is None:
        return None
    d = cls[1] or int(kv["dim"])
    return f"bt-{cls[0]}-d{d}"


def collect_bench(method, d, acq, probs, rows):
    last = {}
    with open(os.path.join(d, "runs.csv")) as f:
        for r in csv.DictReader(f):
            if r["acquisition"] != acq or r["problem"] not in probs:
                continue
            k = (r["problem"], int(r["seed"]))
            if k not in last or int(r["iteration"]) > int(last[k]["iteration"]):
                last[k] = r
    for (p, s), r in last.items():
        if int(r["iteration"]) == probs[p][1]:
            rows.append((probs[p][0], p, method, s, float(r["best_eval_regret"]), float(r["regret"])))


def collect_botorch(method, d, probs, rows):
    for p, (half, iters) in probs.items():
        stem = botorch_name(p)
        if stem is None:
            continue
        for s in range(100):
            path = os.path.join(d, f"{stem}-qlogei-s{s}.jsonl")
            if not os.path.exists(path):
                continue
            with open(path) as f:
                recs = [json.loads(x) for x in f if x.strip()]
            fin = [r for r in recs if r.get("iter") == iters]
            if fin:
                rows.append((half, p, method, s, fin[0]["best_observed_regret"], fin[0]["immediate_regret"]))


def collect(tsv, out, specs):
    probs = problems(tsv)
    rows = []
    for spec in specs:
        method, src = spec.split("=", 1)
        kind, rest = src.split(":", 1)
        if kind == "bench":
            d, acq = rest.rsplit(":", 1)
            collect_bench(method, d, acq, probs, rows)
        else:
            collect_botorch(method, rest, probs, rows)
    rows.sort(key=lambda r: (r[0], r[1], r[2], r[3]))
    with open(out, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["half", "problem", "method", "seed", "user_regret", "paper_regret"])
        for r in rows:
            w.writerow([r[0], r[1], r[2], r[3], repr(r[4]), repr(r[5])])


def table(finals, base, methods):
    rule = os.environ.get("FINALS_RULE", "user")  # user or paper
    data = defaultdict(dict)  # (half, problem) -> method -> {seed: log10 regret}
    with open(finals) as f:
        for r in csv.DictReader(f):
            data[(r["half"], r["problem"])].setdefault(r["method"], {})[int(r["seed"])] = log10(float(r[rule + "_regret"]))
    halves = sorted({h for h, _ in data}, key=lambda h: h != "tune")
    what = "the user's rule" if rule == "user" else "the paper's rule (the recommendation x̄)"
    print(f"Median final log10 regret by {what}; `{base}` against each method, problems where both have ≥ 10 seeds.\n")
    print("| half | method | problems | " + f"`{base}` ≤ its median | `{base}` behind beyond 2 SE | paired Δ ({base} − it), mean over problems | better / worse beyond 2 SE (paired) |")
    print("|---|---|---|---|---|---|---|")
    for h in halves:
        for m in methods:
            n = le = behind = pb = pw = 0
            deltas = []
            for (hh, p), by in data.items():
                if hh != h or base not in by or m not in by or len(by[base]) < 10 or len(by[m]) < 10:
                    continue
                a, b = list(by[base].values()), list(by[m].values())
                ma, mb = statistics.median(a), statistics.median(b)
                se = math.hypot(boot_se(a), boot_se(b))
                n += 1
                le += ma <= mb
                behind += ma - mb > 2 * se
                common = sorted(set(by[base]) & set(by[m]))
                dd = [by[base][s] - by[m][s] for s in common]
                mean = statistics.mean(dd)
                dse = statistics.stdev(dd) / math.sqrt(len(dd))
                deltas.append(mean)
                pb += mean < -2 * dse
                pw += mean > 2 * dse
            if n:
                print(f"| {h} | `{m}` | {n} | {le} ({100 * le / n:.0f}%) | {behind} ({100 * behind / n:.0f}%) | "
                      f"{statistics.mean(deltas):+.2f} | {pb} / {pw} |")
    for h in halves:
        print(f"\n### {h}\n")
        cols = [base] + methods
        print("| problem | " + " | ".join(f"`{c}`" for c in cols) + " |")
        print("|---|" + "---|" * len(cols))
        for (hh, p), by in sorted(data.items()):
            if hh != h:
                continue
            cells = []
            for c in cols:
                xs = list(by.get(c, {}).values())
                if not xs:
                    cells.append("")
                    continue
                cell = f"{statistics.median(xs):.2f} ± {boot_se(xs):.2f}"
                if len(xs) < 10:
                    cell += f" ({len(xs)} seeds)"
                cells.append(cell)
            print(f"| {p} | " + " | ".join(cells) + " |")


def main():
    if len(sys.argv) >= 4 and sys.argv[1] == "collect":
        collect(sys.argv[2], sys.argv[3], sys.argv[4:])
    elif len(sys.argv) >= 4 and sys.argv[1] == "table":
        table(sys.argv[2], sys.argv[3], sys.argv[4:])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""b4_table.py — MF-TES in batches of 4 before and after the shared
Monte-Carlo draws of its conditional gains (README, "Batches of 4").

Reads runs-b4-before.jsonl and runs-b4-after.jsonl next to this file
(measure.go -methods mf-tes-b4 -suffix -b4-before|-b4-after) and prints,
per problem, the median over seeds of the incumbent's log10 regret at
half the budget and at the end (± bootstrap SE of the median), the
paired change of the final one (mean ± SE over seeds) and the median
wall time of a run.
"""
import json, math, os, random, statistics

here = os.path.dirname(os.path.abspath(__file__))


def load(name):
    out = {}
    for line in open(os.path.join(here, name)):
        r = json.loads(line)
        out[(r["problem"], r["seed"])] = r
    return out


def lg(v):
    return math.log10(max(v, 1e-12))


def boot(xs, reps=500):
    rng = random.Random(0)
    return statistics.pstdev([statistics.median(rng.choices(xs, k=len(xs))) for _ in range(reps)])


def at(traj, c):
    r = math.inf
    for q in traj:
        if q[0] > c + 1e-9:
            break
        r = q[1]
    return r


b, a = load("runs-b4-before.jsonl"), load("runs-b4-after.jsonl")
print("| problem | seeds | at half budget: before | after | final: before | after | paired Δ final | seconds: before | after |")
print("|---|---|---|---|---|---|---|---|---|")
for p in sorted({k[0] for k in a}):
    seeds = sorted(s for (q, s) in a if q == p and (q, s) in b)
    bud = 60 if "hartmann" in p else 30
    hb = [lg(at(b[(p, s)]["traj"], bud / 2)) for s in seeds]
    ha = [lg(at(a[(p, s)]["traj"], bud / 2)) for s in seeds]
    fb = [lg(b[(p, s)]["traj"][-1][1]) for s in seeds]
    fa = [lg(a[(p, s)]["traj"][-1][1]) for s in seeds]
    d = [x - y for x, y in zip(fa, fb)]
    se = statistics.stdev(d) / math.sqrt(len(d))
    tb = statistics.median(b[(p, s)]["seconds"] for s in seeds)
    ta = statistics.median(a[(p, s)]["seconds"] for s in seeds)
    print(f"| {p} | {len(seeds)} | {statistics.median(hb):.2f} ± {boot(hb):.2f} | {statistics.median(ha):.2f} ± {boot(ha):.2f} "
          f"| {statistics.median(fb):.2f} ± {boot(fb):.2f} | {statistics.median(fa):.2f} ± {boot(fa):.2f} "
          f"| {statistics.mean(d):+.2f} ± {se:.2f} | {tb:.0f} | {ta:.0f} |")

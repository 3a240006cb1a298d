#!/usr/bin/env python3
"""cnn_table.py RUNS: the table of docs/results/pruning/cnn.sh.

RUNS holds METHOD-SEED.jsonl, each the `tesbo-host trials --format json`
of one study. A trial costs the epochs it trained: its last reported step
(6 for a complete one). A run's incumbent after each trial is its best
complete trial by accuracy (the value the study maximizes, on the first
1,000 test images); its regret is 1 - that accuracy. Full training's
median final regret is the target; a method's "epochs to" it is where the
median over seeds of its regret, as a function of epochs spent, first
reaches the target, and "saved" compares that with full training's. The
second target, for multi-fidelity TES (`mf`), is Hyperband's median regret
at full training's epochs; "÷ hyperband" is a method's epochs to it over
Hyperband's own.
"""
import json
import math
import os
import statistics
import sys

METHODS = ["full", "median", "asha", "hyperband", "mf"]


def load(path):
    """Trajectory [(cumulative epochs, regret)] and counts of one run."""
    trials = [json.loads(line) for line in open(path) if line.strip()]
    trials.sort(key=lambda t: t["id"])
    traj, spent, best = [], 0, math.inf
    pruned = 0
    for t in trials:
        if t["state"] not in ("complete", "pruned"):
            continue
        spent += t.get("step") or 6
        if t["state"] == "pruned":
            pruned += 1
        elif t["value"] is not None:
            best = min(best, 1 - t["value"])
        traj.append((spent, best))
    return traj, len(trials), pruned


def regret_at(traj, epochs):
    r = math.inf
    for e, reg in traj:
        if e > epochs:
            break
        r = reg
    return r


def epochs_to(trajs, target, limit):
    """First epoch count at which the median over runs reaches target."""
    for e in range(1, limit + 1):
        if statistics.median(regret_at(t, e) for t in trajs) <= target:
            return e
    return None


def main():
    if len(sys.argv) != 2 or not os.path.isdir(sys.argv[1]):
        sys.exit("usage: cnn_table.py RUNS  (RUNS: the runs directory cnn.sh wrote, METHOD-SEED.jsonl)")
    runs = {}
    for name in sorted(os.listdir(sys.argv[1])):
        if not name.endswith(".jsonl"):
            continue
        method, seed = name[: -len(".jsonl")].rsplit("-", 1)
        runs.setdefault(method, {})[int(seed)] = load(os.path.join(sys.argv[1], name))
    if "full" not in runs:
        sys.exit("cnn_table.py: no full-training runs (full-SEED.jsonl) in " + sys.argv[1])
    full = [traj for traj, _, _ in runs["full"].values()]
    budget = int(statistics.median(t[-1][0] for t in full))
    target = statistics.median(t[-1][1] for t in full)
    full_to = epochs_to(full, target, budget)
    print("CNN plugin, Fashion-MNIST (2,000 training images, 6 epochs, accuracy on 1,000 test images),")
    print("architecture pinned (32 filters, 256 units); default acquisition, batch 1, 5 initial points.")
    print(f"Regret is 1 - the best complete trial's accuracy. Target: full training's median final regret {target:.3f};")
    print(f"pruned runs are cut at full training's median cost, {budget} epochs.\n")
    hb_target = hb_to = None
    if "hyperband" in runs:
        hb = [v[0] for v in runs["hyperband"].values()]
        hb_target = statistics.median(regret_at(t, budget) for t in hb)
        hb_to = epochs_to(hb, hb_target, budget)
        print(f"Second target (for `mf`): Hyperband's median regret at {budget} epochs, {hb_target:.3f}.\n")
    print("| method | seeds | final regret at full's epochs (median) | trials (median) | stopped early (median) "
          "| epochs to target | saved | epochs to Hyperband's | ÷ hyperband |")
    print("|---|---|---|---|---|---|---|---|---|")
    for m in METHODS:
        if m not in runs:
            continue
        vals = list(runs[m].values())
        trajs = [v[0] for v in vals]
        final = statistics.median(regret_at(t, budget) for t in trajs)
        to = epochs_to(trajs, target, budget)
        saved = "—" if to is None or full_to is None else f"{1 - to / full_to:.0%}"
        hto = None if hb_target is None else epochs_to(trajs, hb_target, budget)
        ratio = "—" if hto is None or not hb_to else f"{hto / hb_to:.2f}"
        print(f"| {m} | {len(vals)} | {final:.3f} | {statistics.median(v[1] for v in vals):g} | "
              f"{statistics.median(v[2] for v in vals):g} | {'—' if to is None else to} | {saved} | "
              f"{'—' if hto is None else hto} | {ratio} |")
    print("\nPer seed, final regret at full training's epochs:\n")
    seeds = sorted({s for r in runs.values() for s in r})
    print("| method | " + " | ".join(f"seed {s}" for s in seeds) + " |")
    print("|---|" + "---|" * len(seeds))
    for m in METHODS:
        if m in runs:
            cells = [f"{regret_at(runs[m][s][0], budget):.3f}" if s in runs[m] else "" for s in seeds]
            print(f"| {m} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()

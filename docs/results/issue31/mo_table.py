#!/usr/bin/env python3
"""mo_table.py — the per-run files and the table of side-by-side.sh (issue 31).

  mo_table.py export RUNS_CSV ACQ SEED   one JSON line per BO iteration of tesbo's run
      (ACQ, seed index SEED) from a bench runs.csv, with the keys of BoTorch's runner:
      iter, n_evals, propose_seconds, fit_seconds and, on a multi-objective problem,
      hv_regret and log_hv_regret (bench's best_true_regret: the noise-free front of every
      evaluated feasible trial, as BoTorch's runner computes it) and hv_regret_user
      (best_eval_regret, the user's rule); on a constrained one best_feasible (the best
      noise-free feasible objective, maximized sign as BoTorch prints it; null while none)
      and regret.
  mo_table.py table OUT                  the markdown tables of OUT/q<Q>/ for every Q
      present: per problem and method the median over seeds of the final log10
      hypervolume regret (multi-objective) or of the final regret of the best feasible
      trial (constrained; a run without a feasible trial counts as +inf; where no optimum
      is stated, the best feasible objective value itself, minimized) ± the bootstrap
      standard error of the median (2000 resamples), (seeds); then the issue's target
      counts and, at Q = 4, the proposal-time ratio on the 2-objective problems.

Per-run files: OUT/q<Q>/<name>/tesbo-<acq>-s<seed>.jsonl and .../botorch-<acq>-s<seed>.jsonl.
A run counts when its file has the last iteration (OUT/q<Q>/iters).
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

# Constrained problems: tesbo's optimum (native units, minimized; problems/testfunc),
# None where neither tesbo nor BoTorch v0.11.3 states one.
CON_F_STAR = {"constrainedgramacy": 0.5998, "constrainedhartmann": -3.322368011,
              "constrainedhartmannsmooth": -3.322368011, "pressurevessel": None,
              "weldedbeam": None, "tensioncompressionstring": 0.0126652, "speedreducer": 2996.3482}
# The split of docs/results/issue31/README.md ("Levers under a held-out split"), by family.
HALF = {"zdt1": "tuning", "zdt2": "tuning", "zdt3": "tuning", "branincurrin": "held-out", "dtlz2": "held-out",
        "vehiclesafety": "held-out", "constrainedgramacy": "tuning", "pressurevessel": "tuning",
        "tensioncompressionstring": "tuning", "constrainedhartmann": "held-out",
        "constrainedhartmannsmooth": "held-out", "weldedbeam": "held-out", "speedreducer": "held-out"}
MO = ["branincurrin", "dtlz2", "zdt1", "zdt2", "zdt3", "vehiclesafety"]
TWO_OBJECTIVES = ["branincurrin", "dtlz2", "zdt1", "zdt2", "zdt3"]
FLOOR = 1e-12


def export(runs_csv, acq, seed):
    with open(runs_csv) as f:
        rows = [r for r in csv.DictReader(f) if r["acquisition"] == acq and r["seed"] == seed]
    for r in sorted(rows, key=lambda r: int(r["iteration"])):
        num = lambda k: float(r[k]) if r.get(k) not in (None, "") else None  # noqa: E731
        name = r["problem"].split("/", 1)[1].split(":")[0]
        rec = {"iter": int(r["iteration"]), "n_evals": int(r["evaluations"]),
               "propose_seconds": num("propose_s"), "fit_seconds": num("fit_s")}
        true = num("best_true_regret")
        if name in MO:
            rec["hv_regret"] = true
            rec["log_hv_regret"] = None if true is None or true <= 0 else math.log10(true)
            rec["hv_regret_user"] = num("best_eval_regret")
        else:
            f_star = CON_F_STAR[name]
            rec["best_feasible"] = None if true is None else -(true + (f_star or 0))
            rec["regret"] = None if true is None or f_star is None else true
        rec.update({"problem": r["problem"], "acq": acq, "seed": int(seed)})
        print(json.dumps(rec))


def boot_se(xs, reps=2000):
    if len(xs) < 2:
        return float("nan")
    rng = random.Random(1)
    meds = [statistics.median(rng.choices(xs, k=len(xs))) for _ in range(reps)]
    if any(math.isinf(m) for m in meds):
        return float("inf")
    return statistics.pstdev(meds)


def final(path, name, iters):
    """The run's final figure (see the module doc), or None when it has not finished."""
    with open(path) as f:
        recs = [json.loads(line) for line in f if line.startswith("{")]  # skip any stray output
    last = next((r for r in recs if r.get("iter") == iters), None)
    if last is None:
        return None
    if name in MO:
        hv = last.get("hv_regret")
        return None if hv is None else math.log10(max(hv, FLOOR))
    bf = last.get("best_feasible")
    if bf is None:
        return math.inf
    f_star = CON_F_STAR[name]
    return -bf - (f_star or 0)


def seconds(path):
    with open(path) as f:
        return [r["propose_seconds"] for r in map(json.loads, (line for line in f if line.startswith("{"))) if r.get("propose_seconds") is not None]


def nan0(x):
    return 0.0 if math.isnan(x) else x


def fmt(x):
    if math.isinf(x):
        return "inf"
    return f"{x:.3g}" if abs(x) < 1e4 else f"{x:.0f}"


def cell(xs):
    return f"{fmt(statistics.median(xs))} ± {fmt(nan0(boot_se(xs)))} ({len(xs)})" if xs else "—"


def table_q(out, q):
    runs = os.path.join(out, f"q{q}")
    with open(os.path.join(runs, "iters")) as f:
        iters = int(f.read())
    cells, methods, props = {}, {"mo": [], "con": []}, {}
    for name in MO + list(CON_F_STAR):
        kind = "mo" if name in MO else "con"
        for path in sorted(glob.glob(os.path.join(runs, name, "*.jsonl"))):
            m = re.match(r"(tesbo|botorch)-([\w.-]+)-s(\d+)\.jsonl$", os.path.basename(path))
            if not m:
                continue
            method = ("tesbo " if m.group(1) == "tesbo" else "BoTorch ") + m.group(2)
            if method not in methods[kind]:
                methods[kind].append(method)
            v = final(path, name, iters)
            if v is not None:
                cells.setdefault((name, method), []).append(v)
                if name in TWO_OBJECTIVES:
                    props.setdefault(method, []).extend(seconds(path))
    print(f"## q = {q}, {iters} iterations\n")
    for kind, names, what in (("mo", MO, "final log10 hypervolume regret"),
                              ("con", list(CON_F_STAR), "final regret of the best feasible trial (best feasible value where no optimum is stated)")):
        ms = sorted(methods[kind], key=lambda m: (not m.startswith("tesbo"), m != "tesbo tes", m))
        if not ms:
            continue
        print(f"Median over seeds of the {what} ± bootstrap SE of the median (seeds); lower is better.\n")
        print("| problem | half | " + " | ".join(ms) + " |")
        print("|---|---|" + "---|" * len(ms))
        for name in names:
            print(f"| {name}{'' if kind == 'mo' or CON_F_STAR[name] is not None else ' (value)'} | {HALF[name]} | "
                  + " | ".join(cell(cells.get((name, m))) for m in ms) + " |")
        print()
        targets(kind, names, ms, cells)
    if q == 4 and props.get("tesbo tes") and props.get("BoTorch qlognehvi"):
        a, b = statistics.median(props["tesbo tes"]), statistics.median(props["BoTorch qlognehvi"])
        print(f"Proposal time, 2 objectives, q = 4 (median over every iteration of every finished run on {', '.join(TWO_OBJECTIVES)}):"
              f" tesbo tes {a:.2f} s, BoTorch qLogNEHVI {b:.1f} s: {b / a:.1f}× (target ≥ 3×).\n")


def targets(kind, names, ms, cells):
    tesbo = "tesbo tes" if "tesbo tes" in ms else next((m for m in ms if m.startswith("tesbo")), None)
    peers = [m for m in ms if m.startswith("BoTorch")]
    if not tesbo or not peers:
        return
    n = le = behind = 0
    missed, empty = [], []
    halves = {}  # half -> [problems with runs on both sides, of them ≤]
    for name in names:
        a = cells.get((name, tesbo))
        bs = [cells[(name, p)] for p in peers if cells.get((name, p))]
        if not a or len(bs) < len(peers):
            continue
        n += 1
        b = min(bs, key=statistics.median)  # BoTorch's best method on this problem
        ma, mb = statistics.median(a), statistics.median(b)
        le += ma <= mb
        h = halves.setdefault(HALF[name], [0, 0])
        h[0] += 1
        h[1] += ma <= mb
        if math.isinf(ma) and math.isinf(mb):
            empty.append(name)
        if ma > mb:
            missed.append(name)
        tol = 2 * math.hypot(nan0(boot_se(a)), nan0(boot_se(b)))
        behind += ma > mb + tol
    best = "the better of " + " / ".join(peers) if len(peers) > 1 else peers[0]
    total = 6 if kind == "mo" else 7
    print(f"Target: {tesbo} ≤ {best} (medians) on {le} of {n} problems with runs on both sides"
          f" (the issue: ≥ {4 if kind == 'mo' else 5} of {total}); behind beyond 2 SE on {behind}"
          f"{' (the issue: at most one)' if kind == 'mo' else ''}. Not ≤ on: {', '.join(missed) or 'none'}."
          f"{' Counted as ≤ with no feasible trial on either side (median): ' + ', '.join(empty) + '.' if empty else ''}"
          f" By half: " + "; ".join(f"{h} {v[1]} of {v[0]}" for h, v in sorted(halves.items(), reverse=True)) + ".\n")


def table(out):
    print("# tesbo and BoTorch side by side on several outputs (issue 31)\n")
    print("Made by `docs/results/issue31/side-by-side.sh` (runs interleaved, one thread each; noise variance 1e-4 on")
    print("every output; both sides judged by the noise-free outputs of every evaluated trial, as BoTorch's runner")
    print("reports them). The constrained target counts 7 problems, all shipped.\n")
    qs = [int(m.group(1)) for m in (re.match(r"q(\d+)$", e) for e in os.listdir(out)) if m]
    for q in sorted(qs):
        if os.path.exists(os.path.join(out, f"q{q}", "iters")):
            table_q(out, q)


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "export":
        export(sys.argv[2], sys.argv[3], sys.argv[4])
    elif len(sys.argv) == 3 and sys.argv[1] == "table":
        table(sys.argv[2])
    else:
        sys.exit(__doc__)

"""Table of the conditional-space runs (conditional.sh).

Usage: python3 conditional_table.py OUTDIR [BASEDIR] [BOTORCHDIR]

OUTDIR (and BASEDIR, another build's runs, for a paired before/after) hold
conditional.sh's bench directories branches/ and hartmann/. The problems
are noise-free, so the user's rule (the trial with the best observed value)
has regret f* minus the best observed value, read from each bench's
studies.db. BOTORCHDIR holds BoTorch runs on the flattened twins over the
command protocol, BOTORCHDIR/<problem>/qlogei-s<SEED>.jsonl with <problem>
branches or hartmann (the last line's best_observed_regret). Medians carry bootstrap standard errors (2000
resamples, fixed seed); paired changes are mean +- SE over seeds.
"""
import json
import math
import os
import random
import sqlite3
import statistics as st
import sys

FSTAR = {"branches": 1.2, "hartmann": 3.3223680114155156}


def finals(root, half):
    """log10 of the user's-rule regret per (problem, seed)."""
    path = os.path.join(root, half, "studies.db")
    if not os.path.exists(path):
        return {}
    db = sqlite3.connect(path)
    out = {}
    rows = db.execute(
        "select s.name, max(t.value) from trials t join studies s on s.id = t.study_id"
        " where t.status = 'complete' group by s.name")
    for name, best in rows:
        parts = name.split("/")  # bench/cond/NAME/tes/q1/sSEED
        out[(parts[1] + "/" + parts[2], int(parts[-1][1:]))] = math.log10(max(FSTAR[half] - best, 1e-12))
    return out


def median_se(v):
    rng = random.Random(1)
    return st.median(v), st.stdev([st.median(rng.choices(v, k=len(v))) for _ in range(2000)])


def botorch(root):
    v = []
    for name in sorted(os.listdir(root)):
        if name.startswith("qlogei-s") and name.endswith(".jsonl"):
            lines = open(os.path.join(root, name)).read().split("\n")
            last = json.loads([l for l in lines if l.strip()][-1])
            v.append(math.log10(max(last["best_observed_regret"], 1e-12)))
    return v


def main(argv):
    out = argv[1]
    base = argv[2] if len(argv) > 2 and argv[2] != "-" else None
    print("| problem (half) | seeds | median log10 regret ± SE | runs below 1e-3 |"
          + (" before: median ± SE | paired Δ (after − before) | better / worse |" if base else ""))
    print("|---|---|---|---|" + ("---|---|---|" if base else ""))
    for half, label in (("branches", "tune"), ("hartmann", "held out")):
        now, before = finals(out, half), finals(base, half) if base else {}
        for prob in sorted({k[0] for k in now}):
            seeds = sorted(s for p, s in now if p == prob)
            v = [now[(prob, s)] for s in seeds]
            m, se = median_se(v)
            row = f"| {prob} ({label}) | {len(v)} | {m:.3f} ± {se:.3f} | {sum(x < -3 for x in v)} |"
            if base:
                b = [before[(prob, s)] for s in seeds]
                d = [x - y for x, y in zip(v, b)]
                bm, bse = median_se(b)
                row += (f" {bm:.3f} ± {bse:.3f} ({sum(x < -3 for x in b)} below 1e-3) |"
                        f" {st.mean(d):+.3f} ± {st.stdev(d) / math.sqrt(len(d)):.3f} |"
                        f" {sum(x < -1e-9 for x in d)} / {sum(x > 1e-9 for x in d)} |")
            print(row)
    if len(argv) > 3:
        for half in ("branches", "hartmann"):
            root = os.path.join(argv[3], half)
            if not os.path.isdir(root):
                continue
            v = botorch(root)
            m, se = median_se(v)
            print(f"\nBoTorch qLogEI on cond/{half}-flat (continuous relaxation, command protocol),"
                  f" {len(v)} seeds: median log10 regret {m:.3f} ± {se:.3f}, mean {st.mean(v):.3f},"
                  f" runs below 1e-3: {sum(x < -3 for x in v)}")


if __name__ == "__main__":
    main(sys.argv)

"""Summarize warmstart.sh: per problem and seed, the number of new
evaluations (of the first 10) until one reaches the old study's best value
(within TOL absolute, and within 1% of the old study's range of values),
the first new value against the old best,
the regret of the new study's recommendation after its first evaluation
against the old study's best regret, and the new study's final regret
after its 10 iterations (of its recommendation, and of its best evaluated
value, imported ones included). Problems: the arguments after OUTDIR, else
those whose files OUTDIR holds."""
import json, os, statistics, sys

TOL = 1e-3
FSTAR = {"branin": -0.397887, "hartmann6": 3.32237, "hartmann3": 3.86278, "shekel": 10.5364}
out = sys.argv[1]
probs = sys.argv[2:] or [p for p in FSTAR if os.path.exists(os.path.join(out, f"{p}-1-old.jsonl"))]
for p in probs:
    need, rel, rec, fin, gain = [], [], [], [], []
    for s in range(1, 11):
        load = lambda k: [json.loads(l) for l in open(os.path.join(out, f"{p}-{s}-{k}.jsonl"))]
        old = [t["value"] for t in load("old") if t["state"] == "complete"]
        allnew = [t["value"] for t in load("new") if t["state"] == "complete"]
        new = [t["value"] for t in load("new") if t["iter"] >= 1 and t["state"] == "complete"][:10]
        best, span = max(old), max(old) - min(old)
        first = lambda ok: next((i + 1 for i, v in enumerate(new) if ok(v)), None)
        need.append(first(lambda v: v >= best - TOL))
        rel.append(first(lambda v: v >= best - 0.01 * span))
        gain.append(new[0] - best)
        recs = load("new-records")
        rec.append((FSTAR[p] - recs[0]["best_value"], FSTAR[p] - best))
        fin.append((FSTAR[p] - recs[-1]["best_value"], FSTAR[p] - max(allnew)))
    def fmt(xs):
        got = [x for x in xs if x is not None]
        med = statistics.median(got) if got else "-"
        return f"{' '.join(str(x) if x else '-' for x in xs)} | median {med} | reached in <= 3: {sum(1 for x in got if x <= 3)}/10"
    print(f"{p}: evaluations to reach the old best within {TOL}: {fmt(need)}")
    print(f"{p}: evaluations to reach the old best within 1% of its range: {fmt(rel)}")
    print(f"{p}: first new value minus the old best: median {statistics.median(gain):+.1e}, "
          f"above the old best on {sum(g > 0 for g in gain)}/10")
    ok = sum(1 for a, b in rec if a <= b + 1e-9)
    print(f"{p}: recommendation after 1 evaluation at least as good as the old best: {ok}/10 "
          f"(median regret {statistics.median(a for a, _ in rec):.2e} vs old best's {statistics.median(b for _, b in rec):.2e})")
    print(f"{p}: after 10 iterations, median regret of the recommendation {statistics.median(a for a, _ in fin):.2e}, "
          f"of the best evaluated value {statistics.median(b for _, b in fin):.2e} "
          f"(per seed: {' '.join(f'{b:.1e}' for _, b in fin)})")

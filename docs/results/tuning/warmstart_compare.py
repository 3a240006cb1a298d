"""Compare two runs of warmstart.sh (e.g. two rules of the new study's
acquisition) seed by seed: per problem, the mean and standard error over
the 10 seeds of the difference log10(regret in AFTER) − log10(regret in
BEFORE) after the new study's 10 iterations, for its recommendation and
for its best evaluated value (imported ones included). Negative: AFTER is
better. Usage: python3 warmstart_compare.py BEFORE AFTER [PROBLEM...]"""
import json, math, os, statistics, sys

FSTAR = {"branin": -0.397887, "hartmann6": 3.32237, "hartmann3": 3.86278, "shekel": 10.5364}
before, after = sys.argv[1], sys.argv[2]
probs = sys.argv[3:] or [p for p in FSTAR if os.path.exists(os.path.join(after, f"{p}-1-new.jsonl"))]


def final(out, p, s):
    """Final regrets (recommendation, best evaluated value) of seed s."""
    recs = [json.loads(l) for l in open(os.path.join(out, f"{p}-{s}-new-records.jsonl"))]
    trials = [json.loads(l) for l in open(os.path.join(out, f"{p}-{s}-new.jsonl"))]
    best = max(t["value"] for t in trials if t["state"] == "complete")
    return FSTAR[p] - recs[-1]["best_value"], FSTAR[p] - best


for p in probs:
    pairs = [(final(before, p, s), final(after, p, s)) for s in range(1, 11)]
    for k, what in enumerate(("recommendation", "best evaluated value")):
        d = [math.log10(max(a[k], 1e-12)) - math.log10(max(b[k], 1e-12)) for b, a in pairs]
        m, se = statistics.mean(d), statistics.stdev(d) / math.sqrt(len(d))
        print(f"{p}: final regret of the {what}, log10 after − before: {m:+.2f} ± {se:.2f} (SE), "
              f"better on {sum(x < 0 for x in d)}/10, worse on {sum(x > 0 for x in d)}/10")

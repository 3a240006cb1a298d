"""auto_draws_table.py OUT: the table of auto-draws.sh's runs in OUT (README, "Sizing on shared draws")."""
import glob, json, math, os, random, statistics, sys
opt = {'hartmann3': 3.86278, 'hartmann6': 3.32237}
def boot(xs, reps=500):
    rng = random.Random(0)
    return statistics.pstdev([statistics.median(rng.choices(xs, k=len(xs))) for _ in range(reps)])
print("| problem | variant | runs | mean batch size | batch sizes (all proposals) | median final log10 regret of x̄ (paper's rule) | paired Δ |")
print("|---|---|---|---|---|---|---|")
for p in opt:
    fin = {}
    for v in ('before', 'after'):
        sizes, regs = [], {}
        for f in sorted(glob.glob(os.path.join(sys.argv[1], f'{v}-{p}-s*.jsonl'))):
            recs = [json.loads(l) for l in open(f)]
            if not recs: continue
            s = int(f.split('-s')[-1].split('.')[0])
            for r in recs:
                sizes.append(len(r['batch']))
            regs[s] = math.log10(max(recs[-1]['regret'], 1e-12))
        fin[v] = regs
        if not regs: continue
        hist = {k: sizes.count(k) for k in sorted(set(sizes))}
        print(f"| {p} | {v} | {len(regs)} | {statistics.mean(sizes):.2f} | {hist} | {statistics.median(regs.values()):.2f} ± {boot(list(regs.values())):.2f} | ", end="")
        if v == 'after':
            common = sorted(set(fin['before']) & set(regs))
            d = [regs[s] - fin['before'][s] for s in common]
            if len(d) > 1:
                print(f"{statistics.mean(d):+.2f} ± {statistics.stdev(d)/math.sqrt(len(d)):.2f} |")
            else:
                print("|")
        else:
            print("|")

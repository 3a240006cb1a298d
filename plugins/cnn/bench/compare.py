#!/usr/bin/python3
"""Side-by-side training throughput: tesbo's Go CNN vs the PyTorch peer.

Alternates the Go benchmark (plugins/cnn/nn BenchmarkTrain<Shape>) and
torch_cnn.py throughput for --rounds rounds with the same thread count, so
that both see the same machine load, and prints each run plus the medians
and their ratio as JSON lines. Run from the repository root:

    /usr/bin/python3 plugins/cnn/bench/compare.py --rounds 5 --threads 2
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))


def go_run(shape, threads, steps):
    bench = "BenchmarkTrainFashion$" if shape == "fashion" else "BenchmarkTrainCIFAR$"
    env = dict(os.environ, GOMAXPROCS=str(threads))
    out = subprocess.run(
        ["go", "test", "-run", "^$", "-bench", bench, "-benchtime", f"{steps}x", "./plugins/cnn/nn"],
        cwd=ROOT, env=env, check=True, capture_output=True, text=True).stdout
    line = next(l for l in out.splitlines() if l.startswith("BenchmarkTrain"))
    wall = float(re.search(r"([\d.]+) images/s", line).group(1))
    cpu = float(re.search(r"([\d.]+) images/cpu-s", line).group(1))
    return {"impl": "go", "images_per_s": wall, "images_per_cpu_s": cpu}


def torch_run(shape, threads, steps, extra_env):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    env.update(extra_env)
    out = subprocess.run(
        [sys.executable, os.path.join(HERE, "torch_cnn.py"), "throughput", "--shape", shape,
         "--threads", str(threads), "--steps", str(steps)],
        env=env, check=True, capture_output=True, text=True).stdout
    r = json.loads(out.strip().splitlines()[-1])
    return {"impl": "torch", "images_per_s": r["images_per_s"], "images_per_cpu_s": r["images_per_cpu_s"]}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--shape", choices=["fashion", "cifar"], default="fashion")
    p.add_argument("--steps", type=int, default=8, help="mini-batches of 128 per run")
    p.add_argument("--torch-env", default="OMP_WAIT_POLICY=PASSIVE OPENBLAS_NUM_THREADS=1",
                   help="environment for PyTorch: the default was its fastest 2-thread set-up here "
                        "(spinning OpenMP workers and a second OpenBLAS pool otherwise fight for the cores)")
    args = p.parse_args()
    extra_env = dict(kv.split("=", 1) for kv in args.torch_env.split())
    runs = {"go": [], "torch": []}
    for r in range(args.rounds):
        for res in (go_run(args.shape, args.threads, args.steps),
                    torch_run(args.shape, args.threads, args.steps, extra_env)):
            res.update(round=r + 1, threads=args.threads, shape=args.shape)
            runs[res["impl"]].append(res)
            print(json.dumps(res), flush=True)
    summary = {"summary": True, "threads": args.threads, "shape": args.shape, "rounds": args.rounds,
               "torch_env": args.torch_env,
               "load_avg": os.getloadavg()[0], "nproc": os.cpu_count()}
    for metric in ("images_per_s", "images_per_cpu_s"):
        med = {k: statistics.median(x[metric] for x in v) for k, v in runs.items()}
        summary[metric] = med
        summary[metric + "_torch_over_go"] = round(med["torch"] / med["go"], 2)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()

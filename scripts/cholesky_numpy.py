#!/usr/bin/python3
"""Times numpy's (OpenBLAS) Cholesky on the matrices BenchmarkCholesky in
internal/linalg factors (Matérn-5/2, d = 6, length-scale 0.3, noise 1e-3),
for the ratio table in README.md. Run it in the same session as

    go test -run '^$' -bench Cholesky -benchtime 5x ./internal/linalg

and compare the best of 5 runs per size (milliseconds) with the Go figures.
"""
import sys
import time

import numpy as np


def kernel_matrix(n, d=6, noise=1e-3, seed=1):
    x = np.random.default_rng(seed).random((n, d)) / 0.3
    r = np.sqrt(5 * ((x[:, None, :] - x[None, :, :]) ** 2).sum(-1))
    return (1 + r + r * r / 3) * np.exp(-r) + noise * np.eye(n)


def main(sizes):
    for n in sizes:
        a = kernel_matrix(n)
        best = float("inf")
        for _ in range(5):
            t = time.perf_counter()
            np.linalg.cholesky(a)
            best = min(best, time.perf_counter() - t)
        print(f"numpy n={n}: {best * 1e3:.1f} ms")


if __name__ == "__main__":
    main([int(s) for s in sys.argv[1:]] or [1000, 2000, 4000])

#!/usr/bin/env python3
"""The NVFP4 ablation over several seeds: one replay file per seed (run.sh with SEED=1, 2, ...).

Usage: seeds.py RESULTS_SEED1.h5 RESULTS_SEED2.h5 ... > seeds.md
Per recipe and seed: the weight-gradient cosine with the reference's at step 0 (same weights,
the seed's batch and SR draws) and the relative loss gap averaged over the last quarter of the
steps; then the mean over the seeds and the spread (sample standard deviation) between them."""
import sys

import h5py
import numpy as np

from table import LABELS, text


def one(path):
    with h5py.File(path, "r") as f:
        recipes = [text(r) for r in f.attrs["recipes"]]
        ref = f["reference/loss"][:]
        steps, seed = int(f.attrs["steps"]), int(f.attrs["seed"])
        tail = max(1, steps // 4)
        out = {}
        for r in recipes:
            g = f["recipes"][r.replace("/", "_")]
            gap = ((g["loss"][:] - ref) / ref)[-tail:].mean()
            out[r] = (float(np.nanmean(g["grad_cosine"][0])), float(gap))
    return seed, recipes, out


def main(paths):
    runs = [one(p) for p in paths]
    recipes = runs[0][1]
    seeds = [s for s, _, _ in runs]
    head = " | ".join(f"seed {s}" for s in seeds)
    print(f"Weight-gradient cosine at step 0 ({len(seeds)} seeds):\n")
    print(f"| recipe | {head} | mean | spread |")
    print("|---|" + "---|" * (len(seeds) + 2))
    for r in recipes:
        v = np.array([run[2][r][0] for run in runs])
        print(f"| {LABELS.get(r, r)} | " + " | ".join(f"{x:.5f}" for x in v) +
              f" | {v.mean():.5f} | {v.std(ddof=1) if len(v) > 1 else float('nan'):.5f} |")
    print(f"\nLoss gap to the FP64 reference, mean of the last quarter of the steps ({len(seeds)} seeds):\n")
    print(f"| recipe | {head} | mean | spread |")
    print("|---|" + "---|" * (len(seeds) + 2))
    for r in recipes:
        v = np.array([run[2][r][1] for run in runs])
        print(f"| {LABELS.get(r, r)} | " + " | ".join(f"{x:+.2e}" for x in v) +
              f" | {v.mean():+.2e} | {v.std(ddof=1) if len(v) > 1 else float('nan'):.1e} |")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: seeds.py RESULTS.h5 [RESULTS.h5 ...] > seeds.md")
    main(sys.argv[1:])

#!/usr/bin/env python3
"""The NVFP4 ablation over several seeds: one replay file per seed (run.sh with SEED=1, 2, ...).

Usage: seeds.py RESULTS_SEED1.h5 RESULTS_SEED2.h5 ... > seeds.md
Per recipe and seed: the weight-gradient cosine with the reference's at step 0 (same weights,
the seed's batch and SR draws) and the relative loss gap averaged over the last quarter of the
steps; then the mean over the seeds and the spread (sample standard deviation) between them."""
import sys

import numpy as np

from table import LABELS, load


def print_table(title, runs, value, value_fmt, spread_fmt):
    """One row per recipe: value(run, recipe) for each seed's run, their mean and spread."""
    recipes = runs[0]["recipes"]
    print(f"{title} ({len(runs)} seeds):\n")
    print("| recipe | " + " | ".join(f"seed {run['seed']}" for run in runs) + " | mean | spread |")
    print("|---|" + "---|" * (len(runs) + 2))
    for r in recipes:
        v = np.array([value(run, r) for run in runs])
        spread = v.std(ddof=1) if len(v) > 1 else float("nan")
        print(f"| {LABELS.get(r, r)} | " + " | ".join(format(x, value_fmt) for x in v) +
              f" | {format(v.mean(), value_fmt)} | {format(spread, spread_fmt)} |")


def main(paths):
    runs = [load(p) for p in paths]
    print_table("Weight-gradient cosine at step 0", runs, lambda run, r: np.nanmean(run["cos"][r][0]), ".5f", ".5f")
    print()
    print_table("Loss gap to the FP64 reference, mean of the last quarter of the steps", runs,
                lambda run, r: run["gaps"][r][-run["tail"]:].mean(), "+.2e", ".1e")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: seeds.py RESULTS.h5 [RESULTS.h5 ...] > seeds.md")
    main(sys.argv[1:])

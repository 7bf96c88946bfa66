#!/usr/bin/env python3
"""Table and plot data of the NVFP4 ablation from a replay file.

Usage: table.py RESULTS.h5 OUT.dat > table.md
Per recipe, from its own training run against the FP64 reference on the same batches:
  - the relative loss gap (loss - reference loss) / reference loss, its mean over the last
    quarter of the steps and the standard error of that mean (the steps as samples);
  - the weight gradients' cosine with the reference's, averaged over the parameter tensors, at
    step 0, where both start from the same weights and batch: the quantization's own effect on
    one gradient. Later steps compare gradients at weights that have drifted apart (after 200
    steps even bf16's falls below 0.5), so they are not reported.
OUT.dat (for scripts/plot/loss_gap.gp): a header row (step, then the recipe labels), then per
step the relative loss gap of each recipe, smoothed over a window of 10 steps (trailing mean)."""
import sys

import h5py
import numpy as np

LABELS = {
    "bf16": "bf16",
    "te-nvfp4": "te-nvfp4 (all four parts)",
    "te-nvfp4;wgrad.x=nvfp4;wgrad.g=nvfp4:sr=1": "no RHT on wgrad",
    "te-nvfp4;g=nvfp4;wgrad.g=nvfp4:rht=1": "no SR on gradients",
    "te-nvfp4;w=nvfp4": "1x16 weights (no 2-D)",
    "te-nvfp4;last_hp=1": "last layer in BF16",
    "hp=bf16;w=mxfp4;x=mxfp4;g=mxfp4": "mxfp4",
}


def text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def load(path):
    """A replay file's run: its root attributes, and per recipe the relative loss gap per step and
    the weight-gradient cosines (step x tensor)."""
    try:
        f = h5py.File(path, "r")
    except OSError as e:
        sys.exit(f"{path}: cannot open as HDF5 ({e})")
    with f:
        if text(f.attrs.get("kind", "")) != "fpsim replay results" or "reference" not in f:
            sys.exit(f"{path}: not an fpsim replay results file")
        run = {"model": text(f.attrs["model"]), "steps": int(f.attrs["steps"]), "seed": int(f.attrs["seed"]),
               "recipes": [text(r) for r in f.attrs["recipes"]], "gaps": {}, "cos": {}}
        ref = f["reference/loss"][:]
        for r in run["recipes"]:
            g = f["recipes"][r.replace("/", "_")]
            run["gaps"][r] = (g["loss"][:] - ref) / ref
            run["cos"][r] = g["grad_cosine"][:]
    run["tail"] = max(1, run["steps"] // 4)  # the last quarter of the steps
    return run


def main(path, datpath):
    run = load(path)
    model, steps, tail = run["model"], run["steps"], run["tail"]
    recipes, gaps, cos = run["recipes"], run["gaps"], run["cos"]
    print(f"model `{model}`, {steps} steps; loss gap = (loss - FP64 reference) / reference, "
          f"mean over the last {tail} steps +- its standard error\n")
    print("| recipe | loss gap, last quarter | +- | grad cosine, step 0 |")
    print("|---|---|---|---|")
    for r in recipes:
        t = gaps[r][-tail:]
        se = t.std(ddof=1) / np.sqrt(len(t)) if len(t) > 1 else float("nan")
        print(f"| {LABELS.get(r, r)} | {t.mean():+.3e} | {se:.1e} | {np.nanmean(cos[r][0]):.5f} |")
    with open(datpath, "w") as d:
        d.write("step " + " ".join(LABELS.get(r, r).split(" (")[0].replace(" ", "_") for r in recipes) + "\n")
        for s in range(steps):
            lo = max(0, s - 9)
            d.write(str(s) + "".join(f" {gaps[r][lo:s + 1].mean():.6e}" for r in recipes) + "\n")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: table.py RESULTS.h5 OUT.dat > table.md")
    main(sys.argv[1], sys.argv[2])

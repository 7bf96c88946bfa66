#!/usr/bin/env python3
"""Table and plot data of the NVFP4 SR bias experiment from a replay file's /bias_variance group.

Usage: table.py RESULTS.h5 OUT.dat > table.md
OUT.dat (for scripts/plot/biasvar_sat.gp): a header row, then per N: N and, for each NVFP4 SR
case, three columns: measured bias (seed mean, '?' where the estimator clamps to 0), closed-form
expected bias (TE's 8 random bits), and the expected bias with unlimited random bits (the clip
at 6 and, with RHT, its BF16 rounding); the last column is the noise of nvfp4-sr's measured
bias (std / sqrt(seeds)); all relative to ||G_N||."""
import sys

import h5py
import numpy as np

SR_CASES = ["nvfp4-sr", "nvfp4-sr-rht", "nvfp4-sr-up", "nvfp4-sr-rht-up"]


def text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def main(path, datpath):
    with h5py.File(path, "r") as f:
        g = f["bias_variance"]
        cases = [text(c) for c in g.attrs["cases"]]
        seeds = int(g.attrs["seeds"])
        n = g["n"][:]
        t = {k: g[k][:] for k in ("bias", "std", "rmse", "bias_expect", "bias_clip", "bias_noclip",
                                  "over6", "sat", "sat_dy", "sat_x")}
        site, layer = text(g.attrs["site"]), int(g.attrs["layer"])
    idx = {c: cases.index(c) for c in cases}
    with open(datpath, "w") as d:
        d.write("N " + " ".join(f"{c}:measured {c}:expected {c}:unlimited-bits" for c in SR_CASES) +
                " noise-of-seed-mean(nvfp4-sr)\n")
        for j, nj in enumerate(n):
            row = [str(int(nj))]
            for c in SR_CASES:
                k = idx[c]
                b = t["bias"][k, j]
                row += ["?" if b <= 0 else f"{b:.6e}", f"{t['bias_expect'][k, j]:.6e}",
                        f"{t['bias_clip'][k, j]:.6e}"]
            row.append(f"{t['std'][idx['nvfp4-sr'], j] / np.sqrt(seeds):.6e}")
            d.write(" ".join(row) + "\n")

    cols = [j for j, nj in enumerate(n) if nj in (64, 1024, 16384, 65536)] or list(range(len(n)))
    print(f"Summed weight gradient G_N = dY[:N]^T X[:N] ({site} wgrad of layer {layer}), {seeds} SR "
          f"seeds; every figure relative to ||G_N||. `noise` = std/sqrt(seeds), the scale of the "
          f"measured bias's own error.\n")
    for j in cols:
        print(f"N = {int(n[j])}\n")
        print("| case | measured bias | noise | expected bias (TE 8-bit SR) | clip at 6 only "
              "(unlimited bits) | no clip | std (one seed) | blocks amax*enc>6 | elements >6: dY, X |")
        print("|---|---|---|---|---|---|---|---|---|")
        for c in cases:
            if not c.startswith("nvfp4"):
                continue
            k = idx[c]
            det = t["std"][k, j] == 0
            noise = "-" if det else f"{t['std'][k, j] / np.sqrt(seeds):.1e}"

            def f(v):
                return "-" if np.isnan(v) else f"{v:.2e}"
            print(f"| {c} | {t['bias'][k, j]:.2e} | {noise} | {f(t['bias_expect'][k, j])} | "
                  f"{f(t['bias_clip'][k, j])} | {f(t['bias_noclip'][k, j])} | {t['std'][k, j]:.2e} | "
                  f"{t['over6'][k, j]:.3f} | {t['sat_dy'][k, j]:.3f}, {t['sat_x'][k, j]:.3f} |")
        print()


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: table.py RESULTS.h5 OUT.dat > table.md")
    main(sys.argv[1], sys.argv[2])

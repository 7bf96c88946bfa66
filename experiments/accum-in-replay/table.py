"""Per-layer GEMM relative L2 error (vs the FP64 reference) of each recipe@accum group, last step,
summed over sites (RMS), for the local and accumulated views, fprop/dgrad/wgrad.
Usage: python3 table.py accum.h5"""
import sys
import h5py
import numpy as np

f = h5py.File(sys.argv[1], "r")
layers = [x.decode() if isinstance(x, bytes) else x for x in f.attrs["layers"]]
passes = [x.decode() if isinstance(x, bytes) else x for x in f.attrs["passes"]]
print("| recipe@accum | view | layer | " + " | ".join(passes) + " |")
print("|---|---|---|" + "---|" * len(passes))
for name, g in f["recipes"].items():
    e = g["gemm_rel_l2"][-1]  # [view][layer][site][pass], last step
    for v, view in enumerate(["local", "accumulated"]):
        for l, lname in enumerate(layers):
            row = []
            for p in range(len(passes)):
                x = e[v, l, :, p]
                x = x[np.isfinite(x)]
                row.append("%.3e" % np.sqrt(np.mean(x * x)) if x.size else "-")
            print("| %s | %s | %s | %s |" % (name, view, lname, " | ".join(row)))

#!/usr/bin/env python3
"""cli_compare.py: compare each NAME.cpu.h5 with NAME.gpu.h5 in a folder (gpu/tools/cli_check.sh).

Every dataset must exist in both, with the same dtype, shape and bytes (NaN payloads included),
and every attribute must be equal, except those that name the run rather than the result:
command_line, date, device and threads. Prints one line per pair and a total; exits 1 on any
difference or a missing partner, 2 on bad usage.

    python3 gpu/tools/cli_compare.py DIR
"""
import glob
import os
import sys

import h5py
import numpy as np

RUN_ATTRS = {"command_line", "date", "device", "threads"}


def attrs_of(obj):
    return {k: obj.attrs[k] for k in obj.attrs if k not in RUN_ATTRS}


def same_value(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def differences(cpu_path, gpu_path):
    """Every difference between the two files, as text, and the CPU file's dataset count."""
    out, datasets = [], 0
    with h5py.File(cpu_path, "r") as c, h5py.File(gpu_path, "r") as g:
        names_c, names_g = [], []
        c.visit(names_c.append)
        g.visit(names_g.append)
        if sorted(names_c) != sorted(names_g):
            out.append(f"objects differ: only cpu {sorted(set(names_c) - set(names_g))}, "
                       f"only gpu {sorted(set(names_g) - set(names_c))}")
        for name in ["/"] + sorted(set(names_c) & set(names_g)):
            oc, og = c[name], g[name]
            ac, ag = attrs_of(oc), attrs_of(og)
            if sorted(ac) != sorted(ag):
                out.append(f"{name}: attribute names differ")
            for k in sorted(set(ac) & set(ag)):
                if not same_value(ac[k], ag[k]):
                    out.append(f"{name}@{k}: cpu {ac[k]!r} gpu {ag[k]!r}")
            if isinstance(oc, h5py.Dataset):
                datasets += 1
                if not isinstance(og, h5py.Dataset):
                    out.append(f"{name}: a dataset on the cpu only")
                    continue
                vc, vg = oc[()], og[()]
                if not same_value(vc, vg):
                    n = "?"
                    if vc.shape == vg.shape:
                        n = int(np.count_nonzero(vc.view(np.uint8) != vg.view(np.uint8)))
                    out.append(f"{name}: values differ ({n} bytes of {vc.nbytes})")
    return out, datasets


def main(argv):
    if len(argv) != 2 or argv[1] in ("-h", "--help"):
        print(__doc__.strip(), file=sys.stderr if len(argv) != 2 else sys.stdout)
        return 0 if len(argv) == 2 else 2
    pairs = sorted(glob.glob(os.path.join(argv[1], "*.cpu.h5")))
    if not pairs:
        print(f"cli_compare.py: no *.cpu.h5 in {argv[1]}", file=sys.stderr)
        return 2
    bad = 0
    for cpu in pairs:
        name = os.path.basename(cpu)[: -len(".cpu.h5")]
        gpu = cpu[: -len(".cpu.h5")] + ".gpu.h5"
        if not os.path.exists(gpu):
            print(f"{name}: no GPU file (the GPU run failed or refused)")
            bad += 1
            continue
        try:
            diff, count = differences(cpu, gpu)
        except OSError as e:  # not HDF5, truncated, unreadable
            print(f"{name}: cannot read the pair: {e}")
            bad += 1
            continue
        print(f"{name}: {'identical' if not diff else 'DIFFERENT'} ({count} datasets)" +
              ("" if not diff else ": " + "; ".join(diff[:5])))
        bad += bool(diff)
    print(f"pairs: {len(pairs)}, different or missing: {bad}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

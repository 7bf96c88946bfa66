#!/usr/bin/env python3
"""Accumulation error of FP8 GEMMs versus K: hopper-qgmma fast vs promoted vs FP32.

One command (from the repository root):

    python3 experiments/accum-vs-k/run.py                      # CPU models -> results.h5 + plot
    python3 experiments/accum-vs-k/run.py --device gpu --csv X  # the same GEMMs through cuBLASLt (H200)
    python3 experiments/accum-vs-k/run.py --gpu-csv X           # CPU models, H200 numbers side by side

For each K in 256 ... 16384 and two data kinds (signed Gaussian; |Gaussian|, whose products all
have one sign, like the inputs of a post-activation GEMM), A (M x K) and B (N x K) are drawn in
float64, quantized per tensor to FP8 E4M3 (scale = amax / 448, ml_dtypes round-to-nearest-even),
and multiplied by `fpsim gemm` under each accumulation model with the per-tensor scales. The
reference is the fp64 model on the same FP8 operands, so the error measured is the accumulation
error alone (quantization error excluded). Metrics: relative Frobenius error ||C - R|| / ||R||
and the largest elementwise relative error |C - R| / |R| over outputs with |R| >= 0.1 rms(R).
"""
import argparse
import csv
import datetime
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

KS = [256, 512, 1024, 2048, 4096, 8192, 16384]
CPU_MODELS = ["fp32", "hopper-qgmma:fast", "hopper-qgmma:promote=128", "mma-sync-fp8"]
GPU_MODELS = {"h200-cublaslt-fast": "hopper-qgmma:fast", "h200-cublaslt-nonfast": "hopper-qgmma:promote=128"}
DATA = ["gaussian", "positive"]
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def find_fpsim(given):
    for p in [given, os.path.join(ROOT, "build-gemm", "fpsim"), os.path.join(ROOT, "build", "fpsim"),
              os.path.join(ROOT, "build-devgemm", "fpsim-gemm")]:
        if p and os.path.exists(p):
            return p
    sys.exit("run.py: no fpsim binary found; build it (cmake) or pass --fpsim PATH")


def quantize_e4m3(x):
    import ml_dtypes
    scale = float(np.abs(x).max()) / 448.0
    q = (x / scale).astype(ml_dtypes.float8_e4m3fn).astype(np.float32)
    return q, np.float32(scale)


def operands(kind, M, N, K, seed):
    rng = np.random.default_rng([seed, K, DATA.index(kind)])
    a = rng.standard_normal((M, K))
    b = rng.standard_normal((N, K))
    if kind == "positive":
        a, b = np.abs(a), np.abs(b)
    qa, sa = quantize_e4m3(a)
    qb, sb = quantize_e4m3(b)
    return qa, qb, sa, sb


def gemm(fpsim, tmp, qa, qb, sa, sb, model, device="cpu", info=None):
    pa, pb, pc = (os.path.join(tmp, n) for n in ("A.npy", "B.npy", "C.npy"))
    np.save(pa, qa)
    np.save(pb, qb)
    cmd = [fpsim, "gemm", "--a", pa, "--b", pb, "--accum", model, "--in-format",
           "e4m3" if model not in ("fp32", "fp64") else "f32", "--scale-a", repr(float(sa)),
           "--scale-b", repr(float(sb)), "--out", pc, "--quiet"]
    if device == "gpu":  # keep the note naming the cuBLASLt algorithm (split-K changes the order)
        cmd = [c for c in cmd if c != "--quiet"] + ["--device", "gpu"]
        r = subprocess.run(cmd, check=True, capture_output=True, text=True)
        if info is not None:
            info["algo"] = r.stderr.strip().splitlines()[0] if r.stderr.strip() else ""
    else:
        subprocess.run(cmd, check=True)
    return np.load(pc)


def errors(c, ref):
    c, ref = c.astype(np.float64), ref.astype(np.float64)
    fro = np.linalg.norm(c - ref) / np.linalg.norm(ref)
    big = np.abs(ref) >= 0.1 * np.sqrt(np.mean(ref * ref))
    maxrel = float(np.max(np.abs(c - ref)[big] / np.abs(ref)[big]))
    return float(fro), maxrel


def measure(args, fpsim, models, device):
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for kind in DATA:
            for K in KS:
                qa, qb, sa, sb = operands(kind, args.m, args.n, K, args.seed)
                ref = gemm(fpsim, tmp, qa, qb, sa, sb, "fp64")
                for label, model in models:
                    info = {}
                    c = gemm(fpsim, tmp, qa, qb, sa, sb, model, device, info)
                    fro, maxrel = errors(c, ref)
                    row = {"data": kind, "K": K, "model": label, "rel_fro": fro, "max_rel": maxrel}
                    if device == "gpu":  # the CPU model of the same configuration, bit for bit
                        split = re.search(r"splitK (\d+)", info.get("algo", ""))
                        cpu_model = model + (f",splitk={split.group(1)}" if split and split.group(1) != "1" else "")
                        cpu = gemm(fpsim, tmp, qa, qb, sa, sb, cpu_model)
                        row["bit_exact_vs_model"] = float(np.mean(cpu.view(np.uint32) == c.view(np.uint32)))
                        row["cpu_model"] = cpu_model
                    rows.append(row)
                    print(f"{kind:9s} K={K:6d} {label:26s} rel_fro={fro:.3e} max_rel={maxrel:.3e}"
                          + (f" bit-exact vs {row['cpu_model']} {row['bit_exact_vs_model']:.4f}"
                             if device == "gpu" else ""),
                          flush=True)
    return rows


def write_outputs(args, rows):
    import h5py
    out = args.out
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "accum_vs_k.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["data", "K", "model", "rel_fro", "max_rel"])
        for r in rows:
            w.writerow([r["data"], r["K"], r["model"], f"{r['rel_fro']:.6e}", f"{r['max_rel']:.6e}"])
    models = sorted({r["model"] for r in rows}, key=lambda m: (m.startswith("h200"), m))
    h5 = os.path.join(out, "results.h5")
    tmp = h5 + ".tmp"
    with h5py.File(tmp, "w") as f:
        f.attrs["command"] = " ".join(sys.argv)
        f.attrs["date"] = datetime.datetime.now(datetime.timezone.utc).isoformat()
        f.attrs["M"], f.attrs["N"], f.attrs["seed"] = args.m, args.n, args.seed
        f.attrs["reference"] = "fp64 model on the same FP8 operands (accumulation error only)"
        f.attrs["quantization"] = "per-tensor E4M3, scale = amax/448, ml_dtypes RNE"
        f.create_dataset("K", data=np.array(KS, dtype=np.int64))
        f["K"].attrs["dims"] = "K: reduction length"
        for kind in DATA:
            g = f.create_group(kind)
            for m in models:
                sel = {r["K"]: r for r in rows if r["data"] == kind and r["model"] == m}
                if not sel:
                    continue
                gm = g.create_group(m.replace(":", "_").replace("=", ""))
                gm.attrs["model"] = m
                gm.create_dataset("rel_fro", data=np.array([sel[k]["rel_fro"] if k in sel else np.nan for k in KS]))
                gm.create_dataset("max_rel", data=np.array([sel[k]["max_rel"] if k in sel else np.nan for k in KS]))
    os.replace(tmp, h5)
    # gnuplot: one data file per (data, model), two panels.
    plot_dir = os.path.join(out, "plotdata")
    os.makedirs(plot_dir, exist_ok=True)
    lines = {k: [] for k in DATA}
    for kind in DATA:
        for m in models:
            sel = [r for r in rows if r["data"] == kind and r["model"] == m]
            if not sel:
                continue
            fn = os.path.join(plot_dir, f"{kind}_{m.replace(':', '_').replace('=', '')}.dat")
            with open(fn, "w") as f:
                for r in sorted(sel, key=lambda r: r["K"]):
                    f.write(f"{r['K']} {r['rel_fro']:.6e} {r['max_rel']:.6e}\n")
            lines[kind].append((fn, m))
    gp = os.path.join(out, "accum_vs_k.gp")
    with open(gp, "w") as f:
        f.write('set terminal pngcairo size 1400,560 font ",10"\n')
        f.write('set output "accum_vs_k.png"\n')  # paths relative to out/: run gnuplot there
        f.write('set multiplot layout 1,2\nset logscale xy\nset xlabel "K"\nset ylabel "relative error vs fp64"\n')
        f.write('set key top left\nset grid\nset format y "10^{%L}"\nset xtics (256,1024,4096,16384)\nset xrange [200:20000]\n')
        for kind in DATA:
            f.write(f'set title "FP8 E4M3 GEMM {args.m}x{args.n}xK, {kind} data: solid = rel. Frobenius, '
                    'dashed = max elementwise"\n')
            parts = []
            for i, (fn, m) in enumerate(lines[kind]):
                rel = os.path.relpath(fn, out)
                parts.append(f'"{rel}" u 1:2 w lp lc {i + 1} pt {i + 4} title "{m}"')
                parts.append(f'"{rel}" u 1:3 w l lc {i + 1} dt 2 notitle')
            f.write("plot " + ", ".join(parts) + "\n")
        f.write("unset multiplot\n")
    subprocess.run(["gnuplot", "accum_vs_k.gp"], check=False, cwd=out)
    print(f"wrote {h5}, {os.path.join(out, 'accum_vs_k.csv')}, {os.path.join(out, 'accum_vs_k.png')}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--fpsim", help="fpsim binary (default: build-gemm/fpsim, build/fpsim)")
    ap.add_argument("--device", choices=["cpu", "gpu"], default="cpu")
    ap.add_argument("--m", type=int, default=64)
    ap.add_argument("--n", type=int, default=64)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--out", default=os.path.join(HERE, "out"))
    ap.add_argument("--csv", help="--device gpu: where to write the H200 rows")
    ap.add_argument("--gpu-csv", help="H200 rows from a --device gpu run, plotted beside the CPU models")
    args = ap.parse_args()
    fpsim = find_fpsim(args.fpsim)
    if args.device == "gpu":
        rows = measure(args, fpsim, list(GPU_MODELS.items()), "gpu")
        path = args.csv or os.path.join(args.out, "accum_vs_k_gpu.csv")
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        with open(path, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["data", "K", "model", "rel_fro", "max_rel", "bit_exact_vs_model", "cpu_model"])
            for r in rows:
                w.writerow([r["data"], r["K"], r["model"], f"{r['rel_fro']:.6e}", f"{r['max_rel']:.6e}",
                            f"{r['bit_exact_vs_model']:.6f}", r["cpu_model"]])
        print(f"wrote {path}")
        return
    rows = measure(args, fpsim, [(m, m) for m in CPU_MODELS], "cpu")
    if args.gpu_csv:
        with open(args.gpu_csv) as f:
            for r in csv.DictReader(f):
                rows.append({"data": r["data"], "K": int(r["K"]), "model": r["model"],
                             "rel_fro": float(r["rel_fro"]), "max_rel": float(r["max_rel"])})
    write_outputs(args, rows)


if __name__ == "__main__":
    main()

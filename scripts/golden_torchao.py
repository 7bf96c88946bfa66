#!/usr/bin/env python3
"""Golden vectors for fpsim's block quantizers, produced by torchao on the CPU.

Writes small .npy files and a manifest into data/golden/ (see data/golden/README.md):
  inputs   in_<name>.npy          float32 2-D tensors (seeded, with adversarial rows)
  outputs  <case>_scales.npy      uint8 E8M0 (MX) or E4M3 (NVFP4) scale codes, row-major
           <case>_codes.npy       uint8 element codes (FP4 packed two per byte, even element in
                                  the low nibble, torchao pack_uint4; FP6/FP8 one per byte)
  manifest.txt                    one line per case: case input scheme axis
The scheme text is fpsim's name for the torchao call that made the case (ao=0.18: the torchao
release these were made with; see formats/fpsim_block.h). tests/blocks/test_block_golden.c
compares fpsim to every case byte for byte.

Usage: python3 scripts/golden_torchao.py [--out data/golden]
Needs torch and torchao (pip install torch torchao); CPU only.
"""
import argparse
import os
import sys

import numpy as np


def make_inputs(seed=20261130):
    rng = np.random.default_rng(seed)
    rows, cols = 32, 64
    # normal: Gaussian rows with per-row log-uniform scales over 2^-20 .. 2^20
    scales = np.exp2(rng.uniform(-20, 20, size=(rows, 1)))
    normal = (rng.standard_normal((rows, cols)) * scales).astype(np.float32)
    # a few heavy tails
    normal[rng.integers(0, rows, 8), rng.integers(0, cols, 8)] *= 37.0

    # edge: finite adversarial rows (each row = 2 MX blocks of 32 = 4 NVFP4 blocks of 16)
    edge = (rng.standard_normal((rows, cols))).astype(np.float32)
    edge[0] = 0.0                                            # all-zero blocks
    edge[1] = rng.standard_normal(cols).astype(np.float32) * np.float32(1e-40)  # FP32 subnormals
    edge[2, :] = np.float32(1.0)
    edge[2, 0] = np.float32(448.0)                           # amax exactly 448
    edge[2, 32] = np.float32(256.0)                          # amax a power of two
    edge[3, 0] = np.frombuffer(np.uint32(0x437FFFFF).tobytes(), np.float32)[0]  # just below 256
    edge[3, 32] = np.frombuffer(np.uint32(0x43800001).tobytes(), np.float32)[0] # just above 256
    edge[4] = np.float32(3.0e38) * np.sign(rng.standard_normal(cols)).astype(np.float32)  # huge
    edge[5] = rng.standard_normal(cols).astype(np.float32) * np.float32(1e-30)  # tiny
    edge[6] = rng.standard_normal(cols).astype(np.float32) * np.float32(1e3)
    edge[6, ::5] = np.float32(1e-10)                         # flushed to zero
    # RNE ties on the E2M1 / E4M3 grids relative to a block max of 6 / 448
    edge[7, :16] = np.array([6, 0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5, -0.25, -0.75, -1.25, -1.75,
                             -2.5, -3.5, -5, 0.1], np.float32)
    edge[7, 16:32] = np.float32(448.0) * edge[7, :16] / np.float32(6.0)
    edge[8] = np.float32(500.0)                              # clamped under FLOOR
    edge[9] = np.float32(7.0)
    for r in range(10, rows):                                # powers of two and neighbours
        e = int(rng.integers(-30, 30))
        v = np.float32(2.0) ** e
        edge[r] = rng.choice(np.array([v, -v, np.nextafter(v, np.float32(0)),
                                       np.nextafter(v, np.float32(np.inf)), v * np.float32(1.5)],
                                      np.float32), size=cols)

    # special: NaN and Inf inside otherwise normal blocks
    special = rng.standard_normal((32, cols)).astype(np.float32)
    special[0, 3] = np.nan
    special[1, 40] = np.inf
    special[2, 7] = -np.inf
    special[3, 9] = np.frombuffer(np.uint32(0xFFC00000).tobytes(), np.float32)[0]  # -NaN
    special[4, :] = np.nan
    special[5, 0] = np.inf
    special[5, 1] = np.nan
    return {"normal": normal, "edge": edge, "special": special}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "data", "golden"))
    args = ap.parse_args()
    try:
        import torch
        import torchao
        from torchao.prototype.mx_formats.config import ScaleCalculationMode
        from torchao.prototype.mx_formats.mx_tensor import to_mx
        from torchao.prototype.mx_formats.nvfp4_tensor import (nvfp4_quantize,
                                                               per_tensor_amax_to_scale)
    except ImportError as e:
        print(f"golden_torchao.py: needs torch and torchao ({e})", file=sys.stderr)
        return 2
    os.makedirs(args.out, exist_ok=True)
    inputs = make_inputs()
    for name, x in inputs.items():
        np.save(os.path.join(args.out, f"in_{name}.npy"), x)

    elems = [("mxfp8-e4m3", torch.float8_e4m3fn), ("mxfp8-e5m2", torch.float8_e5m2),
             ("mxfp6-e2m3", "fp6_e2m3"), ("mxfp6-e3m2", "fp6_e3m2"),
             ("mxfp4", torch.float4_e2m1fn_x2)]
    modes = [("floor", ScaleCalculationMode.FLOOR), ("ceil", ScaleCalculationMode.CEIL),
             ("even", ScaleCalculationMode.EVEN), ("rceil", ScaleCalculationMode.RCEIL)]
    lines = []

    def save(case, inp, scheme, axis, scales, codes):
        np.save(os.path.join(args.out, f"{case}_scales.npy"),
                np.ascontiguousarray(scales.view(torch.uint8).numpy()))
        np.save(os.path.join(args.out, f"{case}_codes.npy"),
                np.ascontiguousarray(codes.view(torch.uint8).numpy()))
        lines.append(f"{case} {inp} {scheme} {axis}")

    for inp, x in inputs.items():
        t = torch.from_numpy(x)
        for ename, edt in elems:
            for mname, mode in modes:
                scale, data = to_mx(t.contiguous(), edt, 32, mode)
                scheme = f"{ename}:rule={mname},ao=0.18"
                save(f"mx_{inp}_{ename}_{mname}", inp, scheme, "rows", scale, data)
        # columnwise copy: blocks along dim 0 = to_mx of the transpose
        scale, data = to_mx(t.t().contiguous(), torch.float8_e4m3fn, 32, ScaleCalculationMode.FLOOR)
        save(f"mx_{inp}_mxfp8-e4m3_floor_cols", inp, "mxfp8-e4m3:rule=floor,ao=0.18", "cols",
             scale, data)
        # NVFP4 single level (no per-tensor scale)
        scale, data = nvfp4_quantize(t.contiguous(), 16, None)
        save(f"nvfp4_{inp}_single", inp, "nvfp4:chain=torchao,global=0", "rows", scale, data)
        if inp != "special":  # two-level needs a finite tensor amax
            pts = per_tensor_amax_to_scale(torch.max(torch.abs(t)))
            scale, data = nvfp4_quantize(t.contiguous(), 16, pts)
            save(f"nvfp4_{inp}_two", inp, "nvfp4:chain=torchao", "rows", scale, data)

    # cuBLAS 128x4 scale layout: torchao to_blocked of the scales of a tensor whose scale grid is
    # not a multiple of 128 x 4 (padding included)
    from torchao.prototype.mx_formats.utils import to_blocked
    rng = np.random.default_rng(7)
    swz = (rng.standard_normal((200, 320)) * np.exp2(rng.uniform(-8, 8, (200, 1)))).astype(np.float32)
    np.save(os.path.join(args.out, "in_swizzle.npy"), swz)
    t = torch.from_numpy(swz)
    for case, scheme, (scale, data) in (
            ("swz_mx", "mxfp8-e4m3:rule=floor,ao=0.18",
             to_mx(t, torch.float8_e4m3fn, 32, ScaleCalculationMode.FLOOR)),
            ("swz_nvfp4", "nvfp4:chain=torchao",
             nvfp4_quantize(t, 16, per_tensor_amax_to_scale(torch.max(torch.abs(t)))))):
        save(case, "swizzle", scheme, "rows+cublas", scale, data)
        blocked = to_blocked(scale.view(torch.uint8).view(200, -1)).flatten()
        np.save(os.path.join(args.out, f"{case}_blocked.npy"),
                np.ascontiguousarray(blocked.view(torch.uint8).numpy()))

    # graphcore gfloat (pure Python, float64): block.compute_scale_amax + encode_block, RNE,
    # saturating, for the finite inputs (rule=gfloat)
    try:
        import gfloat
        from gfloat.block import compute_scale_amax, encode_block
        from gfloat import formats as gf
        gfmts = [("mxfp8-e4m3", gf.format_info_mxfp8_e4m3), ("mxfp8-e5m2", gf.format_info_mxfp8_e5m2),
                 ("mxfp6-e2m3", gf.format_info_mxfp6_e2m3), ("mxfp6-e3m2", gf.format_info_mxfp6_e3m2),
                 ("mxfp4", gf.format_info_mxfp4_e2m1)]
        for inp in ("normal", "edge"):
            x = inputs[inp].astype(np.float64)
            for ename, fi in gfmts:
                rows, cols = x.shape
                scales = np.zeros((rows, cols // 32), np.uint8)
                codes = np.zeros((rows, cols), np.uint8)
                for r in range(rows):
                    for b in range(cols // 32):
                        v = x[r, 32 * b:32 * b + 32]
                        sc = compute_scale_amax(fi.etype.emax, v)
                        enc = list(encode_block(fi, sc, v / sc))
                        scales[r, b] = enc[0]
                        codes[r, 32 * b:32 * b + 32] = enc[1:]
                if ename == "mxfp4":
                    codes = (codes[:, 0::2] | (codes[:, 1::2] << 4)).astype(np.uint8)
                case = f"gfloat_{inp}_{ename}"
                np.save(os.path.join(args.out, f"{case}_scales.npy"), scales)
                np.save(os.path.join(args.out, f"{case}_codes.npy"), codes)
                lines.append(f"{case} {inp} {ename}:rule=gfloat rows")
        gfloat_version = gfloat.__version__ if hasattr(gfloat, "__version__") else "0.5.2"
    except ImportError:
        gfloat_version = None
        print("gfloat not installed: gfloat cases skipped", file=sys.stderr)

    with open(os.path.join(args.out, "manifest.txt"), "w") as f:
        f.write(f"# made by scripts/golden_torchao.py with torch {torch.__version__}, "
                f"torchao {torchao.__version__}, numpy {np.__version__} (CPU)"
                + (f", gfloat {gfloat_version}" if gfloat_version else "") + "\n")
        f.write("# case input scheme axis\n")
        for line in lines:
            f.write(line + "\n")
    print(f"wrote {len(lines)} cases to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

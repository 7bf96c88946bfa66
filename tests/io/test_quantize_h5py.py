#!/usr/bin/env python3
"""fpsim quantize files read from Python (h5py), checked against numpy + ml_dtypes.

1. The documented layout (docs/hdf5-layout.md) is what h5py sees: provenance attributes, every
   bit-deciding attribute, dataset shapes and dtypes, str attributes.
2. MXFP8 E4M3 with torchao's FLOOR rule, recomputed here independently: E8M0 exponent from the
   FP32 exponent field of each 32-block's amax minus emax 8 (formats-spec.md 4.2), elements
   multiplied by 2^(127-e), clamped to +-448 and cast with ml_dtypes' float8_e4m3fn (RNE). Codes,
   scales, the cuBLAS 128x4 swizzle and dequant must match bit for bit.
3. NVFP4: dequant equals the E2M1 codes (two per byte, even element in the low nibble) times the
   E4M3 block scale times global_scale, in float32, left to right, as docs/hdf5-layout.md shows.
4. bfloat16 input saved by ml_dtypes (np.save -> '<V2') is read with --dtype bf16 and gives the
   same file as the same values in float32.
5. --axis both: groups rowwise/ and columnwise/ equal the single-axis files; the columnwise copy
   equals the independent MXFP8 FLOOR recomputation on the transpose.
Skipped (exit 77) when h5py or ml_dtypes cannot be imported.
"""
import argparse
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import h5py
    import ml_dtypes
except ImportError as e:  # pragma: no cover
    print(f"skipped: {e}")
    sys.exit(77)

failures = 0


def check(cond, what):
    global failures
    if not cond:
        failures += 1
        print(f"FAIL {what}")


def run(fpsim, *args):
    r = subprocess.run([fpsim, *args], capture_output=True, text=True)
    if r.returncode != 0:
        print(f"FAIL fpsim {' '.join(args)}: exit {r.returncode}: {r.stderr.strip()}")
        sys.exit(1)


def test_data(rows, cols, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    x *= np.exp2(rng.integers(-6, 7, size=(rows, cols // 16, 1))).repeat(16, axis=2).reshape(rows, cols).astype(np.float32)
    x[0, :32] = 0.0  # an all-zero block
    x[1, 3] = 500.0  # saturates under FLOOR (448 < 500 < 512)
    return x


def mx_floor_e4m3(x):
    """Independent torchao FLOOR MXFP8 E4M3 along rows: (codes uint8, e8m0 uint8, dequant f32)."""
    r, c = x.shape
    blocks = x.reshape(r, c // 32, 32)
    amax = np.abs(blocks).max(axis=2).astype(np.float32)
    exp_field = (amax.view(np.uint32) >> 23).astype(np.int64) & 0xFF
    unbiased = np.clip(exp_field - 127 - 8, -127, 128)
    e8m0 = (unbiased + 127).astype(np.uint8)  # 255 only for 128 (not reached by finite data here)
    recip = np.ldexp(np.float32(1.0), (127 - e8m0.astype(np.int64))).astype(np.float32)
    scaled = (blocks * recip[:, :, None]).astype(np.float32)
    scaled = np.clip(scaled, -448.0, 448.0)
    q = scaled.astype(ml_dtypes.float8_e4m3fn)
    codes = q.view(np.uint8).reshape(r, c)
    scale = np.ldexp(np.float64(1.0), e8m0.astype(np.int64) - 127)
    deq = (q.astype(np.float64) * scale[:, :, None]).astype(np.float32).reshape(r, c)
    return codes, e8m0, deq


def swizzle_128x4(s):
    """cuBLAS 128x4 block-scaling layout (formats-spec.md 4.3), padding 0, as a flat array."""
    r, c = s.shape
    pr, pc = -(-r // 128) * 128, -(-c // 4) * 4
    out = np.zeros(pr * pc, np.uint8)
    for i in range(r):
        for j in range(c):
            tile = (i // 128) * (pc // 4) + j // 4
            out[tile * 512 + (i % 32) * 16 + ((i % 128) // 32) * 4 + j % 4] = s[i, j]
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fpsim", required=True)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="fpsim_h5py_") as d:
        x = test_data(160, 256, 7)
        xin = os.path.join(d, "x.npy")
        np.save(xin, x)

        # 1 + 2: MXFP8 E4M3 FLOOR.
        out = os.path.join(d, "mx.h5")
        run(a.fpsim, "quantize", "--scheme", "mxfp8-e4m3:rule=floor", "--in", xin, "--out", out, "--quiet")
        with h5py.File(out, "r") as f:
            for k in ("fpsim_version", "git_commit", "command_line", "date", "scheme", "scheme_name",
                      "element_format", "scale_format", "scale_rule", "policy", "nan_policy", "axis"):
                check(isinstance(f.attrs.get(k), str) and f.attrs[k] != "", f"attribute {k} is a non-empty str")
            check(int(f.attrs["seed"]) == 0, "seed attribute (the default; --seed needs sr=1)")
            check("mxfp8-e4m3" in f.attrs["command_line"], "command_line")
            check(f.attrs["scheme_name"] == "mxfp8-e4m3" and f.attrs["scale_rule"] == "floor", "scheme attributes")
            check(int(f.attrs["block_rows"]) == 1 and int(f.attrs["block_cols"]) == 32, "block shape")
            check(f["codes"].dtype == np.uint8 and f["codes"].shape == x.shape, "codes dtype/shape")
            check(f["dequant"].dtype == np.float32 and f["dequant"].shape == x.shape, "dequant dtype/shape")
            codes, e8m0, deq = mx_floor_e4m3(x)
            check(np.array_equal(f["scales"][...], e8m0), "MX scales vs independent FLOOR")
            check(np.array_equal(f["codes"][...], codes), "MX codes vs ml_dtypes cast")
            check(np.array_equal(f["dequant"][...].view(np.uint32), deq.view(np.uint32)), "MX dequant bits")
            check(np.array_equal(f["scales_cublas"][...].reshape(-1), swizzle_128x4(e8m0)), "cuBLAS 128x4 swizzle")
            check(int(f.attrs["saturated"]) >= 1 and int(f.attrs["zero_blocks"]) >= 1, "saturated / zero-block counts")
            err = deq.astype(np.float64) - x.astype(np.float64)
            check(abs(float(f.attrs["max_abs_err"]) - float(np.abs(err).max())) == 0.0, "max_abs_err")

        # 3: NVFP4 dequant from codes, block scales and the global scale.
        out = os.path.join(d, "nv.h5")
        run(a.fpsim, "quantize", "--scheme", "nvfp4", "--in", xin, "--out", out, "--quiet")
        with h5py.File(out, "r") as f:
            packed = f["codes"][...]
            check(packed.shape == (160, 128), "NVFP4 codes packed two per byte")
            e2m1 = np.empty((160, 256), np.uint8)
            e2m1[:, 0::2], e2m1[:, 1::2] = packed & 0xF, packed >> 4
            grid = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6], np.float32)
            q = np.where(e2m1 & 8, np.float32(-1), np.float32(1)) * grid[e2m1 & 7]
            s = f["scales"][...].view(ml_dtypes.float8_e4m3fn).astype(np.float32)
            check(s.shape == (160, 16), "NVFP4 scales shape")
            g = np.float32(f["global_scale"][()])
            deq = (q * np.repeat(s, 16, axis=1)).astype(np.float32) * g
            check(np.array_equal(deq.astype(np.float32).view(np.uint32), f["dequant"][...].view(np.uint32)),
                  "NVFP4 dequant = (code x E4M3 scale) x global_scale")
            check(np.array_equal(f["scale_inv"][...], s), "NVFP4 scale_inv = decoded E4M3")

        # 4: bf16 input as ml_dtypes saves it.
        xb = x.astype(ml_dtypes.bfloat16)
        bin_ = os.path.join(d, "xb.npy")
        np.save(bin_, xb)
        fin = os.path.join(d, "xb_f32.npy")
        np.save(fin, xb.astype(np.float32))
        ob, of = os.path.join(d, "b.h5"), os.path.join(d, "f.h5")
        run(a.fpsim, "quantize", "--scheme", "nvfp4", "--in", bin_, "--dtype", "bf16", "--out", ob, "--quiet")
        run(a.fpsim, "quantize", "--scheme", "nvfp4", "--in", fin, "--out", of, "--quiet")
        with h5py.File(ob, "r") as fb, h5py.File(of, "r") as ff:
            check(fb.attrs["input_dtype"] == "bf16" and ff.attrs["input_dtype"] == "f32", "input_dtype attributes")
            for name in ("codes", "scales", "dequant"):
                check(np.array_equal(fb[name][...], ff[name][...]), f"bf16 input == same values in f32: {name}")

        # 5: --axis both: groups rowwise/ and columnwise/ hold what --axis rows / cols write at the
        # root, and the columnwise MXFP8 FLOOR copy is the independent oracle's on the transpose.
        ob, orr, oc = (os.path.join(d, n) for n in ("both.h5", "rows.h5", "cols.h5"))
        for axis, out in (("both", ob), ("rows", orr), ("cols", oc)):
            run(a.fpsim, "quantize", "--scheme", "mxfp8-e4m3:rule=floor", "--in", xin, "--out", out, "--axis", axis,
                "--quiet")
        with h5py.File(ob, "r") as fb, h5py.File(orr, "r") as fr, h5py.File(oc, "r") as fc:
            check(fb.attrs["axis"] == "both" and "codes" not in fb, "both: root axis attribute, no root datasets")
            for group, single, axis in (("rowwise", fr, "rows"), ("columnwise", fc, "cols")):
                g = fb[group]
                check(g.attrs["axis"] == axis, f"both: {group} axis attribute")
                check(sorted(g.keys()) == sorted(single.keys()), f"both: {group} datasets {sorted(g.keys())}")
                for name in single.keys():
                    check(np.array_equal(g[name][...], single[name][...]), f"both: {group}/{name} == --axis {axis}")
                for k in ("amax", "sqnr_db", "saturated", "zero_blocks", "blocks", "max_abs_err"):
                    check(g.attrs[k] == single.attrs[k], f"both: {group} attribute {k}")
            codes, e8m0, _ = mx_floor_e4m3(np.ascontiguousarray(x.T))
            check(np.array_equal(fb["columnwise/codes"][...], codes), "both: columnwise codes vs the oracle on x^T")
            check(np.array_equal(fb["columnwise/scales"][...], e8m0), "both: columnwise scales vs the oracle on x^T")
        r = subprocess.run([a.fpsim, "quantize", "--scheme", "nvfp4", "--in", xin, "--out", os.path.join(d, "b.npy"),
                            "--axis", "both"], capture_output=True, text=True)
        check(r.returncode == 2 and "--axis both" in r.stderr and not os.path.exists(os.path.join(d, "b.npy")),
              f"both into .npy refused with one line (exit {r.returncode}: {r.stderr.strip()})")

    print(f"{'FAIL' if failures else 'ok  '} [quantize_h5py] {failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

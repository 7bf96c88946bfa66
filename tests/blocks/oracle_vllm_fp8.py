#!/usr/bin/env python3
"""vLLM's FP8 activation quantizers (scale=vllm-cuda, vllm-cuda-ue8m0, vllm-native) against an
independent recomputation of vLLM's own statements.

vllm-cuda: per_token_group_fp8_quant (csrc/quantization/8bit/fp8/per_token_group_quant.cu), the
op vLLM's per_token_group_quant_fp8 prefers on CUDA, restated in numpy float32: the amax
reduction starts at eps = 1e-10 and uses fmaxf (np.fmax: a NaN is skipped), sf = amax / 448 and
y = x / sf as IEEE float32 divisions, fminf(fmaxf(y, -448), 448) (np.fmax / np.fmin: a NaN
quotient becomes -448), then the satfinite RNE cast (ml_dtypes' float8_e4m3fn: RNE, and nothing
is left to saturate after the clamp).

vllm-cuda-ue8m0: the same op with scale_ue8m0, as its register kernel writes it (16-bit inputs in
groups of 128): y_s = fmaxf(|amax / 448|, 1e-10) rounded up to a power of two, then each element
x * (1 / y_s). The power of two is taken here from np.frexp (exact), not from the float's fields
as the kernel and fpsim do, and the element is multiplied as the kernel does where fpsim divides.

vllm-native: QuantFP8._quantize_group_native run in torch (CPU) statement by statement, with one
change that makes it what eager CUDA torch computes: `absmax / _FP8_MAX` divides a CUDA tensor by
a CPU scalar, which CUDA torch does as a multiply by the FP32 reciprocal (formats-spec.md 9), so
it is written here as absmax * fp32(1/448). The torch CPU kernels give the NaN signs that fpsim's
torch policies follow.

Both: 1x128 blocks along rows (the activation case), along columns (--axis cols) and 128x128
tiles, on Gaussian data (mostly BF16 values) with per-block magnitudes from 2^-24 to 2^12, rows
of zeros, tiny values under the eps floor, NaN, +-Inf and float32 subnormals, and rows of
elements next to E4M3 rounding midpoints where x / sf and x * (1/sf) give different codes. Codes and the stored scale
(sf: the dequantization multiplier) must match bit for bit. Also prints how many codes each
rule changes against the multiplying rules (deepgemm-fp32, te-fp32).
Skipped (exit 77) without numpy, ml_dtypes, h5py or torch.
"""
import argparse
import os
import subprocess
import sys
import tempfile

try:
    import h5py
    import ml_dtypes
    import numpy as np
    import torch
except ImportError as e:  # pragma: no cover
    print(f"skipped: {e}")
    sys.exit(77)

failures = 0


def check(cond, what):
    global failures
    if not cond:
        failures += 1
        print(f"FAIL {what}")


def quantize(fpsim, scheme, xin, out, axis="rows"):
    r = subprocess.run([fpsim, "quantize", "--scheme", scheme, "--in", xin, "--out", out, "--axis", axis,
                        "--quiet"], capture_output=True, text=True)
    if r.returncode != 0:
        print(f"FAIL fpsim quantize {scheme}: exit {r.returncode}: {r.stderr.strip()}")
        sys.exit(1)
    with h5py.File(out, "r") as f:
        return f["codes"][...], f["scales"][...]


def test_data(rows, cols, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    mag = np.exp2(rng.integers(-24, 13, size=(rows, cols // 128, 1))).astype(np.float32)
    x = (x.reshape(rows, cols // 128, 128) * mag).reshape(rows, cols)
    x[0, :] = 0.0                                   # zero blocks: sf from the floor alone
    x[1, :] = rng.standard_normal(cols).astype(np.float32) * np.float32(1e-12)  # amax < 1e-10
    x[2, 5] = np.nan                                # NaN: skipped by fmaxf, kept by torch.max
    x[2, 300] = -np.nan
    x[3, 130] = np.inf                              # Inf amax: sf = Inf, x / Inf = 0, Inf / Inf = NaN
    x[3, 260] = -np.inf
    x[4, :128] = (rng.standard_normal(128) * 1e-40).astype(np.float32)  # float32 subnormals
    x[5, 128:256] = np.float32(448.0)               # x / sf = 448 exactly
    # Rows 8 on hold BF16 values, as activations do: their short significands put x / sf on or
    # next to E4M3 rounding midpoints far more often than random FP32 values, which is where a
    # division and a multiply by the reciprocal part.
    x[8:] = x[8:].astype(ml_dtypes.bfloat16).astype(np.float32)
    # The last 32 rows: elements where dividing and multiplying by the reciprocal part (16 rows
    # for each rule's sf), so that the element step itself is checked, not only sf.
    x[-32:-16] = adversarial_rows(16, cols, seed + 1, native=False)
    x[-16:] = adversarial_rows(16, cols, seed + 2, native=True)
    return x


def e4m3_midpoints():
    """The midpoints between neighbouring positive finite E4M3 values."""
    v = np.arange(0x01, 0x7F, dtype=np.uint8).view(ml_dtypes.float8_e4m3fn).astype(np.float64)
    return ((v[:-1] + v[1:]) / 2).astype(np.float32)


def adversarial_rows(rows, cols, seed, native):
    """Rows whose blocks put x / sf within a few float32 ulps of an E4M3 rounding midpoint, chosen
    where x / sf and x * (1 / sf) round to different codes: the elements on which a quantizer
    that multiplies by the reciprocal would part from one that divides. Element 0 of each block is
    its amax, which fixes sf (sf of vllm-native if native, else of vllm-cuda)."""
    rng = np.random.default_rng(seed)
    mids = e4m3_midpoints()
    x = np.zeros((rows, cols), np.float32)
    with np.errstate(all="ignore"):
        for r in range(rows):
            for b in range(cols // 128):
                amax = np.float32(rng.uniform(0.5, 2.0) * 2.0 ** rng.integers(-20, 20))
                sf = amax * (np.float32(1.0) / np.float32(448.0)) if native else amax / np.float32(448.0)
                inv = np.float32(1.0) / sf
                m = rng.choice(mids, 4096)
                base = (m * sf).astype(np.float32).view(np.int32)
                cand = np.concatenate([(base + k).view(np.float32) for k in range(-3, 4)])
                by_div = (cand / sf).astype(ml_dtypes.float8_e4m3fn).view(np.uint8)
                by_mul = (cand * inv).astype(ml_dtypes.float8_e4m3fn).view(np.uint8)
                parted = cand[(by_div != by_mul) & (np.abs(cand) < amax)]
                blk = rng.choice(parted, 127) if parted.size else np.full(127, amax / 2, np.float32)
                blk = blk * np.where(rng.random(127) < 0.5, np.float32(-1), np.float32(1))
                x[r, b * 128] = amax
                x[r, b * 128 + 1:(b + 1) * 128] = blk
    return x


def blocks_of(x, tile):
    """(nb_r, nb_c, elems) view of the tiles: 1x128 or 128x128 over a rows x cols array."""
    r, c = x.shape
    tr = tile
    t = x.reshape(r // tr, tr, c // 128, 128).transpose(0, 2, 1, 3)
    return t.reshape(r // tr, c // 128, tr * 128)


def unblock(b, tile, shape):
    r, c = shape
    return b.reshape(r // tile, c // 128, tile, 128).transpose(0, 2, 1, 3).reshape(r, c)


def vllm_cuda_amax(b):
    """The op's block amax: an fmaxf reduction that starts at eps = 1e-10 (np.fmax skips NaN)."""
    return np.fmax.reduce(np.abs(b), axis=-1, initial=np.float32(1e-10)).astype(np.float32)


def vllm_cuda_codes(y, tile, shape):
    """fminf(fmaxf(y, -448), 448) (a NaN y becomes -448), then the satfinite RNE cast."""
    q = np.fmin(np.fmax(y, np.float32(-448.0)), np.float32(448.0))
    return unblock(q.astype(ml_dtypes.float8_e4m3fn).view(np.uint8), tile, shape)


def vllm_cuda(x, tile):
    with np.errstate(all="ignore"):
        b = blocks_of(x, tile)
        sf = (vllm_cuda_amax(b) / np.float32(448.0)).astype(np.float32)
        y = (b / sf[:, :, None]).astype(np.float32)
        return vllm_cuda_codes(y, tile, x.shape), sf


def vllm_cuda_ue8m0(x, tile):
    with np.errstate(all="ignore"):
        b = blocks_of(x, tile)
        ys = np.fmax(np.abs((vllm_cuda_amax(b) / np.float32(448.0)).astype(np.float32)), np.float32(1e-10))
        m, e = np.frexp(ys.astype(np.float64))  # ys = m 2^e, m in [0.5, 1): a power of two iff m == 0.5
        ys = np.where(np.isinf(ys), ys, np.ldexp(1.0, np.where(m == 0.5, e - 1, e))).astype(np.float32)
        inv = (np.float32(1.0) / ys).astype(np.float32)
        y = (b * inv[:, :, None]).astype(np.float32)
        return vllm_cuda_codes(y, tile, x.shape), ys


def vllm_native(x, tile):
    fp8_max = torch.finfo(torch.float8_e4m3fn).max
    min_scaling = 1.0 / (fp8_max * 512.0)
    xg = torch.from_numpy(blocks_of(x, tile).copy())
    absmax = xg.abs().max(dim=-1, keepdim=True)[0].float()
    inv = torch.tensor(1.0, dtype=torch.float32) / fp8_max  # CUDA torch: absmax / 448.0 = absmax * fp32(1/448)
    scales = (absmax * inv).clamp(min=min_scaling)
    x_quant = (xg / scales).clamp(-fp8_max, fp8_max).to(torch.float8_e4m3fn)
    codes = x_quant.view(torch.uint8).numpy()
    return unblock(codes, tile, x.shape), scales.squeeze(-1).numpy()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fpsim", required=True)
    a = ap.parse_args()
    x = test_data(256, 768, 11)
    with tempfile.TemporaryDirectory(prefix="fpsim_vllm_") as d:
        xin = os.path.join(d, "x.npy")
        np.save(xin, x)
        out = os.path.join(d, "q.h5")
        cases = [("vllm-cuda", vllm_cuda), ("vllm-cuda-ue8m0", vllm_cuda_ue8m0), ("vllm-native", vllm_native)]
        for rule, oracle in cases:
            for tile, axis in ((1, "rows"), (1, "cols"), (128, "rows")):
                scheme = f"fp8-block:scale={rule}" + (",tile=128x128" if tile == 128 else "")
                src = x.T.copy() if axis == "cols" else x
                codes, scales = quantize(a.fpsim, scheme, xin, out, axis)
                want_codes, want_sf = oracle(src, tile)
                what = f"{scheme} --axis {axis}"
                bad = int((codes != want_codes).sum())
                check(bad == 0, f"{what}: {bad} of {codes.size} codes differ from vLLM's statements")
                if bad:
                    i = np.argwhere(codes != want_codes)[0]
                    print(f"  first at {tuple(i)}: x={src[tuple(i)]!r} fpsim 0x{codes[tuple(i)]:02X} "
                          f"oracle 0x{want_codes[tuple(i)]:02X}")
                sb = scales.view(np.uint32).reshape(want_sf.shape)
                wb = want_sf.astype(np.float32).view(np.uint32)
                check(np.array_equal(sb, wb), f"{what}: stored scales sf differ in "
                      f"{int((sb != wb).sum())} of {sb.size} blocks")
                print(f"compared {what}: {codes.size} codes, {sb.size} scales compared")

        # What the division changes against the multiplying rules, on unit-scale BF16 Gaussian
        # rows (where no rule's amax or scale floor bites).
        rng = np.random.default_rng(5)
        g = rng.standard_normal((256, 4096)).astype(ml_dtypes.bfloat16).astype(np.float32)
        gin = os.path.join(d, "g.npy")
        np.save(gin, g)
        rules = ("vllm-cuda", "vllm-native", "deepgemm-fp32", "te-fp32", "vllm-cuda-ue8m0", "deepgemm-ue8m0")
        got = {r: quantize(a.fpsim, f"fp8-block:scale={r}", gin, out) for r in rules}
        pairs = [("vllm-cuda", r) for r in ("deepgemm-fp32", "te-fp32", "vllm-native")]
        pairs.append(("vllm-cuda-ue8m0", "deepgemm-ue8m0"))  # the generator's and a trainer's E8M0 scales
        for r0, r in pairs:
            n = int((got[r0][0] != got[r][0]).sum())
            nb = int((got[r0][1] != got[r][1]).sum())
            print(f"{r0} vs {r}: {n} of {g.size} codes ({100.0 * n / g.size:.3f}%), "
                  f"{nb} of {got[r0][1].size} scales differ")
    if failures:
        print(f"{failures} check(s) failed")
        return 1
    print("all vLLM FP8 activation checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())

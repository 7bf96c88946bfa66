#!/usr/bin/env python3
"""bench_torch.py: the same quantizations done with PyTorch on the device machine, for context.

Eager and torch.compile versions of: FP8 casts (f32 and bf16 in), MXFP8 (1x32, E8M0 floor scale, as
torchao to_mx), block FP8 1x128 (FP32 scales, TE-style 448/amax), NVFP4 (1x16 E4M3 scales with a
global FP32 scale, TE chain, FP4 codes packed two per byte; rowwise, and columnwise with TE's
16-point random Hadamard transform as a BF16 matmul, nearest or stochastic rounding), and
per-tensor current scaling (amax + cast). Bytes are counted like fpsim's benchmark: input once +
codes + scales once; a device copy of the float32 input is measured in the same run. Prints one
JSON object.

Usage: bench_torch.py [TEXT]: only the cases whose name contains TEXT.

These are reference points for speed only (they follow the recipes' arithmetic but are not the
bit-exact oracles: those are fpsim's CPU emulators).
"""
import json
import sys
import time

import torch

ROWS, COLS = 16384, 16384
REPS = 20


def timed(fn, *args):
    for _ in range(3):
        fn(*args)
    torch.cuda.synchronize()
    times = []
    for _ in range(REPS):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        fn(*args)
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    times.sort()
    return times[len(times) // 2]


def cast_e4m3(x):
    return x.to(torch.float8_e4m3fn)


def mxfp8_floor(x):
    b = x.float().reshape(x.shape[0], -1, 32)
    amax = b.abs().amax(dim=-1, keepdim=True)
    e = ((amax.view(torch.int32) >> 23) & 0xFF) - 127 - 8
    e = e.clamp(-127, 128) + 127
    scale_rcp = ((254 - e).clamp(min=1) << 23).view(torch.float32)
    q = (b * scale_rcp).clamp(-448, 448).to(torch.float8_e4m3fn)
    return q.reshape(x.shape), e.to(torch.uint8)


def block_fp8_1x128(x):
    b = x.float().reshape(x.shape[0], -1, 128)
    amax = b.abs().amax(dim=-1, keepdim=True)
    scale = torch.where(amax > 0, 448.0 / amax, torch.ones_like(amax))
    q = (b * scale).to(torch.float8_e4m3fn)
    return q.reshape(x.shape), 1.0 / scale


def fp4_codes(y):
    a = y.abs()
    code = torch.zeros_like(a, dtype=torch.uint8)
    for t, c in ((0.25, 1), (0.75, 2), (1.25, 3), (1.75, 4), (2.5, 5), (3.5, 6), (5.0, 7)):
        code = torch.where(a > t, torch.full_like(code, c), code)
    code = code | ((y < 0).to(torch.uint8) << 3)
    return code


def nvfp4_te_blocks(b, amax, codes=None):
    """The TE chain on float32 blocks b (rows, blocks, 16) with the tensor amax given: E4M3 block
    scales, FP4 codes (fp4_codes unless codes says otherwise) packed two per byte."""
    s_enc = torch.clamp(2688.0 / amax, max=3.4e38)
    bamax = b.abs().amax(dim=-1, keepdim=True)
    d = (bamax * (s_enc * (1.0 / 6.0))).clamp(max=448.0).to(torch.float8_e4m3fn)
    enc = 1.0 / (d.float() / s_enc)
    c = (codes or fp4_codes)(b * enc).reshape(b.shape[0], -1)
    packed = c[:, 0::2] | (c[:, 1::2] << 4)
    return packed, d


def nvfp4_te(x, amax):
    return nvfp4_te_blocks(x.float().reshape(x.shape[0], -1, 16), amax)


# TE's RHT matrix (formats/rht16_mma.h): B[k][n] = 0.25 s_k (-1)^popcount(k & n), exact in BF16
RHT_SIGNS = [-1.0 if (0xD7E8 >> k) & 1 else 1.0 for k in range(16)]


def rht_matrix(device):
    h = [[RHT_SIGNS[k] * 0.25 * (-1.0 if bin(k & n).count("1") % 2 else 1.0) for n in range(16)]
         for k in range(16)]
    return torch.tensor(h, device=device, dtype=torch.bfloat16)


def fp4_codes_sr(y):
    """E2M1 codes of y by stochastic rounding (uniform draws from torch.rand; speed only)."""
    grid = torch.tensor([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0], device=y.device)
    a = y.abs().clamp(max=6.0)
    lo = (torch.bucketize(a, grid, right=True) - 1).clamp(max=6)
    glo, ghi = grid[lo], grid[lo + 1]
    up = torch.rand_like(a) * (ghi - glo) < (a - glo)
    code = (lo + up.to(lo.dtype)).to(torch.uint8)
    return code | ((y < 0).to(torch.uint8) << 3)


def nvfp4_te_cols_rht(x, amax, h, sr):
    """Columnwise NVFP4 (the stored operand x^T) after the RHT of each 16 elements: y = BF16(x . h)
    (TE's wgrad path), then the TE chain with the amax of y given."""
    xt = x.t().contiguous()
    y = (xt.reshape(-1, 16) @ h).reshape(xt.shape[0], -1, 16)
    return nvfp4_te_blocks(y.float(), amax, fp4_codes_sr if sr else None)


def nvfp4_rht_cols(x, amax, h):
    return nvfp4_te_cols_rht(x, amax, h, False)


def nvfp4_sr_rht_cols(x, amax, h):
    return nvfp4_te_cols_rht(x, amax, h, True)


def nvfp4_e2e(x):
    return nvfp4_te(x, x.abs().amax().float())


def tensor_current(x):
    amax = x.abs().amax().float()
    scale = 448.0 / amax
    return (x.float() * scale).to(torch.float8_e4m3fn), 1.0 / scale


def main():
    dev = torch.cuda.get_device_name(0)
    n = ROWS * COLS
    xf = torch.randn(ROWS, COLS, device="cuda", dtype=torch.float32)
    xb = xf.to(torch.bfloat16)
    dst = torch.empty_like(xf)
    copy_ms = timed(lambda: dst.copy_(xf))
    copy_gbps = 2 * n * 4 / (copy_ms * 1e6)
    amax_b = xb.abs().amax().float()
    h = rht_matrix(xb.device)
    amax_rht = (xb.t().contiguous().reshape(-1, 16) @ h).float().abs().amax()
    nvfp4_bytes = n * 2 + n // 2 + n // 16  # bf16 in, FP4 codes, E4M3 scales
    cases = [
        ("x.to(e4m3) f32", cast_e4m3, (xf,), n * 5),
        ("x.to(e4m3) bf16", cast_e4m3, (xb,), n * 3),
        ("mxfp8 floor bf16", mxfp8_floor, (xb,), n * 3 + n // 32),
        ("block fp8 1x128 bf16", block_fp8_1x128, (xb,), n * 3 + n // 128 * 4),
        ("nvfp4 te bf16 (amax given)", nvfp4_te, (xb, amax_b), nvfp4_bytes),
        ("nvfp4 te bf16 (e2e)", nvfp4_e2e, (xb,), nvfp4_bytes),
        ("fp8 current scaling bf16 (e2e)", tensor_current, (xb,), n * 3 + 4),
        ("nvfp4 te cols rht bf16 (amax given)", nvfp4_rht_cols, (xb, amax_rht, h), nvfp4_bytes),
        ("nvfp4 te cols sr+rht bf16 (amax given)", nvfp4_sr_rht_cols, (xb, amax_rht, h),
         nvfp4_bytes),
    ]
    only = sys.argv[1] if len(sys.argv) > 1 else None
    cases = [c for c in cases if only is None or only in c[0]]
    if not cases:
        sys.exit(f"bench_torch.py: no case name contains '{only}'")
    results = []
    for name, fn, args, nbytes in cases:
        for mode in ("eager", "compile"):
            try:
                f = fn if mode == "eager" else torch.compile(fn)
                t0 = time.time()
                ms = timed(f, *args)
                gbps = nbytes / (ms * 1e6)
                results.append({"case": name, "mode": mode, "ms": round(ms, 4), "bytes": nbytes,
                                "gbps": round(gbps, 1), "frac_of_copy": round(gbps / copy_gbps, 3),
                                "wall_s": round(time.time() - t0, 1)})
            except Exception as e:  # a failed compile is a data point, not a crash
                results.append({"case": name, "mode": mode, "error": str(e)[:200]})
            print(json.dumps(results[-1]), file=sys.stderr, flush=True)
    print(json.dumps({"benchmark": "quantize-torch", "device": dev, "torch": torch.__version__,
                      "rows": ROWS, "cols": COLS,
                      "copy": {"ms": round(copy_ms, 4), "gbps": round(copy_gbps, 1)},
                      "results": results}, indent=1))


if __name__ == "__main__":
    main()

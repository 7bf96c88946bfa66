#!/usr/bin/env python3
"""oracle_torch: `fpsim convert` under the torch policies against torch's own CPU casts.

Only rules that torch computes the same way on every device are checked here: c10's scalar
converters (torch/headeronly/util/Float8_*.h, C10_HOST_DEVICE, used by the CPU and CUDA
kernels alike; `clamp` for FP8 is torch.clamp then the same converters) and the CPU-only
`torch-cpu` BF16 path. The CUDA-only rows (`torch` bf16 and f16,
whose NaN is __float2bfloat16's and __float2half's 0x7FFF) need a GPU and are not checked.

Which e4m3 row torch matches depends on its release: `torch` is <= 2.11 (overflow and Inf ->
NaN), `torch-sat` is >= 2.12 (PR #178817: overflow and Inf -> +-448). The row for the installed
release is checked; the other is reported as not applicable.

Inputs: every STRIDE-th float32 bit pattern (an odd stride, so every low mantissa pattern
occurs), every pattern within 8 ulps of each representable value and midpoint of the target,
the specials, and float64 values beside the same thresholds (c10's types are built from float,
so a double goes through float32 first, as the policies say). bf16 and f16 sources: all 2^16
patterns, to every format of the list and to their own dtype (`.to()` of a tensor that already
has the dtype returns it as it is, NaN payloads included).

Usage: oracle_torch.py --fpsim PATH [--stride S]
Exit 0 pass, 1 mismatch, 2 usage, 77 skipped (torch not importable).
"""
import argparse
import sys
import warnings

try:
    import numpy as np
    import torch
except ImportError as e:  # pragma: no cover - depends on the machine
    print(f"skipped: torch/numpy not importable ({e}); pip install torch numpy")
    sys.exit(77)

from oracle_common import Mismatches, fpsim_convert, fpsim_missing


def torch_check(label):
    return Mismatches(label, "torch")

def torch_release():
    """(major, minor) of the installed torch."""
    major, minor = torch.__version__.split("+")[0].split(".")[:2]
    return int(major), int(minor)


def cases():
    """(fpsim format, fpsim policy, torch dtype, clamp bound or None) of the device-independent
    rules; `clamp` is torch.clamp(x, -max, max).to(dtype)."""
    e4m3 = "torch-sat" if torch_release() >= (2, 12) else "torch"
    return [
        ("e4m3", e4m3, torch.float8_e4m3fn, None),
        ("e5m2", "torch", torch.float8_e5m2, None),
        ("e8m0", "torch", torch.float8_e8m0fnu, None),
        ("bf16", "torch-cpu", torch.bfloat16, None),
        ("e4m3", "clamp", torch.float8_e4m3fn, 448.0),
        ("e5m2", "clamp", torch.float8_e5m2, 57344.0),
    ]


def torch_cast(t, dtype, bound):
    """torch's codes for tensor t: .to(dtype), after torch.clamp when bound is given."""
    if bound is not None:
        t = torch.clamp(t, -bound, bound)
    return codes_of(t.to(dtype))


def codes_of(t):
    """A torch tensor's codes as a numpy array of unsigned integers."""
    if t.dtype.itemsize == 1:
        return t.view(torch.uint8).numpy()
    return t.view(torch.int16).numpy().view(np.uint16)


def near_thresholds(dtype):
    """float32 bit patterns within 8 ulps of every representable value and midpoint of dtype."""
    n = 1 << (8 * dtype.itemsize)
    codes = torch.from_numpy(np.arange(n, dtype=np.uint16 if n > 256 else np.uint8).view(
        np.int16 if n > 256 else np.uint8).copy())
    vals = codes.view(dtype).to(torch.float64).numpy()
    vals = np.unique(np.abs(vals[np.isfinite(vals)]))
    mids = (vals[:-1] + vals[1:]) / 2
    pts = np.concatenate([vals, mids, [vals[-1] * 2]])
    pts = pts[pts < 3.4e38].astype(np.float32).view(np.uint32).astype(np.int64)
    near = (pts[:, None] + np.arange(-8, 9)[None, :]).ravel()
    near = np.unique(near[(near >= 0) & (near <= 0x7F800000)]).astype(np.uint32)
    return np.concatenate([near, near | np.uint32(0x80000000)])


SPECIALS = np.array([0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000,
                     0x7F800001, 0xFF800001, 0x7FBFFFFF, 0x7FFFFFFF, 0xFFFFFFFF, 0x00000001,
                     0x007FFFFF, 0x00800000, 0x7F7FFFFF, 0xFF7FFFFF], dtype=np.uint32)


def check_f32(fpsim, fmt, policy, dtype, bound, stride):
    x = np.concatenate([np.arange(0, 1 << 32, stride, dtype=np.uint64).astype(np.uint32),
                        near_thresholds(dtype), SPECIALS])
    want = torch_cast(torch.from_numpy(x.view(np.float32).copy()), dtype, bound)
    got = np.frombuffer(fpsim_convert(fpsim, fmt, policy, x.tobytes(), "f32"), dtype=want.dtype)
    c = torch_check(f"f32->{fmt} {policy} vs torch {torch.__version__} .to({dtype})")
    c.compare(x, got, want, lambda b: f"0x{int(b):08x}")
    return c.summary()


def check_f64(fpsim, fmt, policy, dtype, bound):
    near32 = near_thresholds(dtype).view(np.float32).astype(np.float64)
    f32_next = np.nextafter(near32.astype(np.float32), np.float32(np.inf)).astype(np.float64)
    half = (near32 + f32_next) / 2
    x = np.concatenate([near32, np.nextafter(near32, np.inf), np.nextafter(near32, -np.inf), half,
                        np.nextafter(half, np.inf), np.nextafter(half, -np.inf),
                        [np.inf, -np.inf, np.nan, 0.0, -0.0]])
    want = torch_cast(torch.from_numpy(x), dtype, bound)
    got = np.frombuffer(fpsim_convert(fpsim, fmt, policy, x.tobytes(), "f64"), dtype=want.dtype)
    c = torch_check(f"f64->{fmt} {policy} vs torch .to({dtype})")
    c.compare(x, got, want, lambda v: float(v).hex())
    return c.summary()


def check_16bit(fpsim, fmt, policy, dtype, bound):
    failed = 0
    for src, sdt in (("bf16", torch.bfloat16), ("f16", torch.float16)):
        if bound is not None and src == "bf16":
            # torch.clamp of a bf16 tensor on the CPU rewrites NaN on its vectorized path (0xFFFF,
            # the sign set) but not on its scalar one (short tensors keep 0x7F81): an artifact of
            # clamp's CPU kernel, not of the cast, so not a rule to model
            print(f"note: bf16->{fmt} {policy} not checked: CPU torch.clamp of bf16 NaN depends "
                  f"on the tensor's length", flush=True)
            continue
        h = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
        t = torch.from_numpy(h.view(np.int16).copy()).view(sdt)
        want = torch_cast(t, dtype, bound)
        got = np.frombuffer(fpsim_convert(fpsim, fmt, policy, h.tobytes(), src), dtype=want.dtype)
        c = torch_check(f"{src}->{fmt} {policy} vs torch .to({dtype})")
        c.compare(h, got, want, lambda b: f"0x{int(b):04x}")
        failed += c.summary()
    return failed


def check_torchao(fpsim, stride):
    """e2m1, e2m3 and e3m2 under `torchao` against torchao's own float32 -> FPx bit arithmetic
    (torchao.prototype.custom_fp_utils._f32_to_floatx_unpacked), NaN payload rule included; 16-bit
    sources as torchao gets them, widened by .float(). Skipped when torchao is not importable."""
    try:
        from torchao.prototype.custom_fp_utils import _f32_to_floatx_unpacked
        import torchao
    except Exception as e:  # ImportError, or a torchao built for another torch failing to load
        print(f"note: torchao policies not checked: torchao not importable ({e})", flush=True)
        return 0
    failed = 0
    for fmt, ebits, mbits in (("e2m1", 2, 1), ("e2m3", 2, 3), ("e3m2", 3, 2)):
        # the format's own thresholds: every value and midpoint of E(ebits)M(mbits), no Inf/NaN
        n = 1 << (1 + ebits + mbits)
        bias = (1 << (ebits - 1)) - 1
        vals = []
        for c in range(n // 2):
            e, m = c >> mbits, c & ((1 << mbits) - 1)
            vals.append(m * 2.0 ** (1 - bias - mbits) if e == 0 else (1 + m / (1 << mbits)) * 2.0 ** (e - bias))
        vals = np.array(sorted(vals))
        pts = np.concatenate([vals, (vals[:-1] + vals[1:]) / 2, [vals[-1] * 2]])
        pts = pts.astype(np.float32).view(np.uint32).astype(np.int64)
        near = np.unique((pts[:, None] + np.arange(-8, 9)[None, :]).ravel())
        near = near[(near >= 0) & (near <= 0x7F800000)].astype(np.uint32)
        x = np.concatenate([np.arange(0, 1 << 32, stride, dtype=np.uint64).astype(np.uint32), near,
                            near | np.uint32(0x80000000), SPECIALS])
        want = _f32_to_floatx_unpacked(torch.from_numpy(x.view(np.float32).copy()), ebits, mbits).numpy()
        got = np.frombuffer(fpsim_convert(fpsim, fmt, "torchao", x.tobytes(), "f32"), dtype=np.uint8)
        c = Mismatches(f"f32->{fmt} torchao vs torchao {torchao.__version__} _f32_to_floatx_unpacked",
                       "torchao")
        c.compare(x, got, want, lambda b: f"0x{int(b):08x}")
        failed += c.summary()
        for src, sdt in (("bf16", torch.bfloat16), ("f16", torch.float16)):
            h = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
            t = torch.from_numpy(h.view(np.int16).copy()).view(sdt).float()
            want = _f32_to_floatx_unpacked(t, ebits, mbits).numpy()
            got = np.frombuffer(fpsim_convert(fpsim, fmt, "torchao", h.tobytes(), src), dtype=np.uint8)
            c = Mismatches(f"{src}->{fmt} torchao vs torchao _f32_to_floatx_unpacked(x.float())", "torchao")
            c.compare(h, got, want, lambda b: f"0x{int(b):04x}")
            failed += c.summary()
    return failed


def check_same_dtype(fpsim):
    """bf16 -> bf16 and f16 -> f16 under `torch`: .to() returns the tensor itself."""
    failed = 0
    for fmt, dtype in (("bf16", torch.bfloat16), ("f16", torch.float16)):
        h = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
        t = torch.from_numpy(h.view(np.int16).copy()).view(dtype)
        same = t.to(dtype)
        want = codes_of(same)
        got = np.frombuffer(fpsim_convert(fpsim, fmt, "torch", h.tobytes(), fmt), dtype=want.dtype)
        c = torch_check(f"{fmt}->{fmt} torch vs torch .to({dtype}) of a {dtype} tensor "
                        f"({'the same tensor' if same is t else 'a new tensor'})")
        c.compare(h, got, want, lambda b: f"0x{int(b):04x}")
        failed += c.summary()
    return failed


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fpsim", required=True, help="path of the fpsim executable")
    ap.add_argument("--stride", type=int, default=4099, help="odd stride of the float32 sample")
    args = ap.parse_args()
    if args.stride < 1 or args.stride % 2 == 0:
        print(f"--stride must be odd and positive, not {args.stride}", file=sys.stderr)
        return 2
    if fpsim_missing(args.fpsim):
        return 1
    print(f"torch {torch.__version__}, numpy {np.__version__}", flush=True)
    other = "torch" if torch_release() >= (2, 12) else "torch-sat"
    print(f"note: e4m3 `{other}` not checked: it models a torch release other than "
          f"{torch.__version__}", flush=True)
    warnings.simplefilter("ignore", RuntimeWarning)
    failed = 0
    try:
        for fmt, policy, dtype, bound in cases():
            failed += check_f32(args.fpsim, fmt, policy, dtype, bound, args.stride)
            failed += check_f64(args.fpsim, fmt, policy, dtype, bound)
            failed += check_16bit(args.fpsim, fmt, policy, dtype, bound)
        failed += check_same_dtype(args.fpsim)
        failed += check_torchao(args.fpsim, args.stride)
    except RuntimeError as e:
        print(f"FAIL {e}", file=sys.stderr)
        return 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

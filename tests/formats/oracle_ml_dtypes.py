#!/usr/bin/env python3
"""oracle_ml_dtypes: `fpsim convert --policy ml_dtypes` against ml_dtypes 0.6 itself.

For each format ml_dtypes has, float32 bit patterns are converted by NumPy's astype to the
ml_dtypes type and, in the same chunk, by the fpsim CLI fed through a pipe; the codes must be
identical, NaN encodings included. Every bf16 and float16 bit pattern is converted to each format
too (fpsim --from bf16 / f16). Formats marked FULL sweep all 2^32 float32 inputs; the others
take every STRIDE-th bit pattern (an odd stride, so every low mantissa bit pattern occurs) plus
every input within 8 ulps of each representable value and midpoint. float64 sources are checked
on random values and values next to every midpoint: in ml_dtypes 0.6 NumPy's astype from float64
goes through float32 (formats-spec.md §1.3), and fpsim's ml_dtypes policy does the same. ml_dtypes
0.7.0 rounds float64 once instead (measured 2026-12-01: 0x1.0000000000001p-10 -> e4m3 0x01 where
0.6 gives 0x00), so under any release but 0.6.x the float64 sweep is skipped with a message (the
float32 sweeps, which 0.7.0 passes, still run); CI pins ml_dtypes==0.6.0.

Usage: oracle_ml_dtypes.py --fpsim PATH [--stride S] [--formats a,b,...]
  --stride S   sample every format with stride S (the fast label's quick run)
Exit 0 pass, 1 mismatch, 2 usage, 77 skipped (ml_dtypes not importable).
"""
import argparse
import concurrent.futures
import os
import subprocess
import sys
import threading
import time
import warnings

try:
    import numpy as np
    import ml_dtypes
except ImportError as e:  # pragma: no cover - depends on the machine
    print(f"skipped: ml_dtypes/numpy not importable ({e}); pip install ml_dtypes==0.6.0")
    sys.exit(77)

from oracle_common import Mismatches, fpsim_convert as fpsim_convert_policy, fpsim_missing


def fpsim_convert(fpsim, fmt, data, src="f32"):
    """Codes from `fpsim convert --policy ml_dtypes`."""
    return fpsim_convert_policy(fpsim, fmt, "ml_dtypes", data, src)


def ml_dtypes_check(label):
    return Mismatches(label, "ml_dtypes")

# fpsim format name -> (ml_dtypes type name, swept completely over 2^32 inputs?)
FORMATS = {
    "e4m3": ("float8_e4m3fn", True),
    "e5m2": ("float8_e5m2", True),
    "e2m1": ("float4_e2m1fn", True),
    "e8m0": ("float8_e8m0fnu", True),
    "bf16": ("bfloat16", True),
    "e2m3": ("float6_e2m3fn", False),
    "e3m2": ("float6_e3m2fn", False),
    "e4m3fnuz": ("float8_e4m3fnuz", False),
    "e5m2fnuz": ("float8_e5m2fnuz", False),
    "e4m3b11fnuz": ("float8_e4m3b11fnuz", False),
    "e4m3ieee": ("float8_e4m3", False),
    # not an ml_dtypes type: NumPy's own float16, which fpsim's ml_dtypes policy also emulates
    # (payload-keeping NaN, float64 rounded once)
    "f16": ("float16", False),
}
CHUNK = 1 << 24
SAMPLED_STRIDE = 15


def dtype_of(name):
    """The ml_dtypes scalar type of that name, else NumPy's (float16)."""
    return getattr(ml_dtypes, name, None) or np.dtype(name).type


def codes_of(arr):
    """ml_dtypes array -> its codes as unsigned integers."""
    return arr.view(np.uint16 if arr.dtype.itemsize == 2 else np.uint8)


def near_thresholds(dt):
    """float32 bit patterns within 8 ulps of every representable value and midpoint of dt."""
    width = np.dtype(dt).itemsize * 8
    bits = 4 if "float4" in np.dtype(dt).name else (6 if "float6" in np.dtype(dt).name else width)
    codes = np.arange(1 << bits, dtype=np.uint16 if width == 16 else np.uint8)
    vals = codes.view(dt).astype(np.float64)
    vals = np.unique(np.abs(vals[np.isfinite(vals)]))
    mids = (vals[:-1] + vals[1:]) / 2
    pts = np.concatenate([vals, mids, [vals[-1] * 2]])
    pts = pts[pts < 3.4e38].astype(np.float32).view(np.uint32).astype(np.int64)
    near = (pts[:, None] + np.arange(-8, 9)[None, :]).ravel()
    near = near[(near >= 0) & (near <= 0x7F800000)]
    near = np.unique(near).astype(np.uint32)
    return np.concatenate([near, near | np.uint32(0x80000000)])


def cpu_seconds():
    """CPU seconds of this process and of the finished fpsim children."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def chunk_inputs(dt, stride, kind, start):
    """float32 bit patterns of one chunk: a stretch of every stride-th pattern, or the extras."""
    if kind == "near":
        return near_thresholds(dt)
    count = min(CHUNK, ((1 << 32) - start + stride - 1) // stride)
    if stride == 1:
        return np.arange(start, start + count, dtype=np.uint64).astype(np.uint32)
    return (np.arange(count, dtype=np.uint64) * stride + start).astype(np.uint32)


def astype_codes(x, dt, pool):
    """ml_dtypes' codes for float32 array x, the cast split over the pool's threads (NumPy
    releases the GIL in casts)."""
    parts = np.array_split(x, 2)
    out = list(pool.map(lambda a: codes_of(a.astype(dt)), parts))
    return np.concatenate(out)


def sweep_f32(fpsim, fmt, dtname, stride, pool):
    """All (or every stride-th) float32 patterns through one streaming `fpsim convert`."""
    dt = dtype_of(dtname)
    full = stride == 1
    m = ml_dtypes_check(f"f32->{fmt} ml_dtypes vs {dtname}.astype"
                   + ("" if full else f" (every {stride}th + near thresholds)"))
    t0, c0 = time.time(), cpu_seconds()
    chunks = [("range", start) for start in range(0, 1 << 32, CHUNK * stride)]
    if not full:
        chunks.append(("near", None))
    cmd = [fpsim, "convert", "--to", fmt, "--from", "f32", "--policy", "ml_dtypes"]
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)

    def feed():  # the writer: the same chunks, in order, into fpsim's stdin
        try:
            for kind, start in chunks:
                proc.stdin.write(chunk_inputs(dt, stride, kind, start).tobytes())
        except BrokenPipeError:
            pass
        finally:
            proc.stdin.close()

    writer = threading.Thread(target=feed)
    writer.start()
    ok = True
    for kind, start in chunks:
        xb = chunk_inputs(dt, stride, kind, start)
        want = astype_codes(xb.view(np.float32), dt, pool)
        nbytes = want.size * want.dtype.itemsize
        buf = proc.stdout.read(nbytes)
        if len(buf) != nbytes:
            print(f"FAIL [{m.label}] fpsim wrote {len(buf)} bytes, expected {nbytes}: "
                  f"{proc.stderr.read().decode(errors='replace').strip()}", file=sys.stderr)
            ok = False
            break
        m.compare(xb, np.frombuffer(buf, dtype=want.dtype), want, lambda b: f"0x{int(b):08x}")
    if not ok:
        proc.kill()
    writer.join()
    proc.stdout.close()
    rc_fpsim = proc.wait()
    if ok and rc_fpsim != 0:
        print(f"FAIL [{m.label}] fpsim exited {rc_fpsim}: "
              f"{proc.stderr.read().decode(errors='replace').strip()}", file=sys.stderr)
        ok = False
    proc.stderr.close()
    rc = m.summary() if ok else 1
    print(f"     {fmt}: {m.checks} inputs in {time.time() - t0:.1f} s wall, "
          f"{cpu_seconds() - c0:.1f} s cpu", flush=True)
    return rc


def sweep_f64(fpsim, fmt, dtname, pool):
    """float64 -> dt: NumPy's astype (through float32) vs fpsim --from f64."""
    dt = dtype_of(dtname)
    rng = np.random.default_rng(1234)
    near32 = near_thresholds(dt).view(np.float32).astype(np.float64)
    # doubles just above/below each float32 near a threshold, and halfway between float32s
    up = np.nextafter(near32, np.inf)
    down = np.nextafter(near32, -np.inf)
    f32_next = np.nextafter(near32.astype(np.float32), np.float32(np.inf)).astype(np.float64)
    half = (near32 + f32_next) / 2
    rand = rng.standard_normal(1 << 20) * np.exp2(rng.integers(-30, 30, 1 << 20))
    x = np.concatenate([near32, up, down, half, np.nextafter(half, np.inf),
                        np.nextafter(half, -np.inf), rand, [np.inf, -np.inf, np.nan, 0.0, -0.0]])
    x = x[np.isfinite(x) | np.isinf(x) | np.isnan(x)]
    m = ml_dtypes_check(f"f64->{fmt} ml_dtypes vs numpy astype")
    want = codes_of(x.astype(dt))
    got = np.frombuffer(fpsim_convert(fpsim, fmt, x.astype(np.float64).tobytes(), "f64"),
                        dtype=want.dtype)
    m.compare(x, got, want, lambda v: f"{float(v).hex()}")
    return m.summary()


def sweep_16bit_sources(fpsim, fmt, dtname):
    """Every bf16 and every float16 bit pattern -> dt: ml_dtypes' (NumPy's) astype from those
    types vs fpsim --from bf16 / --from f16, NaN payloads included."""
    dt = dtype_of(dtname)
    failed = 0
    for src, sdt in (("bf16", ml_dtypes.bfloat16), ("f16", np.float16)):
        h = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
        m = ml_dtypes_check(f"{src}->{fmt} ml_dtypes vs astype from {np.dtype(sdt).name}")
        want = codes_of(h.view(sdt).astype(dt))
        got = np.frombuffer(fpsim_convert(fpsim, fmt, h.tobytes(), src), dtype=want.dtype)
        m.compare(h, got, want, lambda b: f"0x{int(b):04x}")
        failed += m.summary()
    return failed


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fpsim", required=True, help="path of the fpsim executable")
    ap.add_argument("--stride", type=int, default=0,
                    help="sample every format with this stride instead of the default plan")
    ap.add_argument("--formats", default=",".join(FORMATS), help="comma-separated fpsim names")
    args = ap.parse_args()
    names = [f for f in args.formats.split(",") if f]
    for f in names:
        if f not in FORMATS:
            print(f"unknown format '{f}'; valid: {', '.join(FORMATS)}", file=sys.stderr)
            return 2
    if fpsim_missing(args.fpsim):
        return 1
    print(f"ml_dtypes {ml_dtypes.__version__}, numpy {np.__version__}", flush=True)
    f64_modelled = ml_dtypes.__version__.split(".")[:2] == ["0", "6"]
    if not f64_modelled:
        print(f"note: float64 sweeps skipped: the ml_dtypes policies model 0.6's astype from float64 "
              f"(through float32), not {ml_dtypes.__version__}'s; pip install ml_dtypes==0.6.0 for them",
              flush=True)
    # NaN/overflow casts are the point here, not a warning (np.seterr is per thread)
    warnings.simplefilter("ignore", RuntimeWarning)
    failed = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        try:
            for fmt in names:
                dtname, full = FORMATS[fmt]
                stride = args.stride if args.stride > 0 else (1 if full else SAMPLED_STRIDE)
                failed += sweep_f32(args.fpsim, fmt, dtname, stride, pool)
                failed += sweep_16bit_sources(args.fpsim, fmt, dtname)
                if f64_modelled:
                    failed += sweep_f64(args.fpsim, fmt, dtname, pool)
        except RuntimeError as e:
            print(f"FAIL {e}", file=sys.stderr)
            return 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

# model-rht-mma-span.py: how many columns of the bench's fill the BF16 tensor-core RHT could give
# exactly, i.e. whether the exact policy (rhtsum=exact) could take the rhtsum=mma kernel's MMA.
# By formats/rht16_mma.h's block rule a product is cut to the grid 2^(E - 25), E the column's largest
# product exponent, so every product is kept exactly only where the column's 16 inputs span at most
# 18 binades (a BF16 value of exponent e has its last bit at e - 7); the sum is then exact but
# truncated to 24 bits, which BF16 rounding survives unless it lands on a BF16 midpoint (and is
# always exact for spans up to 12). Prints, per span limit, the share of columns over it and of the
# 32- and 64-column warp iterations holding at least one such column (those would run a fallback).
# The fill: bell-shaped values (sum of four uniforms, centred) times 2^k, k in [-K, K] per row of
# 64, rounded to BF16, as gpu/bench_util.cu fills the bench's tensors; a column's 16 rows draw 16 k.
import numpy as np

rng = np.random.default_rng(1)
N = 200000


def bf16(x):  # nearest-even float32 -> bf16, as float64
    b = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    r = ((b + 0x7FFF + ((b >> 16) & 1)) >> 16) << 16
    return r.astype(np.uint32).view(np.float32).astype(np.float64)


for spread in (8, 0):
    base = rng.random((N, 16, 4)).sum(-1) - 2.0
    k = rng.integers(-spread, spread + 1, (N, 16)) if spread else np.zeros((N, 16), int)
    u = bf16((base * 2.0**k).astype(np.float32))
    a = np.abs(u)
    nz = a > 0
    e = np.floor(np.log2(np.where(nz, a, 1.0)))
    span = np.where(nz, e, -999).max(1) - np.where(nz, e, 999).min(1)
    for t in (12, 16, 18, 20, 24):
        c = span > t
        print(f"spread {spread} span>{t}: columns {c.mean() * 100:.2f}%  "
              f"32-column iterations {c.reshape(-1, 32).any(1).mean() * 100:.1f}%  "
              f"64-column {c.reshape(-1, 64).any(1).mean() * 100:.1f}%")

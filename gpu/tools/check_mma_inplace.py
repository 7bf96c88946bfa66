#!/usr/bin/env python3
"""check_mma_inplace.py: the in-place rotated tile of kernel v8's rhtsum=mma kernels
(FPSIM_GPU_COLS_V8_MMA_INPLACE, gpu/block_cols_fast_kernel.cuh) checked by enumeration.

The maps are written out again here from their comments: the staging (piece c of staged row r in
16-byte slot c ^ (r % 8) of a 256-byte row), the rotated tile's own layout (rht_mma_offset) and
the move into the warp's slots (rht_mma_inplace). For every warp, row group, column and half it
checks that (1) each rotated unit lands in a slot of the warp's own pieces, in the rows of its own
row group, all 256 distinct; (2) the coding's closed-form read address (rht_mma_inplace_read_base
XOR 0x110 j XOR 16 h) equals the map; (3) the 16-byte reads of each group of 8 lanes and the
8 row addresses of each stmatrix matrix fall in 8 different bank quads; (4) row group rg + 2 sits
8192 bytes after row group rg. Prints the count of failures; exit 1 if any."""
import sys

ROW = 256


def staged_slot(r, c):
    return r * ROW + ((c ^ (r % 8)) * 16)


def mma_offset(rg, c, h):
    line = rg * 4 + c // 4
    return line * 128 + (((2 * (c % 4) + h) ^ (line % 8)) * 16)


def inplace(off, w):
    v = off // 16
    return staged_slot(v // 2, 2 * w + v % 2)


def read_base(line, w):
    return (line * 4 * ROW + (((2 * w) ^ (5 * (line & 1))) * 16)) ^ (((line // 2) % 4) * 0x110)


def main():
    bad = 0
    for w in range(8):
        own = {staged_slot(r, 2 * w + ch) for r in range(128) for ch in range(2)}
        seen = set()
        for rg in range(8):
            for c in range(16):
                for h in range(2):
                    a = inplace(mma_offset(rg, c, h), w)
                    bad += a not in own or not rg * 16 <= a // ROW < rg * 16 + 16
                    seen.add(a)
                    if rg < 6:
                        bad += inplace(mma_offset(rg + 2, c, h), w) != a + 8192
        bad += len(seen) != 256
        for rg in range(8):
            for cg in range(4):
                for j in range(4):
                    for h in range(2):
                        closed = read_base(rg * 4 + cg, w) ^ (0x110 * j) ^ (16 * h)
                        bad += closed != inplace(mma_offset(rg, 4 * cg + j, h), w)
        for k in range(4):  # lanes 8k .. 8k + 7: row groups 2k, 2k + 1, column groups 0-3
            for j in range(4):
                for h in range(2):
                    quads = {(inplace(mma_offset(2 * k + l // 4, 4 * (l % 4) + j, h), w) // 16) % 8 for l in range(8)}
                    bad += len(quads) != 8
        for rg in range(8):  # stmatrix matrix m: column half m & 1, output half m >> 1, rows t
            for m in range(4):
                quads = {(inplace(mma_offset(rg, 8 * (m & 1) + t, m >> 1), w) // 16) % 8 for t in range(8)}
                bad += len(quads) != 8
    print(f"check_mma_inplace: {bad} failures")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

/* test_tiles_layout.cu: the thread layout of kernel v6 (gpu/block_tiles_kernel.cuh,
 * fpsim_tiles_layout) run on the host for every tile side and vector width it is built for
 * (T = 16, 32, 128; V = 8 bf16, 4 float32; region width 128, and 64 V for T <= 32), without a GPU.
 *
 * The kernel's tile amax is right when (1) the THREADS threads x K vectors of a region cover its
 * T x 128 elements exactly once, (2) every vector of a thread lies in the tile the thread
 * reduces for, (3) the warp butterfly over the offsets lay::shuffles() accepts combines exactly
 * the warp's lanes of one tile, and (4) each warp publishes one maximum per tile, which the
 * warps' slots then cover. The test replays steps (1)-(4) literally, on region-sized arrays of
 * random |x| bits, and compares each tile's reduced amax with the tile's maximum taken the plain
 * way (loops over the tile's rows and columns). It also checks the writers: one thread per tile
 * for the scale (region row 0, the tile's first column) and one per tile row for the cuBLAS
 * swizzled code. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define FPSIM_TILES_LAYOUT_ONLY
#include "block_tiles_kernel.cuh"

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint32_t rng_next(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 32);
}

template <int T, int V, int RW = 128> static int check_layout(void)
{
    typedef fpsim_tiles_layout<T, V, RW> lay;
    enum { R = T, W = lay::RW };
    static uint32_t x[128][512];
    static int hits[128][512];
    int fail = 0;
    memset(hits, 0, sizeof hits);
    for (int r = 0; r < R; r++)
        for (int c = 0; c < W; c++) x[r][c] = rng_next() & 0x7FFFFFFFu; /* |x| bits, NaN and Inf included */

    /* (1), (2) and each thread's own max */
    uint32_t am[512];
    for (int t = 0; t < lay::THREADS; t++) {
        am[t] = 0;
        for (int k = 0; k < lay::K; k++) {
            const int r = lay::row(t, k), c = lay::col(t);
            if (r < 0 || r >= R || c < 0 || c + V > W) {
                printf("T=%d V=%d: thread %d vector %d outside the region (%d, %d)\n", T, V, t, k, r, c);
                return 1;
            }
            if (c / T != lay::tile(t)) fail += printf("T=%d V=%d: thread %d vector %d in tile %d, not %d\n", T, V, t, k, c / T, lay::tile(t)) > 0;
            for (int j = 0; j < V; j++) {
                hits[r][c + j]++;
                am[t] = x[r][c + j] > am[t] ? x[r][c + j] : am[t];
            }
        }
    }
    for (int r = 0; r < R; r++)
        for (int c = 0; c < W; c++)
            if (hits[r][c] != 1) fail += printf("T=%d V=%d: element (%d, %d) covered %d times\n", T, V, r, c, hits[r][c]) > 0;

    /* (3) the butterfly, as __shfl_xor_sync does it: every lane reads lane ^ o before any writes */
    for (int o = 1; o < 32; o <<= 1) {
        if (!lay::shuffles(o)) continue;
        uint32_t next[512];
        for (int t = 0; t < lay::THREADS; t++) {
            const uint32_t other = am[(t & ~31) | ((t & 31) ^ o)];
            next[t] = other > am[t] ? other : am[t];
        }
        memcpy(am, next, sizeof am);
    }
    /* (4) one published slot per warp and tile, then the max over the CTA's warps */
    uint32_t slot[lay::WARPS][lay::NT];
    int published[lay::WARPS][lay::NT];
    memset(published, 0, sizeof published);
    for (int t = 0; t < lay::THREADS; t++)
        if (lay::publishes(t)) {
            slot[t / 32][lay::tile(t)] = am[t];
            published[t / 32][lay::tile(t)]++;
        }
    for (int w = 0; w < lay::WARPS; w++)
        for (int i = 0; i < lay::NT; i++)
            if (published[w][i] != (lay::covers(w, i) ? 1 : 0))
                fail += printf("T=%d V=%d RW=%d: warp %d publishes tile %d %d times (covers: %d)\n", T, V, RW, w, i,
                               published[w][i], lay::covers(w, i)) > 0;
    if (fail) return fail;
    for (int t = 0; t < lay::THREADS; t++) {
        uint32_t got = am[t];
        for (int w = 0; w < lay::WARPS; w++)
            if (lay::covers(w, lay::tile(t))) got = slot[w][lay::tile(t)] > got ? slot[w][lay::tile(t)] : got;
        uint32_t want = 0; /* the tile's max, the plain way */
        const int c0 = lay::tile(t) * T;
        for (int r = 0; r < T; r++)
            for (int c = c0; c < c0 + T; c++) want = x[r][c] > want ? x[r][c] : want;
        if (got != want) fail += printf("T=%d V=%d: thread %d tile amax 0x%08x, tile max 0x%08x\n", T, V, t, got, want) > 0;
    }

    /* writers: the scale once per tile, the cuBLAS code once per tile row */
    int scale_writers[lay::NT], row_writers[128][lay::NT];
    static_assert(lay::NT <= 32, "tiles per region");
    memset(scale_writers, 0, sizeof scale_writers);
    memset(row_writers, 0, sizeof row_writers);
    for (int t = 0; t < lay::THREADS; t++) {
        if ((t % lay::L) != 0) continue;
        for (int k = 0; k < lay::K; k++) {
            if (lay::col(t) != lay::tile(t) * T) fail += printf("T=%d V=%d: writer %d not at its tile's first column\n", T, V, t) > 0;
            row_writers[lay::row(t, k)][lay::tile(t)]++;
        }
        if (t < lay::VR) {
            if (lay::row(t, 0) != 0) fail += printf("T=%d V=%d: scale writer %d not in region row 0\n", T, V, t) > 0;
            scale_writers[lay::tile(t)]++;
        }
    }
    for (int i = 0; i < lay::NT; i++) {
        if (scale_writers[i] != 1) fail += printf("T=%d V=%d: tile %d scale written %d times\n", T, V, i, scale_writers[i]) > 0;
        for (int r = 0; r < T; r++)
            if (row_writers[r][i] != 1) fail += printf("T=%d V=%d: tile %d row %d code written %d times\n", T, V, i, r, row_writers[r][i]) > 0;
    }
    printf("T=%-3d V=%d RW=%-3d K=%-2d tiles/region=%-2d %s\n", T, V, RW, lay::K, lay::NT, fail ? "FAIL" : "ok");
    return fail;
}

int main(void)
{
    int fail = 0;
    for (int rep = 0; rep < 4; rep++) { /* fresh random regions each time */
        fail += check_layout<16, 8>();
        fail += check_layout<16, 4>();
        fail += check_layout<32, 8>();
        fail += check_layout<32, 4>();
        fail += check_layout<128, 8>();
        fail += check_layout<128, 4>();
        fail += check_layout<16, 8, 512>(); /* the wide variants: region width 64 V */
        fail += check_layout<16, 4, 256>();
        fail += check_layout<32, 8, 512>();
        fail += check_layout<32, 4, 256>();
    }
    printf("%s\n", fail ? "FAIL" : "all layouts ok");
    return fail ? 1 : 0;
}

/* test_lean_rne.cu: the GPU kernels' short nearest-even form (gpu/elem_fixed.cuh,
 * fpsim_round_f32_rne_lean) against the shared core's fpsim_round_f32, over every float32 input,
 * for every spec the kernels send through it (E4M3, E5M2, E2M1, E2M3, E3M2 under RNE with no
 * full rules: nv, nv-nosat, torch, torch-sat, clamp, ml_dtypes, ...); the E2M1 saturating forms
 * (fpsim_e2m1_rne_sat; fpsim_e2m1_sr8_sat, stochastic rounding with 8 random bits, with three
 * random bytes per input) over every non-NaN input for the policies they serve; the E2M3
 * magic-sum form (fpsim_e2m3_rne_sat) on the inputs the fast cases give it; and the paired E2M1
 * forms the fast tiles and vectors use (fpsim_e2m1x2_rne_sat_small, fpsim_e2m1x2_sr8_f16 after the
 * float16 conversion's host stand-in, its signed twin fpsim_e2m1x2_sr8_f16_signed with the
 * packing fpsim_e2m1_nibbles_of_sr_lanes,
 * and fpsim_e2m1x2_rne_sat_ro through bf16 round-to-odd) on every input below 2^13, both lanes;
 * and the bf16-pair forms of MX tiles and bf16 conversions
 * (elem_bf16_pairs.cuh: E2M1 and E2M3 on the bf16x2 FMA) on every bf16 input, scaled by every
 * power of two they accept, both lanes; and the E8M0 form of the conversions
 * (fpsim_e8m0_rne_x4) on every normal magnitude below 0x7F400000, each E8M0 policy under nearest.
 * The short forms are second algorithms (integer adds on
 * the float's bits, FP32 magic-constant sums); the core, tested against measured values and
 * ml_dtypes in tests/formats, is the oracle. Runs on the host (no GPU needed): the device builds
 * differ in spelling the adds as __fadd_rn (or _rz) and the 16x2 lane operations as PRMT and
 * VIADDMNMX/VIMNMX.U16x2, and `fpsim verify --device gpu --full` covers those. */
#include <fenv.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core_batch.h"
#include "elem_bf16_pairs.cuh"
#include "elem_fixed.cuh"
#include "fpsim_formats.h"
#include "fpsim_parallel.h"

struct lean_ctx {
    fpsim_spec spec;
    int fast; /* E2M3_SAT: e2m3_fast_spec */
    unsigned long long bad[64];
    uint32_t first[64];
};

/* The E2M1 saturating form (fpsim_e2m1_rne_sat), compared on non-NaN inputs only; the E2M3 one
 * (fpsim_e2m3_rne_sat) on the inputs the kernels give it (e2m3_fast_inputs). */
enum {
    LEAN = 0,
    E2M1_SAT = 1,
    E2M1_SR8 = 2,
    E2M3_SAT = 3,
    E2M1_PAIR = 4,
    E2M1_PAIR_SR8 = 5,
    E8M0_X4 = 6,
    E2M1_PAIR_RO = 7
};

/* The E8M0 form (fpsim_e8m0_rne_x4) takes magnitudes from 0x00800000 to 0x7F3FFFFF; lane 0 holds
 * the swept input, lanes 1-3 partners in that range with signs of their own. */
static uint32_t e8m0_partner(uint32_t x, uint32_t lane)
{
    const uint32_t h = (x ^ (lane * 0x9E3779B9u)) * 2654435761u;
    return (0x00800000u + h % (0x7F400000u - 0x00800000u)) | (h << 31 >> (lane & 1u) & 0x80000000u);
}

/* The paired E2M1 forms (fpsim_e2m1x2_*_small) take |x| < 2^13; lane 0 holds the swept input x
 * (compared with the core) and lane 1 a partner of another magnitude and sign (compared with the
 * one-element form, itself swept against the core here), so lanes that differ in every way are
 * checked together. */
static uint32_t pair_partner(uint32_t x)
{
    return ((x * 2654435761u) % 0x46000000u) | ((x << 7) & 0x80000000u);
}

/* The E2M3 specs the kernels' fast cases serve (fast_tile.cuh fast_elem_mode): the standard
 * fields and no zero rule; 2 when the policy saturates (every non-NaN input), 1 when only inputs
 * of magnitude at most 7.5 reach the form, 0 for none. */
static int e2m3_fast_spec(const fpsim_spec *s)
{
    if (!fpsim_elem_fixed_matches<FPSIM_E2M3>(s) || (s->flags & (FPSIM_SPEC_UNSIGNED_ZERO | FPSIM_SPEC_NEGZERO_IN_POS)))
        return 0;
    return s->ovf_pos == 0x1F && s->inf_pos == 0x1F && s->ovf_neg == 0x3F && s->inf_neg == 0x3F ? 2 : 1;
}

/* The random byte the SR sweep pairs with input x: three per input, 0x00, 0xFF and one that
 * varies with x (a multiplicative hash), so every byte value meets every exponent. */
static uint32_t sr_byte(uint32_t x, int which)
{
    return which == 0 ? 0x00u : which == 1 ? 0xFFu : (uint32_t)((x * 2654435761u) >> 24);
}

/* The lean form's format for the sweep of format F: F itself, or E4M3 where F has no lean form
 * (E8M0, whose sweeps never reach the lean line: the template only has to compile). */
template <int F> struct LEAN_F {
    static constexpr int value = fpsim_elem_traits<F>::fixed ? F : FPSIM_E4M3;
};

/* The core's codes a chunk of the sweep compares with (test_core_batch, in vector loops): for
 * input x = x0 + i, want[k][i] is core(x, random byte k) for the SR forms (k = 0-2), core(lane
 * k's input) for E8M0_X4 (k = 0-3), core(x) in want[0] otherwise. */
enum { SWEEP_CHUNK = 4096 };
template <int FORM> static void core_codes(const fpsim_spec *spec, uint32_t x0, uint32_t (&want)[4][SWEEP_CHUNK])
{
    uint32_t in[SWEEP_CHUNK], rb[SWEEP_CHUNK];
    const int lanes = FORM == E8M0_X4 ? 4 : FORM == E2M1_SR8 || FORM == E2M1_PAIR_SR8 ? 3 : 1;
    for (int k = 0; k < lanes; k++) {
        for (uint32_t i = 0; i < SWEEP_CHUNK; i++) {
            in[i] = FORM == E8M0_X4 && k ? e8m0_partner(x0 + i, (uint32_t)k) : x0 + i;
            rb[i] = sr_byte(x0 + i, k) << 24;
        }
        test_core_batch(want[k], in, SWEEP_CHUNK, spec, FORM == E2M1_SR8 || FORM == E2M1_PAIR_SR8 ? rb : NULL);
    }
}

/* The one-input forms (LEAN, E2M1_SAT, E2M3_SAT, E2M1_SR8) over a chunk x0 .. x0 + SWEEP_CHUNK - 1
 * against the core's codes want[k] (core_codes): the mismatches among the inputs the form takes,
 * and the first of them in *first. The forms run in a loop of their own and the comparisons in
 * another, which the compiler vectorizes: called one input at a time between the sweep's tests, as
 * before, the forms and the tests took most of the sweep's time (with the core's codes computed
 * one by one as well, E2M3's sweeps took 354 CPU seconds here; 134 this way). */
template <int FORM> static constexpr bool one_input_form()
{
    return FORM == LEAN || FORM == E2M1_SAT || FORM == E2M3_SAT || FORM == E2M1_SR8;
}

template <int F, int FORM>
TEST_CORE_BATCH_CLONES static uint32_t one_input_mismatches(const lean_ctx &c, uint32_t x0,
                                                            const uint32_t (&want)[4][SWEEP_CHUNK],
                                                            uint32_t *first)
{
    const fpsim_spec s = c.spec;
    /* the inputs the form takes: all (LEAN), non-NaN, or |x| <= 7.5 for E2M3's fast == 1 specs */
    const uint32_t amax = FORM == LEAN ? 0xFFFFFFFFu : FORM == E2M3_SAT && c.fast == 1 ? 0x40F00000u : 0x7F800000u;
    uint32_t got[SWEEP_CHUNK], bad = 0;
    for (int k = 0; k < (FORM == E2M1_SR8 ? 3 : 1); k++) {
        for (uint32_t i = 0; i < SWEEP_CHUNK; i++) {
            const uint32_t x = x0 + i;
            got[i] = FORM == LEAN       ? fpsim_round_f32_rne_lean<LEAN_F<F>::value>(x, s)
                     : FORM == E2M1_SAT ? fpsim_e2m1_rne_sat(x)
                     : FORM == E2M3_SAT ? fpsim_e2m3_rne_sat(x)
                                        : fpsim_e2m1_sr8_sat(x, sr_byte(x, k) << 24);
        }
        uint32_t n = 0;
        for (uint32_t i = 0; i < SWEEP_CHUNK; i++)
            n += (uint32_t)(((x0 + i) & 0x7FFFFFFFu) <= amax) & (uint32_t)(got[i] != want[k][i]);
        for (uint32_t i = 0; n && !bad && i < SWEEP_CHUNK; i++)
            if (((x0 + i) & 0x7FFFFFFFu) <= amax && got[i] != want[k][i]) {
                *first = x0 + i;
                break;
            }
        bad += n;
    }
    return bad;
}

template <int F, int FORM> static void sweep(void *ctx, size_t b, size_t e)
{
    lean_ctx *c = static_cast<lean_ctx *>(ctx);
    const int mode = fegetround();
    /* the SR forms' host adds (their comments); under E2M1_PAIR_SR8 the lane-1 oracle's (the
     * 2^-14 products there are exact, or below 2^-126 where every code is 0) */
    if (FORM == E2M1_SR8 || FORM == E2M1_PAIR_SR8) fesetround(FE_TOWARDZERO);
    static thread_local uint32_t want[4][SWEEP_CHUNK];
    for (size_t blk = b; blk < e; blk++) { /* block blk: patterns blk * 2^26 .. */
        unsigned long long bad = 0;
        uint32_t first = 0;
        const uint64_t x0 = (uint64_t)blk << 26;
        uint32_t ring[4] = {0, 0, 0, 0}, ring_want[4] = {0, 0, 0, 0}, ring_n = 0; /* E2M1_PAIR_SR8 */
        for (uint64_t i = 0; i < ((uint64_t)1 << 26); i++) {
            const uint32_t x = (uint32_t)(x0 + i), wi = (uint32_t)(i % SWEEP_CHUNK);
            if (wi == 0) core_codes<FORM>(&c->spec, x, want);
            if (one_input_form<FORM>()) {
                if (wi == 0) {
                    uint32_t f = 0;
                    const uint32_t n = one_input_mismatches<F, FORM>(*c, x, want, &f);
                    if (n && !bad) first = f;
                    bad += n;
                }
                continue;
            }
            if ((x & 0x7FFFFFFFu) > 0x7F800000u) continue; /* NaN */
            if ((FORM == E2M1_PAIR || FORM == E2M1_PAIR_SR8 || FORM == E2M1_PAIR_RO) &&
                (x & 0x7FFFFFFFu) >= 0x46000000u)
                continue;
            if (FORM == E8M0_X4) {
                if ((x & 0x7FFFFFFFu) < 0x00800000u || (x & 0x7FFFFFFFu) > 0x7F3FFFFFu) continue;
                const uint32_t in[4] = {x, e8m0_partner(x, 1), e8m0_partner(x, 2), e8m0_partner(x, 3)};
                const uint32_t got = fpsim_e8m0_rne_x4(in, (c->spec.flags & FPSIM_SPEC_E8M0_NEG_NAN) != 0,
                                                       c->spec.e8m0_neg);
                for (int l = 0; l < 4; l++)
                    if (((got >> (8 * l)) & 0xFFu) != want[l][wi] && !bad++) first = x;
                continue;
            }
            if (FORM == E2M1_PAIR || FORM == E2M1_PAIR_RO) {
                const uint32_t y = pair_partner(x), got = FORM == E2M1_PAIR ? fpsim_e2m1x2_rne_sat_small(x, y)
                                                                            : fpsim_e2m1x2_rne_sat_ro(x, y);
                if ((got & 0xFFFFu) != want[0][wi] || (got >> 16) != fpsim_e2m1_rne_sat(y))
                    if (!bad++) first = x;
                continue;
            }
            if (FORM == E2M1_PAIR_SR8) {
                /* the kernels' inputs: 2^-14 |x| (one float32 multiply) and the signs apart */
                const uint32_t y = pair_partner(x);
                float fx, fy;
                const uint32_t ax = x & 0x7FFFFFFFu, ay = y & 0x7FFFFFFFu;
                memcpy(&fx, &ax, 4);
                memcpy(&fy, &ay, 4);
                const uint32_t h = fpsim_f16x2_rz(fx * 0x1p-14f, fy * 0x1p-14f);
                for (int k = 0; k < 3; k++) {
                    const uint32_t bx = sr_byte(x, k), by = sr_byte(y, 2 - k);
                    const uint32_t m = fpsim_e2m1x2_sr8_f16(h, bx | by << 16);
                    const uint32_t cx = ((m >> 9) & 7u) | (x >> 28 & 8u);
                    const uint32_t cy = ((m >> 25) & 7u) | (y >> 28 & 8u);
                    if ((m & ~0x0E000E00u) || cx != want[k][wi] || cy != fpsim_e2m1_sr8_sat(y, by << 24))
                        if (!bad++) first = x;
                }
                /* the signed route (fpsim_e2m1x2_sr8_f16_signed on 2^-14 x itself, signs included),
                 * its lanes packed by fpsim_e2m1_nibbles_of_sr_lanes with the three pairs before them
                 * (each pair takes slot n % 4 and is read back in four words, every nibble checked) */
                memcpy(&fx, &x, 4);
                memcpy(&fy, &y, 4);
                const uint32_t hs = fpsim_f16x2_rz(fx * 0x1p-14f, fy * 0x1p-14f);
                for (int k = 0; k < 3; k++, ring_n++) {
                    const uint32_t bx = sr_byte(x, k), by = sr_byte(y, 2 - k), slot = ring_n % 4u;
                    ring[slot] = fpsim_e2m1x2_sr8_f16_signed(hs, bx | by << 16);
                    ring_want[slot] = want[k][wi] | fpsim_e2m1_sr8_sat(y, by << 24) << 4;
                    if ((ring[slot] & 0x70007000u) && !bad++) first = x; /* bits 12-14 must stay 0 */
                    if (ring_n < 3) continue;
                    const uint32_t word = fpsim_e2m1_nibbles_of_sr_lanes(ring);
                    for (int j = 0; j < 4; j++)
                        if ((((word >> (4 * j)) & 0xFu) != (ring_want[j] & 0xFu) ||
                             ((word >> (4 * j + 16)) & 0xFu) != ring_want[j] >> 4) &&
                            !bad++)
                            first = x;
                }
                continue;
            }
        }
        c->bad[blk] = bad;
        c->first[blk] = first;
    }
    fesetround(mode);
}

/* Specs the E2M1 saturating form serves: overflow and Inf to +-6, no zero rule (NaN codes free). */
static int e2m1_sat_spec(const fpsim_spec *s)
{
    return fpsim_elem_fixed_matches<FPSIM_E2M1>(s) && !(s->flags & (FPSIM_SPEC_UNSIGNED_ZERO | FPSIM_SPEC_NEGZERO_IN_POS)) &&
           s->ovf_pos == 0x7 && s->inf_pos == 0x7 && s->ovf_neg == 0xF && s->inf_neg == 0xF;
}

template <int F, int FORM> static int check_format(int *specs, const char *only)
{
    int failed = 0, paired_done = 0;
    if (only && strcmp(only, fpsim_format_get((fpsim_format_id)F)->name)) return 0;
    for (int p = 0; p < fpsim_policy_count(); p++) {
        lean_ctx c;
        const int sr = FORM == E2M1_SR8 || FORM == E2M1_PAIR_SR8;
        if (fpsim_spec_make(&c.spec, (fpsim_format_id)F, fpsim_policy_name(p), sr ? FPSIM_SR : FPSIM_RNE, sr ? 8 : 0) != FPSIM_OK)
            continue;
        if (FORM == LEAN && (fpsim_spec_full_rules(&c.spec) || !fpsim_elem_fixed_matches<F>(&c.spec)))
            continue; /* not the short form's */
        if (FORM != LEAN && FORM != E2M3_SAT && FORM != E8M0_X4 && !e2m1_sat_spec(&c.spec)) continue;
        /* the paired forms use no policy field: one saturating spec is enough */
        if ((FORM == E2M1_PAIR || FORM == E2M1_PAIR_SR8 || FORM == E2M1_PAIR_RO) && paired_done++) continue;
        c.fast = FORM == E2M3_SAT ? e2m3_fast_spec(&c.spec) : 0;
        if (FORM == E2M3_SAT && !c.fast) continue;
        fpsim_parallel_for(64, 1, sweep<F, FORM>, &c, 0);
        unsigned long long bad = 0;
        uint32_t first = 0;
        for (int b = 0; b < 64; b++) {
            if (c.bad[b] && !bad) first = c.first[b];
            bad += c.bad[b];
        }
        printf("%-6s %-14s %s, %llu mismatches", fpsim_format_get((fpsim_format_id)F)->name,
               fpsim_policy_name(p),
               FORM == LEAN       ? "lean, 2^32 inputs"
               : FORM == E2M1_SAT ? "e2m1_rne_sat, every non-NaN input"
               : FORM == E2M3_SAT
                   ? (c.fast == 2 ? "e2m3_rne_sat, every non-NaN input" : "e2m3_rne_sat, |x| <= 7.5")
               : FORM == E2M1_SR8     ? "e2m1_sr8_sat, every non-NaN input x 3 bytes"
               : FORM == E2M1_PAIR    ? "e2m1x2_rne_sat_small, every |x| < 2^13, both lanes"
               : FORM == E2M1_PAIR_RO ? "e2m1x2_rne_sat_ro (bf16 round-to-odd), every |x| < 2^13, both lanes"
               : FORM == E8M0_X4      ? "e8m0_rne_x4, every normal |x| below 0x7F400000, 4 lanes"
                                      : "e2m1x2_sr8_f16 and its signed twin (by float16), every |x| < 2^13 x 3 bytes, both lanes",
               bad);
        if (bad && FORM != E2M1_SR8 && FORM != E2M1_PAIR && FORM != E2M1_PAIR_SR8 && FORM != E2M1_PAIR_RO &&
            FORM != E8M0_X4)
            printf(" (first: 0x%08x core 0x%x short 0x%x)", first, fpsim_round_f32(first, &c.spec, 0),
                   FORM == LEAN       ? fpsim_round_f32_rne_lean<LEAN_F<F>::value>(first, c.spec)
                   : FORM == E2M3_SAT ? fpsim_e2m3_rne_sat(first)
                                      : fpsim_e2m1_rne_sat(first));
        else if (bad)
            printf(" (first input: 0x%08x)", first);
        printf("\n");
        fflush(stdout);
        failed += bad != 0;
        (*specs)++;
    }
    return failed;
}

/* ---- the bf16-pair forms (elem_bf16_pairs.cuh) ----
 * Every non-NaN bf16 x in lane 0 and a partner of another magnitude and sign in lane 1, scaled by
 * 2^k for every k the forms accept (-124 .. 120); the oracle is the CPU emulator's chain: the
 * float32 product x * 2^k, then the core under a saturating spec. */
struct pairs_ctx {
    fpsim_spec spec;
    int f;
    unsigned long long bad[245];
    uint32_t first_x[245];
};

template <int F> static void pairs_sweep(void *ctx, size_t b, size_t e)
{
    pairs_ctx *c = static_cast<pairs_ctx *>(ctx);
    for (size_t i = b; i < e; i++) {
        const int k = (int)i - 124;
        const uint32_t pbits = (uint32_t)(k + 127) << 23, s1 = fpsim_bf16x2_pow2_of_f32_bits(pbits);
        float p;
        memcpy(&p, &pbits, 4);
        unsigned long long bad = 0;
        uint32_t first = 0;
        for (uint32_t x = 0; x < 0x10000u; x++) {
            const uint32_t y = (x * 40503u + 0x1234u) & 0xFFFFu;
            if ((x & 0x7FFFu) > 0x7F80u || (y & 0x7FFFu) > 0x7F80u) continue; /* NaN */
            const uint32_t got = fpsim_e2mx_bf16x2_rne_sat<F>(x | y << 16, s1);
            for (int lane = 0; lane < 2; lane++) {
                const uint32_t xb = (lane ? y : x) << 16;
                float xv, yv;
                memcpy(&xv, &xb, 4);
                yv = xv * p; /* the emulator's scaled value: one float32 multiply */
                uint32_t yb;
                memcpy(&yb, &yv, 4);
                if (((got >> (16 * lane)) & 0xFFFFu) != fpsim_round_f32(yb, &c->spec, 0) && !bad++)
                    first = lane ? y : x;
            }
        }
        c->bad[i] = bad;
        c->first_x[i] = first;
    }
}

/* The first saturating spec of format F whose fast mode takes the form (F's standard fields). */
template <int F> static int check_bf16_pairs(int *specs, const char *only)
{
    if (only && strcmp(only, fpsim_format_get((fpsim_format_id)F)->name)) return 0;
    for (int p = 0; p < fpsim_policy_count(); p++) {
        pairs_ctx c;
        if (fpsim_spec_make(&c.spec, (fpsim_format_id)F, fpsim_policy_name(p), FPSIM_RNE, 0) != FPSIM_OK)
            continue;
        if (F == FPSIM_E2M1 ? !e2m1_sat_spec(&c.spec) : e2m3_fast_spec(&c.spec) != 2) continue;
        fpsim_parallel_for(245, 1, pairs_sweep<F>, &c, 0);
        unsigned long long bad = 0;
        uint32_t first = 0;
        int first_k = 0;
        for (int i = 0; i < 245; i++) {
            if (c.bad[i] && !bad) first = c.first_x[i], first_k = i - 124;
            bad += c.bad[i];
        }
        printf(
            "%-6s %-14s e2mx_bf16x2_rne_sat, every bf16 x 2^k (k = -124..120), both lanes, %llu mismatches",
            fpsim_format_get((fpsim_format_id)F)->name, fpsim_policy_name(p), bad);
        if (bad) printf(" (first: bf16 0x%04x, k = %d)", first, first_k);
        printf("\n");
        (*specs)++;
        return bad != 0;
    }
    printf("FAIL: no saturating %s spec for the bf16-pair form\n",
           fpsim_format_get((fpsim_format_id)F)->name);
    return 1;
}

/* argv[1] (optional): one format name, e.g. e2m3; bf16-pairs, e2m1-ro or e2m1-sr for those forms
 * alone. */
int main(int argc, char **argv)
{
    const char *only = argc > 1 ? argv[1] : NULL;
    int specs = 0, failed = 0;
    if (only && !strcmp(only, "bf16-pairs")) {
        failed += check_bf16_pairs<FPSIM_E2M1>(&specs, NULL);
        failed += check_bf16_pairs<FPSIM_E2M3>(&specs, NULL);
        printf("%d specs, %d with mismatches\n", specs, failed);
        return failed ? 1 : 0;
    }
    if (only && (!strcmp(only, "e2m1-ro") || !strcmp(only, "e2m1-sr"))) {
        failed += !strcmp(only, "e2m1-ro") ? check_format<FPSIM_E2M1, E2M1_PAIR_RO>(&specs, NULL)
                                           : check_format<FPSIM_E2M1, E2M1_PAIR_SR8>(&specs, NULL);
        printf("%d specs, %d with mismatches\n", specs, failed);
        return failed || !specs ? 1 : 0;
    }
    failed += check_format<FPSIM_E4M3, LEAN>(&specs, only);
    failed += check_format<FPSIM_E5M2, LEAN>(&specs, only);
    failed += check_format<FPSIM_E2M1, LEAN>(&specs, only);
    failed += check_format<FPSIM_E2M3, LEAN>(&specs, only);
    failed += check_format<FPSIM_E3M2, LEAN>(&specs, only);
    failed += check_format<FPSIM_E2M1, E2M1_SAT>(&specs, only);
    failed += check_format<FPSIM_E2M1, E2M1_SR8>(&specs, only);
    failed += check_format<FPSIM_E2M3, E2M3_SAT>(&specs, only);
    failed += check_format<FPSIM_E2M1, E2M1_PAIR>(&specs, only);
    failed += check_format<FPSIM_E2M1, E2M1_PAIR_SR8>(&specs, only);
    failed += check_format<FPSIM_E2M1, E2M1_PAIR_RO>(&specs, only);
    failed += check_bf16_pairs<FPSIM_E2M1>(&specs, only);
    failed += check_bf16_pairs<FPSIM_E2M3>(&specs, only);
    failed += check_format<FPSIM_E8M0, E8M0_X4>(&specs, only);
    printf("%d specs, %d with mismatches\n", specs, failed);
    if (specs == 0) {
        printf("FAIL: no spec takes the short form (the test checks nothing)\n");
        return 1;
    }
    return failed ? 1 : 0;
}

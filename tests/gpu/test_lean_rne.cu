/* test_lean_rne.cu: the GPU kernels' short nearest-even form (gpu/elem_fixed.cuh,
 * fpsim_round_f32_rne_lean) against the shared core's fpsim_round_f32, over every float32 input,
 * for every spec the kernels send through it (E4M3, E5M2, E2M1, E2M3, E3M2 under RNE with no
 * full rules: nv, nv-nosat, torch, torch-sat, clamp, ml_dtypes, ...). The short form is a second
 * algorithm (integer add on the float's bits for normal results, one FP32 add for results below
 * the smallest normal); the core, tested against measured values and ml_dtypes in tests/formats,
 * is the oracle. Runs on the host (no GPU needed): the device build of the same function differs
 * only in spelling the add as __fadd_rn, and `fpsim verify --device gpu --full` covers that. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elem_fixed.cuh"
#include "fpsim_formats.h"
#include "fpsim_parallel.h"

struct lean_ctx {
    fpsim_spec spec;
    unsigned long long bad[64];
    uint32_t first[64];
};

template <int F> static void sweep(void *ctx, size_t b, size_t e)
{
    lean_ctx *c = static_cast<lean_ctx *>(ctx);
    for (size_t blk = b; blk < e; blk++) { /* block blk: patterns blk * 2^26 .. */
        unsigned long long bad = 0;
        uint32_t first = 0;
        const uint64_t x0 = (uint64_t)blk << 26;
        for (uint64_t i = 0; i < ((uint64_t)1 << 26); i++) {
            const uint32_t x = (uint32_t)(x0 + i);
            const uint32_t want = fpsim_round_f32(x, &c->spec, 0);
            const uint32_t got = fpsim_round_f32_rne_lean<F>(x, c->spec);
            if (want != got && !bad++) first = x;
        }
        c->bad[blk] = bad;
        c->first[blk] = first;
    }
}

template <int F> static int check_format(int *specs, const char *only)
{
    int failed = 0;
    if (only && strcmp(only, fpsim_format_get((fpsim_format_id)F)->name)) return 0;
    for (int p = 0; p < fpsim_policy_count(); p++) {
        lean_ctx c;
        if (fpsim_spec_make(&c.spec, (fpsim_format_id)F, fpsim_policy_name(p), FPSIM_RNE, 0) != FPSIM_OK) continue;
        if (fpsim_spec_full_rules(&c.spec) || !fpsim_elem_fixed_matches<F>(&c.spec)) continue; /* not the short form's */
        fpsim_parallel_for(64, 1, sweep<F>, &c, 0);
        unsigned long long bad = 0;
        uint32_t first = 0;
        for (int b = 0; b < 64; b++) {
            if (c.bad[b] && !bad) first = c.first[b];
            bad += c.bad[b];
        }
        printf("%-6s %-14s 2^32 inputs, %llu mismatches", fpsim_format_get((fpsim_format_id)F)->name,
               fpsim_policy_name(p), bad);
        if (bad)
            printf(" (first: 0x%08x core 0x%x short 0x%x)", first, fpsim_round_f32(first, &c.spec, 0),
                   fpsim_round_f32_rne_lean<F>(first, c.spec));
        printf("\n");
        fflush(stdout);
        failed += bad != 0;
        (*specs)++;
    }
    return failed;
}

/* argv[1] (optional): one format name, e.g. e2m3. */
int main(int argc, char **argv)
{
    const char *only = argc > 1 ? argv[1] : NULL;
    int specs = 0, failed = 0;
    failed += check_format<FPSIM_E4M3>(&specs, only);
    failed += check_format<FPSIM_E5M2>(&specs, only);
    failed += check_format<FPSIM_E2M1>(&specs, only);
    failed += check_format<FPSIM_E2M3>(&specs, only);
    failed += check_format<FPSIM_E3M2>(&specs, only);
    printf("%d specs, %d with mismatches\n", specs, failed);
    if (specs == 0) {
        printf("FAIL: no spec takes the short form (the test checks nothing)\n");
        return 1;
    }
    return failed ? 1 : 0;
}

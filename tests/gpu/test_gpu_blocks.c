/* test_gpu_blocks.c: the GPU block quantizers against the CPU emulators of formats/, byte for
 * byte. The two are independent implementations of formats-spec.md §4-7 (gpu/block_rules.cuh is
 * written apart from formats/block_*.c; only the element core is shared, and that core is itself
 * checked against measured values in tests/formats). Cases: every scheme in gpu/verify_blocks.c on
 * random, odd-shaped and adversarial tensors, float32 and BF16 inputs, rowwise and columnwise;
 * codes, scales, cuBLAS layouts, per-tensor values, the dequantized tensor and the statistics.
 * Without a CUDA device: prints "no CUDA device: skipped" and exits 77. */
#include <stdio.h>

#include "fpsim_gpu.h"
#include "fpsim_gpu_verify.h"

static void show(const fpsim_gpu_check *row, void *ctx)
{
    int *bad = ctx;
    if (row->mismatches) (*bad)++;
    printf("%-48s %10llu %8s %llu  %s\n", row->name, (unsigned long long)row->inputs, row->skipped ? "skipped" : "",
           (unsigned long long)row->mismatches, row->example);
}

int main(void)
{
    if (fpsim_gpu_device_count() == 0) {
        printf("no CUDA device: skipped\n");
        return 77;
    }
    fpsim_gpu_verify_opts o = {0, 0, NULL, 0};
    uint64_t mism = 0;
    int bad = 0;
    fpsim_status st = fpsim_gpu_verify_blocks(&o, show, &bad, &mism);
    if (st != FPSIM_OK) {
        fprintf(stderr, "FAIL: %s\n", fpsim_last_error());
        return 1;
    }
    printf("%llu mismatches in %d schemes\n", (unsigned long long)mism, bad);
    return mism ? 1 : 0;
}

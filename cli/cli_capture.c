/* cli_capture.c: the per-tensor agreement table of a loaded PyTorch capture. */
#include "cli_capture.h"

#include <stdio.h>

#include "fpsim_numerics.h"

fpsim_status fpsim_cli_print_capture_diffs(const fpsim_capture *cap, const char *path)
{
    fpsim_capture_diff diffs[FPSIM_CAPTURE_MAX_DIFFS];
    fpsim_numerics nx = fpsim_numerics_fp32();
    double max_rel = 0.0;
    fpsim_status st = fpsim_capture_compare(cap, &nx, diffs, FPSIM_CAPTURE_MAX_DIFFS, &max_rel);
    if (st) return st;
    printf("capture %s (model %s): fpsim FP32 vs PyTorch, relative L2\n", path, cap->model_spec);
    for (size_t i = 0; i < fpsim_capture_diff_count(cap); i++)
        printf("  %-16s %.3e\n", diffs[i].name, diffs[i].rel_l2);
    printf("  %-16s %.3e\n", "max", max_rel);
    return FPSIM_OK;
}

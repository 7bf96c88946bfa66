/* test_capture_torch.c: fpsim's FP32 and FP64 engines against a PyTorch float32 training step.
 *
 * The oracle is PyTorch (an independent implementation of the same model, autograd for the
 * gradients): scripts/capture_torch.py writes one step of a tiny model, fpsim loads the weights
 * and batch, runs its own forward and backward, and every compared tensor (embedding, residual
 * stream after each block, final norm, logits, loss, every parameter gradient) must agree within
 * 1e-5 relative L2. Then three broken captures (a missing tensor, a wrong shape, schema_version
 * 99), made from the good one with h5py, must each fail to load with a message naming the fault.
 *
 * Usage: test_capture_torch PYTHON SCRIPT WORKDIR (PYTHON "none": torch not installed, skip). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fpsim_capture.h"
#include "test_util.h"

#define TOLERANCE 1e-5

static int failures = 0;

static void check(int ok, const char *what) {
    if (!ok) {
        failures++;
        printf("FAIL: %s\n", what);
    }
}

static int run(const char *cmd) {
    printf("$ %s\n", cmd);
    fflush(stdout);
    return system(cmd);
}

static void compare_engine(const fpsim_capture *cap, const char *label, fpsim_numerics nx) {
    fpsim_capture_diff diffs[64];
    double max_rel = 0.0;
    fpsim_status st = fpsim_capture_compare(cap, &nx, diffs, 64, &max_rel);
    check(st == FPSIM_OK, "fpsim_capture_compare runs");
    if (st) {
        printf("  %s\n", fpsim_last_error());
        return;
    }
    for (size_t i = 0; i < fpsim_capture_diff_count(cap); i++) {
        int ok = diffs[i].rel_l2 <= TOLERANCE;
        printf("  %s %-14s rel L2 %.3e %s\n", label, diffs[i].name, diffs[i].rel_l2,
               ok ? "ok" : "FAIL");
        char what[160];
        snprintf(what, sizeof what, "%.16s %.47s within %g", label, diffs[i].name, TOLERANCE);
        check(ok, what);
    }
    printf("  %s max rel L2 %.3e\n", label, max_rel);
}

/* Copy the good capture, break it with a line of h5py, and expect load to fail naming `want`. */
static void expect_bad(const char *py, const char *dir, const char *good, const char *tag,
                       const char *edit, fpsim_status want_st, const char *want) {
    char path[1024], cmd[4096];
    snprintf(path, sizeof path, "%s/capture_%s.h5", dir, tag);
    snprintf(cmd, sizeof cmd,
             "%s -c \"import shutil, h5py; shutil.copy('%s', '%s'); f = h5py.File('%s', 'r+'); "
             "%s; f.close()\"", py, good, path, path, edit);
    if (run(cmd) != 0) {
        check(0, "h5py could edit the capture");
        return;
    }
    fpsim_capture cap;
    fpsim_status st = fpsim_capture_load(&cap, path);
    const char *msg = fpsim_last_error();
    printf("  %s: status %d: %s\n", tag, (int)st, msg);
    char what[256];
    snprintf(what, sizeof what, "%s: status %d and a message containing '%s'", tag, (int)want_st,
             want);
    check(st == want_st && strstr(msg, want) != NULL, what);
    if (st == FPSIM_OK) fpsim_capture_free(&cap);
    remove(path);
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: test_capture_torch PYTHON SCRIPT WORKDIR\n");
        return 2;
    }
    const char *py = argv[1], *script = argv[2], *dir = argv[3];
    if (strcmp(py, "none") == 0) {
        printf("torch not installed: skipped (no Python that imports torch, numpy and h5py was "
               "found when CMake configured this test)\n");
        return TEST_SKIP;
    }
    char good[1024], cmd[4096];
    snprintf(good, sizeof good, "%s/capture_good.h5", dir);
    snprintf(cmd, sizeof cmd,
             "%s %s --out %s --seed 7 --model layers=2,d=32,heads=4,kv_heads=2,ffn=48,vocab=40,"
             "seq=12,batch=3", py, script, good);
    if (run(cmd) != 0) {
        printf("FAIL: capture_torch.py did not write %s\n", good);
        return 1;
    }
    fpsim_capture cap;
    fpsim_status st = fpsim_capture_load(&cap, good);
    if (st) {
        printf("FAIL: loading the capture: %s\n", fpsim_last_error());
        return 1;
    }
    printf("loaded %s: model %s, torch loss %.7f\n", good, cap.model_spec, cap.loss);
    compare_engine(&cap, "fp32", fpsim_numerics_fp32());
    compare_engine(&cap, "fp64", fpsim_numerics_fp64());
    fpsim_capture_free(&cap);

    expect_bad(py, dir, good, "missing", "del f['grads/qkvw']", FPSIM_EFORMAT, "grads/qkvw");
    expect_bad(py, dir, good, "shape",
               "d = f['params/downw'][...]; del f['params/downw']; "
               "f['params/downw'] = d[:, :, :-1]", FPSIM_ESHAPE, "params/downw");
    expect_bad(py, dir, good, "version", "f.attrs['schema_version'] = 99", FPSIM_EUNSUPPORTED,
               "schema_version 99");
    expect_bad(py, dir, good, "kind", "f.attrs['kind'] = 'fpsim-replay'", FPSIM_EFORMAT,
               "fpsim-replay");
    remove(good);
    printf("%s: %d failure(s)\n", failures ? "FAILED" : "passed", failures);
    return failures ? 1 : 0;
}

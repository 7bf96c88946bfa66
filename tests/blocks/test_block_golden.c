/* test_block_golden.c: fpsim's block quantizers against torchao, byte for byte.
 *
 * data/golden/ holds inputs and torchao 0.18.0 outputs (to_mx for every MX element type and
 * FLOOR/CEIL/EVEN/RCEIL, nvfp4_quantize single- and two-level, to_blocked scale layouts) and
 * graphcore gfloat 0.5.2 MX blocks, made on the CPU by scripts/golden_torchao.py; manifest.txt names each case's input, fpsim scheme and axis. The
 * expected bytes come from torchao and gfloat, independent implementations. */
#include "fpsim_block.h"
#include "test_util.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static test_counter tc = TEST_COUNTER_INIT("torchao and gfloat golden vectors");

typedef struct npy {
    char descr[8];
    size_t shape[2];
    int ndim;
    size_t nbytes;
    unsigned char *data;
} npy;

/* Minimal .npy reader for the files the script writes (v1.0, C order, '<f4' or '|u1'). */
static int npy_read(const char *path, npy *a)
{
    memset(a, 0, sizeof *a);
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    unsigned char pre[10];
    if (fread(pre, 1, 10, f) != 10 || memcmp(pre, "\x93NUMPY", 6) != 0 || pre[6] != 1) {
        fclose(f);
        return 0;
    }
    size_t hlen = (size_t)pre[8] | ((size_t)pre[9] << 8);
    char *h = calloc(hlen + 1, 1);
    if (!h || fread(h, 1, hlen, f) != hlen) {
        free(h);
        fclose(f);
        return 0;
    }
    const char *d = strstr(h, "'descr': '");
    const char *s = strstr(h, "'shape': (");
    if (!d || !s || strstr(h, "'fortran_order': True")) {
        free(h);
        fclose(f);
        return 0;
    }
    sscanf(d + 10, "%7[^']", a->descr);
    s += 10;
    a->ndim = 0;
    while (*s && *s != ')' && a->ndim < 2) {
        while (*s == ' ' || *s == ',')
            s++;
        if (!isdigit((unsigned char)*s))
            break;
        a->shape[a->ndim++] = strtoul(s, (char **)&s, 10);
    }
    free(h);
    size_t n = 1;
    for (int i = 0; i < a->ndim; i++)
        n *= a->shape[i];
    size_t es = strcmp(a->descr, "<f4") == 0 ? 4 : 1;
    a->nbytes = n * es;
    a->data = malloc(a->nbytes + 1);
    size_t got = fread(a->data, 1, a->nbytes, f);
    fclose(f);
    return got == a->nbytes;
}

static int run_case(const char *dir, const char *cname, const char *input, const char *scheme,
                    const char *axis)
{
    char path[512];
    npy in, sc, cd;
    snprintf(path, sizeof path, "%s/in_%s.npy", dir, input);
    if (!npy_read(path, &in) || in.ndim != 2 || strcmp(in.descr, "<f4") != 0) {
        test_fail(&tc, "%s: cannot read %s", cname, path);
        return 0;
    }
    snprintf(path, sizeof path, "%s/%s_scales.npy", dir, cname);
    int ok = npy_read(path, &sc);
    snprintf(path, sizeof path, "%s/%s_codes.npy", dir, cname);
    ok = ok && npy_read(path, &cd);
    if (!ok) {
        test_fail(&tc, "%s: cannot read its outputs", cname);
        return 0;
    }
    fpsim_scheme s;
    if (fpsim_scheme_parse(&s, scheme) != FPSIM_OK) {
        test_fail(&tc, "%s: scheme %s: %s", cname, scheme, fpsim_last_error());
        return 0;
    }
    fpsim_qopts o;
    fpsim_qopts_default(&o);
    o.axis = strncmp(axis, "cols", 4) == 0 ? FPSIM_AXIS_COLS : FPSIM_AXIS_ROWS;
    const int cublas = strstr(axis, "+cublas") != NULL;
    o.want = cublas ? FPSIM_QWANT_CUBLAS : 0;
    fpsim_qtensor q;
    memset(&q, 0, sizeof q);
    if (fpsim_block_quantize(&q, &s, (const float *)in.data, in.shape[0], in.shape[1], &o) !=
        FPSIM_OK) {
        test_fail(&tc, "%s: %s", cname, fpsim_last_error());
        return 0;
    }
    size_t nsc = q.srows * q.scols, ncd = q.qrows * q.code_stride;
    TEST_CHECK(&tc, nsc == sc.nbytes && ncd == cd.nbytes, "%s: sizes scales %zu/%zu codes %zu/%zu",
               cname, nsc, sc.nbytes, ncd, cd.nbytes);
    size_t bad = 0;
    if (nsc == sc.nbytes)
        for (size_t i = 0; i < nsc; i++) {
            tc.checks++;
            if (q.scale_codes[i] != sc.data[i] && bad++ < 3)
                test_fail(&tc, "%s scale %zu (block row %zu col %zu): got 0x%02x want 0x%02x", cname,
                          i, i / q.scols, i % q.scols, q.scale_codes[i], sc.data[i]);
            else if (q.scale_codes[i] != sc.data[i])
                tc.failures++;
        }
    if (ncd == cd.nbytes)
        for (size_t i = 0; i < ncd; i++) {
            tc.checks++;
            if (q.codes[i] != cd.data[i] && bad++ < 3) {
                size_t r = i / q.code_stride, c = i % q.code_stride;
                test_fail(&tc, "%s code byte %zu (row %zu col %zu, x=0x%08x): got 0x%02x want 0x%02x",
                          cname, i, r, c,
                          test_f32_bits(((const float *)in.data)[o.axis ? 0 : r * in.shape[1] + c]),
                          q.codes[i], cd.data[i]);
            } else if (q.codes[i] != cd.data[i])
                tc.failures++;
        }
    if (cublas) {
        /* torchao to_blocked of the scales: the cuBLAS 128x4 layout, padding included */
        npy bl;
        snprintf(path, sizeof path, "%s/%s_blocked.npy", dir, cname);
        if (!npy_read(path, &bl)) {
            test_fail(&tc, "%s: cannot read %s", cname, path);
        } else {
            size_t nb = q.cublas_rows * q.cublas_cols;
            TEST_CHECK(&tc, nb == bl.nbytes, "%s: cuBLAS layout size %zu, torchao %zu", cname, nb, bl.nbytes);
            size_t diff = 0;
            for (size_t i = 0; nb == bl.nbytes && i < nb; i++)
                diff += q.cublas_codes[i] != bl.data[i];
            test_count(&tc, nb);
            TEST_CHECK(&tc, diff == 0, "%s: %zu cuBLAS-layout bytes differ from torchao to_blocked", cname, diff);
            bad += diff;
            free(bl.data);
        }
    }
    fpsim_qtensor_free(&q);
    free(in.data);
    free(sc.data);
    free(cd.data);
    return bad == 0;
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "data/golden";
    char path[512];
    snprintf(path, sizeof path, "%s/manifest.txt", dir);
    FILE *m = fopen(path, "r");
    if (!m) {
        printf("SKIP: %s not found (run from the repository root)\n", path);
        return TEST_SKIP;
    }
    char line[512];
    int cases = 0, passed = 0;
    while (fgets(line, sizeof line, m)) {
        char cname[128], input[64], scheme[256], axis[16];
        if (line[0] == '#' || sscanf(line, "%127s %63s %255s %15s", cname, input, scheme, axis) != 4)
            continue;
        cases++;
        passed += run_case(dir, cname, input, scheme, axis);
    }
    fclose(m);
    printf("%d of %d golden cases identical\n", passed, cases);
    TEST_CHECK(&tc, cases > 0, "manifest %s lists no case", path);
    return test_summary(&tc);
}

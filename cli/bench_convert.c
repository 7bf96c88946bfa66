/* bench_convert.c: `fpsim bench convert`: element conversions in Gelem/s on one core and on all
 * cores, next to a memcpy of the same float32 data measured in the same run (the bandwidth
 * limit), on normally distributed data and on wide-range data (log-uniform magnitudes over the
 * whole float32 range, subnormals included, so every branch a naive converter would take is
 * taken). Each figure is the best of several repetitions. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_util.h"
#include "commands.h"
#include "fpsim_formats.h"
#include "fpsim_parallel.h"

static const char *const CMD = "bench convert";

static void usage(FILE *out)
{
    fprintf(out,
            "usage: fpsim bench convert [--json] [--threads T] [--n N] [--reps R] [--only TEXT]\n\n"
            "Gelem/s of f32 -> e4m3, e5m2, e2m1, bf16 under rne, rz and sr, and of decoding e4m3, e2m1 and\n"
            "bf16 codes to f32, on normal and on wide-range data, with 1 thread and with T threads (default\n"
            "FPSIM_THREADS or all cores), each next to a memcpy of the same float32 array (same thread\n"
            "count) measured in the same run.\n\n"
            "  --json       a JSON array, one object per case: case, threads, gelem_per_s,\n"
            "               memcpy_gelem_per_s\n"
            "  --threads T  the \"all cores\" thread count\n"
            "  --n N        elements per array (default 16M; suffixes K, M, G)\n"
            "  --reps R     repetitions, best taken (default 5)\n"
            "  --only TEXT  only the cases whose name contains TEXT (e.g. \"e4m3 sr\", decode)\n");
}

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Standard normal values (Box-Muller). */
static void fill_normal(float *x, size_t n, uint64_t seed)
{
    for (size_t i = 0; i < n; i += 2) {
        const double u1 = ((double)(splitmix64(&seed) >> 11) + 1.0) * 0x1p-53;
        const double u2 = (double)(splitmix64(&seed) >> 11) * 0x1p-53;
        const double r = sqrt(-2.0 * log(u1));
        x[i] = (float)(r * cos(2.0 * M_PI * u2));
        if (i + 1 < n)
            x[i + 1] = (float)(r * sin(2.0 * M_PI * u2));
    }
}

/* Random sign, exponent field uniform over 0..254 (subnormals to the largest binade), random
 * mantissa: magnitudes log-uniform over the whole finite float32 range. */
static void fill_wide(float *x, size_t n, uint64_t seed)
{
    for (size_t i = 0; i < n; i++) {
        const uint64_t r = splitmix64(&seed);
        const uint32_t bits = (uint32_t)(r & 0x807FFFFFu) | (uint32_t)(((r >> 32) % 255u) << 23);
        memcpy(&x[i], &bits, 4);
    }
}

typedef struct copy_job {
    unsigned char *dst;
    const unsigned char *src;
    size_t elem;
} copy_job;

static void copy_range(void *ctx, size_t begin, size_t end)
{
    const copy_job *j = ctx;
    memcpy(j->dst + begin * j->elem, j->src + begin * j->elem, (end - begin) * j->elem);
}

typedef struct bench_case {
    const char *fmt;
    const char *mode; /* NULL: decode */
} bench_case;

/* The printed name of a case on normal (data 0) or wide-range (data 1) values. */
static void case_name(char *name, size_t size, const bench_case *c, int data)
{
    if (c->mode == NULL)
        snprintf(name, size, "%s->f32 decode", c->fmt);
    else
        snprintf(name, size, "f32->%s %s %s", c->fmt, c->mode, data ? "wide" : "normal");
}

static const bench_case CASES[] = {
    {"e4m3", "rne"}, {"e4m3", "rz"}, {"e4m3", "sr"}, {"e5m2", "rne"}, {"e5m2", "rz"}, {"e5m2", "sr"},
    {"e2m1", "rne"}, {"e2m1", "rz"}, {"e2m1", "sr"}, {"bf16", "rne"}, {"bf16", "rz"}, {"bf16", "sr"},
    {"e4m3", NULL},  {"e2m1", NULL}, {"bf16", NULL},
};
enum { CASE_COUNT = sizeof CASES / sizeof CASES[0] };

typedef struct bench_ctx {
    const float *x;
    void *codes;
    float *y;
    size_t n;
    int reps;
} bench_ctx;

static double best_seconds_convert(const bench_ctx *b, const fpsim_spec *s, int threads, int decode)
{
    double best = 1e30;
    for (int r = 0; r < b->reps; r++) {
        const double t0 = fpsim_cli_seconds();
        if (decode)
            fpsim_decode_array_f32(b->y, b->codes, b->n, s, threads);
        else
            fpsim_convert_f32(b->codes, b->x, b->n, s, 42, 0, 0, threads);
        const double t = fpsim_cli_seconds() - t0;
        best = t < best ? t : best;
    }
    return best;
}

static double best_seconds_memcpy(const bench_ctx *b, int threads)
{
    copy_job j = {(unsigned char *)b->y, (const unsigned char *)b->x, 4};
    double best = 1e30;
    for (int r = 0; r < b->reps; r++) {
        const double t0 = fpsim_cli_seconds();
        fpsim_parallel_for(b->n, 1 << 16, copy_range, &j, threads);
        const double t = fpsim_cli_seconds() - t0;
        best = t < best ? t : best;
    }
    return best;
}

int bench_convert(int argc, char **argv)
{
    int json = 0, threads = 0;
    uint64_t n = 16u << 20;
    long reps = 5;
    const char *only = NULL;
    for (int i = 1; i < argc; i++) {
        const char *v;
        int r;
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return 0;
        }
        if (!strcmp(argv[i], "--json")) {
            json = 1;
            continue;
        }
        fpsim_status st = FPSIM_OK;
        if ((r = fpsim_cli_take_value(CMD, argc, argv, &i, "--threads", &v)) != 0) {
            if (r < 0 || (st = fpsim_cli_parse_threads(v, &threads)))
                return r < 0 ? 2 : fpsim_cli_fail(CMD, st);
        } else if ((r = fpsim_cli_take_value(CMD, argc, argv, &i, "--n", &v)) != 0) {
            if (r < 0 || (st = fpsim_cli_parse_size(v, "--n", &n)))
                return r < 0 ? 2 : fpsim_cli_fail(CMD, st);
        } else if ((r = fpsim_cli_take_value(CMD, argc, argv, &i, "--only", &v)) != 0) {
            if (r < 0)
                return 2;
            only = v;
        } else if ((r = fpsim_cli_take_value(CMD, argc, argv, &i, "--reps", &v)) != 0) {
            if (r < 0 || (st = fpsim_cli_parse_int(v, "--reps", 1, 1000, &reps)))
                return r < 0 ? 2 : fpsim_cli_fail(CMD, st);
        } else {
            return fpsim_cli_unknown_option(CMD, argv[i]);
        }
    }
    if (threads <= 0)
        threads = fpsim_threads_default();
    if (only) {
        int matches = 0;
        char name[64];
        for (int c = 0; c < CASE_COUNT; c++)
            for (int data = 0; data < 2; data++) {
                case_name(name, sizeof name, &CASES[c], data);
                matches += strstr(name, only) != NULL;
            }
        if (!matches) {
            fpsim_cli_error(CMD, "--only '%s' matches no case (names look like 'f32->e4m3 sr normal', "
                            "'e2m1->f32 decode')", only);
            return 2;
        }
    }

    float *normal = malloc(n * sizeof(float)), *wide = malloc(n * sizeof(float));
    float *y = malloc(n * sizeof(float));
    void *codes = malloc(n * 2);
    if (!normal || !wide || !y || !codes) {
        free(normal), free(wide), free(y), free(codes);
        fpsim_cli_error(CMD, "out of memory for %llu elements", (unsigned long long)n);
        return 1;
    }
    fill_normal(normal, n, 1);
    fill_wide(wide, n, 2);

    const int thread_counts[2] = {1, threads};
    const int nthreads = threads > 1 ? 2 : 1;
    int first = 1;
    if (json)
        printf("[\n");
    else
        printf("%-28s %7s %12s %12s %8s\n", "case", "threads", "Gelem/s", "memcpy", "ratio");
    for (int t = 0; t < nthreads; t++) {
        const int th = thread_counts[t];
        for (int data = 0; data < 2; data++) {
            bench_ctx b = {data ? wide : normal, codes, y, (size_t)n, (int)reps};
            const double mem = (double)n / best_seconds_memcpy(&b, th) * 1e-9;
            for (int c = 0; c < CASE_COUNT; c++) {
                const bench_case *bc = &CASES[c];
                const int decode = bc->mode == NULL;
                if (decode && data == 1)
                    continue; /* decode speed does not depend on the values */
                char name[64];
                case_name(name, sizeof name, bc, data);
                if (only && !strstr(name, only))
                    continue;
                fpsim_format_id fid;
                fpsim_round mode = FPSIM_RNE;
                fpsim_spec s;
                if (fpsim_format_lookup(bc->fmt, &fid) || (!decode && fpsim_round_find(bc->mode, &mode)) ||
                    fpsim_spec_make(&s, fid, NULL, mode, 0)) {
                    fpsim_cli_error(CMD, "%s", fpsim_last_error());
                    return 1;
                }
                if (decode) /* decode codes of the normal data */
                    fpsim_convert_f32(codes, normal, (size_t)n, &s, 0, 0, 0, threads);
                const double g = (double)n / best_seconds_convert(&b, &s, th, decode) * 1e-9;
                if (json) {
                    printf("%s  {\"case\": ", first ? "" : ",\n");
                    fpsim_cli_json_string(stdout, name);
                    printf(", \"threads\": %d, \"gelem_per_s\": %.4f, \"memcpy_gelem_per_s\": %.4f}", th, g, mem);
                } else {
                    printf("%-28s %7d %12.3f %12.3f %8.2f\n", name, th, g, mem, g / mem);
                }
                first = 0;
                fflush(stdout);
            }
        }
    }
    if (json)
        printf("\n]\n");
    free(normal);
    free(wide);
    free(y);
    free(codes);
    return 0;
}

/* bench_quantize.c: `fpsim bench quantize`: block quantizers vs memcpy, in one run.
 *
 * Every scheme (round-to-nearest) and NVFP4 with stochastic rounding and the RHT quantize one
 * rows x cols float32 tensor (default 4096 x 4096), on one thread and on all threads; a memcpy of
 * the same bytes with the same threads is timed in the same run, so the ratio to memcpy is the
 * figure to compare across machines. The main rows produce codes and scales (plus the
 * cuBLAS-layout scale copy), as a training step's cast kernel does ("[codes+scales]" in the JSON
 * case); one more row per case, at the first thread count, adds dequantization and statistics
 * ("[codes+scales+dequant+stats]").
 * Each figure is the best of --reps timed runs after one warm-up. JSON fields match
 * `fpsim bench convert`: case, threads, gelem_per_s, memcpy_gelem_per_s; plus cpu_gelem_per_s
 * (elements per second of process CPU time) and, on the one-thread codes+scales rows of the
 * schemes issue #3 sets a target for, target_gelem_per_s and target_met.
 *
 * Targets (issue #3, one core, codes + scales): MXFP8, block FP8 and NVFP4 round-to-nearest
 * >= 1.0 Gelem/s, NVFP4 with SR and RHT >= 0.5. "met" is judged on the CPU-time rate of the
 * one-thread run: on a shared machine the wall clock also counts the time other processes hold
 * the core, which says nothing about the code; both rates are printed. */
#include <math.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_util.h"
#include "commands.h"
#include "fpsim_block.h"
#include "fpsim_core_types.h"
#include "fpsim_parallel.h"

static const char *const CMD = "bench quantize";

static void usage(FILE *out)
{
    fprintf(out,
            "usage: fpsim bench quantize [--json] [--threads T] [--size RxC] [--reps N] [--case TEXT]\n"
            "                            [--device cpu|gpu]\n\n"
            "Gelem/s of every block quantizer (codes + scales) on one thread and on T threads,\n"
            "and on one thread with dequant + stats too, next to memcpy of the same float32\n"
            "data measured in the same run. Rates by wall clock and by process CPU time; the\n"
            "one-thread codes+scales rows show issue #3's target (MXFP8, block FP8, NVFP4 RNE\n"
            ">= 1.0 Gelem/s; NVFP4 SR+RHT >= 0.5) and whether the CPU-time rate meets it.\n\n"
            "  --json         one JSON object: {\"benchmark\", \"cpu\", \"rows\", \"cols\", \"results\": [\n"
            "                 {\"case\", \"outputs\", \"axis\", \"threads\", \"gelem_per_s\", \"cpu_gelem_per_s\",\n"
            "                 \"memcpy_gelem_per_s\" [, \"target_gelem_per_s\", \"target_met\"]}, ...]}\n"
            "  --threads T    the many-thread row (default: FPSIM_THREADS or all cores)\n"
            "  --size RxC     tensor shape (default 4096x4096)\n"
            "  --reps N       timed runs per figure, best taken (default 5)\n"
            "  --case TEXT    only this scheme text (repeatable), e.g. --case nvfp4:sr=1,rht=1\n"
            "  --device gpu   the GPU version (cli/bench_quantize_gpu.c)\n"
            "  --quiet, -q    no progress notes on stderr\n");
}

/* One benchmark case: a scheme text and the axis it is quantized along (RHT applies to
 * columnwise copies only, so the SR+RHT case runs along columns, as TE's wgrad operands do). */
struct bench_case {
    const char *scheme;
    int axis;
};

static const struct bench_case default_cases[] = {
    {"mxfp8-e4m3", FPSIM_AXIS_ROWS},       {"mxfp8-e5m2", FPSIM_AXIS_ROWS},
    {"mxfp6-e2m3", FPSIM_AXIS_ROWS},       {"mxfp6-e3m2", FPSIM_AXIS_ROWS},
    {"mxfp4", FPSIM_AXIS_ROWS},            {"nvfp4", FPSIM_AXIS_ROWS},
    {"nvfp4:tile=16x16", FPSIM_AXIS_ROWS}, {"nvfp4:sr=1,rht=1", FPSIM_AXIS_COLS},
    {"fp8-block", FPSIM_AXIS_ROWS},        {"fp8-block:tile=128x128", FPSIM_AXIS_ROWS},
    {"fp8-tensor", FPSIM_AXIS_ROWS},
};

/* Deterministic test data: roughly normal values (sum of 4 uniforms) times 2^k, k in [-8, 8]
 * varying every 64 elements, so that blocks see different amax. SplitMix64-driven. */
static void fill_input(float *x, size_t n)
{
    uint64_t s = 0x243F6A8885A308D3ull;
    float scale = 1.0f;
    for (size_t i = 0; i < n; i++) {
        uint64_t z = (s += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        if (i % 64 == 0) scale = ldexpf(1.0f, (int)((z >> 59) % 17) - 8);
        double u = (double)(z & 0xFFFF) + (double)((z >> 16) & 0xFFFF) + (double)((z >> 32) & 0xFFFF) +
                   (double)((z >> 48) & 0xFFFF);
        x[i] = (float)((u / 65536.0 - 2.0) * scale);
    }
}

/* Issue #3's one-core target for a scheme (Gelem/s, codes + scales), 0 if it sets none. */
static double scheme_target(const fpsim_scheme *s)
{
    switch (s->kind) {
    case FPSIM_KIND_MX:
        return s->elem == FPSIM_E4M3 || s->elem == FPSIM_E5M2 ? 1.0 : 0.0; /* MXFP8 */
    case FPSIM_KIND_FP8_BLOCK:
        return 1.0;
    case FPSIM_KIND_NVFP4:
        if (!s->sr && !s->rht)
            return 1.0;
        return s->sr && s->rht ? 0.5 : 0.0;
    default:
        return 0.0;
    }
}

static double cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

struct copy_job {
    char *dst;
    const char *src;
};

static void copy_range(void *ctx, size_t begin, size_t end)
{
    struct copy_job *j = ctx;
    memcpy(j->dst + begin, j->src + begin, end - begin);
}

/* Best time of `reps` memcpy runs of `bytes` with `threads` threads (after one warm-up). */
static double time_memcpy(char *dst, const char *src, size_t bytes, int threads, int reps)
{
    struct copy_job j = {dst, src};
    size_t grain = (size_t)1 << 20;
    double best = 1e30;
    for (int r = -1; r < reps; r++) {
        double t0 = fpsim_cli_seconds();
        fpsim_parallel_for(bytes, grain, copy_range, &j, threads);
        double dt = fpsim_cli_seconds() - t0;
        if (r >= 0 && dt < best) best = dt;
    }
    return best;
}

/* Best wall-clock and best process-CPU time of `reps` calls after one warm-up. */
static fpsim_status time_quantize(double *best, double *best_cpu, fpsim_qtensor *q, const fpsim_scheme *s,
                                  const float *x, size_t rows, size_t cols, int axis, int threads, int reps,
                                  unsigned want)
{
    fpsim_qopts o;
    fpsim_qopts_default(&o);
    o.axis = axis;
    o.threads = threads;
    o.want = want;
    o.seed = 1;
    *best = *best_cpu = 1e30;
    for (int r = -1; r < reps; r++) { /* r = -1: warm-up, allocates the output buffers */
        double t0 = fpsim_cli_seconds(), c0 = cpu_seconds();
        fpsim_status st = fpsim_block_quantize(q, s, x, rows, cols, &o);
        double dt = fpsim_cli_seconds() - t0, dc = cpu_seconds() - c0;
        if (st) return st;
        if (r >= 0 && dt < *best) *best = dt;
        if (r >= 0 && dc < *best_cpu) *best_cpu = dc;
    }
    return FPSIM_OK;
}

static void cpu_name(char *out, size_t cap)
{
    snprintf(out, cap, "unknown CPU");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (!strncmp(line, "model name", 10)) {
            char *colon = strchr(line, ':');
            if (colon) {
                colon++;
                while (*colon == ' ') colon++;
                colon[strcspn(colon, "\n")] = '\0';
                snprintf(out, cap, "%s", colon);
            }
            break;
        }
    }
    fclose(f);
}

/* 1 if the arguments ask for --device gpu (either spelling), looked for before anything else so
 * that the GPU benchmark parses (and documents) its own options. */
static int wants_gpu(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--device=gpu")) return 1;
        if (!strcmp(argv[i], "--device") && i + 1 < argc && !strcmp(argv[i + 1], "gpu")) return 1;
    }
    return 0;
}

int bench_quantize(int argc, char **argv)
{
    if (wants_gpu(argc, argv)) {
#if defined(FPSIM_HAVE_CUDA)
        return bench_quantize_gpu(argc, argv); /* cli/bench_quantize_gpu.c */
#else
        fpsim_cli_error(CMD, "--device gpu: this fpsim was built without CUDA (no nvcc at configure time)");
        return FPSIM_EXIT_USAGE;
#endif
    }
    if (fpsim_cli_wants_help(argc, argv)) {
        usage(stdout);
        return FPSIM_EXIT_OK;
    }
    int json = 0, threads = 0, reps = 5;
    size_t rows = 4096, cols = 4096;
    const char *device = "cpu";
    struct bench_case chosen[32];
    size_t nchosen = 0;
    for (int i = 1; i < argc; i++) {
        const char *v;
        int r;
        fpsim_status st = FPSIM_OK;
#define VALUE(name) ((r = fpsim_cli_take_value(CMD, argc, argv, &i, name, &v)) != 0)
        if (VALUE("--threads")) st = fpsim_cli_parse_threads(v, &threads);
        else if (VALUE("--size")) st = fpsim_cli_parse_shape(v, "--size", &rows, &cols);
        else if (VALUE("--reps")) {
            long n;
            st = fpsim_cli_parse_int(v, "--reps", 1, 1000, &n);
            reps = (int)n;
        } else if ((r = fpsim_cli_take_list_value(CMD, argc, argv, &i, "--case", &v)) != 0) {
            if (nchosen == sizeof chosen / sizeof *chosen) {
                fpsim_cli_error(CMD, "too many --case options");
                return FPSIM_EXIT_USAGE;
            }
            chosen[nchosen].scheme = v;
            chosen[nchosen].axis = strstr(v, "rht=1") ? FPSIM_AXIS_COLS : FPSIM_AXIS_ROWS;
            nchosen++;
        } else if (VALUE("--device")) device = v;
        else if (r < 0) return FPSIM_EXIT_USAGE;
        else if (!strcmp(argv[i], "--json")) json = 1;
        else if (!strcmp(argv[i], "--quiet") || !strcmp(argv[i], "-q")) fpsim_cli_set_quiet(1);
        else return fpsim_cli_unknown_option(CMD, argv[i]);
#undef VALUE
        if (r < 0) return FPSIM_EXIT_USAGE;
        if (st) return fpsim_cli_fail(CMD, st);
    }
    if (strcmp(device, "cpu") != 0) {
        fpsim_cli_error(CMD, "unknown device '%s'; valid: cpu, gpu", device);
        return FPSIM_EXIT_USAGE;
    }
    const struct bench_case *cases = nchosen ? chosen : default_cases;
    size_t ncases = nchosen ? nchosen : sizeof default_cases / sizeof *default_cases;
    fpsim_scheme *schemes = calloc(ncases, sizeof *schemes);
    for (size_t c = 0; c < ncases; c++) {
        fpsim_status st = fpsim_scheme_parse(&schemes[c], cases[c].scheme);
        if (!st) st = fpsim_block_check_shape(&schemes[c], rows, cols, cases[c].axis); /* before the table */
        if (st) {
            free(schemes);
            return fpsim_cli_fail(CMD, st);
        }
    }
    int many = threads > 0 ? threads : fpsim_threads_default();
    int thread_counts[2] = {1, many};
    int nthread_counts = many > 1 ? 2 : 1;

    size_t n = rows * cols, bytes = n * sizeof(float);
    float *x = malloc(bytes);
    char *copy = malloc(bytes);
    if (!x || !copy) {
        free(x);
        free(copy);
        free(schemes);
        fpsim_cli_error(CMD, "out of memory for a %zux%zu tensor", rows, cols);
        return FPSIM_EXIT_FAILURE;
    }
    fill_input(x, n);
    char cpu[256];
    cpu_name(cpu, sizeof cpu);

    double memcpy_rate[2];
    for (int t = 0; t < nthread_counts; t++)
        memcpy_rate[t] = (double)n / time_memcpy(copy, (const char *)x, bytes, thread_counts[t], reps) / 1e9;

    if (json) {
        printf("{\"benchmark\": \"quantize\", \"cpu\": ");
        fpsim_cli_json_string(stdout, cpu);
        printf(", \"rows\": %zu, \"cols\": %zu, \"reps\": %d, \"results\": [", rows, cols, reps);
    } else {
        printf("fpsim bench quantize: %zux%zu float32, best of %d, %s\n", rows, cols, reps, cpu);
        printf("%-28s %-5s %7s %9s %9s %13s %7s %7s %s\n", "case", "axis", "threads", "Gelem/s", "cpu Gel/s",
               "memcpy Gel/s", "ratio", "target", "met (one core, CPU time)");
    }
    fpsim_qtensor q;
    memset(&q, 0, sizeof q);
    int rc = FPSIM_EXIT_OK, first = 1;
    fpsim_cli_progress bar;
    fpsim_cli_progress_begin(&bar, "bench quantize", (uint64_t)(ncases * (size_t)(nthread_counts + 1)));
    if (!json) bar.enabled = 0; /* the table is the progress */
    for (size_t c = 0; c < ncases && rc == FPSIM_EXIT_OK; c++) {
        char canonical[FPSIM_SCHEME_TEXT_MAX];
        fpsim_scheme_format(canonical, sizeof canonical, &schemes[c]);
        /* row nthread_counts: the first thread count again with dequant + statistics (what an
         * error study asks for), beside codes + scales (what a training step's cast produces) */
        for (int t = 0; t <= nthread_counts; t++) {
            const int full = t == nthread_counts;
            const int tc = full ? thread_counts[0] : thread_counts[t];
            const unsigned want = full ? FPSIM_QWANT_ALL : FPSIM_QWANT_CUBLAS;
            const char *outputs = full ? "codes+scales+dequant+stats" : "codes+scales";
            char label[FPSIM_SCHEME_TEXT_MAX + 40];
            snprintf(label, sizeof label, "%s [%s]", cases[c].scheme, outputs);
            double best, best_cpu;
            fpsim_status st = time_quantize(&best, &best_cpu, &q, &schemes[c], x, rows, cols, cases[c].axis, tc,
                                            reps, want);
            if (st) {
                if (json) printf("\n]}\n");
                rc = fpsim_cli_fail(CMD, st);
                break;
            }
            double rate = (double)n / best / 1e9, cpu_rate = (double)n / best_cpu / 1e9;
            const char *axis = cases[c].axis == FPSIM_AXIS_COLS ? "cols" : "rows";
            /* the target applies to the one-thread codes+scales row */
            const double target = !full && tc == 1 ? scheme_target(&schemes[c]) : 0.0;
            const int met = cpu_rate >= target;
            if (json) {
                printf("%s\n  {\"case\": ", first ? "" : ",");
                fpsim_cli_json_string(stdout, label);
                printf(", \"scheme\": ");
                fpsim_cli_json_string(stdout, canonical);
                printf(", \"outputs\": \"%s\", \"axis\": \"%s\", \"threads\": %d, \"gelem_per_s\": %.4f, "
                       "\"cpu_gelem_per_s\": %.4f, \"memcpy_gelem_per_s\": %.4f", outputs, axis, tc, rate,
                       cpu_rate, memcpy_rate[full ? 0 : t]);
                if (target > 0.0)
                    printf(", \"target_gelem_per_s\": %.2f, \"target_met\": %s", target, met ? "true" : "false");
                printf("}");
            } else {
                char tgt[16] = "-", ok[8] = "";
                if (target > 0.0) {
                    snprintf(tgt, sizeof tgt, "%.1f", target);
                    snprintf(ok, sizeof ok, "%s", met ? "yes" : "NO");
                }
                printf("%-28s %-5s %7d %9.3f %9.3f %13.3f %7.3f %7s %s%s\n", cases[c].scheme, axis, tc, rate,
                       cpu_rate, memcpy_rate[full ? 0 : t], rate / memcpy_rate[full ? 0 : t], tgt, ok,
                       full ? "(+dequant+stats)" : "");
                fflush(stdout);
            }
            first = 0;
            fpsim_cli_progress_update(&bar, c * (size_t)(nthread_counts + 1) + (size_t)t + 1);
        }
    }
    fpsim_cli_progress_end(&bar);
    if (json && rc == FPSIM_EXIT_OK) printf("\n]}\n");
    fpsim_qtensor_free(&q);
    free(schemes);
    free(x);
    free(copy);
    return rc;
}

// test_oracle_cuda: fpsim's conversions against NVIDIA's own host routines from the CUDA 13
// headers (cuda_fp8.hpp, cuda_fp6.hpp, cuda_fp4.hpp, cuda_bf16.hpp, cuda_fp16.hpp), compiled as
// host C++ by the system compiler: no GPU and no nvcc are needed. These routines are the software
// path that the CUDA headers use on every GPU without the matching PTX instruction, and for FP8
// they were measured to equal the H200's cvt.rn.satfinite on all 2^32 inputs apart from NaN
// encodings (gpu-numerics.md §0.2).
//
// Usage: test_oracle_cuda [--stride S]
//   Without --stride every case sweeps all 2^32 float32 inputs (about 6 CPU-minutes in all);
//   with it, every S-th bit pattern plus every input within 8 ulps of a representable value or a
//   midpoint of the target format (the places where rounding decides). Sources bf16 and f16 are
//   always swept completely (2^16), and decode is checked for every code.
// Skips (exit 77) when the headers were not found at configure time.
#include "test_util.h"

#if !defined(FPSIM_TEST_CUDA_HEADERS)
int main()
{
    printf("skipped: CUDA 13 headers (cuda_fp8.hpp, ...) not found; configure with "
                "-DFPSIM_CUDA_INCLUDE=/path/to/cuda/include\n");
    return TEST_SKIP;
}
#else

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp4.h>
#include <cuda_fp6.h>
#include <cuda_fp8.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <pthread.h>
#include <vector>

extern "C" {
#include "fpsim_formats.h"
#include "reference.h"
}

namespace {

enum source_kind { SRC_F32, SRC_F64, SRC_BF16, SRC_F16 };

// One comparison: an NVIDIA routine and the fpsim (format, policy, mode) that claims to match it.
struct oracle_case {
    const char *what;  // the NVIDIA routine and its options
    const char *format, *policy, *mode;
    bool full;         // sweep all 2^32 float32 inputs
    std::function<uint32_t(float)> nv_f32;
};

uint16_t bf16_bits(__nv_bfloat16 b) { return static_cast<__nv_bfloat16_raw>(b).x; }
uint16_t f16_bits(__half h) { return static_cast<__half_raw>(h).x; }

std::vector<oracle_case> f32_cases()
{
    using std::vector;
    vector<oracle_case> c;
    // FP8: __NV_SATFINITE is PTX cvt.rn.satfinite's behaviour ("nv"), __NV_NOSAT "nv-nosat".
    c.push_back({"__nv_cvt_float_to_fp8(SATFINITE, E4M3)", "e4m3", "nv", "rne", true,
                 [](float x) { return (uint32_t)__nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3); }});
    c.push_back({"__nv_cvt_float_to_fp8(NOSAT, E4M3)", "e4m3", "nv-nosat", "rne", true,
                 [](float x) { return (uint32_t)__nv_cvt_float_to_fp8(x, __NV_NOSAT, __NV_E4M3); }});
    c.push_back({"__nv_cvt_float_to_fp8(SATFINITE, E5M2)", "e5m2", "nv", "rne", true,
                 [](float x) { return (uint32_t)__nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E5M2); }});
    c.push_back({"__nv_cvt_float_to_fp8(NOSAT, E5M2)", "e5m2", "nv-nosat", "rne", true,
                 [](float x) { return (uint32_t)__nv_cvt_float_to_fp8(x, __NV_NOSAT, __NV_E5M2); }});
    // FP6 and FP4: always satfinite, RN or RZ only, NaN -> +max.
    c.push_back({"__nv_cvt_float_to_fp6(E2M3, RN)", "e2m3", "nv", "rne", true,
                 [](float x) { return (uint32_t)__nv_cvt_float_to_fp6(x, __NV_E2M3, cudaRoundNearest); }});
    c.push_back({"__nv_cvt_float_to_fp6(E2M3, RZ)", "e2m3", "nv", "rz", true,
                 [](float x) { return (uint32_t)__nv_cvt_float_to_fp6(x, __NV_E2M3, cudaRoundZero); }});
    c.push_back({"__nv_cvt_float_to_fp6(E3M2, RN)", "e3m2", "nv", "rne", true,
                 [](float x) { return (uint32_t)__nv_cvt_float_to_fp6(x, __NV_E3M2, cudaRoundNearest); }});
    c.push_back({"__nv_cvt_float_to_fp6(E3M2, RZ)", "e3m2", "nv", "rz", true,
                 [](float x) { return (uint32_t)__nv_cvt_float_to_fp6(x, __NV_E3M2, cudaRoundZero); }});
    c.push_back({"__nv_cvt_float_to_fp4(E2M1, RN)", "e2m1", "nv", "rne", true,
                 [](float x) { return (uint32_t)__nv_cvt_float_to_fp4(x, __NV_E2M1, cudaRoundNearest); }});
    c.push_back({"__nv_cvt_float_to_fp4(E2M1, RZ)", "e2m1", "nv", "rz", true,
                 [](float x) { return (uint32_t)__nv_cvt_float_to_fp4(x, __NV_E2M1, cudaRoundZero); }});
    // UE8M0: RZ (floor) and RP (ceil), satfinite or not: the ptx-* policies.
    c.push_back({"__nv_cvt_float_to_e8m0(NOSAT, RZ)", "e8m0", "ptx-rz", "rz", true,
                 [](float x) { return (uint32_t)__nv_cvt_float_to_e8m0(x, __NV_NOSAT, cudaRoundZero); }});
    c.push_back({"__nv_cvt_float_to_e8m0(SATFINITE, RZ)", "e8m0", "ptx-rz-sat", "rz", true,
                 [](float x) { return (uint32_t)__nv_cvt_float_to_e8m0(x, __NV_SATFINITE, cudaRoundZero); }});
    c.push_back({"__nv_cvt_float_to_e8m0(NOSAT, RP)", "e8m0", "ptx-rp", "ru", true,
                 [](float x) { return (uint32_t)__nv_cvt_float_to_e8m0(x, __NV_NOSAT, cudaRoundPosInf); }});
    c.push_back({"__nv_cvt_float_to_e8m0(SATFINITE, RP)", "e8m0", "ptx-rp-sat", "ru", true,
                 [](float x) { return (uint32_t)__nv_cvt_float_to_e8m0(x, __NV_SATFINITE, cudaRoundPosInf); }});
    // BF16 / F16 in all four IEEE modes.
    c.push_back({"__float2bfloat16_rn", "bf16", "nv", "rne", true,
                 [](float x) { return (uint32_t)bf16_bits(__float2bfloat16_rn(x)); }});
    c.push_back({"__float2bfloat16_rz", "bf16", "nv", "rz", true,
                 [](float x) { return (uint32_t)bf16_bits(__float2bfloat16_rz(x)); }});
    c.push_back({"__float2bfloat16_ru", "bf16", "nv", "ru", true,
                 [](float x) { return (uint32_t)bf16_bits(__float2bfloat16_ru(x)); }});
    c.push_back({"__float2bfloat16_rd", "bf16", "nv", "rd", true,
                 [](float x) { return (uint32_t)bf16_bits(__float2bfloat16_rd(x)); }});
    c.push_back({"__float2half_rn", "f16", "nv", "rne", true,
                 [](float x) { return (uint32_t)f16_bits(__float2half_rn(x)); }});
    c.push_back({"__float2half_rz", "f16", "nv", "rz", true,
                 [](float x) { return (uint32_t)f16_bits(__float2half_rz(x)); }});
    c.push_back({"__float2half_ru", "f16", "nv", "ru", true,
                 [](float x) { return (uint32_t)f16_bits(__float2half_ru(x)); }});
    c.push_back({"__float2half_rd", "f16", "nv", "rd", true,
                 [](float x) { return (uint32_t)f16_bits(__float2half_rd(x)); }});
    return c;
}

bool make_spec(fpsim_spec *s, const char *format, const char *policy, const char *mode, int sr_bits)
{
    const fpsim_format *f = fpsim_format_find(format);
    fpsim_round rnd;
    if (!f || fpsim_round_find(mode, &rnd) != FPSIM_OK)
        return false;
    return fpsim_spec_make(s, (fpsim_format_id)f->id, policy, rnd, sr_bits) == FPSIM_OK;
}

// fpsim's array conversion of float32 input into 16-bit code slots.
void fpsim_codes_f32(const fpsim_spec *s, int bits, const float *x, size_t n, uint16_t *out,
                     std::vector<uint8_t> &tmp)
{
    if (bits > 8) {
        fpsim_convert_f32(out, x, n, s, 0, 0, 0, 1);
        return;
    }
    tmp.resize(n);
    fpsim_convert_f32(tmp.data(), x, n, s, 0, 0, 0, 1);
    for (size_t i = 0; i < n; i++)
        out[i] = tmp[i];
}

// ---- float32 sweeps ----

struct f32_sweep {
    const oracle_case *c;
    fpsim_spec spec;
    int bits;
    uint64_t stride;
    const std::vector<uint32_t> *extra; // near-threshold inputs (sampled sweeps)
    std::atomic<uint64_t> next{0};
    test_counter tc;
};

const int CHUNK_BITS = 20;

void f32_check(f32_sweep *sw, const float *x, size_t n, uint16_t *a, uint16_t *b,
               std::vector<uint8_t> &tmp)
{
    for (size_t i = 0; i < n; i++)
        a[i] = (uint16_t)sw->c->nv_f32(x[i]);
    fpsim_codes_f32(&sw->spec, sw->bits, x, n, b, tmp);
    for (size_t i = 0; i < n; i++)
        if (a[i] != b[i])
            test_fail(&sw->tc, "x=0x%08x (%a): fpsim 0x%02x, NVIDIA 0x%02x", test_f32_bits(x[i]),
                      (double)x[i], b[i], a[i]);
    test_count(&sw->tc, n);
}

void *f32_worker(void *arg)
{
    f32_sweep *sw = static_cast<f32_sweep *>(arg);
    std::vector<float> x(1u << CHUNK_BITS);
    std::vector<uint16_t> a(x.size()), b(x.size());
    std::vector<uint8_t> tmp;
    const uint64_t nchunks = 1ull << (32 - CHUNK_BITS);
    for (;;) {
        uint64_t chunk = sw->next++;
        if (chunk > nchunks)
            break;
        size_t n = 0;
        if (chunk == nchunks) { // the near-threshold extras, once
            for (uint32_t bits : *sw->extra)
                x[n++] = test_f32_from_bits(bits);
        } else {
            uint64_t begin = chunk << CHUNK_BITS, end = begin + (1ull << CHUNK_BITS);
            for (uint64_t v = (begin + sw->stride - 1) / sw->stride * sw->stride; v < end; v += sw->stride)
                x[n++] = test_f32_from_bits((uint32_t)v);
        }
        if (n)
            f32_check(sw, x.data(), n, a.data(), b.data(), tmp);
    }
    return nullptr;
}

// Inputs within 8 ulps of every representable value and midpoint of the format, both signs.
std::vector<uint32_t> near_thresholds(const char *format)
{
    std::vector<uint32_t> out;
    static ref_grid grid;
    ref_grid_build(&grid, ref_format_find(format));
    for (int i = 0; i <= grid.n; i++) {
        double pts[2] = {grid.v[i], i < grid.n ? 0.5 * (grid.v[i] + grid.v[i + 1]) : grid.v[i]};
        for (double p : pts) {
            if (!(p < 0x1p128))
                continue;
            uint32_t centre = test_f32_bits((float)p);
            for (int d = -8; d <= 8; d++) {
                int64_t v = (int64_t)centre + d;
                if (v < 0 || v > 0x7F7FFFFF)
                    continue;
                out.push_back((uint32_t)v);
                out.push_back((uint32_t)v | 0x80000000u);
            }
        }
    }
    if (out.size() > (1u << CHUNK_BITS))
        out.resize(1u << CHUNK_BITS);
    return out;
}

int run_f32(const oracle_case &c, uint64_t stride_sampled, bool sampled_all)
{
    f32_sweep sw;
    sw.c = &c;
    test_counter_reset(&sw.tc, c.what);
    if (!make_spec(&sw.spec, c.format, c.policy, c.mode, 0)) {
        std::fprintf(stderr, "FAIL [%s] fpsim has no %s/%s/%s: %s\n", c.what, c.format, c.policy,
                     c.mode, fpsim_last_error());
        return 1;
    }
    sw.bits = ref_format_find(c.format)->bits;
    bool full = c.full && !sampled_all;
    sw.stride = full ? 1 : stride_sampled;
    std::vector<uint32_t> extra = full ? std::vector<uint32_t>() : near_thresholds(c.format);
    sw.extra = &extra;
    double t0 = test_seconds(), c0 = test_cpu_seconds();
    int nthreads = test_threads();
    std::vector<pthread_t> th(nthreads);
    for (auto &t : th)
        pthread_create(&t, nullptr, f32_worker, &sw);
    for (auto &t : th)
        pthread_join(t, nullptr);
    int failed = test_summary(&sw.tc);
    std::printf("     %s/%s/%s %s in %.1f s wall, %.1f s cpu\n", c.format, c.policy, c.mode,
                full ? "all 2^32 inputs" : "sampled + near thresholds", test_seconds() - t0,
                test_cpu_seconds() - c0);
    return failed;
}

// ---- bf16 / f16 sources (all 2^16) ----

int run_16bit_sources()
{
    struct case16 {
        const char *what, *format, *policy, *mode;
        bool from_bf16;
        std::function<uint32_t(uint16_t)> nv;
    };
    auto bf = [](uint16_t h) { __nv_bfloat16_raw r; r.x = h; return r; };
    auto hf = [](uint16_t h) { __half_raw r; r.x = h; return r; };
    std::vector<case16> cs = {
        {"__nv_cvt_bfloat16raw_to_fp8(SATFINITE, E4M3)", "e4m3", "nv", "rne", true,
         [=](uint16_t h) { return (uint32_t)__nv_cvt_bfloat16raw_to_fp8(bf(h), __NV_SATFINITE, __NV_E4M3); }},
        {"__nv_cvt_bfloat16raw_to_fp8(NOSAT, E4M3)", "e4m3", "nv-nosat", "rne", true,
         [=](uint16_t h) { return (uint32_t)__nv_cvt_bfloat16raw_to_fp8(bf(h), __NV_NOSAT, __NV_E4M3); }},
        {"__nv_cvt_bfloat16raw_to_fp8(SATFINITE, E5M2)", "e5m2", "nv", "rne", true,
         [=](uint16_t h) { return (uint32_t)__nv_cvt_bfloat16raw_to_fp8(bf(h), __NV_SATFINITE, __NV_E5M2); }},
        {"__nv_cvt_bfloat16raw_to_fp8(NOSAT, E5M2)", "e5m2", "nv-nosat", "rne", true,
         [=](uint16_t h) { return (uint32_t)__nv_cvt_bfloat16raw_to_fp8(bf(h), __NV_NOSAT, __NV_E5M2); }},
        {"__nv_cvt_halfraw_to_fp8(SATFINITE, E4M3)", "e4m3", "nv", "rne", false,
         [=](uint16_t h) { return (uint32_t)__nv_cvt_halfraw_to_fp8(hf(h), __NV_SATFINITE, __NV_E4M3); }},
        {"__nv_cvt_halfraw_to_fp8(NOSAT, E4M3)", "e4m3", "nv-nosat", "rne", false,
         [=](uint16_t h) { return (uint32_t)__nv_cvt_halfraw_to_fp8(hf(h), __NV_NOSAT, __NV_E4M3); }},
        {"__nv_cvt_halfraw_to_fp8(SATFINITE, E5M2)", "e5m2", "nv", "rne", false,
         [=](uint16_t h) { return (uint32_t)__nv_cvt_halfraw_to_fp8(hf(h), __NV_SATFINITE, __NV_E5M2); }},
        {"__nv_cvt_bfloat16raw_to_fp6(E2M3, RN)", "e2m3", "nv", "rne", true,
         [=](uint16_t h) { return (uint32_t)__nv_cvt_bfloat16raw_to_fp6(bf(h), __NV_E2M3, cudaRoundNearest); }},
        {"__nv_cvt_halfraw_to_fp6(E3M2, RZ)", "e3m2", "nv", "rz", false,
         [=](uint16_t h) { return (uint32_t)__nv_cvt_halfraw_to_fp6(hf(h), __NV_E3M2, cudaRoundZero); }},
        {"__nv_cvt_bfloat16raw_to_fp4(E2M1, RN)", "e2m1", "nv", "rne", true,
         [=](uint16_t h) { return (uint32_t)__nv_cvt_bfloat16raw_to_fp4(bf(h), __NV_E2M1, cudaRoundNearest); }},
        {"__nv_cvt_halfraw_to_fp4(E2M1, RN)", "e2m1", "nv", "rne", false,
         [=](uint16_t h) { return (uint32_t)__nv_cvt_halfraw_to_fp4(hf(h), __NV_E2M1, cudaRoundNearest); }},
        {"__nv_cvt_bfloat16raw_to_e8m0(SATFINITE, RP)", "e8m0", "ptx-rp-sat", "ru", true,
         [=](uint16_t h) { return (uint32_t)__nv_cvt_bfloat16raw_to_e8m0(bf(h), __NV_SATFINITE, cudaRoundPosInf); }},
        {"__nv_cvt_bfloat16raw_to_e8m0(NOSAT, RZ)", "e8m0", "ptx-rz", "rz", true,
         [=](uint16_t h) { return (uint32_t)__nv_cvt_bfloat16raw_to_e8m0(bf(h), __NV_NOSAT, cudaRoundZero); }},
    };
    int failed = 0;
    std::vector<uint16_t> in(65536);
    for (uint32_t i = 0; i < 65536; i++)
        in[i] = (uint16_t)i;
    for (const case16 &c : cs) {
        test_counter tc = TEST_COUNTER_INIT(c.what);
        fpsim_spec s;
        if (!make_spec(&s, c.format, c.policy, c.mode, 0)) {
            std::fprintf(stderr, "FAIL [%s] fpsim has no %s/%s/%s\n", c.what, c.format, c.policy, c.mode);
            failed++;
            continue;
        }
        std::vector<uint8_t> got(65536);
        fpsim_status st = c.from_bf16 ? fpsim_convert_bf16(got.data(), in.data(), 65536, &s, 0, 0, 0, 1)
                                      : fpsim_convert_f16(got.data(), in.data(), 65536, &s, 0, 0, 0, 1);
        if (st != FPSIM_OK) {
            std::fprintf(stderr, "FAIL [%s] fpsim conversion failed: %s\n", c.what, fpsim_last_error());
            failed++;
            continue;
        }
        for (uint32_t i = 0; i < 65536; i++)
            TEST_CHECK_EQ_HEX(&tc, got[i], c.nv((uint16_t)i), "%s 0x%04x", c.from_bf16 ? "bf16" : "f16", i);
        failed += test_summary(&tc);
    }
    return failed;
}

// ---- float64 source: __nv_cvt_double_to_fp8 rounds once from the double (formats-spec §1.3) ----

int run_f64()
{
    struct case64 {
        const char *what, *format, *policy;
        std::function<uint32_t(double)> nv;
    };
    std::vector<case64> cs = {
        {"__nv_cvt_double_to_fp8(SATFINITE, E4M3)", "e4m3", "nv",
         [](double x) { return (uint32_t)__nv_cvt_double_to_fp8(x, __NV_SATFINITE, __NV_E4M3); }},
        {"__nv_cvt_double_to_fp8(NOSAT, E4M3)", "e4m3", "nv-nosat",
         [](double x) { return (uint32_t)__nv_cvt_double_to_fp8(x, __NV_NOSAT, __NV_E4M3); }},
        {"__nv_cvt_double_to_fp8(SATFINITE, E5M2)", "e5m2", "nv",
         [](double x) { return (uint32_t)__nv_cvt_double_to_fp8(x, __NV_SATFINITE, __NV_E5M2); }},
        {"__nv_cvt_double_to_fp8(NOSAT, E5M2)", "e5m2", "nv-nosat",
         [](double x) { return (uint32_t)__nv_cvt_double_to_fp8(x, __NV_NOSAT, __NV_E5M2); }},
        {"__nv_cvt_double_to_fp6(E2M3, RN)", "e2m3", "nv",
         [](double x) { return (uint32_t)__nv_cvt_double_to_fp6(x, __NV_E2M3, cudaRoundNearest); }},
        {"__nv_cvt_double_to_fp4(E2M1, RN)", "e2m1", "nv",
         [](double x) { return (uint32_t)__nv_cvt_double_to_fp4(x, __NV_E2M1, cudaRoundNearest); }},
    };
    int failed = 0;
    for (const case64 &c : cs) {
        // Inputs: every representable value and midpoint, +-1..4 double ulps, both signs, and
        // 2^20 random doubles spread over the format's range. NaN is left out: the double entry
        // point keeps the NaN sign (and a payload-dependent E5M2 code) while the float entry
        // point, which "nv" follows, writes canonical +NaN (gpu-numerics.md §1.3).
        static ref_grid grid;
        ref_grid_build(&grid, ref_format_find(c.format));
        std::vector<double> x;
        for (int i = 0; i <= grid.n; i++) {
            double pts[2] = {grid.v[i], i < grid.n ? 0.5 * (grid.v[i] + grid.v[i + 1]) : 2 * grid.v[i]};
            for (double p : pts)
                for (int d = -4; d <= 4; d++) {
                    double v = p;
                    for (int k = 0; k < (d < 0 ? -d : d); k++)
                        v = std::nextafter(v, d < 0 ? 0.0 : INFINITY);
                    x.push_back(v);
                    x.push_back(-v);
                }
        }
        uint64_t rng = 12345;
        double top = grid.v[grid.n] * 2;
        for (int i = 0; i < (1 << 20); i++) {
            uint64_t r = test_splitmix64(&rng);
            double u = (double)(r >> 11) * 0x1p-53;
            double v = std::ldexp(1.0 + u, (int)(r & 63) - 40) ;
            x.push_back((r >> 6) & 1 ? -v : v);
            x.push_back(u * top);
        }
        x.push_back(INFINITY);
        x.push_back(-INFINITY);
        test_counter tc = TEST_COUNTER_INIT(c.what);
        fpsim_spec s;
        if (!make_spec(&s, c.format, c.policy, "rne", 0)) {
            std::fprintf(stderr, "FAIL [%s] fpsim has no %s/%s\n", c.what, c.format, c.policy);
            failed++;
            continue;
        }
        std::vector<uint8_t> got(x.size());
        if (fpsim_convert_f64(got.data(), x.data(), x.size(), &s, 0, 0, 0, 1) != FPSIM_OK) {
            std::fprintf(stderr, "FAIL [%s] %s\n", c.what, fpsim_last_error());
            failed++;
            continue;
        }
        for (size_t i = 0; i < x.size(); i++)
            TEST_CHECK_EQ_HEX(&tc, got[i], c.nv(x[i]), "f64 x=%a (0x%016llx)", x[i],
                              (unsigned long long)test_f64_bits(x[i]));
        failed += test_summary(&tc);
    }
    return failed;
}

// ---- decode of every code against the headers' decoders ----

int run_decode()
{
    struct cased {
        const char *format;
        int ncodes;
        std::function<double(uint32_t)> nv; // NaN where NVIDIA decodes to NaN
    };
    auto h2d = [](__half_raw r) { return (double)__half2float(__half(r)); };
    std::vector<cased> cs = {
        {"e4m3", 256, [=](uint32_t c) { return h2d(__nv_cvt_fp8_to_halfraw((__nv_fp8_storage_t)c, __NV_E4M3)); }},
        {"e5m2", 256, [=](uint32_t c) { return h2d(__nv_cvt_fp8_to_halfraw((__nv_fp8_storage_t)c, __NV_E5M2)); }},
        {"e2m3", 64, [=](uint32_t c) { return h2d(__nv_cvt_fp6_to_halfraw((__nv_fp6_storage_t)c, __NV_E2M3)); }},
        {"e3m2", 64, [=](uint32_t c) { return h2d(__nv_cvt_fp6_to_halfraw((__nv_fp6_storage_t)c, __NV_E3M2)); }},
        {"e2m1", 16, [=](uint32_t c) { return h2d(__nv_cvt_fp4_to_halfraw((__nv_fp4_storage_t)c, __NV_E2M1)); }},
        {"e8m0", 256, [](uint32_t c) {
             return (double)__bfloat162float(__nv_bfloat16(__nv_cvt_e8m0_to_bf16raw((__nv_fp8_storage_t)c)));
         }},
    };
    int failed = 0;
    for (const cased &c : cs) {
        char label[64];
        std::snprintf(label, sizeof label, "decode %s vs cuda headers", c.format);
        test_counter tc = TEST_COUNTER_INIT(label);
        fpsim_spec s;
        make_spec(&s, c.format, nullptr, "rne", 0);
        for (int code = 0; code < c.ncodes; code++) {
            double want = c.nv((uint32_t)code);
            uint8_t c8 = (uint8_t)code;
            float y;
            fpsim_decode_array_f32(&y, &c8, 1, &s, 1);
            double got = (double)y;
            bool same = (std::isnan(want) && std::isnan(got)) ||
                        (got == want && std::signbit(got) == std::signbit(want));
            TEST_CHECK(&tc, same, "code 0x%02x: fpsim %a, NVIDIA %a", code, got, want);
        }
        failed += test_summary(&tc);
    }
    return failed;
}

} // namespace

int main(int argc, char **argv)
{
    uint64_t stride = 7;
    bool sampled_all = false;
    for (int i = 1; i < argc; i++) {
        if (std::strcmp(argv[i], "--stride") == 0 && i + 1 < argc) {
            stride = std::strtoull(argv[++i], nullptr, 0);
            sampled_all = true;
        }
    }
    if (stride == 0)
        stride = 1;
    int failed = 0;
    for (const oracle_case &c : f32_cases())
        failed += run_f32(c, stride, sampled_all);
    failed += run_16bit_sources();
    failed += run_f64();
    failed += run_decode();
    return failed ? 1 : 0;
}
#endif

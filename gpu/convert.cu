/* convert.cu: element conversions on the GPU (float32/float64/bf16/f16 -> any format, decode).
 *
 * Every element goes through fpsim_round_f32 / fpsim_round_f64 of formats/fpsim_core.h, the same
 * inline code the CPU emulators run, compiled here with -fmad=false (the core is integer-only, so
 * contraction could not change it anyway). Two exceptions:
 *  - the hardware path: for specs that convert exactly like PTX
 *    `cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32` (fpsim_gpu_spec_has_hw_cvt) the kernels issue that
 *    instruction on sm_89+; gpu-numerics.md §0.2 records that it matches NVIDIA's software routine
 *    on every non-NaN float32 and writes 0x7F for every NaN, which is the `nv` policy;
 *  - the fast-vector kernel (convert_fast.cuh) for the other nearest-even specs that have a short
 *    exact form on inputs free of NaN, Inf and overflow; other vectors still take the core.
 * FPSIM_GPU_SOFTWARE_ONLY turns both off. `fpsim verify --device gpu` checks the core and the
 * default path against the CPU over all 2^32 inputs (`--full`).
 *
 * Work split: each thread takes VEC = 16 consecutive elements (16-byte loads of the source,
 * one 16-byte store of byte codes), in a grid-stride loop. Stochastic rounding draws one Philox
 * block per 4 elements (word index & 3 of counter index >> 2), exactly fpsim_sr_word's definition. */
#include <cuda_runtime.h>

#include "convert_fast.cuh"
#include "elem_fixed.cuh"
#include "hw_cvt.cuh"
#include "fpsim_core.h"
#include "gpu_internal.cuh"

namespace {

constexpr int VEC = 16;
constexpr unsigned THREADS = 256;

enum src_kind { SRC_F32, SRC_F64, SRC_BF16, SRC_F16, SRC_SWEEP };

template <int K> struct src_type;
template <> struct src_type<SRC_F32> { typedef uint32_t T; };
template <> struct src_type<SRC_F64> { typedef uint64_t T; };
template <> struct src_type<SRC_BF16> { typedef uint16_t T; };
template <> struct src_type<SRC_F16> { typedef uint16_t T; };
template <> struct src_type<SRC_SWEEP> { typedef uint32_t T; };

/* The random words of elements index .. index+VEC-1 (only read under FPSIM_SR). */
__device__ __forceinline__ void sr_words(uint32_t r[VEC], uint64_t seed, uint32_t stream, uint64_t index)
{
    if ((index & 3) == 0) {
        uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
#pragma unroll
        for (int g = 0; g < VEC / 4; g++) {
            uint64_t c = (index >> 2) + (uint64_t)g;
            uint32_t ctr[4] = {(uint32_t)c, (uint32_t)(c >> 32), stream, 0u};
            fpsim_philox4x32_10(ctr, key, &r[4 * g]);
        }
    } else {
#pragma unroll
        for (int j = 0; j < VEC; j++) r[j] = fpsim_sr_word(seed, stream, index + (uint64_t)j);
    }
}

/* Float32 bits of source element v (exact widening for bf16/f16). */
template <int K> __device__ __forceinline__ uint32_t widen(typename src_type<K>::T v)
{
    if (K == SRC_BF16) return fpsim_bf16_to_f32_bits(v);
    if (K == SRC_F16) return fpsim_f16_to_f32_bits(v);
    return (uint32_t)v;
}

template <int K, typename Code>
__device__ __forceinline__ Code convert_one(typename src_type<K>::T v, const fpsim_spec &s, uint32_t rbits)
{
    if (K == SRC_F64) return (Code)fpsim_round_f64((uint64_t)v, &s, rbits);
    return (Code)fpsim_round_f32(widen<K>(v), &s, rbits);
}

/* Load VEC source elements starting at element i (16-byte vectors; the caller checked alignment). */
template <int K> __device__ __forceinline__ void load_vec(typename src_type<K>::T v[VEC], const void *x, size_t i,
                                                           uint64_t sweep_first)
{
    typedef typename src_type<K>::T T;
    if (K == SRC_SWEEP) {
#pragma unroll
        for (int j = 0; j < VEC; j++) v[j] = (T)(uint32_t)(sweep_first + i + (uint64_t)j);
        return;
    }
    constexpr int PER = 16 / sizeof(T);
    const uint4 *p = reinterpret_cast<const uint4 *>(static_cast<const T *>(x) + i);
    uint4 w[VEC / PER];
#pragma unroll
    for (int q = 0; q < VEC / PER; q++) w[q] = __ldcs(p + q); /* streamed once: evict first */
#pragma unroll
    for (int q = 0; q < VEC / PER; q++) {
        const T *t = reinterpret_cast<const T *>(&w[q]);
#pragma unroll
        for (int j = 0; j < PER; j++) v[q * PER + j] = t[j];
    }
}

template <typename Code> __device__ __forceinline__ void store_vec(void *codes, size_t i, const Code c[VEC])
{
    constexpr int PER = 16 / sizeof(Code);
    uint4 *p = reinterpret_cast<uint4 *>(static_cast<Code *>(codes) + i);
#pragma unroll
    for (int q = 0; q < VEC / PER; q++) {
        uint4 w;
        Code *t = reinterpret_cast<Code *>(&w);
#pragma unroll
        for (int j = 0; j < PER; j++) t[j] = c[q * PER + j];
        __stcs(p + q, w);
    }
}

/* Vector kernel: n_vec groups of VEC elements. HW = 1: hardware cvt (E4M3 or E5M2 per e5m2).
 * F >= 0 (kernel v4): the element format F and the rounding MODE fixed at compile time and
 * FULL = fpsim_spec_full_rules(s) (elem_fixed.cuh); F = -1: the generic core, spec as data. */
template <int K, typename Code, int HW, int F = -1, int MODE = -1, int FULL = 1>
__global__ void __launch_bounds__(THREADS) convert_vec_kernel(void *codes, const void *x, size_t n_vec, fpsim_spec s,
                                                            uint64_t seed, uint32_t stream, uint64_t index0,
                                                            uint64_t sweep_first, int e5m2)
{
    typedef typename src_type<K>::T T;
    for (size_t g = blockIdx.x * (size_t)blockDim.x + threadIdx.x; g < n_vec; g += (size_t)gridDim.x * blockDim.x) {
        size_t i = g * VEC;
        T v[VEC];
        load_vec<K>(v, x, i, sweep_first);
        Code c[VEC];
        if (HW) {
#pragma unroll
            for (int j = 0; j < VEC; j += 2) {
                uint32_t d = fpsim_hw_cvt_pair(__uint_as_float(widen<K>(v[j])), __uint_as_float(widen<K>(v[j + 1])), e5m2);
                c[j] = (Code)(d & 0xFF);
                c[j + 1] = (Code)(d >> 8);
            }
        } else {
            uint32_t r[VEC];
            if ((MODE < 0 ? (int)s.round : MODE) == FPSIM_SR)
                sr_words(r, seed, stream, index0 + i);
            else
#pragma unroll
                for (int j = 0; j < VEC; j++) r[j] = 0;
#pragma unroll
            for (int j = 0; j < VEC; j++)
                c[j] = F >= 0 && K != SRC_F64 ? (Code)fpsim_round_f32_fixed<F, (MODE < 0 ? 0 : MODE), FULL>(widen<K>(v[j]), s, r[j])
                                              : convert_one<K, Code>(v[j], s, r[j]);
        }
        store_vec<Code>(codes, i, c);
    }
}

/* The fast kernel's other vectors (NaN, Inf, beyond the fast range), element by element through
 * the core: W words of byte codes (W = 4) or of 16-bit codes (W = 8). Out of line, inputs by
 * value: inlined, the 16 cores took the bf16 kernels to 93 registers, 2 CTAs per SM, and 16 warps
 * with 32 bytes in flight each kept the loads short of the bandwidth (72% of copy, run 65). */
struct vec_bits {
    uint32_t x[VEC];
};
struct vec_codes {
    uint32_t c[8];
};
template <int W> __device__ __noinline__ vec_codes convert_exact_vec(vec_bits in, fpsim_spec s)
{
    vec_codes out;
#pragma unroll
    for (int q = 0; q < 8; q++)
        out.c[q] = 0;
#pragma unroll
    for (int j = 0; j < VEC; j++) {
        const uint32_t code = fpsim_round_f32(in.x[j], &s, 0u);
        if (W == 8)
            out.c[j / 2] |= (code & 0xFFFFu) << (16 * (j % 2));
        else
            out.c[j / 4] |= (code & 0xFFu) << (8 * (j % 4));
    }
    return out;
}

/* Fast-vector kernel (convert_fast.cuh): nearest-even into format F; vectors with NaN, Inf, a
 * magnitude above F's maximum (mode FAST_IF_NO_OVERFLOW) or one of 2^13 or more (FAST_SAT_SMALL)
 * take the core element by element (convert_exact_vec). From bf16 the register limit of 4 CTAs per
 * SM (64) is asked for, as the float32 kernels reach by themselves. */
template <int K, int F>
__global__ void __launch_bounds__(THREADS, K == SRC_BF16 ? 4 : 1)
    convert_fast_kernel(void *codes, const void *x, size_t n_vec, fpsim_spec s, int mode,
                        uint64_t sweep_first)
{
    typedef typename src_type<K>::T T;
    constexpr int W = convert_fast_words<F>::W;
    for (size_t g = blockIdx.x * (size_t)blockDim.x + threadIdx.x; g < n_vec;
         g += (size_t)gridDim.x * blockDim.x) {
        const size_t i = g * VEC;
        T v[VEC];
        load_vec<K>(v, x, i, sweep_first);
        uint32_t xb[VEC], raw = 0, raw_min = 0xFFFFFFFFu;
#pragma unroll
        for (int j = 0; j < VEC; j++) {
            xb[j] = widen<K>(v[j]);
            raw = max(raw, xb[j] & 0x7FFFFFFFu);
            if (F == FPSIM_E8M0) raw_min = min(raw_min, xb[j] & 0x7FFFFFFFu);
        }
        uint32_t c[W];
        /* E8M0 (FAST_E8M0): every magnitude normal, none with code 255 */
        const int e8m0_fast = F == FPSIM_E8M0 && raw_min >= 0x00800000u && raw <= convert_fast_max_bits<F>();
        if (F == FPSIM_E8M0 ? e8m0_fast
                            : raw < FPSIM_F32_INF_BITS &&
                                  (mode == FAST_SATURATING ||
                                   raw <= (mode == FAST_SAT_SMALL ? FPSIM_FAST_SMALL_MAX_BITS
                                                                  : convert_fast_max_bits<F>()))) {
            if constexpr (K == SRC_BF16 && (F == FPSIM_E2M1 || F == FPSIM_E2M3))
                convert_fast_codes_bf16<F>(v, c);
            else
                convert_fast_codes<F>(xb, s, c);
        } else {
            vec_bits in;
#pragma unroll
            for (int j = 0; j < VEC; j++)
                in.x[j] = xb[j];
            const vec_codes e = convert_exact_vec<W>(in, s);
#pragma unroll
            for (int q = 0; q < W; q++)
                c[q] = e.c[q];
        }
        uint4 *p = reinterpret_cast<uint4 *>(static_cast<char *>(codes) + i * (W == 8 ? 2 : 1));
#pragma unroll
        for (int q = 0; q < W / 4; q++)
            __stcs(p + q, make_uint4(c[4 * q], c[(4 * q + 1) % W], c[(4 * q + 2) % W], c[(4 * q + 3) % W]));
    }
}

typedef void (*convert_fast_fn)(void *, const void *, size_t, fpsim_spec, int, uint64_t);

/* The fast-vector kernel for spec s from source kind K (float32, bf16 and the float32 sweep), or
 * NULL when s has no fast mode. */
template <int K> convert_fast_fn convert_fast_pick(const fpsim_spec *s, int mode)
{
    if (mode == FAST_NEVER || (K != SRC_F32 && K != SRC_BF16 && K != SRC_SWEEP)) return NULL;
    switch (s->format) {
    case FPSIM_E4M3: return convert_fast_kernel<K, FPSIM_E4M3>;
    case FPSIM_E5M2: return convert_fast_kernel<K, FPSIM_E5M2>;
    case FPSIM_E2M1: return convert_fast_kernel<K, FPSIM_E2M1>;
    case FPSIM_E2M3: return convert_fast_kernel<K, FPSIM_E2M3>;
    case FPSIM_E3M2: return convert_fast_kernel<K, FPSIM_E3M2>;
    case FPSIM_E8M0: return convert_fast_kernel<K, FPSIM_E8M0>;
    case FPSIM_BF16: return convert_fast_kernel<K, FPSIM_BF16>;
    case FPSIM_F16: return convert_fast_kernel<K, FPSIM_F16>;
    default: return NULL;
    }
}

/* Scalar kernel for the tail and for unaligned pointers: elements [begin, n). */
template <int K, typename Code>
__global__ void __launch_bounds__(THREADS) convert_scalar_kernel(void *codes, const void *x, size_t begin, size_t n,
                                                               fpsim_spec s, uint64_t seed, uint32_t stream,
                                                               uint64_t index0, uint64_t sweep_first)
{
    typedef typename src_type<K>::T T;
    for (size_t i = begin + blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        T v = K == SRC_SWEEP ? (T)(uint32_t)(sweep_first + i) : static_cast<const T *>(x)[i];
        uint32_t r = s.round == FPSIM_SR ? fpsim_sr_word(seed, stream, index0 + i) : 0u;
        static_cast<Code *>(codes)[i] = convert_one<K, Code>(v, s, r);
    }
}

int code_is_wide(const fpsim_spec *s) { return s->format == FPSIM_BF16 || s->format == FPSIM_F16; }

typedef void (*convert_vec_fn)(void *, const void *, size_t, fpsim_spec, uint64_t, uint32_t, uint64_t, uint64_t, int);

template <int K, int F, int MODE> convert_vec_fn fixed_kernel_of(int full)
{
    return full ? convert_vec_kernel<K, uint8_t, 0, F, MODE, 1> : convert_vec_kernel<K, uint8_t, 0, F, MODE, 0>;
}

template <int K, int F> convert_vec_fn fixed_kernel_mode(const fpsim_spec *s)
{
    if (!fpsim_elem_fixed_matches<F>(s)) return NULL;
    const int full = fpsim_spec_full_rules(s) != 0;
    if (s->round == FPSIM_RNE) return fixed_kernel_of<K, F, FPSIM_RNE>(full);
    if (s->round == FPSIM_SR) return fixed_kernel_of<K, F, FPSIM_SR>(full);
    return NULL;
}

/* The software kernel with the format and mode fixed (v4) for float32 and bf16 sources (and the
 * exhaustive float32 sweep, so that `verify --full` checks these very kernels) into the 8-bit
 * element formats under RNE or SR; NULL: the generic kernel. */
template <int K> convert_vec_fn fixed_kernel(const fpsim_spec *s)
{
    if (K != SRC_F32 && K != SRC_BF16 && K != SRC_SWEEP) return NULL;
    switch (s->format) {
    case FPSIM_E4M3: return fixed_kernel_mode<K, FPSIM_E4M3>(s);
    case FPSIM_E5M2: return fixed_kernel_mode<K, FPSIM_E5M2>(s);
    case FPSIM_E2M1: return fixed_kernel_mode<K, FPSIM_E2M1>(s);
    case FPSIM_E2M3: return fixed_kernel_mode<K, FPSIM_E2M3>(s);
    case FPSIM_E3M2: return fixed_kernel_mode<K, FPSIM_E3M2>(s);
    default: return NULL;
    }
}

template <int K, typename Code>
fpsim_status launch_typed(void *codes, const void *x, size_t n, const fpsim_spec *s, uint64_t seed, uint32_t stream,
                          uint64_t index0, uint64_t sweep_first, unsigned flags, cudaStream_t cs)
{
    int hw = K != SRC_F64 && !(flags & FPSIM_GPU_SOFTWARE_ONLY) && fpsim_gpu_spec_has_hw_cvt(s) &&
             fpsim_gpu_hw_cvt_available();
    int e5m2 = s->format == FPSIM_E5M2;
    int aligned = fpsim_gpu_aligned16(codes) && (K == SRC_SWEEP || fpsim_gpu_aligned16(x));
    size_t n_vec = aligned ? n / VEC : 0;
    if (n_vec) {
        unsigned blocks = fpsim_gpu_blocks(n_vec, THREADS);
        convert_vec_fn fixed = sizeof(Code) == 1 && !hw ? fixed_kernel<K>(s) : NULL;
        /* the fast-vector kernel where the spec has a fast mode (not under FPSIM_GPU_SOFTWARE_ONLY,
         * which keeps every element on the core) and the hardware cvt does not apply */
        const int fmode = hw || (flags & FPSIM_GPU_SOFTWARE_ONLY)
                              ? FAST_NEVER
                              : convert_fast_mode(s, fpsim_gpu_hw_cvt_available());
        convert_fast_fn fast = convert_fast_pick<K>(s, fmode);
        if (fast)
            fast<<<blocks, THREADS, 0, cs>>>(codes, x, n_vec, *s, fmode, sweep_first);
        else if (hw)
            convert_vec_kernel<K, Code, 1><<<blocks, THREADS, 0, cs>>>(codes, x, n_vec, *s, seed, stream, index0,
                                                                       sweep_first, e5m2);
        else if (fixed)
            fixed<<<blocks, THREADS, 0, cs>>>(codes, x, n_vec, *s, seed, stream, index0, sweep_first, e5m2);
        else
            convert_vec_kernel<K, Code, 0><<<blocks, THREADS, 0, cs>>>(codes, x, n_vec, *s, seed, stream, index0,
                                                                       sweep_first, e5m2);
        FPSIM_CUDA_LAUNCHED("convert_vec_kernel");
    }
    size_t begin = n_vec * VEC;
    if (begin < n) {
        /* The tail always takes the software core: it is the definition the hardware matches. */
        convert_scalar_kernel<K, Code><<<fpsim_gpu_blocks(n - begin, THREADS), THREADS, 0, cs>>>(
            codes, x, begin, n, *s, seed, stream, index0, sweep_first);
        FPSIM_CUDA_LAUNCHED("convert_scalar_kernel");
    }
    return FPSIM_OK;
}

/* Codes of 16-bit sources (src FPSIM_BF16 or FPSIM_F16) that the policy decides its own way
 * (fpsim_src16_rule, the core's rule as on the CPU): every element under a same-format copy, else
 * only the NaNs, over the float32-rule codes already written on the same stream. */
template <typename Code>
__global__ void __launch_bounds__(THREADS) src16_rule_kernel(Code *codes, const uint16_t *x, size_t n, fpsim_spec s,
                                                           uint32_t src)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        uint32_t code;
        if (fpsim_src16_rule(&s, src, x[i], &code)) codes[i] = (Code)code;
    }
}

template <int K>
fpsim_status launch(void *codes, const void *x, size_t n, const fpsim_spec *s, uint64_t seed, uint32_t stream,
                    uint64_t index0, uint64_t sweep_first, unsigned flags, void *cuda_stream)
{
    fpsim_status st = fpsim_gpu_require();
    if (st != FPSIM_OK) return st;
    if (!s) return fpsim_fail(FPSIM_EINVAL, "fpsim_gpu_convert: spec is NULL");
    if (s->format >= FPSIM_FORMAT_COUNT || s->round >= FPSIM_ROUND_COUNT)
        return fpsim_fail(FPSIM_EINVAL, "fpsim_gpu_convert: spec has format %u, rounding %u out of range",
                          s->format, s->round);
    if (n == 0) return FPSIM_OK;
    cudaStream_t cs = static_cast<cudaStream_t>(cuda_stream);
    const uint32_t src16 = K == SRC_BF16 ? FPSIM_BF16 : K == SRC_F16 ? FPSIM_F16 : FPSIM_FORMAT_COUNT;
    const int rule = src16 != FPSIM_FORMAT_COUNT && fpsim_src16_has_rule(s, src16);
    /* a same-format copy decides every element: the float32 rule would be overwritten */
    const int copy_only = rule && (s->flags & FPSIM_SPEC_SAME_FORMAT_COPY) && s->format == src16;
    if (!copy_only) {
        st = code_is_wide(s) ? launch_typed<K, uint16_t>(codes, x, n, s, seed, stream, index0, sweep_first, flags, cs)
                             : launch_typed<K, uint8_t>(codes, x, n, s, seed, stream, index0, sweep_first, flags, cs);
        if (st != FPSIM_OK || !rule) return st;
    }
    const unsigned blocks = fpsim_gpu_blocks(n, THREADS);
    const uint16_t *h = static_cast<const uint16_t *>(x);
    if (code_is_wide(s))
        src16_rule_kernel<uint16_t><<<blocks, THREADS, 0, cs>>>(static_cast<uint16_t *>(codes), h, n, *s, src16);
    else
        src16_rule_kernel<uint8_t><<<blocks, THREADS, 0, cs>>>(static_cast<uint8_t *>(codes), h, n, *s, src16);
    FPSIM_CUDA_LAUNCHED("src16_rule_kernel");
    return FPSIM_OK;
}

/* Host-pointer wrapper: chunks of CHUNK elements through two device buffers. */
template <int K>
fpsim_status convert_host(void *codes, const void *x, size_t n, const fpsim_spec *s, uint64_t seed, uint32_t stream,
                          uint64_t index0)
{
    fpsim_status st = fpsim_gpu_require();
    if (st != FPSIM_OK) return st;
    if (!s) return fpsim_fail(FPSIM_EINVAL, "fpsim_gpu_convert: spec is NULL");
    if (n == 0) return FPSIM_OK;
    if (!codes || !x) return fpsim_fail(FPSIM_EINVAL, "fpsim_gpu_convert: NULL array");
    const size_t CHUNK = (size_t)1 << 26;
    size_t src_size = K == SRC_F64 ? 8 : K == SRC_F32 ? 4 : 2;
    size_t code_size = code_is_wide(s) ? 2 : 1;
    size_t m = n < CHUNK ? n : CHUNK;
    void *dx = NULL, *dc = NULL;
    st = fpsim_gpu_alloc(&dx, m * src_size);
    if (st == FPSIM_OK) st = fpsim_gpu_alloc(&dc, m * code_size);
    for (size_t off = 0; st == FPSIM_OK && off < n; off += m) {
        size_t k = n - off < m ? n - off : m;
        st = fpsim_gpu_copy(dx, static_cast<const char *>(x) + off * src_size, k * src_size, 0);
        if (st == FPSIM_OK) st = launch<K>(dc, dx, k, s, seed, stream, index0 + off, 0, 0, NULL);
        if (st == FPSIM_OK) st = fpsim_gpu_copy(static_cast<char *>(codes) + off * code_size, dc, k * code_size, 1);
    }
    fpsim_gpu_free(dx);
    fpsim_gpu_free(dc);
    return st;
}

/* Decode of every code to float32 (Out = uint32_t) or float64 (Out = uint64_t) bits. */
template <typename Out, typename Code>
__global__ void __launch_bounds__(THREADS) decode_kernel(Out *y, const Code *codes, size_t n, fpsim_spec s)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        if constexpr (sizeof(Out) == 4)
            y[i] = fpsim_decode_f32((uint32_t)codes[i], &s);
        else
            y[i] = fpsim_decode_f64((uint32_t)codes[i], &s);
    }
}

/* Device-buffer decode (queued on cuda_stream), shared by the float32 and float64 entries. */
template <typename Out>
fpsim_status decode_dev(Out *y, const void *codes, size_t n, const fpsim_spec *s, void *cuda_stream)
{
    fpsim_status st = fpsim_gpu_require();
    if (st != FPSIM_OK) return st;
    if (!s) return fpsim_fail(FPSIM_EINVAL, "fpsim_gpu_decode: spec is NULL");
    if (n == 0) return FPSIM_OK;
    cudaStream_t cs = static_cast<cudaStream_t>(cuda_stream);
    unsigned blocks = fpsim_gpu_blocks(n, THREADS);
    if (code_is_wide(s))
        decode_kernel<Out, uint16_t><<<blocks, THREADS, 0, cs>>>(y, static_cast<const uint16_t *>(codes), n, *s);
    else
        decode_kernel<Out, uint8_t><<<blocks, THREADS, 0, cs>>>(y, static_cast<const uint8_t *>(codes), n, *s);
    FPSIM_CUDA_LAUNCHED("decode_kernel");
    return FPSIM_OK;
}

/* Host-buffer decode: copy the codes in, decode_dev, copy the values out. */
template <typename Out>
fpsim_status decode_host(Out *y, const void *codes, size_t n, const fpsim_spec *s)
{
    fpsim_status st = fpsim_gpu_require();
    if (st != FPSIM_OK) return st;
    if (!s) return fpsim_fail(FPSIM_EINVAL, "fpsim_gpu_decode: spec is NULL");
    if (n == 0) return FPSIM_OK;
    size_t code_size = code_is_wide(s) ? 2 : 1;
    void *dc = NULL, *dy = NULL;
    st = fpsim_gpu_alloc(&dc, n * code_size);
    if (st == FPSIM_OK) st = fpsim_gpu_alloc(&dy, n * sizeof(Out));
    if (st == FPSIM_OK) st = fpsim_gpu_copy(dc, codes, n * code_size, 0);
    if (st == FPSIM_OK) st = decode_dev(static_cast<Out *>(dy), dc, n, s, NULL);
    if (st == FPSIM_OK) st = fpsim_gpu_copy(y, dy, n * sizeof(Out), 1);
    fpsim_gpu_free(dc);
    fpsim_gpu_free(dy);
    return st;
}

} // namespace

extern "C" int fpsim_gpu_spec_has_hw_cvt(const fpsim_spec *s)
{
    if (!s || s->round != FPSIM_RNE) return 0;
    uint16_t max_mag;
    if (s->format == FPSIM_E4M3)
        max_mag = 0x7E;
    else if (s->format == FPSIM_E5M2)
        max_mag = 0x7B;
    else
        return 0;
    if (s->flags & (FPSIM_SPEC_UNSIGNED_ZERO | FPSIM_SPEC_NEGZERO_IN_POS)) return 0;
    return s->ovf_pos == max_mag && s->ovf_neg == (0x80 | max_mag) && s->inf_pos == max_mag &&
           s->inf_neg == (0x80 | max_mag) && s->nan_pos == 0x7F && s->nan_neg == 0x7F;
}

extern "C" int fpsim_gpu_convert_has_fast_path(const fpsim_spec *s)
{
    if (!s) return 0;
    const int hw = fpsim_gpu_hw_cvt_available();
    return (hw && fpsim_gpu_spec_has_hw_cvt(s)) || convert_fast_mode(s, hw) != FAST_NEVER;
}

extern "C" fpsim_status fpsim_gpu_convert_f32_dev(void *codes, const float *x, size_t n, const fpsim_spec *s,
                                                  uint64_t seed, uint32_t stream, uint64_t index0, unsigned flags,
                                                  void *cuda_stream)
{
    return launch<SRC_F32>(codes, x, n, s, seed, stream, index0, 0, flags, cuda_stream);
}

extern "C" fpsim_status fpsim_gpu_convert_f64_dev(void *codes, const double *x, size_t n, const fpsim_spec *s,
                                                  uint64_t seed, uint32_t stream, uint64_t index0, unsigned flags,
                                                  void *cuda_stream)
{
    return launch<SRC_F64>(codes, x, n, s, seed, stream, index0, 0, flags, cuda_stream);
}

extern "C" fpsim_status fpsim_gpu_convert_bf16_dev(void *codes, const uint16_t *x, size_t n, const fpsim_spec *s,
                                                   uint64_t seed, uint32_t stream, uint64_t index0, unsigned flags,
                                                   void *cuda_stream)
{
    return launch<SRC_BF16>(codes, x, n, s, seed, stream, index0, 0, flags, cuda_stream);
}

extern "C" fpsim_status fpsim_gpu_convert_f16_dev(void *codes, const uint16_t *x, size_t n, const fpsim_spec *s,
                                                  uint64_t seed, uint32_t stream, uint64_t index0, unsigned flags,
                                                  void *cuda_stream)
{
    return launch<SRC_F16>(codes, x, n, s, seed, stream, index0, 0, flags, cuda_stream);
}

extern "C" fpsim_status fpsim_gpu_sweep_f32_dev(void *codes, uint64_t first, size_t n, const fpsim_spec *s,
                                                uint64_t seed, uint32_t stream, unsigned flags, void *cuda_stream)
{
    if (first + n > ((uint64_t)1 << 32))
        return fpsim_fail(FPSIM_EINVAL, "fpsim_gpu_sweep_f32_dev: range [%llu, +%zu) passes 2^32",
                          (unsigned long long)first, n);
    return launch<SRC_SWEEP>(codes, NULL, n, s, seed, stream, first, first, flags, cuda_stream);
}

extern "C" fpsim_status fpsim_gpu_convert_f32(void *codes, const float *x, size_t n, const fpsim_spec *s,
                                              uint64_t seed, uint32_t stream, uint64_t index0)
{
    return convert_host<SRC_F32>(codes, x, n, s, seed, stream, index0);
}

extern "C" fpsim_status fpsim_gpu_convert_f64(void *codes, const double *x, size_t n, const fpsim_spec *s,
                                              uint64_t seed, uint32_t stream, uint64_t index0)
{
    return convert_host<SRC_F64>(codes, x, n, s, seed, stream, index0);
}

extern "C" fpsim_status fpsim_gpu_convert_bf16(void *codes, const uint16_t *x, size_t n, const fpsim_spec *s,
                                               uint64_t seed, uint32_t stream, uint64_t index0)
{
    return convert_host<SRC_BF16>(codes, x, n, s, seed, stream, index0);
}

extern "C" fpsim_status fpsim_gpu_convert_f16(void *codes, const uint16_t *x, size_t n, const fpsim_spec *s,
                                              uint64_t seed, uint32_t stream, uint64_t index0)
{
    return convert_host<SRC_F16>(codes, x, n, s, seed, stream, index0);
}

extern "C" fpsim_status fpsim_gpu_decode_f32_dev(float *y, const void *codes, size_t n, const fpsim_spec *s,
                                                 void *cuda_stream)
{
    return decode_dev(reinterpret_cast<uint32_t *>(y), codes, n, s, cuda_stream);
}

extern "C" fpsim_status fpsim_gpu_decode_f32(float *y, const void *codes, size_t n, const fpsim_spec *s)
{
    return decode_host(reinterpret_cast<uint32_t *>(y), codes, n, s);
}

extern "C" fpsim_status fpsim_gpu_decode_f64_dev(double *y, const void *codes, size_t n, const fpsim_spec *s,
                                                 void *cuda_stream)
{
    return decode_dev(reinterpret_cast<uint64_t *>(y), codes, n, s, cuda_stream);
}

extern "C" fpsim_status fpsim_gpu_decode_f64(double *y, const void *codes, size_t n, const fpsim_spec *s)
{
    return decode_host(reinterpret_cast<uint64_t *>(y), codes, n, s);
}

/* reference.c: the slow, obviously-correct model of fpsim's element formats (see reference.h).
 * Independent of formats/: definitions below come from formats-spec.md §0 (format table) and the
 * IEEE 754 rounding rules; nothing here is shared with the core. */
#include "reference.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *const ref_mode_names[REF_MODE_COUNT] = {"rne", "rna", "rz", "ru", "rd"};

/* formats-spec.md §0 plus the ml_dtypes-only formats (bias and special values from ml_dtypes
 * float8.h: e4m3fnuz bias 8, e5m2fnuz bias 16, e4m3b11fnuz bias 11, float8_e4m3 bias 7 IEEE). */
const ref_format ref_formats[] = {
    {"e4m3", 8, 4, 3, 7, REF_KIND_FN},
    {"e5m2", 8, 5, 2, 15, REF_KIND_IEEE},
    {"e2m1", 4, 2, 1, 1, REF_KIND_NONE},
    {"e2m3", 6, 2, 3, 1, REF_KIND_NONE},
    {"e3m2", 6, 3, 2, 3, REF_KIND_NONE},
    {"e8m0", 8, 8, 0, 127, REF_KIND_E8M0},
    {"bf16", 16, 8, 7, 127, REF_KIND_IEEE},
    {"f16", 16, 5, 10, 15, REF_KIND_IEEE},
    {"e4m3fnuz", 8, 4, 3, 8, REF_KIND_FNUZ},
    {"e5m2fnuz", 8, 5, 2, 16, REF_KIND_FNUZ},
    {"e4m3b11fnuz", 8, 4, 3, 11, REF_KIND_FNUZ},
    {"e4m3ieee", 8, 4, 3, 7, REF_KIND_IEEE},
};
const int ref_format_count = (int)(sizeof ref_formats / sizeof ref_formats[0]);

const ref_format *ref_format_find(const char *name)
{
    for (int i = 0; i < ref_format_count; i++)
        if (strcmp(ref_formats[i].name, name) == 0)
            return &ref_formats[i];
    return NULL;
}

const ref_rules *ref_rules_find(const char *format, const char *policy)
{
    for (int i = 0; i < ref_rules_count; i++)
        if (strcmp(ref_rules_table[i].format, format) == 0 &&
            strcmp(ref_rules_table[i].policy, policy) == 0)
            return &ref_rules_table[i];
    return NULL;
}

double ref_decode(const ref_format *f, uint32_t code)
{
    if (f->kind == REF_KIND_E8M0)
        return code == 0xFF ? NAN : ldexp(1.0, (int)code - 127);
    uint32_t sign = (code >> (f->bits - 1)) & 1u;
    uint32_t mag = code & ((1u << (f->bits - 1)) - 1u);
    uint32_t e = mag >> f->mbits, m = mag & ((1u << f->mbits) - 1u);
    uint32_t e_all = (1u << f->ebits) - 1u, m_all = (1u << f->mbits) - 1u;
    if (f->kind == REF_KIND_FNUZ && sign && mag == 0)
        return NAN;
    if (f->kind == REF_KIND_IEEE && e == e_all)
        return m ? NAN : (sign ? -INFINITY : INFINITY);
    if (f->kind == REF_KIND_FN && e == e_all && m == m_all)
        return NAN;
    double v = e == 0 ? ldexp((double)m, 1 - f->bias - f->mbits)
                      : ldexp((double)((1u << f->mbits) + m), (int)e - f->bias - f->mbits);
    return sign ? -v : v;
}

typedef struct ref_pair {
    double v;
    uint32_t mag;
} ref_pair;

static int ref_pair_cmp(const void *a, const void *b)
{
    double x = ((const ref_pair *)a)->v, y = ((const ref_pair *)b)->v;
    return x < y ? -1 : (x > y ? 1 : 0);
}

void ref_grid_build(ref_grid *g, const ref_format *f)
{
    uint32_t ncodes = f->kind == REF_KIND_E8M0 ? 256u : (1u << (f->bits - 1));
    ref_pair *p = malloc(sizeof *p * ncodes);
    int n = 0;
    for (uint32_t c = 0; c < ncodes; c++) {
        double d = ref_decode(f, c);
        if (isfinite(d))
            p[n++] = (ref_pair){d, c};
    }
    qsort(p, (size_t)n, sizeof *p, ref_pair_cmp);
    g->f = f;
    g->n = n;
    for (int i = 0; i < n; i++) {
        g->v[i] = p[i].v;
        g->mag[i] = p[i].mag;
    }
    /* The grid continued past the largest value: one unit in its last place further. */
    double top = g->v[n - 1];
    g->v[n] = top + ldexp(1.0, ilogb(top) - f->mbits);
    g->mag[n] = g->mag[n - 1] + 1;
    free(p);
}

/* Rounding of a magnitude, after the sign has been taken into account. */
typedef enum ref_dir { REF_NEAR_EVEN, REF_NEAR_AWAY, REF_DOWN, REF_UP } ref_dir;

static ref_dir ref_direction(ref_mode mode, int negative)
{
    switch (mode) {
    case REF_RNE: return REF_NEAR_EVEN;
    case REF_RNA: return REF_NEAR_AWAY;
    case REF_RZ: return REF_DOWN;
    case REF_RU: return negative ? REF_DOWN : REF_UP;
    default: return negative ? REF_UP : REF_DOWN; /* REF_RD */
    }
}

/* Largest i with v[i] <= a, for v[0] <= a < v[n]. */
static int ref_grid_floor(const ref_grid *g, double a)
{
    int lo = 0, hi = g->n; /* invariant v[lo] <= a < v[hi] */
    while (hi - lo > 1) {
        int mid = (lo + hi) / 2;
        if (g->v[mid] <= a)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* Index in [0, n] of the rounded magnitude (n = past the largest finite value). */
static int ref_round_index(const ref_grid *g, ref_dir dir, double a)
{
    int n = g->n;
    if (a >= g->v[n])
        return n;
    if (a < g->v[0]) /* only E8M0 (no zero): below 2^-127 clips to code 0 (formats-spec.md §3) */
        return 0;
    int lo = ref_grid_floor(g, a), hi = lo + 1;
    if (a == g->v[lo])
        return lo;
    if (dir == REF_DOWN)
        return lo;
    if (dir == REF_UP)
        return hi;
    int e8m0 = g->f->kind == REF_KIND_E8M0;
    /* E8M0 below 2^-126 (FP32 subnormal inputs): code = RNE(x / 2^-126) in {0, 1}, so every value
     * above 2^-127 goes to 2^-126 (0x00500000 -> 01; formats-spec.md §3, torch and ml_dtypes). */
    if (e8m0 && lo == 0)
        return hi;
    double mid = 0.5 * (g->v[lo] + g->v[hi]); /* exact: both are short binary fractions */
    if (a < mid)
        return lo;
    if (a > mid)
        return hi;
    if (dir == REF_NEAR_AWAY)
        return hi;
    /* Ties to even. E8M0 has only the implicit bit as LSB, which is 1: ties go up (torch
     * Float8_e8m0fnu-inl.h, ml_dtypes ConvertImpl; 1.5 -> 0x80). */
    if (e8m0)
        return hi;
    return (g->mag[lo] & 1u) ? hi : lo;
}

static uint32_t ref_sign_bit(const ref_format *f)
{
    return f->kind == REF_KIND_E8M0 ? 0u : (1u << (f->bits - 1));
}

/* Code of grid index idx (which may be n = overflow) for the given sign and direction. */
static uint32_t ref_code_of(const ref_grid *g, const ref_rules *r, int idx, int negative, ref_dir dir)
{
    uint32_t sbit = negative ? ref_sign_bit(g->f) : 0u;
    if (idx == g->n) { /* overflow (IEEE 754 §7.4): toward zero gives max, else the policy's code */
        if (dir == REF_DOWN)
            return sbit | g->mag[g->n - 1];
        return (uint32_t)(negative ? r->ovf_neg : r->ovf_pos);
    }
    if (g->v[idx] == 0.0)
        return r->zero_unsigned ? 0u : sbit;
    return sbit | g->mag[idx];
}

/* Handles NaN, Inf, zero and E8M0 sign rules; returns 1 with *code set if x was special. On
 * return *negative is the sign that rounding must use. */
static int ref_special(const ref_grid *g, const ref_rules *r, double x, int *negative, uint32_t *code)
{
    int neg = signbit(x) != 0;
    if (isnan(x)) {
        uint64_t bits;
        memcpy(&bits, &x, sizeof bits);
        *code = ref_nan_f64(g->f, r, bits);
        return 1;
    }
    if (neg && x == 0.0 && r->negzero_as_pos)
        neg = 0;
    if (isinf(x)) {
        *code = (uint32_t)(neg ? r->inf_neg : r->inf_pos);
        return 1;
    }
    if (g->f->kind == REF_KIND_E8M0) {
        if (x == 0.0) {
            *code = (uint32_t)r->e8m0_zero;
            return 1;
        }
        if (neg && r->e8m0_neg >= 0) {
            *code = (uint32_t)r->e8m0_neg;
            return 1;
        }
        neg = 0; /* unsigned: convert |x| */
    } else if (x == 0.0) {
        *code = (neg && !r->zero_unsigned) ? ref_sign_bit(g->f) : 0u;
        return 1;
    }
    *negative = neg;
    return 0;
}

uint32_t ref_round(const ref_grid *g, const ref_rules *r, ref_mode mode, double x)
{
    int neg;
    uint32_t code;
    if (r->forced_mode >= 0)
        mode = (ref_mode)r->forced_mode;
    if (ref_special(g, r, x, &neg, &code))
        return code;
    ref_dir dir = ref_direction(mode, neg);
    return ref_code_of(g, r, ref_round_index(g, dir, fabs(x)), neg, dir);
}

uint32_t ref_round_sr(const ref_grid *g, const ref_rules *r, double x, uint32_t rbits, int sr_bits)
{
    int neg;
    uint32_t code;
    if (ref_special(g, r, x, &neg, &code))
        return code;
    double a = fabs(x);
    int n = g->n, idx;
    if (a >= g->v[n])
        idx = n;
    else if (a < g->v[0])
        idx = 0;
    else {
        int lo = ref_grid_floor(g, a);
        double spacing = g->v[lo + 1] - g->v[lo]; /* a power of two */
        double frac_num = a - g->v[lo];           /* exact (Sterbenz, or v[lo] = 0) */
        double r_top = (double)(rbits >> (32 - sr_bits));
        /* round up iff (a - lo) / spacing >= (2^sr - r) / 2^sr; both products are exact */
        idx = frac_num * ldexp(1.0, sr_bits) >= (ldexp(1.0, sr_bits) - r_top) * spacing ? lo + 1 : lo;
    }
    return ref_code_of(g, r, idx, neg, REF_NEAR_EVEN);
}

uint32_t ref_nan_f32(const ref_format *f, const ref_rules *r, uint32_t bits)
{
    uint32_t neg = bits >> 31;
    if (r->nan_rule == REF_NAN_NUMPY_F16) {
        /* numpy/_core/src/common/half_private.hpp (npy_floatbits_to_halfbits): keep the top 10
         * payload bits; if they are all zero, set the lowest so the result stays a NaN. */
        uint32_t payload = (bits & 0x7FFFFFu) >> 13;
        return (neg << 15) | 0x7C00u | (payload ? payload : 1u);
    }
    if (r->nan_rule == REF_NAN_TORCHAO) {
        /* pytorch/ao torchao/prototype/custom_fp_utils.py _f32_to_fpx_unpacked: NaN fails both
         * `x >= max_normal` and `x < min_normal`, so it takes the normal branch: add
         * ((bias - 127) << 23) + (2^(22 - mbits) - 1) + (the kept LSB), shift right by 23 - mbits,
         * cast to uint8 (keeps the low 8 bits), then OR the sign bit. */
        int32_t ux = (int32_t)(bits & 0x7FFFFFFFu), bias = (1 << (f->ebits - 1)) - 1;
        int32_t shift = 23 - f->mbits;
        int32_t lsb = (ux >> shift) & 1;
        int32_t v = ux + (int32_t)((uint32_t)(bias - 127) << 23) + ((1 << (shift - 1)) - 1) + lsb;
        return ((uint32_t)(v >> shift) & 0xFFu) | (neg << (f->bits - 1));
    }
    return (uint32_t)(neg ? r->nan_neg : r->nan_pos);
}

uint32_t ref_nan_f64(const ref_format *f, const ref_rules *r, uint64_t bits)
{
    if (r->nan_rule == REF_NAN_NUMPY_F16) { /* npy_doublebits_to_halfbits: same rule, 52 bits */
        uint32_t payload = (uint32_t)((bits & 0xFFFFFFFFFFFFFull) >> 42);
        return ((uint32_t)(bits >> 63) << 15) | 0x7C00u | (payload ? payload : 1u);
    }
    if (r->nan_rule == REF_NAN_TORCHAO || r->f64_via_f32) {
        /* the double is first narrowed to float32 (a float32 tensor / NumPy astype): the
         * hardware keeps the sign and the top payload bits of a quiet NaN */
        double d;
        memcpy(&d, &bits, sizeof d);
        float x = (float)d;
        uint32_t b32;
        memcpy(&b32, &x, sizeof b32);
        return ref_nan_f32(f, r, b32);
    }
    return (uint32_t)((bits >> 63) ? r->nan_neg : r->nan_pos);
}

void ref_segments_build(ref_segments *s, const ref_grid *g, const ref_rules *r, ref_mode mode,
                        int negative)
{
    int n = g->n, k = 0;
    for (int i = 0; i <= n; i++) {
        s->bp[k++] = g->v[i];
        if (i < n)
            s->bp[k++] = 0.5 * (g->v[i] + g->v[i + 1]);
    }
    s->count = k;
    double sign = negative ? -1.0 : 1.0;
    for (int i = 0; i < k; i++) {
        s->at[i] = ref_round(g, r, mode, sign * s->bp[i]);
        double inner = i == 0 ? 0.5 * s->bp[0] : 0.5 * (s->bp[i - 1] + s->bp[i]);
        s->below[i] = (i == 0 && s->bp[0] == 0.0) ? s->at[0] : ref_round(g, r, mode, sign * inner);
    }
    s->below[k] = ref_round(g, r, mode, sign * 2.0 * s->bp[k - 1]);
}

int ref_segments_find(const ref_segments *s, double a)
{
    int lo = 0, hi = s->count; /* first index with bp >= a */
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (s->bp[mid] < a)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Philox4x32: one round is two 32x32->64 multiplications whose halves are mixed with the other
 * two words and the round key; the key is bumped by the Weyl constants between rounds. */
void ref_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4])
{
    uint32_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3];
    uint32_t k0 = key[0], k1 = key[1];
    for (int round = 0; round < 10; round++) {
        if (round > 0) {
            k0 += 0x9E3779B9u;
            k1 += 0xBB67AE85u;
        }
        uint64_t p0 = (uint64_t)0xD2511F53u * c0;
        uint64_t p1 = (uint64_t)0xCD9E8D57u * c2;
        uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0;
        uint32_t n1 = (uint32_t)p1;
        uint32_t n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
        uint32_t n3 = (uint32_t)p0;
        c0 = n0;
        c1 = n1;
        c2 = n2;
        c3 = n3;
    }
    out[0] = c0;
    out[1] = c1;
    out[2] = c2;
    out[3] = c3;
}

uint32_t ref_sr_word(uint64_t seed, uint32_t stream, uint64_t index)
{
    uint64_t block = index >> 2;
    uint32_t ctr[4] = {(uint32_t)block, (uint32_t)(block >> 32), stream, 0u};
    uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    uint32_t out[4];
    ref_philox4x32_10(ctr, key, out);
    return out[index & 3u];
}

/* qstats.c: exact, order-independent accumulation of quantization statistics.
 *
 * fpsim_xsum is a fixed-point superaccumulator: every finite double is an integer multiple of
 * 2^-1074, so it is split into 32-bit limbs and added into int64 bins of weight 2^(32k - BIAS).
 * Integer addition is associative, so any merge order gives the same bins; a carry pass brings
 * the bins to one canonical form (0 <= bin < 2^32 except the top bin, which keeps the sign), from
 * which the double value is read in a fixed order. */
#include "fpsim_qstats.h"

#include <math.h>
#include <string.h>

/* Carry pass: canonical limbs. */
static void xsum_normalize(fpsim_xsum *s)
{
    for (int k = 0; k < FPSIM_XSUM_BINS - 1; k++) {
        int64_t c = s->bin[k] >> 32; /* arithmetic shift: floor(bin / 2^32) */
        s->bin[k] -= c * ((int64_t)1 << 32);
        s->bin[k + 1] += c;
    }
    s->pending = 0;
}

void fpsim_xsum_init(fpsim_xsum *s)
{
    memset(s, 0, sizeof *s);
}

void fpsim_xsum_add(fpsim_xsum *s, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    int e = (int)((bits >> 52) & 0x7FF);
    if (e == 0x7FF)
        return; /* Inf / NaN are counted elsewhere, never summed */
    uint64_t m = bits & 0xFFFFFFFFFFFFFull;
    if (e != 0)
        m |= 1ull << 52;
    else
        e = 1; /* subnormal: same scale as the smallest normal exponent */
    if (m == 0)
        return;
    int p = e - 1075 + FPSIM_XSUM_BIAS; /* bit position of m's LSB, >= 14 */
    int k = p >> 5, sh = p & 31;
    uint64_t lo = (m & 0xFFFFFFFFull) << sh; /* < 2^63 */
    uint64_t hi = (m >> 32) << sh;           /* < 2^52 */
    int64_t l0 = (int64_t)(lo & 0xFFFFFFFFull), l1 = (int64_t)(lo >> 32);
    int64_t h0 = (int64_t)(hi & 0xFFFFFFFFull), h1 = (int64_t)(hi >> 32);
    if (bits >> 63) {
        s->bin[k] -= l0;
        s->bin[k + 1] -= l1 + h0;
        s->bin[k + 2] -= h1;
    } else {
        s->bin[k] += l0;
        s->bin[k + 1] += l1 + h0;
        s->bin[k + 2] += h1;
    }
    /* Each call moves a bin by < 2^33; 2^29 calls keep |bin| < 2^62. */
    if (++s->pending >= (1u << 29))
        xsum_normalize(s);
}

void fpsim_xsum_merge(fpsim_xsum *into, const fpsim_xsum *from)
{
    fpsim_xsum f = *from;
    xsum_normalize(&f);
    xsum_normalize(into);
    for (int k = 0; k < FPSIM_XSUM_BINS; k++)
        into->bin[k] += f.bin[k];
    xsum_normalize(into);
}

double fpsim_xsum_value(const fpsim_xsum *s)
{
    fpsim_xsum c = *s;
    xsum_normalize(&c);
    /* Top bins first: the leading terms dominate; fixed order, so the result depends only on the
     * exact sum. Every bin value is < 2^33 in magnitude, exact in a double. */
    long double acc = 0.0L;
    for (int k = FPSIM_XSUM_BINS - 1; k >= 0; k--)
        if (c.bin[k] != 0)
            acc += ldexpl((long double)c.bin[k], 32 * k - FPSIM_XSUM_BIAS);
    return (double)acc;
}

void fpsim_qstats_init(fpsim_qstats *st)
{
    memset(st, 0, sizeof *st);
    fpsim_xsum_init(&st->sum_ref2);
    fpsim_xsum_init(&st->sum_err2);
    fpsim_xsum_init(&st->sum_err);
}

void fpsim_qstats_merge(fpsim_qstats *into, const fpsim_qstats *from)
{
    into->count += from->count;
    into->finite += from->finite;
    into->nan += from->nan;
    into->inf += from->inf;
    into->nan_out += from->nan_out;
    into->flushed += from->flushed;
    into->saturated += from->saturated;
    into->zero_blocks += from->zero_blocks;
    into->blocks += from->blocks;
    if (from->amax > into->amax)
        into->amax = from->amax;
    if (from->max_abs_err > into->max_abs_err)
        into->max_abs_err = from->max_abs_err;
    fpsim_xsum_merge(&into->sum_ref2, &from->sum_ref2);
    fpsim_xsum_merge(&into->sum_err2, &from->sum_err2);
    fpsim_xsum_merge(&into->sum_err, &from->sum_err);
}

/* One run: counts and maxima, and the three sums formed in a fixed order that depends only on
 * the run (four interleaved partial sums, lane i mod 4, combined as (l0 + l1) + (l2 + l3)), so
 * the result is the same on any thread count; the run sums are then added exactly. A run with a
 * non-finite input or output takes the element-by-element path with the same lane order. */
void fpsim_qstats_add_block(fpsim_qstats *st, const float *x, const float *q, size_t n,
                            size_t stride)
{
    double sr2[4] = {0, 0, 0, 0}, se[4] = {0, 0, 0, 0}, se2[4] = {0, 0, 0, 0};
    double amax = st->amax, maxe = st->max_abs_err;
    uint32_t special = 0;
    uint64_t flushed = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t xb, qb;
        memcpy(&xb, &x[i * stride], 4);
        memcpy(&qb, &q[i * stride], 4);
        special |= (uint32_t)((xb & 0x7FFFFFFFu) >= 0x7F800000u) | (uint32_t)((qb & 0x7FFFFFFFu) >= 0x7F800000u);
    }
    st->count += n;
    if (!special) {
        for (size_t i = 0; i < n; i++) {
            const double xv = x[i * stride], qv = q[i * stride];
            /* q - x of two floats is exact in double unless their exponents differ by > 29 */
            const double err = qv - xv, ae = fabs(err), ax = fabs(xv);
            sr2[i & 3] += xv * xv;
            se[i & 3] += err;
            se2[i & 3] += err * err;
            maxe = ae > maxe ? ae : maxe;
            amax = ax > amax ? ax : amax;
            flushed += (uint64_t)((xv != 0.0) & (qv == 0.0));
        }
        st->finite += n;
    } else {
        for (size_t i = 0; i < n; i++) {
            const float xv = x[i * stride], qv = q[i * stride];
            if (isnan(xv)) {
                st->nan++;
                continue;
            }
            if (isinf(xv)) {
                st->inf++;
                continue;
            }
            st->finite++;
            const double ax = fabs((double)xv);
            amax = ax > amax ? ax : amax;
            if (!isfinite(qv)) {
                st->nan_out++;
                continue;
            }
            flushed += (uint64_t)(xv != 0.0f && qv == 0.0f);
            const double err = (double)qv - (double)xv;
            maxe = fabs(err) > maxe ? fabs(err) : maxe;
            sr2[i & 3] += (double)xv * (double)xv;
            se[i & 3] += err;
            se2[i & 3] += err * err;
        }
    }
    st->amax = amax;
    st->max_abs_err = maxe;
    st->flushed += flushed;
    fpsim_xsum_add(&st->sum_ref2, (sr2[0] + sr2[1]) + (sr2[2] + sr2[3]));
    fpsim_xsum_add(&st->sum_err, (se[0] + se[1]) + (se[2] + se[3]));
    fpsim_xsum_add(&st->sum_err2, (se2[0] + se2[1]) + (se2[2] + se2[3]));
}

double fpsim_qstats_rel_l2(const fpsim_qstats *st)
{
    double r = fpsim_xsum_value(&st->sum_ref2), e = fpsim_xsum_value(&st->sum_err2);
    if (r == 0.0)
        return e == 0.0 ? 0.0 : INFINITY;
    return sqrt(e / r);
}

double fpsim_qstats_sqnr_db(const fpsim_qstats *st)
{
    double r = fpsim_xsum_value(&st->sum_ref2), e = fpsim_xsum_value(&st->sum_err2);
    if (e == 0.0)
        return INFINITY;
    if (r == 0.0)
        return -INFINITY;
    return 10.0 * log10(r / e);
}

double fpsim_qstats_mean_err(const fpsim_qstats *st)
{
    if (st->finite == 0)
        return 0.0;
    return fpsim_xsum_value(&st->sum_err) / (double)st->finite;
}

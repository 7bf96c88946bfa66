/* rht_vectors.h: test vectors of the 16-point RHT shared by test_rht_mma and test_block_simd,
 * written out here rather than read from formats/ (the tests' oracles must not share its code). */
#ifndef FPSIM_TEST_RHT_VECTORS_H
#define FPSIM_TEST_RHT_VECTORS_H

/* TE's wgrad sign vector s (get_wgrad_sign_vector; torchao's default too). */
static const int rht_test_sign[16] = {1, 1, 1, -1, 1, -1, -1, -1, -1, -1, -1, 1, -1, 1, -1, -1};

/* A vector 13 binades wide on which rhtsum=exact and rhtsum=mma differ (test_rht_mma's third
 * worked example gives the arithmetic): x_i = s_i m_i 2^-7 for i < 14 with sum m_i = 2056,
 * x_14 = s_14 129 2^-20, x_15 = -s_15 2^-13. Output 0 lies 2^-22 above the midpoint of 4 and
 * 4.03125: exact rounds up (0x40810000), the MMA's 24-bit sum drops the 2^-22 and rounds the
 * midpoint to even (0x40800000). */
static inline void rht_test_span13_tie(float x[16])
{
    for (int i = 0; i < 14; i++)
        x[i] = (float)rht_test_sign[i] * (i == 13 ? 145.0f : 147.0f) * 0x1p-7f;
    x[14] = (float)rht_test_sign[14] * 129.0f * 0x1p-20f;
    x[15] = -(float)rht_test_sign[15] * 0x1p-13f;
}

#endif

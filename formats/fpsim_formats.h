/* fpsim_formats.h: the element formats, the named policies and the array conversions (host).
 *
 * A format (e4m3, e2m1, bf16, ...) is a descriptor in format_table.c. A policy (nv, torch,
 * ml_dtypes, ...) is one implementation's special-value behaviour, one row per (policy, format)
 * in policy_table.c. fpsim_spec_make() combines a format, a policy and a rounding mode into the
 * fpsim_spec that the scalar core (fpsim_core.h) and the GPU kernels take by value.
 *
 * Array conversions write one byte per code for formats of 8 bits or fewer (FP4/FP6 unpacked)
 * and one uint16_t per code for BF16/F16. Stochastic rounding draws
 * fpsim_sr_word(seed, stream, index0 + i) for element i, so the bits are the same for any thread
 * count and chunking: a caller converting a long stream in pieces passes the running index. */
#ifndef FPSIM_FORMATS_H
#define FPSIM_FORMATS_H

#include <stddef.h>
#include <stdint.h>

#include "fpsim_core_types.h"
#include "fpsim_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- formats ------------------------------------------------------------------------------ */

/* The descriptor of `id` (NULL if out of range). */
const fpsim_format *fpsim_format_get(fpsim_format_id id);

/* The format named `name` (canonical names and aliases such as "e4m3fn", "ue8m0", "bfloat16");
 * NULL if unknown (no message recorded; use fpsim_format_lookup for a status). */
const fpsim_format *fpsim_format_find(const char *name);

/* Same, with FPSIM_ENAME and a message listing the valid names when unknown. */
fpsim_status fpsim_format_lookup(const char *name, fpsim_format_id *out);

/* Bytes per code in arrays: 1 for formats of 8 bits or fewer, 2 for BF16/F16. */
size_t fpsim_format_code_bytes(fpsim_format_id id);

/* Comma-separated canonical names of all formats, for messages. */
const char *fpsim_format_names(void);

/* ---- rounding modes ----------------------------------------------------------------------- */

/* "rne", "rna", "rz", "ru", "rd", "sr" -> mode; FPSIM_ENAME with the list if unknown. */
fpsim_status fpsim_round_find(const char *name, fpsim_round *out);
const char *fpsim_round_name(fpsim_round mode);
const char *fpsim_round_names(void);

/* Default number of random bits for stochastic rounding of a format: the width Blackwell's
 * cvt.rs gives each value (gpu-numerics.md §1.2): 8 for E2M1, 13 for F16, 16 otherwise. */
int fpsim_sr_bits_default(fpsim_format_id id);

/* ---- policies ----------------------------------------------------------------------------- */

/* Number of policy names and the i-th name (table order). */
int fpsim_policy_count(void);
const char *fpsim_policy_name(int index);

/* Comma-separated policy names, all of them or (fmt >= 0) those that define format `fmt`. */
const char *fpsim_policy_names(int fmt);

/* The default policy of a format ("nv" for FP8/FP6/FP4/BF16/F16, "torch" for E8M0, "ml_dtypes"
 * for the FNUZ formats and e4m3ieee). */
const char *fpsim_policy_default(fpsim_format_id fmt);

/* One line saying which implementation and version the (policy, format) row emulates, or NULL. */
const char *fpsim_policy_source(const char *policy, fpsim_format_id fmt);

/* Build the spec for (format, policy, mode). policy NULL = the format's default; mode
 * FPSIM_ROUND_DEFAULT = the policy's default rounding; sr_bits 0 = fpsim_sr_bits_default().
 * FPSIM_ENAME (message naming it and listing the valid names) for an unknown policy or a policy
 * that does not define the format; FPSIM_EINVAL for a bad mode or sr_bits outside 1..32. */
fpsim_status fpsim_spec_make(fpsim_spec *out, fpsim_format_id fmt, const char *policy,
                             fpsim_round mode, int sr_bits);

/* The policy name of a spec (from its policy index). */
const char *fpsim_spec_policy_name(const fpsim_spec *s);

/* ---- array conversions -------------------------------------------------------------------- */

/* n source values -> n codes (uint8_t or uint16_t per fpsim_format_code_bytes). threads <= 0:
 * fpsim_threads_default(). Large arrays are split over threads; the bits never depend on it. */
fpsim_status fpsim_convert_f32(void *codes, const float *x, size_t n, const fpsim_spec *s,
                               uint64_t seed, uint32_t stream, uint64_t index0, int threads);
fpsim_status fpsim_convert_f64(void *codes, const double *x, size_t n, const fpsim_spec *s,
                               uint64_t seed, uint32_t stream, uint64_t index0, int threads);
/* Sources given as bf16 / binary16 bits: widened exactly to float32, then converted. */
fpsim_status fpsim_convert_bf16(void *codes, const uint16_t *x, size_t n, const fpsim_spec *s,
                                uint64_t seed, uint32_t stream, uint64_t index0, int threads);
fpsim_status fpsim_convert_f16(void *codes, const uint16_t *x, size_t n, const fpsim_spec *s,
                               uint64_t seed, uint32_t stream, uint64_t index0, int threads);

/* n codes -> n values (exact). */
fpsim_status fpsim_decode_array_f32(float *y, const void *codes, size_t n, const fpsim_spec *s,
                                    int threads);
fpsim_status fpsim_decode_array_f64(double *y, const void *codes, size_t n, const fpsim_spec *s,
                                    int threads);

#ifdef __cplusplus
}
#endif
#endif

/* cmd_convert.c: `fpsim convert`: raw little-endian values (or .npy) in, codes out, or the
 * reverse with --decode. Streams in chunks, so inputs of any size (a 16 GiB stdin) work; the
 * stochastic-rounding element index runs on across chunks, so the bits equal one whole-array
 * conversion. This interface is a contract: it is checked against tables measured on real
 * implementations over all 2^32 float32 inputs. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "cli_util.h"
#include "commands.h"
#include "fpsim_file.h"
#include "fpsim_formats.h"
#include "fpsim_npy.h"
#include "fpsim_parallel.h"
#ifdef FPSIM_HAVE_CUDA
#include "fpsim_gpu.h"
#endif

static const char *const CMD = "convert";

enum { CHUNK = 1 << 22 }; /* elements per chunk (16 MiB of float32) */

enum value_type { VT_F32, VT_F64, VT_BF16, VT_F16, VT_NONE };
static const char *const value_names[] = {"f32", "f64", "bf16", "f16"};
static const size_t value_size[] = {4, 8, 2, 2};

static void usage(FILE *out)
{
    fprintf(out,
            "usage: fpsim convert --to FMT [--from f32|f64|bf16|f16] [--policy P] [--round MODE]\n"
            "                     [--seed N] [--stream S] [--sr-bits B] [--in PATH] [--out PATH]\n"
            "                     [--threads T] [--device cpu|gpu]\n"
            "       fpsim convert --decode --to FMT [--as f32|f64] [--policy P] [--in PATH] [--out PATH]\n\n"
            "Convert raw little-endian values into codes of an element format, exactly as the emulated\n"
            "implementation (policy) does. Input: stdin unless --in; output: stdout unless --out. Codes are\n"
            "one byte each for formats of 8 bits or fewer (FP4/FP6 unpacked: the code in the low bits, the\n"
            "high bits zero), two bytes little-endian for bf16/f16. An input that starts with the .npy\n"
            "magic \\x93NUMPY is read as NumPy .npy whatever its name (--in, or stdin redirected from a\n"
            "file; a .npy arriving through a pipe is refused: give it with --in). An --out ending in .npy\n"
            "is written as .npy (shape kept; codes are saved as |u1 or <u2). Files are written under a\n"
            "temporary name and renamed when complete.\n\n"
            "  --to FMT        element format: %s\n"
            "  --from TYPE     source values: f32 (default), f64 (rounded once unless the policy says the\n"
            "                  emulated implementation goes through f32), bf16, f16 (widened exactly)\n"
            "  --policy P      implementation to emulate (default per format, see `fpsim formats`):\n"
            "                  %s\n"
            "  --round MODE    %s (default: the policy's, rne except ptx-rz/ptx-rp)\n"
            "  --seed N        stochastic rounding seed (default 0); element i of the stream uses Philox\n"
            "  --stream S      word fpsim_sr_word(seed, stream, i) (default stream 0)\n"
            "  --sr-bits B     random bits added for sr, 1..32 (default 8 e2m1, 13 f16, 16 others);\n"
            "                  --seed, --stream and --sr-bits need --round sr\n"
            "  --decode        codes in, values out (exact); --as (or --from, not both) f32|f64 picks the\n"
            "                  output type. A .npy input must hold |u1 codes (<u2 for bf16/f16); a 4- or\n"
            "                  6-bit code with a high bit set is refused. --round, --seed, --stream and\n"
            "                  --sr-bits mean nothing when decoding and are refused\n"
            "  --threads T     threads (default FPSIM_THREADS or all cores); bits never depend on it\n"
            "  --device gpu    convert on the GPU (CUDA builds with a device)\n\n"
            "Exit status: 0 ok, 1 I/O failure, 2 bad usage or input (unknown names, a byte count that is\n"
            "not a multiple of the element size, malformed or truncated .npy, a .npy dtype that is not the\n"
            "one expected, an out-of-range code). An input file is checked whole before anything is\n"
            "written. With stdout as output and a pipe as input, a trailing partial element or an\n"
            "out-of-range code is detected only when the stream reaches it, after the earlier chunks\n"
            "were written.\n",
            fpsim_format_names(), fpsim_policy_names(-1), fpsim_round_names());
}

static enum value_type value_type_find(const char *name)
{
    for (int i = 0; i < 4; i++)
        if (!strcmp(name, value_names[i]))
            return (enum value_type)i;
    return VT_NONE;
}

/* Read up to `want` bytes (fewer only at end of file). */
static size_t read_full(FILE *f, unsigned char *buf, size_t want)
{
    size_t got = 0;
    while (got < want) {
        size_t k = fread(buf + got, 1, want - got, f);
        if (k == 0)
            break;
        got += k;
    }
    return got;
}

/* The input: a FILE plus the bytes read ahead to look for the .npy magic. A seekable input is
 * rewound after the look, so head is then empty; on a pipe the bytes cannot be put back and
 * are handed out first by input_read(). */
typedef struct input_stream {
    FILE *f;
    const char *name;      /* the --in path, or "stdin" */
    unsigned char head[6]; /* read ahead, not yet consumed */
    size_t head_len, head_pos;
} input_stream;

static const unsigned char npy_magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

/* Read up to `want` bytes (fewer only at end of file): the read-ahead bytes first. */
static size_t input_read(input_stream *s, unsigned char *buf, size_t want)
{
    size_t got = 0;
    while (got < want && s->head_pos < s->head_len)
        buf[got++] = s->head[s->head_pos++];
    return got + read_full(s->f, buf + got, want - got);
}

/* Whether the input starts with the .npy magic, whatever its name. A seekable input (a file,
 * or stdin redirected from one) is rewound to where it started; a .npy on a pipe is refused,
 * because its header would have to be parsed from bytes already taken off the stream. */
static fpsim_status input_sniff_npy(input_stream *s, int *is_npy)
{
    const long start = ftell(s->f);
    s->head_len = read_full(s->f, s->head, sizeof s->head);
    s->head_pos = 0;
    if (ferror(s->f))
        return fpsim_fail(FPSIM_EIO, "error reading %s", s->name);
    *is_npy = s->head_len == sizeof npy_magic && !memcmp(s->head, npy_magic, sizeof npy_magic);
    if (start >= 0 && fseek(s->f, start, SEEK_SET) == 0) {
        s->head_len = 0;
        return FPSIM_OK;
    }
    clearerr(s->f);
    if (*is_npy)
        return fpsim_fail(FPSIM_EUNSUPPORTED,
                          "%s is a .npy stream on a pipe (\\x93NUMPY magic): give the file with --in PATH", s->name);
    return FPSIM_OK;
}

/* For a regular file: the bytes from the current position to the end, or -1 if unknown (a pipe). */
static long long input_bytes_left(const input_stream *s)
{
    struct stat sb;
    const long pos = ftell(s->f);
    if (pos < 0 || fstat(fileno(s->f), &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_size < pos)
        return -1;
    return (long long)(sb.st_size - pos) + (long long)(s->head_len - s->head_pos);
}

/* A .npy in a regular file must hold exactly the data its header claims: checked from the file
 * size before anything is read or written (so a truncated file writes nothing to stdout). */
static fpsim_status check_npy_data_size(const input_stream *s, const fpsim_npy_info *info)
{
    const long long have = input_bytes_left(s);
    const unsigned long long want = (unsigned long long)info->count * info->elem_size;
    if (have < 0)
        return FPSIM_OK; /* a pipe: checked as the stream ends */
    if ((unsigned long long)have < want)
        return fpsim_fail(FPSIM_EFORMAT, "%s: truncated .npy data: %llu of %llu bytes; nothing written", s->name,
                          (unsigned long long)have, want);
    if ((unsigned long long)have > want)
        return fpsim_fail(FPSIM_EFORMAT, "%s: trailing bytes after the .npy data (header says %zu elements)", s->name,
                          info->count);
    return FPSIM_OK;
}

/* Codes of a format narrower than a byte sit in the low bits of their byte (FP4/FP6 unpacked):
 * a set high bit is not a code of the format. Returns the index of the first such byte, or n. */
static size_t first_code_out_of_range(const unsigned char *codes, size_t n, unsigned bits)
{
    if (bits >= 8)
        return n;
    for (size_t i = 0; i < n; i++)
        if (codes[i] >> bits)
            return i;
    return n;
}

static fpsim_status code_out_of_range(const fpsim_format *fmt, unsigned code, uint64_t index)
{
    return fpsim_fail(FPSIM_EDATA, "code 0x%02x at index %llu is out of range for the %u-bit format %s", code,
                      (unsigned long long)index, (unsigned)fmt->bits, fmt->name);
}

/* Decode of a sub-byte format from a regular file: every code checked before anything is
 * written, then the file rewound to the first code. (A pipe is checked chunk by chunk.) */
static fpsim_status prescan_codes(input_stream *s, const fpsim_format *fmt, uint64_t count)
{
    const long start = ftell(s->f);
    if (fmt->bits >= 8 || input_bytes_left(s) < 0 || start < 0)
        return FPSIM_OK;
    unsigned char *buf = malloc(CHUNK);
    if (!buf)
        return fpsim_fail(FPSIM_ENOMEM, "out of memory for the input check");
    fpsim_status st = FPSIM_OK;
    for (uint64_t done = 0; done < count && !st;) {
        const size_t want = count - done < CHUNK ? (size_t)(count - done) : CHUNK;
        const size_t got = input_read(s, buf, want);
        const size_t bad = first_code_out_of_range(buf, got, fmt->bits);
        if (bad < got)
            st = code_out_of_range(fmt, buf[bad], done + bad);
        else if (ferror(s->f))
            st = fpsim_fail(FPSIM_EIO, "error reading %s", s->name);
        if (got < want)
            break; /* the size checks have said whether that is an error */
        done += got;
    }
    free(buf);
    if (!st && fseek(s->f, start, SEEK_SET) != 0)
        st = fpsim_fail(FPSIM_EIO, "cannot rewind %s after checking its codes", s->name);
    return st;
}

typedef struct convert_opts {
    const fpsim_format *fmt;
    fpsim_spec spec;
    enum value_type vtype;   /* source values (encode) or output values (decode) */
    int decode, gpu, threads;
    uint64_t seed;
    uint32_t stream;
} convert_opts;

/* One chunk: n inputs in `in` -> outputs in `out`. index0 = elements converted before. */
static fpsim_status run_chunk(const convert_opts *o, void *out, const void *in, size_t n, uint64_t index0)
{
#ifdef FPSIM_HAVE_CUDA
    if (o->gpu) {
        if (o->decode)
            return fpsim_gpu_decode_f32(out, in, n, &o->spec);
        switch (o->vtype) {
        case VT_F32: return fpsim_gpu_convert_f32(out, in, n, &o->spec, o->seed, o->stream, index0);
        case VT_F64: return fpsim_gpu_convert_f64(out, in, n, &o->spec, o->seed, o->stream, index0);
        case VT_BF16: return fpsim_gpu_convert_bf16(out, in, n, &o->spec, o->seed, o->stream, index0);
        default: return fpsim_gpu_convert_f16(out, in, n, &o->spec, o->seed, o->stream, index0);
        }
    }
#endif
    if (o->decode)
        return o->vtype == VT_F64 ? fpsim_decode_array_f64(out, in, n, &o->spec, o->threads)
                                  : fpsim_decode_array_f32(out, in, n, &o->spec, o->threads);
    switch (o->vtype) {
    case VT_F32: return fpsim_convert_f32(out, in, n, &o->spec, o->seed, o->stream, index0, o->threads);
    case VT_F64: return fpsim_convert_f64(out, in, n, &o->spec, o->seed, o->stream, index0, o->threads);
    case VT_BF16: return fpsim_convert_bf16(out, in, n, &o->spec, o->seed, o->stream, index0, o->threads);
    default: return fpsim_convert_f16(out, in, n, &o->spec, o->seed, o->stream, index0, o->threads);
    }
}

/* Decoding is exact: a rounding option would be silently ignored, and --from and --as both name
 * the output type (one would silently win). Prints the error line; returns 1 if refused. */
static int refuse_encode_options(const char *round, const char *seed, const char *stream, const char *srbits,
                                 const char *from, const char *as)
{
    const char *ignored = round ? "--round" : seed ? "--seed" : stream ? "--stream" : srbits ? "--sr-bits" : NULL;
    if (ignored) {
        fpsim_cli_error(CMD, "%s has no effect with --decode (decoding is exact; it takes no rounding)", ignored);
        return 1;
    }
    if (from && as) {
        fpsim_cli_error(CMD, "--from %s and --as %s both name the --decode output type: give one", from, as);
        return 1;
    }
    return 0;
}

/* A raw regular-file input whose length is not a multiple of the element size is refused
 * before anything is written (a pipe: when the stream ends). */
static fpsim_status check_raw_size(const input_stream *s, size_t in_size, const char *elem)
{
    const long long bytes = input_bytes_left(s);
    if (bytes == 0) /* an empty file is a mistake (a failed export, a wrong name), not an empty array */
        return fpsim_fail(FPSIM_EDATA, "%s is empty (not one %s); nothing written", s->name, elem);
    if (bytes >= 0 && (unsigned long long)bytes % in_size)
        return fpsim_fail(FPSIM_EDATA, "%s has %llu bytes, not a multiple of %zu (the size of one %s); nothing written",
                          s->name, (unsigned long long)bytes, in_size, elem);
    return FPSIM_OK;
}

/* The value type an .npy input holds, given what the user asked for (or VT_NONE if unset). */
static fpsim_status npy_input_type(const fpsim_npy_info *info, const char *path, const convert_opts *o,
                                   enum value_type asked, enum value_type *out)
{
    const size_t code_bytes = fpsim_format_code_bytes((fpsim_format_id)o->fmt->id);
    if (o->decode) {
        /* Codes are unsigned integers of the code size: a float16 array (or any other type)
         * would otherwise have its bits taken for codes. */
        const fpsim_npy_dtype want = code_bytes == 1 ? FPSIM_NPY_U8 : FPSIM_NPY_U16;
        if (info->dtype != want)
            return fpsim_fail(FPSIM_EFORMAT, "%s holds '%s' values, not %s codes (%s expected)", path,
                              fpsim_npy_dtype_descr(info->dtype), o->fmt->name, fpsim_npy_dtype_descr(want));
        return FPSIM_OK;
    }
    enum value_type t = VT_NONE;
    switch (info->dtype) {
    case FPSIM_NPY_F32: t = VT_F32; break;
    case FPSIM_NPY_F64: t = VT_F64; break;
    case FPSIM_NPY_F16: t = VT_F16; break;
    case FPSIM_NPY_V2: t = VT_BF16; break;
    case FPSIM_NPY_U16:
        if (asked != VT_BF16 && asked != VT_F16)
            return fpsim_fail(FPSIM_EINVAL, "%s holds <u2 values: say --from bf16 or --from f16", path);
        t = asked;
        break;
    default:
        return fpsim_fail(FPSIM_EFORMAT, "%s holds '%s' values; convert takes <f4, <f8, <f2, bf16 (<V2) or <u2",
                          path, fpsim_npy_dtype_descr(info->dtype));
    }
    if (asked != VT_NONE && asked != t)
        return fpsim_fail(FPSIM_EINVAL, "--from %s does not match %s, which holds %s values", value_names[asked], path,
                          value_names[t]);
    *out = t;
    return FPSIM_OK;
}

int cmd_convert(int argc, char **argv)
{
    const char *to = NULL, *from = NULL, *as = NULL, *policy = NULL, *round = NULL, *seed_s = NULL;
    const char *stream_s = NULL, *srbits_s = NULL, *in_path = NULL, *out_path = NULL, *threads_s = NULL;
    const char *device = "cpu";
    convert_opts o;
    memset(&o, 0, sizeof o);
    for (int i = 1; i < argc; i++) {
        const char *v = NULL;
        int r;
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return 0;
        }
        if (!strcmp(argv[i], "--decode")) {
            o.decode = 1;
            continue;
        }
#define TAKE(NAME, VAR)                                                                            \
    if ((r = fpsim_cli_take_value(CMD, argc, argv, &i, NAME, &v)) != 0) {                          \
        if (r < 0)                                                                                 \
            return 2;                                                                              \
        VAR = v;                                                                                   \
        continue;                                                                                  \
    }
        TAKE("--to", to)
        TAKE("--from", from)
        TAKE("--as", as)
        TAKE("--policy", policy)
        TAKE("--round", round)
        TAKE("--seed", seed_s)
        TAKE("--stream", stream_s)
        TAKE("--sr-bits", srbits_s)
        TAKE("--in", in_path)
        TAKE("--out", out_path)
        TAKE("--threads", threads_s)
        TAKE("--device", device)
#undef TAKE
        return fpsim_cli_unknown_option(CMD, argv[i]);
    }

    /* ---- options -> spec ---- */
    fpsim_status st;
    if (!to) {
        fpsim_cli_error(CMD, "--to FMT is required; valid formats: %s", fpsim_format_names());
        return 2;
    }
    fpsim_format_id fid;
    if ((st = fpsim_format_lookup(to, &fid)))
        return fpsim_cli_fail(CMD, st);
    o.fmt = fpsim_format_get(fid);
    if (o.decode && refuse_encode_options(round, seed_s, stream_s, srbits_s, from, as))
        return 2;
    fpsim_round mode = FPSIM_ROUND_DEFAULT;
    if (round && (st = fpsim_round_find(round, &mode)))
        return fpsim_cli_fail(CMD, st);
    long srbits = 0;
    if (srbits_s && (st = fpsim_cli_parse_int(srbits_s, "--sr-bits", 1, 32, &srbits)))
        return fpsim_cli_fail(CMD, st);
    if ((st = fpsim_spec_make(&o.spec, fid, policy, mode, (int)srbits)))
        return fpsim_cli_fail(CMD, st);
    /* The random-bit options mean nothing under a deterministic rounding: refuse them rather
     * than return round-to-nearest bits to a user who believes they asked for sr. */
    if (o.spec.round != FPSIM_SR && (seed_s || stream_s || srbits_s)) {
        fpsim_cli_error(CMD, "%s applies to stochastic rounding only (add --round sr)",
                        srbits_s ? "--sr-bits" : seed_s ? "--seed" : "--stream");
        return 2;
    }
    if (seed_s && (st = fpsim_cli_parse_u64(seed_s, "--seed", &o.seed)))
        return fpsim_cli_fail(CMD, st);
    long stream = 0;
    if (stream_s && (st = fpsim_cli_parse_int(stream_s, "--stream", 0, 0xFFFFFFFFL, &stream)))
        return fpsim_cli_fail(CMD, st);
    o.stream = (uint32_t)stream;
    o.threads = 0;
    if (threads_s && (st = fpsim_cli_parse_threads(threads_s, &o.threads)))
        return fpsim_cli_fail(CMD, st);
    if (o.threads <= 0)
        o.threads = fpsim_threads_default();

    enum value_type asked = VT_NONE;
    const char *type_s = o.decode ? (as ? as : from) : from;
    if (as && !o.decode) {
        fpsim_cli_error(CMD, "--as is for --decode (the output type); use --from for the source type");
        return 2;
    }
    if (type_s) {
        asked = value_type_find(type_s);
        if (asked == VT_NONE || (o.decode && asked != VT_F32 && asked != VT_F64)) {
            fpsim_cli_error(CMD, "unknown %s type '%s'; valid types: %s", o.decode ? "output" : "source", type_s,
                            o.decode ? "f32, f64" : "f32, f64, bf16, f16");
            return 2;
        }
    }

    if (!strcmp(device, "gpu")) {
#ifdef FPSIM_HAVE_CUDA
        if ((st = fpsim_gpu_require()))
            return fpsim_cli_fail_input(CMD, st);
        if (o.decode && asked == VT_F64) {
            fpsim_cli_error(CMD, "--device gpu decodes to f32 only (use --as f32, or the CPU)");
            return 2;
        }
        o.gpu = 1;
#else
        fpsim_cli_error(CMD, "--device gpu: fpsim was built without CUDA (FPSIM_HAVE_CUDA not defined); use the CPU");
        return 2;
#endif
    } else if (strcmp(device, "cpu")) {
        fpsim_cli_error(CMD, "unknown device '%s'; valid devices: cpu, gpu", device);
        return 2;
    }

    /* ---- input: everything about it is checked before any output is written ---- */
    input_stream in = {stdin, in_path ? in_path : "stdin", {0}, 0, 0};
    if (in_path && !(in.f = fopen(in_path, "rb"))) {
        fpsim_cli_error(CMD, "cannot open input '%s': %s", in_path, strerror(errno));
        return 2;
    }
    struct stat in_sb;
    if (in_path && fstat(fileno(in.f), &in_sb) == 0 && S_ISDIR(in_sb.st_mode)) {
        fpsim_cli_error(CMD, "input '%s' is a directory", in_path);
        fclose(in.f);
        return 2;
    }
    int in_npy = 0;
    fpsim_npy_info info;
    memset(&info, 0, sizeof info);
    st = input_sniff_npy(&in, &in_npy);
    /* A name that says .npy without the magic is a damaged .npy, not raw data. */
    if (!st && !in_npy && in_path && fpsim_file_name_has_ext(in_path, ".npy"))
        st = fpsim_fail(FPSIM_EFORMAT, "%s: not a .npy file (no \\x93NUMPY magic)", in_path);
    if (!st && in_npy) {
        enum value_type t = asked;
        if (!(st = fpsim_npy_read_header(in.f, in.name, &info)) && !(st = npy_input_type(&info, in.name, &o, asked, &t)))
            st = check_npy_data_size(&in, &info);
        if (!o.decode)
            asked = t;
    }
    o.vtype = asked == VT_NONE ? VT_F32 : asked;
    const size_t code_bytes = fpsim_format_code_bytes(fid);
    const size_t in_size = o.decode ? code_bytes : value_size[o.vtype];
    const size_t out_size = o.decode ? value_size[o.vtype] : code_bytes;
    if (!st && !in_npy) {
        char elem[64];
        snprintf(elem, sizeof elem, "%s %s", o.decode ? o.fmt->name : value_names[o.vtype], o.decode ? "code" : "value");
        st = check_raw_size(&in, in_size, elem);
    }
    if (!st && o.decode)
        st = prescan_codes(&in, o.fmt, in_npy ? (uint64_t)info.count : UINT64_MAX);
    if (st) {
        if (in.f != stdin)
            fclose(in.f);
        return fpsim_cli_fail(CMD, st);
    }

    /* ---- output ---- */
    if (fpsim_cli_refuse_input_as_output(CMD, "--out", out_path, "--in", in_path)) {
        if (in.f != stdin)
            fclose(in.f);
        return 2;
    }
    FILE *out = stdout;
    char tmp[4096] = "";
    const int out_npy = out_path && fpsim_file_name_has_ext(out_path, ".npy");
    if (out_path && (st = fpsim_file_open_temp(&out, tmp, sizeof tmp, out_path))) {
        if (in.f != stdin)
            fclose(in.f);
        return fpsim_cli_fail_input(CMD, st);
    }
    if (out_path)
        fpsim_cli_remove_on_signal(tmp); /* an interrupted run leaves no partial file */
    const fpsim_npy_dtype out_dtype = o.decode ? (o.vtype == VT_F64 ? FPSIM_NPY_F64 : FPSIM_NPY_F32)
                                               : (code_bytes == 1 ? FPSIM_NPY_U8 : FPSIM_NPY_U16);
    size_t shape1 = 0;
    const int ndim = in_npy ? info.ndim : 1;
    const size_t *shape = in_npy ? info.shape : &shape1;
    if (out_npy && (st = fpsim_npy_write_header(out, out_dtype, ndim, shape)))
        goto fail_io;

    /* ---- stream ---- */
    unsigned char *ibuf = malloc((size_t)CHUNK * in_size), *obuf = malloc((size_t)CHUNK * out_size);
    if (!ibuf || !obuf) {
        free(ibuf);
        free(obuf);
        st = fpsim_fail(FPSIM_ENOMEM, "out of memory for the conversion buffers");
        goto fail_io;
    }
    uint64_t done = 0;
    const uint64_t limit = in_npy ? info.count : UINT64_MAX;
    int bad_input = 0;
    for (;;) {
        size_t want = (size_t)CHUNK * in_size;
        if (limit - done < CHUNK)
            want = (size_t)(limit - done) * in_size;
        if (want == 0)
            break;
        const size_t got = input_read(&in, ibuf, want);
        if (ferror(in.f)) {
            st = fpsim_fail(FPSIM_EIO, "error reading %s", in.name);
            break;
        }
        const size_t n = got / in_size;
        if (got % in_size) {
            st = fpsim_fail(FPSIM_EDATA, "%s ends with a partial element: %llu bytes, not a multiple of %zu", in.name,
                            (unsigned long long)(done * in_size + got), in_size);
            bad_input = 1;
            break;
        }
        /* Checked here too for a pipe, which prescan_codes could not read ahead. */
        const size_t bad = o.decode ? first_code_out_of_range(ibuf, n, o.fmt->bits) : n;
        if (bad < n) {
            st = code_out_of_range(o.fmt, ibuf[bad], done + bad);
            bad_input = 1;
            break;
        }
        if (n && (st = run_chunk(&o, obuf, ibuf, n, done)))
            break;
        if (n && fwrite(obuf, out_size, n, out) != n) {
            st = fpsim_fail(FPSIM_EIO, "error writing %s", out_path ? out_path : "stdout");
            break;
        }
        done += n;
        if (got < want) {
            if (in_npy) {
                st = fpsim_fail(FPSIM_EFORMAT, "%s: truncated .npy data: %llu of %zu elements", in.name,
                                (unsigned long long)done, info.count);
                bad_input = 1;
            }
            break;
        }
    }
    if (!st && in_npy && fgetc(in.f) != EOF) {
        st = fpsim_fail(FPSIM_EFORMAT, "%s: trailing bytes after the .npy data (header says %zu elements)", in.name,
                        info.count);
        bad_input = 1;
    }
    free(ibuf);
    free(obuf);
    if (in.f != stdin)
        fclose(in.f);
    in.f = stdin;
    /* A raw input written to .npy learns its length only now: rewrite the 1-D header in place
     * (always 128 bytes long, whatever the count). */
    if (!st && out_npy && !in_npy) {
        shape1 = (size_t)done;
        if (fseek(out, 0, SEEK_SET) != 0 || fpsim_npy_write_header(out, out_dtype, 1, &shape1))
            st = fpsim_fail(FPSIM_EIO, "cannot rewrite the .npy header of %s", out_path);
    }
    fpsim_cli_remove_on_signal(NULL);
    if (st) {
        if (out_path) {
            fclose(out);
            fpsim_file_discard(tmp);
        } else {
            fflush(out);
        }
        return bad_input ? fpsim_cli_fail_input(CMD, st) : fpsim_cli_fail(CMD, st);
    }
    if (out_path) {
        if (fclose(out) != 0) {
            fpsim_file_discard(tmp);
            fpsim_cli_error(CMD, "error writing %s", out_path);
            return 1;
        }
        if ((st = fpsim_file_commit(tmp, out_path)))
            return fpsim_cli_fail(CMD, st);
    } else if (fflush(stdout) != 0) {
        fpsim_cli_error(CMD, "error writing stdout");
        return 1;
    }
    return 0;

fail_io:
    fpsim_cli_remove_on_signal(NULL);
    if (in.f != stdin)
        fclose(in.f);
    if (out_path) {
        fclose(out);
        fpsim_file_discard(tmp);
    }
    return fpsim_cli_fail(CMD, st);
}

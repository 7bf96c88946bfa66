/* mismatch_tokens.c: the token-file reader of `fpsim mismatch --tokens FILE`.
 *
 * Text, one sequence per line: integer token ids separated by spaces; an optional '|' between
 * the prompt and the response (tokens after it are scored; without '|' every token but the
 * first is scored). Blank lines and lines starting with '#' are skipped. Shorter lines are
 * padded with PAD (not scored). The prompt before '|' needs a token: the first token of a line
 * has no prediction to score. A file in which no token is scored is an error: every metric
 * would be a mean over nothing.
 *
 * Messages name the file and line and quote only the offending token; the caller (the CLI)
 * adds its own prefix. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fpsim_mismatch.h"

enum { LINE_MAX_CHARS = 65535 };

/* One line without its newline into buf (cap > LINE_MAX_CHARS). Returns 1 for a line, 0 at end
 * of file, -1 for a line longer than LINE_MAX_CHARS. *len counts every byte, NULs included,
 * so that a NUL byte can be told from the end of the text. */
static int read_line(FILE *f, char *buf, size_t *len)
{
    size_t n = 0;
    int c;
    while ((c = getc(f)) != EOF && c != '\n') {
        if (n == LINE_MAX_CHARS)
            return -1;
        buf[n++] = (char)c;
    }
    buf[n] = '\0';
    *len = n;
    return c == EOF && n == 0 ? 0 : 1;
}

/* The token at p (up to white space or '|') for a message: at most 32 characters, anything not
 * printable shown as '?', so the message stays one line. Returns the token's length. */
static size_t quote_token(char *out, size_t cap, const char *p)
{
    size_t len = 0;
    while (p[len] && !isspace((unsigned char)p[len]) && p[len] != '|')
        len++;
    size_t k = 0;
    for (; k < len && k < 32 && k + 4 < cap; k++)
        out[k] = isprint((unsigned char)p[k]) ? p[k] : '?';
    if (k < len && k + 4 <= cap) {
        memcpy(out + k, "...", 3);
        k += 3;
    }
    out[k] = '\0';
    return len;
}

/* Parse the token id at p: decimal digits only, then white space, '|' or the end. */
static fpsim_status parse_token(const char *path, size_t lineno, const char *p, int vocab, int32_t *id,
                                size_t *used)
{
    char shown[40];
    const size_t len = quote_token(shown, sizeof shown, p);
    *used = len;
    for (size_t k = 0; k < len; k++)
        if (!isdigit((unsigned char)p[k]))
            return fpsim_fail(FPSIM_EFORMAT, "%s line %zu: '%s' is not a token id (a non-negative integer)", path,
                              lineno, shown);
    errno = 0;
    const unsigned long long v = strtoull(p, NULL, 10);
    if (errno == ERANGE || v >= (unsigned long long)vocab)
        return fpsim_fail(FPSIM_EDATA, "%s line %zu: token %s is outside the vocabulary [0, %d)", path, lineno, shown,
                          vocab);
    *id = (int32_t)v;
    return FPSIM_OK;
}

/* The growing arrays of the reader: tokens and their scored flags, and each line's start and
 * length in them. */
typedef struct token_lists {
    int32_t *tok;
    uint8_t *scored;
    size_t count, cap;
    size_t *starts, *lens;
    size_t lines, line_cap;
} token_lists;

static fpsim_status push_token(token_lists *t, int32_t id, uint8_t scored)
{
    if (t->count == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 1024;
        int32_t *a = realloc(t->tok, cap * sizeof *a);
        if (a) t->tok = a;
        uint8_t *b = a ? realloc(t->scored, cap) : NULL;
        if (!b) return fpsim_fail(FPSIM_ENOMEM, "out of memory reading a token file");
        t->scored = b;
        t->cap = cap;
    }
    t->tok[t->count] = id;
    t->scored[t->count] = scored;
    t->count++;
    return FPSIM_OK;
}

static fpsim_status begin_line(token_lists *t)
{
    if (t->lines == t->line_cap) {
        size_t cap = t->line_cap ? 2 * t->line_cap : 64;
        size_t *a = realloc(t->starts, cap * sizeof *a);
        if (a) t->starts = a;
        size_t *b = a ? realloc(t->lens, cap * sizeof *b) : NULL;
        if (!b) return fpsim_fail(FPSIM_ENOMEM, "out of memory reading a token file");
        t->lens = b;
        t->line_cap = cap;
    }
    t->starts[t->lines] = t->count;
    return FPSIM_OK;
}

/* One sequence line (comments and blank lines already skipped) appended to t; max_len: the
 * model's context (0: no limit). */
static fpsim_status parse_line(token_lists *t, const char *path, size_t lineno, const char *p, int vocab,
                               size_t max_len)
{
    fpsim_status st = begin_line(t);
    int bar = 0;
    size_t here = 0;
    while (!st && *p) {
        while (isspace((unsigned char)*p))
            p++;
        if (!*p)
            break;
        if (*p == '|') {
            if (bar)
                return fpsim_fail(FPSIM_EFORMAT, "%s line %zu has two '|'", path, lineno);
            if (here == 0) /* the first token has no prediction: it could not be scored */
                return fpsim_fail(FPSIM_EFORMAT, "%s line %zu has an empty prompt: '|' needs at least one token before it",
                                  path, lineno);
            bar = 1;
            p++;
            for (size_t k = t->starts[t->lines]; k < t->count; k++)
                t->scored[k] = 0;
            continue;
        }
        int32_t id = 0;
        size_t used = 0;
        if ((st = parse_token(path, lineno, p, vocab, &id, &used)))
            break;
        st = push_token(t, id, here > 0 || bar); /* without '|': all but the first */
        here++;
        p += used;
    }
    if (st)
        return st;
    if (here < 2)
        return fpsim_fail(FPSIM_EFORMAT, "%s line %zu has fewer than 2 tokens", path, lineno);
    if (max_len && here > max_len)
        return fpsim_fail(FPSIM_ESHAPE, "%s line %zu has %zu tokens, more than the model's context (seq=%zu)", path,
                          lineno, here, max_len);
    t->lens[t->lines++] = here;
    return FPSIM_OK;
}

/* Whether any token after the first of its line is scored (position 0 has no prediction). */
static int any_scored(const token_lists *t)
{
    for (size_t s = 0; s < t->lines; s++)
        for (size_t k = 1; k < t->lens[s]; k++)
            if (t->scored[t->starts[s] + k])
                return 1;
    return 0;
}

/* Every line of f into t (buf: LINE_MAX_CHARS + 1 bytes). */
static fpsim_status read_lines(token_lists *t, FILE *f, char *buf, const char *path, int vocab, size_t max_len)
{
    size_t lineno = 0, len;
    int r;
    while ((r = read_line(f, buf, &len)) != 0) {
        lineno++;
        if (r < 0)
            return fpsim_fail(FPSIM_EFORMAT, "%s line %zu is longer than %d characters", path, lineno,
                              LINE_MAX_CHARS);
        if (memchr(buf, '\0', len))
            return fpsim_fail(FPSIM_EFORMAT, "%s line %zu holds a NUL byte (not a text token file?)", path, lineno);
        const char *p = buf;
        while (isspace((unsigned char)*p))
            p++;
        if (!*p || *p == '#')
            continue;
        fpsim_status st = parse_line(t, path, lineno, p, vocab, max_len);
        if (st)
            return st;
    }
    return FPSIM_OK;
}

static fpsim_status read_lists(token_lists *t, FILE *f, const char *path, int vocab, size_t max_len)
{
    char *buf = malloc(LINE_MAX_CHARS + 1);
    if (!buf)
        return fpsim_fail(FPSIM_ENOMEM, "out of memory reading a token file");
    fpsim_status st = read_lines(t, f, buf, path, vocab, max_len);
    free(buf);
    if (st)
        return st;
    if (ferror(f))
        return fpsim_fail(FPSIM_EIO, "error reading '%s'", path);
    if (t->lines == 0)
        return fpsim_fail(FPSIM_EFORMAT, "%s holds no sequence", path);
    if (!any_scored(t))
        return fpsim_fail(FPSIM_EDATA,
                          "no token is scored in %s: every line ends at its '|' (the tokens after '|' are scored)",
                          path);
    return FPSIM_OK;
}

fpsim_status fpsim_mm_tokens_read(const char *path, int vocab, int32_t **tokens, uint8_t **mask,
                                  size_t *n, size_t *len)
{
    return fpsim_mm_tokens_read_ctx(path, vocab, 0, tokens, mask, n, len);
}

fpsim_status fpsim_mm_tokens_read_ctx(const char *path, int vocab, size_t max_len, int32_t **tokens,
                                      uint8_t **mask, size_t *n, size_t *len)
{
    *tokens = NULL;
    *mask = NULL;
    FILE *f = fopen(path, "r");
    if (!f) return fpsim_fail(FPSIM_EIO, "cannot open token file '%s': %s", path, strerror(errno));
    token_lists t;
    memset(&t, 0, sizeof t);
    fpsim_status st = read_lists(&t, f, path, vocab, max_len);
    fclose(f);
    size_t maxlen = 0;
    for (size_t s = 0; !st && s < t.lines; s++)
        if (t.lens[s] > maxlen) maxlen = t.lens[s];
    if (!st) {
        *tokens = malloc(t.lines * maxlen * sizeof **tokens);
        *mask = calloc(t.lines * maxlen, 1);
        if (!*tokens || !*mask) st = fpsim_fail(FPSIM_ENOMEM, "out of memory reading a token file");
    }
    if (!st) {
        const int32_t pad = FPSIM_TOK_PAD < vocab ? FPSIM_TOK_PAD : 0;
        for (size_t s = 0; s < t.lines; s++)
            for (size_t k = 0; k < maxlen; k++) {
                (*tokens)[s * maxlen + k] = k < t.lens[s] ? t.tok[t.starts[s] + k] : pad;
                (*mask)[s * maxlen + k] = k < t.lens[s] ? t.scored[t.starts[s] + k] : 0;
            }
        *n = t.lines;
        *len = maxlen;
    } else {
        free(*tokens);
        free(*mask);
        *tokens = NULL;
        *mask = NULL;
    }
    free(t.tok);
    free(t.scored);
    free(t.starts);
    free(t.lens);
    return st;
}

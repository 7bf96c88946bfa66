/* mismatch_tokens.c: the token-file reader of `fpsim mismatch --tokens FILE`.
 *
 * Text, one sequence per line: integer token ids separated by spaces; an optional '|' between
 * the prompt and the response (tokens after it are scored; without '|' every token but the
 * first is scored). Blank lines and lines starting with '#' are skipped. Shorter lines are
 * padded with PAD (not scored). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fpsim_mismatch.h"

fpsim_status fpsim_mm_tokens_read(const char *path, int vocab, int32_t **tokens, uint8_t **mask,
                                  size_t *n, size_t *len)
{
    *tokens = NULL;
    *mask = NULL;
    FILE *f = fopen(path, "r");
    if (!f) return fpsim_fail(FPSIM_EIO, "mismatch: cannot open token file '%s': %s", path, strerror(errno));
    size_t cap = 0, count = 0, maxlen = 0, lines = 0, lineno = 0;
    int32_t *tok = NULL;
    uint8_t *msk = NULL;
    size_t *starts = NULL, *lens = NULL;
    size_t scap = 0;
    char buf[65536];
    fpsim_status st = FPSIM_OK;
    while (!st && fgets(buf, sizeof buf, f)) {
        lineno++;
        if (!strchr(buf, '\n') && !feof(f)) {
            st = fpsim_fail(FPSIM_EFORMAT, "mismatch: %s line %zu is longer than %zu characters", path, lineno, sizeof buf - 1);
            break;
        }
        char *p = buf;
        while (isspace((unsigned char)*p)) p++;
        if (!*p || *p == '#') continue;
        if (lines == scap) {
            scap = scap ? 2 * scap : 64;
            size_t *a = realloc(starts, scap * sizeof *a), *b = a ? realloc(lens, scap * sizeof *b) : NULL;
            if (!a || !b) { if (a) starts = a; st = fpsim_fail(FPSIM_ENOMEM, "mismatch: out of memory"); break; }
            starts = a;
            lens = b;
        }
        starts[lines] = count;
        int bar = 0;
        size_t here = 0;
        while (*p) {
            while (isspace((unsigned char)*p)) p++;
            if (!*p) break;
            if (*p == '|') {
                if (bar) { st = fpsim_fail(FPSIM_EFORMAT, "mismatch: %s line %zu has two '|'", path, lineno); break; }
                bar = 1;
                p++;
                for (size_t k = starts[lines]; k < count; k++) msk[k] = 0;
                continue;
            }
            char *end;
            errno = 0;
            long v = strtol(p, &end, 10);
            if (end == p || (*end && !isspace((unsigned char)*end) && *end != '|')) {
                st = fpsim_fail(FPSIM_EFORMAT, "mismatch: %s line %zu: '%.20s' is not a token id", path, lineno, p);
                break;
            }
            if (errno || v < 0 || v >= vocab) {
                st = fpsim_fail(FPSIM_EDATA, "mismatch: %s line %zu: token %ld outside the vocabulary [0, %d)", path, lineno, v, vocab);
                break;
            }
            if (count == cap) {
                cap = cap ? 2 * cap : 1024;
                int32_t *a = realloc(tok, cap * sizeof *a);
                uint8_t *b = a ? realloc(msk, cap) : NULL;
                if (!a || !b) { if (a) tok = a; st = fpsim_fail(FPSIM_ENOMEM, "mismatch: out of memory"); break; }
                tok = a;
                msk = b;
            }
            tok[count] = (int32_t)v;
            msk[count] = here > 0 || bar; /* without '|': all but the first */
            count++;
            here++;
            p = end;
        }
        if (st) break;
        if (here < 2) { st = fpsim_fail(FPSIM_EFORMAT, "mismatch: %s line %zu has fewer than 2 tokens", path, lineno); break; }
        lens[lines] = here;
        if (here > maxlen) maxlen = here;
        lines++;
    }
    if (!st && ferror(f)) st = fpsim_fail(FPSIM_EIO, "mismatch: error reading '%s'", path);
    fclose(f);
    if (!st && lines == 0) st = fpsim_fail(FPSIM_EFORMAT, "mismatch: %s holds no sequence", path);
    if (!st) {
        *tokens = malloc(lines * maxlen * sizeof **tokens);
        *mask = calloc(lines * maxlen, 1);
        if (!*tokens || !*mask) st = fpsim_fail(FPSIM_ENOMEM, "mismatch: out of memory");
    }
    if (!st) {
        for (size_t s = 0; s < lines; s++)
            for (size_t t = 0; t < maxlen; t++) {
                (*tokens)[s * maxlen + t] = t < lens[s] ? tok[starts[s] + t] : (FPSIM_TOK_PAD < vocab ? FPSIM_TOK_PAD : 0);
                (*mask)[s * maxlen + t] = t < lens[s] ? msk[starts[s] + t] : 0;
            }
        *n = lines;
        *len = maxlen;
    } else {
        free(*tokens);
        free(*mask);
        *tokens = NULL;
        *mask = NULL;
    }
    free(tok);
    free(msk);
    free(starts);
    free(lens);
    return st;
}

/* task.c: the built-in arithmetic task "a*b+c" with a partial-product scratchpad (fpsim_task.h). */
#include <stdlib.h>
#include <string.h>

#include "fpsim_task.h"

fpsim_task_config fpsim_task_config_default(void) {
    fpsim_task_config t = {.a_digits = 3, .b_digits = 2, .c_digits = 3, .seed = 1};
    return t;
}

fpsim_status fpsim_task_config_check(const fpsim_task_config *t) {
    if (t->a_digits < 1 || t->a_digits > 6 || t->b_digits < 1 || t->b_digits > 6 ||
        t->c_digits < 1 || t->c_digits > 6)
        return fpsim_fail(FPSIM_EINVAL, "task: operand digits must be in 1..6 (got %d, %d, %d)",
                          t->a_digits, t->b_digits, t->c_digits);
    return FPSIM_OK;
}

size_t fpsim_task_max_problem_len(const fpsim_task_config *t) {
    size_t a = (size_t)t->a_digits, b = (size_t)t->b_digits, c = (size_t)t->c_digits;
    size_t prompt = a + 1 + b + 1 + c + 1;
    size_t partials = 0;
    for (size_t i = 0; i < b; i++) partials += a + 1 + i; /* a*digit < 10^(a+1), times 10^i */
    size_t ab = a + b, answer = (ab > c ? ab : c) + 1;
    return prompt + partials + (b - 1) + 1 + ab + 1 + c + 1 + answer + 1;
}

static uint64_t splitmix64(uint64_t *state) {
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* A stream per (seed, index): the index goes through the mixer once so that neighbouring
 * indices start far apart. */
static uint64_t stream_state(uint64_t seed, uint64_t index) {
    uint64_t s = seed ^ 0x6A09E667F3BCC909ull;
    uint64_t mixed = index;
    splitmix64(&s);
    return s ^ splitmix64(&mixed);
}

static long pow10l_(int k) {
    long p = 1;
    while (k-- > 0) p *= 10;
    return p;
}

/* Uniform with exactly k digits (0..9 for k == 1). Modulo of a 64-bit word: the bias is below
 * 10^6 / 2^64, invisible here. */
static long draw_operand(uint64_t *state, int k) {
    long lo = k == 1 ? 0 : pow10l_(k - 1), hi = pow10l_(k) - 1;
    return lo + (long)(splitmix64(state) % (uint64_t)(hi - lo + 1));
}

static size_t put_number(int32_t *out, long v) {
    char buf[32];
    size_t n = 0;
    do {
        buf[n++] = (char)(v % 10);
        v /= 10;
    } while (v > 0);
    for (size_t i = 0; i < n; i++) out[i] = buf[n - 1 - i];
    return n;
}

/* Writes one problem from operands; returns its length, *prompt_len the prompt's. */
static size_t write_problem(int32_t *tok, int b_digits, long a, long b, long c,
                            size_t *prompt_len) {
    size_t n = 0;
    n += put_number(tok + n, a);
    tok[n++] = FPSIM_TOK_MUL;
    n += put_number(tok + n, b);
    tok[n++] = FPSIM_TOK_PLUS;
    n += put_number(tok + n, c);
    tok[n++] = FPSIM_TOK_EQ;
    *prompt_len = n;
    for (int i = 0; i < b_digits; i++) {
        long digit = (b / pow10l_(i)) % 10;
        if (i > 0) tok[n++] = FPSIM_TOK_PLUS;
        n += put_number(tok + n, a * digit * pow10l_(i));
    }
    tok[n++] = FPSIM_TOK_EQ;
    n += put_number(tok + n, a * b);
    tok[n++] = FPSIM_TOK_PLUS;
    n += put_number(tok + n, c);
    tok[n++] = FPSIM_TOK_EQ;
    n += put_number(tok + n, a * b + c);
    tok[n++] = FPSIM_TOK_END;
    return n;
}

static void draw_problem(const fpsim_task_config *t, uint64_t *state, long *a, long *b, long *c) {
    *a = draw_operand(state, t->a_digits);
    *b = draw_operand(state, t->b_digits);
    *c = draw_operand(state, t->c_digits);
}

fpsim_status fpsim_task_problem(const fpsim_task_config *t, uint64_t index, int32_t *tokens,
                                size_t cap, size_t *prompt_len, size_t *len, long *a, long *b,
                                long *c) {
    fpsim_status st = fpsim_task_config_check(t);
    if (st) return st;
    if (cap < fpsim_task_max_problem_len(t))
        return fpsim_fail(FPSIM_EINVAL, "task: buffer of %zu tokens < %zu", cap,
                          fpsim_task_max_problem_len(t));
    uint64_t state = stream_state(t->seed ^ 0x5851F42D4C957F2Dull, index);
    long va, vb, vc;
    draw_problem(t, &state, &va, &vb, &vc);
    *len = write_problem(tokens, t->b_digits, va, vb, vc, prompt_len);
    if (a) *a = va;
    if (b) *b = vb;
    if (c) *c = vc;
    return FPSIM_OK;
}

fpsim_status fpsim_task_batch(const fpsim_task_config *t, const fpsim_model_config *m,
                              uint64_t batch_index, int32_t *inputs, int32_t *targets,
                              uint8_t *mask) {
    fpsim_status st = fpsim_task_config_check(t);
    if (st) return st;
    if (m->vocab < FPSIM_TASK_VOCAB)
        return fpsim_fail(FPSIM_ESHAPE, "task: model vocab %d < the task's %d tokens", m->vocab,
                          FPSIM_TASK_VOCAB);
    size_t T = (size_t)m->seq, maxlen = fpsim_task_max_problem_len(t);
    if (T < maxlen)
        return fpsim_fail(FPSIM_ESHAPE, "task: seq %zu cannot hold one problem of up to %zu tokens",
                          T, maxlen);
    int32_t *row = malloc(sizeof(int32_t) * (T + 1));
    uint8_t *resp = malloc(T + 1);
    if (!row || !resp) {
        free(row), free(resp);
        return fpsim_fail(FPSIM_ENOMEM, "task: no memory for a row of %zu tokens", T);
    }
    for (int r = 0; r < m->batch; r++) {
        uint64_t state = stream_state(t->seed, batch_index * (uint64_t)m->batch + (uint64_t)r);
        size_t n = 0;
        row[n] = FPSIM_TOK_BOS, resp[n] = 0, n++;
        int32_t prob[128]; /* the longest problem (6, 6, 6 digits) has 119 tokens */
        for (;;) {
            long a, b, c;
            size_t plen;
            draw_problem(t, &state, &a, &b, &c);
            size_t len = write_problem(prob, t->b_digits, a, b, c, &plen);
            if (n + len > T + 1) break;
            for (size_t i = 0; i < len; i++) {
                row[n + i] = prob[i];
                resp[n + i] = i >= plen;
            }
            n += len;
        }
        for (; n < T + 1; n++) row[n] = FPSIM_TOK_PAD, resp[n] = 0;
        for (size_t i = 0; i < T; i++) {
            inputs[(size_t)r * T + i] = row[i];
            targets[(size_t)r * T + i] = row[i + 1];
            mask[(size_t)r * T + i] = resp[i + 1];
        }
    }
    free(row), free(resp);
    return FPSIM_OK;
}

int fpsim_task_reward(long a, long b, long c, const int32_t *response, size_t n) {
    size_t end = 0;
    while (end < n && response[end] != FPSIM_TOK_END) end++;
    if (end == n || end == 0) return 0;
    size_t start = end;
    while (start > 0 && response[start - 1] >= 0 && response[start - 1] <= 9) start--;
    if (start == end || start == 0 || response[start - 1] != FPSIM_TOK_EQ) return 0;
    if (end - start > 18) return 0;
    long v = 0;
    for (size_t i = start; i < end; i++) v = v * 10 + response[i];
    if (end - start > 1 && response[start] == 0) return 0; /* leading zero: not how we write */
    return v == a * b + c;
}

char fpsim_task_token_char(int32_t token) {
    static const char chars[FPSIM_TASK_VOCAB + 1] = "0123456789*+=$^.";
    return token >= 0 && token < FPSIM_TASK_VOCAB ? chars[token] : '?';
}

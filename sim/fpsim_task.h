/* fpsim_task.h: the built-in synthetic task, generated from a seed (no downloads).
 *
 * Multi-digit arithmetic "a*b+c" with a scratchpad of partial products, written as digit tokens:
 *
 *     prompt:    1 2 3 * 4 5 + 6 7 8 =
 *     response:  6 1 5 + 4 9 2 0 = 5 5 3 5 + 6 7 8 = 6 2 1 3 $
 *
 * i.e. a*b_0, a*b_1*10, ... (one partial product per digit of b, least significant first), their
 * sum a*b, then "+c=" and the answer a*b+c, then the end token '$'. Numbers are written most
 * significant digit first without leading zeros. Operands are uniform with exactly a_digits,
 * b_digits and c_digits digits (a leading digit 1..9; a 1-digit operand may be 0..9).
 *
 * A batch packs whole problems back to back into each row: row = BOS p1 p2 ... PAD PAD; a problem
 * that does not fit is not started. inputs = row[0..T-1], targets = row[1..T] (next-token
 * prediction); the loss mask is 1 exactly where the target is a response token (after the
 * prompt's '=' up to and including '$'), 0 for prompt tokens and padding.
 *
 * Determinism: row r of batch i is generated from its own splitmix64 stream seeded with
 * (seed, i * batch + r), so any batch can be made alone, in any order, on any thread. */
#ifndef FPSIM_TASK_H
#define FPSIM_TASK_H

#include <stddef.h>
#include <stdint.h>

#include "fpsim_model.h"
#include "fpsim_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Tokens: the digits are their own values. */
enum {
    FPSIM_TOK_MUL = 10,  /* '*' */
    FPSIM_TOK_PLUS = 11, /* '+' */
    FPSIM_TOK_EQ = 12,   /* '=' */
    FPSIM_TOK_END = 13,  /* '$' end of a response */
    FPSIM_TOK_BOS = 14,  /* '^' start of a row */
    FPSIM_TOK_PAD = 15,  /* '.' padding */
    FPSIM_TASK_VOCAB = 16 /* the model's vocab must be at least this */
};

typedef struct fpsim_task_config {
    int a_digits, b_digits, c_digits; /* 1..6 each */
    uint64_t seed;
} fpsim_task_config;

/* a 3 digits, b 2 digits, c 3 digits, seed 1. */
fpsim_task_config fpsim_task_config_default(void);
fpsim_status fpsim_task_config_check(const fpsim_task_config *t);

/* The longest problem (prompt + response) in tokens. */
size_t fpsim_task_max_problem_len(const fpsim_task_config *t);

/* Problem number `index` of the task's own stream (seed, index): tokens[0..*len), prompt in
 * tokens[0..*prompt_len). FPSIM_EINVAL if cap < fpsim_task_max_problem_len(). a, b, c (if not
 * NULL) receive the operands. */
fpsim_status fpsim_task_problem(const fpsim_task_config *t, uint64_t index, int32_t *tokens,
                                size_t cap, size_t *prompt_len, size_t *len, long *a, long *b,
                                long *c);

/* Batch number `batch_index` for model config m: inputs, targets (int32) and mask (uint8), each
 * m->batch * m->seq entries, row-major (B, T). FPSIM_ESHAPE if m->vocab < FPSIM_TASK_VOCAB or a
 * row cannot hold one problem. */
fpsim_status fpsim_task_batch(const fpsim_task_config *t, const fpsim_model_config *m,
                              uint64_t batch_index, int32_t *inputs, int32_t *targets,
                              uint8_t *mask);

/* Reward of a response: 1 if tokens[0..n) (the response, after the prompt) ends its scratchpad
 * with the exact answer a*b+c followed by '$', else 0. Only the final number is graded. */
int fpsim_task_reward(long a, long b, long c, const int32_t *response, size_t n);

/* The printable character of a token ('0'..'9', '*', '+', '=', '$', '^', '.'; '?' otherwise). */
char fpsim_task_token_char(int32_t token);

/* ---------------------------------------------------------------------------------------- */
/* A "pretrained" starting point: `steps` AdamW steps of FP32 training on the task (fp32 engine,
 * batches m->step .. m->step + steps - 1 of task t, so 0 .. steps-1 from a fresh model) from the
 * model's current state. *final_loss (if not NULL):
 * the loss of the last step's forward. Deterministic. */
fpsim_status fpsim_model_pretrain(fpsim_model *m, const fpsim_task_config *t, int steps,
                                  const fpsim_adamw_config *opt, double *final_loss);

#ifdef __cplusplus
}
#endif
#endif

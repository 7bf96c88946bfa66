/* fpsim_status.h: status codes and the last-error message.
 *
 * Every fallible fpsim function returns an fpsim_status; on failure it also records a one-line
 * message (naming the bad value) that fpsim_last_error() returns until the next failure on the
 * same thread. The library never prints, never exits, never aborts: only the CLI prints.
 * Overflow, saturation, underflow and NaN are data (counted in statistics), not errors. */
#ifndef FPSIM_STATUS_H
#define FPSIM_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum fpsim_status {
    FPSIM_OK = 0,
    FPSIM_EINVAL = 1,       /* an argument is out of range or inconsistent */
    FPSIM_ENAME = 2,        /* unknown format, policy, mode, scheme, recipe, ... name */
    FPSIM_ESHAPE = 3,       /* a shape the operation cannot take */
    FPSIM_EIO = 4,          /* a file could not be read or written */
    FPSIM_EFORMAT = 5,      /* a malformed, truncated or unsupported file */
    FPSIM_ENOMEM = 6,       /* an allocation failed */
    FPSIM_ENODEV = 7,       /* no GPU, or no CUDA build */
    FPSIM_EUNSUPPORTED = 8, /* valid request that this build or emulated implementation lacks */
    FPSIM_EDATA = 9,        /* input data that the operation must reject (e.g. NaN where none may be) */
    FPSIM_EINTERRUPTED = 10 /* stopped by a callback or a signal */
} fpsim_status;

/* Short fixed text for a status code ("unknown name", ...). */
const char *fpsim_strerror(fpsim_status status);

/* The message recorded by the last failing call on this thread ("" if none). */
const char *fpsim_last_error(void);

/* Record a failure: formats the message (printf-style) and returns `status`, so that library code
 * can write `return fpsim_fail(FPSIM_ENAME, "unknown format '%s'", name);`. */
fpsim_status fpsim_fail(fpsim_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Forget the last error message (tests use this). */
void fpsim_clear_error(void);

#ifdef __cplusplus
}
#endif
#endif

/* status.c: status texts and the per-thread last-error message. */
#include "fpsim_status.h"

#include <stdarg.h>
#include <stdio.h>

static _Thread_local char last_error[512];

const char *fpsim_strerror(fpsim_status status)
{
    switch (status) {
    case FPSIM_OK: return "ok";
    case FPSIM_EINVAL: return "invalid argument";
    case FPSIM_ENAME: return "unknown name";
    case FPSIM_ESHAPE: return "unsupported shape";
    case FPSIM_EIO: return "input/output error";
    case FPSIM_EFORMAT: return "malformed file";
    case FPSIM_ENOMEM: return "out of memory";
    case FPSIM_ENODEV: return "no GPU device";
    case FPSIM_EUNSUPPORTED: return "unsupported";
    case FPSIM_EDATA: return "invalid data";
    case FPSIM_EINTERRUPTED: return "interrupted";
    }
    return "unknown status";
}

const char *fpsim_last_error(void) { return last_error; }

void fpsim_clear_error(void) { last_error[0] = '\0'; }

fpsim_status fpsim_fail(fpsim_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return status;
}

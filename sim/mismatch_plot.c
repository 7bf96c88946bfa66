/* mismatch_plot.c: plots of a mismatch results file (see fpsim_mismatch.h). */
#include "fpsim_mismatch.h"

fpsim_status fpsim_mismatch_plot(const char *h5, const char *outdir, const char *fmt)
{
    (void)outdir;
    (void)fmt;
    return fpsim_fail(FPSIM_EUNSUPPORTED, "mismatch: plotting %s is not implemented yet", h5);
}

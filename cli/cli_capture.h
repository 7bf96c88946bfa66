/* cli_capture.h: what `--from capture.h5` prints, shared by replay and mismatch. */
#ifndef FPSIM_CLI_CAPTURE_H
#define FPSIM_CLI_CAPTURE_H

#include "fpsim_capture.h"

/* Print fpsim's FP32 engine vs PyTorch, relative L2 per captured tensor, on stdout. */
fpsim_status fpsim_cli_print_capture_diffs(const fpsim_capture *cap, const char *path);

#endif

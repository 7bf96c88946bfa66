/* fpsim_gpu.h: the GPU library API (fpsim_gpu_*). Every function returns FPSIM_ENODEV with a
 * clear message when no device is present. */
#ifndef FPSIM_GPU_H
#define FPSIM_GPU_H

#include "fpsim_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Number of CUDA devices (0 when none or no driver). */
int fpsim_gpu_device_count(void);

/* One line describing device 0 (name, SM count, driver/runtime versions) into buf. */
fpsim_status fpsim_gpu_describe(char *buf, unsigned long cap);

#ifdef __cplusplus
}
#endif
#endif

/* fpsim_mem.h: how much memory this machine can give a run, checked before a large allocation.
 *
 * A run that allocates more than the machine has is not refused by malloc on Linux (overcommit):
 * it is SIGKILLed by the kernel later, with nothing said. Commands that know their size up front
 * (a declared input shape, a model spec) compare an estimate against what is available and refuse
 * with one line instead. The estimate is the caller's; these functions say what is available.
 *
 * Available = MemAvailable of /proc/meminfo (the kernel's estimate of memory a new allocation can
 * get without swapping: free + reclaimable cache), lowered to the room left under a cgroup memory
 * limit when one is set (a container is killed at its limit, whatever the host has); without
 * /proc/meminfo, the physical pages free (sysconf). When none of these is readable, nothing is
 * known and nothing is refused. Swap is not counted: a run that only fits by swapping is refused. */
#ifndef FPSIM_MEM_H
#define FPSIM_MEM_H

#include <stddef.h>
#include <stdint.h>

#include "fpsim_status.h"

/* The MemAvailable value of /proc/meminfo text ("MemAvailable:   24126104 kB"), in bytes.
 * Returns 1 and sets *bytes, or 0 if the text has no such line or its value is malformed. */
int fpsim_mem_parse_meminfo(const char *text, uint64_t *bytes);

/* A cgroup memory file's value: a decimal count of bytes ("1073741824\n"), or "max" (cgroup v2,
 * no limit: 0 returned). Returns 1 and sets *bytes for a number; 0 for "max" or malformed text. */
int fpsim_mem_parse_cgroup_value(const char *text, uint64_t *bytes);

/* Bytes a new allocation can get now (see above). Returns 1 and sets *bytes, or 0 when unknown. */
int fpsim_mem_available(uint64_t *bytes);

/* "14.4 GB", "512.0 MB", "3.2 kB", "12 bytes" (decimal units, one decimal). */
void fpsim_mem_format(char *out, size_t cap, uint64_t bytes);

/* FPSIM_ENOMEM when `need` bytes exceed what is available, with the message
 * "WHAT needs N GB[ DETAIL]; M GB is available" (DETAIL e.g. " (input 14.4 GB, outputs 21.6 GB)",
 * or ""); FPSIM_OK when it fits or nothing is known. */
fpsim_status fpsim_mem_check(uint64_t need, const char *what, const char *detail);

#endif

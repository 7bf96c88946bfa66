/* fpsim_file.h: outputs are written under a temporary name and renamed when complete, so a
 * failed or interrupted run never leaves a half-written file behind. */
#ifndef FPSIM_FILE_H
#define FPSIM_FILE_H

#include <stddef.h>
#include <stdio.h>

#include "fpsim_status.h"

/* The temporary name used for `path`: "<dir>/.<base>.tmp.<pid>" (same directory, so that the
 * final rename is atomic). Returns FPSIM_EINVAL if it does not fit in `cap` bytes. */
fpsim_status fpsim_file_temp_name(char *tmp, size_t cap, const char *path);

/* Rename the finished temporary file onto `path` (removing `tmp` on failure). */
fpsim_status fpsim_file_commit(const char *tmp, const char *path);

/* Remove a temporary file that will not be committed (ignores a missing file). */
void fpsim_file_discard(const char *tmp);

/* fopen(tmp name of path, "wb"): a convenience for stream outputs. On success `tmp` holds the
 * temporary name to pass to fpsim_file_commit() after fclose(). */
fpsim_status fpsim_file_open_temp(FILE **out, char *tmp, size_t cap, const char *path);

/* 1 if the file name `path` ends in `ext` (".npy"), letters compared without case: every
 * command decides a file's kind from its name by this one rule. */
int fpsim_file_name_has_ext(const char *path, const char *ext);

/* 1 if `path` ends in .h5 or .hdf5 (any case): the names fpsim reads and writes as HDF5. */
int fpsim_file_name_is_hdf5(const char *path);

/* Check that `path` can be created (its directory exists and is writable), before a long run. */
fpsim_status fpsim_file_check_writable(const char *path);

#endif

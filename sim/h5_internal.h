/* h5_internal.h: helpers shared by the sim/h5_*.c files (not part of the public API). */
#ifndef FPSIM_H5_INTERNAL_H
#define FPSIM_H5_INTERNAL_H

#include <hdf5.h>

#include "fpsim_h5.h"

/* The little-endian file type / native memory type of a type (H5I_INVALID_HID for BF16). */
hid_t fpsim_h5_file_type(fpsim_h5_type type);
hid_t fpsim_h5_mem_type(fpsim_h5_type type);
/* A new variable-length UTF-8 string type (close with H5Tclose). */
hid_t fpsim_h5_vlen_string_type(void);
/* FPSIM_EFORMAT saying why link `name` of `loc` leads to no object: a dangling soft link (and its
 * target), an external link whose file or object cannot be opened, or a damaged object (with the
 * HDF5 library's innermost reason). For a link that exists but cannot be opened. */
fpsim_status fpsim_h5_link_problem(hid_t loc, const char *name, const char *path);

#endif

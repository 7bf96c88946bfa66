/* h5_file.c: HDF5 output files (temporary name, then rename), input files, groups, provenance. */
#include "fpsim_h5.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fpsim_file.h"

#ifndef FPSIM_VERSION
#define FPSIM_VERSION "unknown"
#endif
#include "fpsim_git_commit.h" /* FPSIM_GIT_COMMIT, written at build time (scripts/git_commit.cmake) */

/* HDF5 1.10.8 keeps a file-driver object alive when H5Fopen fails on a damaged file; at exit
 * its atexit handler (H5close) then prints "HDF5: infinite loop closing library" and a line of
 * package names on stderr, after the command's one-line error (found by tests/robust). fpsim
 * closes every file it opens itself, so the handler has nothing to do: turn it off.
 * H5dont_atexit counts only before the library's first use, hence a constructor (GCC, Clang). */
#if defined(__GNUC__)
__attribute__((constructor)) static void h5_skip_atexit(void) { H5dont_atexit(); }
#endif

/* ---- the fault guard of input files ------------------------------------------------------
 *
 * libhdf5 1.10 trusts lengths stored in a file: a damaged global-heap object (the storage of a
 * variable-length string attribute) makes H5Aread memcpy far past its buffer, and the process
 * dies by SIGSEGV (found by a black-box audit: `fpsim plot` and `fpsim mismatch --plot` exited
 * 139 on a file with one flipped byte). Not every such length can be checked through the API
 * before the library uses it, so from the opening of an input file (fpsim_h5_open_read) to its
 * closing (fpsim_h5_close_read) a fault ends fpsim with one line and exit status 2 (bad input)
 * instead of a crash. Nothing can be resumed after the fault (the library is mid-call, its state
 * undefined), so the handler only does what is async-signal-safe: write(2) of a line built when
 * the file was opened, unlink(2) of the temporary names of the HDF5 outputs still being written
 * (fpsim_h5_create; no partial output is left), then _exit(2). It runs on its own stack, so that a
 * fault from a stack overflow (deep recursion over a damaged B-tree) is reported too. The
 * previous handlers and stack come back when the last guarded file is closed. */

enum { GUARD_DEPTH = 8, PENDING_SLOTS = 4 };
static const int guard_signals[3] = {SIGSEGV, SIGBUS, SIGFPE};
static struct sigaction guard_saved[3];
static stack_t guard_saved_stack;
static char guard_stack[64 * 1024];
static char guard_line[GUARD_DEPTH][4200]; /* one line per open guarded file, innermost last */
static size_t guard_len[GUARD_DEPTH];
static volatile sig_atomic_t guard_depth;
static char pending_tmp[PENDING_SLOTS][4096]; /* temporaries of outputs being written */
static volatile sig_atomic_t pending_used[PENDING_SLOTS];

static void pending_add(const char *tmp)
{
    for (int i = 0; i < PENDING_SLOTS; i++)
        if (!pending_used[i]) {
            snprintf(pending_tmp[i], sizeof pending_tmp[i], "%s", tmp);
            pending_used[i] = 1;
            return;
        }
}

static void pending_remove(const char *tmp)
{
    for (int i = 0; i < PENDING_SLOTS; i++)
        if (pending_used[i] && !strcmp(pending_tmp[i], tmp)) pending_used[i] = 0;
}

static void guard_on_fault(int sig)
{
    (void)sig;
    int d = guard_depth < GUARD_DEPTH ? (int)guard_depth : GUARD_DEPTH;
    if (d > 0) {
        ssize_t put = write(STDERR_FILENO, guard_line[d - 1], guard_len[d - 1]);
        (void)put; /* nothing to do if stderr is gone */
    }
    for (int i = 0; i < PENDING_SLOTS; i++)
        if (pending_used[i]) unlink(pending_tmp[i]);
    _exit(2);
}

static void guard_arm(const char *path)
{
    const int d = (int)guard_depth;
    if (d < GUARD_DEPTH) {
        /* built now: the handler may only write(2) it */
        snprintf(guard_line[d], sizeof guard_line[d],
                 "fpsim: damaged HDF5 file '%.4096s': the HDF5 library faulted reading it\n", path);
        guard_len[d] = strlen(guard_line[d]);
    }
    if (d == 0) {
        stack_t ss = {.ss_sp = guard_stack, .ss_size = sizeof guard_stack, .ss_flags = 0};
        sigaltstack(&ss, &guard_saved_stack);
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = guard_on_fault;
        sa.sa_flags = SA_ONSTACK;
        sigemptyset(&sa.sa_mask);
        for (int i = 0; i < 3; i++) sigaction(guard_signals[i], &sa, &guard_saved[i]);
    }
    guard_depth = d + 1;
}

static void guard_disarm(void)
{
    if (guard_depth <= 0) return;
    guard_depth = guard_depth - 1;
    if (guard_depth > 0) return;
    for (int i = 0; i < 3; i++) sigaction(guard_signals[i], &guard_saved[i], NULL);
    sigaltstack(&guard_saved_stack, NULL);
}

size_t fpsim_h5_type_size(fpsim_h5_type type)
{
    static const size_t sizes[FPSIM_H5_TYPE_COUNT] = {4, 8, 2, 1, 2, 4, 4, 8, 8};
    return (unsigned)type < FPSIM_H5_TYPE_COUNT ? sizes[type] : 0;
}

const char *fpsim_h5_type_name(fpsim_h5_type type)
{
    static const char *const names[FPSIM_H5_TYPE_COUNT] = {"f32", "f64", "bf16", "u8", "u16",
                                                           "i32", "u32", "i64", "u64"};
    return (unsigned)type < FPSIM_H5_TYPE_COUNT ? names[type] : "?";
}

static fpsim_status create_quietly(fpsim_h5_file *f, const char *path)
{
    fpsim_status st = fpsim_file_temp_name(f->tmp, sizeof f->tmp, path);
    if (st) return st;
    /* fopen first: it says why a path cannot be created (errno), which H5Fcreate does not. */
    FILE *probe = fopen(f->tmp, "wb");
    if (!probe) return fpsim_fail(FPSIM_EIO, "cannot write '%s': %s", path, strerror(errno));
    fclose(probe);
    /* CLOSE_STRONG: commit closes every object still open in the file before the rename. */
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl < 0 || H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG) < 0) {
        if (fapl >= 0) H5Pclose(fapl);
        remove(f->tmp);
        return fpsim_fail(FPSIM_EIO, "cannot set up HDF5 file access for '%s'", path);
    }
    f->id = H5Fcreate(f->tmp, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    H5Pclose(fapl);
    if (f->id < 0) {
        remove(f->tmp);
        return fpsim_fail(FPSIM_EIO, "cannot create HDF5 file '%s'", path);
    }
    return FPSIM_OK;
}

fpsim_status fpsim_h5_create(fpsim_h5_file *f, const char *path)
{
    f->id = H5I_INVALID_HID;
    f->tmp[0] = '\0';
    if (strlen(path) >= sizeof f->path)
        return fpsim_fail(FPSIM_EINVAL, "output path '%.64s...' is too long", path);
    strcpy(f->path, path);
    fpsim_status st;
    H5E_BEGIN_TRY { st = create_quietly(f, path); } H5E_END_TRY;
    if (st) f->tmp[0] = '\0';
    else pending_add(f->tmp);
    return st;
}

fpsim_status fpsim_h5_commit(fpsim_h5_file *f)
{
    herr_t flushed, closed;
    H5E_BEGIN_TRY {
        flushed = H5Fflush(f->id, H5F_SCOPE_GLOBAL);
        closed = H5Fclose(f->id);
    } H5E_END_TRY;
    f->id = H5I_INVALID_HID;
    pending_remove(f->tmp);
    if (flushed < 0 || closed < 0) {
        fpsim_file_discard(f->tmp);
        f->tmp[0] = '\0';
        return fpsim_fail(FPSIM_EIO, "cannot finish writing '%s' (disk full?)", f->path);
    }
    fpsim_status st = fpsim_file_commit(f->tmp, f->path);
    f->tmp[0] = '\0';
    return st;
}

void fpsim_h5_discard(fpsim_h5_file *f)
{
    if (f->id >= 0) {
        H5E_BEGIN_TRY { H5Fclose(f->id); } H5E_END_TRY;
        f->id = H5I_INVALID_HID;
    }
    pending_remove(f->tmp);
    fpsim_file_discard(f->tmp);
    f->tmp[0] = '\0';
}

/* The date of the run, UTC; SOURCE_DATE_EPOCH (reproducible-builds convention) overrides the
 * clock so that tests and archived runs can produce byte-identical files. */
static void utc_date(char *out, size_t cap)
{
    time_t now = time(NULL);
    const char *epoch = getenv("SOURCE_DATE_EPOCH");
    if (epoch && *epoch) {
        char *end;
        long long v = strtoll(epoch, &end, 10);
        if (!*end) now = (time_t)v;
    }
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(out, cap, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

fpsim_status fpsim_h5_write_provenance(hid_t file, const char *command_line, uint64_t seed)
{
    char date[32];
    utc_date(date, sizeof date);
    fpsim_status st = fpsim_h5_attr_string(file, "fpsim_version", FPSIM_VERSION);
    if (!st) st = fpsim_h5_attr_string(file, "git_commit", FPSIM_GIT_COMMIT);
    if (!st) st = fpsim_h5_attr_string(file, "command_line", command_line ? command_line : "");
    if (!st) st = fpsim_h5_attr_uint64(file, "seed", seed);
    if (!st) st = fpsim_h5_attr_string(file, "date", date);
    return st;
}

static fpsim_status open_quietly(hid_t *out, const char *path)
{
    if (access(path, R_OK) != 0) return fpsim_fail(FPSIM_EIO, "cannot read '%s': %s", path, strerror(errno));
    if (H5Fis_hdf5(path) <= 0) return fpsim_fail(FPSIM_EFORMAT, "'%s' is not an HDF5 file", path);
    *out = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (*out < 0) return fpsim_fail(FPSIM_EFORMAT, "cannot open HDF5 file '%s' (truncated or damaged)", path);
    return FPSIM_OK;
}

fpsim_status fpsim_h5_open_read(hid_t *out, const char *path)
{
    fpsim_status st;
    *out = H5I_INVALID_HID;
    guard_arm(path); /* H5Fopen reads the superblock and root group: guarded already */
    H5E_BEGIN_TRY { st = open_quietly(out, path); } H5E_END_TRY;
    if (st) guard_disarm();
    return st;
}

void fpsim_h5_close_read(hid_t file)
{
    if (file < 0) return;
    H5E_BEGIN_TRY { H5Fclose(file); } H5E_END_TRY;
    guard_disarm();
}

fpsim_status fpsim_h5_group_create(hid_t *out, hid_t loc, const char *name)
{
    hid_t lcpl, g = H5I_INVALID_HID;
    H5E_BEGIN_TRY {
        lcpl = H5Pcreate(H5P_LINK_CREATE);
        if (lcpl >= 0 && H5Pset_create_intermediate_group(lcpl, 1) >= 0)
            g = H5Gcreate2(loc, name, lcpl, H5P_DEFAULT, H5P_DEFAULT);
        if (lcpl >= 0) H5Pclose(lcpl);
    } H5E_END_TRY;
    *out = g;
    if (g < 0) return fpsim_fail(FPSIM_EIO, "cannot create HDF5 group '%s' (exists already?)", name);
    return FPSIM_OK;
}

/* io_test_util.h: scratch directories and file surgery for the tests in tests/io. */
#ifndef FPSIM_IO_TEST_UTIL_H
#define FPSIM_IO_TEST_UTIL_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A fresh directory under $TMPDIR (or /tmp): "<tmp>/fpsim_<tag>_XXXXXX". */
static inline int io_make_temp_dir(char *out, size_t cap, const char *tag)
{
    const char *base = getenv("TMPDIR");
    snprintf(out, cap, "%s/fpsim_%s_XXXXXX", base && *base ? base : "/tmp", tag);
    return mkdtemp(out) ? 0 : -1;
}

/* Number of entries of `dir` whose name contains `needle` (temporaries ".x.tmp.PID" included). */
static inline int io_dir_entries(const char *dir, const char *needle)
{
    DIR *d = opendir(dir);
    if (!d) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && strstr(e->d_name, needle)) n++;
    closedir(d);
    return n;
}

/* Remove the files of a flat scratch directory, then the directory. */
static inline void io_remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    char path[4096];
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        remove(path);
    }
    closedir(d);
    rmdir(dir);
}

/* Copy the first `fraction` of src's bytes to dst (a truncated file). */
static inline int io_copy_prefix(const char *src, const char *dst, double fraction)
{
    FILE *in = fopen(src, "rb");
    if (!in) return -1;
    fseek(in, 0, SEEK_END);
    long size = ftell(in);
    fseek(in, 0, SEEK_SET);
    long keep = (long)(fraction * (double)size);
    char *buf = malloc(size > 0 ? (size_t)size : 1);
    size_t got = fread(buf, 1, (size_t)size, in);
    fclose(in);
    FILE *out = fopen(dst, "wb");
    if (!out || got != (size_t)size) {
        free(buf);
        if (out) fclose(out);
        return -1;
    }
    fwrite(buf, 1, (size_t)keep, out);
    fclose(out);
    free(buf);
    return 0;
}

/* Write `n` bytes to a new file. */
static inline int io_write_bytes(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    size_t put = fwrite(data, 1, n, f);
    fclose(f);
    return put == n ? 0 : -1;
}

#endif

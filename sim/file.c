/* file.c: write-to-temporary-then-rename outputs. */
#include "fpsim_file.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

fpsim_status fpsim_file_temp_name(char *tmp, size_t cap, const char *path)
{
    const char *slash = strrchr(path, '/');
    int dirlen = slash ? (int)(slash - path + 1) : 0;
    const char *base = slash ? slash + 1 : path;
    if (!*base) return fpsim_fail(FPSIM_EINVAL, "output path '%s' names a directory", path);
    /* The temporary is renamed onto `path`: an existing directory, device, pipe, socket or
     * symbolic link there (e.g. --out /dev/null, /dev/stdout) would be replaced by a regular
     * file (as root, in /dev), or fail only after the whole run. Refuse it up front. */
    struct stat sb;
    if (lstat(path, &sb) == 0 && S_ISLNK(sb.st_mode))
        return fpsim_fail(FPSIM_EINVAL,
                          "output path '%s' is a symbolic link (the finished file is renamed onto the name, which "
                          "would replace the link); name its target",
                          path);
    if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
        return fpsim_fail(FPSIM_EINVAL, "output path '%s' is a directory", path);
    if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode))
        return fpsim_fail(FPSIM_EINVAL,
                          "output path '%s' is not a regular file (a device, pipe or socket); outputs are written "
                          "to a temporary file renamed onto the name",
                          path);
    int n = snprintf(tmp, cap, "%.*s.%s.tmp.%ld", dirlen, path, base, (long)getpid());
    if (n < 0 || (size_t)n >= cap) return fpsim_fail(FPSIM_EINVAL, "output path '%s' is too long", path);
    return FPSIM_OK;
}

fpsim_status fpsim_file_commit(const char *tmp, const char *path)
{
    if (rename(tmp, path) != 0) {
        int err = errno;
        remove(tmp);
        return fpsim_fail(FPSIM_EIO, "cannot write '%s': %s", path, strerror(err));
    }
    return FPSIM_OK;
}

void fpsim_file_discard(const char *tmp)
{
    if (tmp && *tmp) remove(tmp);
}

fpsim_status fpsim_file_open_temp(FILE **out, char *tmp, size_t cap, const char *path)
{
    fpsim_status st = fpsim_file_temp_name(tmp, cap, path);
    if (st) return st;
    *out = fopen(tmp, "wb");
    if (!*out) return fpsim_fail(FPSIM_EIO, "cannot write '%s': %s", path, strerror(errno));
    return FPSIM_OK;
}

fpsim_status fpsim_file_check_writable(const char *path)
{
    char tmp[4096];
    FILE *f;
    fpsim_status st = fpsim_file_open_temp(&f, tmp, sizeof tmp, path);
    if (st) return st;
    fclose(f);
    remove(tmp);
    return FPSIM_OK;
}

int fpsim_file_name_has_ext(const char *path, const char *ext)
{
    const size_t n = strlen(path), m = strlen(ext);
    return n >= m && !strcasecmp(path + n - m, ext);
}

int fpsim_file_name_is_hdf5(const char *path)
{
    return fpsim_file_name_has_ext(path, ".h5") || fpsim_file_name_has_ext(path, ".hdf5");
}

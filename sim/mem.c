/* mem.c: the memory available to a run, and the check before a large allocation (fpsim_mem.h). */
#include "fpsim_mem.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Digits at `p` as an unsigned count (no sign, no overflow); *end after them. 0 if none. */
static int parse_count(const char *p, uint64_t *value, const char **end)
{
    uint64_t v = 0;
    const char *s = p;
    for (; isdigit((unsigned char)*s); s++) {
        const uint64_t d = (uint64_t)(*s - '0');
        if (v > (UINT64_MAX - d) / 10) return 0;
        v = v * 10 + d;
    }
    if (s == p) return 0;
    *value = v;
    *end = s;
    return 1;
}

int fpsim_mem_parse_meminfo(const char *text, uint64_t *bytes)
{
    static const char key[] = "MemAvailable:";
    const char *line = text;
    while (strncmp(line, key, sizeof key - 1)) {
        line = strchr(line, '\n');
        if (!line) return 0;
        line++;
    }
    const char *p = line + sizeof key - 1, *end;
    while (*p == ' ' || *p == '\t')
        p++;
    uint64_t kib;
    if (!parse_count(p, &kib, &end)) return 0;
    /* the kernel writes the value in kB (KiB, despite the name) */
    if (strncmp(end, " kB", 3) || kib > UINT64_MAX / 1024) return 0;
    *bytes = kib * 1024;
    return 1;
}

int fpsim_mem_parse_cgroup_value(const char *text, uint64_t *bytes)
{
    const char *end;
    uint64_t v;
    if (!parse_count(text, &v, &end) || (*end && *end != '\n')) return 0;
    *bytes = v;
    return 1;
}

/* The first `cap - 1` bytes of a small file (a /proc or /sys file), NUL-terminated; 0 if
 * unreadable. */
static int read_small_file(const char *path, char *buf, size_t cap)
{
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    size_t got = fread(buf, 1, cap - 1, f);
    fclose(f);
    buf[got] = '\0';
    return got > 0;
}

/* The value of `key` (a whole word at a line's start, then a space) in a memory.stat text. */
static int stat_value(const char *text, const char *key, uint64_t *value)
{
    const size_t n = strlen(key);
    for (const char *line = text; line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        const char *end;
        if (!strncmp(line, key, n) && line[n] == ' ' && parse_count(line + n + 1, value, &end)) return 1;
    }
    return 0;
}

/* Room left under the cgroup memory limit (v2, else v1), or 0 if no limit is readable. v1 reports
 * "no limit" as a huge number (PAGE_COUNTER_MAX rounded to pages), which then never binds; v2
 * writes "max", which does not parse. The usage counts the page cache, which the kernel reclaims
 * before it kills anything (a build or a pip install can leave gigabytes of it), so the inactive
 * file pages are taken off it, as container tools do for their "working set"; where memory.stat
 * cannot be read, the limit alone is the room (an overestimate: the check is for runs that
 * cannot fit at all, and must never refuse one that fits). */
static int cgroup_room(uint64_t *bytes)
{
    static const char *const files[2][4] = {
        {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current", "/sys/fs/cgroup/memory.stat", "inactive_file"},
        {"/sys/fs/cgroup/memory/memory.limit_in_bytes", "/sys/fs/cgroup/memory/memory.usage_in_bytes",
         "/sys/fs/cgroup/memory/memory.stat", "total_inactive_file"},
    };
    char text[8192];
    for (int v = 0; v < 2; v++) {
        uint64_t limit, usage, inactive;
        if (!read_small_file(files[v][0], text, sizeof text) || !fpsim_mem_parse_cgroup_value(text, &limit))
            continue;
        if (!read_small_file(files[v][1], text, sizeof text) || !fpsim_mem_parse_cgroup_value(text, &usage) ||
            !read_small_file(files[v][2], text, sizeof text) || !stat_value(text, files[v][3], &inactive)) {
            *bytes = limit;
            return 1;
        }
        usage -= inactive < usage ? inactive : usage;
        *bytes = limit > usage ? limit - usage : 0;
        return 1;
    }
    return 0;
}

int fpsim_mem_available(uint64_t *bytes)
{
    char text[8192]; /* MemAvailable is the third line of /proc/meminfo */
    int known = read_small_file("/proc/meminfo", text, sizeof text) && fpsim_mem_parse_meminfo(text, bytes);
    if (!known) {
        const long pages = sysconf(_SC_AVPHYS_PAGES), size = sysconf(_SC_PAGESIZE);
        if (pages > 0 && size > 0) {
            *bytes = (uint64_t)pages * (uint64_t)size;
            known = 1;
        }
    }
    uint64_t room;
    if (cgroup_room(&room) && (!known || room < *bytes)) {
        *bytes = room;
        known = 1;
    }
    return known;
}

void fpsim_mem_format(char *out, size_t cap, uint64_t bytes)
{
    static const char *const units[] = {"kB", "MB", "GB", "TB", "PB", "EB"};
    if (bytes < 1000) {
        snprintf(out, cap, "%llu bytes", (unsigned long long)bytes);
        return;
    }
    double v = (double)bytes / 1000.0;
    int u = 0;
    while (v >= 999.95 && u < 5) {
        v /= 1000.0;
        u++;
    }
    snprintf(out, cap, "%.1f %s", v, units[u]);
}

fpsim_status fpsim_mem_check(uint64_t need, const char *what, const char *detail)
{
    uint64_t avail;
    if (!fpsim_mem_available(&avail) || need <= avail) return FPSIM_OK;
    char n[32], a[32];
    fpsim_mem_format(n, sizeof n, need);
    fpsim_mem_format(a, sizeof a, avail);
    return fpsim_fail(FPSIM_ENOMEM, "%s needs %s%s; %s is available", what, n, detail ? detail : "", a);
}

/* test_mem.c: sim/fpsim_mem.h: the memory available to a run, and the check before a large
 * allocation.
 *
 * The parsers are checked on text as the kernel writes it (/proc/meminfo, cgroup v1 and v2 memory
 * files) and on malformed text, which must give "unknown" (0) rather than a wrong number; the
 * formatter on unit boundaries; fpsim_mem_check on this machine: a need far above any machine's
 * memory is refused with the one-line message, a need of one byte passes. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "fpsim_mem.h"
#include "test_util.h"

static test_counter tc = TEST_COUNTER_INIT("mem");

static void meminfo_parsing(void)
{
    uint64_t b = 0;
    const char *kernel = "MemTotal:       24683784 kB\nMemFree:        22578312 kB\n"
                         "MemAvailable:   24126104 kB\nBuffers:          123456 kB\n";
    TEST_CHECK(&tc, fpsim_mem_parse_meminfo(kernel, &b) == 1 && b == 24126104ull * 1024, "b = %llu",
               (unsigned long long)b);
    /* the first line, and a value that is the last text */
    TEST_CHECK(&tc, fpsim_mem_parse_meminfo("MemAvailable: 1 kB", &b) == 1 && b == 1024, "b = %llu",
               (unsigned long long)b);
    /* old kernels (before 3.14) have no MemAvailable: unknown, not MemFree */
    b = 7;
    TEST_CHECK(&tc, fpsim_mem_parse_meminfo("MemTotal: 100 kB\nMemFree: 50 kB\n", &b) == 0 && b == 7, "%s",
               "no MemAvailable line");
    const char *const bad[] = {
        "MemAvailable:\n",                         /* no value */
        "MemAvailable: -5 kB\n",                   /* a sign */
        "MemAvailable: 12 MB\n",                   /* another unit */
        "MemAvailable: 12\n",                      /* no unit */
        "MemAvailable: 99999999999999999999 kB\n", /* overflows 64 bits */
        "MemAvailable: 18014398509481984 kB\n",    /* 2^54 kB: the bytes overflow */
        "XMemAvailable: 5 kB\n",                   /* not at the start of a line */
        "",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        TEST_CHECK(&tc, fpsim_mem_parse_meminfo(bad[i], &b) == 0, "malformed text %zu accepted", i);
}

static void cgroup_parsing(void)
{
    uint64_t b = 0;
    TEST_CHECK(&tc, fpsim_mem_parse_cgroup_value("1073741824\n", &b) == 1 && b == 1073741824ull, "b = %llu",
               (unsigned long long)b);
    TEST_CHECK(&tc,
               fpsim_mem_parse_cgroup_value("9223372036854771712\n", &b) == 1 && b == 9223372036854771712ull,
               "v1 'no limit' %llu", (unsigned long long)b);
    TEST_CHECK(&tc, fpsim_mem_parse_cgroup_value("max\n", &b) == 0, "%s", "v2 'max' is no limit");
    TEST_CHECK(&tc, fpsim_mem_parse_cgroup_value("12 34\n", &b) == 0, "%s", "two numbers");
    TEST_CHECK(&tc, fpsim_mem_parse_cgroup_value("", &b) == 0, "%s", "empty");
}

static void formatting(void)
{
    static const struct {
        uint64_t bytes;
        const char *text;
    } cases[] = {
        {0, "0 bytes"},
        {999, "999 bytes"},
        {1000, "1.0 kB"},
        {14400000000ull, "14.4 GB"},
        {999949999, "999.9 MB"},
        {999950000, "1.0 GB"},
        {4398046511104ull, "4.4 TB"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char got[32];
        fpsim_mem_format(got, sizeof got, cases[i].bytes);
        TEST_CHECK(&tc, !strcmp(got, cases[i].text), "%llu bytes: '%s', want '%s'",
                   (unsigned long long)cases[i].bytes, got, cases[i].text);
    }
}

static void checking(void)
{
    uint64_t avail = 0;
    if (!fpsim_mem_available(&avail)) {
        printf("skip [mem] fpsim_mem_check: this machine says nothing about its memory\n");
        return;
    }
    TEST_CHECK(&tc, avail > 0, "%s", "available memory is 0");
    TEST_CHECK(&tc, fpsim_mem_check(1, "one byte", "") == FPSIM_OK, "%s", fpsim_last_error());
    const fpsim_status st = fpsim_mem_check(UINT64_MAX / 2, "a run", " (detail)");
    const char *msg = fpsim_last_error();
    TEST_CHECK(&tc, st == FPSIM_ENOMEM, "status %d", (int)st);
    TEST_CHECK(&tc,
               !strncmp(msg, "a run needs ", 12) && strstr(msg, " EB (detail); ") &&
                   strstr(msg, " is available") && !strchr(msg, '\n'),
               "message: %s", msg);
}

int main(void)
{
    meminfo_parsing();
    cgroup_parsing();
    formatting();
    checking();
    return test_summary(&tc);
}

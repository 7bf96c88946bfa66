/* test_cli_util.c: the shared CLI helpers (cli/cli_util.h): number, size and shape parsing
 * accept exactly what docs/cli.md says and reject the rest with one line; exit codes follow
 * the status families; option values in both spellings; the command line is quoted so that a
 * POSIX shell would split it back into the same words. */
#include <stdio.h>
#include <string.h>

#include "cli_util.h"
#include "test_util.h"

static test_counter tc = TEST_COUNTER_INIT("cli_util");

static void test_parsers(void)
{
    size_t r = 0, c = 0;
    TEST_CHECK(&tc, fpsim_cli_parse_shape("4096x1024", "s", &r, &c) == FPSIM_OK && r == 4096 && c == 1024, "%s", "RxC");
    TEST_CHECK(&tc, fpsim_cli_parse_shape("3X5", "s", &r, &c) == FPSIM_OK && r == 3 && c == 5, "%s", "RXC");
    TEST_CHECK(&tc, fpsim_cli_parse_shape("7,2", "s", &r, &c) == FPSIM_OK && r == 7 && c == 2, "%s", "R,C");
    const char *bad_shapes[] = {"", "4096", "x4", "4x", "4x4x4", "-1x4", "4x-1", "4 x4", "4x4 ", "axb", "+4x4"};
    for (size_t i = 0; i < sizeof bad_shapes / sizeof *bad_shapes; i++)
        TEST_CHECK(&tc, fpsim_cli_parse_shape(bad_shapes[i], "--shape", &r, &c) == FPSIM_EINVAL, "shape '%s'", bad_shapes[i]);
    TEST_CHECK(&tc, fpsim_cli_parse_shape("0x4", "--shape", &r, &c) == FPSIM_ESHAPE, "%s", "zero dim");
    TEST_CHECK(&tc, fpsim_cli_parse_shape("4294967296x4294967296", "--shape", &r, &c) == FPSIM_ESHAPE, "%s", "too big");
    TEST_CHECK(&tc, strstr(fpsim_last_error(), "--shape") != NULL, "message names the option: %s", fpsim_last_error());

    uint64_t u = 0;
    TEST_CHECK(&tc, fpsim_cli_parse_size("16K", "n", &u) == FPSIM_OK && u == 16384, "%s", "16K");
    TEST_CHECK(&tc, fpsim_cli_parse_size("3m", "n", &u) == FPSIM_OK && u == 3u << 20, "%s", "3m");
    TEST_CHECK(&tc, fpsim_cli_parse_size("1G", "n", &u) == FPSIM_OK && u == 1u << 30, "%s", "1G");
    TEST_CHECK(&tc, fpsim_cli_parse_size("12345", "n", &u) == FPSIM_OK && u == 12345, "%s", "plain");
    const char *bad_sizes[] = {"", "0", "-5", "5KB", "K", "1.5M", "99999999999999999999", "17179869184G"};
    for (size_t i = 0; i < sizeof bad_sizes / sizeof *bad_sizes; i++)
        TEST_CHECK(&tc, fpsim_cli_parse_size(bad_sizes[i], "n", &u) == FPSIM_EINVAL, "size '%s'", bad_sizes[i]);

    TEST_CHECK(&tc, fpsim_cli_parse_u64("18446744073709551615", "s", &u) == FPSIM_OK && u == UINT64_MAX, "%s", "u64 max");
    TEST_CHECK(&tc, fpsim_cli_parse_u64("0x10", "s", &u) == FPSIM_OK && u == 16, "%s", "u64 hex");
    TEST_CHECK(&tc, fpsim_cli_parse_u64("-1", "s", &u) == FPSIM_EINVAL, "%s", "u64 negative");
    TEST_CHECK(&tc, fpsim_cli_parse_u64("18446744073709551616", "s", &u) == FPSIM_EINVAL, "%s", "u64 overflow");
    /* strto* skip white space and negate after it: " -1" must not become 2^64-1 */
    TEST_CHECK(&tc, fpsim_cli_parse_u64(" -1", "s", &u) == FPSIM_EINVAL, "%s", "u64 space then minus");
    TEST_CHECK(&tc, fpsim_cli_parse_u64(" 5", "s", &u) == FPSIM_EINVAL, "%s", "u64 leading space");
    TEST_CHECK(&tc, fpsim_cli_parse_u64("010", "s", &u) == FPSIM_OK && u == 10, "%s", "u64 leading zero is decimal");
    TEST_CHECK(&tc, fpsim_cli_parse_u64("0x", "s", &u) == FPSIM_EINVAL, "%s", "u64 bare 0x");
    TEST_CHECK(&tc, fpsim_cli_parse_u64("0x-1", "s", &u) == FPSIM_EINVAL, "%s", "u64 0x then minus");
    TEST_CHECK(&tc, fpsim_cli_parse_shape("4x -2", "--shape", &r, &c) == FPSIM_EINVAL, "%s", "shape space minus");
    TEST_CHECK(&tc, fpsim_cli_parse_shape(" 4x2", "--shape", &r, &c) == FPSIM_EINVAL, "%s", "shape leading space");
    TEST_CHECK(&tc, fpsim_cli_parse_size(" -1", "--size", &u) == FPSIM_EINVAL, "%s", "size space minus");
    long l = 0;
    TEST_CHECK(&tc, fpsim_cli_parse_int("-3", "i", -5, 5, &l) == FPSIM_OK && l == -3, "%s", "int");
    TEST_CHECK(&tc, fpsim_cli_parse_int("6", "i", -5, 5, &l) == FPSIM_EINVAL, "%s", "int range");
    TEST_CHECK(&tc, fpsim_cli_parse_int("2x", "i", -5, 5, &l) == FPSIM_EINVAL, "%s", "int junk");
    TEST_CHECK(&tc, fpsim_cli_parse_int(" -3", "i", -5, 5, &l) == FPSIM_EINVAL, "%s", "int leading space");
    double d = 0;
    TEST_CHECK(&tc, fpsim_cli_parse_double("1e-4", "d", &d) == FPSIM_OK && d == 1e-4, "%s", "double");
    TEST_CHECK(&tc, fpsim_cli_parse_double("1e-4x", "d", &d) == FPSIM_EINVAL, "%s", "double junk");
    int t = -1;
    TEST_CHECK(&tc, fpsim_cli_parse_threads("auto", &t) == FPSIM_OK && t == 0, "%s", "threads auto");
    TEST_CHECK(&tc, fpsim_cli_parse_threads("8", &t) == FPSIM_OK && t == 8, "%s", "threads 8");
    TEST_CHECK(&tc, fpsim_cli_parse_threads("-2", &t) == FPSIM_EINVAL, "%s", "threads negative");
}

static void test_exit_codes(void)
{
    TEST_CHECK(&tc, fpsim_cli_exit_code(FPSIM_OK) == 0, "%s", "ok");
    const fpsim_status usage[] = {FPSIM_EINVAL, FPSIM_ENAME, FPSIM_ESHAPE, FPSIM_EFORMAT, FPSIM_ENODEV,
                                  FPSIM_EUNSUPPORTED, FPSIM_EDATA};
    for (size_t i = 0; i < sizeof usage / sizeof *usage; i++)
        TEST_CHECK(&tc, fpsim_cli_exit_code(usage[i]) == 2, "status %d -> 2", (int)usage[i]);
    const fpsim_status run[] = {FPSIM_EIO, FPSIM_ENOMEM, FPSIM_EINTERRUPTED};
    for (size_t i = 0; i < sizeof run / sizeof *run; i++)
        TEST_CHECK(&tc, fpsim_cli_exit_code(run[i]) == 1, "status %d -> 1", (int)run[i]);
}

static void test_take_value(void)
{
    char *argv[] = {"quantize", "--scheme", "nvfp4", "--out=x.h5", "--seed", NULL};
    int argc = 5, i = 1;
    const char *v = NULL;
    TEST_CHECK(&tc, fpsim_cli_take_value("q", argc, argv, &i, "--in", &v) == 0, "%s", "other option");
    TEST_CHECK(&tc, fpsim_cli_take_value("q", argc, argv, &i, "--scheme", &v) == 1 && i == 2 && !strcmp(v, "nvfp4"),
               "%s", "--scheme VALUE");
    i = 3;
    TEST_CHECK(&tc, fpsim_cli_take_value("q", argc, argv, &i, "--out", &v) == 1 && i == 3 && !strcmp(v, "x.h5"), "%s",
               "--out=VALUE");
    i = 3;
    TEST_CHECK(&tc, fpsim_cli_take_value("q", argc, argv, &i, "--o", &v) == 0, "%s", "prefix is not a match");
    i = 4;
    fprintf(stderr, "(expected error line follows)\n");
    TEST_CHECK(&tc, fpsim_cli_take_value("q", argc, argv, &i, "--seed", &v) == -1, "%s", "missing value");
}

/* A second --scheme would silently replace the first: refused, in either spelling, while a list
 * option (replay --recipe) takes any number. A value that merely starts like the option
 * (--schemes) is another option. */
static void test_take_value_twice(void)
{
    char *argv[] = {"quantize", "--scheme", "nvfp4", "--schemes=x", "--scheme=mxfp4", "--scheme", "a", NULL};
    int argc = 7, i = 4;
    const char *v = NULL;
    fprintf(stderr, "(expected error lines follow)\n");
    TEST_CHECK(&tc, fpsim_cli_take_value("q", argc, argv, &i, "--scheme", &v) == -1 && v && !*v, "%s",
               "--scheme=VALUE after --scheme VALUE");
    i = 5;
    TEST_CHECK(&tc, fpsim_cli_take_value("q", argc, argv, &i, "--scheme", &v) == -1, "%s", "third --scheme");
    i = 1;
    TEST_CHECK(&tc, fpsim_cli_take_value("q", argc, argv, &i, "--scheme", &v) == 1 && !strcmp(v, "nvfp4"), "%s",
               "the first occurrence is taken");
    i = 3;
    TEST_CHECK(&tc, fpsim_cli_take_value("q", argc, argv, &i, "--schemes", &v) == 1 && !strcmp(v, "x"), "%s",
               "--schemes is not --scheme");
    i = 5;
    TEST_CHECK(&tc, fpsim_cli_take_list_value("q", argc, argv, &i, "--scheme", &v) == 1 && i == 6 && !strcmp(v, "a"),
               "%s", "a list option repeats");
}

static void test_command_line(void)
{
    char *argv[] = {"quantize", "--scheme", "mxfp8-e4m3:rule=floor", "--in", "my file.npy", "--x", "it's", ""};
    char buf[256];
    size_t n = fpsim_cli_command_line(buf, sizeof buf, 8, argv);
    const char *want = "fpsim quantize --scheme mxfp8-e4m3:rule=floor --in 'my file.npy' --x 'it'\\''s' ''";
    TEST_CHECK(&tc, !strcmp(buf, want) && n == strlen(want), "command line '%s'", buf);
    char small[10];
    n = fpsim_cli_command_line(small, sizeof small, 8, argv);
    TEST_CHECK(&tc, n == strlen(want) && strlen(small) == 9 && !strncmp(small, want, 9), "truncated '%s'", small);
}

int main(void)
{
    test_parsers();
    test_exit_codes();
    test_take_value();
    test_take_value_twice();
    test_command_line();
    return test_summary(&tc);
}

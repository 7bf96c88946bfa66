/* test_robust_audit.c: regressions of the black-box audit of 2026-12-07, through the fpsim binary.
 *
 *  - a damaged HDF5 file made libhdf5 1.10 fault inside H5Aread (a variable-length string whose
 *    global-heap length was damaged: memcpy far past the buffer), and fpsim died by SIGSEGV: now
 *    one line "damaged HDF5 file", exit 2 (sim/h5_file.c, the fault guard of input files);
 *  - `mismatch --plot` printed HDF5's own error stacks and called a damaged dataset "missing";
 *  - .npy headers numpy refuses (an extra key; 'shape': (16), not a tuple) were read;
 *  - HDF5 data stored in other files (external storage, a virtual dataset) was read, and a
 *    dangling soft or external link was reported as "no dataset at its root";
 *  - inputs, models and captures larger than the machine's memory were allocated until the kernel killed
 *    fpsim: now refused up front with one line naming what is needed and what is available, exit
 *    1 (the sizes here are terabytes: refused on any machine, and none is allocated).
 * Every case: the exit status, exactly one stderr line with the expected words, no output left.
 * The damaged and unusual files are made here at run time (fpsim's writers and the HDF5 C API).
 *
 * usage: test_robust_audit PATH/TO/fpsim */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <hdf5.h>

#include "fpsim_h5.h"
#include "fpsim_npy.h"
#include "io/io_test_util.h"
#include "test_util.h"

static const char *fpsim_bin;
static char dir[1024];
static test_counter tc = TEST_COUNTER_INIT("robust audit");

static const char *in_dir(const char *name)
{
    static char path[2][1200];
    static int k;
    k ^= 1;
    snprintf(path[k], sizeof path[k], "%s/%s", dir, name);
    return path[k];
}

/* Run fpsim with `args` (NULL-terminated) in the scratch directory, stdin from /dev/null; stderr
 * into err[]. Returns the exit status, or -1 - signal when it died by a signal. */
static int run_fpsim(const char *const *args, char *err, size_t cap)
{
    char err_path[1200];
    snprintf(err_path, sizeof err_path, "%s/stderr.txt", dir);
    char *argv[32];
    int n = 0;
    argv[n++] = (char *)fpsim_bin;
    for (; args[n - 1] && n < 31; n++)
        argv[n] = (char *)args[n - 1];
    argv[n] = NULL;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        int fe = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int fo = open("/dev/null", O_WRONLY), fi = open("/dev/null", O_RDONLY);
        if (fe < 0 || fo < 0 || fi < 0 || chdir(dir) != 0) _exit(126);
        setenv("LSAN_OPTIONS", "detect_leaks=0", 1); /* HDF5 leaks on damaged files, not ours */
        dup2(fi, 0);
        dup2(fo, 1);
        dup2(fe, 2);
        execv(fpsim_bin, argv);
        _exit(127);
    }
    int status = -1;
    if (pid < 0 || waitpid(pid, &status, 0) != pid) status = -1;
    err[0] = '\0';
    FILE *f = fopen(err_path, "rb");
    if (f) {
        err[fread(err, 1, cap - 1, f)] = '\0';
        fclose(f);
    }
    remove(err_path);
    if (status == -1) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1 - (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

/* Exit `want`, one stderr line containing `needle`, nothing named like `output` left. */
static void expect(const char *label, const char *const *args, int want, const char *needle,
                   const char *output)
{
    char err[8192];
    const int rc = run_fpsim(args, err, sizeof err);
    TEST_CHECK(&tc, rc == want, "%s: exit %d, want %d (stderr: %.600s)", label, rc, want, err);
    TEST_CHECK(&tc, count_lines(err) == 1, "%s: %d stderr lines, want 1: %.600s", label, count_lines(err),
               err);
    TEST_CHECK(&tc, strstr(err, needle) != NULL, "%s: stderr lacks '%s': %.600s", label, needle, err);
    if (output)
        TEST_CHECK(&tc, io_dir_entries(dir, output) == 0, "%s: '%s' (or its temporary) left behind", label,
                   output);
}

/* ---- a damaged variable-length string: the fault guard ---- */

/* A file whose root attribute kind = "fpsim-mismatch" (a variable-length string, kept in the
 * file's global heap) has the length of that heap object damaged: the top byte of its 8-byte
 * little-endian size, just before the string's bytes, set to 4 (as the audit's one flipped byte
 * did). libhdf5 1.10.8 then copies ~2^58 bytes in H5Aread. */
static int write_faulting_h5(const char *name)
{
    fpsim_h5_file f;
    const size_t dims[2] = {2, 2};
    const double x[4] = {1, 2, 3, 4};
    fpsim_status st = fpsim_h5_create(&f, in_dir(name));
    if (!st) st = fpsim_h5_attr_string(f.id, "kind", "fpsim-mismatch");
    if (!st) st = fpsim_h5_write(f.id, "x", FPSIM_H5_F64, 2, dims, x, 0);
    if (st || fpsim_h5_commit(&f)) return -1;
    FILE *h = fopen(in_dir(name), "r+b");
    if (!h) return -1;
    static unsigned char buf[1 << 16];
    const size_t n = fread(buf, 1, sizeof buf, h);
    const char *needle = "fpsim-mismatch";
    long at = -1;
    for (size_t i = 8; i + strlen(needle) <= n && at < 0; i++)
        if (!memcmp(buf + i, needle, strlen(needle))) at = (long)i;
    if (at < 0 || fseek(h, at - 1, SEEK_SET) != 0 || fputc(0x04, h) == EOF) {
        fclose(h);
        return -1;
    }
    return fclose(h);
}

static void fault_guard(void)
{
    if (write_faulting_h5("fault.h5")) {
        TEST_CHECK(&tc, 0, "%s", "cannot make fault.h5");
        return;
    }
    const char *needle = "damaged HDF5 file 'fault.h5': the HDF5 library faulted";
    expect("mismatch --plot, faulting file",
           (const char *const[]){"mismatch", "--plot", "fault.h5", "--plots", "plots", NULL}, 2, needle,
           "plots");
    expect("replay --from, faulting file",
           (const char *const[]){"replay", "-q", "--no-plots", "--from", "fault.h5", "--out", "r.h5", NULL},
           2, needle, "r.h5");
    expect("mismatch --from, faulting file",
           (const char *const[]){"mismatch", "-q", "--from", "fault.h5", "--generator", "bf16", "--trainer",
                                 "bf16", "--out", "m.h5", NULL},
           2, needle, "m.h5");
    /* plot refuses to start without gnuplot (exit 1) before it opens the file */
    char err[4096];
    const char *const plot[] = {"plot", "-q", "fault.h5", "--outdir", "plots", NULL};
    if (run_fpsim(plot, err, sizeof err) == 1 && strstr(err, "gnuplot not found"))
        printf("skip [robust audit] plot of a faulting file: no gnuplot\n");
    else
        expect("plot, faulting file", plot, 2, needle, "plots");
}

/* ---- mismatch --plot: HDF5's messages silenced, a damaged dataset is not "missing" ---- */

/* A mismatch results file whose configs/run/mask is a link that opens nothing (a soft link to
 * no object): it exists, and it cannot be read. */
static int write_mismatch_unreadable_mask(const char *name)
{
    fpsim_h5_file f;
    const size_t dims[2] = {2, 4};
    const double g[8] = {-1, -1, -1, -1, -1, -1, -1, -1};
    const char *configs[1] = {"run"};
    hid_t grp;
    fpsim_status st = fpsim_h5_create(&f, in_dir(name));
    if (!st) st = fpsim_h5_attr_string(f.id, "kind", "fpsim-mismatch");
    if (!st) st = fpsim_h5_attr_int64(f.id, "layers", 1);
    if (!st) st = fpsim_h5_attr_strings(f.id, "configs", configs, 1);
    if (!st) st = fpsim_h5_group_create(&grp, f.id, "configs/run");
    if (!st) {
        st = fpsim_h5_write(grp, "g", FPSIM_H5_F64, 2, dims, g, 0);
        if (!st) st = fpsim_h5_write(grp, "p", FPSIM_H5_F64, 2, dims, g, 0);
        if (!st && H5Lcreate_soft("/configs/run/nothing", grp, "mask", H5P_DEFAULT, H5P_DEFAULT) < 0)
            st = FPSIM_EIO;
        H5Gclose(grp);
    }
    if (st) {
        fpsim_h5_discard(&f);
        return -1;
    }
    return fpsim_h5_commit(&f) ? -1 : 0;
}

static void mismatch_plot_messages(void)
{
    if (write_mismatch_unreadable_mask("mm_mask.h5")) {
        TEST_CHECK(&tc, 0, "%s", "cannot make mm_mask.h5");
        return;
    }
    expect("mismatch --plot, unreadable mask",
           (const char *const[]){"mismatch", "--plot", "mm_mask.h5", "--plots", "plots", NULL}, 2,
           "cannot read dataset configs/run/mask", "plots");
}

/* ---- .npy headers numpy refuses ---- */

/* A 4x4 float32 .npy whose 118-character header dict is `dict` (space padded). */
static int write_npy_header(const char *name, const char *dict)
{
    const size_t shape[2] = {4, 4};
    const float x[16] = {0};
    if (fpsim_npy_save(in_dir(name), FPSIM_NPY_F32, 2, shape, x)) return -1;
    FILE *f = fopen(in_dir(name), "r+b");
    if (!f) return -1;
    char text[117];
    memset(text, ' ', sizeof text);
    memcpy(text, dict, strlen(dict) < sizeof text ? strlen(dict) : sizeof text);
    fseek(f, 10, SEEK_SET);
    fwrite(text, 1, sizeof text, f);
    return fclose(f);
}

static void npy_headers(void)
{
    static const struct {
        const char *file, *dict, *needle;
    } cases[] = {
        {"extra.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (4, 4), 'extra': 1, }",
         "the key 'extra'"},
        {"notuple.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (16), }", "is not a tuple"},
        {"fo_int.npy", "{'descr': '<f4', 'fortran_order': 0, 'shape': (4, 4), }", "'fortran_order'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (write_npy_header(cases[i].file, cases[i].dict)) {
            TEST_CHECK(&tc, 0, "cannot make %s", cases[i].file);
            continue;
        }
        expect(cases[i].file,
               (const char *const[]){"quantize", "-q", "--scheme", "nvfp4", "--in", cases[i].file, "--out",
                                     "q.h5", NULL},
               2, cases[i].needle, "q.h5");
    }
    /* the same text with a 1-tuple is fine */
    write_npy_header("ok.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (4, 4,), }");
    char err[4096];
    const int rc = run_fpsim((const char *const[]){"quantize", "-q", "--scheme", "nvfp4", "--in", "ok.npy",
                                                   "--out", "ok.h5", NULL},
                             err, sizeof err);
    TEST_CHECK(&tc, rc == 0, "ok.npy ('shape': (4, 4,)): exit %d: %s", rc, err);
    remove(in_dir("ok.h5"));
}

/* ---- HDF5 data kept elsewhere, and links to nothing ---- */

/* A 16x64 float32 dataset "x" in `name`, made by `how`: "external" (its bytes in x.raw), "virtual"
 * (mapped from missing.h5), "soft" (a dangling soft link), "extlink" (a link into missing.h5). */
static int write_h5_kind(const char *name, const char *how)
{
    hid_t f = H5Fcreate(in_dir(name), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (f < 0) return -1;
    hsize_t dims[2] = {16, 64};
    hid_t space = H5Screate_simple(2, dims, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE);
    herr_t ok = 0;
    if (!strcmp(how, "external")) {
        static float raw[16 * 64];
        io_write_bytes(in_dir("x.raw"), raw, sizeof raw);
        ok = H5Pset_external(dcpl, "x.raw", 0, sizeof raw);
    } else if (!strcmp(how, "virtual")) {
        ok = H5Pset_virtual(dcpl, space, "missing.h5", "/x", space);
    } else if (!strcmp(how, "soft")) {
        ok = H5Lcreate_soft("/nowhere", f, "x", H5P_DEFAULT, H5P_DEFAULT);
    } else {
        ok = H5Lcreate_external("missing.h5", "/x", f, "x", H5P_DEFAULT, H5P_DEFAULT);
    }
    if (ok >= 0 && (!strcmp(how, "external") || !strcmp(how, "virtual"))) {
        hid_t d = H5Dcreate2(f, "x", H5T_IEEE_F32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
        ok = d < 0 ? -1 : H5Dclose(d);
    }
    H5Pclose(dcpl);
    H5Sclose(space);
    return H5Fclose(f) < 0 || ok < 0 ? -1 : 0;
}

static void h5_elsewhere(void)
{
    static const struct {
        const char *file, *how, *needle;
    } cases[] = {
        {"ext.h5", "external", "external storage is not read"},
        {"vds.h5", "virtual", "is a virtual dataset"},
        {"soft.h5", "soft", "soft link to '/nowhere'"},
        {"extlink.h5", "extlink", "external link to '/x' in file 'missing.h5'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (write_h5_kind(cases[i].file, cases[i].how)) {
            TEST_CHECK(&tc, 0, "cannot make %s", cases[i].file);
            continue;
        }
        expect(cases[i].file,
               (const char *const[]){"quantize", "-q", "--scheme", "nvfp4", "--in", cases[i].file, "--out",
                                     "q.h5", NULL},
               2, cases[i].needle, "q.h5");
        /* named with --dataset: the same real problem */
        expect(cases[i].file,
               (const char *const[]){"quantize", "-q", "--scheme", "nvfp4", "--in", cases[i].file,
                                     "--dataset", "x", "--out", "q.h5", NULL},
               2, cases[i].needle, "q.h5");
    }
}

/* ---- larger than the machine ---- */

/* A chunked 2^20 x 2^20 float32 dataset with no chunk written: a 4 TiB tensor in a tiny file. */
static int write_huge_declared(const char *name)
{
    hid_t f = H5Fcreate(in_dir(name), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (f < 0) return -1;
    hsize_t dims[2] = {1u << 20, 1u << 20}, chunk[2] = {16, 64};
    hid_t space = H5Screate_simple(2, dims, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 2, chunk);
    hid_t d = H5Dcreate2(f, "x", H5T_IEEE_F32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    const int ok = d >= 0;
    if (ok) H5Dclose(d);
    H5Pclose(dcpl);
    H5Sclose(space);
    return H5Fclose(f) < 0 || !ok ? -1 : 0;
}

/* A capture (docs/model.md) of a 200-layer, d=8192 model whose parameter datasets have the
 * spec's shapes but no chunk written: 173 billion parameters declared in a 10 kB file. */
static int write_huge_capture(const char *name)
{
    enum { L = 200, D = 8192, H = 64, KV = 8, F = 28672, V = 128000 };
    const struct {
        const char *name;
        int rank;
        hsize_t dims[3];
    } params[] = {
        {"params/attprojw", 3, {L, D, D}},
        {"params/downw", 3, {L, D, F}},
        {"params/gateupw", 3, {L, 2 * F, D}},
        {"params/lmheadw", 2, {V, D}},
        {"params/ln1w", 2, {L, D}},
        {"params/ln2w", 2, {L, D}},
        {"params/lnfw", 1, {D}},
        {"params/qkvw", 3, {L, (H + 2 * KV) * (D / H), D}},
        {"params/wte", 2, {V, D}},
    };
    hid_t f = H5Fcreate(in_dir(name), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (f < 0) return -1;
    int ok = fpsim_h5_attr_string(f, "kind", "fpsim-capture") == FPSIM_OK &&
             fpsim_h5_attr_int64(f, "schema_version", 1) == FPSIM_OK &&
             fpsim_h5_attr_string(f, "model", "layers=200,d=8192,heads=64,kv_heads=8,ffn=28672,vocab=128000,"
                                              "seq=16,batch=2") == FPSIM_OK;
    hid_t gcpl = H5Pcreate(H5P_LINK_CREATE);
    H5Pset_create_intermediate_group(gcpl, 1);
    for (size_t i = 0; ok && i < sizeof params / sizeof params[0]; i++) {
        hsize_t chunk[3] = {1, 1, 1};
        for (int k = 0; k < params[i].rank; k++) chunk[k] = params[i].dims[k] < 64 ? params[i].dims[k] : 64;
        hid_t space = H5Screate_simple(params[i].rank, params[i].dims, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE);
        H5Pset_chunk(dcpl, params[i].rank, chunk);
        hid_t d = H5Dcreate2(f, params[i].name, H5T_IEEE_F32LE, space, gcpl, dcpl, H5P_DEFAULT);
        ok = d >= 0;
        if (ok) H5Dclose(d);
        H5Pclose(dcpl);
        H5Sclose(space);
    }
    H5Pclose(gcpl);
    return H5Fclose(f) < 0 || !ok ? -1 : 0;
}

static void larger_than_memory(void)
{
    if (write_huge_capture("huge_capture.h5") == 0)
        expect("replay --from, a 173-billion-parameter capture",
               (const char *const[]){"replay", "-q", "--no-plots", "--from", "huge_capture.h5", "--out", "r.h5",
                                     NULL},
               1, "huge_capture.h5: loading the capture of the model (200 layers, d=8192", "r.h5");
    else
        TEST_CHECK(&tc, 0, "%s", "cannot make huge_capture.h5");
    if (write_huge_declared("huge.h5") == 0)
        expect("quantize, a 4 TiB declared input",
               (const char *const[]){"quantize", "-q", "--scheme", "nvfp4", "--in", "huge.h5", "--out",
                                     "q.h5", NULL},
               1, "input 'huge.h5' dataset 'x' (1048576x1048576 float32) needs ", "q.h5");
    else
        TEST_CHECK(&tc, 0, "%s", "cannot make huge.h5");
    expect("replay, a 1.9-trillion-parameter model",
           (const char *const[]){"replay", "-q", "--no-plots", "--pretrain", "0", "--steps", "1", "--recipe",
                                 "bf16", "--model", "layers=64,d=65536,heads=256,ffn=65536", "--out", "r.h5",
                                 NULL},
           1, " is available", "r.h5");
    expect("mismatch, a 240-billion-parameter model",
           (const char *const[]){"mismatch", "-q", "--generator", "bf16", "--trainer", "bf16", "--pretrain",
                                 "0", "--model", "layers=8,d=65536,heads=256,ffn=65536", "--out", "m.h5",
                                 NULL},
           1, " is available", "m.h5");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_robust_audit PATH/TO/fpsim\n");
        return 2;
    }
    static char bin[4096]; /* absolute: the runs start in the scratch directory */
    if (!realpath(argv[1], bin)) {
        fprintf(stderr, "no fpsim at %s\n", argv[1]);
        return 2;
    }
    fpsim_bin = bin;
    if (io_make_temp_dir(dir, sizeof dir, "robust_audit")) {
        fprintf(stderr, "cannot make a scratch directory\n");
        return 1;
    }
    fault_guard();
    mismatch_plot_messages();
    npy_headers();
    h5_elsewhere();
    larger_than_memory();
    io_remove_dir(dir);
    return test_summary(&tc);
}

/* commands.h: one entry point per `fpsim <command>`; each lives in cli/cmd_<command>.c.
 * A command returns the process exit status: 0 success, 1 a failure while running (I/O,
 * a mismatch found by verify), 2 bad usage or bad input (unknown name, malformed file). */
#ifndef FPSIM_CLI_COMMANDS_H
#define FPSIM_CLI_COMMANDS_H

int cmd_formats(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_quantize(int argc, char **argv);
int cmd_recipes(int argc, char **argv);
int cmd_replay(int argc, char **argv);
int cmd_mismatch(int argc, char **argv);
int cmd_gemm(int argc, char **argv);
int cmd_plot(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_bench(int argc, char **argv);

/* Sub-commands of `fpsim bench` and `fpsim verify`, one file each (cli/bench_*.c, verify_*.c). */
int bench_convert(int argc, char **argv);
int bench_quantize(int argc, char **argv);
int bench_quantize_gpu(int argc, char **argv); /* cli/bench_quantize_gpu.c, CUDA builds only */
int bench_replay(int argc, char **argv);
int bench_gemm(int argc, char **argv);
int verify_formats(int argc, char **argv);
int verify_gemm(int argc, char **argv);

/* cli/plot_gnuplot.c: check, before a long run, that plots can be written to `dir`: an existing
 * directory a file can be created in, or a missing one that can be created (kept when
 * keep_created, else removed again). Otherwise prints "fpsim CMD: OPTION 'DIR' ..." (one line)
 * and returns 2; 0 when it can. */
int plot_check_outdir(const char *cmd, const char *option, const char *dir, int keep_created);

#endif

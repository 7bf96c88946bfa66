#!/usr/bin/env bash
# ncu_stalls.sh: on the device, warp stall reasons (per issued instruction), instructions and L2
# requests/sectors of the kernels matching $1 (regex) in the bench cases named by the remaining
# arguments (--case options). Clocks left alone. Output: $OUT/ncu-stalls.txt (and to stdout, short).
set -u
cd "$(dirname "$0")/../.."
k=$1; shift
m=""
for r in barrier long_scoreboard short_scoreboard wait math_pipe_throttle lg_throttle mio_throttle \
    not_selected selected dispatch_stall drain branch_resolving no_instruction membar imc_miss tex_throttle; do
    m="$m,smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio"
done
m="${m#,},smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active"
m="$m,lts__t_requests_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read.sum"
m="$m,lts__t_requests_srcunit_tex_op_write.sum,lts__t_sectors_srcunit_tex_op_write.sum"
m="$m,dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum,launch__registers_per_thread"
m="$m,smsp__sass_thread_inst_executed_op_integer_pred_on.sum,smsp__sass_thread_inst_executed_op_fp32_pred_on.sum"
m="$m,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,smsp__inst_executed_op_shared_ld.sum"
timeout 150 ncu --clock-control none --kernel-name "regex:$k" --launch-count "${NCU_COUNT:-2}" --metrics "$m" \
    build-devonly/fpsim-device bench quantize --device gpu --reps 1 "$@" > "${OUT:-/tmp}/ncu-stalls.txt" 2>&1
grep -E "^  [a-z_ ]*void|ratio|inst_executed|requests|sectors|bytes|duration|registers|pct|op_|conflicts" \
    "${OUT:-/tmp}/ncu-stalls.txt" | sed -e 's/smsp__average_warps_issue_stalled_//' -e 's/_per_issue_active.ratio//' \
    -e 's/(<unnamed>::qargs, unsigned int, unsigned int).*//' | awk '{$1=$1; print}'

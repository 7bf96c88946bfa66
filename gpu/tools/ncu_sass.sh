#!/usr/bin/env bash
# ncu_sass.sh: on the device, the executed count of every SASS instruction of the first launch of
# the kernels matching $1 (regex) in the bench cases chosen by the remaining arguments (--case ...),
# from Nsight Compute's SourceCounters section. Clocks left alone. Output: $OUT/sass-$2.csv.gz,
# to be read here by gpu/tools/sass_profile.py (opcode mix per element, hottest straight runs).
#   NCU_COUNT=n  launches to profile (default 1); NCU_SKIP=n  matching launches to skip first.
set -u
cd "$(dirname "$0")/../.."
k=$1 label=$2
shift 2
rep=/tmp/ncu-sass-$label
rm -f "$rep.ncu-rep"
timeout 240 ncu --clock-control none --kernel-name "regex:$k" --launch-skip "${NCU_SKIP:-0}" \
    --launch-count "${NCU_COUNT:-1}" --section SourceCounters --section LaunchStats -o "$rep" \
    build-devonly/fpsim-device bench quantize --device gpu --reps 1 "$@" > "$rep.log" 2>&1
echo "ncu $label: rc=$? $(tail -1 "$rep.log")"
ncu -i "$rep.ncu-rep" --page source --csv --print-source sass 2> "$rep.err" | gzip > "${OUT:-/tmp}/sass-$label.csv.gz"
echo "source page $label: $(zcat "${OUT:-/tmp}/sass-$label.csv.gz" | wc -l) lines; $(head -c 300 "$rep.err")"

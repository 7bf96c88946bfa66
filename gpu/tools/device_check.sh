#!/usr/bin/env bash
# device_check.sh: one device call that checks the bundled build end to end, then times it against
# probe builds (runs 133-137 ran these steps).
#   here:   bash gpu/tools/device_final.sh pack; cp OTHER_BINARY .carry/fpsim-device-NAME (one per
#           build to time against, e.g. the build of the commit before)
#   there:  bash gpu/tools/device_check.sh LARGE "NAME..." [ROUNDS] [CASE...]   (carry [".carry"])
# Steps: ctest -L gpu; verify --device gpu (the sample); verify --device gpu --large --only LARGE;
# then gpu/tools/ab.sh "NAME..." ROUNDS CASE... (the bundled build is H there). Output under $OUT:
# summary.txt ctest.log verify.log verify-large.log, and ab.sh's ab.txt and verify-NAME.log.
set -u
usage() { sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; }
case "${1:-}" in -h | --help) usage; exit 0 ;; "") usage >&2; exit 2 ;; esac
[ $# -ge 2 ] || { usage >&2; exit 2; }
cd "$(dirname "$0")/../.."
large=$1 probes=$2
rounds=${3:-3}
[ -f .carry/bundle.tar.gz ] ||
    { echo "device_check.sh: no .carry/bundle.tar.gz (run gpu/tools/device_final.sh pack first)" >&2; exit 2; }
for b in $probes; do
    [ -x ".carry/fpsim-device-$b" ] || { echo "device_check.sh: no executable .carry/fpsim-device-$b" >&2; exit 2; }
done
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
# the CTest files name the build directory by its path here
if [ "$PWD" != /work/main ] && [ ! -e /work/main ]; then mkdir -p /work && ln -s "$PWD" /work/main; fi
OUT=${OUT:-/tmp/fpsim-check}
mkdir -p "$OUT"
tar xzf .carry/bundle.tar.gz
S=$OUT/summary.txt
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader; } > "$S"
t0=$(date +%s)
timeout 120 ctest --test-dir build-devonly -L gpu --output-on-failure > "$OUT/ctest.log" 2>&1
echo "ctest -L gpu rc=$? ($(( $(date +%s) - t0 )) s) $(grep -E 'tests passed|tests failed' "$OUT/ctest.log")" >> "$S"
timeout 120 build-devonly/fpsim-device verify --device gpu > "$OUT/verify.log" 2>&1
echo "verify rc=$? ($(( $(date +%s) - t0 )) s) $(tail -1 "$OUT/verify.log")" >> "$S"
timeout 150 build-devonly/fpsim-device verify --device gpu --large --only "$large" > "$OUT/verify-large.log" 2>&1
echo "verify --large --only $large rc=$? ($(( $(date +%s) - t0 )) s) $(tail -1 "$OUT/verify-large.log")" >> "$S"
shift $(( $# >= 3 ? 3 : 2 ))
OUT=$OUT bash gpu/tools/ab.sh "$probes" "$rounds" "$@" > /dev/null 2>&1
cat "$S"
grep -E "verify|all done" "$OUT/ab.txt"

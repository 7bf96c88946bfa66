#!/usr/bin/env bash
# ab.sh: one device call that compares probe builds of fpsim-device with the bundled build (H).
#   here:   bash gpu/tools/device_final.sh pack; cp PROBE_BINARY .carry/fpsim-device-NAME (one per
#           probe); the device tool runs, with carry [".carry"]:
#   there:  bash gpu/tools/ab.sh "NAME1 NAME2" [ROUNDS] [CASE...]
# Each probe first runs `verify --device gpu` (a probe that mismatches is not timed; AB_VERIFY=0
# skips that for probes verified before, e.g. an earlier build of main); then ROUNDS
# rounds (default 3) of `bench quantize --device gpu` over the cases (default: the four kernel-v8
# schemes), H and the probes in an order that alternates round by round, so that drift in the
# machine's speed falls on every build alike. Output: $OUT/ab.txt (the summary and every bf16 row),
# $OUT/verify-NAME.log. Runs 114-118 used per-run scripts of this shape (gpu/results/run108-scripts).
set -u
usage() { sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; }
case "${1:-}" in -h | --help) usage; exit 0 ;; "") usage >&2; exit 2 ;; esac
cd "$(dirname "$0")/../.."
probes=$1
rounds=${2:-3}
case "$rounds" in
'' | *[!0-9]* | 0) echo "ab.sh: ROUNDS must be a positive integer, not '$rounds'" >&2; exit 2 ;;
esac
# H: the bundle's build, or build-devonly/fpsim-device as it is there: unpacked by a call before on
# the same (warm) machine, or carried alone (carry [".carry", "build-devonly/fpsim-device"]: without
# the 25 MB bundle, two probes fit the 64 MiB carry; runs 216-217)
[ -f .carry/bundle.tar.gz ] || [ -x build-devonly/fpsim-device ] ||
    { echo "ab.sh: no .carry/bundle.tar.gz (run gpu/tools/device_final.sh pack first)" >&2; exit 2; }
for b in $probes; do
    [ -x ".carry/fpsim-device-$b" ] || { echo "ab.sh: no executable .carry/fpsim-device-$b" >&2; exit 2; }
done
shift $(( $# >= 2 ? 2 : 1 ))
cases=("$@")
[ ${#cases[@]} -gt 0 ] || cases=(nvfp4 mxfp4 mxfp8-e4m3 fp8-block)
OUT=${OUT:-/tmp/fpsim-ab}
mkdir -p "$OUT"
[ -f .carry/bundle.tar.gz ] && tar xzf .carry/bundle.tar.gz
cp build-devonly/fpsim-device .carry/fpsim-device-H
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
P=$OUT/ab.txt
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader; } > "$P"
t0=$(date +%s)
timed="H"
for b in $probes; do
    if [ "${AB_VERIFY:-1}" = 0 ]; then # a probe verified before (an earlier build of main)
        echo "verify $b skipped (AB_VERIFY=0)" >> "$P"
        timed="$timed $b"
        continue
    fi
    timeout 120 ".carry/fpsim-device-$b" verify --device gpu > "$OUT/verify-$b.log" 2>&1
    rc=$?
    echo "verify $b rc=$rc ($(( $(date +%s) - t0 )) s) $(tail -1 "$OUT/verify-$b.log")" >> "$P"
    if [ $rc = 0 ] && grep -q " 0 mismatches" "$OUT/verify-$b.log"; then timed="$timed $b"; fi
done
args=()
for c in "${cases[@]}"; do args+=(--case "$c"); done
read -r -a order <<< "$timed"
for i in $(seq 1 "$rounds"); do
    # the order reversed every other round and rotated by one build every two rounds
    n=${#order[@]}
    cur=()
    for k in $(seq 0 $((n - 1))); do cur+=("${order[$(( (k + (i - 1) / 2) % n ))]}"); done
    if [ $((i % 2)) = 0 ]; then cur=($(printf '%s\n' "${cur[@]}" | tac)); fi
    for b in "${cur[@]}"; do
        echo "== $b $i" >> "$P"
        timeout 60 ".carry/fpsim-device-$b" bench quantize --device gpu "${args[@]}" 2>&1 |
            grep -E "copy|bf16" >> "$P"
    done
done
echo "all done ($(( $(date +%s) - t0 )) s)" >> "$P"
cat "$P"

#!/usr/bin/env bash
# device_run.sh: everything fpsim checks and measures on the GPU machine, in one call.
#
#   bash gpu/device_run.sh            build, ctest -L gpu, verify --device gpu (2^24 float32 sample
#                                     per conversion; blocks), bench quantize --json, torch baselines
#   FULL=1 bash gpu/device_run.sh     verify over all 2^32 float32 inputs instead of the sample
#   FULL_AFTER=SECONDS                after the sample verify and the bench, also run the exhaustive
#                                     element sweep (verify --device gpu --full --no-blocks) with
#                                     that time limit (full.log)
#   ONLY=TEXT                         restrict verify to cases containing TEXT
#   SKIP=build,ctest,verify,bench,torch   steps to leave out (comma list)
#   BUILD=min                         skip the CMake attempt, build with gpu/tools/build_min.sh
#
# Writes logs under $OUT (default /tmp/fpsim-device): build.log, ctest.log, verify.log, bench.json,
# torch.json, summary.txt (at most 8 files come back from the device tool). Builds with CMake when
# the machine has GSL/HDF5/BLAS, else with gpu/tools/build_min.sh (formats/ + gpu/ + the verify and
# bench commands). Each step has a time limit so the whole run ends well inside 10 minutes.
set -u
OUT=${OUT:-/tmp/fpsim-device}
mkdir -p "$OUT"
SKIP=${SKIP:-}
skip() { case ",$SKIP," in *",$1,"*) return 0 ;; esac; return 1; }
T0=$(date +%s)
S="$OUT/summary.txt"
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv,noheader 2>&1
  nvcc --version | tail -1
  echo "cpus: $(nproc); commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
} > "$S"
cat "$S"

FPSIM=""
TESTDIR=""
if ! skip build; then
  if [ "${BUILD:-cmake}" = cmake ] && timeout 300 cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=Release -DFPSIM_CUDA=ON > "$OUT/build.log" 2>&1 &&
     timeout 300 cmake --build build-dev -j"$(nproc)" --target fpsim test_gpu_convert test_gpu_blocks >> "$OUT/build.log" 2>&1; then
    FPSIM=build-dev/fpsim
    TESTDIR=build-dev/tests
    echo "build: cmake ($(( $(date +%s) - T0 )) s)" | tee -a "$S"
  else
    echo "cmake build failed (see build.log); building fpsim-min with gpu/tools/build_min.sh" | tee -a "$S"
    if timeout 300 bash gpu/tools/build_min.sh build-min >> "$OUT/build.log" 2>&1; then
      FPSIM=build-min/fpsim-min
      TESTDIR=build-min
      echo "build: build_min.sh ($(( $(date +%s) - T0 )) s)" | tee -a "$S"
    else
      echo "build failed" | tee -a "$S"; tail -40 "$OUT/build.log"; exit 1
    fi
  fi
fi

# registers, stack frames (spills) of the kernels
if [ -n "$FPSIM" ] && command -v cuobjdump >/dev/null; then
  for o in $(find build-dev build-min -name 'convert.cu.o' -o -name 'block_quantize.cu.o' -o -name 'gpu_convert.cu.o' -o -name 'gpu_block_quantize.cu.o' 2>/dev/null); do
    cuobjdump --dump-resource-usage "$o" 2>/dev/null | grep -E "Function|REG" | paste - - |
      sed -E 's/.*Function ([^:]*):.*REG:([0-9]+) STACK:([0-9]+).*/\2 regs \3 stack \1/' | sort -u | head -12
  done >> "$S"
fi

if ! skip verify; then
  args=(verify --device gpu)
  [ "${FULL:-0}" = 1 ] && args+=(--full)
  [ -n "${ONLY:-}" ] && args+=(--only "$ONLY")
  t=$(date +%s)
  timeout "${VERIFY_LIMIT:-270}" "$FPSIM" "${args[@]}" > "$OUT/verify.log" 2>&1
  rc=$?
  echo "verify: rc=$rc ($(( $(date +%s) - t )) s); $(tail -1 "$OUT/verify.log")" | tee -a "$S"
  grep -E "^(device|fpsim)" "$OUT/verify.log" >> "$S"
  # rows whose mismatch column (chars 73-83) is not 0: mismatches and skips
  awk '{ m = substr($0, 73, 11); gsub(/ /, "", m); if (m != "" && m != "0" && m != "mismatches" && length($0) > 80) print }' "$OUT/verify.log" | head -60 >> "$S"
fi

if ! skip bench; then
  t=$(date +%s)
  timeout 150 "$FPSIM" bench quantize --device gpu --json > "$OUT/bench.json" 2>> "$OUT/bench.json.err"
  echo "bench: rc=$? ($(( $(date +%s) - t )) s)" | tee -a "$S"
  python3 - "$OUT/bench.json" >> "$S" 2>&1 <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print(f"copy {d['copy']['gbps']} GB/s")
for r in d["results"]:
    print(f"{r['case']:36s} {r['input']:4s} {r['axis']:4s} {r['amax']:5s} {r['gbps']:7.0f} GB/s {100*r['frac_of_copy']:5.1f}%")
PY
fi

if ! skip torch; then
  t=$(date +%s)
  timeout 150 python3 gpu/bench_torch.py > "$OUT/torch.json" 2> "$OUT/torch.err"
  echo "torch: rc=$? ($(( $(date +%s) - t )) s)" | tee -a "$S"
  python3 - "$OUT/torch.json" >> "$S" 2>&1 <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print(f"torch {d['torch']} copy {d['copy']['gbps']} GB/s")
for r in d["results"]:
    print(f"{r['case']:34s} {r['mode']:7s} " + (f"{r['gbps']:7.0f} GB/s" if 'gbps' in r else r.get('error', '')))
PY
fi

if [ -n "${FULL_AFTER:-}" ] && [ -n "$FPSIM" ]; then
  t=$(date +%s)
  fargs=(verify --device gpu --full --no-blocks)
  [ -n "${ONLY:-}" ] && fargs+=(--only "$ONLY")
  timeout "$FULL_AFTER" "$FPSIM" "${fargs[@]}" > "$OUT/full.log" 2>&1
  rc=$?
  echo "verify --full: rc=$rc ($(( $(date +%s) - t )) s); $(grep -c '^f32->' "$OUT/full.log") float32 rows done; $(tail -1 "$OUT/full.log")" | tee -a "$S"
  awk '{ m = substr($0, 73, 11); gsub(/ /, "", m); if (m != "" && m != "0" && m != "mismatches" && length($0) > 80) print }' "$OUT/full.log" | head -40 >> "$S"
fi

if ! skip ctest; then
  t=$(date +%s)
  if [ "$TESTDIR" = build-dev/tests ]; then
    (cd build-dev && timeout 200 ctest -L gpu --output-on-failure) > "$OUT/ctest.log" 2>&1
  else
    { timeout 100 "$TESTDIR/test_gpu_convert"; echo "test_gpu_convert rc=$?"; timeout 100 "$TESTDIR/test_gpu_blocks"; echo "test_gpu_blocks rc=$?"; } > "$OUT/ctest.log" 2>&1
  fi
  echo "ctest: rc=$? ($(( $(date +%s) - t )) s); $(grep -E 'tests passed|rc=' "$OUT/ctest.log" | tr '\n' ' ')" | tee -a "$S"
fi
echo "total: $(( $(date +%s) - T0 )) s" | tee -a "$S"
cat "$S"

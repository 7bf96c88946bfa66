#!/usr/bin/env bash
# device_check.sh: one device call that checks the bundled build end to end, then times it against
# probe builds (runs 133-138 ran these steps).
#   here:   bash gpu/tools/device_final.sh pack; cp OTHER_BINARY .carry/fpsim-device-NAME (one per
#           build to time against, e.g. the build of the commit before)
#   there:  bash gpu/tools/device_check.sh LARGE "NAME..." [ROUNDS] [CASE...]   (carry [".carry"])
# Steps: device_final.sh run's ctest, verify and large steps (ctest -L gpu; the sample verify;
# verify --large --only W for each word W of LARGE), then gpu/tools/ab.sh "NAME..." ROUNDS CASE... (the bundled build is
# H there). Output under $OUT: summary.txt ctest.log verify.log verify-large.log, and ab.sh's ab.txt
# and verify-NAME.log.
set -u
usage() { sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; }
case "${1:-}" in -h | --help) usage; exit 0 ;; "") usage >&2; exit 2 ;; esac
[ $# -ge 2 ] || { usage >&2; exit 2; }
cd "$(dirname "$0")/../.."
large=$1 probes=$2
rounds=${3:-3}
die() { echo "device_check.sh: $*" >&2; exit 2; }
[ -f .carry/bundle.tar.gz ] || die "no .carry/bundle.tar.gz (run gpu/tools/device_final.sh pack first)"
for b in $probes; do
    [ -x ".carry/fpsim-device-$b" ] || die "no executable .carry/fpsim-device-$b"
done
export OUT=${OUT:-/tmp/fpsim-check}
STEPS="ctest verify large" LARGE=$large bash gpu/tools/device_final.sh run
shift $(( $# >= 3 ? 3 : 2 ))
bash gpu/tools/ab.sh "$probes" "$rounds" "$@" > /dev/null 2>&1
grep -E "verify|all done" "$OUT/ab.txt"

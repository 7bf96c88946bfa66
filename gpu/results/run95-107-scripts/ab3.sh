#!/usr/bin/env bash
# run 100: pairshfl against HEAD (run97) on the cols cases with TL > 1, alternated 4 times
set -u
C="--case mxfp8-e4m3 --case fp8-block --case mxfp4"
for i in 1 2 3 4; do
  for b in run97 pairshfl; do echo "== $b $i"; .carry/fpsim-device-$b bench quantize --device gpu $C 2>&1 | grep -E " cols "; done
done > $OUT/ab.txt
cat $OUT/ab.txt

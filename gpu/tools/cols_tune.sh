# device: the columnwise (kernel v8) bench cases only
build-devonly/fpsim-device bench quantize --device gpu --json --case mxfp8-e4m3 --case fp8-block --case rht=1 --case nvfp4 > $OUT/bcols.json 2>&1
python3 -c "
import json;d=json.load(open('$OUT/bcols.json'))
for r in d['results']:
  if r['axis']=='cols': print('%-32s %-5s %-6s %8.1f %.3f'%(r['case'],r['input'],r['amax'],r['gbps'],r['frac_of_copy']))
"

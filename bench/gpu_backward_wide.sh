#!/bin/bash
# The sm_90a backward at every head dim of the library (D = 64, 96, 128,
# 192, 256 and 192/128) on the device machine, as run on 2026-12-07
# (docs/backward.md#wide-head-dims-on-wgmma): float64 checks in bf16 and
# f16, compute-sanitizer memcheck, racecheck and synccheck over the first
# three checks of D = 256, then the benchmark against PyTorch's flash (FA2)
# and cuDNN backward. Build the kernels here first:
#   S=kernels/library.json; tiled-attn-compile --spec=$S --out-dir=.gpu/s18 \
#     --entry=$(tiled-attn-compile --spec=$S --list | grep '^sdpa_bwd_sm_90a_' | paste -sd,)
# and carry .gpu/s18 (KERNELS). Results under $OUT/backward.
set -u -o pipefail
K=${KERNELS:-.gpu/s18}
R=${OUT:-bench/results}/backward
mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
rc=0
for dtype in bf16 f16; do
  timeout 170 python3 bench/check_backward.py --kernels $K --arch sm_90a --out $R --dtype $dtype \
    --check-only > $R/check-$dtype.log 2>&1 || rc=1
  grep -v "^{" $R/check-$dtype.log | tail -2
done
# (The sanitizers over D = 256's kernels only.)
mkdir -p /tmp/d256 && python3 -c "
import json, shutil
m = json.load(open('$K/manifest.json'))
m['kernels'] = [k for k in m['kernels'] if k.get('head_dim') == 256 and k['dtype'] == 'bf16']
for k in m['kernels']:
    for f in [k['ptx'], *k['cubin'].values()]:
        shutil.copy('$K/' + f, '/tmp/d256/')
json.dump(m, open('/tmp/d256/manifest.json', 'w'))"
for tool in memcheck racecheck synccheck; do
  timeout 75 compute-sanitizer --tool $tool --report-api-errors no --kernel-name kns=sdpa_bwd \
    python3 bench/check_backward.py --kernels /tmp/d256 --arch sm_90a --out /tmp/sanitize \
    --check-only --cases 3 2>&1 | tail -3 | tee $R/sanitizer-$tool.log
done
timeout 540 python3 bench/check_backward.py --kernels $K --arch sm_90a --out $R --dtype bf16 \
  --cases 1 --rounds ${ROUNDS:-3} > $R/bench-bf16.log 2>&1 || rc=1
tail -2 $R/bench-bf16.log
exit $rc

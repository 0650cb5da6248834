#!/usr/bin/env bash
# SM busy-time spread (the tail) of causal f16 D=128 kernels, per library:
#   bench/ncu_tail.sh LIB...
# Prints Nsight Compute's duration and sm__cycles_active mean/max/min for
# the 4th launch at S=4096 and S=16384 (B*S = 16384, H*D = 2048).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export PYTHONPATH=$PWD/python
for lib in "$@"; do for s in 4096 16384; do
  echo "== $lib S=$s"
  ncu -k regex:sdpa_fwd --launch-skip 3 --launch-count 1 \
    --metrics gpu__time_duration.sum,sm__cycles_active.avg,sm__cycles_active.max,sm__cycles_active.min \
    python3 - "$lib" "$s" <<'PY' 2>&1 | grep -E "duration|cycles_active"
import sys, torch
from tiled_attn import KernelLibrary, sdpa
lib, s = KernelLibrary.load(sys.argv[1]), int(sys.argv[2])
q, k, v = (torch.randn(16384 // s, 16, s, 128, device="cuda", dtype=torch.float16) for _ in range(3))
for _ in range(4):
    sdpa(q, k, v, causal=True, library=lib)
torch.cuda.synchronize()
PY
done; done

#!/bin/bash
# The score- and mask-function kernels on a GPU in one call (issue 37):
# functions_smoke.py under compute-sanitizer (memcheck, racecheck) on both
# libraries, the float64 checks of the sm_80 kernels, the GPU test suites,
# and bench_functions.py (checks and timings) on the sm_90a library.
#
#   OUT=DIR [CHECK_ONLY=1] bench/gpu_functions.sh SM90A_LIBRARY SM80_LIBRARY RUNTIME_SO
#
# CHECK_ONLY=1: bench_functions.py's checks on the sm_90a library, no timings.
# Everything goes into $OUT/functions.log as it happens, each step under its
# own time limit (a kernel that hangs costs its step, and the call keeps
# what ran before it).
#
# Built on the build machine, e.g. into the ignored .gpu/ folder:
#   tiled-attn-compile --spec=kernels/library.json --targets=sm_90a --out-dir=.gpu/v9/kernels --prune
#   tiled-attn-compile --spec=kernels/library.json --targets=sm_80:none+mask,... --out-dir=.gpu/v9-80/kernels --prune
set -x
cd "$(dirname "$0")/.."
L=$(realpath "$1") L80=$(realpath "$2")
export PYTHONPATH=$PWD/python TILED_ATTN_RUNTIME=$(realpath "$3") PYTHONUNBUFFERED=1
: "${OUT:?set OUT to the results folder}"
exec > >(tee "$OUT/functions.log") 2>&1
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 60 python3 bench/functions_smoke.py --library "$L" > "$OUT/smoke.txt" 2>&1
tail -2 "$OUT/smoke.txt"
for lib in "$L" "$L80"; do
  for tool in memcheck racecheck; do
    echo "== $tool $lib"
    timeout 150 compute-sanitizer --tool $tool python3 bench/functions_smoke.py --library "$lib" 2>&1 | tail -3
  done
done > "$OUT/sanitizers.txt" 2>&1
cat "$OUT/sanitizers.txt"
timeout 120 python3 bench/bench_functions.py --library "$L80" --check-only --out "$OUT/sm80" > "$OUT/check80.txt" 2>&1
tail -3 "$OUT/check80.txt"
TILED_ATTN_KERNELS=$L timeout 200 python3 -m pytest -q -x python/tests/test_torch_gpu.py \
  python/tests/test_transformers_gpu.py > "$OUT/gpu-tests.txt" 2>&1
tail -5 "$OUT/gpu-tests.txt"
timeout 300 python3 bench/bench_functions.py --library "$L" --out "$OUT" --rounds 5 \
  ${CHECK_ONLY:+--check-only} > "$OUT/bench.txt" 2>&1
tail -40 "$OUT/bench.txt"

#!/bin/bash
# The bias and mask tensor kernels (PyTorch's attn_mask, float and bool) of
# a new sm_90a library on a GPU, in two calls (issue 37):
#
#   OUT=DIR bench/gpu_mask_tensors.sh ab|checks|ncu BEFORE AFTER RUNTIME_SO STEM
#
# "ab" (about 4 minutes): the interleaved A/B of BEFORE and AFTER on the
# bias and mask kernels, AFTER's plain kernel in the same rounds
# (bench_functions_ab.py, bf16, D = 128, S = 4k and 16k), then bench_functions.py's float64 checks of
# every function kernel of AFTER. "checks" (about 7 minutes):
# functions_smoke.py under compute-sanitizer memcheck and racecheck, and the
# GPU test suites, on AFTER. "ncu": Nsight Compute on AFTER's bias kernel
# (S = 4096, ncu_functions.sh: metrics and stall samples in $OUT/$STEM-ncu.txt).
#
# BEFORE needs the sm_90a bf16 D = 128 bias and mask kernels; AFTER
# is a whole sm_90a library. Each step under its own time limit; the log
# goes to $OUT/$STEM-$PART.log as it happens.
set -x
cd "$(dirname "$0")/.."
PART=$1 B=$(realpath "$2") N=$(realpath "$3") RT=$(realpath "$4") STEM=$5
: "${OUT:?set OUT to the results folder}"
export PYTHONPATH=$PWD/python TILED_ATTN_RUNTIME=$RT PYTHONUNBUFFERED=1
exec > >(tee "$OUT/$STEM-$PART.log") 2>&1
nvidia-smi --query-gpu=name --format=csv,noheader
if [ "$PART" = ab ]; then
  timeout 170 python3 bench/bench_functions_ab.py --before "$B" --after "$N" --stem "$STEM" \
    --cases bias,bias-causal,mask,mask-causal --plain "$N" --rounds 5 --out "$OUT"
  timeout 70 python3 bench/bench_functions.py --library "$N" --check-only --out "$OUT/sm90a" \
    > "$OUT/$STEM-check-functions.txt" 2>&1
  tail -3 "$OUT/$STEM-check-functions.txt"
elif [ "$PART" = ncu ]; then
  CASES=bias timeout 240 bash bench/ncu_functions.sh "$N" 4096 "$STEM-ncu"
else
  for tool in memcheck racecheck; do
    echo "== $tool"
    timeout 150 compute-sanitizer --tool $tool python3 bench/functions_smoke.py --library "$N" 2>&1 | tail -3
  done > "$OUT/$STEM-sanitizers.txt" 2>&1
  cat "$OUT/$STEM-sanitizers.txt"
  TILED_ATTN_KERNELS=$N timeout 230 python3 -m pytest -q -x python/tests/test_torch_gpu.py \
    python/tests/test_transformers_gpu.py > "$OUT/$STEM-gpu-tests.txt" 2>&1
  tail -5 "$OUT/$STEM-gpu-tests.txt"
fi

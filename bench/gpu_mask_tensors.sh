#!/usr/bin/env bash
# PyTorch's attn_mask kernels (the bias and mask functions, sm_90a) on a
# GPU in one call: an interleaved A/B of two libraries on the non-causal
# bias and mask cases (bench_functions_ab.py), then Nsight Compute on the
# second library's bias kernel (bf16, D = 128, S = 4096: ncu_functions.sh,
# its metrics and stall samples into $OUT/$STEM-ncu.txt).
#
#   OUT=DIR bench/gpu_mask_tensors.sh BEFORE_LIB AFTER_LIB RUNTIME_SO STEM
#
# Built on the build machine into the ignored .gpu/ folder, e.g.
#   tiled-attn-compile --spec=kernels/library.json \
#     --targets=sm_90a:none+bias,sm_90a:none+mask --out-dir=.gpu/am --prune
set -x
cd "$(dirname "$0")/.."
B=$(realpath "$1") A=$(realpath "$2")
export PYTHONPATH=$PWD/python TILED_ATTN_RUNTIME=$(realpath "$3")
STEM=$4
: "${OUT:?set OUT to the results folder}"
# Everything into $OUT/$STEM.log as it happens (a call cut off at its limit
# keeps what ran), each step under its own time limit.
exec > >(tee "$OUT/$STEM.log") 2>&1
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 300 python3 bench/bench_functions_ab.py --before "$B" --after "$A" --stem "$STEM" \
  --cases "${CASES:-bias,mask}" --out "$OUT" --rounds 5
CASES=bias timeout 240 bash bench/ncu_functions.sh "$A" 4096 "$STEM-ncu"

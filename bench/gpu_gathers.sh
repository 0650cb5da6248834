#!/usr/bin/env bash
# A change to how kernels read captured tensors (tile.gather), on a GPU in
# one call: an interleaved A/B of the libraries before and after it on the
# bias, mask and document cases (bench_functions_ab.py), the float64 checks
# of every function kernel of the sm_90a and sm_80 libraries after it, the
# GPU test suite (decode and split-KV merges included) and memcheck of the
# function kernels. Everything into $OUT/gathers.log as it runs, each step
# under its own time limit.
#
#   OUT=DIR bench/gpu_gathers.sh BEFORE_SM90A AFTER_SM90A AFTER_SM80 RUNTIME_SO STEM
#
# Built on the build machine into the ignored .gpu/ folder, e.g.
#   tiled-attn-compile --spec=kernels/library.json --targets=sm_90a --out-dir=.gpu/new9/kernels --prune
# The run of 2026-12-02 (docs/functions.md, "Why the tensors stay slow"):
# BEFORE from main, AFTER and AFTER_SM80 with
# bench/results/functions/contiguous-gathers_2026-12-02.patch applied (vector
# loads of a thread's column pairs); measured slower, not landed.
set -x
cd "$(dirname "$0")/.."
B=$(realpath "$1") A=$(realpath "$2") A80=$(realpath "$3")
export PYTHONPATH=$PWD/python TILED_ATTN_RUNTIME=$(realpath "$4") PYTHONUNBUFFERED=1
STEM=$5
: "${OUT:?set OUT to the results folder}"
exec > >(tee "$OUT/gathers.log") 2>&1
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 240 python3 bench/bench_functions_ab.py --before "$B" --after "$A" --stem "$STEM" \
  --cases "${CASES:-bias,mask,bias-causal,mask-causal,document}" --out "$OUT" --rounds 5
timeout 100 python3 bench/bench_functions.py --library "$A" --check-only --out "$OUT/sm90a" | tail -4
TILED_ATTN_KERNELS=$A timeout 120 python3 -m pytest -q -x python/tests/test_torch_gpu.py 2>&1 | tail -4
timeout 80 python3 bench/bench_functions.py --library "$A80" --check-only --out "$OUT/sm80" | tail -4
for lib in "$A" "$A80"; do
  timeout 45 compute-sanitizer --tool memcheck python3 bench/functions_smoke.py --library "$lib" 2>&1 | tail -3
done

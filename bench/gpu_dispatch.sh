#!/usr/bin/env bash
# PyTorch's SDPA dispatch and context parallelism on the GPU (issue 39), run on
# the device machine from the repository root with what was built here:
#   KERNELS  a kernel library with the forward and backward kernels the tests
#            use (default .gpu/train);
#   RUNTIME  libtiled_attn_runtime.so (default .gpu/libtiled_attn_runtime.so).
# Steps: the dispatch's CPU tests on the machine's PyTorch, its GPU tests,
# the backward's GPU tests, compute-sanitizer memcheck over a few of them, context parallelism over the
# GPUs (bench/context_parallel.py under torchrun; with one GPU, its check
# over gloo with two ranks on it), the Llama training step with the
# sdpa_installed path (unless CHECK_ONLY=1). Results under $OUT (default
# bench/results): dispatch/, context-parallel/, llama-train/.
set -u -o pipefail
OUT=${OUT:-bench/results}
mkdir -p "$OUT/dispatch" "$OUT/context-parallel" "$OUT/llama-train"
export PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}"
export TILED_ATTN_KERNELS="$PWD/${KERNELS:-.gpu/train}"
export TILED_ATTN_RUNTIME="$PWD/${RUNTIME:-.gpu/libtiled_attn_runtime.so}"
rc=0
step() { echo; echo "=== $* ($(date +%T))"; }
passed() { grep -q -E "passed" "$1" && ! grep -q -E "[0-9]+ failed|[0-9]+ error" "$1" || rc=1; }

step device
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 -c "import torch, transformers; print('torch', torch.__version__, 'transformers', transformers.__version__)"
GPUS=$(nvidia-smi -L | wc -l)

step "dispatch tests (CPU stand-ins, then the GPU)"
(cd python && python3 -m pytest -q -p no:cacheprovider tests/test_dispatch.py tests/test_dispatch_gpu.py 2>&1 | tail -30) \
  | tee "$OUT/dispatch/pytest-dispatch.log"
passed "$OUT/dispatch/pytest-dispatch.log"

step "backward GPU tests (D = 96 kernels new)"
(cd python && python3 -m pytest -q -p no:cacheprovider tests/test_backward_gpu.py 2>&1 | tail -30) \
  | tee "$OUT/dispatch/pytest-backward-gpu.log"
passed "$OUT/dispatch/pytest-backward-gpu.log"

step "compute-sanitizer memcheck, two dispatch tests and the D = 96 backward"
timeout 300 compute-sanitizer --tool memcheck --report-api-errors no \
  python3 -m pytest -q -p no:cacheprovider python/tests/test_dispatch_gpu.py \
  -k "${SANITIZE_K:-d128_causal and bf16 or flash_attention_ops}" 2>&1 | tail -5 \
  | tee "$OUT/dispatch/sanitizer-memcheck.log"
grep -q -E "ERROR SUMMARY: 0 errors" "$OUT/dispatch/sanitizer-memcheck.log" || rc=1
timeout 300 compute-sanitizer --tool memcheck --report-api-errors no --kernel-name kns=sdpa_bwd \
  python3 -m pytest -q -p no:cacheprovider python/tests/test_backward_gpu.py -k "d96" 2>&1 \
  | tail -5 | tee "$OUT/dispatch/sanitizer-memcheck-d96.log"
grep -q -E "ERROR SUMMARY: 0 errors" "$OUT/dispatch/sanitizer-memcheck-d96.log" || rc=1

step "compute-sanitizer racecheck and synccheck, backward kernels (one varlen window case)"
for tool in racecheck synccheck; do
  timeout 200 compute-sanitizer --tool $tool --report-api-errors no --kernel-name kns=sdpa_bwd \
    python3 -m pytest -q -p no:cacheprovider python/tests/test_backward_gpu.py \
    -k "test_sdpa_varlen_gradients_against_float64 and window_bottom_right and dtype0" 2>&1 | tail -4 \
    | tee "$OUT/dispatch/sanitizer-$tool-backward.log"
  grep -q -E "1 passed" "$OUT/dispatch/sanitizer-$tool-backward.log" || rc=1
  grep -q -E "(ERROR|RACECHECK) SUMMARY: 0 (errors|hazards)" "$OUT/dispatch/sanitizer-$tool-backward.log" || rc=1
done

step "context parallelism"
if [ "$GPUS" -ge 2 ]; then
  timeout 500 torchrun --standalone --nproc-per-node "$GPUS" bench/context_parallel.py \
    --out "$OUT/context-parallel" ${CP_ARGS:-} 2>&1 | grep -v "^W1\|^I1\|NCCL INFO" | tail -30 || rc=1
else
  timeout 300 torchrun --standalone --nproc-per-node 2 bench/context_parallel.py --backend gloo \
    --seqs 8192 --rounds 1 --out "$OUT/context-parallel" 2>&1 | tail -30 || rc=1
fi

if [ "${CHECK_ONLY:-0}" != 1 ]; then
  step "Llama training step"
  timeout 400 python3 bench/llama_train.py --out "$OUT/llama-train" ${TRAIN_ARGS:---quick} 2>&1 | tail -30 || rc=1
fi
step done
exit $rc

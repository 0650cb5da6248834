#!/usr/bin/env bash
# Training through tiled_attn on a GPU (issue 39): the backward pass from
# Python (autograd over the runtime's ta_sdpa_backward), run on the device
# machine from the repository root with what was built here:
#   KERNELS  a kernel library holding the forward kernels the tests use and
#            the backward's (default .gpu/train; built with
#            tiled-attn-compile --spec=kernels/library.json --entry=...);
#   RUNTIME  libtiled_attn_runtime.so (default .gpu/libtiled_attn_runtime.so).
# Steps: the GPU tests of the backward (gradients against float64,
# torch.compile, CUDA graphs, bad input), the transformers training test,
# the earlier GPU tests of the op (no regression), compute-sanitizer
# memcheck over a few backward tests, and the Llama training step
# (bench/llama_train.py). Results under $OUT/llama-train and
# $OUT/backward (default bench/results).
set -u -o pipefail
OUT=${OUT:-bench/results}
mkdir -p "$OUT/llama-train" "$OUT/backward"
export PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}"
export TILED_ATTN_KERNELS="$PWD/${KERNELS:-.gpu/train}"
export TILED_ATTN_RUNTIME="$PWD/${RUNTIME:-.gpu/libtiled_attn_runtime.so}"
rc=0
step() { echo; echo "=== $* ($(date +%T))"; }

step device
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 -c "import torch, transformers; print('torch', torch.__version__, 'transformers', transformers.__version__)"

step "backward GPU tests"
(cd python && python3 -m pytest -q -p no:cacheprovider tests/test_backward_gpu.py 2>&1 | tail -30) \
  | tee "$OUT/backward/pytest-backward-gpu.log"
grep -q -E "passed" "$OUT/backward/pytest-backward-gpu.log" && \
  ! grep -q -E "[0-9]+ failed|error" "$OUT/backward/pytest-backward-gpu.log" || rc=1

step "transformers training test"
(cd python && python3 -m pytest -q -p no:cacheprovider tests/test_transformers_gpu.py \
  -k training 2>&1 | tail -15)

step "the op's earlier GPU tests"
(cd python && python3 -m pytest -q -p no:cacheprovider tests/test_torch_gpu.py 2>&1 | tail -15)

step "compute-sanitizer memcheck, the backward tests' first cases"
timeout 400 compute-sanitizer --tool memcheck --report-api-errors no --kernel-name kns=sdpa_bwd \
  python3 -m pytest -q -p no:cacheprovider -x python/tests/test_backward_gpu.py \
  -k "${SANITIZE_K:-float64 and bf16}" 2>&1 | tail -5 | tee "$OUT/backward/sanitizer-memcheck-runtime.log"
grep -q -E "ERROR SUMMARY: 0 errors" "$OUT/backward/sanitizer-memcheck-runtime.log" || rc=1

if [ "${CHECK_ONLY:-0}" != 1 ]; then
  step "Llama training step"
  python3 bench/llama_train.py --out "$OUT/llama-train" ${TRAIN_ARGS:-} 2>&1 | tail -30 || rc=1
fi
step done
exit $rc

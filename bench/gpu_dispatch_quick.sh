#!/usr/bin/env bash
# The short form of bench/gpu_dispatch.sh, for a device call with little
# time left (about 5 minutes): the dispatch tests (CPU stand-ins and GPU),
# the backward GPU tests without the float64 grid of the earlier kernels
# (its D = 96 cases kept), memcheck over two of them, and the context
# parallelism check over gloo with two ranks on one GPU. Run from the
# repository root with OUT set and .gpu/train.tar.xz and
# .gpu/libtiled_attn_runtime.so carried (the library is unpacked here).
set -u -o pipefail
tar xJf .gpu/train.tar.xz -C .gpu
export PYTHONPATH=$PWD/python TILED_ATTN_KERNELS=$PWD/.gpu/train TILED_ATTN_RUNTIME=$PWD/.gpu/libtiled_attn_runtime.so
mkdir -p $OUT/dispatch $OUT/context-parallel
nvidia-smi --query-gpu=name --format=csv,noheader
(cd python && timeout 240 python3 -m pytest -q -p no:cacheprovider tests/test_dispatch.py tests/test_dispatch_gpu.py tests/test_backward_gpu.py -k "not test_sdpa_gradients_against_float64 or d96" 2>&1 | tail -25) | tee $OUT/dispatch/pytest-gpu.log
timeout 150 compute-sanitizer --tool memcheck --report-api-errors no python3 -m pytest -q -p no:cacheprovider python/tests/test_dispatch_gpu.py python/tests/test_backward_gpu.py -k "d96_causal and bf16 or test_deterministic_mode and top_left_gqa and not d96" 2>&1 | tail -4 | tee $OUT/dispatch/sanitizer-memcheck.log
timeout 120 torchrun --standalone --nproc-per-node 2 bench/context_parallel.py --backend gloo --check-seq 4096 --seqs 4096 --rounds 1 --iters 1 --out $OUT/context-parallel 2>&1 | grep -v "^W1\|^I1" | tail -12

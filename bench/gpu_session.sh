#!/usr/bin/env bash
# One GPU session for the runtime issue, run on the lent GPU machine (it has
# torch and transformers but no LLVM): everything built here is carried
# (build/kernels, build/lib/libtiled_attn_runtime.so, dist/, .gpu/).
#   1. the C++ example on the installed CMake package's runtime;
#   2. every library kernel against a float64 reference, one case under
#      compute-sanitizer;
#   3. the GPU tests: custom op, torch.compile, CUDA graphs, streams,
#      transformers;
#   4. the wheel, installed outside the repository, finding its own runtime
#      and kernels;
#   5. host time per call, and the Llama forward benchmark.
# Run it from the repository root. Results land in the topic folders
# (correctness/, launch-overhead/, llama-forward/) under $OUT (the device
# tool's output folder), else under bench/results; copy $OUT/* into
# bench/results/ afterwards. The repository's python/ is put first on
# PYTHONPATH, so that the scripts import this checkout's tiled_attn.
set -u
OUT="${OUT:-bench/results}"
mkdir -p "$OUT/correctness" "$OUT/launch-overhead" "$OUT/llama-forward"
export PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}"
export TILED_ATTN_KERNELS="$PWD/build/kernels"
export TILED_ATTN_RUNTIME="$PWD/build/lib/libtiled_attn_runtime.so"
step() { echo; echo "=== $* ($(date +%T))"; }

step device
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 -c "import torch, transformers; print('torch', torch.__version__, 'transformers', transformers.__version__)"

step "C++ example (examples/cpp, the installed package)"
LD_LIBRARY_PATH="$PWD/.gpu" .gpu/sdpa_example build/kernels 2>&1 | tail -6

step "correctness of every kernel"
python3 bench/check_correctness.py --out "$OUT/correctness" 2>&1 | grep -v "^PASS" | tail -15
step "compute-sanitizer memcheck, one case"
compute-sanitizer --tool memcheck --error-exitcode 3 python3 bench/check_correctness.py \
  --sanitize-one 2>&1 | grep -E "ERROR SUMMARY|passed|failed" | tail -3

step "GPU tests"
(cd python && python3 -m pytest -q -p no:cacheprovider tests/test_torch_gpu.py \
  tests/test_transformers_gpu.py 2>&1 | tail -25)

step "the wheel, installed outside the repository"
rm -rf /tmp/ta_site && python3 -m pip install -q --no-deps --target /tmp/ta_site dist/tiled_attn-*.whl
(cd /tmp && env -u TILED_ATTN_KERNELS -u TILED_ATTN_RUNTIME PYTHONPATH=/tmp/ta_site python3 -c "
import torch, tiled_attn, tiled_attn.runtime as rt
print(tiled_attn.__file__, rt.runtime_path(), tiled_attn.default_library())
q, k, v = (torch.randn(2, 4, 300, 128, dtype=torch.bfloat16, device='cuda') for _ in range(3))
o = tiled_attn.sdpa(q, k, v, causal=True)
r = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
print('wheel: rel L2 vs torch', ((o.float() - r.float()).norm() / r.float().norm()).item())")

step "host time per call"
python3 bench/launch_overhead.py --out "$OUT/launch-overhead"
step "Llama forward"
python3 bench/llama_forward.py --out "$OUT/llama-forward" 2>&1 | tail -20
step done

#!/bin/bash
# The backward pass on a GPU (bench/check_backward.py): float64 checks in
# bf16 and f16, the benchmark against PyTorch's flash and cuDNN backward,
# and compute-sanitizer memcheck and racecheck over a few checks. Run on
# the device machine from the repository root, with the kernels built here
# (the library's backward kernels, or a library holding them in $KERNELS):
#   S=kernels/library.json; tiled-attn-compile --spec=$S --out-dir=.gpu/backward \
#     --entry=$(tiled-attn-compile --spec=$S --list | grep '^sdpa_bwd' | paste -sd,)
# CHECK_ONLY=1 skips the benchmark. Results under $OUT (default
# bench/results/backward).
set -u -o pipefail
OUT=${OUT:-bench/results}
mkdir -p "$OUT/backward"
K=${KERNELS:-.gpu/backward}
rc=0
python3 bench/check_backward.py --kernels $K --out "$OUT/backward" --dtype bf16 --check-only \
  2>&1 | tee "$OUT/backward/check-bf16.log" || rc=1
python3 bench/check_backward.py --kernels $K --out "$OUT/backward" --dtype f16 --check-only \
  2>&1 | tee "$OUT/backward/check-f16.log" || rc=1
for tool in memcheck racecheck; do
  # (API errors off: cuda-bindings probes driver entry points that do
  # not exist, which memcheck would count.)
  # (And only the backward's kernels: racecheck finds hazards in cuBLAS's
  # kernels that the references' matmuls run.)
  timeout 300 compute-sanitizer --tool $tool --report-api-errors no --kernel-name kns=sdpa_bwd \
    python3 bench/check_backward.py \
    --kernels $K --out /tmp/sanitize --check-only 2>&1 | tail -4 \
    | tee "$OUT/backward/sanitizer-$tool.log"
  grep -q -E "ERROR SUMMARY: 0 errors|\(0 errors" "$OUT/backward/sanitizer-$tool.log" || rc=1
done
if [ "${CHECK_ONLY:-0}" != 1 ]; then
  # ALSO="name=dir ...": more builds timed beside (an A/B).
  also=(); for a in ${ALSO:-}; do also+=(--also "$a"); done
  python3 bench/check_backward.py --kernels $K --out "$OUT/backward" --dtype bf16 "${also[@]}" ${BENCH_ARGS:-} \
    2>&1 | tee "$OUT/backward/bench-bf16.log" || rc=1
fi
exit $rc

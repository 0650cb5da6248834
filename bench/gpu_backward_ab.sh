#!/usr/bin/env bash
# An A/B of backward kernel builds on the device machine (issue 39), run
# from the repository root with OUT set and, carried from this machine:
#   $TARS              tarballs (default .gpu/ab.tar.xz .gpu/train2.tar.xz)
#                      unpacked into .gpu, holding:
#     folders of backward kernels, one per build: NEW (the build under
#     test, every variant, bf16 and f16) and the others of $ALSO
#     (name=folder ...), timed beside it;
#     $LIB (default .gpu/train2), a library of forward kernels and NEW's
#     backward ones, for the Python tests through the runtime;
#   .gpu/libtiled_attn_runtime.so.
# Steps, most wanted first, each under a timeout: the benchmark (bf16,
# --quick: S = 1k and 4k, interleaved rounds with PyTorch's flash and cuDNN
# backward), NEW's gradients against float64 (bf16, f16), the backward and
# dispatch GPU tests on train2, compute-sanitizer memcheck, racecheck and
# synccheck on NEW's kernels. Results under $OUT/backward-ab and
# $OUT/dispatch.
set -u -o pipefail
NEW=${NEW:-.gpu/ab/pf2}
ALSO=${ALSO:-old=.gpu/ab/old}
for t in ${TARS:-.gpu/ab.tar.xz .gpu/train2.tar.xz}; do tar xJf $t -C .gpu; done
export PYTHONPATH=$PWD/python TILED_ATTN_KERNELS=$PWD/${LIB:-.gpu/train2}
export TILED_ATTN_RUNTIME=$PWD/.gpu/libtiled_attn_runtime.so
R=$OUT/backward-ab
mkdir -p $R $OUT/dispatch
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
rc=0
step() { echo; echo "=== $* ($(date +%T))"; }
also=(); for a in $ALSO; do also+=(--also "$a"); done

step "gradients against float64 (bf16), then the benchmark"
timeout ${BENCH_S:-330} python3 bench/check_backward.py --kernels $NEW --out $R --dtype bf16 --quick \
  --rounds 3 --head-dims 64 128 "${also[@]}" > $R/bench-bf16.log 2>&1 || rc=1
grep -v "^{'dtype'" $R/bench-bf16.log | tail -4
ls $R

step "gradients against float64 (f16)"
timeout ${CHECK_S:-90} python3 bench/check_backward.py --kernels $NEW --out $R --dtype f16 --check-only \
  > $R/check-f16.log 2>&1 || rc=1
tail -2 $R/check-f16.log

step "backward and dispatch GPU tests (the runtime, $TILED_ATTN_KERNELS)"
(cd python && timeout ${PYTEST_S:-120} python3 -m pytest -q -p no:cacheprovider tests/test_backward_gpu.py \
  tests/test_dispatch_gpu.py 2>&1 | tail -8) | tee $OUT/dispatch/pytest-gpu.log

step sanitizers
for tool in ${TOOLS:-memcheck racecheck synccheck}; do
  timeout ${SANITIZE_S:-100} compute-sanitizer --tool $tool --report-api-errors no --kernel-name kns=sdpa_bwd \
    python3 bench/check_backward.py --kernels $NEW --out /tmp/sanitize --check-only --cases ${CASES:-6} \
    2>&1 | tail -3 | tee $R/sanitizer-$tool.log
done
step done
exit $rc

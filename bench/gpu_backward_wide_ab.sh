#!/usr/bin/env bash
# The A/B of the wide head dims' sm_90a backward main kernels (D = 192 and
# 256; docs/backward.md#wide-head-dims-on-wgmma, 2026-12-08): builds that
# differ from the library's in one lowering or schedule option each, timed
# in the same interleaved rounds with PyTorch's flash (FA2) and cuDNN
# backward, and checked against float64.
#
#   bench/gpu_backward_wide_ab.sh build   (here: tiled-attn-compile on PATH
#                                          or in build/bin)
#     writes .gpu/ab/<name> for each build below and .gpu/wide (the
#     library's kernels at D = 192, 256 and 192/128, the baseline), and
#     their tarballs .gpu/ab.tar.xz and .gpu/wide.tar.xz;
#   bench/gpu_backward_wide_ab.sh run     (the device machine, OUT set,
#                                          the two tarballs carried)
#     results under $OUT/backward-wide-ab.
#
# The builds (every one: 64 x 64 blocks, two consumer warpgroups side by
# side on the columns, a producer warp, 240/24 registers):
#   one-slot   stages=1 ring-slots=1, TMA-reduced dQ (the library's D = 256,
#              and its D = 192 until 2026-12-08)
#   s2         stages=2 ring-slots=2, TMA-reduced dQ (the library's D = 192
#              since 2026-12-08; D = 192 only: D = 256 does not fit)
#   s2-atomic  stages=2 ring-slots=2, dQ by atomic adds
#   s1-atomic  stages=1 ring-slots=1, dQ by atomic adds
#   uw         one-slot with uniform-warpgroup=1 (the products' warpgroup
#              index and descriptors in uniform registers, as D = 128's:
#              ptxas 12-360 bytes of spill stores instead of 940-2216)
#   s2-uw      s2 with uniform-warpgroup=1 (12-44 bytes instead of 392-648)
set -u -o pipefail
WIDE_VARIANTS='["none", "top_left", "bottom_right", "window", "none_softcap"]'
LOWERING="chip=sm_90a warps=8 warp-specialize=1 producer-registers=24 consumer-registers=240 merge-barriers=1 share-transposes=1 simulate-roles=4"

build() {
  local compile=tiled-attn-compile
  command -v $compile > /dev/null || compile=build/bin/tiled-attn-compile
  # (A spec of its own, beside the library's so that its variant lists
  # resolve the same way; removed after.)
  local spec=kernels/.wide-ab.json
  trap "rm -f $spec" EXIT
  for b in "one-slot 192,256 1 ring-slots=1 tma-reduce=1" "s2 192 2 ring-slots=2 tma-reduce=1" \
           "s2-atomic 192,256 2 ring-slots=2" "s1-atomic 192,256 1 ring-slots=1" \
           "uw 192,256 1 ring-slots=1 tma-reduce=1 uniform-warpgroup=1" \
           "s2-uw 192 2 ring-slots=2 tma-reduce=1 uniform-warpgroup=1"; do
    set -- $b
    local name=$1 dims=$2 stages=$3; shift 3
    cat > $spec <<EOF
{"version": 2, "dtypes": ["bf16"], "configurations": [
 {"name": "wide-ab-$name", "program": "sdpa_backward", "head_dims": [$dims],
  "variants": $WIDE_VARIANTS, "phases": ["main"],
  "block_m": 64, "block_n": 64, "schedule": "exp2=1 stages=$stages",
  "lowering": "$LOWERING $*", "cubins": ["sm_90a"],
  "spills": "an A/B build (bench/gpu_backward_wide_ab.sh)"},
 {"name": "wide-ab-$name-sides", "program": "sdpa_backward", "head_dims": [$dims],
  "variants": $WIDE_VARIANTS, "phases": ["preprocess", "postprocess"],
  "block_m": 64, "block_n": 64, "schedule": "exp2=1",
  "lowering": "chip=sm_90a warps=4", "cubins": ["sm_90a"]}]}
EOF
    rm -rf .gpu/ab/$name
    $compile --spec=$spec --out-dir=.gpu/ab/$name --jobs=2 | tail -1
  done
  [ -n "${SKIP_LIBRARY:-}" ] && { tar cJf .gpu/ab.tar.xz -C .gpu ab; return; }
  rm -rf .gpu/wide
  $compile --spec=kernels/library.json --out-dir=.gpu/wide --jobs=2 \
    --entry=$($compile --spec=kernels/library.json --list | grep -E '^sdpa_bwd_sm_90a_(bf16|f16)_d(192|256)' | paste -sd,) | tail -1
  tar cJf .gpu/ab.tar.xz -C .gpu ab && tar cJf .gpu/wide.tar.xz -C .gpu wide
}

run() {
  for t in .gpu/ab.tar.xz .gpu/wide.tar.xz; do tar xJf $t -C .gpu; done
  local R=$OUT/backward-wide-ab
  mkdir -p $R
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  timeout 300 python3 bench/check_backward.py --kernels .gpu/wide --arch sm_90a --out $R \
    --dtype bf16 --cases 1 --rounds ${ROUNDS:-3} --head-dims 192 256 ${QUICK---quick} \
    --also one-slot=.gpu/ab/one-slot --also s2=.gpu/ab/s2 --also s2a=.gpu/ab/s2-atomic \
    --also s1a=.gpu/ab/s1-atomic --also uw=.gpu/ab/uw --also s2-uw=.gpu/ab/s2-uw \
    > $R/ab-bench.log 2>&1
  tail -2 $R/ab-bench.log
  for name in uw s2-uw s2 one-slot s2-atomic s1-atomic; do
    timeout 60 python3 bench/check_backward.py --kernels .gpu/ab/$name --arch sm_90a \
      --out $R/$name --dtype bf16 --check-only 2>&1 | grep -E "within 2x|False" | sed "s/^/$name: /"
  done
  for tool in memcheck racecheck synccheck; do
    timeout 90 compute-sanitizer --tool $tool --report-api-errors no --kernel-name kns=sdpa_bwd \
      python3 bench/check_backward.py --kernels .gpu/ab/${SANITIZE:-uw} --arch sm_90a --out /tmp/sanitize \
      --check-only --cases 3 2>&1 | tail -2 | tee $R/sanitizer-$tool.log
  done
}

case "${1:-}" in
  build) build ;;
  run) run ;;
  *) echo "usage: $0 build|run" >&2; exit 2 ;;
esac

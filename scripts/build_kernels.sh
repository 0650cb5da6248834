#!/usr/bin/env bash
# Builds the kernel library: for each target chip, dtype, head dim and mask,
# one SDPA kernel out of the compiler (PTX, cubins through ptxas where it is
# installed, and an entry in manifest.json). Usage:
#   scripts/build_kernels.sh [build-dir] [out-dir]
set -euo pipefail
REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${1:-$REPO_ROOT/build}"
OUT_DIR="${2:-$BUILD_DIR/kernels}"
COMPILE="$BUILD_DIR/bin/tiled-attn-compile"

rm -rf "$OUT_DIR"
mkdir -p "$OUT_DIR"

# chip of the PTX : cubins assembled from it
TARGETS=(
  "sm_80:sm_80,sm_86,sm_89,sm_90"
  "sm_120a:sm_120a"
  "sm_121a:sm_121a"
)

# The schedule each entry gets: the fastest measured on an H200 (see
# bench/results/schedules_*.md), for the sm_80 PTX that Ampere, Ada and
# Hopper run: 128-row blocks, one per 4 warps (32 query rows per warp, so
# each K/V fragment read from shared memory feeds two mma.sync). At D=128
# the accumulator leaves no registers for Q, which stays in shared memory
# (smem-lhs); at D=64 Q stays in registers, and each K/V refill is issued
# right after the last read of the block it replaces.
# sm_120a/sm_121a (not measured: no such GPU here) keep 64-row blocks, which
# ptxas assembles without spills for them and which fit their smaller
# shared memory several times over.
# The K/V loop is split where masks start (tile-mask-split): causal kernels
# mask only their diagonal blocks, and non-causal kernels only the last,
# partial key block (D=64: +5% on an H200).
# Causal kernels start their longest programs first (tile-heavy-first), 8
# heads at a time at D=128 and 16 at D=64 (of 16 and 32 heads at H*D=2048),
# and their K/V refills go right after the last read of the block they
# replace (stages=2 refill-after-use). Kernels write O through shared memory
# in 16-byte row pieces (staged stores). Together, at S=4k: D=128 causal
# +13%, D=64 causal +7% (H200, bench/results/schedules_nvidia-h200_2026-11-22.md,
# section 10).
# D=128 non-causal runs FlashAttention-2's loop: the partial key block first
# (masked-first), then the unmasked blocks, each prefetching the next K
# block only (prefetch-streams=1), in bounds, while V is copied at the top
# of its iteration; merge-barriers leaves two CTA barriers per block
# (+1-5% on an H100, section 22).
# The sm_80 kernels keep a row's running max until a probability would pass
# 2^8 (FlashAttention-4's lazy rescale), and a warp skips the rescale of O
# when none of its rows' maxima moved (section 14: +1-4% at D=64, 0-2% at
# D=128).
schedule_for() { # chip causal head_dim
  local s="exp2=1"
  if [ "$1" = sm_80 ]; then s="$s lazy-rescale=8 lazy-rescale-guard=0"; fi
  if [ "$2" = 1 ]; then s="$s mask-split=1"; fi
  if [ "$1" = sm_80 ] && [ "$2" = 0 ] && [ "$3" = 64 ]; then
    s="$s mask-split=1"
  fi
  if [ "$1" = sm_80 ] && [ "$2" = 1 ]; then
    s="$s heavy-first=1 heavy-first-heads=$((1024 / $3)) stages=2 refill-after-use=1"
  elif [ "$1" = sm_80 ] && [ "$3" = 64 ]; then
    s="$s stages=2 refill-after-use=1"
  elif [ "$1" = sm_80 ]; then
    s="$s mask-split=1 masked-first=1 stages=2 refill-after-use=1 prefetch-streams=1"
  fi
  echo "$s"
}
layout_flags_for() { # chip head_dim causal
  if [ "$1" = sm_80 ]; then
    echo "--block-m=128"
    if [ "$2" = 128 ]; then echo "--smem-lhs"; fi
    if [ "$2" = 128 ] && [ "$3" = 0 ]; then echo "--merge-barriers"; fi
    echo "--skip-unit-row-scales"
  else
    echo "--block-m=64"
  fi
}

for target in "${TARGETS[@]}"; do
  chip="${target%%:*}"
  cubins="${target#*:}"
  for dtype in f16 bf16; do
    for d in 64 128; do
      for causal in 0 1; do
        flags=(--chip="$chip" --dtype="$dtype" --head-dim="$d"
               --block-n=64 --warps=4
               --schedule="$(schedule_for "$chip" "$causal" "$d")"
               $(layout_flags_for "$chip" "$d" "$causal")
               --cubin="$cubins" --out-dir="$OUT_DIR")
        if [ "$causal" = 1 ]; then flags+=(--causal); fi
        "$COMPILE" "${flags[@]}"
        # D=128 causal on sm_80 PTX also comes with 32-bit index arithmetic
        # (+3% on an H200, schedules notes section 19). The runtime takes it
        # while every element offset stays below 2^31 and falls back to the
        # 64-bit kernel above.
        if [ "$chip" = sm_80 ] && [ "$d" = 128 ] && [ "$causal" = 1 ]; then
          "$COMPILE" "${flags[@]}" --index-bitwidth=32
        fi
      done
    done
  done
done
rm -f "$OUT_DIR/manifest.json.lock"
echo "kernel library: $OUT_DIR ($(ls "$OUT_DIR"/*.ptx | wc -l) kernels)"

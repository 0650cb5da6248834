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

# The schedule each entry gets (the best measured so far; see bench/).
schedule_for() { # causal head_dim
  local s="exp2=1"
  if [ "$1" = 1 ]; then s="$s causal-split=1"; fi
  echo "$s"
}

for target in "${TARGETS[@]}"; do
  chip="${target%%:*}"
  cubins="${target#*:}"
  for dtype in f16 bf16; do
    for d in 64 128; do
      for causal in 0 1; do
        flags=(--chip="$chip" --dtype="$dtype" --head-dim="$d"
               --block-m=64 --block-n=64 --warps=4
               --schedule="$(schedule_for "$causal" "$d")"
               --cubin="$cubins" --out-dir="$OUT_DIR")
        if [ "$causal" = 1 ]; then flags+=(--causal); fi
        "$COMPILE" "${flags[@]}"
      done
    done
  done
done
echo "kernel library: $OUT_DIR ($(ls "$OUT_DIR"/*.ptx | wc -l) kernels)"

#!/usr/bin/env bash
# Builds the kernel library that kernels/library.json describes, or the part
# of it for the chosen targets: for each kernel, its PTX, cubins through
# ptxas where it is installed, and an entry in manifest.json (see
# tools/tiled-attn-compile). The build is incremental: a kernel whose inputs
# (its spec, the compiler, ptxas's version) have not changed since it was
# built is not built again, and kernels of targets no longer chosen are
# removed. Usage:
#   scripts/build_kernels.sh [build-dir] [out-dir]
# TILED_ATTN_TARGETS chooses the targets: "all" (six chips, 2362 kernels), or
# chips and chip:variant pairs separated by spaces or commas. The default,
# DEFAULT_TARGETS below, is Hopper and Ampere in full plus the datacenter
# Blackwell kernels of the plain and causal cases.
set -euo pipefail
REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${1:-$REPO_ROOT/build}"
OUT_DIR="${2:-$BUILD_DIR/kernels}"
DEFAULT_TARGETS="sm_90a sm_80 sm_100a:none sm_100a:top_left"
TARGETS="${TILED_ATTN_TARGETS:-$DEFAULT_TARGETS}"

mkdir -p "$OUT_DIR"
"$BUILD_DIR/bin/tiled-attn-compile" --spec="$REPO_ROOT/kernels/library.json" \
  --targets="$(echo "$TARGETS" | tr -s ' ,' ',,' | sed 's/^,//; s/,$//')" \
  --prune --out-dir="$OUT_DIR"
rm -f "$OUT_DIR/manifest.json.lock"
echo "kernel library: $OUT_DIR ($(ls "$OUT_DIR"/*.ptx | wc -l) kernels; targets: $TARGETS)"

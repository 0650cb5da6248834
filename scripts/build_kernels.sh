#!/usr/bin/env bash
# Builds the kernel library that kernels/library.json describes: for each
# kernel, its PTX, cubins through ptxas where it is installed, and an entry
# in manifest.json (see tools/tiled-attn-compile). Usage:
#   scripts/build_kernels.sh [build-dir] [out-dir]
set -euo pipefail
REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${1:-$REPO_ROOT/build}"
OUT_DIR="${2:-$BUILD_DIR/kernels}"

rm -rf "$OUT_DIR"
mkdir -p "$OUT_DIR"
"$BUILD_DIR/bin/tiled-attn-compile" --spec="$REPO_ROOT/kernels/library.json" \
  --out-dir="$OUT_DIR"
rm -f "$OUT_DIR/manifest.json.lock"
echo "kernel library: $OUT_DIR ($(ls "$OUT_DIR"/*.ptx | wc -l) kernels)"

#!/usr/bin/env bash
# Builds the Python wheel: the package, the C++ runtime and the kernel
# library, from an existing build (scripts/run.sh or scripts/setup.sh plus
# scripts/build_kernels.sh). The wheel ships the kernels build/kernels holds:
# the targets they were built for (scripts/run.sh's default, or
# TILED_ATTN_TARGETS=all scripts/build_kernels.sh for every target).
# Usage: scripts/build_wheel.sh [build-dir] [out-dir]
set -euo pipefail
REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${1:-$REPO_ROOT/build}"
OUT_DIR="${2:-$REPO_ROOT/dist}"
PKG="$REPO_ROOT/python/tiled_attn"

for f in "$BUILD_DIR/lib/libtiled_attn_runtime.so" "$BUILD_DIR/kernels/manifest.json"; do
  [ -f "$f" ] || { echo "build_wheel: $f is missing; build first" >&2; exit 1; }
done
rm -rf "$PKG/lib" "$PKG/kernels" "$REPO_ROOT/python/build"
mkdir -p "$PKG/lib" "$PKG/kernels"
cp "$BUILD_DIR/lib/libtiled_attn_runtime.so" "$PKG/lib/"
cp "$BUILD_DIR/kernels/"*.json "$BUILD_DIR/kernels/"*.ptx "$PKG/kernels/"
cp "$BUILD_DIR/kernels/"*.cubin "$PKG/kernels/" 2>/dev/null || true
PYTHON="${PYTHON:-$REPO_ROOT/.venv/bin/python}"
"$PYTHON" -m pip wheel -q --no-deps --no-build-isolation -w "$OUT_DIR" "$REPO_ROOT/python"
rm -rf "$PKG/lib" "$PKG/kernels" "$REPO_ROOT/python/build" "$REPO_ROOT"/python/*.egg-info
ls "$OUT_DIR"/tiled_attn-*.whl

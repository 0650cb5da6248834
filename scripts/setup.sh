#!/usr/bin/env bash
# Installs what is missing, configures and builds tiled-attn.
# Sourced by scripts/run.sh and scripts/test.sh; safe to run again.
set -euo pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$REPO_ROOT/build}"
LLVM_PREFIX=/usr/lib/llvm-22
# nlohmann-json3-dev and libgtest-dev: the runtime library (lib/Runtime) and
# its unit tests; the runtime also needs the CUDA toolkit's cuda.h, and is
# left out (with a warning) where there is none.
APT_PACKAGES=(llvm-22-dev libmlir-22-dev mlir-22-tools ninja-build cmake g++ python3
              nlohmann-json3-dev libgtest-dev)

missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "== installing: ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi

echo "== configuring and building in $BUILD_DIR"
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  cmake -G Ninja -S "$REPO_ROOT" -B "$BUILD_DIR" \
    -DCMAKE_BUILD_TYPE=Release \
    -DMLIR_DIR="$LLVM_PREFIX/lib/cmake/mlir" \
    -DLLVM_EXTERNAL_LIT="$LLVM_PREFIX/bin/lit"
fi
# BUILD_TARGETS (set by scripts/run.sh: tiled-attn-main) limits the build
# to what the main job needs; by default everything, tests included.
# shellcheck disable=SC2086
ninja -C "$BUILD_DIR" ${BUILD_TARGETS:-}

export PATH="$BUILD_DIR/bin:$LLVM_PREFIX/bin:$PATH"

# Python: a virtual environment with the test runner only (the runtime itself
# needs no package beyond PyTorch on the GPU machine).
VENV="$REPO_ROOT/.venv"
if [ ! -x "$VENV/bin/python" ]; then
  echo "== creating $VENV"
  if ! python3 -m venv "$VENV" 2>/dev/null; then
    SUDO=""
    if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; fi
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq python3-venv
    python3 -m venv "$VENV"
  fi
fi
"$VENV/bin/python" -m pip install -q --disable-pip-version-check pytest wheel

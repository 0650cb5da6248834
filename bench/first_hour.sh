#!/usr/bin/env bash
# The newcomer's first hour, timed: a fresh clone of this checkout, then
# scripts/run.sh twice and scripts/test.sh, and the rest of the library
# (TILED_ATTN_TARGETS=all). Writes <out>/first-hour_<host>_<date>.csv.
# For a fresh machine's figure, remove the LLVM/MLIR packages first
# (apt-get remove llvm-22-dev libmlir-22-dev mlir-22-tools
# nlohmann-json3-dev && apt-get autoremove): run.sh installs them again.
# Usage: bench/first_hour.sh [clone-dir] [out-dir]
set -euo pipefail
REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CLONE="${1:-/tmp/tiled-attn-first-hour}"
OUT="${2:-$REPO_ROOT/bench/results/compile-times}"
rm -rf "$CLONE" && git clone -q "$REPO_ROOT" "$CLONE"
CSV="$OUT/first-hour_$(hostname)_$(date +%F).csv"
echo "date,machine,cores,commit,step,seconds" > "$CSV"
step() { # name, command...
  local name="$1"; shift
  local start end
  start=$(date +%s.%N)
  (cd "$CLONE" && "$@") > "$CLONE/$name.log" 2>&1
  end=$(date +%s.%N)
  echo "$(date +%F),$(hostname),$(nproc),$(git -C "$CLONE" rev-parse --short HEAD),$name,$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", b - a }')" >> "$CSV"
}
step run-first ./scripts/run.sh
step run-second ./scripts/run.sh
step test ./scripts/test.sh
step library-all env TILED_ATTN_TARGETS=all ./scripts/build_kernels.sh
cat "$CSV"

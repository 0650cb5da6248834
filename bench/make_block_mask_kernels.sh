#!/bin/bash
# The block mask kernels (tile-generate-block-mask) of the library's mask
# functions, as cubins for an H100/H200, for bench/check_block_mask.py:
# each function on the wgmma family's layouts (sm_90a, 8 warps) and on the
# mma.sync family's (its sm_80 PTX assembled for sm_90, 8 warps).
#
#   bench/make_block_mask_kernels.sh OUT_DIR
#
# Until the runtime launches these kernels (issue 37), the check script
# packs their parameters itself, in the kernel ABI's order.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$1
mkdir -p "$out"
ptx() {
  sed -n 's/.*assembly = "\([^"]*\)".*/\1/p' | sed -e 's/\\0A/\n/g' -e 's/\\09/\t/g'
}
for fn in document prefix_lm; do
  for chip in sm_90a sm_80; do
    arch=$chip; [ "$chip" = sm_80 ] && arch=sm_90
    build/bin/tiled-attn-opt "kernels/functions/$fn.mlir" \
      --tile-generate-block-mask="mask-function=$fn" \
      --tile-to-ptx="chip=$chip warps=8" | ptx > "$out/$fn.$chip.ptx"
    /usr/local/cuda/bin/ptxas -arch=$arch -v "$out/$fn.$chip.ptx" \
      -o "$out/$fn.$chip.cubin" 2>&1 | grep -E "registers|spill" | sed "s/^/$fn $chip: /"
  done
done

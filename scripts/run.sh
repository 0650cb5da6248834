#!/usr/bin/env bash
# The main job: set up, build, then take the bundled SDPA kernel as far as
# the compiler reaches today. For each kernel: generate (or read) it, verify
# it, decompose its online softmax, run it on the host and print its error
# against a float64 reference. Then build the kernel library for the chosen
# targets, incrementally (TILED_ATTN_TARGETS, see scripts/build_kernels.sh:
# by default sm_90a and sm_80 in full and the sm_100a plain and causal
# kernels; "all" for every target).
set -euo pipefail
# The tools, the runtime and the references; scripts/test.sh builds the rest.
BUILD_TARGETS=tiled-attn-main
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$REPO_ROOT"
OUT="$REPO_ROOT/out"
mkdir -p "$OUT"

run_kernel() { # name, file
  local name="$1" file="$2"
  echo "== $name"
  tiled-attn-opt "$file" >/dev/null
  tiled-attn-opt --tile-decompose-online-softmax "$file" -o "$OUT/$name.decomposed.mlir"
  tiled-attn-run "$OUT/$name.decomposed.mlir" --batch=2 --heads=3 \
    --shapes=1x1,17x17,100x100,257x257,100x37,37x100
}

# The hand-written, commented kernel.
run_kernel sdpa_fwd_handwritten examples/sdpa_fwd.mlir

# Kernels from the generator, one per configuration.
for cfg in "head-dim=64 dtype=f16 variant=none" \
           "head-dim=128 dtype=bf16 variant=top_left block-m=128 block-n=64"; do
  name="sdpa_$(echo "$cfg" | tr ' =' '_-')"
  echo 'module {}' | tiled-attn-opt --tile-generate-sdpa="$cfg" -o "$OUT/$name.mlir"
  run_kernel "$name" "$OUT/$name.mlir"
done
echo "== host-checked kernels written to $OUT"

# The kernel library: the chosen targets' kernels of every dtype, head dim
# and variant, lowered to PTX (and cubins where ptxas is installed), with
# manifest.json; kernels built before from the same inputs are kept.
"$REPO_ROOT/scripts/build_kernels.sh" "$BUILD_DIR"

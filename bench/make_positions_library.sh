#!/usr/bin/env bash
# A two-kernel library whose kernels are test/Pipelines/positions.mlir (the
# causal kernel with its masks written from tile.iota positions), lowered
# for sm_80 and sm_90a, under the manifest entries of the generator's kernel
# of the same configuration (sdpa_fwd_<chip>_f16_d64_top_left: the same
# signature, parameters and shared memory, checked here), so that the
# runtime launches them and bench/check_correctness.py checks them against
# float64 on a GPU. Run on the build machine; carry the folder. Usage:
#   bench/make_positions_library.sh [build-dir] [out-dir]
#   (GPU) TILED_ATTN_RUNTIME=<out-dir>/libtiled_attn_runtime.so PYTHONPATH=python \
#         python3 bench/check_correctness.py --library <out-dir>/kernels \
#         --out bench/results/positions --stem positions-causal-from-iota
set -euo pipefail
REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${1:-$REPO_ROOT/build}"
OUT_DIR="${2:-$REPO_ROOT/.gpu/positions}"
BIN="$BUILD_DIR/bin"
rm -rf "$OUT_DIR" && mkdir -p "$OUT_DIR/kernels"
cp "$BUILD_DIR/lib/libtiled_attn_runtime.so" "$OUT_DIR/"
for target in "sm_80:warps=4" "sm_90a:warps=8"; do
  chip="${target%%:*}" lowering="chip=${target%%:*} ${target#*:}"
  name="sdpa_fwd_${chip}_f16_d64_top_left"
  "$BIN/tiled-attn-compile" --head-dim=64 --variant=top_left --block-m=128 --block-n=64 \
    --schedule="exp2=1" --lowering="$lowering" --ptxas=none \
    --out-dir="$OUT_DIR/kernels" > /dev/null
  "$BIN/tiled-attn-opt" "$REPO_ROOT/test/Pipelines/positions.mlir" \
    --tile-schedule="exp2=1" --tile-to-ptx="$lowering" \
    | sed -n 's/.*assembly = "\([^"]*\)".*/\1/p' \
    | sed -e 's/\\0A/\n/g' -e 's/\\09/\t/g' > "$OUT_DIR/positions.ptx"
  # The same kernel parameters, and the shared memory the manifest records.
  diff <(grep -E '^\s*\.param' "$OUT_DIR/positions.ptx") \
       <(grep -E '^\s*\.param' "$OUT_DIR/kernels/$name.ptx") > /dev/null \
    || { echo "$name: the parameters differ" >&2; exit 1; }
  shared=$("$BIN/tiled-attn-opt" "$REPO_ROOT/test/Pipelines/positions.mlir" \
    --tile-schedule="exp2=1" --tilegpu-attach-target="chip=$chip" \
    --tilegpu-assign-layouts="${target#*:}" --convert-tile-to-tilegpu \
    --tilegpu-merge-barriers --tilegpu-resolve-async-waits --tilegpu-allocate-memory \
    | grep -o 'shared_bytes = [0-9]*' | head -1 | grep -o '[0-9]*$')
  python3 - "$OUT_DIR/kernels/manifest.json" "$name" "$shared" <<'PY'
import json, sys
manifest, name, shared = sys.argv[1], sys.argv[2], int(sys.argv[3])
entry = next(k for k in json.load(open(manifest))["kernels"] if k["name"] == name)
if entry["shared_bytes"] != shared:
    sys.exit(f"{name}: shared memory {shared} != the manifest's {entry['shared_bytes']}")
PY
  mv "$OUT_DIR/positions.ptx" "$OUT_DIR/kernels/$name.ptx"
  echo "$name: test/Pipelines/positions.mlir for $chip"
done

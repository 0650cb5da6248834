#!/usr/bin/env bash
# Where the sm_90a attn_mask kernels spend their time, beside the plain
# kernel: bf16 D = 128 non-causal at S (B*S = 16384, H = 16), one Nsight
# Compute report (full set, 4th launch, real clocks) each of the plain
# kernel, PyTorch's float32 bias and its bool mask through the library
# (CASES="plain bias mask", the default; alibi: the ALiBi function), and
# for each: the metrics that say what bounds it and bench/sass_stalls.py's
# stall summary of its SASS.
#
#   OUT=DIR bench/ncu_functions.sh LIBRARY [S] [STEM]
#
# Writes $OUT/STEM.txt (STEM default ncu-functions) and each report's SASS
# source page as $OUT/STEM-CASE.sass.csv. The runtime comes from
# $TILED_ATTN_RUNTIME (or build/lib), as for every bench script.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export PYTHONPATH=$PWD/python PYTHONUNBUFFERED=1
LIB=$(realpath "$1"); S=${2:-4096}; STEM=${3:-ncu-functions}
: "${OUT:?set OUT to the results folder}"
exec > >(tee "$OUT/$STEM.txt") 2>&1
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
date -u +%F
for case in ${CASES:-plain bias mask}; do
  case $case in
    plain) args=() ;;
    alibi) args=(--score-mod alibi) ;;
    *) args=(--attn-mask "$case") ;;
  esac
  echo "== $case (S = $S, bf16, D = 128, non-causal)"
  timeout 150 ncu --set full --import-source no --clock-control none -k regex:sdpa_fwd \
    --launch-skip 3 --launch-count 1 -f -o "/tmp/$case" \
    python3 bench/ncu_workload.py "$S" "$LIB" --dtype bf16 "${args[@]}" > "/tmp/$case.log" 2>&1 \
    || { tail -20 "/tmp/$case.log"; continue; }
  ncu -i "/tmp/$case.ncu-rep" --page details --print-units base 2>&1 | grep -E \
    "Duration|Issue Slots Busy|Executed Ipc A|L1/TEX Hit|L2 Hit|Mem Pipes Busy|Memory Throughput|DRAM Throughput|L1/TEX Cache Throughput|L2 Cache Throughput|Warp Cycles Per Issued|No Eligible|Registers Per|Executed Instructions  |Compute \(SM\) Throughput|Achieved Occupancy" \
    | head -24
  ncu -i "/tmp/$case.ncu-rep" --page source --csv --print-source sass > "$OUT/$STEM-$case.sass.csv"
  python3 bench/sass_stalls.py "$OUT/$STEM-$case.sass.csv" --top 16
done

#!/usr/bin/env bash
# Where the backward's main kernel spends its time, beside FlashAttention-2's
# (issue 39): bf16, B*S = 16384, H*D = 2048.
#   bench/ncu_backward.sh S D OUT KERNELS... [-- causal]
# For each folder of backward kernels, then PyTorch's flash backend (FA2): a
# Nsight Compute report (full set) of the 4th main kernel, its SASS source
# page as CSV (OUT/NAME.sass.csv) and bench/sass_stalls.py's summary.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export PYTHONPATH=$PWD/python
S=$1; D=$2; OUT=$3; shift 3
CAUSAL=${CAUSAL:-}
mkdir -p "$OUT"
profile() { # name kernel-regex kernels-or-fa2
  ncu --set full --import-source no --clock-control none -k "regex:$2" --launch-skip 3 \
    --launch-count 1 -f -o "$OUT/$1" python3 bench/ncu_backward_workload.py "$S" "$D" "$3" \
    $CAUSAL > "$OUT/$1.log" 2>&1 || { tail -5 "$OUT/$1.log"; return 0; }
  ncu -i "$OUT/$1.ncu-rep" --page source --csv --print-source sass > "$OUT/$1.sass.csv"
  ncu -i "$OUT/$1.ncu-rep" --page details --csv > "$OUT/$1.details.csv"
  echo "== $1 ($3)"
  python3 bench/sass_stalls.py "$OUT/$1.sass.csv" --top 25
}
i=0
for lib in "$@"; do i=$((i + 1)); profile "ours$i" '^sdpa_bwd$' "$lib"; done
profile fa2 'flash_bwd_dq_dk_dv' fa2

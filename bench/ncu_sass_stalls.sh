#!/usr/bin/env bash
# Per-instruction stall samples of f16 D=128 non-causal, ours and SDPA's
# FlashAttention-2, at real clocks:
#   bench/ncu_sass_stalls.sh S OUT LIB...
# For each library, then FA2: a Nsight Compute report of the 4th launch at S
# (B*S = 16384, H = 16) with the full section set, its SASS source page as
# CSV (OUT/NAME.sass.csv), and bench/sass_stalls.py's summary of it.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export PYTHONPATH=$PWD/python
S=$1; OUT=$2; shift 2
mkdir -p "$OUT"
profile() { # name kernel-regex library-or-fa2
  ncu --set full --import-source no --clock-control none -k "regex:$2" --launch-skip 3 \
    --launch-count 1 -f -o "$OUT/$1" python3 bench/ncu_workload.py "$S" "$3" > "$OUT/$1.log" 2>&1
  ncu -i "$OUT/$1.ncu-rep" --page source --csv --print-source sass > "$OUT/$1.sass.csv"
  echo "== $1 ($3)"
  python3 bench/sass_stalls.py "$OUT/$1.sass.csv" --top 12
}
i=0
for lib in "$@"; do i=$((i + 1)); profile "ours$i" sdpa_fwd "$lib"; done
profile fa2 flash_fwd fa2

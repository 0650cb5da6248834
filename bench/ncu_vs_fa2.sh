#!/usr/bin/env bash
# Stall breakdown of f16 D=128 non-causal next to SDPA's FlashAttention-2, at
# real clocks (--clock-control none):
#   bench/ncu_vs_fa2.sh S LIB...
# For each library, then for FA2: Nsight Compute's duration, clock,
# instructions, issue and tensor-pipe use, and warp stall reasons per issued
# instruction, for the 4th launch at S (B*S = 16384, H = 16).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export PYTHONPATH=$PWD/python
S=$1; shift
M=gpu__time_duration.sum,gpc__cycles_elapsed.avg.per_second,smsp__inst_executed.sum
M=$M,smsp__issue_active.avg.pct_of_peak_sustained_active
M=$M,sm__inst_executed_pipe_tensor_op_hmma.avg.pct_of_peak_sustained_active
for r in barrier long_scoreboard short_scoreboard wait math_pipe_throttle mio_throttle \
         not_selected dispatch_stall no_instruction; do
  M=$M,smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio
done
run() { # kernel-regex python-args...
  local regex=$1; shift
  ncu --clock-control none -k "regex:$regex" --launch-skip 3 --launch-count 1 --metrics "$M" \
    python3 bench/ncu_workload.py "$@" 2>&1 | grep -E "^\s+[a-z]" | awk '{print $1, $NF}' \
    | sed 's/smsp__average_warps_issue_stalled_//; s/_per_issue_active.ratio//'
}
for lib in "$@"; do echo "== $lib"; run sdpa_fwd "$S" "$lib"; done
echo "== SDPA flash (FA2)"; run flash_fwd "$S" fa2

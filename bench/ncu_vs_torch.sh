#!/usr/bin/env bash
# Stall breakdown of f16 D=128 non-causal next to one of PyTorch's SDPA
# backends (fa2: FlashAttention-2, cudnn: cuDNN), at real clocks
# (--clock-control none):
#   bench/ncu_vs_torch.sh S fa2|cudnn LIB...
# For each library, then for the backend: Nsight Compute's duration, clock,
# instructions, issue, tensor-pipe use (mma.sync: hmma; wgmma: gmma), and
# warp stall reasons per issued instruction, for the 4th launch at S
# (B*S = 16384, H = 16).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export PYTHONPATH=$PWD/python
S=$1 REF=$2; shift 2
M=gpu__time_duration.sum,gpc__cycles_elapsed.avg.per_second,smsp__inst_executed.sum
M=$M,smsp__issue_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread
M=$M,sm__inst_executed_pipe_tensor_op_hmma.avg.pct_of_peak_sustained_active
M=$M,sm__inst_executed_pipe_tensor_op_gmma.avg.pct_of_peak_sustained_active
for r in barrier long_scoreboard short_scoreboard wait math_pipe_throttle mio_throttle \
         not_selected dispatch_stall no_instruction sleeping membar; do
  M=$M,smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio
done
run() { # kernel-regex python-args...
  local regex=$1; shift
  ncu --clock-control none -k "regex:$regex" --launch-skip 3 --launch-count 1 --metrics "$M" \
    python3 bench/ncu_workload.py "$@" 2>&1 | grep -E "^\s+[a-z]" | awk '{print $1, $NF}' \
    | sed 's/smsp__average_warps_issue_stalled_//; s/_per_issue_active.ratio//'
}
for lib in "$@"; do echo "== $lib"; run sdpa_fwd "$S" "$lib"; done
# The backend's attention kernel: the one its call launches that is not an
# elementwise or copy kernel.
kernel=$(python3 bench/ncu_workload.py "$S" "$REF" --names | grep -viE "elementwise|copy|fill|reduce|memset" | head -1)
echo "== $REF: $kernel"
run "${kernel:0:40}" "$S" "$REF"

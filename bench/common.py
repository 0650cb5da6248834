"""Helpers shared by the quick GPU scripts (smoke_gpu, quick_perf,
compare_schedules): the repository's runtime on sys.path, CUDA-event timing
and the float64 reference."""
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

import torch  # noqa: E402


def median_ms(fn, warmup=5, reps=30):
    """Median time of fn() in ms, with CUDA events, after warm-up."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(reps):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    times.sort()
    return times[len(times) // 2]


def reference(q, k, v, causal):
    """softmax(q k^T / sqrt(D) [+ top-left causal mask]) v in float64."""
    s = q.double() @ k.double().transpose(-1, -2) / math.sqrt(q.shape[-1])
    if causal:
        mask = torch.ones(s.shape[-2:], dtype=torch.bool, device=s.device).tril()
        s = s.masked_fill(~mask, float("-inf"))
    return torch.softmax(s, -1) @ v.double()


def rel_l2(out, ref):
    return ((out.double() - ref).norm() / ref.norm()).item()

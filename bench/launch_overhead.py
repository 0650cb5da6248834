#!/usr/bin/env python3
"""Host time per call: tiled_attn.sdpa against F.scaled_dot_product_attention.

At a tiny shape (default 1x1x128x64, fp16; random inputs, never zeros) the
GPU work is a few microseconds, so what a caller waits for is the host
path: argument checks, kernel choice, parameter packing and the launch.
Paths, timed in interleaved rounds (each round runs every path once, in
a rotating order; a path's figure is the median over rounds):

- torch_sdpa: ``F.scaled_dot_product_attention`` (PyTorch's own choice);
- tiled_attn: ``tiled_attn.sdpa`` (eager);
- tiled_attn_op: ``torch.ops.tiled_attn.sdpa`` (through the dispatcher);
- tiled_attn_op_compiled: a ``torch.compile``-d function calling
  ``tiled_attn.sdpa`` (the op inside an Inductor graph).

Each round times N back-to-back calls with ``time.perf_counter`` and then
synchronizes; the per-call figure is the wall time over N. At the default
shape the GPU finishes each call sooner than the host issues the next, so
the figure is the host's; at a larger ``--shape`` it becomes the GPU's
(the launch queue fills), which the CSV then says (gpu_bound).

    python3 bench/launch_overhead.py [--calls 2000] [--rounds 15]
                                     [--out bench/results/launch-overhead]
"""

from __future__ import annotations

import argparse
import datetime
import statistics
import time
from pathlib import Path

import torch
import torch.nn.functional as F

import tiled_attn
import tiled_attn.ops  # noqa: F401 (registers torch.ops.tiled_attn)

from common import RESULTS, write_csv

PATHS = ("torch_sdpa", "tiled_attn", "tiled_attn_op", "tiled_attn_op_compiled")


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--shape", default="1,1,128,64", help="B,H,S,D")
    p.add_argument("--calls", type=int, default=2000)
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--causal", action="store_true")
    p.add_argument("--out", type=Path, default=RESULTS / "launch-overhead",
                   help="results folder (default: bench/results/launch-overhead)")
    return p.parse_args()


def main() -> int:
    args = parse_args()
    b, h, s, d = (int(x) for x in args.shape.split(","))
    q, k, v = (torch.randn(b, h, s, d, dtype=torch.float16, device="cuda") for _ in range(3))
    causal = args.causal
    compiled = torch.compile(lambda q, k, v: tiled_attn.sdpa(q, k, v, causal=causal),
                             fullgraph=True)
    fns = {
        "torch_sdpa": lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal),
        "tiled_attn": lambda: tiled_attn.sdpa(q, k, v, causal=causal),
        "tiled_attn_op": lambda: torch.ops.tiled_attn.sdpa(q, k, v, causal),
        "tiled_attn_op_compiled": lambda: compiled(q, k, v),
    }
    ref = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    for name, fn in fns.items():  # warm-up, module loads, compilation; and a check
        for _ in range(200):
            out = fn()
        torch.cuda.synchronize()
        err = ((out.float() - ref.float()).norm() / ref.float().norm()).item()
        assert err < 1e-2, f"{name}: rel L2 {err:.2e} against F.scaled_dot_product_attention"
    per_call = {name: [] for name in PATHS}
    drain = {name: [] for name in PATHS}  # us the GPU still needed after the last call
    for r in range(args.rounds):
        order = PATHS[r % len(PATHS):] + PATHS[:r % len(PATHS)]
        for name in order:
            fn = fns[name]
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            for _ in range(args.calls):
                fn()
            t1 = time.perf_counter()
            torch.cuda.synchronize()
            t2 = time.perf_counter()
            per_call[name].append((t1 - t0) / args.calls * 1e6)
            drain[name].append((t2 - t1) * 1e6)
    device = torch.cuda.get_device_name()
    date = datetime.date.today().isoformat()
    base = statistics.median(per_call["torch_sdpa"])
    rows = []
    print(f"# {device}, torch {torch.__version__}, shape {args.shape}, causal={causal}, "
          f"{args.calls} calls x {args.rounds} rounds")
    print(f"{'path':26s} {'median_us':>10s} {'min_us':>8s} {'max_us':>8s} {'vs_torch':>9s}")
    for name in PATHS:
        xs = sorted(per_call[name])
        med = statistics.median(xs)
        print(f"{name:26s} {med:10.2f} {xs[0]:8.2f} {xs[-1]:8.2f} {med / base:9.2f}")
        rows.append({"date": date, "device": device, "torch": torch.__version__,
                     "shape": args.shape, "causal": causal, "path": name,
                     "median_us": f"{med:.2f}", "min_us": f"{xs[0]:.2f}",
                     "max_us": f"{xs[-1]:.2f}", "ratio_vs_torch_sdpa": f"{med / base:.2f}",
                     "calls": args.calls, "rounds": args.rounds,
                     "gpu_drain_us": f"{statistics.median(drain[name]):.0f}",
                     "gpu_bound": statistics.median(drain[name]) > 0.1 * med * args.calls})
    write_csv(args.out, "launch_overhead", device, date, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

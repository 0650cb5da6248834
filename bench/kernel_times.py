#!/usr/bin/env python3
"""Attention kernel time at the Llama benchmark's shapes: tiled_attn against
SDPA's flash backend (bf16, D=128, 16 heads, causal; B x S = 2x1024, 8x256).

CUDA events over back-to-back calls (common.time_fn: 20 warm-up, 100 timed,
4 rotating random input sets), 3 interleaved rounds; writes
kernel_times_<device>_<date>.csv with every round's median.

    python3 bench/kernel_times.py [--out bench/results/llama-forward]
"""

from __future__ import annotations

import argparse
import datetime
from pathlib import Path

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

import tiled_attn

from common import RESULTS, sleep_cycles_per_ms, time_fn, write_csv

SHAPES = ((2, 1024), (8, 256))


def flash(q, k, v):
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def ours(q, k, v):
    return tiled_attn.sdpa(q, k, v, causal=True)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", type=Path, default=RESULTS / "llama-forward",
                   help="results folder (default: bench/results/llama-forward)")
    args = p.parse_args()
    cpm = sleep_cycles_per_ms()
    device, date = torch.cuda.get_device_name(), datetime.date.today().isoformat()
    rows = []
    for b, s in SHAPES:
        sets = [tuple(torch.randn(b, 16, s, 128, dtype=torch.bfloat16, device="cuda")
                      for _ in range(3)) for _ in range(4)]
        for r in range(3):
            for name, fn in (("sdpa_flash", flash), ("tiled_attn", ours)):
                med, lo, hi = time_fn(fn, sets, 20, 100, cpm)
                print(f"B={b} S={s} round {r} {name}: median {med * 1e3:.1f} us")
                rows.append({"date": date, "device": device, "batch": b, "heads": 16,
                             "seq": s, "head_dim": 128, "dtype": "bf16", "causal": True,
                             "path": name, "round": r, "median_us": f"{med * 1e3:.1f}",
                             "min_us": f"{lo * 1e3:.1f}", "max_us": f"{hi * 1e3:.1f}"})
    write_csv(args.out, "kernel_times", device, date, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

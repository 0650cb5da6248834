#!/usr/bin/env python3
"""A batched prompt with left padding, as transformers' attention function
gets it (a causal mask with padding, bool, [B, 1, S, S]), through the
integration: causal with the mask since 2026-12-06 (its reading of the
mask, one host synchronisation, comes with the first call and is kept for
the mask, as for a forward's later layers), the
same kernel called directly, the mask without the causal flag (every key
block visited, as the integration ran it before) and PyTorch's SDPA with
the mask, in the same interleaved rounds.

    python3 bench/bench_padded_prefill.py [--out DIR] [--rounds 5]

bf16, Llama's attention shape (32 query heads on 8 KV heads, D = 128),
batch 4 at S = 2k and 4k (rows padded by 0, S/8, S/4 and 3S/8 tokens)
and batch 1 at 16k (padded by S/4). CUDA events after a warm-up, the median of each round's
median; TFLOP/s count the causal half of the pairs. Writes a CSV and a plot.
"""

from __future__ import annotations

import argparse
import datetime
import statistics
from pathlib import Path

import torch
import torch.nn.functional as F

import tiled_attn
import tiled_attn.integrations.transformers as ta_tf
from common import RESULTS, grouped_bars, median_ms, rel_l2, try_plot, write_csv


class _Layer(torch.nn.Module):
    """What the integration reads of an attention layer."""
    is_causal = True


def plot(csv_path: Path) -> None:
    grouped_bars(csv_path, "provider", "TFLOP/s (causal pairs)",
                 "left-padded prompts, bf16 D128 GQA 32/8")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, default=RESULTS / "functions")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    device = torch.cuda.get_device_name()
    date = datetime.date.today().isoformat()
    torch.manual_seed(0)
    layer = _Layer()
    h, h_kv, d = 32, 8, 128
    rows = []
    for b, s in ((4, 2048), (4, 4096), (1, 16384)):
        q = torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16)
        k, v = (torch.randn(b, h_kv, s, d, device="cuda", dtype=torch.bfloat16)
                for _ in range(2))
        # Row r padded by r * S / 8 tokens on the left (batch 1: S / 4).
        pads = [r * s // 8 for r in range(b)] if b > 1 else [s // 4]
        cols = torch.arange(s, device="cuda")
        keep = torch.ones(b, 1, s, s, dtype=torch.bool, device="cuda").tril()
        for r, pad in enumerate(pads):
            keep[r, :, :, cols < pad] = False
        kwide, vwide = (t.repeat_interleave(h // h_kv, 1) for t in (k, v))
        calls = {
            "tiled-attn (integration: causal + mask)":
                lambda: ta_tf.tiled_attn_attention_forward(layer, q, k, v, keep)[0],
            "tiled-attn causal + mask":
                lambda: tiled_attn.sdpa(q, k, v, keep, is_causal=True, enable_gqa=True),
            "tiled-attn (mask alone)":
                lambda: tiled_attn.sdpa(q, k, v, keep, enable_gqa=True),
            "PyTorch SDPA (mask)":
                lambda: F.scaled_dot_product_attention(q, kwide, vwide, keep),
        }
        ours = calls["tiled-attn (integration: causal + mask)"]()  # [B, S, H, D]
        alone = calls["tiled-attn (mask alone)"]().transpose(1, 2)
        real = keep[:, 0].any(-1)  # the query rows that see a key
        diff = rel_l2(ours[real], alone[real].double())
        assert diff < 1e-2, diff
        times = {name: [] for name in calls}
        for r in range(args.rounds):
            for name in (list(calls) if r % 2 == 0 else list(calls)[::-1]):
                times[name].append(median_ms(calls[name], 3, 10))
        pairs = sum(keep[r, 0].sum().item() for r in range(b))
        flops = 4 * h * pairs * d
        case = f"B={b} S={s // 1024}k"
        for name, ts in times.items():
            ms = statistics.median(ts)
            rows.append({"device": device, "date": date, "case": case, "provider": name,
                         "b": b, "s": s, "h": h, "h_kv": h_kv, "d": d,
                         "pads": " ".join(map(str, pads)), "median_ms": f"{ms:.4f}",
                         "spread_ms": f"{max(ts) - min(ts):.4f}",
                         "tflops": f"{flops / ms / 1e9:.1f}",
                         "causal_vs_mask_alone_rel_l2": f"{diff:.2e}"})
            print(f"{case:12s} {name:40s} {ms:8.3f} ms {flops / ms / 1e9:7.1f} TFLOP/s")
    try_plot(plot, write_csv(args.out, "padded-prefill", device, date, rows))


if __name__ == "__main__":
    main()

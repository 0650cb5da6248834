#!/usr/bin/env python3
"""Logit softcap (Gemma 2's) on the GPU: tiled-attn against FlexAttention.

    python3 bench/bench_softcap.py [--out bench/results/softcap] [--library DIR] [--rounds 5]
    python3 bench/bench_softcap.py --replot bench/results/softcap/softcap-bench_<device>_<date>.csv

Gemma 2's attention: scores 50 * tanh(scale * q.k / 50), causal (its global
layers) or a causal sliding window of 4096 keys (its local layers), on the
benchmark grid (B*S = 16k tokens, H*D = 2048, H_kv = H / 2), f16 and bf16,
D 64 and 128, S 4096 and 16384. Providers, timed in interleaved rounds
(CUDA events after a warm-up, the median of each round's median, random
normal inputs): tiled-attn with the cap (the library's softcap kernels),
tiled-attn without it (the same mask: what the cap costs), FlexAttention
with the cap as its score_mod and the mask as its block mask (the PyTorch
path that computes the same), and PyTorch's SDPA without the cap (it cannot
cap; its fastest backend on the same mask, for scale only). Each output
that computes the cap is checked against FlexAttention's (relative L2).
Writes a CSV, a plot and prints a table.
"""

from __future__ import annotations

import argparse
import csv
import datetime
import statistics
import sys
from pathlib import Path

from common import RESULTS, median_ms, rel_l2, write_csv

CAP = 50.0
WINDOW = 4095  # window_size (4095, 0) with causal: 4096 keys


def plot(csv_path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    rows = list(csv.DictReader(csv_path.open()))
    cases = sorted({(r["dtype"], int(r["d"]), r["mask"], int(r["s"])) for r in rows})
    providers = list(dict.fromkeys(r["provider"] for r in rows))
    fig, ax = plt.subplots(figsize=(max(8, len(cases) * 0.9), 5))
    width = 0.8 / len(providers)
    for i, name in enumerate(providers):
        ys = []
        for case in cases:
            match = [float(r["tflops"]) for r in rows if r["provider"] == name
                     and (r["dtype"], int(r["d"]), r["mask"], int(r["s"])) == case]
            ys.append(match[0] if match else 0.0)
        ax.bar([x + i * width for x in range(len(cases))], ys, width, label=name)
    ax.set_xticks([x + 0.4 - width / 2 for x in range(len(cases))])
    ax.set_xticklabels([f"{dt} D{d}\n{m} {s // 1024}k" for dt, d, m, s in cases], fontsize=7)
    ax.set_ylabel("TFLOP/s (visible pairs)")
    ax.set_title(f"softcap {CAP:g}: {rows[0]['device']}, {rows[0]['date']}")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(csv_path.with_suffix(".png"), dpi=110)
    print(f"wrote {csv_path.with_suffix('.png')}")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, default=RESULTS / "softcap",
                   help="results folder (default: bench/results/softcap)")
    p.add_argument("--library", type=Path, default=None,
                   help="kernel library folder (default: $TILED_ATTN_KERNELS or build/kernels)")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--replot", type=Path, default=None, metavar="CSV",
                   help="re-draw the PNG of a CSV this script wrote (next to it), and stop")
    args = p.parse_args()
    if args.replot:
        plot(args.replot)
        return 0
    import torch
    import torch.nn.functional as F
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention
    from tiled_attn import KernelLibrary, sdpa

    torch.manual_seed(0)
    library = KernelLibrary.load(args.library)
    device = torch.cuda.get_device_name()
    date = datetime.date.today().isoformat()
    rows = []
    for dtype in (torch.float16, torch.bfloat16):
        for d in (64, 128):
            for mask in ("causal", "window"):
                for s in (4096, 16384):
                    h, b = 2048 // d, 16384 // s
                    q = torch.randn(b, h, s, d, device="cuda", dtype=dtype) * 2
                    k = torch.randn(b, h // 2, s, d, device="cuda", dtype=dtype)
                    v = torch.randn(b, h // 2, s, d, device="cuda", dtype=dtype)
                    window = (WINDOW, 0) if mask == "window" else (-1, -1)
                    lo = -WINDOW if mask == "window" else -s

                    def visible(b_, h_, i, j):
                        return (j <= i) & (j - i >= lo)

                    # A fresh compile per case: a compiled FlexAttention
                    # reused across cases kept the previous case's band
                    # (lo) in its mask, which the check below caught.
                    torch._dynamo.reset()
                    flex = torch.compile(flex_attention, dynamic=False)
                    block = create_block_mask(visible, None, None, s, s, device="cuda")

                    def capped(score, b_, h_, i, j):
                        return CAP * torch.tanh(score / CAP)

                    pairs = sum(min(i + 1, -lo + 1) for i in range(s))
                    flops = 4 * b * h * pairs * d
                    providers = {
                        "tiled-attn softcap": lambda: sdpa(
                            q, k, v, causal=True, enable_gqa=True, window_size=window,
                            softcap=CAP, library=library),
                        "tiled-attn no cap": lambda: sdpa(
                            q, k, v, causal=True, enable_gqa=True, window_size=window,
                            library=library),
                        "FlexAttention softcap": lambda: flex(
                            q, k, v, score_mod=capped, block_mask=block, enable_gqa=True),
                    }
                    if mask == "causal":
                        providers["PyTorch SDPA no cap"] = lambda: F.scaled_dot_product_attention(
                            q, k, v, is_causal=True, enable_gqa=True)
                    ref = providers["FlexAttention softcap"]()
                    err = rel_l2(providers["tiled-attn softcap"](), ref.double())
                    assert err < 2e-2, f"tiled-attn softcap differs from FlexAttention: {err}"
                    times = {n: [] for n in providers}
                    for r in range(args.rounds):
                        names = list(providers) if r % 2 == 0 else list(providers)[::-1]
                        for n in names:
                            times[n].append(median_ms(providers[n], 5, 20))
                    for n, ts in times.items():
                        ms = statistics.median(ts)
                        rows.append({"device": device, "date": date,
                                     "dtype": str(dtype).replace("torch.", ""), "d": d,
                                     "mask": mask, "s": s, "b": b, "h": h, "h_kv": h // 2,
                                     "softcap": CAP if "softcap" in n else 0.0,
                                     "provider": n, "median_ms": f"{ms:.4f}",
                                     "tflops": f"{flops / ms / 1e9:.1f}",
                                     "spread_ms": f"{max(ts) - min(ts):.4f}",
                                     "rel_l2_vs_flex": f"{err:.2e}" if "tiled" in n and
                                     "softcap" in n else ""})
                        print(f"{rows[-1]['dtype']} D={d} {mask} S={s}: {n:24s} "
                              f"{ms:8.3f} ms {float(rows[-1]['tflops']):7.1f} TFLOP/s", flush=True)
    path = write_csv(args.out, "softcap-bench", device, date, rows)
    try:
        plot(path)
    except ImportError:
        print(f"no matplotlib: plot later with --replot {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

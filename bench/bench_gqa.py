#!/usr/bin/env python3
"""Grouped KV heads (GQA): tiled-attn next to the same Q heads with K/V per head, and PyTorch.

    python3 bench/bench_gqa.py [--out bench/results/gqa] [--library build/kernels] [--quick]
    python3 bench/bench_gqa.py --replot bench/results/gqa/gqa_<device>_<date>.csv

Grid: B*S = 16384 tokens, H_q*D = 2048, H_kv = H_q / 8 (Llama 3's ratio),
S in {1024, 4096, 16384}, D in {64, 128}, causal and not, bf16. Providers,
on the same fresh torch.randn inputs, taking turns over --rounds rounds:

- ``tiled-attn``: sdpa(q, k, v, enable_gqa=True), K/V with H_kv heads, read
  in place;
- ``tiled-attn-mha``: the plain kernel on the same Q heads with K/V of H_q
  heads (issue 16's yardstick: GQA must be at least as fast);
- ``torch-auto`` and each forced backend with enable_gqa=True (a backend
  that refuses it gets a note).

Times are medians of CUDA-event timings after a warm-up (bench/common.py),
each provider's median of its round medians. FLOPs count Q's heads
(4 B H_q S^2 D, halved when causal). Writes gqa_<device>_<date>.csv, a PNG
per (D, mask) and a markdown table under --out.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import math
import statistics
import sys
from pathlib import Path

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from tiled_attn import KernelLibrary, sdpa

from common import RESULTS, rel_l2, short_reason, sleep_cycles_per_ms, time_fn, write_csv

TOKENS, HIDDEN, RATIO = 16384, 2048, 8
PROVIDERS = ("tiled-attn", "tiled-attn-mha", "torch-auto", "torch-flash", "torch-efficient",
             "torch-cudnn")
FORCED = {"torch-flash": SDPBackend.FLASH_ATTENTION,
          "torch-efficient": SDPBackend.EFFICIENT_ATTENTION,
          "torch-cudnn": SDPBackend.CUDNN_ATTENTION}


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, default=RESULTS / "gqa",
                   help="results folder (default: bench/results/gqa)")
    p.add_argument("--library", type=Path, default=None,
                   help="kernel library folder (default: $TILED_ATTN_KERNELS or build/kernels)")
    p.add_argument("--quick", action="store_true", help="S = 4096 only")
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--iters", type=int, default=30)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--replot", type=Path, metavar="CSV",
                   help="re-draw the PNGs of a CSV this script wrote (next to it), and stop")
    return p.parse_args()


def reference(q, k, v, causal):
    """float64 attention of query heads 0-1 of batch 0 (K/V head 0)."""
    q, k, v = q[:1, :2].double(), k[:1, :1].double(), v[:1, :1].double()
    s = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    if causal:
        mask = torch.ones(s.shape[-2:], dtype=torch.bool, device=s.device).tril()
        s = s.masked_fill(~mask, float("-inf"))
    return torch.softmax(s, -1) @ v


def provider(name, causal, library):
    if name == "tiled-attn":
        return lambda q, k, v, km, vm: sdpa(q, k, v, causal=causal, library=library,
                                            enable_gqa=True), contextlib.nullcontext
    if name == "tiled-attn-mha":
        return lambda q, k, v, km, vm: sdpa(q, km, vm, causal=causal, library=library), \
            contextlib.nullcontext
    backend = FORCED.get(name)
    ctx = (lambda: sdpa_kernel(backend)) if backend is not None else contextlib.nullcontext
    return (lambda q, k, v, km, vm: F.scaled_dot_product_attention(
        q, k, v, is_causal=causal, enable_gqa=True)), ctx


def bench(d, causal, seq, library, args, meta, cycles):
    dtype, b, hq = torch.bfloat16, TOKENS // seq, HIDDEN // d
    hkv = hq // RATIO
    g = torch.Generator(device="cuda").manual_seed(seq + d + causal)

    def rnd(h):
        return torch.randn(b, h, seq, d, dtype=dtype, device="cuda", generator=g)
    sets = [(rnd(hq), rnd(hkv), rnd(hkv), rnd(hq), rnd(hq))]
    ref = reference(*sets[0][:3], causal)
    flops = 4 * b * hq * seq * seq * d / (2 if causal else 1)
    rows, runnable = [], []
    for name in PROVIDERS:
        row = dict(meta, dtype="bf16", head_dim=d, causal=causal, batch=b, heads=hq,
                   kv_heads=hq if name == "tiled-attn-mha" else hkv, seq=seq, provider=name,
                   median_ms=math.nan, tflops=math.nan, rel_l2="", note="")
        rows.append(row)
        try:
            fn, ctx = provider(name, causal, library)
            with ctx():
                out = fn(*sets[0])
            if name != "tiled-attn-mha":
                row["rel_l2"] = f"{rel_l2(out[:1, :2], ref):.3e}"
            del out
            runnable.append((row, fn, ctx, []))
        except Exception as exc:  # noqa: BLE001 (a backend that refuses: noted)
            row["note"] = short_reason(exc)
            with contextlib.suppress(Exception):
                torch.cuda.synchronize()
    for _ in range(args.rounds):
        for row, fn, ctx, rounds in runnable:
            if row["note"]:
                continue
            try:
                with ctx():
                    rounds.append(time_fn(fn, sets, args.warmup, args.iters, cycles))
            except Exception as exc:  # noqa: BLE001
                row["note"] = short_reason(exc)
    for row, _, _, rounds in runnable:
        if rounds and not row["note"]:
            med = statistics.median(r[0] for r in rounds)
            row.update(median_ms=f"{med:.4f}", tflops=f"{flops / (med * 1e-3) / 1e12:.1f}",
                       note="round medians " + ", ".join(f"{r[0]:.4f}" for r in rounds) + " ms")
    del sets
    torch.cuda.empty_cache()
    return rows


def plot(prefix: Path, rows, meta):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    for d in sorted({r["head_dim"] for r in rows}):
        for causal in (False, True):
            sel = [r for r in rows if r["head_dim"] == d and r["causal"] == causal]
            if not sel:
                continue
            seqs = sorted({r["seq"] for r in sel})
            fig, ax = plt.subplots(figsize=(8, 5))
            for name in PROVIDERS:
                y = [float(next((r["tflops"] for r in sel if r["seq"] == s
                                 and r["provider"] == name), math.nan)) for s in seqs]
                if any(math.isfinite(t) for t in y):
                    ax.plot(seqs, y, marker="o", label=name,
                            linewidth=2.5 if name == "tiled-attn" else 1.5)
            ax.set_xscale("log", base=2)
            ax.set_xticks(seqs, [str(s) for s in seqs])
            ax.set_xlabel(f"S (B*S = 16384, H_q*D = 2048, H_kv = H_q/{RATIO})")
            ax.set_ylabel("TFLOP/s (Q heads' FLOPs)")
            ax.set_ylim(bottom=0)
            ax.grid(True, alpha=0.3)
            ax.set_title(f"{meta['device']}, {meta['date']}: GQA bf16, D={d}, "
                         f"{'causal' if causal else 'non-causal'}")
            ax.legend(fontsize=8)
            fig.tight_layout()
            fig.savefig(f"{prefix}_d{d}_{'causal' if causal else 'noncausal'}.png", dpi=120)
            plt.close(fig)


def replot(csv_path: Path) -> int:
    """Re-draw the PNGs of a CSV this script wrote (next to it)."""
    import csv
    with csv_path.open() as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        r.update(head_dim=int(r["head_dim"]), causal=r["causal"] == "True", seq=int(r["seq"]),
                 tflops=r["tflops"] if r["tflops"] not in ("", "nan") else math.nan)
    plot(csv_path.with_suffix(""), rows, rows[0])
    return 0


def main() -> int:
    args = parse_args()
    if args.replot:
        return replot(args.replot)
    library = KernelLibrary.load(args.library)
    device = torch.cuda.get_device_name()
    date = datetime.date.today().isoformat()
    meta = {"date": date, "device": device, "torch_version": torch.__version__}
    cycles = sleep_cycles_per_ms()
    rows = []
    for d in (64, 128):
        for causal in (False, True):
            for seq in ((4096,) if args.quick else (1024, 4096, 16384)):
                for row in bench(d, causal, seq, library, args, meta, cycles):
                    rows.append(row)
                    print(f"D={d} causal={causal} S={seq} {row['provider']:16s} "
                          f"{row['median_ms']} ms {row['tflops']} TF/s {row['note'][:80]}",
                          flush=True)
    path = write_csv(args.out, "gqa", device, date, rows)
    plot(path.with_suffix(""), rows, meta)
    lines = [f"# GQA (H_q/H_kv = {RATIO}), bf16, {device}, {date}", "",
             "TFLOP/s (Q heads' FLOPs); ours/mha = tiled-attn's GQA over its plain kernel "
             "on the same Q heads with K/V per head.", "",
             "| D | causal | S | tiled-attn | tiled-attn-mha | ours/mha | torch-auto | flash | "
             "efficient | cudnn |", "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for d in (64, 128):
        for causal in (False, True):
            for seq in sorted({r["seq"] for r in rows}):
                sel = {r["provider"]: r for r in rows if r["head_dim"] == d
                       and r["causal"] == causal and r["seq"] == seq}
                if not sel:
                    continue
                tf = {n: sel[n]["tflops"] if n in sel else "" for n in PROVIDERS}
                ratio = ""
                with contextlib.suppress(Exception):
                    ratio = f"{float(tf['tiled-attn']) / float(tf['tiled-attn-mha']):.2f}"
                lines.append(f"| {d} | {causal} | {seq} | {tf['tiled-attn'] or '-'} | "
                             f"{tf['tiled-attn-mha'] or '-'} | {ratio or '-'} | "
                             f"{tf['torch-auto'] or '-'} | {tf['torch-flash'] or '-'} | "
                             f"{tf['torch-efficient'] or '-'} | {tf['torch-cudnn'] or '-'} |")
    md = path.with_suffix(".md")
    md.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())

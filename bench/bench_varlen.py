#!/usr/bin/env python3
"""Variable-length batches: tiled-attn's sdpa_varlen next to PyTorch on mixed lengths.

    python3 bench/bench_varlen.py [--out bench/results/varlen] [--library DIR] [--quick]
    python3 bench/bench_varlen.py --replot bench/results/varlen/varlen-speed_<device>_<date>.csv

Packed batches of 16384 tokens, H*D = 2048, bf16, D in {64, 128}, causal
(per sequence) and not, in three length sets drawn with a fixed seed:
"uniform" (lengths uniform in [64, 4096]), "skewed" (one sequence of 8192
and many short ones of 32-512) and "equal" (4 x 4096, where varlen does the
same work as a plain batch). Providers, on the same fresh torch.randn
inputs, taking turns over --rounds rounds:

- ``tiled-attn``: sdpa_varlen(q, k, v, cu, cu, max, max, causal);
- ``tiled-attn-padded``: tiled_attn.sdpa on the batch padded to the longest
  sequence, the work a caller without varlen does (keys past a sequence's
  length are attended, so its output differs: timed only, rel_l2 empty);
- ``torch-njt``: F.scaled_dot_product_attention on nested jagged tensors
  (torch.nested, layout=torch.jagged), PyTorch's varlen path (flash or
  efficient under the hood), the same computation;
- ``torch-mask``: F.scaled_dot_product_attention on the padded batch with
  an explicit boolean mask (padding and causal per sequence), the same
  computation the way a caller without varlen kernels gets it exactly.

Times are medians of CUDA-event timings after a warm-up (bench/common.py),
each provider's median of its round medians. FLOPs count the attended pairs
of each sequence (4 H S_q S_k D, causal: the pairs under the diagonal).
rel_l2 is against float64 attention over the first sequence. Writes
varlen-speed_<device>_<date>.csv, a PNG and a markdown table under --out.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import math
import random
import statistics
import sys
from pathlib import Path

import torch
import torch.nn.functional as F

from tiled_attn import KernelLibrary, sdpa, sdpa_varlen

from common import RESULTS, rel_l2, short_reason, sleep_cycles_per_ms, time_fn, write_csv

TOKENS, HIDDEN = 16384, 2048
PROVIDERS = ("tiled-attn", "tiled-attn-padded", "torch-njt", "torch-mask")


def length_sets(quick: bool) -> dict[str, list[int]]:
    rng = random.Random(16)
    uniform, total = [], 0
    while total < TOKENS:
        n = min(rng.randint(64, 4096), TOKENS - total)
        uniform.append(n)
        total += n
    skewed = [8192]
    while sum(skewed) < TOKENS:
        skewed.append(min(rng.randint(32, 512), TOKENS - sum(skewed)))
    sets = {"uniform": uniform, "skewed": skewed, "equal": [4096] * 4}
    return {"uniform": uniform} if quick else sets


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, default=RESULTS / "varlen",
                   help="results folder (default: bench/results/varlen)")
    p.add_argument("--library", type=Path, default=None,
                   help="kernel library folder (default: $TILED_ATTN_KERNELS or build/kernels)")
    p.add_argument("--quick", action="store_true", help="the uniform set only")
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--iters", type=int, default=30)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--replot", type=Path, metavar="CSV",
                   help="re-draw the PNG of a CSV this script wrote (next to it), and stop")
    return p.parse_args()


def pairs(lens, causal):
    return sum(n * (n + 1) // 2 if causal else n * n for n in lens)


def reference(q, k, v, n, causal):
    """float64 attention over the first sequence (rows 0..n), heads 0-1."""
    q, k, v = (t[:n, :2].double().transpose(0, 1) for t in (q, k, v))
    s = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    if causal:
        mask = torch.ones(n, n, dtype=torch.bool, device=s.device).tril()
        s = s.masked_fill(~mask, float("-inf"))
    return (torch.softmax(s, -1) @ v).transpose(0, 1)


def bench(d, causal, name, lens, library, args, meta, cycles):
    dtype, h = torch.bfloat16, HIDDEN // d
    g = torch.Generator(device="cuda").manual_seed(d + causal + len(lens))
    total, longest, b = sum(lens), max(lens), len(lens)
    cu = torch.tensor([0] + list(torch.tensor(lens).cumsum(0)), dtype=torch.int32,
                      device="cuda")
    q, k, v = (torch.randn(total, h, d, dtype=dtype, device="cuda", generator=g)
               for _ in range(3))

    def padded(t):  # [B, H, max, D], zeros past each length
        out = torch.zeros(b, longest, h, d, dtype=dtype, device="cuda")
        for i, n in enumerate(lens):
            out[i, :n] = t[cu[i]:cu[i] + n]
        return out.transpose(1, 2)
    qp, kp, vp = padded(q), padded(k), padded(v)
    index = torch.arange(longest, device="cuda")
    valid = index[None, :] < torch.tensor(lens, device="cuda")[:, None]  # [B, max]
    mask = valid[:, None, None, :] & valid[:, None, :, None]
    if causal:
        mask = mask & (index[None, :] <= index[:, None])[None, None]
    # A row that sees no key (padding) would be NaN: it sees key 0 (ignored).
    mask[..., 0] = True
    njt = [torch.nested.nested_tensor_from_jagged(t, cu.long()).transpose(1, 2)
           if hasattr(torch.nested, "nested_tensor_from_jagged") else None
           for t in (q, k, v)]
    fns = {
        "tiled-attn": lambda: sdpa_varlen(q, k, v, cu, cu, longest, longest, causal=causal,
                                          library=library),
        "tiled-attn-padded": lambda: sdpa(qp, kp, vp, causal=causal, library=library),
        "torch-njt": lambda: F.scaled_dot_product_attention(*njt, is_causal=causal),
        "torch-mask": lambda: F.scaled_dot_product_attention(qp, kp, vp, attn_mask=mask),
    }
    ref = reference(q, k, v, lens[0], causal)
    flops = 4 * h * d * pairs(lens, causal)
    rows, runnable = [], []
    for provider in PROVIDERS:
        row = dict(meta, dtype="bf16", head_dim=d, causal=causal, lengths=name, seqs=b,
                   tokens=total, max_seqlen=longest, heads=h, provider=provider,
                   median_ms=math.nan, tflops=math.nan, rel_l2="", note="")
        rows.append(row)
        try:
            out = fns[provider]()
            if provider == "tiled-attn":
                first = out[:lens[0], :2]
            elif provider == "torch-njt":
                first = out.transpose(1, 2).values()[:lens[0], :2]
            elif provider == "torch-mask":
                first = out[0, :2, :lens[0]].transpose(0, 1)
            else:
                first = None
            if first is not None:
                row["rel_l2"] = f"{rel_l2(first, ref):.3e}"
            del out
            runnable.append((row, fns[provider], []))
        except Exception as exc:  # noqa: BLE001 (a provider that refuses: noted)
            row["note"] = short_reason(exc)
            with contextlib.suppress(Exception):
                torch.cuda.synchronize()
    for _ in range(args.rounds):
        for row, fn, rounds in runnable:
            if row["note"]:
                continue
            try:
                rounds.append(time_fn(lambda: fn(), [()], args.warmup, args.iters, cycles))
            except Exception as exc:  # noqa: BLE001
                row["note"] = short_reason(exc)
    for row, _, rounds in runnable:
        if rounds and not row["note"]:
            med = statistics.median(r[0] for r in rounds)
            row.update(median_ms=f"{med:.4f}", tflops=f"{flops / (med * 1e-3) / 1e12:.1f}",
                       note="round medians " + ", ".join(f"{r[0]:.4f}" for r in rounds) + " ms")
    torch.cuda.empty_cache()
    return rows


def plot(prefix: Path, rows, meta):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    cases = sorted({(int(r["head_dim"]), r["causal"] in (True, "True"), r["lengths"])
                    for r in rows})
    fig, ax = plt.subplots(figsize=(11, 5))
    width = 0.8 / len(PROVIDERS)
    for i, provider in enumerate(PROVIDERS):
        y = []
        for d, causal, name in cases:
            sel = [r for r in rows if int(r["head_dim"]) == d
                   and (r["causal"] in (True, "True")) == causal and r["lengths"] == name
                   and r["provider"] == provider]
            t = sel[0]["tflops"] if sel else math.nan
            y.append(float(t) if t not in ("", None) else math.nan)
        ax.bar([c + (i - len(PROVIDERS) / 2 + 0.5) * width for c in range(len(cases))], y,
               width, label=provider)
    ax.set_xticks(range(len(cases)),
                  [f"D={d}\n{'causal' if c else 'full'}\n{n}" for d, c, n in cases],
                  fontsize=8)
    ax.set_ylabel("TFLOP/s (attended pairs)")
    ax.set_title(f"{meta['device']}, {meta['date']}: packed bf16 batches of "
                 f"{TOKENS} tokens, H*D = {HIDDEN}")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(f"{prefix}.png", dpi=120)
    plt.close(fig)


def replot(csv_path: Path) -> int:
    """Re-draw the PNG of a CSV this script wrote (next to it)."""
    import csv
    with csv_path.open() as f:
        rows = list(csv.DictReader(f))
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
            for name, lens in length_sets(args.quick).items():
                for row in bench(d, causal, name, lens, library, args, meta, cycles):
                    rows.append(row)
                    print(f"D={d} causal={causal} {name:8s} {row['provider']:18s} "
                          f"{row['median_ms']} ms {row['tflops']} TF/s rel_l2={row['rel_l2']} "
                          f"{row['note'][:80]}", flush=True)
    path = write_csv(args.out, "varlen-speed", device, date, rows)
    with contextlib.suppress(ImportError):
        plot(path.with_suffix(""), rows, meta)
    lines = [f"# Variable-length batches, bf16, {TOKENS} tokens, {device}, {date}", "",
             "TFLOP/s over the attended pairs of each sequence.", "",
             "| D | causal | lengths | " + " | ".join(PROVIDERS) + " |",
             "| --- | --- | --- |" + " --- |" * len(PROVIDERS)]
    for d in (64, 128):
        for causal in (False, True):
            for name in length_sets(args.quick):
                sel = {r["provider"]: r for r in rows if r["head_dim"] == d
                       and r["causal"] == causal and r["lengths"] == name}
                lines.append(f"| {d} | {causal} | {name} | " + " | ".join(
                    str(sel[p]["tflops"]) if p in sel else "-" for p in PROVIDERS) + " |")
    path.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())

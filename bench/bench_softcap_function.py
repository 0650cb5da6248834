#!/usr/bin/env python3
"""Soft-capping two ways (issue 37): the `softcap` kernel feature and the
score function kernels/functions/tanh_softcap.mlir (cap * tanh(s / cap), a
captured scalar), against float64, each other, and FlexAttention's
tanh score_mod.

    python3 bench/bench_softcap_function.py [--out bench/results/functions] [--library DIR]
                                            [--rounds 5] [--check-only]
    python3 bench/bench_softcap_function.py --replot bench/results/functions/softcap-function_<device>_<date>.csv

Correctness: odd shapes (S_q != S_k, S not a multiple of the blocks, GQA),
bf16 and f16, D = 128, causal and not, cap 30 and 5: tiled-attn's error
against a float64 reference with the cap, within 2x of FlexAttention's
with the same cap on the same inputs (PyTorch's SDPA has no soft-cap),
for the feature and the function, and their difference
(softcap-function-check CSV).

Speed: bf16, D = 128, H = 16, B*S = 16k, S 4096 and 16384, causal and not,
cap 30. Providers in interleaved rounds (CUDA events after a warm-up, the
median of the rounds' medians): the feature (`softcap=30.0`), the function
(`score_mod="tanh_softcap"`), the plain kernel (no cap), FlexAttention with
`score_mod=lambda s, b, h, i, j: 30 * tanh(s / 30)`. TFLOP/s count the
pairs the causal mask leaves (softcap-function CSV).
"""

from __future__ import annotations

import argparse
import datetime
import math
import statistics
from pathlib import Path

# common (and torch) are imported where used, so that --replot runs where
# only matplotlib is.
RESULTS = Path(__file__).resolve().parent / "results"


def reference(torch, q, k, v, cap, causal):
    """float64 attention with grouped KV heads, top-left causal, scores
    cap * tanh(scale * s / cap)."""
    g = q.shape[1] // k.shape[1]
    k64 = k.double().repeat_interleave(g, 1)
    v64 = v.double().repeat_interleave(g, 1)
    s = q.double() @ k64.transpose(-1, -2) / math.sqrt(q.shape[-1])
    s = cap * torch.tanh(s / cap)
    if causal:
        i = torch.arange(q.shape[2], device=q.device)[:, None]
        j = torch.arange(k.shape[2], device=q.device)[None, :]
        s = s.masked_fill(j > i, float("-inf"))
    return torch.softmax(s, -1) @ v64


def check(torch, sdpa, library, device, date, out) -> bool:
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention
    from common import rel_l2, write_csv

    rows, ok = [], True
    shapes = [(2, 8, 4, 333, 1000), (1, 8, 2, 1000, 1000), (3, 4, 4, 129, 777)]
    for (b, hq, hkv, sq, sk), dtype, causal, cap in (
            (s, t, c, p) for s in shapes for t in (torch.bfloat16, torch.float16)
            for c in (False, True) for p in (30.0, 5.0)):
        q = torch.randn(b, hq, sq, 128, device="cuda", dtype=dtype) * 2
        k = torch.randn(b, hkv, sk, 128, device="cuda", dtype=dtype) * 2
        v = torch.randn(b, hkv, sk, 128, device="cuda", dtype=dtype)
        ref = reference(torch, q, k, v, cap, causal)
        feature = sdpa(q, k, v, is_causal=causal, enable_gqa=True, softcap=cap,
                       library=library)
        function = sdpa(q, k, v, is_causal=causal, enable_gqa=True, library=library,
                        score_mod="tanh_softcap", score_mod_args=(cap,))
        block = (create_block_mask(lambda b_, h_, i, j: j <= i, None, None, sq, sk,
                                   device="cuda") if causal else None)
        flex = flex_attention(q, k, v, score_mod=lambda s, b_, h_, i, j: cap * torch.tanh(s / cap),
                              block_mask=block, enable_gqa=True)
        e_feat, e_fun, e_math = rel_l2(feature, ref), rel_l2(function, ref), rel_l2(flex, ref)
        passed = max(e_feat, e_fun) <= 2 * max(e_math, 1e-3)
        ok &= passed
        rows.append(dict(b=b, h_q=hq, h_kv=hkv, s_q=sq, s_k=sk, d=128,
                         dtype=str(dtype).split(".")[-1], causal=causal, cap=cap,
                         feature_rel_l2=f"{e_feat:.3e}", function_rel_l2=f"{e_fun:.3e}",
                         flex_rel_l2=f"{e_math:.3e}",
                         feature_vs_function=f"{rel_l2(function, feature.double()):.3e}",
                         passed=passed))
        print(rows[-1], flush=True)
    write_csv(out, "softcap-function-check", device, date, rows)
    return ok


def plot(csv_path: Path) -> None:
    import csv

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = list(csv.DictReader(csv_path.open()))
    cells = sorted({(r["causal"], int(r["s"])) for r in rows})
    names = list(dict.fromkeys(r["provider"] for r in rows))
    fig, ax = plt.subplots(figsize=(9, 4.5))
    width = 0.8 / len(names)
    for i, name in enumerate(names):
        values = [float(next(r["tflops"] for r in rows if (r["causal"], int(r["s"])) == cell
                             and r["provider"] == name)) for cell in cells]
        ax.bar([c + i * width for c in range(len(cells))], values, width, label=name)
    ax.set_xticks([c + 0.4 - width / 2 for c in range(len(cells))])
    ax.set_xticklabels([f"S={s // 1024}k\n{'causal' if c == 'True' else 'non-causal'}"
                        for c, s in cells])
    ax.set_ylabel("TFLOP/s")
    ax.set_title(f"Soft-cap 30, bf16, D=128, H=16 ({csv_path.stem.split('_', 1)[1]})")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(csv_path.with_suffix(".png"), dpi=120)
    print(f"wrote {csv_path.with_suffix('.png')}")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, default=RESULTS / "functions")
    p.add_argument("--library", default=None)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--check-only", action="store_true")
    p.add_argument("--replot", type=Path, default=None)
    args = p.parse_args()
    if args.replot:
        plot(args.replot)
        return 0

    import torch
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention
    from common import interleaved, median_ms, try_plot, write_csv
    from tiled_attn import KernelLibrary, sdpa

    torch.manual_seed(0)
    library = KernelLibrary.load(args.library)
    device = torch.cuda.get_device_name()
    date = datetime.date.today().isoformat()
    ok = check(torch, sdpa, library, device, date, args.out)
    if args.check_only:
        return 0 if ok else 1
    rows = []
    h, d, cap = 16, 128, 30.0
    for causal in (False, True):
        for s in (4096, 16384):
            b = 16384 // s
            q, k, v = (torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16)
                       for _ in range(3))
            torch._dynamo.reset()
            flex = torch.compile(flex_attention, dynamic=False)

            def tanh_mod(score, b_, h_, i, j):
                return cap * torch.tanh(score / cap)

            block = (create_block_mask(lambda b_, h_, i, j: j <= i, None, None, s, s,
                                       device="cuda") if causal else None)
            providers = {
                "tiled-attn feature": lambda: sdpa(q, k, v, is_causal=causal, softcap=cap,
                                                   library=library),
                "tiled-attn function": lambda: sdpa(q, k, v, is_causal=causal,
                                                    library=library, score_mod="tanh_softcap",
                                                    score_mod_args=(cap,)),
                "tiled-attn plain": lambda: sdpa(q, k, v, is_causal=causal, library=library),
                "FlexAttention": lambda: flex(q, k, v, score_mod=tanh_mod, block_mask=block),
            }
            times, _ = interleaved(providers, args.rounds, median_ms, catch=False)
            pairs = s * (s + 1) // 2 if causal else s * s
            flops = 4 * b * h * pairs * d
            for name, ts in times.items():
                ms = statistics.median(ts)
                rows.append(dict(s=s, b=b, h=h, d=d, causal=causal, cap=cap, provider=name,
                                 ms=f"{ms:.4f}", tflops=f"{flops / ms / 1e9:.1f}"))
                print(rows[-1], flush=True)
    path = write_csv(args.out, "softcap-function", device, date, rows)
    try_plot(plot, path)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())

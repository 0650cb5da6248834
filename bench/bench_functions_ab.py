#!/usr/bin/env python3
"""Interleaved A/B of two kernel libraries on score- and mask-function
kernels (sm_90a, bf16, D = 128): a library before and after a change, in the
same process and rounds.

    python3 bench/bench_functions_ab.py --before DIR --after DIR [--stem fold-ab]
        [--cases alibi,alibi-causal,prefix_lm] [--out bench/results/functions]

H = 16, B*S = 16k tokens, S 4096 and 16384 (--head-dim D: H = 2048 / D). Cases: alibi, prefix_lm
(prefixes of S/4), bias (PyTorch's float32 attn_mask, [B, 1, S, S]), mask
(its bool attn_mask, a tenth of the pairs hidden at random), bias16 (a
bf16 attn_mask of q's dtype: the bias_bf16 kernel, or the float32 bias
after a conversion in each call), document
(documents of 1024), plain (no function), each optionally with "-causal". CUDA events after a
warm-up, the median of each round's median, the two libraries alternating
within each round on the same random normal inputs; the relative L2
difference of their outputs is recorded too. Writes the CSV and a plot.
With --plain LIB, LIB's plain kernel (the same causal mask, no function)
runs in the same rounds too, as the "plain" rows; each --also NAME=DIR adds
a library to the rounds (the outputs' difference stays after vs before). (`fold-ab`:
tile-fold-score-terms; `early-gathers-ab`: tile-early-gathers.)
"""

from __future__ import annotations

import argparse
import datetime
import statistics
from pathlib import Path

import torch

import tiled_attn
from common import RESULTS, grouped_bars, median_ms, write_csv


def plot(csv_path: Path) -> None:
    import csv

    first = next(csv.DictReader(csv_path.open()))
    grouped_bars(csv_path, "library", "TFLOP/s",
                 f"{csv_path.name.split('_')[0]}, bf16 D{first['d']}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", type=Path, required=True)
    ap.add_argument("--after", type=Path, required=True)
    ap.add_argument("--out", type=Path, default=RESULTS / "functions")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--stem", default="fold-ab", help="the CSV's stem")
    ap.add_argument("--plain", type=Path, default=None,
                    help="a library whose plain kernel (no function, the case's causal "
                         "mask) runs in the same rounds, as 'plain', for the ratio to it")
    ap.add_argument("--cases", default="alibi,alibi-causal,prefix_lm",
                    help="of alibi, prefix_lm, bias, bias16, mask, document, plain, each with "
                         "-causal")
    ap.add_argument("--head-dim", type=int, default=128,
                    help="D (H = 2048 / D heads; default 128, 16 heads)")
    ap.add_argument("--also", action="append", default=[], metavar="NAME=DIR",
                    help="another library in the same rounds, as NAME (repeatable: "
                         "variants of a change side by side)")
    args = ap.parse_args()
    libraries = {"before": tiled_attn.KernelLibrary.load(args.before),
                 "after": tiled_attn.KernelLibrary.load(args.after)}
    for item in args.also:
        name, _, path = item.partition("=")
        if not path or name in libraries or name == "plain":
            raise SystemExit(f"--also {item!r}: want NAME=DIR with a new NAME")
        libraries[name] = tiled_attn.KernelLibrary.load(Path(path))
    plain = tiled_attn.KernelLibrary.load(args.plain) if args.plain else None
    device = torch.cuda.get_device_name()
    date = datetime.date.today().isoformat()
    torch.manual_seed(0)
    d = args.head_dim
    h = 2048 // d
    rows = []
    for case_name in args.cases.split(","):
        function, causal = case_name.removesuffix("-causal"), case_name.endswith("-causal")
        for s in (4096, 16384):
            b = 16384 // s
            q, k, v = (torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16)
                       for _ in range(3))
            if function == "plain":
                kwargs = {}
            elif function == "alibi":
                kwargs = {"score_mod": "alibi",
                          "score_mod_args": (torch.rand(h, device="cuda"),)}
            elif function == "prefix_lm":
                kwargs = {"mask_mod": "prefix_lm", "mask_mod_args": (
                    torch.full((b,), s // 4, dtype=torch.int32, device="cuda"),)}
            elif function == "bias":
                kwargs = {"attn_mask": torch.randn(b, 1, s, s, device="cuda")}
            elif function == "bias16":
                # q's dtype: the bias_bf16 kernel's, or converted to float32
                # in each call where the library has none.
                kwargs = {"attn_mask": torch.randn(b, 1, s, s, device="cuda",
                                                   dtype=torch.bfloat16)}
            elif function == "mask":
                mask = torch.rand(b, 1, s, s, device="cuda") > 0.1
                mask[..., 0] = True
                kwargs = {"attn_mask": mask}
            else:
                ids = (torch.arange(s, device="cuda") // 1024).to(torch.int32)
                kwargs = {"mask_mod": "document", "mask_mod_args": (ids.repeat(b, 1),)}
            calls = {name: (lambda lib=lib: tiled_attn.sdpa(q, k, v, is_causal=causal,
                                                            library=lib, **kwargs))
                     for name, lib in libraries.items()}
            if plain is not None:
                calls["plain"] = lambda: tiled_attn.sdpa(q, k, v, is_causal=causal,
                                                         library=plain)
            outs = {name: fn() for name, fn in calls.items()}
            diff = ((outs["after"].float() - outs["before"].float()).norm()
                    / outs["before"].float().norm()).item()
            times = {name: [] for name in calls}
            for _ in range(args.rounds):
                for name, fn in calls.items():
                    times[name].append(median_ms(fn))
            flops = 4 * b * h * s * s * d / (2 if causal else 1)
            case = f"{function}{' causal' if causal else ''} S={s // 1024}k"
            for name, ts in times.items():
                ms = statistics.median(ts)
                rows.append({"device": device, "date": date, "case": case, "library": name,
                             "b": b, "h": h, "s": s, "d": d, "median_ms": f"{ms:.4f}",
                             "spread_ms": f"{max(ts) - min(ts):.4f}",
                             "tflops": f"{flops / ms / 1e9:.1f}",
                             "after_vs_before_rel_l2": f"{diff:.2e}"})
                print(f"{case:22s} {name:7s} {ms:8.3f} ms {flops / ms / 1e9:7.1f} TFLOP/s "
                      f"(outputs differ by {diff:.1e})")
    plot(write_csv(args.out, args.stem, device, date, rows))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Paged decode (issue 38) on several kernel libraries side by side: how
one paged kernel configuration compares with another (say, ring slots of
the gathered page-of-16 kernels), as GB/s of K and V.

    python3 bench/bench_paged_libraries.py NAME=DIR [NAME=DIR ...]
        [--page 16] [--reference-page 64] [--out bench/results/decode]

Each library (a folder with a manifest, e.g. tiled-attn-compile --spec of
a spec with the configuration changed) runs sdpa_with_kvcache on pages of
--page keys, and the first library also on pages of --reference-page; the
grid is bench_decode.py's (bf16, S_q = 1, 32 query heads on 8 KV heads,
D = 128, every cache full, the pages of all entries in a random order).
Timing as bench_decode.time_case: interleaved rounds, CUDA-event medians
after a warm-up, input sets rotating so that K and V come from HBM.
Writes paged-libraries[-<tag>]_<device>_<date>.csv and its plot.
"""

from __future__ import annotations

import argparse
import datetime
import math
import sys
from pathlib import Path

import bench_decode as decode


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("libraries", nargs="+", help="NAME=DIR")
    p.add_argument("--page", type=int, default=16)
    p.add_argument("--reference-page", type=int, default=64)
    p.add_argument("--out", type=Path,
                   default=Path(__file__).resolve().parent / "results" / "decode")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--iters", type=int, default=50)
    p.add_argument("--tag", default="", help="appended to the CSV's name")
    args = p.parse_args()
    decode.import_gpu_modules()
    import torch
    from common import sleep_cycles_per_ms, try_plot, write_csv
    from tiled_attn import sdpa_with_kvcache
    from tiled_attn.sdpa import library_of

    libs = {}
    for spec in args.libraries:
        name, sep, path = spec.partition("=")
        if not sep:
            p.error(f"expected NAME=DIR, got {spec!r}")
        libs[name] = library_of(path)
    first = next(iter(libs))
    cycles = sleep_cycles_per_ms()
    rows = []
    for b, sk in decode.CASES:
        kv_bytes = 2 * b * decode.H_KV * sk * decode.D * 2
        n = max(1, min(8, math.ceil((256 << 20) / kv_bytes)))
        caches = [(torch.randn(b, 1, decode.H_Q, decode.D, device="cuda", dtype=torch.bfloat16),
                   torch.randn(b, sk, decode.H_KV, decode.D, device="cuda", dtype=torch.bfloat16),
                   torch.randn(b, sk, decode.H_KV, decode.D, device="cuda", dtype=torch.bfloat16))
                  for _ in range(n)]
        pages = {args.page, args.reference_page}
        sets = {page: [(q, *decode.paged(k, v, page)) for q, k, v in caches] for page in pages}
        lengths = torch.full((b,), sk, dtype=torch.int32, device="cuda")

        def call(lib):
            return lambda q, k, v, t: sdpa_with_kvcache(q, k, v, lengths, library=lib,
                                                        block_table=t)
        calls = {f"{name}-paged{args.page}": (call(lib), sets[args.page])
                 for name, lib in libs.items()}
        calls[f"{first}-paged{args.reference_page}"] = (call(libs[first]),
                                                        sets[args.reference_page])
        rows += decode.time_case(calls, b, sk, args, cycles)
        del caches, sets
        torch.cuda.empty_cache()
    device = torch.cuda.get_device_name()
    stem = "paged-libraries" + (f"-{args.tag}" if args.tag else "")
    path = write_csv(args.out, stem, device,
                     datetime.date.today().isoformat(), rows)
    try_plot(plot, path)
    return 0


def plot(csv_path: Path) -> None:
    import csv
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = list(csv.DictReader(csv_path.open()))
    cells = sorted({(int(r["batch"]), int(r["s_k"])) for r in rows})
    names = list(dict.fromkeys(r["provider"] for r in rows))
    fig, ax = plt.subplots(figsize=(9, 4.5))
    width = 0.8 / len(names)
    for i, name in enumerate(names):
        values = [next((float(r["gb_per_s"]) for r in rows
                        if (int(r["batch"]), int(r["s_k"])) == cell and r["provider"] == name
                        and r["gb_per_s"] != "nan"), 0.0) for cell in cells]
        ax.bar([c + i * width for c in range(len(cells))], values, width, label=name)
    ax.set_xticks([c + 0.4 - width / 2 for c in range(len(cells))])
    ax.set_xticklabels([f"B={b}\nS_k={sk // 1024}k" for b, sk in cells])
    ax.set_ylabel("GB/s of K and V read")
    ax.set_title(f"Paged decode by library ({csv_path.stem.split('_', 1)[1]})")
    ax.legend(fontsize=8, ncol=2)
    fig.tight_layout()
    fig.savefig(csv_path.with_suffix(".png"), dpi=120)
    print(f"wrote {csv_path.with_suffix('.png')}")


if __name__ == "__main__":
    sys.exit(main())

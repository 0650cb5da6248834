#!/usr/bin/env python3
"""Split-KV chunk counts at batch 1 (issue 38): sdpa_with_kvcache on the
contiguous cache and on pages of each --pages size, with num_splits forced
to each of --splits and with the heuristic's choice (0), as GB/s of K and V.

    python3 bench/bench_split_counts.py [--library [NAME=]DIR ...]
        [--splits 7,8,15,16] [--pages 16,64] [--out bench/results/decode]
        [--tag TAG]

With several libraries (NAME=DIR each), every one runs every case, its
name before the provider's (an A/B of split kernel configurations).

The grid is bench_decode.py's at batch 1 (bf16, S_q = 1, 32 query heads on
8 KV heads, D = 128, every cache full, pages in a random order); timing as
bench_decode.time_case: interleaved rounds, CUDA-event medians after a
warm-up, input sets rotating so that K and V come from HBM. Writes
split-counts[-<tag>]_<device>_<date>.csv and its plot.
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
    p.add_argument("--library", action="append", default=[],
                   help="[NAME=]DIR; repeat for an A/B")
    p.add_argument("--splits", default="7,8,15,16")
    p.add_argument("--pages", default="16,64")
    p.add_argument("--out", type=Path,
                   default=Path(__file__).resolve().parent / "results" / "decode")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--iters", type=int, default=50)
    p.add_argument("--tag", default="", help="appended to the CSV's name")
    args = p.parse_args()
    decode.import_gpu_modules()
    import torch
    from bench_paged_libraries import plot
    from common import sleep_cycles_per_ms, try_plot, write_csv
    from tiled_attn import sdpa_with_kvcache
    from tiled_attn.sdpa import library_of

    libs = {}
    for spec in args.library or [""]:
        name, sep, path = spec.rpartition("=") if "=" in spec else ("", "", spec)
        libs[name] = library_of(path) if path else None
    counts = [0] + [int(s) for s in args.splits.split(",") if s and s != "0"]
    pages = [0] + [int(s) for s in args.pages.split(",") if s]
    cycles = sleep_cycles_per_ms()
    rows = []
    b = 1
    for sk in (4096, 32768):
        kv_bytes = 2 * b * decode.H_KV * sk * decode.D * 2
        n = max(1, min(8, math.ceil((256 << 20) / kv_bytes)))
        caches = [(torch.randn(b, 1, decode.H_Q, decode.D, device="cuda", dtype=torch.bfloat16),
                   torch.randn(b, sk, decode.H_KV, decode.D, device="cuda", dtype=torch.bfloat16),
                   torch.randn(b, sk, decode.H_KV, decode.D, device="cuda", dtype=torch.bfloat16))
                  for _ in range(n)]
        lengths = torch.full((b,), sk, dtype=torch.int32, device="cuda")
        sets = {page: ([(q, k, v, None) for q, k, v in caches] if page == 0 else
                       [(q, *decode.paged(k, v, page)) for q, k, v in caches])
                for page in pages}

        def call(lib, splits):
            return lambda q, k, v, t: sdpa_with_kvcache(
                q, k, v, lengths, library=lib, block_table=t, num_splits=splits)
        calls = {}
        for lib_name, lib in libs.items():
            for page in pages:
                for splits in counts:
                    name = (f"{lib_name + '-' if lib_name else ''}"
                            f"{'contiguous' if page == 0 else f'paged{page}'}-"
                            f"{'heuristic' if splits == 0 else f's{splits}'}")
                    calls[name] = (call(lib, splits), sets[page])
        rows += decode.time_case(calls, b, sk, args, cycles)
        del caches, sets
        torch.cuda.empty_cache()
    path = write_csv(args.out, "split-counts" + (f"-{args.tag}" if args.tag else ""),
                     torch.cuda.get_device_name(), datetime.date.today().isoformat(), rows)
    try_plot(plot, path)
    return 0


if __name__ == "__main__":
    sys.exit(main())

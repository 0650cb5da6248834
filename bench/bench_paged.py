#!/usr/bin/env python3
"""Decode on a paged KV cache (issue 38): sdpa_with_kvcache with a block
table, pages of 16, 32, 64 and 256 keys, next to the contiguous cache and
PyTorch's SDPA backends on contiguous tensors, as GB/s of K and V.

    python3 bench/bench_paged.py [--out bench/results/decode] [--library DIR]
                                 [--check] [--quick]
    python3 bench/bench_paged.py --replot bench/results/decode/paged_<device>_<date>.csv

The grid is bench_decode.py's (the issue's table): bf16, S_q = 1, 32 query
heads on 8 KV heads, D = 128, batch in {1, 16, 64}, S_k in {4096, 32768},
every cache full. The paged caches are [num_pages, page, H_kv, D] with the
pages of all entries in a random order (bench_decode.paged), so that no
entry's keys are contiguous beyond a page. Providers, taking turns over
--rounds rounds: ``tiled-attn-kvcache`` (contiguous [B, S_k, H_kv, D]),
``tiled-attn-paged<P>`` for each page size, and PyTorch's ``torch-auto``
and ``torch-cudnn`` on [B, H_kv, S_k, D] tensors (PyTorch has no paged
attention), and ``tiled-attn-varlen-paged64``: the same step as vLLM
calls it, ``sdpa_varlen_with_kvcache`` on packed queries (one per
sequence, ``cu_seqlens_q`` 0, 1, ..., B) and pages of 64 (no packed GQA
there). Times as bench_decode.py's: CUDA-event medians after a
warm-up, each provider's median of its round medians, enough input sets
rotating that K and V come from HBM.

--check first runs bench_decode.check_kvcache on the paged caches (page
sizes 16, 32, 64, 256; lengths 0, 1, not a multiple of a page, full; S_q 1 to
8; GQA ratios 1, 4, 8; D 64, 128, 256; bottom-right causal; split-KV at
batch 1) against float64, within 2x of PyTorch's math backend's error, and
writes paged-check_<device>_<date>.csv.
"""

from __future__ import annotations

import argparse
import datetime
import math
import sys
from pathlib import Path

import bench_decode as decode

PAGE_SIZES = (16, 32, 64, 256)
PROVIDERS = ("tiled-attn-kvcache", *(f"tiled-attn-paged{p}" for p in PAGE_SIZES),
             "tiled-attn-varlen-paged64", "torch-auto", "torch-cudnn")


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path,
                   default=Path(__file__).resolve().parent / "results" / "decode")
    p.add_argument("--library", default=None)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--iters", type=int, default=50)
    p.add_argument("--check", action="store_true")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--check-only", action="store_true",
                   help="--check without the benchmark (say, of a library of sm_80 "
                        "kernels only: their PTX on a Hopper GPU)")
    p.add_argument("--tag", default="", help="appended to the CSVs' names")
    p.add_argument("--replot", type=Path, default=None)
    return p.parse_args()


def bench(library, args, cycles) -> list[dict]:
    from tiled_attn import sdpa_varlen_with_kvcache, sdpa_with_kvcache

    torch = decode.torch
    rows = []
    H_Q, H_KV, D = decode.H_Q, decode.H_KV, decode.D
    for b, sk in (decode.CASES[:2] if args.quick else decode.CASES):
        kv_bytes = 2 * b * H_KV * sk * D * 2
        sets_n = max(1, min(8, math.ceil((256 << 20) / kv_bytes)))
        # Each set: q [B, 1, H_q, D] and the caches [B, S_k, H_kv, D].
        caches = [(torch.randn(b, 1, H_Q, D, device="cuda", dtype=torch.bfloat16),
                   torch.randn(b, sk, H_KV, D, device="cuda", dtype=torch.bfloat16),
                   torch.randn(b, sk, H_KV, D, device="cuda", dtype=torch.bfloat16))
                  for _ in range(sets_n)]
        inputs = {"tiled-attn-kvcache": caches,
                  "torch": [(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2))
                            for q, k, v in caches]}
        for page in PAGE_SIZES:
            inputs[f"tiled-attn-paged{page}"] = [(q, *decode.paged(k, v, page))
                                                 for q, k, v in caches]
        inputs["tiled-attn-varlen-paged64"] = [(q[:, 0], *rest) for q, *rest
                                               in inputs["tiled-attn-paged64"]]
        lengths = torch.full((b,), sk, dtype=torch.int32, device="cuda")
        cu = torch.arange(b + 1, dtype=torch.int32, device="cuda")

        def run_kvcache(q, k, v, table=None):
            return sdpa_with_kvcache(q, k, v, lengths, library=library, block_table=table)

        def run_varlen(q, k, v, table):
            return sdpa_varlen_with_kvcache(q, k, v, cu, 1, lengths, table, library=library)

        calls = {name: (run_varlen if name.startswith("tiled-attn-varlen")
                        else run_kvcache if name.startswith("tiled-attn")
                        else decode.provider(name, library),
                        inputs["torch" if name.startswith("torch") else name])
                 for name in PROVIDERS}
        rows += decode.time_case(calls, b, sk, args, cycles)
        del caches, inputs
        torch.cuda.empty_cache()
    return rows


def main() -> int:
    args = parse_args()
    decode.PROVIDERS = PROVIDERS  # what the plot draws, in this order
    if args.replot:
        decode.plot(args.replot)
        return 0
    decode.import_gpu_modules()
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from common import sleep_cycles_per_ms, try_plot, write_csv
    from tiled_attn import KernelLibrary
    from tiled_attn.sdpa import library_of

    library = library_of(args.library) if args.library else KernelLibrary.load()
    device = decode.torch.cuda.get_device_name()
    date = datetime.date.today().isoformat()
    ok = True
    if args.check or args.check_only:
        ok = decode.check_kvcache(library, device, date, args.out, page_sizes=PAGE_SIZES,
                                  stem="paged-check" + (f"-{args.tag}" if args.tag else ""))
    if args.check_only:
        return 0 if ok else 1
    rows = bench(library, args, sleep_cycles_per_ms())
    path = write_csv(args.out, "paged" + (f"-{args.tag}" if args.tag else ""), device, date,
                     rows)
    try_plot(decode.plot, path)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

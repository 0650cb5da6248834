#!/usr/bin/env python3
"""A batch-1 decode step for Nsight Compute (issue 38): bf16, one query per
head, 32 query heads on 8 KV heads, D = 128, a full contiguous cache of
32k keys through sdpa_with_kvcache (packed GQA, split-KV and the merge).

    ncu --kernel-name regex:"sdpa_fwd|split_merge" --launch-skip 10 \\
        --launch-count 2 --section SpeedOfLight [--section ...] \\
        python3 bench/ncu_decode_batch1.py [--library DIR]

(bench/results/decode/merge-ncu-b1-*.txt: the split kernel and the merge
before and after the merge became one pass.)
"""

from __future__ import annotations

import argparse

import bench_decode as decode


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--library", default=None)
    p.add_argument("--steps", type=int, default=12)
    args = p.parse_args()
    decode.import_gpu_modules()
    import torch
    from tiled_attn import sdpa_with_kvcache
    from tiled_attn.sdpa import library_of

    lib = library_of(args.library)
    b, sk = 1, 32768
    q = torch.randn(b, 1, decode.H_Q, decode.D, device="cuda", dtype=torch.bfloat16)
    k = torch.randn(b, sk, decode.H_KV, decode.D, device="cuda", dtype=torch.bfloat16)
    v = torch.randn(b, sk, decode.H_KV, decode.D, device="cuda", dtype=torch.bfloat16)
    lengths = torch.full((b,), sk, dtype=torch.int32, device="cuda")
    for _ in range(args.steps):
        sdpa_with_kvcache(q, k, v, lengths, library=lib)
    torch.cuda.synchronize()
    print("done")


if __name__ == "__main__":
    main()

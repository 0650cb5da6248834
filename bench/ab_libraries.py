#!/usr/bin/env python3
"""Interleaved A/B timing of kernel libraries (TFLOP/s).

    python3 bench/ab_libraries.py LIB_A LIB_B [...]
        (env: SS=1024,4096  CAUSAL=1,0  DS=64,128  BOTH=1  WINDOW=4095  SOFTCAP=50  ROUNDS=5)

For each case (f16, or f16 and bf16 with BOTH=1; D as in DS (64 and
128); causal as in CAUSAL; S in SS), every library is timed in turn,
ROUNDS rounds (5; the order alternates between rounds); each timing is
the median of 30 back-to-back CUDA-event runs after 5 warm-up runs
(common.time_fn). Prints the median over rounds, the ratio to the first
library and the spread between rounds. B*S = 16384, H*D = 2048, random
normal inputs. The GPU first runs 200 8k x 8k matmuls to reach its clocks.
With WINDOW=w every call has window_size=(w, 0) (with causal: the window
kernels), and with SOFTCAP=c a softcap of c (the softcap kernels); the
TFLOP/s figure stays the unwindowed problem's FLOPs over the time, so
compare the ratios, not the rates.
"""
import os
import statistics
import sys

from common import grid_cases, median_ms
import torch
from tiled_attn import KernelLibrary, sdpa


def main(paths):
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.float16)
    for _ in range(200):
        a @ a
    torch.cuda.synchronize()
    libs = {p.rstrip("/").split("/")[-1]: KernelLibrary.load(p) for p in paths}
    dtypes = [torch.float16, torch.bfloat16] if os.environ.get("BOTH") else [torch.float16]
    seqs = [int(s) for s in os.environ.get("SS", "1024,4096,8192,16384").split(",")]
    causals = [int(c) for c in os.environ.get("CAUSAL", "1,0").split(",")]
    dims = [int(d) for d in os.environ.get("DS", "64,128").split(",")]
    window = (int(os.environ["WINDOW"]), 0) if os.environ.get("WINDOW") else (-1, -1)
    rounds = int(os.environ.get("ROUNDS", "5"))
    softcap = float(os.environ.get("SOFTCAP", "0"))
    for dt, d, causal, s, q, k, v, flops in grid_cases(dtypes, dims, causals, seqs):
        res = {n: [] for n in libs}
        for r in range(rounds):
            # Alternate the order (A B, B A, ...), so that drift between the
            # first and the last library of a round favours neither.
            order = list(libs.items()) if r % 2 == 0 else list(libs.items())[::-1]
            for n, lib in order:
                ms = median_ms(lambda: sdpa(q, k, v, causal=bool(causal), window_size=window,
                                            softcap=softcap, library=lib), 5, 30)
                res[n].append(flops / ms / 1e9)
        med = {n: statistics.median(x) for n, x in res.items()}
        base = next(iter(med.values()))
        print(f"{str(dt)[6:]} D={d} S={s} causal={causal}  " + "  ".join(
            f"{n}={m:.0f} ({m / base:.3f}, spread {max(res[n]) - min(res[n]):.0f})"
            for n, m in med.items()), flush=True)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])

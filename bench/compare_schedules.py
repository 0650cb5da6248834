#!/usr/bin/env python3
"""Compares kernel libraries built with different schedules, in one process:
correctness on awkward shapes (error within 2x PyTorch SDPA's), then TFLOP/s at
S=4096 (B*S=16k, H*D=2048).

    python3 bench/compare_schedules.py perf/st1 perf/st2 perf/st3

where each folder comes from scripts/build_kernels.sh or tiled-attn-compile.
Exits 1 on a correctness failure."""
import argparse
import os
import sys

import torch
import torch.nn.functional as F

from tiled_attn import KernelLibrary, sdpa

from common import grid_cases, median_ms, reference, rel_l2


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("libraries", nargs="+", metavar="LIB", help="kernel library folders")
    args = p.parse_args(argv)
    libs = {os.path.basename(path.rstrip("/")): KernelLibrary.load(path)
            for path in args.libraries}
    bad = 0
    for name, lib in libs.items():
        for dt in (torch.float16, torch.bfloat16):
            for D in (64, 128):
                for causal in (False, True):
                    for (B, H, S) in ((1, 2, 1), (1, 2, 17), (2, 3, 130), (1, 3, 1000)):
                        q, k, v = (torch.randn(B, H, S, D, device="cuda", dtype=dt)
                                   for _ in range(3))
                        r = reference(q, k, v, causal)
                        e = rel_l2(sdpa(q, k, v, causal=causal, library=lib), r)
                        te = rel_l2(F.scaled_dot_product_attention(q, k, v, is_causal=causal), r)
                        if not e <= 2 * te + 1e-6:
                            bad += 1
                            print("BAD", name, dt, D, causal, S, e, te)
    print("correctness failures:", bad)
    for dt, D, causal, S, q, k, v, flops in grid_cases(
            (torch.float16, torch.bfloat16), (64, 128), (False, True), (4096,)):
        row = [f"{str(dt)[6:]} D={D} c={int(causal)}"]
        for name, lib in libs.items():
            t = median_ms(lambda: sdpa(q, k, v, causal=causal, library=lib), 3, 20)
            row.append(f"{name}={flops/t/1e9:.0f}")
        print("  ".join(row))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

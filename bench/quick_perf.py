#!/usr/bin/env python3
"""Quick timing of tiled-attn against PyTorch SDPA at S=4096 (the full grid is
bench_sdpa.py). Median of CUDA-event timings after warm-up.

    python3 bench/quick_perf.py [--library DIR]
"""
import argparse

import torch
import torch.nn.functional as F

from tiled_attn import KernelLibrary, sdpa

from common import grid_cases, median_ms


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--library", default=None,
                   help="kernel library folder (default: $TILED_ATTN_KERNELS or build/kernels)")
    args = p.parse_args(argv)
    library = KernelLibrary.load(args.library)
    print(torch.cuda.get_device_name())
    for dt, D, causal, S, q, k, v, flops in grid_cases(
            (torch.float16, torch.bfloat16), (64, 128), (False, True), (4096,)):
        t1 = median_ms(lambda: sdpa(q, k, v, causal=causal, library=library))
        t2 = median_ms(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal))
        print(f"{str(dt)[6:]:8} D={D} causal={int(causal)} S={S}: "
              f"tiled-attn {flops/t1/1e9:6.1f} TFLOP/s  torch {flops/t2/1e9:6.1f}")


if __name__ == "__main__":
    main()

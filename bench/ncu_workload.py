#!/usr/bin/env python3
"""The workload the Nsight Compute scripts profile: f16 D=128 non-causal SDPA.

    python3 bench/ncu_workload.py S LIB|fa2

Four launches at B*S = 16384, H = 16 on random normal inputs: of the
library's kernel (sdpa(..., library=LIB)) or of SDPA's FlashAttention-2
backend ("fa2"). The scripts profile the 4th (--launch-skip 3).
"""
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from tiled_attn import KernelLibrary, sdpa


def main(s, lib):
    q, k, v = (torch.randn(16384 // s, 16, s, 128, device="cuda", dtype=torch.float16)
               for _ in range(3))
    library = None if lib == "fa2" else KernelLibrary.load(lib)
    for _ in range(4):
        if library is None:
            with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
                F.scaled_dot_product_attention(q, k, v)
        else:
            sdpa(q, k, v, library=library)
    torch.cuda.synchronize()


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(int(sys.argv[1]), sys.argv[2])

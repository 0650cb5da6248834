#!/usr/bin/env python3
"""The workload the Nsight Compute scripts profile: f16 D=128 non-causal SDPA.

    python3 bench/ncu_workload.py S LIB|fa2|cudnn [--names] [--attn-mask bias|mask]
        [--dtype bf16] [--score-mod alibi]

Four launches at B*S = 16384, H = 16 on random normal inputs: of the
library's kernel (sdpa(..., library=LIB)) or of one of PyTorch's SDPA
backends (FlashAttention-2, "fa2", or cuDNN, "cudnn"). The scripts profile
the 4th (--launch-skip 3). With --names, one call runs under
torch.profiler and the names of the kernels it launched are printed, one
per line (for the scripts' kernel filters). With --attn-mask, PyTorch's
attn_mask [B, 1, S, S] goes with every call (bias: a float32 normal one;
mask: a bool one, a tenth of the pairs hidden at random), as
bench_functions_ab.py passes it. With --score-mod alibi, the library's ALiBi
score function with random slopes.
"""
import argparse

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from tiled_attn import KernelLibrary, sdpa

BACKENDS = {"fa2": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION}


def main(s, lib, names=False, attn_mask=None, dtype="f16", score_mod=None):
    b = 16384 // s
    q, k, v = (torch.randn(b, 16, s, 128, device="cuda",
                           dtype=torch.float16 if dtype == "f16" else torch.bfloat16)
               for _ in range(3))
    library = None if lib in BACKENDS else KernelLibrary.load(lib)
    mask = None
    if attn_mask == "bias":
        mask = torch.randn(b, 1, s, s, device="cuda")
    elif attn_mask == "mask":
        mask = torch.rand(b, 1, s, s, device="cuda") > 0.1
        mask[..., 0] = True

    functions = {}
    if score_mod == "alibi":
        functions = {"score_mod": "alibi",
                     "score_mod_args": (torch.rand(16, device="cuda"),)}

    def call():
        if library is None:
            with sdpa_kernel(BACKENDS[lib]):
                F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        else:
            sdpa(q, k, v, attn_mask=mask, library=library, **functions)

    if names:
        call()
        torch.cuda.synchronize()
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
            call()
            torch.cuda.synchronize()
        for name in sorted({e.name for e in prof.events() if e.device_type.name == "CUDA"}):
            print(name)
        return
    for _ in range(4):
        call()
    torch.cuda.synchronize()


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("seq", type=int, metavar="S", help="sequence length (B = 16384 / S)")
    p.add_argument("provider", metavar="LIB|fa2|cudnn",
                   help="a kernel library folder, or one of PyTorch's SDPA backends")
    p.add_argument("--names", action="store_true",
                   help="print the names of the CUDA kernels one call launches")
    p.add_argument("--attn-mask", choices=("bias", "mask"), default=None,
                   help="PyTorch's attn_mask, float (bias) or bool (mask), [B, 1, S, S]")
    p.add_argument("--dtype", choices=("f16", "bf16"), default="f16")
    p.add_argument("--score-mod", choices=("alibi",), default=None,
                   help="a score function of the library (not with fa2 or cudnn)")
    return p.parse_args(argv)


if __name__ == "__main__":
    args = parse_args()
    main(args.seq, args.provider, names=args.names, attn_mask=args.attn_mask,
         dtype=args.dtype, score_mod=args.score_mod)

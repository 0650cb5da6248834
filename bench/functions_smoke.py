#!/usr/bin/env python3
"""One call of each score- and mask-function kernel on small odd shapes, for
compute-sanitizer (memcheck, racecheck):

    compute-sanitizer --tool memcheck python3 bench/functions_smoke.py [--library DIR]
"""

from __future__ import annotations

import argparse
from pathlib import Path


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--library", type=Path, default=None)
    args = p.parse_args()
    import torch
    from tiled_attn import KernelLibrary, sdpa

    library = KernelLibrary.load(args.library)
    torch.manual_seed(0)
    b, h, h_kv, s, d = 2, 4, 2, 333, 128
    slopes = torch.rand(h, device="cuda")
    docs = (torch.arange(s, device="cuda") // 100).to(torch.int32).repeat(b, 1)
    for dtype in (torch.bfloat16, torch.float16):
        q = torch.randn(b, h, s, d, device="cuda", dtype=dtype)
        k = torch.randn(b, h_kv, s, d, device="cuda", dtype=dtype)
        v = torch.randn(b, h_kv, s, d, device="cuda", dtype=dtype)
        for causal in (False, True):
            for kwargs in (dict(score_mod="alibi", score_mod_args=(slopes,)),
                           dict(mask_mod="document", mask_mod_args=(docs,))):
                out = sdpa(q, k, v, is_causal=causal, enable_gqa=True, library=library,
                           **kwargs)
                assert torch.isfinite(out).all()
        sdpa(q, k, v, enable_gqa=True, library=library, score_mod="alibi",
             score_mod_args=(slopes,), mask_mod="document", mask_mod_args=(docs,))
        sdpa(q, k, v, torch.randn(s, s, device="cuda", dtype=dtype), enable_gqa=True,
             library=library)
        sdpa(q, k, v, torch.rand(b, 1, 1, s, device="cuda") > 0.5, is_causal=True,
             enable_gqa=True, library=library)
        sdpa(q, k, v, torch.rand(s, s, device="cuda") > 0.5, enable_gqa=True, library=library)
        prefix = torch.tensor([0, 200], device="cuda", dtype=torch.int32)
        sdpa(q, k, v, enable_gqa=True, library=library, mask_mod="prefix_lm",
             mask_mod_args=(prefix,))
    # attn_mask at the other head dims the library has mask kernels of.
    for d in sorted({k.head_dim for k in library.kernels if k.mask_function == "mask"} - {128}):
        for dtype in (torch.bfloat16, torch.float16):
            q = torch.randn(b, h, s, d, device="cuda", dtype=dtype)
            k = torch.randn(b, h_kv, s, d, device="cuda", dtype=dtype)
            v = torch.randn(b, h_kv, s, d, device="cuda", dtype=dtype)
            sdpa(q, k, v, torch.rand(b, 1, s, s, device="cuda") > 0.5, is_causal=True,
                 enable_gqa=True, library=library)
            sdpa(q, k, v, torch.randn(s, s, device="cuda", dtype=dtype), enable_gqa=True,
                 library=library)
    torch.cuda.synchronize()
    print("functions smoke: ok")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

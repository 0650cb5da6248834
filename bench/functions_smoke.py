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
    b, h, h_kv, s = 2, 4, 2, 333
    slopes = torch.rand(h, device="cuda")
    docs = (torch.arange(s, device="cuda") // 100).to(torch.int32).repeat(b, 1)
    prefix = torch.tensor([0, 200], device="cuda", dtype=torch.int32)

    def has(d, score="", mask=""):
        """Whether the library has a kernel of head dim d with these functions."""
        return any(k.head_dim == d and k.score_function == score and k.mask_function == mask
                   and not k.sparse for k in library.kernels)

    # Every head dim the library has function kernels of, each function it
    # has there, causal and not.
    dims = sorted({k.head_dim for k in library.kernels
                   if (k.score_function or k.mask_function) and not k.sparse})
    for d in dims:
        for dtype in (torch.bfloat16, torch.float16):
            q = torch.randn(b, h, s, d, device="cuda", dtype=dtype)
            k = torch.randn(b, h_kv, s, d, device="cuda", dtype=dtype)
            v = torch.randn(b, h_kv, s, d, device="cuda", dtype=dtype)
            calls = []
            if has(d, score="alibi"):
                calls.append(dict(score_mod="alibi", score_mod_args=(slopes,)))
            if has(d, mask="document"):
                calls.append(dict(mask_mod="document", mask_mod_args=(docs,)))
            if has(d, mask="mask"):
                calls.append(dict(attn_mask=torch.rand(b, 1, s, s, device="cuda") > 0.5))
                calls.append(dict(attn_mask=torch.rand(s, s, device="cuda") > 0.5))
            if has(d, score="bias"):
                calls.append(dict(attn_mask=torch.randn(s, s, device="cuda", dtype=torch.float32)))
            for call in calls:
                for causal in (False, True):
                    out = sdpa(q, k, v, is_causal=causal, enable_gqa=True, library=library,
                               **call)
                    assert torch.isfinite(out).all(), (d, dtype, causal, list(call))
            if has(d, score="alibi", mask="document"):
                sdpa(q, k, v, enable_gqa=True, library=library, score_mod="alibi",
                     score_mod_args=(slopes,), mask_mod="document", mask_mod_args=(docs,))
            if has(d, mask="prefix_lm"):
                sdpa(q, k, v, enable_gqa=True, library=library, mask_mod="prefix_lm",
                     mask_mod_args=(prefix,))
            # A float mask of q's dtype (the 16-bit bias kernels where the
            # library has them, else its float32 copy).
            if has(d, score="bias"):
                sdpa(q, k, v, torch.randn(s, s, device="cuda", dtype=dtype), enable_gqa=True,
                     library=library)
    print(f"head dims {dims}")
    torch.cuda.synchronize()
    print("functions smoke: ok")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

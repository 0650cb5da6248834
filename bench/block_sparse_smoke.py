#!/usr/bin/env python3
"""A small block-sparse call for compute-sanitizer (issue 37): the document
kernel and the kernel without a mask function under one block mask, and
the causal document kernel under its own.

    compute-sanitizer --tool memcheck python3 bench/block_sparse_smoke.py
"""
import torch

import tiled_attn

torch.manual_seed(0)
b, h, s = 1, 2, 700
q, k, v = (torch.randn(b, h, s, 128, device="cuda", dtype=torch.bfloat16) for _ in range(3))
ids = torch.cat([torch.full((n,), i, dtype=torch.int32, device="cuda")
                 for i, n in enumerate([200, 300, 200])])[None]
visible = ids[:, None, :, None] == ids[:, None, None, :]
bm = tiled_attn.create_block_mask(visible)
o = tiled_attn.sdpa(q, k, v, mask_mod="document", mask_mod_args=(ids,), block_mask=bm)
o2 = tiled_attn.sdpa(q, k, v, block_mask=bm)
causal = tiled_attn.create_block_mask(
    lambda b, h, q_idx, kv_idx: (ids[b, q_idx] == ids[b, kv_idx]) & (kv_idx <= q_idx), 1, None, s, s)
o3 = tiled_attn.sdpa(q, k, v, mask_mod="document_causal", mask_mod_args=(ids,), block_mask=causal)
torch.cuda.synchronize()
print("ok", o.float().norm().item(), o2.float().norm().item(), o3.float().norm().item())

#!/usr/bin/env python3
"""One call of one library kernel (sm_90a or sm_80 library), for finding a
kernel that hangs and for compute-sanitizer on a shape of PyTorch's size:

    python3 bench/functions_one_call.py LIBRARY S plain|bias|mask|alibi|document [causal]

bf16, D = 128, H = 16, B = 16384 // S; bias a float32 attn_mask [B, 1, S, S],
mask a bool one (a tenth of the pairs hidden). A Python traceback after T
seconds (environment, default 25) names where a hung call waits; with an
attn_mask the relative L2 error against PyTorch's SDPA in float32 is
printed (its memory-efficient kernel: under racecheck, hazards reported in
fmha_cutlassF are PyTorch's, after ours has run).
"""
import faulthandler, sys, time, os
faulthandler.dump_traceback_later(int(os.environ.get("T", "25")), exit=True)
t0=time.time()
import torch
from tiled_attn import KernelLibrary, sdpa
lib = KernelLibrary.load(sys.argv[1])
s=int(sys.argv[2]); b=max(1,16384//s); kind=sys.argv[3]; causal = len(sys.argv) > 4
q,k,v=(torch.randn(b,16,s,128,device="cuda",dtype=torch.bfloat16) for _ in range(3))
kw={}; mask=None
if kind=="bias": mask=torch.randn(b,1,s,s,device="cuda"); kw["attn_mask"]=mask
if kind=="mask": mask=torch.rand(b,1,s,s,device="cuda")>0.1; mask[...,0]=True; kw["attn_mask"]=mask
if kind=="alibi": kw.update(score_mod="alibi", score_mod_args=(torch.rand(16,device="cuda"),))
if kind=="document": kw.update(mask_mod="document", mask_mod_args=((torch.arange(s,device="cuda",dtype=torch.int32)//300).expand(b,s).contiguous(),))
torch.cuda.synchronize()
o=sdpa(q,k,v,is_causal=causal,library=lib,**kw)
torch.cuda.synchronize(); t=time.time()-t0
if mask is not None:
  m = mask if mask.dtype != torch.bool else torch.zeros(mask.shape, device="cuda").masked_fill(~mask, float("-inf"))
  if causal: m = m + torch.full((s, s), float("-inf"), device="cuda").triu(1)
  ref=torch.nn.functional.scaled_dot_product_attention(q.float(),k.float(),v.float(),attn_mask=m)
  print(sys.argv[1:], "ok %.1fs err %.2e" % (t, (o.float()-ref).norm().item()/ref.norm().item()), flush=True)
else: print(sys.argv[1:], "ok %.1fs" % t, flush=True)

"""Score and mask functions through tiled_attn.sdpa's autograd on a GPU
(issue 39, 2026-12-07): ALiBi (with and without a causal mask) and
document masking, bf16, D = 64 (or the head dim given); each gradient against float64, within 2x
of PyTorch's math backend's error in bf16 given the same scores as
attn_mask. Needs a library with forward kernels of the functions that
write the log-sum-exps (none_lse+alibi, top_left_lse+alibi,
top_left_lse+document) and backward kernels of them (a backward
configuration with variants none+alibi, top_left+alibi,
top_left+document): TILED_ATTN_KERNELS names it.

    TILED_ATTN_KERNELS=... python3 bench/functions_autograd.py [D]
"""
import sys
import torch, tiled_attn
from torch.nn.attention import SDPBackend, sdpa_kernel
torch.manual_seed(0)
dev = "cuda"
B, H, S = 2, 4, 300
D = int(sys.argv[1]) if len(sys.argv) > 1 else 64
def rel(a, r): return ((a.double() - r).norm() / r.norm()).item()
slopes = torch.tensor([2.0 ** -(h + 1) for h in range(H)], device=dev)
docs = (torch.arange(S, device=dev) // 70).int().repeat(B, 1)
i = torch.arange(S, device=dev)[:, None]; j = torch.arange(S, device=dev)[None, :]
ok_all = True
for name, causal, kwargs in [
        ("alibi", False, dict(score_mod="alibi", score_mod_args=(slopes,))),
        ("alibi causal", True, dict(score_mod="alibi", score_mod_args=(slopes,))),
        ("document causal", True, dict(mask_mod="document", mask_mod_args=(docs,)))]:
    q, k, v, do = (torch.randn(B, H, S, D, device=dev, dtype=torch.bfloat16) for _ in range(4))
    bias = torch.zeros(B, H, S, S, device=dev, dtype=torch.float64)
    keep = torch.ones(B, 1, S, S, device=dev, dtype=torch.bool)
    if "alibi" in name:
        bias = bias + slopes.double()[None, :, None, None] * (j - i)
    if "document" in name:
        keep = (docs[:, :, None] == docs[:, None, :])[:, None]
    if causal:
        keep = keep & (j <= i)
    leaves = [t.clone().requires_grad_() for t in (q, k, v)]
    out = tiled_attn.sdpa(*leaves, causal=causal, **kwargs)
    ours = torch.autograd.grad(out, leaves, do)
    l64 = [t.double().requires_grad_() for t in (q, k, v)]
    s = (l64[0] @ l64[1].transpose(-1, -2)) * D ** -0.5 + bias
    s = s.masked_fill(~keep, float("-inf"))
    ref = torch.autograd.grad(torch.softmax(s, -1) @ l64[2], l64, do.double())
    lb = [t.clone().requires_grad_() for t in (q, k, v)]
    mask = bias.to(torch.bfloat16).masked_fill(~keep, float("-inf"))
    with sdpa_kernel(SDPBackend.MATH):
        outm = torch.nn.functional.scaled_dot_product_attention(*lb, attn_mask=mask)
    math = torch.autograd.grad(outm, lb, do)
    errs = [(rel(a, r), rel(m, r)) for a, m, r in zip(ours, math, ref)]
    ok = all(e <= 2 * m for e, m in errs)
    ok_all &= ok
    print(name, "ok" if ok else "FAIL", " ".join(f"d{g}: {e:.2e} (math {m:.2e})" for g, (e, m) in zip("qkv", errs)))
print("all within 2x of PyTorch's math backend" if ok_all else "SOME FAILED")

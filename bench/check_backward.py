"""The backward pass on a GPU (issue 39's first step): the compiler's three
backward kernels (tile-generate-sdpa-backward: preprocess, main,
postprocess), the library's entries of the program "sdpa_backward"
(kernels/library.json), launched here with cuda-bindings from their
manifest entries (the runtime's ta_sdpa_backward launches the same
kernels; python/tests/test_backward_gpu.py checks that path).

Checks: dQ, dK, dV against float64 autograd on odd shapes (S not a multiple
of the blocks, S_q != S_k both ways, grouped KV heads, no mask, both causal
alignments, sliding windows, softcap, packed varlen sequences with empty
ones), within 2x of PyTorch's own error
on the same inputs: FlashAttention-2's (PyTorch's flash backend, which
rounds P and dS to the input dtype as these kernels do) where it takes the
case, else the math backend's in the input dtype
(allow_fp16_bf16_reduction_math_sdp; for a softcap, which no backend
takes, PyTorch's eager arithmetic in the input dtype); both listed. Then, unless --check-only, the backward's
TFLOP/s (2.5x the forward's FLOPs; causal half) on the grid B*S = 16k,
H*D = 2048, against PyTorch's flash (FA2) and cuDNN backward, CUDA events,
median of interleaved rounds.

    tiled-attn-compile --spec=kernels/library.json --out-dir=DIR --entry=...  (bench/gpu_backward.sh)
    python3 bench/check_backward.py --kernels DIR --out bench/results/backward
    python3 bench/check_backward.py --replot CSV
"""
from __future__ import annotations

import argparse
import datetime
import json
import math
import statistics
import sys
from pathlib import Path

torch = F = None

CHECK_CASES = [
    # (B, H_q, H_kv, S_q, S_k, variant, D[, window (lo, hi) | softcap])
    (2, 4, 4, 257, 257, "none", 64),
    (1, 8, 2, 300, 511, "top_left", 64),
    (1, 4, 1, 511, 300, "bottom_right", 64),
    (2, 2, 2, 77, 1000, "bottom_right", 64),
    (1, 4, 2, 1000, 77, "none", 64),
    (1, 2, 2, 1024, 1024, "top_left", 64),
    (1, 4, 2, 700, 900, "window", 64, (-128, 0)),
    (1, 2, 2, 513, 400, "window", 64, (-50, 70)),
    (1, 4, 2, 300, 511, "none_softcap", 64, 30.0),
    (1, 2, 1, 600, 600, "top_left_softcap", 64, 5.0),
    (2, 4, 4, 257, 257, "none", 128),
    (1, 8, 2, 300, 511, "top_left", 128),
    (1, 4, 1, 511, 300, "bottom_right", 128),
    (1, 4, 2, 700, 900, "window", 128, (-128, 0)),
    (1, 4, 2, 300, 511, "none_softcap", 128, 30.0),
    (2, 2, 2, 257, 257, "none", 96),
    (1, 4, 2, 300, 511, "top_left", 96),
    (1, 2, 1, 513, 400, "window", 96, (-50, 70)),
    (1, 4, 2, 77, 1000, "bottom_right_softcap", 96, 30.0),
    (2, 2, 2, 257, 257, "none", 192),
    (1, 4, 2, 300, 511, "top_left", 192),
    (1, 2, 1, 511, 300, "bottom_right", 192),
    (1, 2, 1, 513, 400, "window", 192, (-50, 70)),
    (1, 4, 2, 77, 1000, "top_left_softcap", 192, 30.0),
    (2, 2, 2, 257, 257, "none", 256),
    (1, 4, 2, 300, 511, "top_left", 256),
    (1, 2, 1, 511, 300, "bottom_right", 256),
    (1, 4, 2, 700, 900, "window", 256, (-128, 0)),
    (1, 2, 2, 300, 511, "none_softcap", 256, 30.0),
    # D = 192 with D_v = 128 (DeepSeek's MLA shapes).
    (1, 4, 2, 300, 511, "top_left", (192, 128)),
    (1, 2, 1, 511, 300, "bottom_right", (192, 128)),
]


def head_key(kernel: dict):
    """A kernel's head dims as the cases name them: D, or (D, D_v) where
    they differ."""
    d, dv = kernel["head_dim"], kernel.get("head_dim_v") or kernel["head_dim"]
    return d if d == dv else (d, dv)


def import_torch() -> None:
    global torch, F
    import torch as torch_module
    import torch.nn.functional as functional

    torch, F = torch_module, functional
    # The math backend in the input dtype (since PyTorch 2.5 it computes
    # 16-bit inputs in f32 unless told otherwise).
    allow = getattr(torch.backends.cuda, "allow_fp16_bf16_reduction_math_sdp", None)
    if allow:
        allow(True)


class Backward:
    """The library's backward kernels of one dtype and head dim."""

    def __init__(self, folder: Path, manifest: dict, dtype: str, d, arch: str):
        """`d`: the head dim, or (D, D_v) where they differ (head_key)."""
        from cubin_launch import Kernel

        entries = [k for k in manifest["kernels"] if k.get("program") == "sdpa_backward"
                   and k["dtype"] == dtype and head_key(k) == d]
        if not entries:
            raise LookupError(f"no backward kernels of {dtype} D={d}")
        by = {}
        for e in entries:
            if e["phase"] == "dq":  # (the deterministic mode's: not launched here)
                continue
            key = (e["phase"] if not e.get("varlen") else "varlen_" + e["phase"]) \
                if e["phase"] != "main" else e.get("variant", e["causal"])
            by[key] = (Kernel.from_manifest(folder, e, arch), e)
        self.kernels = by
        self.block_m = by["preprocess"][1]["block_m"]
        self.block_n = next(e for k, (_, e) in by.items()
                            if not k.endswith(("preprocess", "postprocess")))["block_n"]
        self.variants = sorted(k for k in by if not k.endswith(("preprocess", "postprocess")))

    def __call__(self, q, k, v, o, lse, do, variant: str, scale: float, dq_accum=None,
                 delta=None, window=None, softcap=0.0, varlen=None, captures=None):
        """The gradients; with `varlen` = (cu_seqlens_q, cu_seqlens_k,
        max_seqlen_q, max_seqlen_k), the tensors are packed [1, H, total,
        ...] sequences and the grids' z the sequence."""
        b, h, s_q, d = q.shape
        s_k, h_kv = k.shape[2], k.shape[1]
        if dq_accum is None:
            dq_accum = torch.empty(b, h, s_q, d, device=q.device, dtype=torch.float32)
        if delta is None:
            delta = torch.empty(b, h, s_q, device=q.device, dtype=torch.float32)
        dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
        packed = {}
        phase = ""
        if varlen is not None:
            cu_q, cu_k, s_q, s_k = varlen
            b = cu_q.numel() - 1
            packed = {"cu_seqlens_q": cu_q, "cu_seqlens_k": cu_k}
            phase = "varlen_"
        rows = (-(-s_q // self.block_m), h, b)
        pre, _ = self.kernels[phase + "preprocess"]
        main, _ = self.kernels[variant]
        post, _ = self.kernels[phase + "postprocess"]
        scalars = {"scale": scale}
        if window is not None:
            scalars.update(window_lo=window[0], window_hi=window[1])
        if softcap:
            scalars["softcap"] = softcap
        # A score or mask function's captured inputs: views and scalars.
        views = {}
        for name, value in (captures or {}).items():
            (views if isinstance(value, torch.Tensor) else scalars)[name] = value
        pre(rows, {"o": o, "do": do, "delta": delta, "dq_accum": dq_accum, **packed}, {})
        main((-(-s_k // self.block_n), h_kv, b),
             {"q": q, "k": k, "v": v, "do": do, "lse": lse, "delta": delta,
              "dq_accum": dq_accum, "dk": dk, "dv": dv, **packed, **views}, scalars)
        post(rows, {"dq_accum": dq_accum, "dq": dq, **packed}, {"scale": scale})
        return dq, dk, dv


def visible(s_q: int, s_k: int, variant: str, device, window=None):
    """Which keys each query sees ([S_q, S_k] bool), or None for all: the
    causal masks, or a window's band lo <= j - i <= hi."""
    mask = variant.removesuffix("_softcap")
    if mask == "none":
        return None
    i = torch.arange(s_q, device=device)[:, None]
    j = torch.arange(s_k, device=device)[None, :]
    if mask == "window":
        return (j - i >= window[0]) & (j - i <= window[1])
    shift = s_k - s_q if mask == "bottom_right" else 0
    return j <= i + shift


def attention(q, k, v, mask, scale, softcap=0.0, score_mod=None):
    """softmax(scale q k^T [capped, score_mod], masked) v and its rows'
    log-sum-exps, in q's dtype's arithmetic (float64 for a reference); K/V
    heads repeated for grouped queries; a row that sees no key gives 0 and
    -inf."""
    g = q.shape[1] // k.shape[1]
    k, v = k.repeat_interleave(g, 1), v.repeat_interleave(g, 1)
    s = (q @ k.transpose(-1, -2)) * scale
    if softcap:
        s = softcap * torch.tanh(s / softcap)
    if score_mod is not None:
        s = score_mod(s)
    if mask is not None:
        s = s.masked_fill(~mask, float("-inf"))
    lse = torch.logsumexp(s, -1)
    p = torch.exp(s - lse.unsqueeze(-1).clamp_min(torch.finfo(s.dtype).min))
    p = torch.nan_to_num(p, nan=0.0)
    return p @ v, lse


def rel(a, ref) -> float:
    return ((a.double() - ref).norm() / ref.norm().clamp_min(1e-30)).item()


def check_case(bwd: Backward, dtype, case) -> dict:
    b, h, h_kv, s_q, s_k, variant, d = case[:7]
    d, dv = d if isinstance(d, tuple) else (d, d)
    window = case[7] if variant == "window" else None
    softcap = case[7] if variant.endswith("_softcap") else 0.0
    torch.manual_seed(b * 1000003 + h * 10007 + s_q * 101 + s_k + d + dv)
    dev = "cuda"
    q = torch.randn(b, h, s_q, d, device=dev, dtype=dtype)
    k = torch.randn(b, h_kv, s_k, d, device=dev, dtype=dtype)
    v = torch.randn(b, h_kv, s_k, dv, device=dev, dtype=dtype)
    do = torch.randn(b, h, s_q, dv, device=dev, dtype=dtype)
    scale = d ** -0.5
    mask = visible(s_q, s_k, variant, dev, window)
    # float64 reference gradients.
    q64, k64, v64 = (t.double().requires_grad_() for t in (q, k, v))
    o64, lse64 = attention(q64, k64, v64, mask, scale, softcap)
    ref = torch.autograd.grad(o64, (q64, k64, v64), do.double())
    # The forward as a kernel leaves it: O rounded, lse in f32.
    o, lse = o64.detach().to(dtype), lse64.detach().float()
    ours = bwd(q, k, v, o, lse, do, variant, scale, window=window, softcap=softcap)
    torch.cuda.synchronize()
    row = dict(dtype=str(dtype).removeprefix("torch."), b=b, h_q=h, h_kv=h_kv, s_q=s_q,
               s_k=s_k, variant=variant, window=window or "", softcap=softcap,
               d=d if d == dv else f"{d}/{dv}")
    # PyTorch's math backend (and the flash backend where it takes the
    # shape) on the same low-precision inputs.
    from torch.nn.attention import SDPBackend, sdpa_kernel

    errors = {}
    if softcap:
        # No SDPA backend caps: PyTorch's eager arithmetic in q's dtype
        # (the math backend's way) is the comparison.
        qq, kk, vv = (t.clone().requires_grad_() for t in (q, k, v))
        out, _ = attention(qq, kk, vv, mask, scale, softcap)
        grads = torch.autograd.grad(out, (qq, kk, vv), do)
        errors["math"] = [rel(g, r) for g, r in zip(grads, ref)]
        row["math_note"] = "eager in the input dtype (no SDPA backend caps)"
    for name, backend in (("math", SDPBackend.MATH), ("flash", SDPBackend.FLASH_ATTENTION)):
        if softcap:
            break
        try:
            qq, kk, vv = (t.clone().requires_grad_() for t in (q, k, v))
            # (K/V repeated for grouped heads: autograd sums their grads.)
            kr, vr = (t.repeat_interleave(h // h_kv, 1) for t in (kk, vv))
            with sdpa_kernel(backend):
                if variant == "top_left":
                    out = F.scaled_dot_product_attention(qq, kr, vr, is_causal=True)
                else:
                    out = F.scaled_dot_product_attention(qq, kr, vr, attn_mask=mask)
            grads = torch.autograd.grad(out, (qq, kk, vv), do)
            errors[name] = [rel(g, r) for g, r in zip(grads, ref)]
        except RuntimeError as exc:
            errors[name] = None
            row[f"{name}_note"] = str(exc).splitlines()[0][:120]
    ok = True
    baseline = "flash" if errors.get("flash") else "math"
    for i, g in enumerate("qkv"):
        ours_err = rel(ours[i], ref[i])
        math_err = errors["math"][i] if errors["math"] else float("nan")
        base_err = errors[baseline][i] if errors.get(baseline) else float("nan")
        row[f"d{g}_rel_l2"] = f"{ours_err:.3e}"
        row[f"d{g}_math_rel_l2"] = f"{math_err:.3e}"
        row[f"d{g}_flash_rel_l2"] = (f"{errors['flash'][i]:.3e}" if errors.get("flash")
                                    else "")
        ok &= bool(ours_err <= 2 * base_err) and math.isfinite(ours_err)
    row["baseline"] = baseline
    row["within_2x_pytorch"] = ok
    print(row, flush=True)
    return row


# Score and mask functions (kernels/functions): (B, H_q, H_kv, S_q, S_k,
# variant, D). ALiBi's slopes 2^-(h+1); documents of 100 keys (and the
# queries' ids of their own positions); soft-capping at 30 as a function.
FUNCTION_CASES = [
    (1, 4, 2, 300, 511, "none+alibi", 64),
    (2, 4, 4, 257, 257, "top_left+alibi+document", 64),
    (1, 4, 2, 300, 511, "none+tanh_softcap", 64),
    (1, 4, 2, 300, 511, "none+alibi", 128),
    (2, 4, 4, 257, 257, "top_left+alibi+document", 128),
]


def check_function_case(bwd: Backward, dtype, case) -> dict:
    """A kernel of score and mask functions against float64 (its forward's
    functions in the reference), within 2x of PyTorch's math backend in the
    input dtype given the same scores as a float attn_mask (soft-capping:
    eager arithmetic in the input dtype)."""
    b, h, h_kv, s_q, s_k, variant, d = case
    functions = variant.split("+")[1:]
    torch.manual_seed(b * 1000003 + h * 10007 + s_q * 101 + s_k + d + 7)
    dev = "cuda"
    q = torch.randn(b, h, s_q, d, device=dev, dtype=dtype)
    k = torch.randn(b, h_kv, s_k, d, device=dev, dtype=dtype)
    v = torch.randn(b, h_kv, s_k, d, device=dev, dtype=dtype)
    do = torch.randn(b, h, s_q, d, device=dev, dtype=dtype)
    scale = d ** -0.5
    i = torch.arange(s_q, device=dev)[:, None]
    j = torch.arange(s_k, device=dev)[None, :]
    slopes = torch.tensor([2.0 ** -(x + 1) for x in range(h)], device=dev)
    docs = (torch.arange(max(s_q, s_k), device=dev) // 100).int().repeat(b, 1)
    docs[1:] = docs[1:] // 2  # (entries of other documents)
    captures, bias, cap = {}, torch.zeros(b, h, s_q, s_k, device=dev, dtype=torch.float64), 0.0
    mask = visible(s_q, s_k, variant.split("+")[0], dev)
    if "alibi" in functions:
        captures["slopes"] = slopes
        bias = bias + slopes.double()[None, :, None, None] * (j - i).double()
    if "document" in functions:
        captures["document_ids"] = docs
        same = docs[:, :s_q, None] == docs[:, None, :s_k]
        mask = same[:, None] if mask is None else mask & same[:, None]
    if "tanh_softcap" in functions:
        cap = 30.0
        captures["cap"] = cap
    q64, k64, v64 = (t.double().requires_grad_() for t in (q, k, v))
    o64, lse64 = attention(q64, k64, v64, mask, scale, cap, score_mod=lambda s: s + bias)
    ref = torch.autograd.grad(o64, (q64, k64, v64), do.double())
    o, lse = o64.detach().to(dtype), lse64.detach().float()
    ours = bwd(q, k, v, o, lse, do, variant, scale, captures=captures)
    torch.cuda.synchronize()
    # PyTorch in the input dtype: the math backend with the scores' bias and
    # mask as attn_mask, or (a cap) its eager arithmetic.
    qq, kk, vv = (t.clone().requires_grad_() for t in (q, k, v))
    if cap:
        out, _ = attention(qq, kk, vv, mask, scale, cap)
    else:
        from torch.nn.attention import SDPBackend, sdpa_kernel

        attn = bias.to(dtype)
        if mask is not None:
            attn = attn.masked_fill(~mask, float("-inf"))
        kr, vr = (t.repeat_interleave(h // h_kv, 1) for t in (kk, vv))
        with sdpa_kernel(SDPBackend.MATH):
            out = F.scaled_dot_product_attention(qq, kr, vr, attn_mask=attn)
    grads = torch.autograd.grad(out, (qq, kk, vv), do)
    row = dict(dtype=str(dtype).removeprefix("torch."), b=b, h_q=h, h_kv=h_kv, s_q=s_q,
               s_k=s_k, variant=variant, d=d, baseline="math")
    ok = True
    for n, g in enumerate("qkv"):
        ours_err, base_err = rel(ours[n], ref[n]), rel(grads[n], ref[n])
        row[f"d{g}_rel_l2"] = f"{ours_err:.3e}"
        row[f"d{g}_math_rel_l2"] = f"{base_err:.3e}"
        ok &= bool(ours_err <= 2 * base_err) and math.isfinite(ours_err)
    row["within_2x_pytorch"] = ok
    print(row, flush=True)
    return row


VARLEN_CASES = [
    # (lengths of the queries, of the keys, H_q, H_kv, variant, D)
    ((300, 0, 511, 77, 1000), (511, 20, 300, 0, 1000), 4, 2, "none_varlen", 64),
    ((300, 513, 77), (300, 1000, 77), 4, 1, "top_left_varlen", 64),
    ((300, 513, 77), (511, 1000, 7), 2, 2, "bottom_right_varlen", 64),
    ((300, 513, 77), (511, 1000, 7), 4, 2, "bottom_right_varlen", 128),
    ((300, 0, 77), (511, 20, 0), 4, 2, "top_left_varlen", 96),
    ((300, 0, 511, 77), (511, 20, 300, 0), 4, 2, "none_varlen", 192),
    ((300, 513, 77), (511, 1000, 7), 2, 1, "bottom_right_varlen", 256),
]


def check_varlen(bwd: Backward, dtype, case) -> dict:
    """Packed sequences against each sequence's float64 gradients; the
    baseline PyTorch's flash (else math) backend per sequence."""
    from torch.nn.attention import SDPBackend, sdpa_kernel

    lens_q, lens_k, h, h_kv, variant, d = case
    torch.manual_seed(sum(lens_q) * 31 + sum(lens_k) + d)
    mask_kind = variant.removesuffix("_varlen")
    scale = d ** -0.5
    parts = {n: [] for n in ("q", "k", "v", "do", "o", "lse", "rq", "rk", "rv", "bq", "bk", "bv")}
    baseline = None
    for sq, sk in zip(lens_q, lens_k):
        q = torch.randn(1, h, sq, d, device="cuda", dtype=dtype)
        k = torch.randn(1, h_kv, sk, d, device="cuda", dtype=dtype)
        v = torch.randn(1, h_kv, sk, d, device="cuda", dtype=dtype)
        do = torch.randn(1, h, sq, d, device="cuda", dtype=dtype)
        mask = visible(sq, sk, mask_kind, "cuda")
        q64, k64, v64 = (t.double().requires_grad_() for t in (q, k, v))
        o64, lse64 = attention(q64, k64, v64, mask, scale)
        ref = torch.autograd.grad(o64, (q64, k64, v64), do.double(), allow_unused=True) \
            if sq and sk else (torch.zeros_like(q64), torch.zeros_like(k64),
                               torch.zeros_like(v64))
        ref = [torch.zeros_like(t) if r is None else r for r, t in zip(ref, (q64, k64, v64))]
        # PyTorch per sequence (no varlen backward in its SDPA).
        base = [torch.zeros_like(t, dtype=torch.float64) for t in (q, k, v)]
        if sq and sk:
            for name, backend in (("flash", SDPBackend.FLASH_ATTENTION), ("math", SDPBackend.MATH)):
                try:
                    qq, kk, vv = (t.clone().requires_grad_() for t in (q, k, v))
                    kr, vr = (t.repeat_interleave(h // h_kv, 1) for t in (kk, vv))
                    with sdpa_kernel(backend):
                        if mask_kind == "top_left":
                            out = F.scaled_dot_product_attention(qq, kr, vr, is_causal=True)
                        else:
                            out = F.scaled_dot_product_attention(qq, kr, vr, attn_mask=mask)
                    base = [g.double() for g in torch.autograd.grad(out, (qq, kk, vv), do)]
                    baseline = baseline or name
                    break
                except RuntimeError:
                    continue
        for n, t in (("q", q), ("k", k), ("v", v), ("do", do), ("o", o64.detach().to(dtype)),
                     ("lse", lse64.detach().float()), ("rq", ref[0]), ("rk", ref[1]),
                     ("rv", ref[2]), ("bq", base[0]), ("bk", base[1]), ("bv", base[2])):
            parts[n].append(t)
    cat = {n: torch.cat(ts, 2) for n, ts in parts.items()}
    cu = lambda lens: torch.tensor([0, *torch.tensor(lens).cumsum(0).tolist()],
                                   dtype=torch.int32, device="cuda")
    ours = bwd(cat["q"], cat["k"], cat["v"], cat["o"], cat["lse"], cat["do"], variant, scale,
               varlen=(cu(lens_q), cu(lens_k), max(lens_q), max(lens_k)))
    torch.cuda.synchronize()
    row = dict(dtype=str(dtype).removeprefix("torch."), b=len(lens_q), h_q=h, h_kv=h_kv,
               s_q="/".join(map(str, lens_q)), s_k="/".join(map(str, lens_k)),
               variant=variant, window="", softcap=0.0, d=d, baseline=baseline)
    ok = True
    for i, g in enumerate("qkv"):
        ours_err, base_err = rel(ours[i], cat["r" + g]), rel(cat["b" + g], cat["r" + g])
        row[f"d{g}_rel_l2"] = f"{ours_err:.3e}"
        row[f"d{g}_math_rel_l2"] = f"{base_err:.3e}" if baseline == "math" else ""
        row[f"d{g}_flash_rel_l2"] = f"{base_err:.3e}" if baseline == "flash" else ""
        ok &= bool(ours_err <= 2 * base_err) and math.isfinite(ours_err)
    row["within_2x_pytorch"] = ok
    print(row, flush=True)
    return row


def bench(bwds: dict, dtype, args, others: dict | None = None) -> list[dict]:
    """The grid; `others` (name -> {D: Backward}) are more builds of the
    kernels timed in the same interleaved rounds (an A/B)."""
    from common import interleaved, time_fn, sleep_cycles_per_ms
    from torch.nn.attention import SDPBackend, sdpa_kernel

    cycles = sleep_cycles_per_ms()
    rows = []
    seqs = [1024, 4096] if args.quick else [1024, 4096, 16384]
    for d, bwd in sorted(bwds.items(), key=lambda item: str(item[0])):
        if isinstance(d, tuple):  # (the grid times D = D_v)
            continue
        if args.head_dims and d not in args.head_dims:
            continue
        for causal in (False, True):
            if ("top_left" if causal else "none") not in bwd.variants:
                continue
            for s in seqs:
                h, b = 2048 // d, max(1, 16384 // s)
                torch.manual_seed(s)
                q, k, v, do = (torch.randn(b, h, s, d, device="cuda", dtype=dtype)
                               for _ in range(4))
                scale = d ** -0.5
                # The forward (flash) for O and the log-sum-exps.
                o, lse = torch.ops.aten._scaled_dot_product_flash_attention(
                    q, k, v, 0.0, causal, False, scale=scale)[:2]
                dq_accum = torch.empty(b, h, s, d, device="cuda", dtype=torch.float32)
                delta = torch.empty(b, h, s, device="cuda", dtype=torch.float32)
                mode = "top_left" if causal else "none"
                calls = {"tiled-attn": (lambda: bwd(q, k, v, o, lse, do, mode, scale,
                                                    dq_accum, delta), [()])}
                for other, builds in (others or {}).items():
                    if d in builds:
                        calls[f"tiled-attn-{other}"] = (
                            lambda f=builds[d]: f(q, k, v, o, lse, do, mode, scale,
                                                  dq_accum, delta), [()])
                for name, backend in (("torch-flash", SDPBackend.FLASH_ATTENTION),
                                      ("torch-cudnn", SDPBackend.CUDNN_ATTENTION)):
                    qq, kk, vv = (t.clone().requires_grad_() for t in (q, k, v))
                    try:
                        with sdpa_kernel(backend):
                            out = F.scaled_dot_product_attention(qq, kk, vv, is_causal=causal)
                    except RuntimeError:
                        continue
                    calls[name] = (lambda out=out, qq=qq, kk=kk, vv=vv: torch.autograd.grad(
                        out, (qq, kk, vv), do, retain_graph=True), [()])
                times, notes = interleaved(
                    calls, args.rounds,
                    lambda call: time_fn(call[0], call[1], args.warmup, args.iters, cycles)[0])
                flops = 2.5 * 4 * b * h * s * s * d / (2 if causal else 1)
                for name in calls:
                    ms = statistics.median(times[name]) if times[name] else float("nan")
                    rows.append(dict(dtype=str(dtype).removeprefix("torch."), d=d,
                                     causal=causal, s=s, b=b, h=h, provider=name,
                                     ms=f"{ms:.4f}", tflops=f"{flops / ms / 1e9:.1f}",
                                     case=f"D={d} {'causal ' if causal else ''}S={s}",
                                     note=notes.get(name, ""),
                                     device=torch.cuda.get_device_name(),
                                     date=datetime.date.today().isoformat()))
                    print(rows[-1], flush=True)
                del q, k, v, do, o, lse, dq_accum, delta, calls
                torch.cuda.empty_cache()
    return rows


def plot(csv_path: Path) -> None:
    from common import grouped_bars

    grouped_bars(csv_path, "provider", "backward TFLOP/s (2.5x forward FLOPs)",
                 f"SDPA backward: {csv_path.stem}")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kernels", type=Path, help="tiled-attn-compile's output folder")
    p.add_argument("--out", type=Path, default=Path("bench/results/backward"))
    p.add_argument("--arch", default="sm_90", help="the cubins' chip")
    p.add_argument("--dtype", default="bf16", choices=("bf16", "f16"))
    p.add_argument("--check-only", action="store_true")
    p.add_argument("--cases", type=int, default=0,
                   help="check only the first N cases (0: all; for the sanitizers)")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--head-dims", type=int, nargs="*", default=[],
                   help="time only these head dims (default: every one the kernels have)")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--iters", type=int, default=10)
    p.add_argument("--also", action="append", default=[], metavar="NAME=DIR",
                   help="another build of the kernels, timed beside (tiled-attn-NAME)")
    p.add_argument("--replot", type=Path)
    args = p.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    if args.replot:
        plot(args.replot)
        return 0
    import_torch()
    from common import write_csv, try_plot

    # The driver API loads the cubins into PyTorch's (primary) context:
    # make it first.
    torch.zeros(1, device="cuda")
    manifest = json.loads((args.kernels / "manifest.json").read_text())
    dtype = torch.bfloat16 if args.dtype == "bf16" else torch.float16
    bwds = {}
    for d in sorted({head_key(k) for k in manifest["kernels"]
                     if k.get("program") == "sdpa_backward" and k["dtype"] == args.dtype},
                    key=str):
        bwds[d] = Backward(args.kernels, manifest, args.dtype, d, args.arch)
    device = torch.cuda.get_device_name()
    date = datetime.date.today().isoformat()
    cases = [c for c in CHECK_CASES if c[6] in bwds and c[5] in bwds[c[6]].variants]
    checks = [check_case(bwds[c[6]], dtype, c) for c in cases[:args.cases or None]]
    checks += [check_function_case(bwds[c[6]], dtype, c) for c in FUNCTION_CASES
               if c[6] in bwds and c[5] in bwds[c[6]].variants][:args.cases or None]
    if not args.cases:
        for c in VARLEN_CASES:
            if c[5] in bwds and c[4] in bwds[c[5]].variants:
                try:
                    checks.append(check_varlen(bwds[c[5]], dtype, c))
                except Exception as exc:  # noqa: BLE001 (the other checks go on)
                    print(f"varlen case {c}: {type(exc).__name__}: {exc}", flush=True)
                    checks.append(dict(variant=c[4], d=c[5], within_2x_pytorch=False,
                                       note=f"{type(exc).__name__}: {exc}"[:200]))
    # One CSV header for rows of different cases (notes, baselines).
    keys = list(dict.fromkeys(k for row in checks for k in row))
    checks = [{k: row.get(k, "") for k in keys} for row in checks]
    write_csv(args.out, f"backward-check-{args.dtype}", device, date, checks)
    failed = [c for c in checks if not c["within_2x_pytorch"]]
    print(f"{len(checks) - len(failed)} of {len(checks)} within 2x of PyTorch's error")
    if args.check_only:
        return 1 if failed else 0
    others = {}
    for spec in args.also:
        name, folder = spec.split("=", 1)
        other = json.loads((Path(folder) / "manifest.json").read_text())
        dims = {head_key(k) for k in other["kernels"]
                if k.get("program") == "sdpa_backward" and k["dtype"] == args.dtype}
        others[name] = {d: Backward(Path(folder), other, args.dtype, d, args.arch)
                        for d in bwds if d in dims}
    rows = bench(bwds, dtype, args, others)
    path = write_csv(args.out, f"backward-bench-{args.dtype}", device, date, rows)
    try_plot(plot, path)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

"""Attention as PyTorch arithmetic, for the tests' references: float64 copies
give the reference outputs and gradients (torch autograd through it), the
input dtype PyTorch's own low-precision error where no SDPA backend takes the
call (a softcap). The same rules as tiled_attn.sdpa's: the causal mask and
the window aligned top-left or bottom-right, grouped K/V heads, soft-capping,
a row that sees no key giving zeros (log-sum-exp -inf)."""

from __future__ import annotations

from typing import Any, Optional, Sequence, Tuple


def visible(torch: Any, s_q: int, s_k: int, causal: bool = False,
            causal_align: str = "top_left", window_size: Sequence[int] = (-1, -1),
            device: Any = None) -> Optional[Any]:
    """Which keys each query sees, an ``[S_q, S_k]`` bool tensor (None: all):
    query i sees key j iff ``j <= i + shift`` (causal), ``j >= i + shift -
    left`` and ``j <= i + shift + right`` (the window's bounds that are not
    -1), with ``shift = S_k - S_q`` bottom-right, else 0."""
    left, right = window_size
    if not causal and left < 0 and right < 0:
        return None
    i = torch.arange(s_q, device=device)[:, None]
    j = torch.arange(s_k, device=device)[None, :]
    diagonal = i + (s_k - s_q if causal_align == "bottom_right" else 0)
    mask = torch.ones(s_q, s_k, dtype=torch.bool, device=device)
    if causal:
        mask &= j <= diagonal
    if left >= 0:
        mask &= j >= diagonal - left
    if right >= 0:
        mask &= j <= diagonal + right
    return mask


def attention(torch: Any, q: Any, k: Any, v: Any, causal: bool = False,
              scale: Optional[float] = None, causal_align: str = "top_left",
              window_size: Sequence[int] = (-1, -1), softcap: float = 0.0,
              bias: Any = None, keep: Any = None) -> Tuple[Any, Any]:
    """``(softmax(cap(scale q k^T) + bias + mask) v, lse)`` of ``[B, H, S, D]``
    tensors (K/V of ``H_kv`` heads dividing ``H``), in their dtype's
    arithmetic, ``bias`` (a score function's additive term) and ``keep`` (a
    mask function's keys, bool) broadcast to ``[B, H, S_q, S_k]`` where
    given; differentiable (no NaN in the gradients of rows that see no
    key)."""
    groups = q.shape[1] // k.shape[1]
    k, v = k.repeat_interleave(groups, 1), v.repeat_interleave(groups, 1)
    scale = q.shape[-1] ** -0.5 if scale is None else scale
    s = (q @ k.transpose(-1, -2)) * scale
    if softcap:
        s = softcap * torch.tanh(s / softcap)
    if bias is not None:
        s = s + bias
    mask = visible(torch, q.shape[2], k.shape[2], causal, causal_align, window_size, q.device)
    if keep is not None:
        mask = keep if mask is None else mask & keep
    if mask is not None:
        s = s.masked_fill(~mask, float("-inf"))
    lse = torch.logsumexp(s, -1)
    # A row that sees no key: lse -inf, clamped here so that exp(s - lse)
    # is exp(-inf) = 0, not NaN.
    p = torch.exp(s - lse.unsqueeze(-1).clamp_min(torch.finfo(s.dtype).min))
    return p @ v, lse


def attention_backward(torch: Any, q: Any, k: Any, v: Any, grad_out: Any, causal: bool = False,
                       scale: Optional[float] = None, causal_align: str = "top_left",
                       window_size: Sequence[int] = (-1, -1),
                       softcap: float = 0.0, bias: Any = None,
                       keep: Any = None) -> Tuple[Any, Any, Any]:
    """The gradients ``(dq, dk, dv)`` of :func:`attention` for ``grad_out``,
    written out (FlashAttention's formulas: dV = P^T dO, dS = P (dP - delta)
    with the softcap's chain rule), not by autograd: for code that runs
    below autograd (an op's kernel), where autograd does not record."""
    groups = q.shape[1] // k.shape[1]
    kr, vr = k.repeat_interleave(groups, 1), v.repeat_interleave(groups, 1)
    scale = q.shape[-1] ** -0.5 if scale is None else scale
    s = (q @ kr.transpose(-1, -2)) * scale
    capped = softcap * torch.tanh(s / softcap) if softcap else s
    if bias is not None:  # (an additive score function: its slope is 1)
        capped = capped + bias
    mask = visible(torch, q.shape[2], k.shape[2], causal, causal_align, window_size, q.device)
    if keep is not None:
        mask = keep if mask is None else mask & keep
    if mask is not None:
        capped = capped.masked_fill(~mask, float("-inf"))
    lse = torch.logsumexp(capped, -1, keepdim=True)
    p = torch.exp(capped - lse.clamp_min(torch.finfo(s.dtype).min))
    dp = grad_out @ vr.transpose(-1, -2)
    ds = p * (dp - (p * dp).sum(-1, keepdim=True))
    if softcap:
        ds = ds * (1 - torch.tanh(s / softcap) ** 2)
    dq = (ds @ kr) * scale
    dk = (ds.transpose(-1, -2) @ q) * scale
    dv = p.transpose(-1, -2) @ grad_out

    def per_kv_head(t: Any) -> Any:
        return t.unflatten(1, (k.shape[1], groups)).sum(2)

    return dq, per_kv_head(dk), per_kv_head(dv)


def varlen_attention(torch: Any, q: Any, k: Any, v: Any, cu_seqlens_q: Sequence[int],
                     cu_seqlens_k: Sequence[int], **options: Any) -> Tuple[Any, Any]:
    """:func:`attention` of packed ``[total, H, D]`` sequences, each on its own:
    ``(out [total_q, H, D_v], lse [H, total_q])``; rows past the last
    sequence 0 (their lse -inf)."""
    out = q.new_zeros((*q.shape[:-1], v.shape[-1]))
    lse = q.new_full((q.shape[1], q.shape[0]), float("-inf"))
    outs, lses = [], []
    for b in range(len(cu_seqlens_q) - 1):
        rows = slice(cu_seqlens_q[b], cu_seqlens_q[b + 1])
        keys = slice(cu_seqlens_k[b], cu_seqlens_k[b + 1])
        o, l = attention(torch, q[rows].transpose(0, 1)[None], k[keys].transpose(0, 1)[None],
                         v[keys].transpose(0, 1)[None], **options)
        outs.append(o[0].transpose(0, 1))
        lses.append(l[0])
    end = cu_seqlens_q[-1]
    out = torch.cat([*outs, out[end:]], 0)
    lse = torch.cat([*lses, lse[:, end:]], 1)
    return out, lse


def varlen_attention_backward(torch: Any, q: Any, k: Any, v: Any, grad_out: Any,
                              cu_seqlens_q: Sequence[int], cu_seqlens_k: Sequence[int],
                              **options: Any) -> Tuple[Any, Any, Any]:
    """:func:`attention_backward` of packed sequences, each on its own (rows
    past the last sequence get 0)."""
    grads = [torch.zeros_like(t) for t in (q, k, v)]
    for b in range(len(cu_seqlens_q) - 1):
        rows = slice(cu_seqlens_q[b], cu_seqlens_q[b + 1])
        keys = slice(cu_seqlens_k[b], cu_seqlens_k[b + 1])
        parts = attention_backward(torch, *(t.transpose(0, 1)[None] for t in (
            q[rows], k[keys], v[keys], grad_out[rows])), **options)
        for grad, part, span in zip(grads, parts, (rows, keys, keys)):
            grad[span] = part[0].transpose(0, 1)
    return tuple(grads)  # type: ignore[return-value]

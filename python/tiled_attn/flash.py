"""A FlashAttention shim: ``flash_attn_func`` and ``flash_attn_varlen_func``
with FlashAttention's signatures, layout and meaning, over
:func:`tiled_attn.sdpa` and :func:`tiled_attn.sdpa_varlen`.

What a port from FlashAttention keeps:

- the layout: ``[B, S, H, D]`` (``flash_attn_func``; sdpa gets the
  ``[B, H, S, D]`` views ``transpose(1, 2)``, which it reads in place, and
  writes its result through the same view of a new ``[B, S_q, H, D_v]``
  tensor: no copy either way) and packed ``[total, H, D]``
  (``flash_attn_varlen_func``, sdpa_varlen's own);
- the meaning of ``causal`` and ``window_size``: aligned bottom-right, query
  ``i`` seeing keys ``j <= i + S_k - S_q`` (the last query sees the last
  key), the window ``i + S_k - S_q - left <= j <= i + S_k - S_q + right``
  (per sequence for varlen), not PyTorch's top-left;
- grouped K/V heads without an argument (``H_kv`` dividing ``H``);
- ``softmax_scale`` (``1/sqrt(D)`` when None) and ``softcap``.

What it refuses (:class:`~tiled_attn.errors.NotSupportedError`):
``dropout_p != 0`` (inference kernels), ``alibi_slopes`` without
``causal=True`` or with ``flash_attn_varlen_func``, and
``return_attn_probs=True``. Causal ALiBi runs on the library's ``alibi``
kernels. The ``library`` and ``kernel`` keywords are tiled_attn's own
(:func:`tiled_attn.sdpa`'s).

Gradients: both functions are differentiable where :func:`tiled_attn.sdpa`
and :func:`tiled_attn.sdpa_varlen` are (issue 39: masks, windows, softcap,
grouped heads, varlen; not ALiBi, nor a paged KV cache):
with grad mode on and q, k or v requiring grad, the call goes through the
differentiable op, and ``backward()`` runs tiled_attn's backward kernels.
FlashAttention's ``deterministic`` is about that backward: tiled_attn's is
deterministic under ``torch.use_deterministic_algorithms(True)`` (its dq
kernel instead of dq's atomic additions), so ``True`` with a gradient needed
is refused (NotSupportedError) while that switch is off; without a
gradient, either value runs (the forward pass is deterministic).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional, Sequence

from .backward import deterministic_requested
from .errors import NotSupportedError
from .kvcache import sdpa_varlen_with_kvcache
from .sdpa import LibraryArg, sdpa
from .validation import check_flash_args, check_inputs, flash_alibi
from .varlen import sdpa_varlen

if TYPE_CHECKING:  # pragma: no cover
    import torch

__all__ = ["flash_attn_func", "flash_attn_varlen_func"]

_FUNC = "tiled_attn.flash_attn_func"
_VARLEN_FUNC = "tiled_attn.flash_attn_varlen_func"


def flash_attn_func(
    q: "torch.Tensor",
    k: "torch.Tensor",
    v: "torch.Tensor",
    dropout_p: float = 0.0,
    softmax_scale: Optional[float] = None,
    causal: bool = False,
    window_size: Sequence[int] = (-1, -1),
    softcap: float = 0.0,
    alibi_slopes: Any = None,
    deterministic: bool = False,
    return_attn_probs: bool = False,
    *,
    library: LibraryArg = None,
    kernel: Optional[str] = None,
) -> "torch.Tensor":
    """FlashAttention's ``flash_attn_func``: attention on ``[B, S, H, D]`` tensors.

    Args:
        q: ``[B, S_q, H, D]`` CUDA tensor, float16 or bfloat16.
        k, v: ``[B, S_k, H_kv, D]`` tensors of q's device and dtype, ``H_kv``
            dividing ``H`` (grouped-query attention as FlashAttention does
            it); v may have a head dim of its own, ``D_v``.
        dropout_p: must be 0 (no dropout: NotSupportedError).
        softmax_scale: the softmax scale, ``1/sqrt(D)`` when None.
        causal: FlashAttention's causal mask, aligned bottom-right: query
            ``i`` sees keys ``j <= i + S_k - S_q`` (a query that sees none,
            with ``S_q > S_k``, gives zeros, as in FlashAttention).
        window_size: FlashAttention's ``(left, right)``, ``-1`` no bound on
            that side, aligned bottom-right as the causal mask, with or
            without it.
        softcap: FlashAttention's logit soft-capping, ``0.0`` off.
        alibi_slopes: FlashAttention's ALiBi, a float32 ``[H]`` tensor: with
            ``causal=True``, ``-slope * |i + S_k - S_q - j|`` added to the
            scaled scores, on the library's ``alibi`` kernels (top-left
            causal ones, so S_q == S_k; another S_q gets a no-kernel error);
            without ``causal``, NotSupportedError.
        deterministic: a bool; True where a gradient is needed asks for
            the deterministic backward, which runs under
            ``torch.use_deterministic_algorithms(True)`` (refused while that
            is off); the forward pass is deterministic either way.
        return_attn_probs: must be False (NotSupportedError).
        library, kernel: :func:`tiled_attn.sdpa`'s.

    Returns:
        A new ``[B, S_q, H, D_v]`` tensor (contiguous), computed on the
        current torch stream; differentiable as :func:`tiled_attn.sdpa`'s
        output is (its gradients flow through the copy into it).

    Raises:
        the errors of :func:`tiled_attn.sdpa` (whose messages call the
        ``[B, H, S, D]`` views q, k and v), and NotSupportedError or TypeError
        for the arguments above.
    """
    import torch

    if (dropout_p != 0.0 or alibi_slopes is not None or return_attn_probs is not False
            or deterministic is not False):
        check_flash_args(dropout_p, alibi_slopes, deterministic, return_attn_probs, _FUNC)
        _check_deterministic(torch, deterministic, q, k, v, _FUNC)
    # Rank 4 (a non-tensor has no shape): check_inputs says what else is wrong.
    if (len(getattr(q, "shape", ())) != 4 or len(getattr(k, "shape", ())) != 4
            or len(getattr(v, "shape", ())) != 4):
        check_inputs(q, k, v, causal, softmax_scale, function=_FUNC, layout="[B, S, H, D]")
    batch, s_q, heads, _ = q.shape
    # With S_q == S_k both alignments are the same (shift 0); top-left then
    # keeps sdpa on its fastest path.
    align = "top_left" if s_q == k.shape[1] else "bottom_right"
    functions = {}
    if alibi_slopes is not None:
        functions = {"score_mod": "alibi", "score_mod_args": (
            flash_alibi(torch, alibi_slopes, causal, heads, q.device, _FUNC),)}
    result = torch.empty((batch, s_q, heads, v.shape[3]), dtype=q.dtype, device=q.device)
    sdpa(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), scale=softmax_scale,
         enable_gqa=True, causal=causal, causal_align=align, window_size=window_size,
         softcap=softcap, library=library, kernel=kernel, out=result.transpose(1, 2),
         **functions)
    return result


def flash_attn_varlen_func(
    q: "torch.Tensor",
    k: "torch.Tensor",
    v: "torch.Tensor",
    cu_seqlens_q: "torch.Tensor",
    cu_seqlens_k: "torch.Tensor",
    max_seqlen_q: int,
    max_seqlen_k: int,
    dropout_p: float = 0.0,
    softmax_scale: Optional[float] = None,
    causal: bool = False,
    window_size: Sequence[int] = (-1, -1),
    softcap: float = 0.0,
    alibi_slopes: Any = None,
    deterministic: bool = False,
    return_attn_probs: bool = False,
    *,
    seqused_k: Optional["torch.Tensor"] = None,
    block_table: Optional["torch.Tensor"] = None,
    library: LibraryArg = None,
    kernel: Optional[str] = None,
) -> "torch.Tensor":
    """FlashAttention's ``flash_attn_varlen_func``: :func:`tiled_attn.sdpa_varlen`
    with FlashAttention's bottom-right ``causal`` and ``window_size`` per
    sequence (sequence ``b``'s query ``i`` sees its keys ``j <= i + S_k(b) -
    S_q(b)``), grouped K/V heads without an argument, and
    :func:`flash_attn_func`'s other arguments and refusals.

    ``q`` is ``[total_q, H, D]``, ``k`` and ``v`` ``[total_k, H_kv, D]``;
    ``cu_seqlens_q``, ``cu_seqlens_k`` (int32, ``num_seqs + 1`` offsets),
    ``max_seqlen_q`` and ``max_seqlen_k`` as :func:`tiled_attn.sdpa_varlen`
    takes them. Returns a new ``[total_q, H, D_v]`` tensor; rows past
    ``cu_seqlens_q[-1]`` are not written.

    With ``block_table`` (vLLM's call: ``seqused_k`` and a paged cache),
    ``k`` and ``v`` are the pages ``[num_pages, page_size, H_kv, D]`` and
    :func:`tiled_attn.sdpa_varlen_with_kvcache` runs it (``cu_seqlens_k``
    and ``max_seqlen_k`` are not read, no window); ``seqused_k`` without a
    table is not supported yet.
    """
    import torch

    if (dropout_p != 0.0 or alibi_slopes is not None or return_attn_probs is not False
            or deterministic is not False):
        check_flash_args(dropout_p, alibi_slopes, deterministic, return_attn_probs,
                         _VARLEN_FUNC)
        _check_deterministic(torch, deterministic, q, k, v, _VARLEN_FUNC)
    if block_table is not None or seqused_k is not None:
        if block_table is None or seqused_k is None or tuple(window_size) != (-1, -1):
            raise NotSupportedError(f"{_VARLEN_FUNC}: seqused_k is supported with a paged "
                                    "cache's block_table (both given) and no window_size")
        return sdpa_varlen_with_kvcache(q, k, v, cu_seqlens_q, max_seqlen_q, seqused_k,
                                        block_table, causal=causal, scale=softmax_scale,
                                        softcap=softcap, library=library)
    return sdpa_varlen(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, causal,
                       softmax_scale, enable_gqa=True, causal_align="bottom_right",
                       window_size=window_size, softcap=softcap, library=library,
                       kernel=kernel)


def _check_deterministic(torch: Any, deterministic: bool, q: Any, k: Any, v: Any,
                         function: str) -> None:
    """NotSupportedError for ``deterministic=True`` where a gradient is needed
    (grad mode on, q, k or v requiring grad) while
    ``torch.use_deterministic_algorithms`` is off: FlashAttention's flag asks
    for a deterministic backward, and tiled_attn's runs its deterministic
    mode (a dq kernel instead of dq's atomic additions) under PyTorch's
    switch, which the backward reads when it runs."""
    if deterministic and not deterministic_requested(torch) and torch.is_grad_enabled() and any(
            getattr(t, "requires_grad", False) for t in (q, k, v)):
        raise NotSupportedError(
            f"{function}: deterministic=True with inputs that require grad, but "
            "torch.use_deterministic_algorithms is off: tiled_attn's backward is deterministic "
            "under PyTorch's switch (its dq kernel instead of dq's atomic additions); call "
            "torch.use_deterministic_algorithms(True), or pass deterministic=False")

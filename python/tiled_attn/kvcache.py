"""Decode against a KV cache: :func:`sdpa_with_kvcache`, modeled on
FlashAttention's ``flash_attn_with_kvcache``.

A step of autoregressive decoding (or of speculative decoding, or a chunk of
a prefill) attends ``S_q`` new query tokens of each sequence to the keys and
values already in its cache. The caches are ``[B, S_max, H_kv, D]``
(FlashAttention's and vLLM's contiguous layout), filled up to each
sequence's ``cache_seqlens[b]``; the kernels read them in place (the
``[B, H, S, D]`` views ``transpose(1, 2)``), read only the filled keys, and
align the causal mask by each sequence's own length (its last query sees
its last key). The runtime packs a decode step's grouped query heads into
the rows of one tile (packed GQA) and splits long caches across the SMs
(split-KV, the workspace from PyTorch's allocator): see docs/runtime.md,
"Decode".

A paged cache (vLLM's: ``block_table``) is ``[num_pages, page_size, H_kv,
D]`` pages, sequence b's keys ``i * page_size ...`` in page
``block_table[b, i]``; the library's paged kernels read each key block
from its page (page sizes that their ``block_n`` divides: 16, 64, 256,
...).

Not yet: sliding windows, appending new keys and values to the cache
(``k``, ``v`` of FlashAttention's call: write them into the cache first,
then call this), rotary embeddings, the varlen form (``cu_seqlens_q``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional, Sequence, Tuple, Union

from .errors import NotSupportedError
from .sdpa import LibraryArg, library_of, sdpa_eager
from .validation import check_inputs

if TYPE_CHECKING:  # pragma: no cover
    import torch

__all__ = ["sdpa_varlen_with_kvcache", "sdpa_with_kvcache"]

_FUNC = "tiled_attn.sdpa_with_kvcache"


def sdpa_with_kvcache(
    q: "torch.Tensor",
    k_cache: "torch.Tensor",
    v_cache: "torch.Tensor",
    cache_seqlens: "Union[torch.Tensor, int, None]" = None,
    *,
    block_table: Optional["torch.Tensor"] = None,
    causal: bool = True,
    scale: Optional[float] = None,
    window_size: Sequence[int] = (-1, -1),
    softcap: float = 0.0,
    return_lse: bool = False,
    num_splits: int = 0,
    library: LibraryArg = None,
) -> "Union[torch.Tensor, Tuple[torch.Tensor, torch.Tensor]]":
    """Attention of new query tokens to a KV cache.

    Args:
        q: ``[B, S_q, H_q, D]`` CUDA tensor, float16 or bfloat16: the new
            tokens' queries (``S_q`` 1 for a decode step).
        k_cache, v_cache: ``[B, S_max, H_kv, D]`` (v: ``D_v``) tensors of
            q's dtype and device, ``H_kv`` dividing ``H_q``; with a
            ``block_table``, the pages ``[num_pages, page_size, H_kv, D]``.
        cache_seqlens: the filled length of each sequence's cache: an int32
            ``[B]`` tensor on q's device, or an int (every sequence), or None
            (the whole cache). Sequence b attends to keys ``0 ..
            cache_seqlens[b] - 1`` (at most ``S_max``, with a block table
            ``max_pages * page_size``; 0 gives zeros). The
            values are read by the kernels only: a length past ``S_max``
            reads ``S_max`` keys, and their being right is the caller's
            contract (as for FlashAttention).
        block_table: a paged cache's block table, an int32 ``[B,
            max_pages]`` tensor on q's device: sequence b's keys ``i *
            page_size .. (i + 1) * page_size - 1`` are in page
            ``block_table[b, i]``. Only its first ``ceil(cache_seqlens[b] /
            page_size)`` entries are read, and they must lie in ``[0,
            num_pages)`` (the caller's contract, as the lengths are; a
            page past the cache reads as zeros). Every element of a read
            page must be finite (rows past the length get weight 0, and
            ``0 * inf`` is NaN): vLLM's zero-initialized caches are.
        causal: aligned bottom-right by each sequence's length: query ``i``
            of ``S_q`` sees keys ``j <= i + cache_seqlens[b] - S_q``
            (FlashAttention's). With ``S_q == 1`` it hides nothing.
        scale: the softmax scale, ``1/sqrt(D)`` when None.
        window_size: must be ``(-1, -1)`` (no sliding window yet).
        softcap: logit soft-capping, ``0.0`` off.
        return_lse: also return the rows' log-sum-exps, ``[B, H_q, S_q]``
            float32 (FlashAttention's ``softmax_lse``).
        num_splits: split-KV's chunks: 0 lets the runtime choose (its
            heuristic over the SMs), 1 never splits, ``n`` asks for ``n``.
        library: :func:`tiled_attn.sdpa`'s.

    Returns:
        A new ``[B, S_q, H_q, D_v]`` tensor (and the log-sum-exps), computed
        on the current torch stream; no host synchronization, and only
        PyTorch's allocator allocates (CUDA-graph capturable once the
        kernels are loaded).
    """
    import torch

    if tuple(window_size) != (-1, -1):
        raise NotSupportedError(f"{_FUNC}: window_size={tuple(window_size)}: sliding "
                                "windows over a KV cache are not supported yet")
    if (len(getattr(q, "shape", ())) != 4 or len(getattr(k_cache, "shape", ())) != 4
            or len(getattr(v_cache, "shape", ())) != 4):
        check_inputs(q, k_cache, v_cache, causal, scale, function=_FUNC,
                     layout="[B, S, H, D]")
    batch = q.shape[0]
    capacity = k_cache.shape[1]
    if block_table is not None:
        _check_block_table(torch, block_table, batch, q.device)
        capacity *= block_table.shape[1]
    lengths = _cache_lengths(torch, cache_seqlens, batch, capacity, q.device)
    if torch.compiler.is_compiling():
        from . import ops  # noqa: F401  (registers tiled_attn::sdpa_with_kvcache)

        path = None if library is None else str(library_of(library).path)
        op = (torch.ops.tiled_attn.sdpa_with_kvcache_lse if return_lse
              else torch.ops.tiled_attn.sdpa_with_kvcache)
        return op(q, k_cache, v_cache, lengths, causal, scale, softcap, num_splits, path,
                  block_table)
    return kvcache_eager(q, k_cache, v_cache, lengths, causal, scale, softcap, num_splits,
                         library, return_lse, block_table)


def kvcache_eager(q: "torch.Tensor", k_cache: "torch.Tensor", v_cache: "torch.Tensor",
                  lengths: "torch.Tensor", causal: bool, scale: Optional[float],
                  softcap: float, num_splits: int, library: LibraryArg,
                  return_lse: bool, block_table: Optional["torch.Tensor"] = None) -> Any:
    """:func:`sdpa_with_kvcache`'s work on checked lengths, and the CUDA
    implementation of ``tiled_attn::sdpa_with_kvcache(_lse)``."""
    import torch

    batch, s_q, heads, _ = q.shape
    result = torch.empty((batch, s_q, heads, v_cache.shape[3]), dtype=q.dtype,
                         device=q.device)
    # (A paged cache's pages, [num_pages, page_size, H_kv, D], are read as
    # [num_pages, H_kv, page_size, D] alike.)
    out = sdpa_eager(q.transpose(1, 2), k_cache.transpose(1, 2), v_cache.transpose(1, 2),
                     causal=causal, scale=scale, library=library, out=result.transpose(1, 2),
                     enable_gqa=True, causal_align="bottom_right", softcap=softcap,
                     return_lse=return_lse, num_splits=num_splits, seqused_k=lengths,
                     block_table=block_table)
    return (result, out[1]) if return_lse else result


def _check_block_table(torch: Any, block_table: Any, batch: int, device: Any) -> None:
    """A block table as the paged kernels read it: int32 ``[B, max_pages]``
    on q's device, its rows of unit stride."""
    if not isinstance(block_table, torch.Tensor):
        raise TypeError(f"{_FUNC}: block_table must be an int32 tensor of shape [B, "
                        f"max_pages], got {type(block_table).__name__}")
    if (block_table.dtype is not torch.int32 or block_table.device != device
            or block_table.dim() != 2 or block_table.shape[0] != batch
            or block_table.shape[1] < 1):
        raise ValueError(f"{_FUNC}: block_table must be an int32 tensor of shape [{batch}, "
                         f"max_pages >= 1] on {device}, got {block_table.dtype} of shape "
                         f"{tuple(block_table.shape)} on {block_table.device}")


def _cache_lengths(torch: Any, cache_seqlens: Any, batch: int, s_max: int,
                   device: Any) -> "torch.Tensor":
    """cache_seqlens as the int32 [B] tensor the kernels read."""
    if cache_seqlens is None or (type(cache_seqlens) is int and cache_seqlens >= 0):
        length = s_max if cache_seqlens is None else min(cache_seqlens, s_max)
        return torch.full((batch,), length, dtype=torch.int32, device=device)
    if not isinstance(cache_seqlens, torch.Tensor):
        raise TypeError(f"{_FUNC}: cache_seqlens must be an int32 tensor of shape [B], an "
                        f"int >= 0 or None, got {cache_seqlens!r}")
    if (cache_seqlens.dtype is not torch.int32 or cache_seqlens.device != device
            or tuple(cache_seqlens.shape) != (batch,)):
        raise ValueError(f"{_FUNC}: cache_seqlens must be an int32 tensor of shape [{batch}] "
                         f"on {device}, got {cache_seqlens.dtype} of shape "
                         f"{tuple(cache_seqlens.shape)} on {cache_seqlens.device}")
    return cache_seqlens.contiguous()


def sdpa_varlen_with_kvcache(
    q: "torch.Tensor",
    k_cache: "torch.Tensor",
    v_cache: "torch.Tensor",
    cu_seqlens_q: "torch.Tensor",
    max_seqlen_q: int,
    seqused_k: "torch.Tensor",
    block_table: "torch.Tensor",
    *,
    causal: bool = True,
    scale: Optional[float] = None,
    softcap: float = 0.0,
    return_lse: bool = False,
    library: LibraryArg = None,
) -> "Union[torch.Tensor, Tuple[torch.Tensor, torch.Tensor]]":
    """vLLM's attention call: packed query sequences against paged caches.

    Args:
        q: ``[total_q, H_q, D]`` CUDA tensor, float16 or bfloat16: the
            sequences' new tokens, packed (a mixed batch of prefills and
            decodes: sequence b's are rows ``cu_seqlens_q[b] ..
            cu_seqlens_q[b + 1] - 1``).
        k_cache, v_cache: the pages ``[num_pages, page_size, H_kv, D]``, of
            q's dtype and device, ``H_kv`` dividing ``H_q``.
        cu_seqlens_q: int32 ``[num_seqs + 1]`` offsets into q (0 first).
        max_seqlen_q: the longest sequence's query count (or more).
        seqused_k: int32 ``[num_seqs]``: sequence b's keys are its first
            ``seqused_k[b]`` (its new tokens' included: write them into the
            cache first).
        block_table: int32 ``[num_seqs, max_pages]``: sequence b's keys ``i
            * page_size ..`` are in page ``block_table[b, i]``.
        causal: bottom-right by each sequence's lengths: its query ``i`` of
            ``S_q(b)`` sees keys ``j <= i + seqused_k[b] - S_q(b)``.
        scale, softcap, return_lse, library: :func:`sdpa_with_kvcache`'s.

    Returns a new ``[total_q, H_q, D_v]`` tensor (rows past
    ``cu_seqlens_q[-1]`` not written) and, with ``return_lse``, the
    log-sum-exps ``[H_q, total_q]`` (FlashAttention's varlen layout). The
    offsets, lengths and table entries are read by the kernels only: their
    being right is the caller's contract (as for FlashAttention). Runs on
    the library's ``varlen`` ``paged`` kernels (no packed GQA or split-KV);
    under ``torch.compile`` as the op ``tiled_attn::sdpa_varlen_with_kvcache``
    (``_lse``).
    """
    import torch

    if torch.compiler.is_compiling():
        from . import ops  # noqa: F401  (registers the ops)

        path = None if library is None else str(library_of(library).path)
        op = (torch.ops.tiled_attn.sdpa_varlen_with_kvcache_lse if return_lse
              else torch.ops.tiled_attn.sdpa_varlen_with_kvcache)
        return op(q, k_cache, v_cache, cu_seqlens_q, max_seqlen_q, seqused_k, block_table,
                  causal, scale, softcap, path)
    return varlen_kvcache_eager(q, k_cache, v_cache, cu_seqlens_q, max_seqlen_q, seqused_k,
                                block_table, causal, scale, softcap, return_lse, library)


def varlen_kvcache_eager(q: "torch.Tensor", k_cache: "torch.Tensor", v_cache: "torch.Tensor",
                         cu_seqlens_q: "torch.Tensor", max_seqlen_q: int,
                         seqused_k: "torch.Tensor", block_table: "torch.Tensor", causal: bool,
                         scale: Optional[float], softcap: float, return_lse: bool,
                         library: LibraryArg) -> Any:
    """:func:`sdpa_varlen_with_kvcache`'s work, and the CUDA implementation of
    ``tiled_attn::sdpa_varlen_with_kvcache(_lse)``."""
    import torch

    from .runtime import DTYPES, MASKS, packed_view
    from .sdpa import _SPLIT_MIN_KEYS, default_scale, launch, output_for, split_workspace
    from .functions import paged_fields
    from .validation import (check_return_lse, check_scale, check_softcap, check_tensor,
                             check_varlen)

    func = "tiled_attn.sdpa_varlen_with_kvcache"
    check_tensor("q", q)
    for name, t in (("k_cache", k_cache), ("v_cache", v_cache)):
        check_tensor(name, t)
        if t.dtype != q.dtype or t.device != q.device or t.dim() != 4:
            raise ValueError(f"{func}: {name} must be [num_pages, page_size, H_kv, D] pages of "
                             f"q's dtype ({q.dtype}) and device ({q.device}), got {t.dtype} of "
                             f"shape {tuple(t.shape)} on {t.device}")
    if q.dim() != 3 or q.dtype not in (torch.float16, torch.bfloat16) or q.device.type != "cuda":
        raise ValueError(f"{func}: q must be a [total_q, H_q, D] CUDA tensor of float16 or "
                         f"bfloat16, got {q.dtype} of shape {tuple(q.shape)} on {q.device}")
    num_seqs = check_varlen(q, cu_seqlens_q, cu_seqlens_q, max_seqlen_q, max_seqlen_q)
    _check_block_table(torch, block_table, num_seqs, q.device)
    capacity = k_cache.shape[1] * block_table.shape[1]
    lengths = _cache_lengths(torch, seqused_k, num_seqs, capacity, q.device)
    softcap = check_softcap(softcap)
    return_lse = check_return_lse(return_lse)
    library = library_of(library)
    scale = default_scale(q.shape[-1]) if scale is None else check_scale(scale)
    out = output_for(torch, q, v_cache[0], None)
    lse = (torch.empty((q.shape[1], q.shape[0]), dtype=torch.float32, device=q.device)
           if return_lse else None)
    functions, keep = paged_fields(torch, library, q.device, block_table)

    def pages(t: "torch.Tensor") -> Tuple[int, ...]:
        view = t.transpose(1, 2)  # [num_pages, H_kv, page_size, D]
        return (view.data_ptr(), *view.shape, *view.stride())

    fields = (*packed_view(q), *pages(k_cache), *pages(v_cache), *packed_view(out),
              DTYPES["bf16" if q.dtype is torch.bfloat16 else "f16"],
              MASKS["bottom_right" if causal else "none"], scale, 0,
              0, 0, 0, 0, softcap, 0 if lse is None else lse.data_ptr(),
              1, num_seqs, cu_seqlens_q.data_ptr(), 0, int(max_seqlen_q), capacity,
              *functions)
    # A decode step (one query per sequence) runs as its batch (packed GQA,
    # split-KV where the runtime chooses it: docs/runtime.md).
    splits, workspace = ((0, 0, 0), None)
    if int(max_seqlen_q) == 1 and q.shape[0] == num_seqs and capacity >= _SPLIT_MIN_KEYS:
        splits, workspace = split_workspace(torch, library, q.device, fields, 0,
                                            lengths.data_ptr())
    launch(torch, library, q.device.index, *fields, *splits, lengths.data_ptr())
    del keep, workspace
    return out if lse is None else (out, lse)

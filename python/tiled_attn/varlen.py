"""``sdpa_varlen``: attention over a batch of sequences of different lengths,
packed one after the other without padding (FlashAttention's
``flash_attn_varlen_func``).

The sequences' query rows are packed into one ``[total_q, H, D]`` tensor and
their keys and values into ``[total_k, H_kv, D]`` ones; sequence ``b`` is
the query rows ``cu_seqlens_q[b]:cu_seqlens_q[b + 1]`` and the keys
``cu_seqlens_k[b]:cu_seqlens_k[b + 1]``. The runtime sees the packed tensors
as ``[1, H, total, D]`` views (ta_varlen) and launches one program per block
of ``max_seqlen_q`` rows, head and sequence; each program reads its
sequence's offsets on the GPU, so a call neither synchronizes nor reads the
offsets on the host (it can be captured in a CUDA graph).

Like :func:`tiled_attn.sdpa`, it is also a ``torch.library`` custom op,
``tiled_attn::sdpa_varlen`` (``tiled_attn::sdpa_varlen_lse`` with
``return_lse``; :mod:`.ops`), which ``torch.compile`` keeps in its graph; and
like it, it is differentiable: where a gradient is needed, the eager call
takes the op, whose Autograd kernel runs ``sdpa_varlen_lse`` and its
autograd formula (:func:`tiled_attn.backward.sdpa_varlen_backward_eager`),
windows included (aligned per sequence as the forward's).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional, Sequence, Tuple, Union

from .functions import NO_FUNCTIONS
from .runtime import DTYPES, KernelLibrary, packed_view
from .sdpa import (NO_SPLIT, LibraryArg, _kernel_name_address, _mask_and_window, args_fields,
                   check_for_op, default_scale, launch, library_of, output_for)
from .validation import (check_gqa, check_inputs, check_return_lse, check_scale, check_softcap,
                         check_varlen, check_window, copy_reason, needs_backward)

if TYPE_CHECKING:  # pragma: no cover
    import torch

__all__ = ["sdpa_varlen", "sdpa_varlen_eager"]

#: The function and layout the messages of check_inputs name.
_NAMES = dict(function="tiled_attn.sdpa_varlen", layout="[total, H, D]")


def sdpa_varlen(
    q: "torch.Tensor",
    k: "torch.Tensor",
    v: "torch.Tensor",
    cu_seqlens_q: "torch.Tensor",
    cu_seqlens_k: "torch.Tensor",
    max_seqlen_q: int,
    max_seqlen_k: int,
    causal: bool = False,
    scale: Optional[float] = None,
    *,
    enable_gqa: bool = False,
    causal_align: str = "top_left",
    window_size: Sequence[int] = (-1, -1),
    softcap: float = 0.0,
    return_lse: bool = False,
    library: LibraryArg = None,
    kernel: Optional[str] = None,
    out: Optional["torch.Tensor"] = None,
) -> "Union[torch.Tensor, Tuple[torch.Tensor, torch.Tensor]]":
    """Attention over packed sequences of different lengths, each on its own.

    Args:
        q: ``[total_q, H, D]`` CUDA tensor, float16 or bfloat16: the
            sequences' query rows one after the other.
        k, v: ``[total_k, H_kv, D]`` tensors of q's device and dtype,
            ``total_k >= 1``; ``H_kv == H`` unless ``enable_gqa``. v may
            have a head dim of its own, ``D_v`` (as in :func:`tiled_attn.sdpa`).
        cu_seqlens_q, cu_seqlens_k: the sequences' offsets, contiguous
            ``torch.int32`` tensors of ``num_seqs + 1`` entries on q's device:
            0 first, nondecreasing, the last at most ``total_q`` (``total_k``).
            A sequence may be empty (no queries, or no keys: its rows are 0).
            Only the kernels read them; values outside these rules are
            undefined behaviour.
        max_seqlen_q, max_seqlen_k: ints ``>= 1``, the longest query and key
            sequence (or more; at most the totals): the grid has
            ``ceil(max_seqlen_q / block_m)`` blocks per head and sequence.
        causal, scale, enable_gqa, causal_align, window_size, softcap:
            :func:`tiled_attn.sdpa`'s, per sequence: ``causal_align=
            "bottom_right"`` aligns each sequence's last query with its last
            key.
        return_lse: also return the rows' log-sum-exps, a new contiguous
            ``[H, total_q]`` float32 tensor (FlashAttention's varlen
            ``softmax_lse``), ``-inf`` for a row that sees no key.
        library, kernel: :func:`tiled_attn.sdpa`'s; the kernel must be one
            compiled for variable-length batches.
        out: where to write the result, a ``[total_q, H, D_v]`` tensor of q's
            dtype and device with 16-byte aligned strides and a unit last
            one; a new contiguous tensor when None.

    Returns:
        ``out``, or a new ``[total_q, H, D_v]`` tensor, computed on the current
        torch stream; with ``return_lse``, the pair ``(out, lse)``. Rows past
        ``cu_seqlens_q[-1]`` (of both) are not written. Rows of q, k and v
        past the last offset may be read, and must hold finite values.
        Differentiable as :func:`tiled_attn.sdpa`'s output is; the gradients
        of rows past the last sequences are 0.

    Raises:
        TypeError, ValueError: bad arguments; the message names the problem.
        TiledAttnError: no kernel library, no varlen kernel for this device,
            dtype, head dim and mask (and window, softcap, log-sum-exps), or
            a CUDA driver error.
        NoKernelError: at ``backward()``, no backward kernel for the call
            (a head dim the library has none for).
    """
    import torch

    # Through the op under torch.compile (a node of the graph) and where a
    # gradient is needed (its autograd formula); else straight to the kernels.
    if torch.compiler.is_compiling() or needs_backward(torch, _NAMES["function"], q, k, v):
        from . import ops  # noqa: F401  (registers tiled_attn::sdpa_varlen)

        if not torch.compiler.is_compiling():
            check_for_op(torch, "sdpa_varlen_lse", q, k, v, causal, scale, **_NAMES)

        _, left, right = check_window(causal_align, window_size)
        softcap = check_softcap(softcap)
        return_lse = check_return_lse(return_lse)
        path = str(library.path) if isinstance(library, KernelLibrary) else library
        call = (q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, causal,
                scale, kernel, path, enable_gqa, causal_align, [left, right], softcap)
        if return_lse:
            result, lse = torch.ops.tiled_attn.sdpa_varlen_lse(*call)
            return _into(torch, out, result, cu_seqlens_q), lse
        result = torch.ops.tiled_attn.sdpa_varlen(*call)
        return _into(torch, out, result, cu_seqlens_q)
    return sdpa_varlen_eager(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k,
                             causal, scale, library, kernel, out, enable_gqa, causal_align,
                             window_size, softcap, return_lse)


def _into(torch: Any, out: Optional["torch.Tensor"], result: "torch.Tensor",
          cu_seqlens_q: "torch.Tensor") -> "torch.Tensor":
    """``result`` (the op's new tensor), or ``out`` with the sequences' rows
    copied from it: the rows past ``cu_seqlens_q[-1]`` keep their values, as
    in the eager path (a select on the GPU, no host sync)."""
    if out is None:
        return result
    rows = torch.arange(result.shape[0], device=result.device) < cu_seqlens_q[-1]
    return out.copy_(torch.where(rows[:, None, None], result, out))


def sdpa_varlen_eager(
    q: "torch.Tensor",
    k: "torch.Tensor",
    v: "torch.Tensor",
    cu_seqlens_q: "torch.Tensor",
    cu_seqlens_k: "torch.Tensor",
    max_seqlen_q: int,
    max_seqlen_k: int,
    causal: bool = False,
    scale: Optional[float] = None,
    library: LibraryArg = None,
    kernel: Optional[str] = None,
    out: Optional["torch.Tensor"] = None,
    enable_gqa: bool = False,
    causal_align: str = "top_left",
    window_size: Sequence[int] = (-1, -1),
    softcap: float = 0.0,
    return_lse: bool = False,
) -> "Union[torch.Tensor, Tuple[torch.Tensor, torch.Tensor]]":
    """:func:`sdpa_varlen`'s work, and the CUDA implementation of
    ``tiled_attn::sdpa_varlen`` (and ``tiled_attn::sdpa_varlen_lse``)."""
    import torch

    return_lse = check_return_lse(return_lse)
    library, views, options, keep = checked_varlen_call(
        torch, q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, causal, scale,
        library, enable_gqa, causal_align, window_size, softcap)
    out = output_for(torch, q, v, out)
    lse = None
    if return_lse:
        lse = torch.empty((q.shape[1], q.shape[0]), dtype=torch.float32, device=q.device)
    launch(torch, library, q.device.index,
           *varlen_fields(views, packed_view(out), options,
                          0 if kernel is None else _kernel_name_address(kernel),
                          0 if lse is None else lse.data_ptr()), *NO_SPLIT)
    del keep  # alive through the launch
    return out if lse is None else (out, lse)


def checked_varlen_call(torch: Any, q: "torch.Tensor", k: "torch.Tensor", v: "torch.Tensor",
                        cu_seqlens_q: "torch.Tensor", cu_seqlens_k: "torch.Tensor",
                        max_seqlen_q: Any, max_seqlen_k: Any, causal: Any, scale: Any,
                        library: LibraryArg, enable_gqa: Any, causal_align: Any,
                        window_size: Any, softcap: Any) -> tuple:
    """The checks and copies of a variable-length call, shared by the forward
    (:func:`sdpa_varlen_eager`) and the backward
    (:func:`tiled_attn.backward.sdpa_varlen_backward_eager`), which must
    describe the same call to the runtime.

    Returns ``(library, views, options, inputs)``: the opened library; the
    ta_tensor fields of q, k and v (:func:`~tiled_attn.runtime.packed_view`),
    each copied to a contiguous tensor first where the kernels cannot take
    its layout; ``options``, what :func:`varlen_fields` packs (the dtype,
    mask, scale, window, softcap and ta_varlen's fields); and the (copied)
    q, k and v, to be kept alive through the launch.
    """
    dtype = DTYPES[check_inputs(q, k, v, causal, scale, **_NAMES)]
    num_seqs = check_varlen(q, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k)
    check_gqa(enable_gqa, q.shape[1], (k.shape[1], v.shape[1]))
    mask, window = _mask_and_window(causal, causal_align, window_size)
    softcap = check_softcap(softcap)
    library = library_of(library)
    scale = default_scale(q.shape[-1]) if scale is None else check_scale(scale)
    align = library.align_bytes
    q, k, v = (t.clone(memory_format=torch.contiguous_format) if copy_reason(t, align) else t
               for t in (q, k, v))
    varlen = (1, num_seqs, cu_seqlens_q.data_ptr(), cu_seqlens_k.data_ptr(), int(max_seqlen_q),
              int(max_seqlen_k))
    views = (*packed_view(q), *packed_view(k), *packed_view(v))
    return library, views, (dtype, mask, scale, window, softcap, varlen), (q, k, v)


def varlen_fields(views: Sequence[Any], out: Sequence[Any], options: Sequence[Any],
                  kernel: int, lse: int) -> tuple:
    """ta_sdpa_args' fields up to the functions' (none) of a variable-length
    call: :func:`~tiled_attn.sdpa.args_fields` of :func:`checked_varlen_call`'s
    ``views`` and ``options``, o's view ``out``, the kernel name's and the
    log-sum-exps' addresses (0: none)."""
    dtype, mask, scale, window, softcap, varlen = options
    return args_fields(views, out, dtype, mask, scale, kernel, window, softcap, lse, varlen,
                       NO_FUNCTIONS)

"""The backward pass of attention: the gradients of q, k and v (issue 39).

Given the gradient of a loss with respect to an attention call's output
(``grad_out``), the call's inputs, its output and its log-sum-exps, one
call into the runtime (``ta_sdpa_backward``) launches FlashAttention-2's
backward as three kernels of the library's ``sdpa_backward`` entries on the
current stream (docs/backward.md):

- preprocess: ``delta = rowsum(dO * O)`` and dQ's float32 accumulator
  zeroed, both in a workspace;
- main: per key block of a K/V head, dK and dV of the block (summed over
  the query heads of its group, in registers) and dQ's part, added to the
  accumulator by atomics;
- postprocess: ``dq = scale * accumulator``, in q's dtype.

What this module does is the torch side: the same checks, copies and
ta_sdpa_args as the forward call (:func:`tiled_attn.sdpa.checked_call`,
:func:`tiled_attn.varlen.checked_varlen_call`, so that the runtime sees the
call the forward ran, mask, window, softcap and alignment included), the
gradients allocated contiguous (with varlen zeroed: the kernels write no
row past the last sequence), the workspace from PyTorch's allocator
(``ta_sdpa_backward_workspace_size`` bytes, 256-byte aligned as the
allocator gives them), and the launch. No synchronization, no allocation
outside PyTorch's allocator: a backward can be captured in a CUDA graph
once its modules are loaded (run it once before capturing).

These are the CUDA implementations of the ops ``tiled_attn::sdpa_backward``
and ``tiled_attn::sdpa_varlen_backward`` (:mod:`tiled_attn.ops`), which the
autograd formula of ``tiled_attn::sdpa_lse`` and ``sdpa_varlen_lse`` calls.

Not deterministic by default: the order of dQ's atomic additions varies
from run to run (dK and dV are deterministic). Under
``torch.use_deterministic_algorithms(True)`` the runtime's deterministic
mode runs instead: the library's dq kernel recomputes dQ per query block
and writes it once, the same bits every run (NoKernelError where the
library has no dq kernel for the call).
"""

from __future__ import annotations

import ctypes
import struct
import threading
import warnings
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, Optional, Sequence, Tuple

from .errors import NoKernelError
from .functions import NO_FUNCTIONS, function_fields
from .runtime import TaSdpaArgs, TaSdpaBackwardArgs, packed_view
from .sdpa import (_ARGS_LAYOUT, _BIAS_16BIT_FUNCTIONS, _VARLEN_OFF, NO_SPLIT, LibraryArg,
                   _current_stream, _unpackable, args_fields, bias_16bit_or_float32,
                   checked_call)
from .validation import check_tensor, copy_reason
from .varlen import checked_varlen_call, varlen_fields

if TYPE_CHECKING:  # pragma: no cover
    import torch

__all__ = ["deterministic_requested", "sdpa_backward_eager", "sdpa_varlen_backward_eager"]

Grads = Tuple["torch.Tensor", "torch.Tensor", "torch.Tensor"]


def sdpa_backward_eager(
    grad_out: "torch.Tensor",
    q: "torch.Tensor",
    k: "torch.Tensor",
    v: "torch.Tensor",
    out: "torch.Tensor",
    lse: "torch.Tensor",
    causal: bool = False,
    scale: Optional[float] = None,
    library: LibraryArg = None,
    enable_gqa: bool = False,
    causal_align: str = "top_left",
    window_size: Sequence[int] = (-1, -1),
    softcap: float = 0.0,
    grads: Optional[Grads] = None,
    score_mod: Optional[str] = None,
    score_mod_args: Sequence[Any] = (),
    mask_mod: Optional[str] = None,
    mask_mod_args: Sequence[Any] = (),
) -> Grads:
    """``(dq, dk, dv)`` of the call ``sdpa_eager(q, k, v, causal, scale, ...)``
    that gave ``out`` and ``lse`` (``return_lse=True``), for ``grad_out``, the
    loss's gradient with respect to ``out``; the CUDA implementation of
    ``tiled_attn::sdpa_backward``.

    ``q``, ``k``, ``v`` and the options are the forward call's (its kernel
    name aside: the runtime chooses the backward kernels); ``out`` its
    ``[B, H, S_q, D_v]`` output and ``lse`` its ``[B, H, S_q]`` float32
    log-sum-exps. ``grad_out`` has out's shape: one of another dtype is
    converted to q's, one whose layout the kernels cannot take (a last
    stride that is not 1, a misaligned pointer or stride) copied, as q, k
    and v are. Returns new contiguous tensors of q's, k's and v's shapes
    (with grouped KV heads, dk and dv sum over the query heads of their
    group), computed on the current stream, or writes ``grads``, tensors
    of those shapes and q's dtype given by the caller (PyTorch's SDPA
    dispatch, :mod:`tiled_attn.dispatch`, gives them q's, k's and v's
    layouts, as its meta functions do; the runtime checks their sizes,
    strides and overlaps). ``score_mod``, ``mask_mod`` and their captured
    inputs are the forward's (the runtime runs backward kernels of the same
    functions; the captured inputs get no gradient).
    """
    import torch

    library, views, dtype, mask, scale, window, softcap, keep = checked_call(
        torch, q, k, v, causal, scale, library, enable_gqa, causal_align, window_size, softcap)
    align = library.align_bytes
    out = _operand(torch, "out", out, q, align)
    grad_out = _operand(torch, "grad_out", grad_out, q, align, convert=True)
    lse = _log_sum_exps(torch, lse, tuple(q.shape[:3]), q.device, "[B, H, S_q]")
    functions, keep_functions = NO_FUNCTIONS, None
    if score_mod is not None or mask_mod is not None:
        # The forward's functions, as sdpa_eager passed them (a float
        # attn_mask's bias of q's 16-bit dtype included).
        if score_mod in _BIAS_16BIT_FUNCTIONS and len(score_mod_args) == 1:
            score_mod, score_mod_args = bias_16bit_or_float32(
                torch, q, score_mod_args[0], library, None, score_mod)
        functions, keep_functions = function_fields(torch, library, q.device, score_mod,
                                                    tuple(score_mod_args), mask_mod,
                                                    tuple(mask_mod_args))
    fields = args_fields(views, _view(out), dtype, mask, scale, 0, window, softcap,
                         lse.data_ptr(), _VARLEN_OFF, functions)
    grads = _gradients(torch, grads, q, k, v, zeroed=False)
    _launch(torch, library, q.device, fields, _view(grad_out), tuple(map(_view, grads)))
    del keep, keep_functions  # alive through the launch
    return grads  # type: ignore[return-value]


def sdpa_varlen_backward_eager(
    grad_out: "torch.Tensor",
    q: "torch.Tensor",
    k: "torch.Tensor",
    v: "torch.Tensor",
    out: "torch.Tensor",
    lse: "torch.Tensor",
    cu_seqlens_q: "torch.Tensor",
    cu_seqlens_k: "torch.Tensor",
    max_seqlen_q: int,
    max_seqlen_k: int,
    causal: bool = False,
    scale: Optional[float] = None,
    library: LibraryArg = None,
    enable_gqa: bool = False,
    causal_align: str = "top_left",
    window_size: Sequence[int] = (-1, -1),
    softcap: float = 0.0,
    grads: Optional[Grads] = None,
) -> Grads:
    """:func:`sdpa_backward_eager` of a variable-length call
    (:func:`tiled_attn.sdpa_varlen` on packed ``[total, H, D]`` tensors; lse
    ``[H, total_q]``); the CUDA implementation of
    ``tiled_attn::sdpa_varlen_backward``.

    The gradients are zeroed first: the kernels write the rows of the
    sequences only, and rows past ``cu_seqlens_q[-1]`` (dq) and
    ``cu_seqlens_k[-1]`` (dk, dv), which no sequence reads, get 0, their
    true gradient, rather than whatever the allocator held (``grads`` given
    by the caller are zeroed too).
    """
    import torch

    library, views, options, keep = checked_varlen_call(
        torch, q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, causal, scale,
        library, enable_gqa, causal_align, window_size, softcap)
    align = library.align_bytes
    out = _operand(torch, "out", out, q, align)
    grad_out = _operand(torch, "grad_out", grad_out, q, align, convert=True)
    lse = _log_sum_exps(torch, lse, (q.shape[1], q.shape[0]), q.device, "[H, total_q]")
    fields = varlen_fields(views, packed_view(out), options, 0, lse.data_ptr())
    grads = _gradients(torch, grads, q, k, v, zeroed=True)
    _launch(torch, library, q.device, fields, packed_view(grad_out),
            tuple(map(packed_view, grads)))
    del keep
    return grads  # type: ignore[return-value]


def _gradients(torch: Any, grads: Optional[Grads], q: Any, k: Any, v: Any,
               zeroed: bool) -> Grads:
    """dq, dk and dv: ``grads`` checked (tensors of q's, k's and v's shapes,
    in q's dtype and on its device) or new contiguous ones; ``zeroed``
    fills them with 0 first."""
    if grads is None:
        make = torch.zeros if zeroed else torch.empty
        return tuple(make(t.shape, dtype=q.dtype, device=q.device)  # type: ignore[return-value]
                     for t in (q, k, v))
    for name, grad, t in zip(("dq", "dk", "dv"), grads, (q, k, v)):
        check_tensor(name, grad)
        if tuple(grad.shape) != tuple(t.shape) or grad.dtype != q.dtype \
                or grad.device != q.device:
            raise ValueError(f"{name} must be a {q.dtype} tensor of shape {tuple(t.shape)} on "
                             f"{q.device}, got {grad.dtype} of shape {tuple(grad.shape)} on "
                             f"{grad.device}")
        if zeroed:
            grad.zero_()
    return tuple(grads)  # type: ignore[return-value]


def _operand(torch: Any, name: str, t: Any, q: Any, align: int,
             convert: bool = False) -> Any:
    """``out`` or ``grad_out`` as the kernels take it: a tensor of q's device
    and rank (the runtime checks its sizes against o's), of q's dtype
    (``grad_out``, with ``convert``, converted to it; ``out`` refused
    otherwise), copied to a contiguous tensor where its layout is not one
    the kernels take (:func:`~tiled_attn.validation.copy_reason`)."""
    check_tensor(name, t)
    if t.device != q.device or len(t.shape) != len(q.shape):
        raise ValueError(f"{name} must be a {len(q.shape)}-d tensor on q's device ({q.device}), "
                         f"got shape {tuple(t.shape)} on {t.device}")
    if t.dtype != q.dtype:
        if not convert:
            raise TypeError(f"{name} has dtype {t.dtype} but q has {q.dtype}; the forward "
                            "call's output has q's dtype")
        t = t.to(q.dtype)
    if copy_reason(t, align):
        t = t.clone(memory_format=torch.contiguous_format)
    return t


def _log_sum_exps(torch: Any, lse: Any, shape: Tuple[int, ...], device: Any,
                  layout: str) -> Any:
    """The forward call's log-sum-exps, checked: the runtime gets only their
    address and reads them as a contiguous float32 tensor of ``shape``
    (``layout`` names it), which only this side can check (a non-contiguous
    one is copied)."""
    check_tensor("lse", lse)
    if str(lse.dtype) != "torch.float32" or tuple(lse.shape) != tuple(shape) \
            or lse.device != device:
        raise ValueError(f"lse must be the forward call's log-sum-exps, a float32 {layout} = "
                         f"{list(shape)} tensor on {device}, got {lse.dtype} of shape "
                         f"{list(lse.shape)} on {lse.device}")
    step, contiguous = 1, True
    for size, stride in zip(reversed(tuple(lse.shape)), reversed(lse.stride())):
        contiguous = contiguous and (size <= 1 or stride == step)
        step *= size
    return lse if contiguous else lse.clone(memory_format=torch.contiguous_format)


def _view(t: Any) -> Tuple[int, ...]:
    """A ``[B, H, S, D]`` tensor's ta_tensor fields."""
    return (t.data_ptr(), *t.shape, *t.stride())


def _launch(torch: Any, library: Any, device: Any, fields: Sequence[Any],
            grad_out: Sequence[int], grads: Sequence[Sequence[int]]) -> None:
    """Packs ta_sdpa_backward_args (the forward's ``fields``, d_o's view
    ``grad_out``, dq's, dk's and dv's ``grads``) into this thread's buffer,
    sizes the workspace, allocates it and launches on the current stream."""
    deterministic = deterministic_requested(torch)
    args = _thread_args()
    try:
        _ARGS_LAYOUT.pack_into(args.buffer, 0, *fields, *NO_SPLIT)
        _TAIL_LAYOUT.pack_into(args.buffer, _ARGS_LAYOUT.size, *grad_out,
                               *(x for view in grads for x in view), 0, 0,
                               deterministic)
    except struct.error:
        raise ValueError(_unpackable(fields)) from None
    size = library.backward_workspace_size(args.address)
    workspace = None
    if size:
        workspace = torch.empty(size, dtype=torch.uint8, device=device)
        struct.pack_into("=QQ", args.buffer, _WORKSPACE_OFFSET, workspace.data_ptr(), size)
    stream = _current_stream(torch, device.index)
    try:
        library.launch_backward(args.address, device.index, stream)
    except NoKernelError:
        # warn_only: PyTorch's rule for a kernel without a deterministic
        # implementation, a warning and the nondeterministic kernel (the
        # runtime launched nothing: it plans every phase first).
        if not (deterministic and torch.is_deterministic_algorithms_warn_only_enabled()):
            raise
        warnings.warn("tiled_attn's attention backward has no deterministic kernel (dq kernel) "
                      "for this call in its library, but you set "
                      "'torch.use_deterministic_algorithms(True, warn_only=True)': running the "
                      "nondeterministic one (dq's parts added by atomics)", stacklevel=4)
        struct.pack_into("=i", args.buffer, _DETERMINISTIC_OFFSET, 0)
        library.launch_backward(args.address, device.index, stream)
    del workspace  # alive through the launch (PyTorch's allocator orders its reuse)


def deterministic_requested(torch: Any) -> int:
    """1 under ``torch.use_deterministic_algorithms(True)``: the runtime's
    deterministic mode (the library's dq kernel writes dq, the same bits
    every run, instead of dQ's atomic additions; where the library has
    none, NoKernelError, or with ``warn_only=True`` a warning and the
    default mode), else 0."""
    enabled = getattr(torch, "are_deterministic_algorithms_enabled", None)
    return int(enabled is not None and enabled())


#: ta_sdpa_backward_args after its ta_sdpa_args: d_o, dq, dk, dv (each a
#: ta_tensor: data, sizes[4], strides[4]), the workspace's address and
#: bytes, the deterministic flag (and the struct's padding).
_TAIL_LAYOUT = struct.Struct("=" + "Q4q4q" * 4 + "QQi4x")
assert _ARGS_LAYOUT.size + _TAIL_LAYOUT.size == ctypes.sizeof(TaSdpaBackwardArgs)
assert TaSdpaBackwardArgs.d_o.offset == ctypes.sizeof(TaSdpaArgs) == _ARGS_LAYOUT.size
_WORKSPACE_OFFSET = TaSdpaBackwardArgs.workspace.offset
_DETERMINISTIC_OFFSET = TaSdpaBackwardArgs.deterministic.offset
_THREAD = threading.local()


def _thread_args() -> Any:
    """This thread's ta_sdpa_backward_args buffer."""
    args = getattr(_THREAD, "args", None)
    if args is None:
        buffer = ctypes.create_string_buffer(ctypes.sizeof(TaSdpaBackwardArgs))
        args = _THREAD.args = SimpleNamespace(buffer=buffer, address=ctypes.addressof(buffer))
    return args

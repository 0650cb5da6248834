"""The torch-level checks of :func:`tiled_attn.sdpa` and :func:`tiled_attn.sdpa_varlen`.

What only the Python side can tell: that each input is a tensor, on a CUDA
device (the same one), of a dtype the kernels take, of rank 4 (packed
sequences: rank 3), that ``causal`` and ``scale`` have the right Python
types, that ``causal_align``, ``window_size`` and ``softcap`` are ones the
runtime takes, and for packed sequences that the offsets are int32 vectors
of one length on q's device and the longest lengths ints >= 1, and that a
scale is a value float32 can hold (:func:`check_scale`); and the arguments
of PyTorch's and FlashAttention's interfaces that the package refuses or
aliases (:func:`check_attention_args`, :func:`check_flash_args`). Everything about
the sizes (shapes that disagree, a head dim the library lacks, an empty key
sequence, strides the kernels cannot take, an output that shares memory
with an input, a scale that is not positive) is checked once, by the C++
runtime, whose errors become ValueError.

The functions read only ``.device`` (``.type``, ``.index``), ``.dtype``
(through ``str()``), ``.shape``, ``.stride()``, ``.data_ptr()`` and
``.requires_grad`` (and :func:`check_no_grad` calls ``is_grad_enabled()`` of
the torch module it is given), so they work on torch tensors and on the unit
tests' stand-ins alike. Bad arguments raise :class:`TypeError` (wrong kind of
value) or :class:`ValueError` (right kind, wrong value); each message names
the argument and the value. A gradient asked of what has no backward pass
(block masks, a function's captured inputs, a KV cache, the log-sum-exps)
raises :class:`~tiled_attn.errors.NoBackwardError` (:func:`needs_backward`,
:func:`check_no_grad`, :func:`check_no_lse_grad`).
"""

from __future__ import annotations

import math
import numbers
from typing import Any, Optional, Tuple

from .errors import NoBackwardError, NotSupportedError

__all__ = ["CAUSAL_ALIGNS", "TORCH_DTYPES", "attn_mask_as_function", "check_attention_args",
           "check_dropout",
           "check_backward", "check_flash_args", "check_gqa", "check_inputs", "check_no_grad",
           "check_no_lse_grad",
           "check_return_lse", "check_scale", "check_softcap", "check_tensor", "check_varlen",
           "check_window", "copy_reason", "needs_backward"]

#: torch dtype (as ``str(dtype)``) -> the manifest's dtype name.
TORCH_DTYPES = {"torch.float16": "f16", "torch.bfloat16": "bf16"}


def bias_function(dtype: str) -> str:
    """The library's score function of a bias in the kernel's 16-bit dtype
    ("f16" or "bf16"): kernels/functions/bias_{f16,bf16}.mlir."""
    return "bias_" + dtype
#: Bytes per element of every dtype the kernels take.
ITEMSIZE = 2
#: The alignments of a causal mask and a window.
CAUSAL_ALIGNS = ("top_left", "bottom_right")
#: The largest window bound the runtime takes (an int64); any larger one is
#: no bound too (a window wider than the sequences bounds nothing).
_MAX_BOUND = 2**63 - 1


def check_tensor(name: str, t: Any) -> None:
    """Check that ``t`` looks like a tensor (shape, device, stride); TypeError if not."""
    if not (hasattr(t, "shape") and hasattr(t, "device") and hasattr(t, "stride")):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")


def check_inputs(q: Any, k: Any, v: Any, causal: Any = False, scale: Any = None, *,
                 function: str = "tiled_attn.sdpa", layout: str = "[B, H, S, D]") -> str:
    """Check what the runtime cannot; return the inputs' dtype name ("f16"/"bf16").

    ``function`` names the caller in the messages; ``layout`` is the inputs'
    (its rank is theirs): ``"[total, H, D]"`` for packed sequences.
    """
    for name, t in (("q", q), ("k", k), ("v", v)):
        check_tensor(name, t)
    device = q.device
    if device.type != "cuda":
        raise ValueError(f"q is on {device}; {function} needs CUDA tensors")
    for name, t in (("k", k), ("v", v)):
        if t.device != device:
            if t.device.type != "cuda":
                raise ValueError(f"{name} is on {t.device}; {function} needs CUDA tensors")
            raise ValueError(f"{name} is on {t.device} but q is on {device}; "
                             "q, k and v must be on the same device")
    dtype = TORCH_DTYPES.get(str(q.dtype))
    if dtype is None:
        raise TypeError(f"q has dtype {q.dtype}; {function} supports "
                        f"{' and '.join(TORCH_DTYPES)}")
    for name, t in (("k", k), ("v", v)):
        if t.dtype != q.dtype:
            if str(t.dtype) not in TORCH_DTYPES:
                raise TypeError(f"{name} has dtype {t.dtype}; {function} supports "
                                f"{' and '.join(TORCH_DTYPES)}")
            raise TypeError(f"{name} has dtype {t.dtype} but q has {q.dtype}; "
                            "q, k and v must have the same dtype")
    rank = layout.count(",") + 1
    for name, t in (("q", q), ("k", k), ("v", v)):
        if len(t.shape) != rank:
            raise ValueError(f"{name} must have rank {rank} {layout}, got rank "
                             f"{len(t.shape)} with shape {tuple(t.shape)}")
    if causal is not True and causal is not False:
        raise TypeError(f"causal must be a bool, got {type(causal).__name__} {causal!r}")
    if scale is not None and (isinstance(scale, bool) or not isinstance(scale, numbers.Real)):
        raise TypeError(f"scale must be a float or None, got {type(scale).__name__} {scale!r}")
    return dtype


def check_no_grad(torch: Any, q: Any, k: Any, v: Any, function: str = "tiled_attn.sdpa") -> None:
    """NoBackwardError when grad mode is on and q, k or v requires grad.

    For the calls that have no backward pass: an output that could not
    track gradients would, in a model whose other paths carry them, drop
    attention's without a word (or ``backward()`` would fail later with
    PyTorch's "does not require grad"). So a call that would need one is
    refused, naming the inputs; under ``torch.no_grad()`` or
    ``torch.inference_mode()``, or when no input requires grad, this does
    nothing.

    Its caller: the Autograd kernel of the KV-cache ops
    (:mod:`tiled_attn.ops`: decoding is forward only).
    :func:`tiled_attn.sdpa`, :func:`tiled_attn.sdpa_varlen` and their ops
    are differentiable (issue 39) and ask :func:`needs_backward` instead. ``torch`` is the torch module (its ``is_grad_enabled``);
    anything without a ``requires_grad`` attribute counts as not requiring
    grad (the type checks come after, in :func:`check_inputs`).
    """
    if not (getattr(q, "requires_grad", False) or getattr(k, "requires_grad", False)
            or getattr(v, "requires_grad", False)) or not torch.is_grad_enabled():
        return
    names = [name for name, t in (("q", q), ("k", k), ("v", v))
             if getattr(t, "requires_grad", False)]
    raise NoBackwardError(
        f"{function}: {_subject(names)} grad, but tiled_attn has no backward pass yet (its kernels "
        "are forward only), so gradients through attention would be dropped without a word; "
        "call it under torch.no_grad() or torch.inference_mode() (model.eval() does not turn "
        "gradients off), or pass tensors that do not require grad (.detach())")


def needs_backward(torch: Any, function: str, q: Any, k: Any, v: Any, score_mod: Any = None,
                   score_mod_args: Any = (), mask_mod: Any = None, mask_mod_args: Any = (),
                   block_mask: Any = None, attn_mask: Any = None) -> bool:
    """Whether a call needs the backward pass: grad mode is on and q, k, v or
    a captured input of its functions requires grad. NoBackwardError if it
    does and the call has what the backward kernels do not compute.

    The backward kernels compute attention with a causal mask, a sliding
    window, a softcap, grouped KV heads and score and mask functions
    (``score_mod``, ``mask_mod``, PyTorch's ``attn_mask`` tensors, which run
    as the library's ``mask`` or ``bias`` function), over packed sequences
    too; not block masks, and the functions' captured inputs get no
    gradient. A call with a block mask, or whose captured inputs require
    grad, is refused here, at the forward call, naming what has no
    backward (rather than at ``backward()``, after the forward ran, or with
    a gradient that leaves a part out). Under ``torch.no_grad()`` or
    ``torch.inference_mode()``, or when nothing requires grad, it returns
    False and refuses nothing.

    ``function`` names the caller in the message; ``attn_mask`` is the name
    of the function an ``attn_mask`` tensor became (:func:`attn_mask_as_function`),
    None without one; ``score_mod_args`` and ``mask_mod_args`` are sequences
    (or None) whose tensors may require grad (a float ``attn_mask`` that is
    a learned bias); ``block_mask`` None, or a block mask or its lists (an
    empty tuple or list: none). Anything without a
    ``requires_grad`` attribute counts as not requiring grad (the type
    checks come after).
    """
    if not torch.is_grad_enabled():
        return False
    return check_backward(function, q, k, v, score_mod, score_mod_args, mask_mod,
                          mask_mod_args, block_mask, attn_mask)


def check_backward(function: str, q: Any, k: Any, v: Any, score_mod: Any = None,
                   score_mod_args: Any = (), mask_mod: Any = None, mask_mod_args: Any = (),
                   block_mask: Any = None, attn_mask: Any = None) -> bool:
    """:func:`needs_backward` without the grad mode (on, or a gradient is
    known to be needed: the setup of an autograd formula, which runs with
    grad mode off): whether q, k, v or a captured input requires grad, and
    NoBackwardError if one does and the call has what the backward does not
    compute."""
    # (Captured inputs of another kind than a tuple or list are
    # function_fields's to refuse, after this.)
    lists = tuple(a if isinstance(a, (tuple, list)) else () for a in (score_mod_args,
                                                                       mask_mod_args))
    if not (getattr(q, "requires_grad", False) or getattr(k, "requires_grad", False)
            or getattr(v, "requires_grad", False) or lists[0] or lists[1]):
        return False  # (the usual case, without building the names)
    named = [("q", q), ("k", k), ("v", v)]
    for name, owner, captures in zip(("score_mod_args", "mask_mod_args"),
                                     (score_mod, mask_mod), lists):
        # (An attn_mask tensor is its function's one captured input.)
        named += [("attn_mask" if attn_mask is not None and owner == attn_mask
                   else f"{name}[{i}]", t) for i, t in enumerate(captures)]
    names = [name for name, t in named if getattr(t, "requires_grad", False)]
    if not names:
        return False
    # Score and mask functions have a backward (the kernels of the same
    # functions); their captured inputs get no gradient, and block masks
    # have none yet.
    captured = [name for name in names if name not in ("q", "k", "v")]
    if captured:
        raise NoBackwardError(
            f"{function}: {_subject(captured)} grad, but tiled_attn's backward pass gives the "
            "captured inputs of score and mask functions no gradient (a learned bias or "
            "attn_mask is not trained through it); pass them detached (.detach()) to train q, "
            "k and v through the call, or use another attention implementation for that")
    if block_mask is not None and (not isinstance(block_mask, (tuple, list)) or block_mask):
        raise NoBackwardError(
            f"{function}: {_subject(names)} grad, but tiled_attn's backward pass does not "
            "compute a block_mask yet (its backward kernels take masks, windows, softcap, "
            "grouped heads and score and mask functions), so gradients through this call "
            "cannot be computed; call it under torch.no_grad() or torch.inference_mode(), or "
            "pass tensors that do not require grad (.detach())")
    return True


def check_no_lse_grad(grad_lse: Any, function: str) -> None:
    """NoBackwardError when the log-sum-exps' gradient ``grad_lse`` is given.

    The backward kernels compute the gradients of q, k and v through the
    output only: a loss that also depends on the log-sum-exps (of
    ``return_lse``; ring attention's or split-KV's merge, a z-loss) would
    need ``dS += P * grad_lse`` in the main kernel, which it does not have.
    The ops' autograd formula (:mod:`tiled_attn.ops`) gets None for an lse
    that no loss uses (it does not materialize zeros), and a tensor for one
    that is used: that is refused here rather than left out of the
    gradients. (A zero tensor counts as used: telling it from a nonzero one
    would need a device synchronization.)
    """
    if grad_lse is not None:
        raise NoBackwardError(
            f"{function}: the loss depends on the log-sum-exps (return_lse), whose gradient "
            "tiled_attn's backward pass does not compute yet (only the output's); use "
            "lse.detach() where the loss must not depend on it, or compute the attention "
            "whose lse you need with another implementation")


def _subject(names: Any) -> str:
    """"q requires", "q and v require", "q, k and v require"."""
    return (f"{names[0]} requires" if len(names) == 1
            else f"{', '.join(names[:-1])} and {names[-1]} require")


def check_attention_args(attn_mask: Any, dropout_p: Any, is_causal: Any, causal: Any) -> Any:
    """Check :func:`tiled_attn.sdpa`'s arguments of PyTorch's that it refuses
    or aliases; return the causal flag (``causal`` when given, else
    ``is_causal``; its type is :func:`check_inputs`'s to check).

    The slow path of sdpa's argument mapping, taken only when ``attn_mask``
    is not None, ``dropout_p`` is not 0, ``is_causal`` is not a bool or both
    ``is_causal=True`` and ``causal`` are given. ``attn_mask`` must be None
    or a tensor (:func:`attn_mask_as_function` checks and maps it); a bool there
    is a caller of the old signature, whose 4th positional argument was
    ``causal`` (TypeError, never a silent change of meaning).
    """
    if attn_mask is not None:
        if attn_mask is True or attn_mask is False:
            raise TypeError(
                f"attn_mask is the bool {attn_mask!r}: tiled_attn.sdpa's 4th positional argument "
                "is attn_mask now (PyTorch's order: query, key, value, attn_mask, dropout_p, "
                "is_causal, scale, enable_gqa), a tensor; "
                f"for {'a causal mask' if attn_mask else 'no mask'} pass "
                f"is_causal={attn_mask!r}")
        if not (hasattr(attn_mask, "shape") and hasattr(attn_mask, "dtype")):
            raise TypeError(f"attn_mask must be None or a tensor, got "
                            f"{type(attn_mask).__name__} {_shown(attn_mask)}")
    check_dropout(dropout_p, "tiled_attn.sdpa")
    if is_causal is not True and is_causal is not False:
        raise TypeError(f"is_causal must be a bool, got {type(is_causal).__name__} "
                        f"{_shown(is_causal)}")
    if causal is None:
        return is_causal
    if causal is not True and causal is not False:
        raise TypeError(f"causal (an alias of is_causal) must be a bool or None, got "
                        f"{type(causal).__name__} {_shown(causal)}")
    if is_causal and not causal:
        raise ValueError("is_causal=True and causal=False disagree; causal is an alias of "
                         "is_causal: pass one of them")
    return causal


def attn_mask_as_function(torch: Any, attn_mask: Any, q: Any, k: Any, score_mod: Any,
                          mask_mod: Any, bias_16bit: bool = False) -> Tuple[str, Any]:
    """PyTorch's ``attn_mask`` as a function of the library and its captured
    input, a ``[B, H, S_q, S_k]`` view whose broadcast dimensions have stride
    0 (no copy): a bool mask as the ``mask`` mask function
    (kernels/functions/mask.mlir, one byte per element, True: the query sees
    the key), a float one as the ``bias`` score function
    (kernels/functions/bias.mlir, float32: no copy for a float32 mask, a
    float32 copy of another dtype's), or with ``bias_16bit`` a mask of q's
    16-bit dtype as it is, as ``bias_bf16`` or ``bias_f16``
    (kernels/functions/bias_*.mlir; sdpa passes ``bias_16bit`` always, and
    sdpa_eager runs such a view on a float32 copy where the library has no
    16-bit kernel for the call: sdpa.bias_16bit_or_float32). Returns
    ``("mask", "bias", "bias_bf16" or "bias_f16", view)``.
    Raises ValueError naming the problem: a mask on another device, of
    another dtype than bool or floating point, that does not broadcast to
    ``[B, H, S_q, S_k]``, or given with a function of the same kind
    (``mask_mod`` for a bool mask, ``score_mod`` for a float one)."""
    b, h, s_q, s_k = q.shape[0], q.shape[1], q.shape[2], k.shape[2]
    if attn_mask.device != q.device:
        raise ValueError(f"attn_mask must be on {q.device} (with q), got {attn_mask.device}")
    if attn_mask.dtype != torch.bool and not attn_mask.dtype.is_floating_point:
        raise ValueError(f"attn_mask must be a bool or floating-point tensor (True or an "
                         f"additive value where a query sees a key), got {attn_mask.dtype}")
    if attn_mask.dtype == torch.bool and mask_mod is not None:
        raise ValueError("a bool attn_mask and mask_mod together: the kernels take one mask "
                         "function, and a bool attn_mask is one (mask); combine the two in "
                         "your mask function instead")
    if attn_mask.dtype != torch.bool and score_mod is not None:
        raise ValueError("a float attn_mask and score_mod together: the kernels take one score "
                         "function, and a float attn_mask is one (bias); add the mask in "
                         "your score function instead")
    if attn_mask.dim() > 4:
        raise ValueError(f"attn_mask must broadcast to [B, H, S_q, S_k] = "
                         f"{[b, h, s_q, s_k]}, got shape {tuple(attn_mask.shape)}")
    shape = (1,) * (4 - attn_mask.dim()) + tuple(attn_mask.shape)
    if any(m not in (1, t) for m, t in zip(shape, (b, h, s_q, s_k))):
        raise ValueError(f"attn_mask must broadcast to [B, H, S_q, S_k] = "
                         f"{[b, h, s_q, s_k]}, got shape {tuple(attn_mask.shape)}")
    mask = attn_mask.reshape(shape)
    if mask.dtype == torch.bool:
        return "mask", aligned_rows(torch, mask).expand(b, h, s_q, s_k)
    if bias_16bit and mask.dtype == q.dtype and str(mask.dtype) in TORCH_DTYPES:
        return (bias_function(TORCH_DTYPES[str(mask.dtype)]),
                aligned_rows(torch, mask).expand(b, h, s_q, s_k))
    if mask.dtype != torch.float32:
        mask = mask.to(torch.float32)
    return "bias", aligned_rows(torch, mask).expand(b, h, s_q, s_k)


def aligned_rows(torch: Any, t: Any) -> Any:
    """``t`` (a float32 or 16-bit bias, a bool mask, any view a kernel copies
    by 16-byte blocks) with a last stride of 1 and a
    16-byte aligned data pointer and strides (of the dimensions longer than
    1), as kernels that copy a bias or mask in 16-byte blocks need (their
    manifest's ``align_bytes``): ``t`` itself when it is so, else a copy
    whose rows are padded to 16 bytes (4 floats, 16 bools; PyTorch pads its
    memory-efficient kernel's bias the same way). Under torch.compile the data pointer is not known when
    tracing: the strides decide (a view 4 bytes into its storage is then
    refused by the runtime, naming the padding)."""
    # elements in 16 bytes
    per16 = {torch.float32: 4, torch.int32: 4, torch.float16: 8,
             torch.bfloat16: 8}.get(t.dtype, 16)

    def aligned(x: Any) -> bool:
        strides = x.stride()
        return (strides[-1] == 1 and
                (torch.compiler.is_compiling() or x.data_ptr() % 16 == 0) and
                all(st % per16 == 0 for st, n in zip(strides[:-1], x.shape[:-1]) if n > 1))
    if any(n == 0 for n in t.shape) or aligned(t):
        return t
    s_k = t.shape[-1]
    # (The padding is never read: a copy stops at the row's last element.)
    padded = torch.empty((*t.shape[:-1], (s_k + per16 - 1) // per16 * per16), dtype=t.dtype,
                         device=t.device)
    rows = padded.narrow(-1, 0, s_k)
    rows.copy_(t)
    return rows


def flash_alibi(torch: Any, alibi_slopes: Any, causal: Any, heads: int, device: Any,
                function: str) -> Any:
    """FlashAttention's ``alibi_slopes`` as the captured input of the library's
    ``alibi`` score function: a float32 ``[H]`` tensor on q's device.
    FlashAttention adds ``-slope * |i + S_k - S_q - j|`` to the scaled score;
    under its causal mask (``j <= i + S_k - S_q``) that is ``slope * (j - i)``
    plus a constant per row, which the softmax cancels, so the ``alibi``
    function computes it exactly. Without the causal mask the penalty is
    symmetric, which no kernel computes (NotSupportedError); slopes per batch
    entry (``[B, H]``), another dtype, shape or device raise ValueError."""
    if causal is not True:
        raise NotSupportedError(
            f"alibi_slopes without causal=True: FlashAttention's non-causal ALiBi penalizes "
            f"-slope * |i + S_k - S_q - j| symmetrically, which {function}'s kernels do not "
            "compute (their alibi function is causal ALiBi, slope * (j - i)); pass causal=True, "
            "or tiled_attn.sdpa(score_mod='alibi') for slope * (j - i) without a mask")
    if not hasattr(alibi_slopes, "data_ptr"):
        raise TypeError(f"alibi_slopes must be a tensor, got {type(alibi_slopes).__name__}")
    if alibi_slopes.dtype != torch.float32:
        raise ValueError(f"alibi_slopes must be float32 (FlashAttention's), got "
                         f"{alibi_slopes.dtype}")
    if tuple(alibi_slopes.shape) != (heads,):
        raise ValueError(f"alibi_slopes must have shape ({heads},) (one slope per query head; "
                         f"slopes per batch entry are not supported), got "
                         f"{tuple(alibi_slopes.shape)}")
    if alibi_slopes.device != device:
        raise ValueError(f"alibi_slopes must be on {device} (with q), got "
                         f"{alibi_slopes.device}")
    return alibi_slopes


def check_dropout(dropout_p: Any, function: str) -> None:
    """Check that ``dropout_p`` is 0: the kernels are inference kernels, with no
    dropout (NotSupportedError; TypeError for a value that is not a real number)."""
    if isinstance(dropout_p, bool) or not isinstance(dropout_p, numbers.Real):
        raise TypeError(f"dropout_p must be a float, got {type(dropout_p).__name__} "
                        f"{_shown(dropout_p)}")
    if dropout_p != 0:
        raise NotSupportedError(
            f"dropout_p is {dropout_p!r}, but {function} has no dropout (its kernels are "
            "inference kernels): pass dropout_p=0.0")


def check_flash_args(dropout_p: Any, alibi_slopes: Any, deterministic: Any,
                     return_attn_probs: Any, function: str) -> None:
    """Check the arguments of FlashAttention's that :func:`tiled_attn.flash_attn_func`
    and :func:`tiled_attn.flash_attn_varlen_func` (``function``) accept but do
    not implement: ``dropout_p`` must be 0, ``alibi_slopes`` None for the
    varlen function (flash_attn_func checks its own, :func:`flash_alibi`) and
    ``return_attn_probs`` False
    (NotSupportedError); ``deterministic`` is a bool (True is refused where
    a gradient is needed, by the callers: tiled_attn's backward is not
    deterministic; the forward pass is)."""
    check_dropout(dropout_p, function)
    if alibi_slopes is not None and function.endswith("varlen_func"):
        raise NotSupportedError(
            f"alibi_slopes is not None, but {function} has no ALiBi kernels (variable-length "
            "batches with a score function): pass alibi_slopes=None, or call "
            "tiled_attn.flash_attn_func per sequence")
    if deterministic is not True and deterministic is not False:
        raise TypeError(f"deterministic must be a bool, got {type(deterministic).__name__} "
                        f"{_shown(deterministic)}")
    if return_attn_probs is not False:
        if return_attn_probs is not True:
            raise TypeError(f"return_attn_probs must be a bool, got "
                            f"{type(return_attn_probs).__name__} {_shown(return_attn_probs)}")
        raise NotSupportedError(
            f"return_attn_probs=True is not supported: {function}'s kernels never form the "
            "attention probabilities; for the rows' log-sum-exps (FlashAttention's "
            "softmax_lse) call tiled_attn.sdpa or tiled_attn.sdpa_varlen with return_lse=True")


def check_gqa(enable_gqa: Any, heads: int, kv_heads: Tuple[int, int]) -> None:
    """Check ``enable_gqa`` (a bool) and, without it, that k and v have q's
    ``heads``; the runtime checks that their count divides q's."""
    if enable_gqa is not False and enable_gqa is not True:
        raise TypeError(f"enable_gqa must be a bool, got {type(enable_gqa).__name__} "
                        f"{enable_gqa!r}")
    if not enable_gqa and (kv_heads[0] != heads or kv_heads[1] != heads):
        raise ValueError(f"k and v have {kv_heads[0]} and {kv_heads[1]} heads but q has "
                         f"{heads}; pass enable_gqa=True for grouped KV heads "
                         "(q's head count a multiple of theirs)")


def check_varlen(q: Any, cu_seqlens_q: Any, cu_seqlens_k: Any, max_seqlen_q: Any,
                 max_seqlen_k: Any) -> int:
    """Check the sequences of a packed batch; return their number.

    ``cu_seqlens_q`` and ``cu_seqlens_k`` are FlashAttention's: contiguous
    int32 vectors of ``num_seqs + 1 >= 2`` offsets each, on q's device
    (their values, read by the kernels only, are the caller's to get right:
    0 first, nondecreasing, at most the totals); ``max_seqlen_q`` and
    ``max_seqlen_k`` ints ``>= 1``, the longest query and key sequence (or
    more).
    """
    offsets = (("cu_seqlens_q", cu_seqlens_q), ("cu_seqlens_k", cu_seqlens_k))
    for name, t in offsets:
        check_tensor(name, t)
        if t.device != q.device:
            raise ValueError(f"{name} is on {t.device} but q is on {q.device}; the "
                             "sequences' offsets must be on q's device")
        if str(t.dtype) != "torch.int32":
            raise TypeError(f"{name} has dtype {t.dtype}; tiled_attn.sdpa_varlen needs "
                            "torch.int32 offsets (FlashAttention's cu_seqlens)")
        if len(t.shape) != 1:
            raise ValueError(f"{name} must have rank 1 [num_seqs + 1], got rank "
                             f"{len(t.shape)} with shape {tuple(t.shape)}")
        if t.shape[0] < 2:
            entries = "1 entry" if t.shape[0] == 1 else "no entries"
            raise ValueError(f"{name} has {entries}; it must hold num_seqs + 1 >= 2 offsets, "
                             "0 first")
        if t.stride()[0] != 1:
            raise ValueError(f"{name} must be contiguous, got stride {t.stride()[0]}")
    if cu_seqlens_k.shape[0] != cu_seqlens_q.shape[0]:
        raise ValueError(f"cu_seqlens_k has {cu_seqlens_k.shape[0]} entries but cu_seqlens_q "
                         f"has {cu_seqlens_q.shape[0]}; both hold num_seqs + 1 offsets")
    for name, value in (("max_seqlen_q", max_seqlen_q), ("max_seqlen_k", max_seqlen_k)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise TypeError(f"{name} must be an int, got {type(value).__name__} {value!r}")
        if value < 1 or value >= 2**63:
            raise ValueError(f"{name} must be >= 1 (the longest sequence's length) and "
                             f"below 2**63, got {value}")
    return int(cu_seqlens_q.shape[0]) - 1


def check_window(causal_align: Any, window_size: Any) -> Tuple[bool, int, int]:
    """Check ``causal_align`` and ``window_size``; return (bottom_right, left, right).

    ``causal_align`` is "top_left" or "bottom_right"; ``window_size`` a pair
    of ints ``(left, right)`` (a tuple or a list), each -1 (no bound) or
    ``>= 0``. Bounds past an int64 are returned as the largest int64 (the
    same window: one wider than any sequence).
    """
    if not isinstance(causal_align, str):
        raise TypeError(f"causal_align must be a str, got {type(causal_align).__name__} "
                        f"{causal_align!r}")
    if causal_align not in CAUSAL_ALIGNS:
        raise ValueError(f"causal_align must be 'top_left' or 'bottom_right', got "
                         f"{causal_align!r}")
    if (not isinstance(window_size, (tuple, list)) or len(window_size) != 2
            or any(isinstance(b, bool) or not isinstance(b, numbers.Integral)
                   for b in window_size)):
        raise TypeError(f"window_size must be a pair of ints (left, right), got "
                        f"{type(window_size).__name__} {window_size!r}")
    left, right = (int(b) for b in window_size)
    if left < -1 or right < -1:
        raise ValueError(f"window_size must be (left, right) with each -1 (no bound) or a "
                         f"number of keys >= 0, got {tuple(window_size)!r}")
    return causal_align == "bottom_right", min(left, _MAX_BOUND), min(right, _MAX_BOUND)


def check_return_lse(return_lse: Any) -> bool:
    """Check ``return_lse`` (a bool: also return the rows' log-sum-exps)."""
    if return_lse is not True and return_lse is not False:
        raise TypeError(f"return_lse must be a bool, got {type(return_lse).__name__} "
                        f"{return_lse!r}")
    return return_lse


def check_softcap(softcap: Any) -> float:
    """Check ``softcap`` (FlashAttention's: the scores become
    ``softcap * tanh(scale * q.k / softcap)``; 0 is off); return it as a float.

    A real number (not a bool), finite, ``>= 0``, and one that stays so in
    float32, the runtime's type: neither past float32's largest value nor a
    positive value that rounds to 0 (which would silently turn it off).
    """
    if isinstance(softcap, bool) or not isinstance(softcap, numbers.Real):
        raise TypeError(f"softcap must be a float (0.0: off), got {type(softcap).__name__} "
                        f"{softcap!r}")
    value = float(softcap)
    if not (math.isfinite(value) and value >= 0.0):
        raise ValueError(f"softcap must be a finite number >= 0 (0.0: off), got {softcap!r}")
    # Plain comparisons, not a struct round trip: torch.compile traces this
    # (fullgraph), and Dynamo cannot trace struct.pack. float32 rounds to
    # inf from its largest value plus half an ulp, and to 0 up to 2^-150.
    overflows = value >= _F32_OVERFLOW
    if overflows or 0.0 < value <= _F32_ZERO:
        raise ValueError(f"softcap must be a float32 value (0.0: off), got {softcap!r}, which "
                         f"{'overflows' if overflows else 'rounds to 0 in'} float32")
    return value


def check_scale(scale: Any) -> float:
    """Check the value of ``scale`` (a real number: :func:`check_inputs` checks its
    type); return it as a float.

    Finite and positive in float32, the runtime's type: neither past float32's
    largest value nor so small that it rounds to 0. (The runtime checks the
    float32 it gets too; these are the values that do not reach it as they are.)
    """
    try:
        value = float(scale)
    except OverflowError:  # An int past a float's range.
        value = math.inf
    shown = _shown(scale)
    if not (math.isfinite(value) and value > 0.0):
        raise ValueError(f"scale must be a finite positive float32 value, got {shown}")
    overflows = value >= _F32_OVERFLOW
    if overflows or value <= _F32_ZERO:
        raise ValueError(f"scale must be a finite positive float32 value, got {shown}, which "
                         f"{'overflows' if overflows else 'rounds to 0 in'} float32")
    return value


def _shown(value: Any) -> str:
    """``repr(value)``, shortened to 40 characters (a huge int's is long, or
    past the digits Python converts)."""
    try:
        text = repr(value)
    except ValueError:
        return f"an int of {value.bit_length()} bits"
    return text if len(text) <= 40 else f"{text[:37]}..."


_F32_OVERFLOW = (2.0 - 2.0 ** -24) * 2.0 ** 127  # float32 max + half an ulp
_F32_ZERO = 2.0 ** -150  # half the smallest float32 subnormal


def copy_reason(t: Any, align_bytes: int) -> Optional[str]:
    """Why ``t`` must be copied to a fresh contiguous tensor, or None.

    The kernels take any strides, in elements, with a unit last dimension.
    A tensor whose last-dimension stride is not 1 is copied; so is one whose
    data pointer, or whose stride along a dimension longer than 1, is not a
    multiple of ``align_bytes`` bytes (the kernels load rows with vector
    loads of that width).
    """
    strides = t.stride()
    if strides[-1] != 1:
        return f"its last-dimension stride is {strides[-1]}, not 1"
    pointer = t.data_ptr()
    if pointer % align_bytes:
        return f"its data pointer {pointer:#x} is not {align_bytes}-byte aligned"
    shape = t.shape
    for dim in range(len(shape) - 1):
        if shape[dim] > 1 and (strides[dim] * ITEMSIZE) % align_bytes:
            return (f"its stride along dimension {dim} ({strides[dim]} elements) is not a "
                    f"multiple of {align_bytes} bytes")
    return None

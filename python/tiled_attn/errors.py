"""The exceptions of tiled_attn's own making (not the caller's bad arguments)."""

from __future__ import annotations

__all__ = ["NoBackwardError", "NoKernelError", "NotSupportedError", "TiledAttnError"]


class TiledAttnError(RuntimeError):
    """No usable kernel, a missing or malformed kernel library, or a CUDA driver error.

    Bad arguments to :func:`tiled_attn.sdpa` raise :class:`ValueError` or
    :class:`TypeError` instead; inputs that need a gradient,
    :class:`NoBackwardError`; a feature of PyTorch's or FlashAttention's
    interface that tiled_attn lacks, :class:`NotSupportedError`.
    """


class NoBackwardError(TiledAttnError, NotImplementedError):
    """A gradient was asked of what tiled_attn has no backward pass for.

    Raised at the call by :func:`tiled_attn.sdpa` and the ``tiled_attn::``
    ops when grad mode is on, an input requires grad and the call has score
    or mask functions or a block mask
    (:func:`tiled_attn.validation.needs_backward`); by the KV-cache ops when
    grad mode is on and q, k or v requires grad
    (:func:`tiled_attn.validation.check_no_grad`); and at
    ``backward()`` for a loss that depends on the log-sum-exps
    (:func:`tiled_attn.validation.check_no_lse_grad`) or a second
    derivative. A :class:`TiledAttnError` (a missing kernel: the backward
    one) and a :class:`NotImplementedError` (what the transformers
    integration raised for training before).
    """


class NotSupportedError(TiledAttnError, NotImplementedError):
    """An argument of PyTorch's or FlashAttention's interface that tiled_attn
    takes the place of but does not implement (yet).

    Raised by :func:`tiled_attn.sdpa` for ``attn_mask`` tensors (issue 37) and
    ``dropout_p != 0`` (the kernels are inference kernels, with no dropout),
    and by :func:`tiled_attn.flash_attn_func` and
    :func:`tiled_attn.flash_attn_varlen_func` for those and for
    ``alibi_slopes`` (issue 37) and ``return_attn_probs=True``. A
    :class:`TiledAttnError` (no kernel computes it) and a
    :class:`NotImplementedError`, which callers that fall back to another
    implementation for what a backend lacks catch, as for
    :class:`NoBackwardError`.
    """


class NoKernelError(TiledAttnError, ValueError):
    """The kernel library has no kernel for this call: its dtype, head dims,
    mask, flags, score or mask function, block mask and GPU (the runtime's
    TA_ERROR_NO_KERNEL, whose message lists what the library has), or a
    function name no kernel of the library has. A :class:`TiledAttnError`
    and a :class:`ValueError` (what a missing function raised before), so
    that a caller can fall back to another implementation by type, not by
    the message's text.
    """

"""The exceptions of tiled_attn's own making (not the caller's bad arguments)."""

from __future__ import annotations

__all__ = ["NoBackwardError", "TiledAttnError"]


class TiledAttnError(RuntimeError):
    """No usable kernel, a missing or malformed kernel library, or a CUDA driver error.

    Bad arguments to :func:`tiled_attn.sdpa` raise :class:`ValueError` or
    :class:`TypeError` instead; inputs that need a gradient,
    :class:`NoBackwardError`.
    """


class NoBackwardError(TiledAttnError, NotImplementedError):
    """A gradient was asked of attention, and tiled_attn has no backward pass yet.

    Raised by :func:`tiled_attn.sdpa`, :func:`tiled_attn.sdpa_varlen`, the
    ``tiled_attn::`` ops and the transformers integration when grad mode is on
    and q, k or v requires grad (:func:`tiled_attn.validation.check_no_grad`).
    A :class:`TiledAttnError` (a missing kernel: the backward one) and a
    :class:`NotImplementedError` (what the transformers integration raised for
    training before).
    """

"""The exception raised when the runtime, not the caller's input, is at fault."""

from __future__ import annotations

__all__ = ["TiledAttnError"]


class TiledAttnError(RuntimeError):
    """No usable kernel, a missing or malformed kernel library, or a CUDA driver error.

    Bad arguments to :func:`tiled_attn.sdpa` raise :class:`ValueError` or
    :class:`TypeError` instead.
    """

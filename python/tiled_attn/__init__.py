"""tiled-attn's PyTorch runtime: attention kernels from a prebuilt library.

    >>> from tiled_attn import flash_attn_func, sdpa, sdpa_varlen
    >>> out = sdpa(q, k, v, is_causal=True)   # q, k, v: [B, H, S, D] fp16/bf16 CUDA
    >>> out = flash_attn_func(q, k, v, causal=True)   # [B, S, H, D], bottom-right causal
    >>> out = sdpa_varlen(q, k, v, cu_seqlens_q, cu_seqlens_k, max_q, max_k)  # packed [T, H, D]

Under it is the C++ runtime (``libtiled_attn_runtime.so``, through ctypes):
it needs the CUDA driver and torch, not MLIR nor a compiler. ``import
tiled_attn.ops`` registers the ``torch.library`` ops ``tiled_attn::sdpa``
and ``tiled_attn::sdpa_varlen`` (``tiled_attn.sdpa`` and
``tiled_attn.sdpa_varlen`` do so themselves under ``torch.compile``).
They are differentiable (``backward()`` runs the library's backward
kernels); what has no backward pass (score and mask functions, block masks,
KV caches, the log-sum-exps) raises :class:`NoBackwardError`.
``tiled_attn.install()`` makes the kernels PyTorch's flash attention, so
that ``F.scaled_dot_product_attention`` runs them (:mod:`tiled_attn.dispatch`).
"""

from .block_mask import BlockMask, create_block_mask
from .errors import NoBackwardError, NoKernelError, NotSupportedError, TiledAttnError
from .flash import flash_attn_func, flash_attn_varlen_func
from .kvcache import sdpa_varlen_with_kvcache, sdpa_with_kvcache
from .runtime import KernelLibrary, default_library
from .sdpa import sdpa
from .varlen import sdpa_varlen



def install(**options: object) -> None:
    """Makes tiled-attn's kernels PyTorch's flash attention, so that
    ``F.scaled_dot_product_attention`` (forward and backward) runs them where
    they take the call and PyTorch's kernels elsewhere (needs torch 2.11+;
    :func:`tiled_attn.dispatch.install`, whose keywords ``options`` are)."""
    from .dispatch import install as install_dispatch

    install_dispatch(**options)  # type: ignore[arg-type]


def uninstall() -> None:
    """Undoes :func:`install` (:func:`tiled_attn.dispatch.uninstall`)."""
    from .dispatch import uninstall as uninstall_dispatch

    uninstall_dispatch()


def installed(**options: object):  # type: ignore[no-untyped-def]
    """:func:`install` for a ``with`` block (:func:`tiled_attn.dispatch.installed`)."""
    from .dispatch import installed as installed_dispatch

    return installed_dispatch(**options)


__all__ = ["BlockMask", "KernelLibrary", "NoBackwardError", "NoKernelError", "NotSupportedError", "TiledAttnError",
           "create_block_mask", "default_library", "flash_attn_func", "flash_attn_varlen_func", "install", "installed", "sdpa",
           "sdpa_varlen",
           "sdpa_varlen_with_kvcache", "sdpa_with_kvcache", "uninstall"]
__version__ = "0.2.0"

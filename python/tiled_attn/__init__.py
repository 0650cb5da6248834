"""tiled-attn's PyTorch runtime: attention kernels from a prebuilt library.

    >>> from tiled_attn import sdpa
    >>> out = sdpa(q, k, v, causal=True)   # q, k, v: [B, H, S, D] fp16/bf16 CUDA

Under it is the C++ runtime (``libtiled_attn_runtime.so``, through ctypes):
it needs the CUDA driver and torch, not MLIR nor a compiler. ``import
tiled_attn.ops`` registers the ``torch.library`` op ``tiled_attn::sdpa``
(``tiled_attn.sdpa`` does so itself under ``torch.compile``).
"""

from .errors import TiledAttnError
from .runtime import KernelLibrary, default_library
from .sdpa import sdpa

__all__ = ["KernelLibrary", "TiledAttnError", "default_library", "sdpa"]
__version__ = "0.2.0"

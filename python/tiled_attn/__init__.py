"""tiled-attn's PyTorch runtime: attention kernels from a prebuilt library.

    >>> from tiled_attn import sdpa
    >>> out = sdpa(q, k, v, causal=True)   # q, k, v: [B, H, S, D] fp16/bf16 CUDA

The runtime needs the CUDA driver and torch, not MLIR nor a compiler. See
README.md for the kernel library's manifest and the errors raised.
"""

from .errors import TiledAttnError
from .manifest import KernelLibrary
from .sdpa import sdpa

__all__ = ["KernelLibrary", "TiledAttnError", "sdpa"]
__version__ = "0.1.0"

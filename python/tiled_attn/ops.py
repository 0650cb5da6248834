"""``tiled_attn::sdpa``: :func:`tiled_attn.sdpa` as a ``torch.library`` custom op.

Importing this module registers the op (it needs torch)::

    sdpa(Tensor q, Tensor k, Tensor v, bool causal=False, float? scale=None,
         str? kernel_name=None, str? library_path=None,
         bool enable_gqa=False, str causal_align="top_left",
         int[2] window_size=[-1, -1], float softcap=0.0) -> Tensor
    sdpa_lse(... the same ...) -> (Tensor, Tensor)

``sdpa_lse`` is ``sdpa`` with ``return_lse=True``: it also returns the rows'
log-sum-exps, a ``[B, H, S_q]`` float32 tensor.

- CUDA implementation: :func:`tiled_attn.sdpa.sdpa_eager`, which launches on
  the current stream, synchronizes nothing and allocates only through
  PyTorch's allocator, so it can be captured in a CUDA graph (once its
  module is loaded: run it once before capturing).
- Fake (meta) implementation: a new contiguous tensor of q's shape, dtype
  and device, so that ``torch.compile(fullgraph=True)`` traces through it.

``library_path`` is a kernel library folder (None: the default one);
``kernel_name`` the name of a manifest entry (None: the best fit);
``enable_gqa``, ``causal_align``, ``window_size`` and ``softcap`` are
:func:`tiled_attn.sdpa`'s. The op is forward only.
"""

from __future__ import annotations

from typing import Optional, Sequence, Tuple

import torch

from .sdpa import sdpa_eager

__all__ = ["LSE_SCHEMA", "SCHEMA"]

# The kernel's and the library's arguments are not called `kernel` and
# `library`: Inductor's fallback-kernel path takes keyword arguments of its
# own by those names.
SCHEMA = ("sdpa(Tensor q, Tensor k, Tensor v, bool causal=False, float? scale=None, "
          "str? kernel_name=None, str? library_path=None, bool enable_gqa=False, "
          "str causal_align=\"top_left\", int[2] window_size=[-1, -1], "
          "float softcap=0.0) -> Tensor")

LSE_SCHEMA = ("sdpa_lse(Tensor q, Tensor k, Tensor v, bool causal=False, float? scale=None, "
              "str? kernel_name=None, str? library_path=None, bool enable_gqa=False, "
              "str causal_align=\"top_left\", int[2] window_size=[-1, -1], "
              "float softcap=0.0) -> (Tensor, Tensor)")

_LIB = torch.library.Library("tiled_attn", "DEF")
_LIB.define(SCHEMA)
_LIB.define(LSE_SCHEMA)


def _sdpa_cuda(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    causal: bool = False,
    scale: Optional[float] = None,
    kernel_name: Optional[str] = None,
    library_path: Optional[str] = None,
    enable_gqa: bool = False,
    causal_align: str = "top_left",
    window_size: Sequence[int] = (-1, -1),
    softcap: float = 0.0,
) -> torch.Tensor:
    return sdpa_eager(q, k, v, causal, scale, library_path, kernel_name, None, enable_gqa,
                      causal_align, tuple(window_size), softcap)


def _sdpa_fake(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    causal: bool = False,
    scale: Optional[float] = None,
    kernel_name: Optional[str] = None,
    library_path: Optional[str] = None,
    enable_gqa: bool = False,
    causal_align: str = "top_left",
    window_size: Sequence[int] = (-1, -1),
    softcap: float = 0.0,
) -> torch.Tensor:
    torch._check(q.dim() == 4, lambda: f"q must have rank 4 [B, H, S, D], got {q.dim()}")
    return torch.empty(q.shape, dtype=q.dtype, device=q.device)


def _sdpa_lse_cuda(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    causal: bool = False,
    scale: Optional[float] = None,
    kernel_name: Optional[str] = None,
    library_path: Optional[str] = None,
    enable_gqa: bool = False,
    causal_align: str = "top_left",
    window_size: Sequence[int] = (-1, -1),
    softcap: float = 0.0,
) -> Tuple[torch.Tensor, torch.Tensor]:
    return sdpa_eager(q, k, v, causal, scale, library_path, kernel_name, None, enable_gqa,
                      causal_align, tuple(window_size), softcap, True)


def _sdpa_lse_fake(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    causal: bool = False,
    scale: Optional[float] = None,
    kernel_name: Optional[str] = None,
    library_path: Optional[str] = None,
    enable_gqa: bool = False,
    causal_align: str = "top_left",
    window_size: Sequence[int] = (-1, -1),
    softcap: float = 0.0,
) -> Tuple[torch.Tensor, torch.Tensor]:
    torch._check(q.dim() == 4, lambda: f"q must have rank 4 [B, H, S, D], got {q.dim()}")
    return (torch.empty(q.shape, dtype=q.dtype, device=q.device),
            torch.empty(q.shape[:3], dtype=torch.float32, device=q.device))


_LIB.impl("sdpa", _sdpa_cuda, "CUDA")
torch.library.register_fake("tiled_attn::sdpa", _sdpa_fake, lib=_LIB)
_LIB.impl("sdpa_lse", _sdpa_lse_cuda, "CUDA")
torch.library.register_fake("tiled_attn::sdpa_lse", _sdpa_lse_fake, lib=_LIB)

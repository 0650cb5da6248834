"""``tiled_attn::sdpa``: :func:`tiled_attn.sdpa` as a ``torch.library`` custom op.

Importing this module registers the op (it needs torch)::

    sdpa(Tensor q, Tensor k, Tensor v, bool causal=False, float? scale=None,
         str? kernel_name=None, str? library_path=None,
         bool enable_gqa=False, str causal_align="top_left",
         int[2] window_size=[-1, -1], float softcap=0.0,
         str? score_mod=None, Tensor[]? score_mod_args=None,
         str? mask_mod=None, Tensor[]? mask_mod_args=None,
         Tensor[]? block_mask=None) -> Tensor
    sdpa_lse(... the same ...) -> (Tensor, Tensor)
    sdpa_varlen(Tensor q, Tensor k, Tensor v, Tensor cu_seqlens_q,
                Tensor cu_seqlens_k, int max_seqlen_q, int max_seqlen_k,
                ... sdpa's from causal to softcap ...) -> Tensor
    sdpa_varlen_lse(... the same ...) -> (Tensor, Tensor)

``sdpa_lse`` is ``sdpa`` with ``return_lse=True``: it also returns the rows'
log-sum-exps, a ``[B, H, S_q]`` float32 tensor. ``sdpa_varlen`` is
:func:`tiled_attn.sdpa_varlen` on packed ``[total, H, D]`` sequences, and
``sdpa_varlen_lse`` it with ``return_lse=True`` (log-sum-exps ``[H,
total_q]``).

- CUDA implementation: :func:`tiled_attn.sdpa.sdpa_eager` (and
  :func:`tiled_attn.varlen.sdpa_varlen_eager`), which launches on
  the current stream, synchronizes nothing and allocates only through
  PyTorch's allocator, so it can be captured in a CUDA graph (once its
  module is loaded: run it once before capturing).
- Fake (meta) implementation: a new contiguous tensor of q's shape (with
  v's head dim), dtype and device (and the log-sum-exps' float32 one), so that
  ``torch.compile(fullgraph=True)`` traces through it.
- Autograd implementation: no gradient formula (there is no backward pass
  yet), but a kernel that refuses: with grad mode on and q, k or v requiring
  grad it raises :class:`~tiled_attn.errors.NoBackwardError`
  (:func:`~tiled_attn.validation.check_no_grad`); otherwise it hands the call
  on below autograd, to the CUDA or fake implementation, unchanged.

``library_path`` is a kernel library folder (None: the default one);
``kernel_name`` the name of a manifest entry (None: the best fit);
``enable_gqa``, ``causal_align``, ``window_size`` and ``softcap`` are
:func:`tiled_attn.sdpa`'s. The op is forward only. ``causal`` is sdpa's
``is_causal`` (or its alias ``causal``): sdpa, in PyTorch's argument order,
checks ``attn_mask`` (None) and ``dropout_p`` (0) itself and passes the op
the causal flag, so the schema keeps ``causal`` 4th.

Why an Autograd kernel that raises. An op with no Autograd kernel gets
PyTorch's autograd fallback, which in its default mode ("warn") runs the op
and gives the output a grad_fn that, at ``backward()``, only warns and passes
no gradient on: attention's share of the gradients is dropped. Without this
kernel that is what happened, on PyTorch 2.11, to ``torch.ops.tiled_attn.sdpa``
called directly and to ``tiled_attn.sdpa`` under ``torch.compile`` (Inductor
or aot_eager, fullgraph or not). A gradient formula registered with
``torch.library.register_autograd`` whose backward raised would let the
forward run and fail only at ``backward()``, and the eager
:func:`tiled_attn.sdpa` (which skips the dispatcher to save host time) would
still need a check of its own at the call. The Autograd kernel is the one
place every dispatcher call passes where autograd is involved:
``torch.ops.tiled_attn.*`` called directly, and ``torch.compile``, whose
Dynamo runs the op on fake tensors that carry ``requires_grad`` and whose
AOTAutograd traces through it. So the rule is one function,
:func:`check_no_grad`, called at two doors, the eager entry points and this
kernel, and both refuse at the call with the same message. Under
``torch.compile``, as NoBackwardError is a NotImplementedError, Dynamo takes
it for an op it cannot trace: with ``fullgraph=True`` it raises its
``Unsupported`` error, which quotes the message (its ``__cause__`` is the
NoBackwardError); without, it breaks the graph there and the op, run eagerly,
raises NoBackwardError itself. Under ``torch.no_grad()`` (Dynamo guards on
the grad mode) and ``torch.inference_mode()`` (which skips the Autograd keys),
or when nothing requires grad, the kernel only hands the call on.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence, Tuple

import torch

from .sdpa import sdpa_eager
from .validation import check_no_grad
from .kvcache import kvcache_eager, varlen_kvcache_eager
from .varlen import sdpa_varlen_eager

__all__ = ["LSE_SCHEMA", "SCHEMA", "VARLEN_LSE_SCHEMA", "VARLEN_SCHEMA"]

# The kernel's and the library's arguments are not called `kernel` and
# `library`: Inductor's fallback-kernel path takes keyword arguments of its
# own by those names.
SCHEMA = ("sdpa(Tensor q, Tensor k, Tensor v, bool causal=False, float? scale=None, "
          "str? kernel_name=None, str? library_path=None, bool enable_gqa=False, "
          "str causal_align=\"top_left\", int[2] window_size=[-1, -1], "
          "float softcap=0.0, str? score_mod=None, Tensor[]? score_mod_args=None, "
          "str? mask_mod=None, Tensor[]? mask_mod_args=None, Tensor[]? block_mask=None) -> Tensor")

LSE_SCHEMA = ("sdpa_lse(Tensor q, Tensor k, Tensor v, bool causal=False, float? scale=None, "
              "str? kernel_name=None, str? library_path=None, bool enable_gqa=False, "
              "str causal_align=\"top_left\", int[2] window_size=[-1, -1], "
              "float softcap=0.0, str? score_mod=None, Tensor[]? score_mod_args=None, "
              "str? mask_mod=None, Tensor[]? mask_mod_args=None, Tensor[]? block_mask=None) "
              "-> (Tensor, Tensor)")

#: sdpa's arguments from causal on, after the packed sequences' own.
_VARLEN_ARGS = ("Tensor q, Tensor k, Tensor v, Tensor cu_seqlens_q, Tensor cu_seqlens_k, "
                "int max_seqlen_q, int max_seqlen_k, " + SCHEMA[SCHEMA.index("bool causal"):
                                                              SCHEMA.index(", str? score_mod")])
VARLEN_SCHEMA = f"sdpa_varlen({_VARLEN_ARGS}) -> Tensor"
VARLEN_LSE_SCHEMA = f"sdpa_varlen_lse({_VARLEN_ARGS}) -> (Tensor, Tensor)"

#: sdpa_with_kvcache's op: q, the caches, the int32 lengths, then its options.
_KVCACHE_ARGS = ("Tensor q, Tensor k_cache, Tensor v_cache, Tensor cache_seqlens, "
                 "bool causal, float? scale, float softcap, int num_splits, str? library_path, "
                 "Tensor? block_table=None")
KVCACHE_SCHEMA = f"sdpa_with_kvcache({_KVCACHE_ARGS}) -> Tensor"
KVCACHE_LSE_SCHEMA = f"sdpa_with_kvcache_lse({_KVCACHE_ARGS}) -> (Tensor, Tensor)"
#: sdpa_varlen_with_kvcache's op (vLLM's call on paged caches).
_VARLEN_KVCACHE_ARGS = ("Tensor q, Tensor k_cache, Tensor v_cache, Tensor cu_seqlens_q, "
                        "int max_seqlen_q, Tensor seqused_k, Tensor block_table, bool causal, "
                        "float? scale, float softcap, str? library_path")
VARLEN_KVCACHE_SCHEMA = f"sdpa_varlen_with_kvcache({_VARLEN_KVCACHE_ARGS}) -> Tensor"
VARLEN_KVCACHE_LSE_SCHEMA = (f"sdpa_varlen_with_kvcache_lse({_VARLEN_KVCACHE_ARGS}) "
                             "-> (Tensor, Tensor)")

_LIB = torch.library.Library("tiled_attn", "DEF")
_LIB.define(KVCACHE_SCHEMA)
_LIB.define(KVCACHE_LSE_SCHEMA)
_LIB.define(VARLEN_KVCACHE_SCHEMA)
_LIB.define(VARLEN_KVCACHE_LSE_SCHEMA)
_LIB.define(SCHEMA)
_LIB.define(LSE_SCHEMA)
_LIB.define(VARLEN_SCHEMA)
_LIB.define(VARLEN_LSE_SCHEMA)


def _out_shape(q: torch.Tensor, v: torch.Tensor) -> Tuple[int, ...]:
    """The output's shape: q's, with v's head dim (D_v)."""
    return (*q.shape[:-1], v.shape[-1])


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
    score_mod: Optional[str] = None,
    score_mod_args: Optional[Sequence[torch.Tensor]] = None,
    mask_mod: Optional[str] = None,
    mask_mod_args: Optional[Sequence[torch.Tensor]] = None,
    block_mask: Optional[Sequence[torch.Tensor]] = None,
) -> torch.Tensor:
    return sdpa_eager(q, k, v, causal, scale, library_path, kernel_name, None, enable_gqa,
                      causal_align, tuple(window_size), softcap, False, score_mod,
                      tuple(score_mod_args or ()), mask_mod, tuple(mask_mod_args or ()),
                      tuple(block_mask or ()))


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
    score_mod: Optional[str] = None,
    score_mod_args: Optional[Sequence[torch.Tensor]] = None,
    mask_mod: Optional[str] = None,
    mask_mod_args: Optional[Sequence[torch.Tensor]] = None,
    block_mask: Optional[Sequence[torch.Tensor]] = None,
) -> torch.Tensor:
    torch._check(q.dim() == 4, lambda: f"q must have rank 4 [B, H, S, D], got {q.dim()}")
    return torch.empty(_out_shape(q, v), dtype=q.dtype, device=q.device)


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
    score_mod: Optional[str] = None,
    score_mod_args: Optional[Sequence[torch.Tensor]] = None,
    mask_mod: Optional[str] = None,
    mask_mod_args: Optional[Sequence[torch.Tensor]] = None,
    block_mask: Optional[Sequence[torch.Tensor]] = None,
) -> Tuple[torch.Tensor, torch.Tensor]:
    return sdpa_eager(q, k, v, causal, scale, library_path, kernel_name, None, enable_gqa,
                      causal_align, tuple(window_size), softcap, True, score_mod,
                      tuple(score_mod_args or ()), mask_mod, tuple(mask_mod_args or ()),
                      tuple(block_mask or ()))


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
    score_mod: Optional[str] = None,
    score_mod_args: Optional[Sequence[torch.Tensor]] = None,
    mask_mod: Optional[str] = None,
    mask_mod_args: Optional[Sequence[torch.Tensor]] = None,
    block_mask: Optional[Sequence[torch.Tensor]] = None,
) -> Tuple[torch.Tensor, torch.Tensor]:
    torch._check(q.dim() == 4, lambda: f"q must have rank 4 [B, H, S, D], got {q.dim()}")
    return (torch.empty(_out_shape(q, v), dtype=q.dtype, device=q.device),
            torch.empty(q.shape[:3], dtype=torch.float32, device=q.device))


def _sdpa_varlen_cuda(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    cu_seqlens_q: torch.Tensor,
    cu_seqlens_k: torch.Tensor,
    max_seqlen_q: int,
    max_seqlen_k: int,
    causal: bool = False,
    scale: Optional[float] = None,
    kernel_name: Optional[str] = None,
    library_path: Optional[str] = None,
    enable_gqa: bool = False,
    causal_align: str = "top_left",
    window_size: Sequence[int] = (-1, -1),
    softcap: float = 0.0,
    return_lse: bool = False,
) -> "torch.Tensor | Tuple[torch.Tensor, torch.Tensor]":
    return sdpa_varlen_eager(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k,
                             causal, scale, library_path, kernel_name, None, enable_gqa,
                             causal_align, tuple(window_size), softcap, return_lse)


def _sdpa_varlen_lse_cuda(*args: Any, **kwargs: Any) -> Tuple[torch.Tensor, torch.Tensor]:
    return _sdpa_varlen_cuda(*args, **kwargs, return_lse=True)  # type: ignore[return-value]


def _sdpa_varlen_fake(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, *args: Any,
                      **kwargs: Any) -> torch.Tensor:
    torch._check(q.dim() == 3, lambda: f"q must have rank 3 [total, H, D], got {q.dim()}")
    return torch.empty(_out_shape(q, v), dtype=q.dtype, device=q.device)


def _sdpa_varlen_lse_fake(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, *args: Any,
                          **kwargs: Any) -> Tuple[torch.Tensor, torch.Tensor]:
    out = _sdpa_varlen_fake(q, k, v)
    return out, torch.empty((q.shape[1], q.shape[0]), dtype=torch.float32, device=q.device)


_LIB.impl("sdpa", _sdpa_cuda, "CUDA")
torch.library.register_fake("tiled_attn::sdpa", _sdpa_fake, lib=_LIB)
_LIB.impl("sdpa_lse", _sdpa_lse_cuda, "CUDA")
torch.library.register_fake("tiled_attn::sdpa_lse", _sdpa_lse_fake, lib=_LIB)
_LIB.impl("sdpa_varlen", _sdpa_varlen_cuda, "CUDA")
torch.library.register_fake("tiled_attn::sdpa_varlen", _sdpa_varlen_fake, lib=_LIB)
_LIB.impl("sdpa_varlen_lse", _sdpa_varlen_lse_cuda, "CUDA")
torch.library.register_fake("tiled_attn::sdpa_varlen_lse", _sdpa_varlen_lse_fake, lib=_LIB)


def _kvcache_cuda(q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor,
                  cache_seqlens: torch.Tensor, causal: bool, scale: Optional[float],
                  softcap: float, num_splits: int, library_path: Optional[str],
                  block_table: Optional[torch.Tensor] = None) -> Any:
    return kvcache_eager(q, k_cache, v_cache, cache_seqlens, causal, scale, softcap,
                         num_splits, library_path, False, block_table)


def _kvcache_lse_cuda(*args: Any) -> Tuple[torch.Tensor, torch.Tensor]:
    q, k_cache, v_cache, lengths, causal, scale, softcap, num_splits, path = args[:9]
    block_table = args[9] if len(args) > 9 else None
    return kvcache_eager(q, k_cache, v_cache, lengths, causal, scale, softcap, num_splits,
                         path, True, block_table)


def _kvcache_fake(q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor,
                  *args: Any) -> torch.Tensor:
    return torch.empty((*q.shape[:-1], v_cache.shape[-1]), dtype=q.dtype, device=q.device)


def _kvcache_lse_fake(q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor,
                      *args: Any) -> Tuple[torch.Tensor, torch.Tensor]:
    return (_kvcache_fake(q, k_cache, v_cache),
            torch.empty((q.shape[0], q.shape[2], q.shape[1]), dtype=torch.float32,
                        device=q.device))


def _varlen_kvcache_cuda(*args: Any) -> torch.Tensor:
    return varlen_kvcache_eager(*args[:10], False, args[10])


def _varlen_kvcache_lse_cuda(*args: Any) -> Tuple[torch.Tensor, torch.Tensor]:
    return varlen_kvcache_eager(*args[:10], True, args[10])


def _varlen_kvcache_fake(q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor,
                         *args: Any) -> torch.Tensor:
    return torch.empty((*q.shape[:-1], v_cache.shape[-1]), dtype=q.dtype, device=q.device)


def _varlen_kvcache_lse_fake(q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor,
                             *args: Any) -> Tuple[torch.Tensor, torch.Tensor]:
    return (_varlen_kvcache_fake(q, k_cache, v_cache),
            torch.empty((q.shape[1], q.shape[0]), dtype=torch.float32, device=q.device))


_LIB.impl("sdpa_varlen_with_kvcache", _varlen_kvcache_cuda, "CUDA")
torch.library.register_fake("tiled_attn::sdpa_varlen_with_kvcache", _varlen_kvcache_fake,
                            lib=_LIB)
_LIB.impl("sdpa_varlen_with_kvcache_lse", _varlen_kvcache_lse_cuda, "CUDA")
torch.library.register_fake("tiled_attn::sdpa_varlen_with_kvcache_lse",
                            _varlen_kvcache_lse_fake, lib=_LIB)
_LIB.impl("sdpa_with_kvcache", _kvcache_cuda, "CUDA")
torch.library.register_fake("tiled_attn::sdpa_with_kvcache", _kvcache_fake, lib=_LIB)
_LIB.impl("sdpa_with_kvcache_lse", _kvcache_lse_cuda, "CUDA")
torch.library.register_fake("tiled_attn::sdpa_with_kvcache_lse", _kvcache_lse_fake, lib=_LIB)


def _refusing_autograd(name: str) -> Any:
    """The Autograd kernel of op ``tiled_attn::<name>``: :func:`check_no_grad`,
    then the call handed on below autograd (as ``torch.library.register_autograd``'s
    own kernel does when nothing requires grad)."""
    op = getattr(torch.ops.tiled_attn, name).default
    function = f"tiled_attn::{name}"

    def autograd(keyset: Any, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                 *args: Any, **kwargs: Any) -> Any:
        check_no_grad(torch, q, k, v, function)
        with torch._C._AutoDispatchBelowAutograd():
            return op.redispatch(keyset & torch._C._after_autograd_keyset, q, k, v, *args,
                                 **kwargs)

    return autograd


for _name in ("sdpa", "sdpa_lse", "sdpa_varlen", "sdpa_varlen_lse", "sdpa_with_kvcache",
              "sdpa_with_kvcache_lse", "sdpa_varlen_with_kvcache",
              "sdpa_varlen_with_kvcache_lse"):
    _LIB.impl(_name, _refusing_autograd(_name), "Autograd", with_keyset=True)
del _name

"""``tiled_attn::sdpa``: :func:`tiled_attn.sdpa` as a ``torch.library`` custom op.

Importing this module registers the ops (it needs torch)::

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
    sdpa_backward(Tensor grad_out, Tensor q, Tensor k, Tensor v, Tensor out,
                  Tensor lse, ... sdpa's from causal to softcap but
                  kernel_name ...) -> (Tensor, Tensor, Tensor)
    sdpa_varlen_backward(Tensor grad_out, Tensor q, Tensor k, Tensor v,
                         Tensor out, Tensor lse, ... sdpa_varlen's from
                         cu_seqlens_q to softcap but kernel_name ...)
                         -> (Tensor, Tensor, Tensor)

and the KV-cache ops of :mod:`tiled_attn.kvcache` (``sdpa_with_kvcache``,
``sdpa_varlen_with_kvcache`` and their ``_lse`` forms).

``sdpa_lse`` is ``sdpa`` with ``return_lse=True``: it also returns the rows'
log-sum-exps, a ``[B, H, S_q]`` float32 tensor. ``sdpa_varlen`` is
:func:`tiled_attn.sdpa_varlen` on packed ``[total, H, D]`` sequences, and
``sdpa_varlen_lse`` it with ``return_lse=True`` (log-sum-exps ``[H,
total_q]``). ``sdpa_backward`` and ``sdpa_varlen_backward`` give ``(dq, dk,
dv)``, the gradients of q, k and v, from ``grad_out`` (the output's
gradient) and the forward call's inputs, output, log-sum-exps and options
(:mod:`tiled_attn.backward`).

- CUDA implementation: :func:`tiled_attn.sdpa.sdpa_eager` (and
  :func:`tiled_attn.varlen.sdpa_varlen_eager`,
  :func:`tiled_attn.backward.sdpa_backward_eager`, ...), which launches on
  the current stream, synchronizes nothing and allocates only through
  PyTorch's allocator, so it can be captured in a CUDA graph (once its
  modules are loaded: run it once before capturing; forward and backward).
- Fake (meta) implementation: new contiguous tensors of the real ones'
  shapes (q's with v's head dim for the output; q's, k's and v's for the
  gradients), dtype and device (and the log-sum-exps' float32 ones), so
  that ``torch.compile(fullgraph=True)`` traces through them.
- Autograd: see below.

``library_path`` is a kernel library folder (None: the default one);
``kernel_name`` the name of a manifest entry (None: the best fit);
``enable_gqa``, ``causal_align``, ``window_size`` and ``softcap`` are
:func:`tiled_attn.sdpa`'s. ``causal`` is sdpa's ``is_causal`` (or its
alias ``causal``): sdpa, in PyTorch's argument order, checks ``attn_mask``
(None) and ``dropout_p`` (0) itself and passes the op the causal flag, so
the schema keeps ``causal`` 4th.

Gradients (issue 39). ``sdpa_lse`` and ``sdpa_varlen_lse`` have an autograd
formula (``torch.library.register_autograd``): their setup saves q, k, v,
the output, the log-sum-exps and the options, and their backward is the op
``sdpa_backward`` (``sdpa_varlen_backward``), which the runtime runs as
three kernels (docs/backward.md). The backward needs the log-sum-exps, so
``sdpa`` and ``sdpa_varlen`` have an Autograd kernel of their own that,
when a gradient is needed (grad mode on and q, k, v or a captured tensor
requiring grad), calls ``sdpa_lse`` (``sdpa_varlen_lse``) and returns its
output, whose ``grad_fn`` is then that formula's; otherwise it hands the
call on below autograd, to the CUDA or fake implementation, unchanged: a
call that needs no gradient runs the kernel without log-sum-exps, as before
there was a backward. So ``torch.ops.tiled_attn.sdpa`` called directly,
:func:`tiled_attn.sdpa` (whose eager path takes the op where a gradient is
needed and skips the dispatcher otherwise) and both under
``torch.compile`` (Dynamo keeps the op as a node; AOTAutograd traces through
its Autograd kernel, so the graph's forward holds ``sdpa_lse`` and its
backward ``sdpa_backward``) give the same gradients. An op with no Autograd
kernel would get PyTorch's autograd fallback, which (in its default "warn"
mode) runs the op and gives the output a ``grad_fn`` that only warns at
``backward()`` and passes no gradient on: why every op here has one.

What has no backward refuses at the forward call, with
:class:`~tiled_attn.errors.NoBackwardError` naming it, rather than run and
give a gradient that leaves it out:

- score and mask functions (``score_mod``, ``mask_mod``, an ``attn_mask``
  tensor) and block masks: refused by ``sdpa``'s Autograd kernel, before
  anything runs, and by ``sdpa_lse``'s setup, which register_autograd runs
  after the op's forward, in the same call
  (:func:`~tiled_attn.validation.needs_backward`);
- the KV-cache ops: their Autograd kernel refuses with grad mode on and q
  or a cache requiring grad (:func:`~tiled_attn.validation.check_no_grad`):
  decoding is forward only;
- a second derivative (``create_graph=True``): the backward ops' Autograd
  kernel refuses where their inputs require grad.

The log-sum-exps get no gradient. The formula's setup turns off the
materialization of missing gradients, so its backward gets None for an lse
that no loss uses (the ``sdpa`` op's, which it drops; ``sdpa_lse``'s when
the caller does not use it), and a tensor for one that is used, which it
refuses (:func:`~tiled_attn.validation.check_no_lse_grad`) rather than
drop that part of the gradient. Under ``torch.compile`` an lse that the
compiled function returns while it requires grad gets a gradient input in
the traced backward, used or not, and so is refused while tracing: return
``lse.detach()`` where the loss does not depend on it. A sliding window
with varlen has no backward kernel: the runtime says so at
``backward()`` (NoKernelError).

Under ``torch.compile``, as NoBackwardError is a NotImplementedError,
Dynamo takes a refusal for an op it cannot trace: with ``fullgraph=True``
it raises its ``Unsupported`` error, which quotes the message (its
``__cause__`` is the NoBackwardError); without, it breaks the graph there
and the op, run eagerly, raises NoBackwardError itself.

The backward adds dq's parts by atomics, in an order that varies from run
to run; under ``torch.use_deterministic_algorithms(True)`` it runs the
runtime's deterministic mode instead (the library's dq kernel writes dq
once per query block: the same bits every run).
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

import torch

from .backward import sdpa_backward_eager, sdpa_varlen_backward_eager
from .errors import NoBackwardError
from .sdpa import sdpa_eager
from .validation import check_backward, check_no_grad, check_no_lse_grad, needs_backward
from .kvcache import kvcache_eager, varlen_kvcache_eager
from .varlen import sdpa_varlen_eager

__all__ = ["BACKWARD_SCHEMA", "LSE_SCHEMA", "SCHEMA", "VARLEN_BACKWARD_SCHEMA",
           "VARLEN_LSE_SCHEMA", "VARLEN_SCHEMA"]

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

#: The backward ops: the output's gradient, the forward call's tensors, its
#: output and log-sum-exps, then its options (no kernel name: the runtime
#: chooses the backward's kernels).
_OPTIONS = SCHEMA[SCHEMA.index("bool causal"):SCHEMA.index(", str? score_mod")].replace(
    "str? kernel_name=None, ", "")
_GRADS = "-> (Tensor, Tensor, Tensor)"
#: sdpa_backward takes the forward's score and mask functions too (their
#: captured inputs get no gradient).
_FUNCTIONS = ("str? score_mod=None, Tensor[]? score_mod_args=None, str? mask_mod=None, "
              "Tensor[]? mask_mod_args=None")
BACKWARD_SCHEMA = ("sdpa_backward(Tensor grad_out, Tensor q, Tensor k, Tensor v, Tensor out, "
                   f"Tensor lse, {_OPTIONS}, {_FUNCTIONS}) {_GRADS}")
VARLEN_BACKWARD_SCHEMA = (
    "sdpa_varlen_backward(Tensor grad_out, Tensor q, Tensor k, Tensor v, Tensor out, "
    "Tensor lse, Tensor cu_seqlens_q, Tensor cu_seqlens_k, int max_seqlen_q, "
    f"int max_seqlen_k, {_OPTIONS}) {_GRADS}")

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
_LIB.define(BACKWARD_SCHEMA)
_LIB.define(VARLEN_BACKWARD_SCHEMA)


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


def _sdpa_backward_cuda(grad_out: torch.Tensor, q: torch.Tensor, k: torch.Tensor,
                        v: torch.Tensor, out: torch.Tensor, lse: torch.Tensor,
                        causal: bool = False, scale: Optional[float] = None,
                        library_path: Optional[str] = None, enable_gqa: bool = False,
                        causal_align: str = "top_left", window_size: Sequence[int] = (-1, -1),
                        softcap: float = 0.0, score_mod: Optional[str] = None,
                        score_mod_args: Optional[List[torch.Tensor]] = None,
                        mask_mod: Optional[str] = None,
                        mask_mod_args: Optional[List[torch.Tensor]] = None
                        ) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return sdpa_backward_eager(grad_out, q, k, v, out, lse, causal, scale, library_path,
                               enable_gqa, causal_align, tuple(window_size), softcap,
                               score_mod=score_mod, score_mod_args=score_mod_args or (),
                               mask_mod=mask_mod, mask_mod_args=mask_mod_args or ())


def _sdpa_varlen_backward_cuda(grad_out: torch.Tensor, q: torch.Tensor, k: torch.Tensor,
                               v: torch.Tensor, out: torch.Tensor, lse: torch.Tensor,
                               cu_seqlens_q: torch.Tensor, cu_seqlens_k: torch.Tensor,
                               max_seqlen_q: int, max_seqlen_k: int, causal: bool = False,
                               scale: Optional[float] = None, library_path: Optional[str] = None,
                               enable_gqa: bool = False, causal_align: str = "top_left",
                               window_size: Sequence[int] = (-1, -1),
                               softcap: float = 0.0) -> Tuple[torch.Tensor, ...]:
    return sdpa_varlen_backward_eager(grad_out, q, k, v, out, lse, cu_seqlens_q, cu_seqlens_k,
                                      max_seqlen_q, max_seqlen_k, causal, scale, library_path,
                                      enable_gqa, causal_align, tuple(window_size), softcap)


def _backward_fake(grad_out: torch.Tensor, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                   *args: Any, **kwargs: Any) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The gradients: new contiguous tensors of q's, k's and v's shapes, in
    q's dtype (sdpa_backward_eager's and sdpa_varlen_backward_eager's)."""
    return tuple(torch.empty(t.shape, dtype=q.dtype, device=q.device)  # type: ignore
                 for t in (q, k, v))


_LIB.impl("sdpa_backward", _sdpa_backward_cuda, "CUDA")
torch.library.register_fake("tiled_attn::sdpa_backward", _backward_fake, lib=_LIB)
_LIB.impl("sdpa_varlen_backward", _sdpa_varlen_backward_cuda, "CUDA")
torch.library.register_fake("tiled_attn::sdpa_varlen_backward", _backward_fake, lib=_LIB)


# ---------------------------------------------------------------- autograd
#
# The arguments of sdpa and sdpa_lse after q, k, v, as the schema defaults
# them (the dispatcher leaves out trailing arguments equal to their
# defaults), and those of sdpa_varlen and sdpa_varlen_lse after the packed
# sequences' offsets and lengths.
_SDPA_DEFAULTS = (False, None, None, None, False, "top_left", [-1, -1], 0.0, None, None, None,
                  None, None)
_VARLEN_DEFAULTS = _SDPA_DEFAULTS[:8]


def _filled(args: Sequence[Any], kwargs: Dict[str, Any], defaults: Sequence[Any],
            names: Sequence[str]) -> List[Any]:
    """``args`` then ``kwargs`` (by ``names``) padded with ``defaults``."""
    values = list(args) + list(defaults[len(args):])
    for index, name in enumerate(names):
        if name in kwargs:
            values[index] = kwargs[name]
    return values


_SDPA_NAMES = ("causal", "scale", "kernel_name", "library_path", "enable_gqa", "causal_align",
               "window_size", "softcap", "score_mod", "score_mod_args", "mask_mod",
               "mask_mod_args", "block_mask")


def _sdpa_autograd(keyset: Any, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, *args: Any,
                   **kwargs: Any) -> torch.Tensor:
    """The Autograd kernel of ``tiled_attn::sdpa``: with a gradient needed,
    ``sdpa_lse``'s output (its autograd formula; functions and block masks
    refused first, :func:`needs_backward`); else the call handed on below
    autograd, to the kernel without log-sum-exps."""
    options = _filled(args, kwargs, _SDPA_DEFAULTS, _SDPA_NAMES)
    score_mod, score_mod_args, mask_mod, mask_mod_args, block_mask = options[8:]
    if needs_backward(torch, "tiled_attn::sdpa", q, k, v, score_mod, score_mod_args, mask_mod,
                      mask_mod_args, block_mask):
        return torch.ops.tiled_attn.sdpa_lse(q, k, v, *args, **kwargs)[0]
    with torch._C._AutoDispatchBelowAutograd():
        return torch.ops.tiled_attn.sdpa.default.redispatch(
            keyset & torch._C._after_autograd_keyset, q, k, v, *args, **kwargs)


def _sdpa_varlen_autograd(keyset: Any, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                          *args: Any, **kwargs: Any) -> torch.Tensor:
    """The Autograd kernel of ``tiled_attn::sdpa_varlen``: ``sdpa_varlen_lse``'s
    output where a gradient is needed, else the call handed on below autograd."""
    if needs_backward(torch, "tiled_attn::sdpa_varlen", q, k, v):
        return torch.ops.tiled_attn.sdpa_varlen_lse(q, k, v, *args, **kwargs)[0]
    with torch._C._AutoDispatchBelowAutograd():
        return torch.ops.tiled_attn.sdpa_varlen.default.redispatch(
            keyset & torch._C._after_autograd_keyset, q, k, v, *args, **kwargs)


def _setup_sdpa_lse(ctx: Any, inputs: Sequence[Any], output: Any) -> None:
    """Saves what ``sdpa_backward`` reads: q, k, v, the output, the
    log-sum-exps and the options; refuses what has no backward (a gradient
    is needed: register_autograd's kernel calls this only then)."""
    options = _filled(inputs[3:], {}, _SDPA_DEFAULTS, _SDPA_NAMES)
    causal, scale, _, path, enable_gqa, align, window, softcap = options[:8]
    score_mod, score_args, mask_mod, mask_args, _ = options[8:]
    check_backward("tiled_attn::sdpa_lse", *inputs[:3], *options[8:])
    # The functions' captured tensors are saved with q, k, v (no gradient).
    score_args, mask_args = list(score_args or ()), list(mask_args or ())
    _save(ctx, inputs, output, (causal, scale, path, enable_gqa, align, list(window), softcap),
          captured=tuple(score_args + mask_args))
    ctx.functions = (score_mod, len(score_args), mask_mod, len(mask_args))


def _setup_sdpa_varlen_lse(ctx: Any, inputs: Sequence[Any], output: Any) -> None:
    """:func:`_setup_sdpa_lse` of ``sdpa_varlen_lse``: the offsets and longest
    lengths are saved with the options."""
    (q, k, v, cu_q, cu_k, max_q, max_k, causal, scale, _, path, enable_gqa, align, window,
     softcap) = inputs
    _save(ctx, inputs, output, (causal, scale, path, enable_gqa, align, list(window), softcap),
          (cu_q, cu_k), (max_q, max_k))


def _save(ctx: Any, inputs: Sequence[Any], output: Any, options: Tuple[Any, ...],
          offsets: Tuple[Any, ...] = (), lengths: Tuple[Any, ...] = (),
          captured: Tuple[Any, ...] = ()) -> None:
    out, lse = output
    ctx.save_for_backward(*inputs[:3], out, lse, *offsets, *captured)
    ctx.lengths, ctx.options = lengths, options
    # One None per input after q, k, v (a list of them for a tensor list:
    # the structure register_autograd checks).
    ctx.no_grads = tuple([None] * len(a) if isinstance(a, list) and
                         all(isinstance(t, torch.Tensor) for t in a) else None
                         for a in inputs[3:])
    # An lse that no loss uses gets None, not zeros: check_no_lse_grad
    # refuses only a gradient that reaches it.
    ctx.set_materialize_grads(False)


def _gradients(ctx: Any, grads: Sequence[Any]) -> Tuple[Any, ...]:
    """dq, dk, dv, then None for the other inputs, one per argument the call
    passed (``ctx.needs_input_grad``'s: the dispatcher leaves out trailing
    arguments equal to their defaults, and register_autograd takes no more
    gradients than arguments on PyTorch 2.11)."""
    return (*grads, *ctx.no_grads)[:len(ctx.needs_input_grad)]


def _sdpa_lse_backward(ctx: Any, grad_out: Optional[torch.Tensor],
                       grad_lse: Optional[torch.Tensor]) -> Tuple[Any, ...]:
    check_no_lse_grad(grad_lse, "tiled_attn::sdpa_lse")
    q, k, v, out, lse, *captured = ctx.saved_tensors
    if grad_out is None:  # (Neither output's gradient reached the op.)
        return _gradients(ctx, (None, None, None))
    score_mod, scores, mask_mod, masks = ctx.functions
    functions = {}
    if score_mod is not None or mask_mod is not None:
        functions = dict(score_mod=score_mod, score_mod_args=captured[:scores] or None,
                         mask_mod=mask_mod, mask_mod_args=captured[scores:scores + masks] or None)
    return _gradients(ctx, torch.ops.tiled_attn.sdpa_backward(grad_out, q, k, v, out, lse,
                                                              *ctx.options, **functions))


def _sdpa_varlen_lse_backward(ctx: Any, grad_out: Optional[torch.Tensor],
                              grad_lse: Optional[torch.Tensor]) -> Tuple[Any, ...]:
    check_no_lse_grad(grad_lse, "tiled_attn::sdpa_varlen_lse")
    q, k, v, out, lse, cu_q, cu_k = ctx.saved_tensors
    if grad_out is None:
        return _gradients(ctx, (None, None, None))
    return _gradients(ctx, torch.ops.tiled_attn.sdpa_varlen_backward(
        grad_out, q, k, v, out, lse, cu_q, cu_k, *ctx.lengths, *ctx.options))


torch.library.register_autograd("tiled_attn::sdpa_lse", _sdpa_lse_backward,
                                setup_context=_setup_sdpa_lse, lib=_LIB)
torch.library.register_autograd("tiled_attn::sdpa_varlen_lse", _sdpa_varlen_lse_backward,
                                setup_context=_setup_sdpa_varlen_lse, lib=_LIB)
_LIB.impl("sdpa", _sdpa_autograd, "Autograd", with_keyset=True)
_LIB.impl("sdpa_varlen", _sdpa_varlen_autograd, "Autograd", with_keyset=True)


def _refusing_autograd(name: str, refuse: Any) -> Any:
    """The Autograd kernel of op ``tiled_attn::<name>``, which has no gradient
    formula: ``refuse(q, k, v, function)`` (raising NoBackwardError where a
    gradient is needed), then the call handed on below autograd (as
    ``torch.library.register_autograd``'s own kernel does when nothing
    requires grad)."""
    op = getattr(torch.ops.tiled_attn, name).default
    function = f"tiled_attn::{name}"

    def autograd(keyset: Any, a: torch.Tensor, b: torch.Tensor, c: torch.Tensor,
                 *args: Any, **kwargs: Any) -> Any:
        refuse(a, b, c, *args[:3], function=function)
        with torch._C._AutoDispatchBelowAutograd():
            return op.redispatch(keyset & torch._C._after_autograd_keyset, a, b, c, *args,
                                 **kwargs)

    return autograd


def _no_cache_grad(q: Any, k_cache: Any, v_cache: Any, *rest: Any, function: str) -> None:
    check_no_grad(torch, q, k_cache, v_cache, function)


def _no_double_backward(grad_out: Any, q: Any, k: Any, v: Any, out: Any, lse: Any,
                        function: str) -> None:
    """A second derivative (``create_graph=True``): the backward ops have no
    gradient formula of their own."""
    tensors = (grad_out, q, k, v, out, lse)
    if torch.is_grad_enabled() and any(t.requires_grad for t in tensors):
        raise NoBackwardError(
            f"{function}: a gradient of the backward pass was asked for (create_graph=True, "
            "a second derivative), which tiled_attn does not compute; call backward() "
            "without create_graph, or use another attention implementation")


for _name in ("sdpa_with_kvcache", "sdpa_with_kvcache_lse", "sdpa_varlen_with_kvcache",
              "sdpa_varlen_with_kvcache_lse"):
    _LIB.impl(_name, _refusing_autograd(_name, _no_cache_grad), "Autograd", with_keyset=True)
for _name in ("sdpa_backward", "sdpa_varlen_backward"):
    _LIB.impl(_name, _refusing_autograd(_name, _no_double_backward), "Autograd",
              with_keyset=True)
del _name

"""PyTorch's SDPA dispatch: tiled-attn's kernels as PyTorch's flash attention.

    >>> import tiled_attn
    >>> tiled_attn.install()      # F.scaled_dot_product_attention now runs them
    >>> with tiled_attn.installed():
    ...     loss = model(x).sum(); loss.backward()
    >>> tiled_attn.uninstall()

``install()`` registers tiled-attn's kernels as the CUDA implementation of
the four ATen ops behind PyTorch's flash-attention backend,

- ``aten::_scaled_dot_product_flash_attention`` and its ``_backward``
  (what ``F.scaled_dot_product_attention`` runs when it chooses flash
  attention, ``[B, H, S, D]``), and
- ``aten::_flash_attention_forward`` and ``_flash_attention_backward``
  (FlashAttention-2's own interface, ``[B, S, H, D]`` or packed varlen
  ``[total, H, D]`` with windows; ``torch.nn.attention.varlen``),

through PyTorch 2.11's flash-attention registry, as FlashAttention-3 and -4
register theirs: importing this module registers the name ``"tiled_attn"``
(``torch.nn.attention.list_flash_attention_impls()``) and
``torch.nn.attention.activate_flash_attention_impl("tiled_attn")`` is
``install()``; ``restore_flash_attention_impl()`` is ``uninstall()``.
PyTorch's own autograd formulas call the backward ops, so training, the
``torch.compile`` graphs of SDPA (Inductor calls these ops as extern
kernels), CUDA graphs and everything built on the ops (PyTorch's context
parallelism: its ring calls ``_scaled_dot_product_flash_attention`` and its
backward on each shard) reach the kernels with no change of the user's code.

What falls back. A call the kernels cannot take runs PyTorch's own kernel of
the op (``torch.library.get_kernel``, taken before the registration), so
nothing that ran before ``install()`` stops running:

- dropout (``dropout_p > 0``) and ``return_debug_mask``; ALiBi slopes and
  ``seqused_k`` of ``_flash_attention_forward``;
- what the library has no kernel for (a head dim or a GPU it was not built
  for, a deterministic backward without dq kernels:
  :class:`~tiled_attn.errors.NoKernelError`) or the runtime refuses
  (:class:`~tiled_attn.errors.TiledAttnError`, ``ValueError``,
  ``TypeError``: PyTorch's kernel then gives its own answer or error).

Under ``torch.use_deterministic_algorithms(True)`` the backward runs
tiled-attn's deterministic mode (its dq kernel; dq the same bits every
run).

Each fallback is counted (:func:`stats`) and logged once per op and reason
on the logger ``tiled_attn.dispatch`` (WARNING). Forward and backward decide
apart: the log-sum-exps are the same quantity in both implementations
(natural log, ``[B, H, S_q]``, ``[H, total_q]`` for varlen), so a forward
that ran here and a backward that fell back (or the other way round) give
the gradients of the one attention. Dropout is the exception, and PyTorch's
kernels run both of its halves.

What SDPA chooses is still PyTorch's: ``install(prefer_flash=True)`` (the
default) puts the flash backend first in SDPA's priority order (restored
by ``uninstall()``), so that it is chosen wherever its checks pass (fp16
and bf16 CUDA tensors without ``attn_mask``, head dims up to 256 in steps
of 8: the others go to PyTorch's other backends as before). Causal
alignment is the flash kernel's: ``is_causal`` with ``S_q != S_k`` aligns
bottom-right (SDPA sends such calls to other backends; the ops called
directly, as FlashAttention does, get FlashAttention's meaning).

Outputs have the layouts of the ops' meta functions (the output and the
gradients ``empty_like`` the inputs), so compiled graphs see the strides
they were traced with.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import warnings
from collections import Counter
from types import SimpleNamespace
from typing import Any, Callable, Dict, Iterator, Optional, Tuple

import torch

from .backward import sdpa_backward_eager, sdpa_varlen_backward_eager
from .errors import TiledAttnError
from .sdpa import LibraryArg, sdpa_eager
from .varlen import sdpa_varlen_eager

__all__ = ["NAME", "install", "installed", "is_installed", "reset_stats", "stats", "uninstall"]

#: The name in PyTorch's flash-attention registry.
NAME = "tiled_attn"

LOG = logging.getLogger("tiled_attn.dispatch")

#: The ops replaced, by name (``aten::<name>``, overload ``default``).
OPS = ("_scaled_dot_product_flash_attention", "_scaled_dot_product_flash_attention_backward",
       "_flash_attention_forward", "_flash_attention_backward")

#: The functions that run the kernels (the eager paths of the tiled_attn
#: ops); the CPU tests put float64 stand-ins here.
KERNELS = SimpleNamespace(sdpa=sdpa_eager, sdpa_varlen=sdpa_varlen_eager,
                          backward=sdpa_backward_eager,
                          varlen_backward=sdpa_varlen_backward_eager)

#: Errors that send a call to PyTorch's kernel (the reason is their message).
_NOT_OURS = (TiledAttnError, ValueError, TypeError)

#: Distinct fallback reasons logged (then one note that logging stops).
_LOG_LIMIT = 32

_STATE = SimpleNamespace(library=None, prefer_flash=True, dispatch_key="CUDA", handle=None,
                         originals={}, ran=Counter(), fell_back=Counter(), logged=set(),
                         lock=threading.Lock())


# ---------------------------------------------------------------- public API


def install(*, library: LibraryArg = None, prefer_flash: bool = True,
            dispatch_key: str = "CUDA") -> None:
    """Makes tiled-attn's kernels PyTorch's flash attention (see the module's
    text). ``library``: a kernel library (folder or
    :class:`~tiled_attn.KernelLibrary`; None: the default one);
    ``prefer_flash``: put the flash backend first in SDPA's priority order;
    ``dispatch_key``: the backend whose kernels are replaced (``"CUDA"``;
    the CPU tests use ``"CPU"``). Installing again replaces the previous
    installation (with the new options)."""
    _STATE.library, _STATE.prefer_flash, _STATE.dispatch_key = library, prefer_flash, dispatch_key
    registry = _registry()
    if registry is not None:
        registry.activate_flash_attention_impl(NAME)
    else:  # PyTorch before 2.11: no registry, the same registration.
        uninstall()
        _STATE.handle = _register()


def uninstall() -> None:
    """Gives the ops back to PyTorch's kernels and SDPA its priority order;
    nothing when not installed."""
    registry = _registry()
    if registry is not None and registry.current_flash_attention_impl() == NAME:
        registry.restore_flash_attention_impl()
    if _STATE.handle is not None:  # registered without the registry
        _STATE.handle.remove()


def is_installed() -> bool:
    """Whether tiled-attn's kernels are PyTorch's flash attention now."""
    return _STATE.handle is not None


@contextlib.contextmanager
def installed(**options: Any) -> Iterator[None]:
    """:func:`install` for a ``with`` block (``options`` are its keywords),
    :func:`uninstall` after it."""
    install(**options)
    try:
        yield
    finally:
        uninstall()


def stats() -> Dict[str, Dict[Any, int]]:
    """The calls since the last :func:`reset_stats`: ``"ran"`` counts the
    calls the kernels ran by op name, ``"fell_back"`` those PyTorch's kernels
    ran by ``(op name, reason)``."""
    with _STATE.lock:
        return {"ran": dict(_STATE.ran), "fell_back": dict(_STATE.fell_back)}


def reset_stats() -> None:
    """Clears :func:`stats` (and lets each fallback reason be logged again)."""
    with _STATE.lock:
        _STATE.ran.clear()
        _STATE.fell_back.clear()
        _STATE.logged.clear()


# ---------------------------------------------------------------- registration


class _Handle:
    """An installation: the Library holding the four kernels (destroying it
    gives the ops back to PyTorch's) and SDPA's priority order before it.
    PyTorch's registry keeps it and calls :meth:`remove`."""

    def __init__(self, library: Any, previous_order: Optional[list]) -> None:
        self.library, self.previous_order = library, previous_order

    def remove(self) -> None:
        if self.library is not None:
            self.library._destroy()
            self.library = None
        if self.previous_order is not None:
            torch._C._set_sdp_priority_order(self.previous_order)
            self.previous_order = None
        if _STATE.handle is self:
            _STATE.handle = None


def _register() -> _Handle:
    """The registry's ``register_fn``: takes PyTorch's kernels of the ops
    (for the fallbacks), registers ours in their place and, with
    ``prefer_flash``, puts the flash backend first in SDPA's order."""
    if _STATE.handle is not None:
        _STATE.handle.remove()
    key = _STATE.dispatch_key
    get_kernel = getattr(torch.library, "get_kernel", None)
    if get_kernel is None:
        raise RuntimeError("tiled_attn.install needs PyTorch 2.11 or later "
                           "(torch.library.get_kernel, for the fallbacks); this is "
                           f"{torch.__version__}")
    _STATE.originals = {name: _original(get_kernel, name, key) for name in OPS}
    library = torch.library.Library("aten", "IMPL")  # noqa: TOR901
    with warnings.catch_warnings():  # "Overriding a previously registered kernel"
        warnings.simplefilter("ignore", UserWarning)
        for name, impl in _IMPLS.items():
            library.impl(name, impl, key, with_keyset=True, allow_override=True)
    previous = None
    if _STATE.prefer_flash:
        previous = list(torch._C._get_sdp_priority_order())
        flash = int(torch.nn.attention.SDPBackend.FLASH_ATTENTION)
        torch._C._set_sdp_priority_order([flash] + [b for b in previous if b != flash])
    _STATE.handle = _Handle(library, previous)
    return _STATE.handle


def _original(get_kernel: Any, name: str, key: str) -> Any:
    """PyTorch's kernel of ``aten::<name>`` for ``key`` (None: it has none,
    as in a CPU-only build)."""
    try:
        return get_kernel(f"aten::{name}", key)
    except RuntimeError:
        return None


def _registry() -> Any:
    """PyTorch's flash-attention registry (torch.nn.attention._registry,
    PyTorch 2.11+), with ``"tiled_attn"`` registered; None before 2.11."""
    try:
        from torch.nn.attention import _registry as registry
    except ImportError:
        return None
    if NAME not in registry.list_flash_attention_impls():
        registry.register_flash_attention_impl(NAME, register_fn=_register)
    return registry


# ---------------------------------------------------------------- the kernels


def _align(s_q: int, s_k: int) -> str:
    """The flash kernel's causal alignment, bottom-right; top-left (the same
    mask) where S_q == S_k keeps sdpa on its fastest path."""
    return "top_left" if s_q == s_k else "bottom_right"


def _window(left: Optional[int], right: Optional[int]) -> Tuple[int, int]:
    return (-1 if left is None else int(left), -1 if right is None else int(right))


def _forward_refusal(query: Any, value: Any, dropout_p: float, return_debug_mask: bool,
                     seqused_k: Any = None, alibi_slopes: Any = None) -> Optional[str]:
    """Why a forward call goes to PyTorch's kernel before it is tried here."""
    if dropout_p != 0.0:
        return "dropout_p > 0 (tiled-attn's kernels have no dropout)"
    if return_debug_mask:
        return "return_debug_mask=True"
    if seqused_k is not None:
        return "seqused_k without a paged cache"
    if alibi_slopes is not None:
        return "alibi_slopes"
    if value.shape[-1] != query.shape[-1]:
        return "a head dim of v other than q's (the op's output is shaped like q)"
    return None


def _backward_refusal(dropout_p: float) -> Optional[str]:
    if dropout_p != 0.0:
        return "dropout_p > 0 (tiled-attn's kernels have no dropout)"
    return None


def _extras(query: Any) -> Tuple[Any, Any, Any]:
    """The forward ops' rng_state, unused and debug mask outputs, as
    FlashAttention-3's registration gives them without dropout (allocated,
    not written: no kernel launch)."""
    device = query.device
    return (torch.empty((2,), dtype=torch.uint64, device=device),
            torch.empty((), dtype=torch.uint64, device=device),
            torch.empty(0, dtype=query.dtype, device=device))


def _ran(op: str) -> None:
    with _STATE.lock:
        _STATE.ran[op] += 1


def _fall_back(op: str, reason: str, keyset: Any, *args: Any, **kwargs: Any) -> Any:
    """Counts and logs the fallback, then runs PyTorch's kernel of ``op``."""
    reason = reason.splitlines()[0] if reason else "(no message)"
    with _STATE.lock:
        _STATE.fell_back[(op, reason)] += 1
        new = (op, reason) not in _STATE.logged and len(_STATE.logged) <= _LOG_LIMIT
        if new:
            _STATE.logged.add((op, reason))
    if new:
        if len(_STATE.logged) > _LOG_LIMIT:
            LOG.warning("tiled_attn: more fallback reasons than %d; not logging more "
                        "(tiled_attn.dispatch.stats() counts them all)", _LOG_LIMIT)
        else:
            LOG.warning("tiled_attn: aten::%s ran PyTorch's kernel: %s", op, reason)
    original = _STATE.originals.get(op)
    if original is None:
        raise NotImplementedError(f"aten::{op}: tiled-attn's kernels do not take this call "
                                  f"({reason}) and PyTorch has no {_STATE.dispatch_key} kernel "
                                  "of the op to run it")
    return original.call_boxed(keyset, *args, **kwargs)


def _tried(op: str, reason: Optional[str], run: Callable[[], Any]) -> Tuple[Any, Optional[str]]:
    """``run()``'s result where ``reason`` is None and it raises none of the
    errors that mean "not here" (then their message is the reason)."""
    if reason is None:
        try:
            result = run()
        except _NOT_OURS as error:
            return None, f"{type(error).__name__}: {error}"
        _ran(op)
        return result, None
    return None, reason


def _sdpa_flash(keyset: Any, query: Any, key: Any, value: Any, dropout_p: float = 0.0,
                is_causal: bool = False, return_debug_mask: bool = False, *,
                scale: Optional[float] = None) -> Tuple[Any, ...]:
    op = "_scaled_dot_product_flash_attention"
    s_q, s_k = query.shape[2], key.shape[2]

    def run() -> Tuple[Any, Any]:
        return KERNELS.sdpa(query, key, value, bool(is_causal), scale, _STATE.library, None,
                            torch.empty_like(query), True, _align(s_q, s_k), (-1, -1), 0.0,
                            True)

    result, reason = _tried(op, _forward_refusal(query, value, dropout_p, return_debug_mask),
                            run)
    if reason is None:
        return (*result, None, None, s_q, s_k, *_extras(query))
    return _fall_back(op, reason, keyset, query, key, value, dropout_p, is_causal,
                      return_debug_mask, scale=scale)


def _sdpa_flash_backward(keyset: Any, grad_out: Any, query: Any, key: Any, value: Any, out: Any,
                         logsumexp: Any, cum_seq_q: Any, cum_seq_k: Any, max_q: int, max_k: int,
                         dropout_p: float, is_causal: bool, philox_seed: Any, philox_offset: Any,
                         *, scale: Optional[float] = None) -> Tuple[Any, Any, Any]:
    op = "_scaled_dot_product_flash_attention_backward"

    def run() -> Tuple[Any, Any, Any]:
        grads = tuple(torch.empty_like(t) for t in (query, key, value))
        return KERNELS.backward(grad_out, query, key, value, out, logsumexp, bool(is_causal),
                                scale, _STATE.library, True,
                                _align(query.shape[2], key.shape[2]), (-1, -1), 0.0, grads)

    result, reason = _tried(op, _backward_refusal(dropout_p), run)
    if reason is None:
        return result
    return _fall_back(op, reason, keyset, grad_out, query, key, value, out, logsumexp, cum_seq_q,
                      cum_seq_k, max_q, max_k, dropout_p, is_causal, philox_seed, philox_offset,
                      scale=scale)


def _flash_forward(keyset: Any, query: Any, key: Any, value: Any, cum_seq_q: Any, cum_seq_k: Any,
                   max_q: int, max_k: int, dropout_p: float, is_causal: bool,
                   return_debug_mask: bool, *, scale: Optional[float] = None,
                   window_size_left: Optional[int] = None,
                   window_size_right: Optional[int] = None, seqused_k: Any = None,
                   alibi_slopes: Any = None) -> Tuple[Any, ...]:
    op = "_flash_attention_forward"
    window = _window(window_size_left, window_size_right)

    def run() -> Tuple[Any, Any]:
        out = torch.empty_like(query)
        if cum_seq_q is None:  # [B, S, H, D]: sdpa on the [B, H, S, D] views
            _, lse = KERNELS.sdpa(query.transpose(1, 2), key.transpose(1, 2),
                                  value.transpose(1, 2), bool(is_causal), scale, _STATE.library,
                                  None, out.transpose(1, 2), True,
                                  _align(query.shape[1], key.shape[1]), window, 0.0, True)
        else:  # packed [total, H, D], FlashAttention's per-sequence alignment
            _, lse = KERNELS.sdpa_varlen(query, key, value, cum_seq_q, cum_seq_k, int(max_q),
                                         int(max_k), bool(is_causal), scale, _STATE.library,
                                         None, out, True, "bottom_right", window, 0.0, True)
        return out, lse

    result, reason = _tried(op, _forward_refusal(query, value, dropout_p, return_debug_mask,
                                                 seqused_k, alibi_slopes), run)
    if reason is None:
        return (*result, *_extras(query))
    return _fall_back(op, reason, keyset, query, key, value, cum_seq_q, cum_seq_k, max_q, max_k,
                      dropout_p, is_causal, return_debug_mask, scale=scale,
                      window_size_left=window_size_left, window_size_right=window_size_right,
                      seqused_k=seqused_k, alibi_slopes=alibi_slopes)


def _flash_backward(keyset: Any, grad_out: Any, query: Any, key: Any, value: Any, out: Any,
                    logsumexp: Any, cum_seq_q: Any, cum_seq_k: Any, max_q: int, max_k: int,
                    dropout_p: float, is_causal: bool, rng_state: Any, unused: Any, *,
                    scale: Optional[float] = None, window_size_left: Optional[int] = None,
                    window_size_right: Optional[int] = None) -> Tuple[Any, Any, Any]:
    op = "_flash_attention_backward"
    window = _window(window_size_left, window_size_right)

    def run() -> Tuple[Any, Any, Any]:
        grads = tuple(torch.empty_like(t) for t in (query, key, value))
        if cum_seq_q is None or not cum_seq_q.numel():
            t = [x.transpose(1, 2) for x in (grad_out, query, key, value, out)]
            KERNELS.backward(*t, logsumexp, bool(is_causal), scale, _STATE.library, True,
                             _align(query.shape[1], key.shape[1]), window, 0.0,
                             tuple(g.transpose(1, 2) for g in grads))
        else:
            KERNELS.varlen_backward(grad_out, query, key, value, out, logsumexp, cum_seq_q,
                                    cum_seq_k, int(max_q), int(max_k), bool(is_causal), scale,
                                    _STATE.library, True, "bottom_right", window, 0.0, grads)
        return grads

    result, reason = _tried(op, _backward_refusal(dropout_p), run)
    if reason is None:
        return result
    return _fall_back(op, reason, keyset, grad_out, query, key, value, out, logsumexp, cum_seq_q,
                      cum_seq_k, max_q, max_k, dropout_p, is_causal, rng_state, unused,
                      scale=scale, window_size_left=window_size_left,
                      window_size_right=window_size_right)


_IMPLS = {"_scaled_dot_product_flash_attention": _sdpa_flash,
          "_scaled_dot_product_flash_attention_backward": _sdpa_flash_backward,
          "_flash_attention_forward": _flash_forward,
          "_flash_attention_backward": _flash_backward}
assert tuple(_IMPLS) == OPS

_registry()

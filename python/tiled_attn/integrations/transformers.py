"""Hugging Face transformers' attention through :func:`tiled_attn.sdpa`.

Usage::

    import torch
    from transformers import AutoModelForCausalLM
    import tiled_attn.integrations.transformers as ta_tf

    ta_tf.register()                     # once per process; idempotent
    model = AutoModelForCausalLM.from_config(
        cfg, attn_implementation="tiled_attn", dtype=torch.bfloat16)  # torch_dtype= before 4.56
    # or switch a model that is already built (same weights):
    ta_tf.set_attn_implementation(model, "tiled_attn")

:func:`register` adds :func:`tiled_attn_attention_forward` to transformers'
``AttentionInterface`` (a plain dict, ``ALL_ATTENTION_FUNCTIONS``, before
4.51) under ``name``, so that ``attn_implementation=name`` passes the
model's check. From 4.53 on, transformers builds masks through
``AttentionMaskInterface`` and gives an implementation it does not know
there no mask at all, padding included; so :func:`register` also registers,
under the same name, a mask function that defers to SDPA's. That one returns
None where SDPA may rely on ``is_causal`` (no padding, and the query length
1 or equal to the key length) and a boolean ``[B, 1, S_q, S_k]`` mask
otherwise.

What the attention function does with the mask (``module`` is the
attention layer, ``query`` ``[B, H, S_q, D]``, ``key``/``value``
``[B, H_kv, S_k, D]``):

- None: SDPA's rule. Causal when ``S_q > 1`` and the layer is causal
  (``is_causal`` keyword, else ``module.is_causal``), with PyTorch's
  top-left alignment; keys past ``S_q`` are seen by no query, so they are
  dropped as SDPA does. Query length 1: no mask.
- A tensor (a boolean mask, or an additive float mask of 0 and the dtype's
  minimum as transformers before 4.53 builds for every implementation but
  SDPA's and flash's): run as causal when it is exactly causal, query ``i``
  seeing keys ``j <= i + o`` in every batch row and head for one ``o >= 0``
  (read from query 0). That is a full prefill (``o = 0``), a decode step or
  a chunk after a KV cache (``o`` = the tokens before), or a static cache's
  prefix. Keys past ``S_q + o`` are dropped, which leaves no mask when
  ``S_q == 1``, top-left causal when ``o == 0``, and bottom-right causal
  otherwise; :func:`tiled_attn.sdpa` takes the last only if it has a
  ``causal_align`` keyword, and otherwise a NotImplementedError names the
  case. Any other mask (padding, packed sequences, custom 4D masks, a
  sliding window without ``sliding_window``) runs as
  :func:`tiled_attn.sdpa`'s ``attn_mask`` on the library's ``mask`` and
  ``bias`` kernels (so far at D = 64, 96, 128, 192 and 256; not with a
  sliding window or a soft-cap), causal as well where no query sees a key
  after its own position (a causal mask with padding: the key blocks
  above the diagonal are skipped); without them it raises NotImplementedError naming its shape,
  dtype and the first row that is not causal. A query row that sees no key
  (a left-padding position) gives zeros. Reading a
  mask costs one host synchronisation; the result is kept for the mask
  object (while its version counter is unchanged), so all layers of a
  forward share it.

Sliding windows: a layer that passes ``sliding_window=w`` (Mistral's, the
sliding layers of Qwen2 and others, from their configs) attends to the ``w`` keys
up to and including its own position, transformers' convention
(``masking_utils.sliding_window_overlay``: key ``j`` is seen from query
``i`` when ``j > i - w``; its flash-attention path passes FlashAttention's
``window_size=(w - 1, w - 1)`` with ``causal``, the same keys). A mask is
then accepted when it is exactly that window intersected with the causal
mask above (``i + o - w < j <= i + o``), and :func:`tiled_attn.sdpa` gets
``window_size=(w - 1, w - 1)`` with the causal mask's alignment; its
library needs a ``window`` kernel (or the band's own). For one query the
window is the last ``w`` of the keys it sees: those keys are passed, and
no window.

Logit soft-capping: a layer that passes ``softcap=c`` (Gemma 2's
``attn_logit_softcapping``, from its config) has its scores computed as
``c * tanh(scaling * q.k / c)`` before the mask and the softmax
(``eager_attention_forward`` of ``modeling_gemma2``: the scores times
``scaling``, divided by ``c``, ``tanh``, times ``c``, then the mask; its
flash-attention path passes the same ``softcap`` to FlashAttention, whose
meaning it is). :func:`tiled_attn.sdpa` gets ``softcap=c``; its library
needs kernels compiled with softcap. ``softcap`` None (or 0) is none.

Grouped KV heads (``H_kv < H``): for one query token, the heads sharing a
KV head become the query rows of one problem (FlashAttention's
``pack_gqa``: one block of rows instead of one nearly empty block per
head); else they are passed as they are when :func:`tiled_attn.sdpa` has
an ``enable_gqa`` keyword (it has); else K and V are repeated along the
head dimension (transformers' ``repeat_kv``).

Training: with grad mode on and query, key or value requiring grad, the
output comes from :func:`tiled_attn.sdpa`'s differentiable path (its
autograd formula runs the library's backward kernels): a new ``[B, H, S_q,
D]`` tensor, returned transposed to transformers' layout (the ``out``
buffer of inference is not differentiable). No mask, causal masks, sliding
windows and soft-caps train; a mask that is no causal mask (padding, packed
sequences) runs on the mask and bias kernels, whose backward kernels the
default library does not hold yet: :class:`tiled_attn.NoBackwardError`
says so at the forward.

Not supported, each refused with a message: dropout, attention sinks,
position biases, paged caches. ``output_attentions`` gets None weights, as
with SDPA.
The function synchronises with the host when it reads a mask, so it is not
for ``torch.compile`` or CUDA graphs yet.

Importing this module imports torch and transformers; ``import tiled_attn``
never does.
"""

from __future__ import annotations

import functools
import inspect
import re
import warnings
import weakref
from typing import Any, Callable, FrozenSet, NamedTuple, Optional, Tuple

import torch
import transformers
from packaging.version import Version
from transformers import modeling_utils

import tiled_attn

try:  # 4.53 on: masks are built per implementation, through AttentionMaskInterface
    from transformers import masking_utils as _masking_utils
except ImportError:  # pragma: no cover (older transformers)
    _masking_utils = None

__all__ = [
    "MIN_TRANSFORMERS",
    "NAME",
    "register",
    "set_attn_implementation",
    "tiled_attn_attention_forward",
]

#: The default ``attn_implementation`` name.
NAME = "tiled_attn"
#: The oldest transformers release whose models call ``ALL_ATTENTION_FUNCTIONS``.
MIN_TRANSFORMERS = "4.48"
#: Substrings that make transformers treat an implementation name specially.
_RESERVED_PARTS = ("sdpa", "flash", "flex", "paged")

_PREFIX = "tiled_attn attention"
_SUPPORTED = ("it supports causal masks without padding, and other masks (padding) where "
              "the kernel library has mask and bias kernels (D = 64, 128, 256) only")


# --------------------------------------------------------------------------
# Registration.


def register(name: str = NAME) -> str:
    """Register the attention function (and, from transformers 4.53, its mask
    function) under ``name``; return ``name``.

    Idempotent. Raises ValueError for a name transformers treats specially
    (``eager``, or one containing ``sdpa``, ``flash``, ``flex`` or ``paged``)
    or one already registered to another function, and RuntimeError for
    transformers older than :data:`MIN_TRANSFORMERS`.
    """
    _check_name(name)
    _check_version()
    functions = modeling_utils.ALL_ATTENTION_FUNCTIONS
    current = functions.get(name)
    if current is not None and current is not tiled_attn_attention_forward:
        raise ValueError(
            f"attn_implementation {name!r} is already registered with transformers, to "
            f"{getattr(current, '__qualname__', current)!r}; register tiled_attn under another name"
        )
    interface = getattr(modeling_utils, "AttentionInterface", None)
    if interface is not None:  # 4.51 on: a class-wide mapping
        interface.register(name, tiled_attn_attention_forward)
    else:  # 4.48-4.50: a dict
        functions[name] = tiled_attn_attention_forward
    masks = _mask_interface()
    if masks is not None:
        masks.register(name, _sdpa_mask)
    return name


def set_attn_implementation(model: Any, name: str = NAME) -> None:
    """Switch a built model to attention implementation ``name`` (weights unchanged).

    Uses ``model.set_attn_implementation`` (transformers 4.56 on), which checks
    the name; before that, sets ``model.config._attn_implementation``, which the
    attention layers read on every forward.
    """
    setter = getattr(model, "set_attn_implementation", None)
    if callable(setter):
        setter(name)
    else:
        model.config._attn_implementation = name


def _check_name(name: Any) -> None:
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9_.-]+", name):
        raise ValueError(
            f"attn_implementation name must be letters, digits, '_', '.' or '-', got {name!r}"
        )
    if name == "eager" or any(part in name for part in _RESERVED_PARTS):
        raise ValueError(
            f"attn_implementation name {name!r} is reserved: transformers treats 'eager' and "
            f"names containing {', '.join(map(repr, _RESERVED_PARTS))} as its own implementations"
        )


def _check_version() -> None:
    have = Version(transformers.__version__)
    if have < Version(MIN_TRANSFORMERS) or not hasattr(modeling_utils, "ALL_ATTENTION_FUNCTIONS"):
        raise RuntimeError(
            f"tiled_attn's transformers integration needs transformers >= {MIN_TRANSFORMERS} "
            f"(models that dispatch through ALL_ATTENTION_FUNCTIONS); this is "
            f"{transformers.__version__}"
        )


def _mask_interface() -> Optional[Any]:
    """transformers' ``AttentionMaskInterface`` class (4.53 on), else None."""
    return getattr(_masking_utils, "AttentionMaskInterface", None)


def _sdpa_mask(*args: Any, **kwargs: Any) -> Any:
    """The mask function registered for tiled_attn: SDPA's, looked up at call time.

    None where SDPA would use ``is_causal`` (no padding, query length 1 or
    equal to the key length), a boolean ``[B, 1, S_q, S_k]`` mask otherwise.
    """
    return _masking_utils.ALL_MASK_ATTENTION_FUNCTIONS["sdpa"](*args, **kwargs)


def _check_mask_function(module: Any) -> None:
    """RuntimeError when transformers would build no mask for this implementation.

    From 4.53, an implementation with no entry in ``AttentionMaskInterface``
    gets ``attention_mask=None`` whatever the padding, which would go unseen.
    """
    masks = _mask_interface()
    config = getattr(module, "config", None)
    name = getattr(config, "_attn_implementation", None)
    if masks is None or not isinstance(name, str) or name in masks._global_mapping:
        return
    raise RuntimeError(
        f"{_PREFIX}: attn_implementation {name!r} has no mask function in transformers' "
        f"AttentionMaskInterface, so padding masks would be dropped without a word; register it "
        f"with tiled_attn.integrations.transformers.register({name!r})"
    )


# --------------------------------------------------------------------------
# The attention function.


def tiled_attn_attention_forward(
    module: torch.nn.Module,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: Optional[torch.Tensor],
    scaling: Optional[float] = None,
    dropout: float = 0.0,
    **kwargs: Any,
) -> Tuple[torch.Tensor, None]:
    """transformers' attention-function contract, computed by :func:`tiled_attn.sdpa`.

    Args:
        module: the attention layer (read: ``is_causal``, ``config``).
        query: ``[B, H, S_q, D]``; key, value: ``[B, H_kv, S_k, D]`` with
            ``H_kv`` dividing ``H``; CUDA, fp16 or bf16.
        attention_mask: None, or a mask that is exactly causal (see the module
            docstring); anything else raises NotImplementedError.
        scaling: the softmax scale; ``1/sqrt(D)`` when None.
        dropout: must be 0.
        kwargs: ``is_causal`` is read when the mask is None, ``sliding_window``
            (None or the keys a query sees, itself included) and ``softcap``
            (None, or the logit soft-cap ``c`` of ``c * tanh(scaling * q.k / c)``)
            always; ``s_aux``/``sinks``, ``position_bias`` and ``cache`` must be
            None.

    Returns:
        ``(attn_output, None)``, ``attn_output`` a contiguous ``[B, S_q, H, D]`` tensor.
    """
    _check_options(module, query, key, value, dropout, kwargs)
    s_q = query.shape[2]
    window = _sliding_window(kwargs)
    if attention_mask is not None and torch.compiler.is_compiling():
        # Under torch.compile (transformers compiles static-cache decoding)
        # the mask is not read on the host, which would break the graph in
        # every layer and make Dynamo recompile: it runs as tiled_attn.sdpa's
        # attn_mask on the library's mask (bool) or bias (float) kernels,
        # which read it on the GPU.
        if window is not None or kwargs.get("softcap"):
            raise NotImplementedError(
                f"{_PREFIX}: under torch.compile a mask tensor with a sliding window or a "
                "soft-cap is not supported (it would be read on the host)")
        batch, heads, _, _ = query.shape
        result = torch.empty(batch, s_q, heads, value.shape[-1], dtype=query.dtype,
                             device=query.device)
        tiled_attn.sdpa(query, key, value, attention_mask[..., :key.shape[2]], scale=scaling,
                        enable_gqa=key.shape[1] != heads, out=result.transpose(1, 2))
        return result, None
    try:
        causal, align, keys = _resolve_mask(module, attention_mask, s_q, key.shape[2], kwargs,
                                            window)
    except _NotCausalMask as refusal:
        return _masked_sdpa(query, key, value, attention_mask[..., :key.shape[2]], scaling,
                            window, kwargs.get("softcap"), refusal), None
    first = 0
    if window is not None and s_q == 1:  # one query: its window is its last `window` keys
        first, window = max(0, keys - window), None
    if first or keys != key.shape[2]:
        key, value = key[:, :, first:keys], value[:, :, first:keys]
    out = _grouped_sdpa(query, key, value, causal, align, scaling, window,
                        kwargs.get("softcap"))
    return out, None


def _masked_sdpa(
    query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, mask: torch.Tensor,
    scale: Optional[float], window: Optional[int], softcap: Optional[float],
    refusal: NotImplementedError,
) -> torch.Tensor:
    """A mask that is no causal mask (a padded batch, say) as tiled_attn.sdpa's
    ``attn_mask``: as booleans where it holds only 0 and the dtype's minimum
    (or is boolean), which run on the library's ``mask`` kernels, else as the
    additive float mask it is, on its ``bias`` kernels. Without such kernels (or with a
    sliding window or a soft-cap, which they do not combine with), the
    NotImplementedError names the mask and why."""
    if window is not None or softcap:
        raise refusal
    keep, odd = _keep(mask)
    attn_mask = mask if odd is not None and bool(odd.any()) else keep
    batch, heads, s_q, _ = query.shape
    result = torch.empty(batch, s_q, heads, value.shape[-1], dtype=query.dtype,
                         device=query.device)
    # A causal mask with padding runs causal too: the same keys, and the key
    # blocks above the diagonal skipped (half a prefill's work).
    causal = s_q > 1 and getattr(refusal, "within_causal", False)
    try:
        try:
            tiled_attn.sdpa(query, key, value, attn_mask, is_causal=causal, scale=scale,
                            enable_gqa=key.shape[1] != heads, out=result.transpose(1, 2))
        except tiled_attn.NoKernelError:
            if not causal:
                raise
            tiled_attn.sdpa(query, key, value, attn_mask, scale=scale,
                            enable_gqa=key.shape[1] != heads, out=result.transpose(1, 2))
    except tiled_attn.NoKernelError as error:
        # The library has no mask (bias) kernels, or none of this dtype,
        # head dim and GPU.
        raise NotImplementedError(
            f"{refusal} (A mask like this runs on the library's mask or bias kernels, as "
            f"tiled_attn.sdpa's attn_mask, and this library has none for {query.dtype} and "
            f"D={query.shape[-1]} on this GPU.)") from error
    return result


def _sliding_window(kwargs: dict) -> Optional[int]:
    """The ``sliding_window`` keyword: None, or the number of keys a query sees
    (itself included); NotImplementedError for anything else."""
    window = kwargs.get("sliding_window")
    if window is None:
        return None
    if isinstance(window, bool) or not isinstance(window, int) or window < 1:
        raise NotImplementedError(
            f"{_PREFIX}: sliding_window={window!r} is not supported; it takes None or a "
            "positive number of keys"
        )
    return window


def _check_options(
    module: Any, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
    dropout: float, kwargs: dict,
) -> None:
    """NotImplementedError for what tiled_attn.sdpa does not compute."""
    _check_mask_function(module)
    if dropout:
        raise NotImplementedError(
            f"{_PREFIX}: dropout {dropout} is not supported (tiled_attn.sdpa has no attention "
            "dropout); transformers passes 0 in eval mode (model.eval()) and in training for a "
            "config of attention_dropout=0"
        )
    for option in ("s_aux", "sinks", "position_bias", "cache"):
        if kwargs.get(option) is not None:
            raise NotImplementedError(
                f"{_PREFIX}: {option!r} is not supported; use attn_implementation=\"sdpa\" "
                "or \"eager\" for this model"
            )
    if kwargs.get("output_attentions"):
        _warn_once("weights", f"{_PREFIX}: output_attentions=True is not supported; "
                              "the attention weights are returned as None")


def _resolve_mask(
    module: Any, mask: Optional[torch.Tensor], s_q: int, s_k: int, kwargs: dict,
    window: Optional[int] = None,
) -> Tuple[bool, str, int]:
    """(causal, alignment, number of keys to keep) for this call; a mask must be
    causal, intersected with the sliding window when ``window`` is given."""
    if mask is None:  # SDPA's rule: is_causal when S_q > 1, top-left
        is_causal = kwargs.get("is_causal")
        if is_causal is None:
            is_causal = getattr(module, "is_causal", True)
        causal = bool(s_q > 1 and is_causal)
        return causal, "top_left", min(s_k, s_q) if causal else s_k
    offset = _causal_offset(mask, s_q, s_k, window)
    if offset + 1 >= s_k and (window is None or s_q == 1):
        # Query 0, and so every query, sees every key (but for a window, which
        # then, for one query, drops the keys before it).
        return False, "top_left", s_k
    keys = s_q + offset
    if keys > s_k:
        raise NotImplementedError(
            f"{_PREFIX}: the attention_mask is causal with query i seeing keys j <= i + {offset}, "
            f"but with {s_q} queries and {s_k} keys that is neither top-left nor bottom-right "
            "aligned after dropping unseen keys"
        )
    causal = s_q > 1
    return causal, "bottom_right" if causal and offset > 0 else "top_left", keys


def _grouped_sdpa(
    query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, causal: bool, align: str,
    scale: Optional[float], window: Optional[int] = None, softcap: Optional[float] = None,
) -> torch.Tensor:
    """tiled_attn.sdpa on ``[B, H, S_q, D]`` queries and ``[B, H_kv, S_k, D]`` keys,
    into a new contiguous ``[B, S_q, H, D]`` tensor (the kernel writes that
    layout through ``out``'s strides, so no transpose copy follows). ``window``
    is transformers' ``sliding_window`` (several queries only), ``softcap``
    its logit soft-cap (None or 0: none)."""
    sdpa = tiled_attn.sdpa
    keywords = _keywords(sdpa)
    extra = {}
    if window is not None:
        if "window_size" not in keywords:
            raise NotImplementedError(
                f"{_PREFIX}: this layer has a sliding window of {window} keys, and this "
                "tiled_attn.sdpa has no window_size keyword"
            )
        # transformers' convention, as its flash-attention path passes it;
        # with the causal mask, the keys i + o - (window - 1) .. i + o.
        extra["window_size"] = (window - 1, window - 1)
    if softcap is not None and softcap != 0:
        if "softcap" not in keywords:
            raise NotImplementedError(
                f"{_PREFIX}: this layer soft-caps its attention scores (softcap={softcap!r}), "
                "and this tiled_attn.sdpa has no softcap keyword"
            )
        # transformers' meaning is FlashAttention's: softcap * tanh(scaling * q.k / softcap).
        extra["softcap"] = softcap
    if align == "bottom_right":
        if "causal_align" not in keywords:
            raise NotImplementedError(
                f"{_PREFIX}: {query.shape[2]} queries after {key.shape[2] - query.shape[2]} cached "
                "keys need a bottom-right aligned causal mask (chunked prefill, speculative "
                "decoding), and this tiled_attn.sdpa has only top-left causal; generate() with a "
                "dynamic or static cache needs neither"
            )
        extra["causal_align"] = "bottom_right"
    batch, heads, s_q, dim = query.shape
    kv_heads = key.shape[1]
    if _needs_grad(query, key, value):
        # Training: the differentiable call returns its own [B, H, S_q, D_v]
        # output (autograd has no out=); transformers' reshape after the
        # attention copies the transpose.
        if heads != kv_heads and "enable_gqa" not in keywords:
            key, value = (t.repeat_interleave(heads // kv_heads, dim=1) for t in (key, value))
        elif heads != kv_heads:
            extra["enable_gqa"] = True
        return sdpa(query, key, value, causal=causal, scale=scale, **extra).transpose(1, 2)
    # The result in transformers' [B, S_q, H, D] layout, written there by the
    # kernel (its output strides are parameters): no transpose copy after.
    result = torch.empty(batch, s_q, heads, value.shape[-1], dtype=query.dtype,
                         device=query.device)
    extra["out"] = result.transpose(1, 2)
    if heads == kv_heads:
        sdpa(query, key, value, causal=causal, scale=scale, **extra)
        return result
    if kv_heads == 0 or heads % kv_heads:
        raise ValueError(
            f"{_PREFIX}: query has {heads} heads and key {kv_heads}; grouped attention needs the "
            "key's head count to divide the query's"
        )
    groups = heads // kv_heads
    if s_q == 1 and not causal and window is None:  # the heads of a group become the query rows
        packed = query.reshape(batch, kv_heads, groups, dim)
        extra["out"] = result.view(batch, kv_heads, groups, value.shape[-1])
        sdpa(packed, key, value, causal=False, scale=scale, **extra)
        return result
    if "enable_gqa" in keywords:
        sdpa(query, key, value, causal=causal, scale=scale, enable_gqa=True, **extra)
        return result
    key, value = (t.repeat_interleave(groups, dim=1) for t in (key, value))
    sdpa(query, key, value, causal=causal, scale=scale, **extra)
    return result


def _needs_grad(*tensors: torch.Tensor) -> bool:
    """Whether autograd records this call: grad mode on and an input requiring grad."""
    return torch.is_grad_enabled() and any(t.requires_grad for t in tensors)


@functools.lru_cache(maxsize=8)
def _keywords(fn: Callable) -> FrozenSet[str]:
    """The parameter names of ``fn`` (empty when it has no signature)."""
    try:
        return frozenset(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return frozenset()


_WARNED = set()


def _warn_once(key: str, message: str) -> None:
    if key not in _WARNED:
        _WARNED.add(key)
        warnings.warn(message, stacklevel=4)


# --------------------------------------------------------------------------
# Reading a mask.


class _LastMask:
    """The last mask read and its offset, or the refusal of a mask that is no
    causal mask (then run as attn_mask): every layer of a forward gets the
    same mask (the sliding-window layers theirs)."""

    def __init__(self) -> None:
        self._entry: Optional[Tuple[Any, int, int, int, Optional[int], Any]] = None

    def get(self, mask: torch.Tensor, s_q: int, s_k: int, window: Optional[int]) -> Any:
        entry, version = self._entry, _version(mask)
        if entry is None or version is None:
            return None
        ref, old_version, old_q, old_k, old_window, offset = entry
        if ref() is mask and (old_version, old_q, old_k, old_window) == (version, s_q, s_k,
                                                                        window):
            return offset
        return None

    def put(self, mask: torch.Tensor, s_q: int, s_k: int, window: Optional[int],
            offset: Any) -> None:
        version = _version(mask)
        self._entry = (None if version is None
                       else (weakref.ref(mask), version, s_q, s_k, window, offset))


def _version(mask: torch.Tensor) -> Optional[int]:
    """The tensor's version counter; None for inference tensors, which have none."""
    try:
        return int(mask._version)
    except (RuntimeError, AttributeError):
        return None


_LAST_MASK = _LastMask()


class _NotCausalMask(NotImplementedError):
    """A mask that is no causal mask (padding, packed sequences, a custom 4D
    mask): :func:`_masked_sdpa` runs it on the library's mask or bias kernels where
    there are some. ``within_causal``: no query sees a key after its own
    position (top-left), as with a causal mask and padding."""

    within_causal = False


class _Refusal(NamedTuple):
    """What _causal_offset found of a mask that is no causal mask: the
    refusal's message and whether the mask lets no query see a later key."""
    message: str
    within_causal: bool

    def error(self) -> "_NotCausalMask":
        refusal = _NotCausalMask(self.message)
        refusal.within_causal = self.within_causal
        return refusal


def _causal_offset(mask: Any, s_q: int, s_k: int, window: Optional[int] = None) -> int:
    """The ``o >= 0`` such that ``mask[..., :s_k]`` lets query ``i`` see exactly the
    keys ``j <= i + o`` (and ``j > i + o - window`` with a sliding window), in
    every batch row and head; NotImplementedError otherwise.

    A boolean mask is True where a query attends; a float mask is added to the
    scores, so it must be 0 there and the dtype's minimum or -inf elsewhere.
    """
    _check_mask_shape(mask, s_q, s_k)
    cached = _LAST_MASK.get(mask, s_q, s_k, window)
    if isinstance(cached, _Refusal):
        raise cached.error()
    if cached is not None:
        return cached
    keep, odd = _keep(mask[..., :s_k])
    if keep.numel() == 0:  # no query or no batch row: nothing to attend
        return 0
    device = keep.device
    rows = torch.arange(s_q, device=device).view(s_q, 1)
    cols = torch.arange(s_k, device=device).view(1, s_k)
    seen = keep[0, 0, 0].sum()  # keys query 0 sees: o + 1 (without a window)
    if window is None:
        offset = seen - 1
        expected = cols <= rows + offset
    else:  # the last key query 0 sees
        offset = torch.where(keep[0, 0, 0], cols[0], -1).max()
        expected = (cols <= rows + offset) & (cols > rows + offset - window)
    ok = (keep == expected).all()
    if odd is not None:
        ok = ok & ~odd.any()
    # Read in the same synchronisation: whether the mask lets no query see a
    # key after its own position (a causal mask with padding), which
    # _masked_sdpa then runs causal (the blocks above the diagonal skipped).
    # (A float mask's other finite values are added to visible scores.)
    visible = keep if odd is None else keep | odd
    within = ~(visible & (cols > rows)).any()
    ok_host, seen_host, offset_host, within_host = torch.stack(
        [ok.long(), seen.long(), offset.long(), within.long()]).tolist()
    if not ok_host or seen_host == 0:
        # Kept as its message and flag, never raised itself: a raised one's
        # traceback would hold this call's tensors while it is cached.
        verdict = _Refusal(_mask_error(mask, keep, odd, expected, seen_host, window),
                           bool(within_host) and window is None)
        _LAST_MASK.put(mask, s_q, s_k, window, verdict)
        raise verdict.error()
    _LAST_MASK.put(mask, s_q, s_k, window, offset_host)
    return offset_host


def _check_mask_shape(mask: Any, s_q: int, s_k: int) -> None:
    if not isinstance(mask, torch.Tensor):
        raise NotImplementedError(
            f"{_PREFIX}: {_SUPPORTED}; it got an attention_mask of type {type(mask).__name__}"
        )
    shape = tuple(mask.shape)
    if len(shape) != 4 or shape[2] != s_q or shape[3] < s_k:
        raise NotImplementedError(
            f"{_PREFIX}: {_SUPPORTED}, as a [B, 1, S_q, S_k] mask; it got an attention_mask of "
            f"shape {shape} and dtype {mask.dtype} for {s_q} queries and {s_k} keys"
        )


def _keep(mask: torch.Tensor) -> Tuple[torch.Tensor, Optional[torch.Tensor]]:
    """(where the mask attends, where a float mask holds a value that is neither
    0 nor fully masked: None for a boolean mask)."""
    if mask.dtype == torch.bool:
        return mask, None
    if not mask.is_floating_point():
        raise NotImplementedError(
            f"{_PREFIX}: {_SUPPORTED}; it got an attention_mask of shape {tuple(mask.shape)} and "
            f"dtype {mask.dtype} (neither boolean nor floating point)"
        )
    keep = mask == 0
    return keep, ~keep & ~(mask <= torch.finfo(mask.dtype).min)


def _mask_error(
    mask: torch.Tensor, keep: torch.Tensor, odd: Optional[torch.Tensor],
    expected: torch.Tensor, first: int, window: Optional[int] = None,
) -> str:
    """The message for a mask that is not causal: what it is and where it differs."""
    kind = "causal mask" if window is None else f"causal mask with a sliding window of {window}"
    if first == 0:
        detail = "query 0 of batch row 0 attends to no key (left padding?)"
    elif odd is not None and bool(odd.any()):
        b, h, i, j = (odd.nonzero()[0]).tolist()
        detail = (f"it holds {mask[b, h, i, j].item()} at batch row {b}, head {h}, query {i}, "
                  f"key {j}, neither 0 (attend) nor the dtype's minimum (masked)")
    else:
        b, h, i = ((keep != expected).any(dim=-1).nonzero()[0]).tolist()
        seen, causal_seen = int(keep[b, h, i].sum()), int(expected[i].sum())
        detail = (f"query {i} of batch row {b} (head {h}) attends to {seen} keys where a {kind} "
                  f"aligned like query 0 of row 0 gives {causal_seen}")
    return (
        f"{_PREFIX}: {_SUPPORTED}; it got an attention_mask of shape {tuple(mask.shape)} and "
        f"dtype {mask.dtype} that is not one: {detail}. Such masks come from padded batches (an "
        "attention_mask with zeros), packed sequences, sliding windows not passed as "
        "sliding_window, or custom 4D masks; run those with attn_implementation=\"sdpa\""
    )

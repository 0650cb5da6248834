"""Argument checks for :func:`tiled_attn.sdpa`, independent of torch.

The functions here read only ``.device`` (with ``.type`` and ``.index``),
``.dtype`` (through ``str()``: ``"torch.float16"``), ``.shape``,
``.stride()`` and ``.data_ptr()``, so they work on torch tensors and on the
stand-ins of the unit tests alike. Bad arguments raise :class:`TypeError`
(wrong kind of value) or :class:`ValueError` (right kind, wrong value); each
message names the argument and the value.
"""

from __future__ import annotations

import ctypes
import math
import numbers
from dataclasses import dataclass
from typing import Any, Collection, Optional, Sequence, Tuple

__all__ = [
    "SUPPORTED_HEAD_DIMS",
    "TORCH_DTYPES",
    "SdpaProblem",
    "check_head_dim",
    "copy_reason",
    "validate_inputs",
]

#: torch dtype (as ``str(dtype)``) -> the manifest's dtype name.
TORCH_DTYPES = {"torch.float16": "f16", "torch.bfloat16": "bf16"}
#: Bytes per element of each manifest dtype.
ITEMSIZE = {"f16": 2, "bf16": 2}
#: The head dimensions the runtime is built for; the library may hold fewer.
SUPPORTED_HEAD_DIMS: Tuple[int, ...] = (64, 128)

_NAMES = ("q", "k", "v")


@dataclass(frozen=True)
class SdpaProblem:
    """The checked shape of one attention call."""

    batch: int
    heads: int
    seq_q: int
    seq_k: int
    head_dim: int
    dtype: str
    causal: bool
    scale: float

    @property
    def causal_mode(self) -> str:
        """The manifest's name for the mask: PyTorch's ``is_causal`` is top-left."""
        return "top_left" if self.causal else "none"

    @property
    def is_empty(self) -> bool:
        """Whether the output has no elements (so no kernel needs to run)."""
        return self.batch * self.heads * self.seq_q == 0

    @property
    def itemsize(self) -> int:
        """Bytes per element."""
        return ITEMSIZE[self.dtype]


def validate_inputs(
    q: Any,
    k: Any,
    v: Any,
    causal: Any = False,
    scale: Any = None,
    head_dims: Optional[Collection[int]] = SUPPORTED_HEAD_DIMS,
) -> SdpaProblem:
    """Check the arguments of ``sdpa(q, k, v, causal, scale)``.

    ``head_dims`` lists the supported head dimensions; ``None`` skips that
    check (see :func:`check_head_dim`). Returns the problem's sizes, its
    dtype and its resolved scale (``1/sqrt(D)`` by default).
    """
    tensors = (q, k, v)
    for name, t in zip(_NAMES, tensors):
        _check_tensor_like(name, t)
    _check_devices(tensors)
    dtype = _check_dtypes(tensors)
    shapes = [_check_rank(name, t) for name, t in zip(_NAMES, tensors)]
    _check_shapes(*shapes)
    batch, heads, seq_q, head_dim = shapes[0]
    if head_dims is not None:
        check_head_dim(head_dim, head_dims)
    _check_causal(causal)
    return SdpaProblem(
        batch=batch,
        heads=heads,
        seq_q=seq_q,
        seq_k=shapes[1][2],
        head_dim=head_dim,
        dtype=dtype,
        causal=causal,
        scale=_check_scale(scale, head_dim),
    )


def check_head_dim(head_dim: int, head_dims: Collection[int]) -> None:
    """ValueError unless ``head_dim`` is one of ``head_dims``."""
    if head_dim not in head_dims:
        have = ", ".join(map(str, sorted(head_dims))) or "none"
        raise ValueError(
            f"head dim D={head_dim} is not supported; the kernel library has head dims {have}"
        )


def copy_reason(t: Any, itemsize: int, align_bytes: int) -> Optional[str]:
    """Why ``t`` must be copied to a fresh contiguous tensor, or None.

    The kernels take any strides, in elements, with a unit last dimension.
    A tensor whose last-dimension stride is not 1 is copied; so is one whose
    data pointer, or whose stride along a dimension longer than 1, is not a
    multiple of ``align_bytes`` bytes (the kernels load rows with vector
    loads of that width).
    """
    shape = tuple(int(s) for s in t.shape)
    strides = tuple(int(s) for s in t.stride())
    if strides[-1] != 1:
        return f"its last-dimension stride is {strides[-1]}, not 1"
    pointer = int(t.data_ptr()) if hasattr(t, "data_ptr") else 0
    if pointer % align_bytes:
        return f"its data pointer {pointer:#x} is not {align_bytes}-byte aligned"
    for dim, (size, stride) in enumerate(zip(shape[:-1], strides[:-1])):
        if size > 1 and (stride * itemsize) % align_bytes:
            return (
                f"its stride along dimension {dim} ({stride} elements) is not a "
                f"multiple of {align_bytes} bytes"
            )
    return None


# --------------------------------------------------------------------------
# The individual checks.


def _check_tensor_like(name: str, t: Any) -> None:
    missing = [a for a in ("shape", "dtype", "device", "stride") if not hasattr(t, a)]
    if missing:
        raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")


def _device_key(t: Any) -> Tuple[str, Optional[int]]:
    return (t.device.type, t.device.index)


def _check_devices(tensors: Sequence[Any]) -> None:
    for name, t in zip(_NAMES, tensors):
        if t.device.type != "cuda":
            raise ValueError(f"{name} is on {t.device}; tiled_attn.sdpa needs CUDA tensors")
    for name, t in zip(_NAMES[1:], tensors[1:]):
        if _device_key(t) != _device_key(tensors[0]):
            raise ValueError(
                f"{name} is on {t.device} but q is on {tensors[0].device}; "
                "q, k and v must be on the same device"
            )


def _check_dtypes(tensors: Sequence[Any]) -> str:
    """The common dtype's manifest name; TypeError when unsupported or mixed."""
    for name, t in zip(_NAMES, tensors):
        if str(t.dtype) not in TORCH_DTYPES:
            raise TypeError(
                f"{name} has dtype {t.dtype}; tiled_attn.sdpa supports "
                f"{' and '.join(TORCH_DTYPES)}"
            )
    for name, t in zip(_NAMES[1:], tensors[1:]):
        if str(t.dtype) != str(tensors[0].dtype):
            raise TypeError(
                f"{name} has dtype {t.dtype} but q has {tensors[0].dtype}; "
                "q, k and v must have the same dtype"
            )
    return TORCH_DTYPES[str(tensors[0].dtype)]


def _check_rank(name: str, t: Any) -> Tuple[int, int, int, int]:
    shape = tuple(int(s) for s in t.shape)
    if len(shape) != 4:
        raise ValueError(
            f"{name} must have rank 4 [B, H, S, D], got rank {len(shape)} with shape {shape}"
        )
    return shape  # type: ignore[return-value]


def _check_shapes(
    q: Tuple[int, int, int, int], k: Tuple[int, int, int, int], v: Tuple[int, int, int, int]
) -> None:
    """Batch, heads and D agree across q, k, v; k and v agree on S; S_k >= 1."""
    for name, shape in (("k", k), ("v", v)):
        for dim, what in ((0, "batch size"), (1, "head count"), (3, "head dim")):
            if shape[dim] != q[dim]:
                raise ValueError(
                    f"{name} has {what} {shape[dim]} but q has {q[dim]} "
                    f"(q {q}, {name} {shape})"
                )
    if v[2] != k[2]:
        raise ValueError(f"v has sequence length {v[2]} but k has {k[2]} (k {k}, v {v})")
    if k[2] < 1:
        raise ValueError(f"k has sequence length {k[2]}; tiled_attn.sdpa needs at least one key")


def _check_causal(causal: Any) -> None:
    if not isinstance(causal, bool):
        raise TypeError(f"causal must be a bool, got {type(causal).__name__} {causal!r}")


def _check_scale(scale: Any, head_dim: int) -> float:
    """The scale as a float, ``1/sqrt(D)`` for None; it must be a positive finite f32."""
    if scale is None:
        return 1.0 / math.sqrt(head_dim)
    if isinstance(scale, bool) or not isinstance(scale, numbers.Real):
        raise TypeError(f"scale must be a float or None, got {type(scale).__name__} {scale!r}")
    as_f32 = ctypes.c_float(float(scale)).value
    if not (math.isfinite(as_f32) and as_f32 > 0.0):
        raise ValueError(f"scale must be a finite positive float32 value, got {scale!r}")
    return float(scale)

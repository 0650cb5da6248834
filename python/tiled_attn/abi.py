"""The kernels' parameter list: ``memref-descriptor-v1``.

A kernel compiled from ``func (q, k, v, o: memref, scale: f32)`` takes each
rank-4 memref as MLIR's descriptor, expanded into 11 parameters::

    allocated pointer (u64), aligned pointer (u64), offset (i64),
    sizes[4] (i64), strides[4] (i64, in elements)

for q, k, v, o in that order, then ``scale`` (f32): 45 parameters.
``cuLaunchKernel`` takes them as a ``void*[]`` holding each value's address.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import Any, List, Sequence, Tuple

__all__ = ["KernelParams", "Memref", "pack_params", "NUM_PARAMS"]

RANK = 4
PARAMS_PER_MEMREF = 3 + 2 * RANK
NUM_PARAMS = 4 * PARAMS_PER_MEMREF + 1


@dataclass(frozen=True)
class Memref:
    """A strided view of device memory: base address, sizes and element strides."""

    pointer: int
    sizes: Tuple[int, ...]
    strides: Tuple[int, ...]

    @classmethod
    def of(cls, tensor: Any) -> "Memref":
        """The view of a tensor-like object (``data_ptr()``, ``shape``, ``stride()``)."""
        return cls(int(tensor.data_ptr()), tuple(int(s) for s in tensor.shape),
                   tuple(int(s) for s in tensor.stride()))


class KernelParams:
    """The parameter values and the ``void*[]`` pointing at them.

    Keep this object alive until ``cuLaunchKernel`` returns: the array holds
    the addresses of the values stored here.
    """

    def __init__(self, values: Sequence[Any]) -> None:
        self.values: List[Any] = list(values)
        self.array = (ctypes.c_void_p * len(self.values))(
            *(ctypes.addressof(value) for value in self.values))

    def __len__(self) -> int:
        return len(self.values)


def memref_values(memref: Memref) -> List[Any]:
    """The 11 descriptor fields of one rank-4 memref, offset 0."""
    if len(memref.sizes) != RANK or len(memref.strides) != RANK:
        raise ValueError(f"expected a rank-{RANK} memref, got sizes {memref.sizes}")
    pointer = ctypes.c_uint64(memref.pointer)
    return (
        [pointer, ctypes.c_uint64(memref.pointer), ctypes.c_int64(0)]
        + [ctypes.c_int64(s) for s in memref.sizes]
        + [ctypes.c_int64(s) for s in memref.strides]
    )


def pack_params(memrefs: Sequence[Memref], scale: float) -> KernelParams:
    """The parameters of ``sdpa_fwd(q, k, v, o, scale)``: 45 values."""
    if len(memrefs) != 4:
        raise ValueError(f"expected 4 memrefs (q, k, v, o), got {len(memrefs)}")
    values: List[Any] = []
    for memref in memrefs:
        values += memref_values(memref)
    values.append(ctypes.c_float(scale))
    return KernelParams(values)

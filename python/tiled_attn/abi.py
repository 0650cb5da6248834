"""The kernels' parameter list: ``memref-descriptor-v1``.

A kernel compiled from ``func (q, k, v, o: memref, scale: f32)`` takes each
rank-4 memref as MLIR's descriptor, expanded into 11 parameters::

    allocated pointer (u64), aligned pointer (u64), offset (i64),
    sizes[4] (i64), strides[4] (i64, in elements)

for q, k, v, o in that order, then ``scale`` (f32): 45 parameters.
``cuLaunchKernel`` takes them as a ``void*[]`` holding each value's address.
``memref-descriptor-v1-index32`` is the same list with offset, sizes and
strides as i32.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import Any, List, Sequence, Tuple

__all__ = ["INDEX_BITS", "KernelParams", "Memref", "pack_params", "NUM_PARAMS"]

#: The index width of each kernel ABI: memref-descriptor-v1 passes offset,
#: sizes and strides as i64; its -index32 variant (kernels built with
#: ``tile-to-ptx{index-bitwidth=32}``) as i32, and then every element
#: offset of every view must stay below 2**31.
INDEX_BITS = {"memref-descriptor-v1": 64, "memref-descriptor-v1-index32": 32}

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


def memref_values(memref: Memref, index_bits: int = 64) -> List[Any]:
    """The 11 descriptor fields of one rank-4 memref, offset 0; offset, sizes
    and strides are ``index_bits`` wide."""
    if len(memref.sizes) != RANK or len(memref.strides) != RANK:
        raise ValueError(f"expected a rank-{RANK} memref, got sizes {memref.sizes}")
    index = {64: ctypes.c_int64, 32: ctypes.c_int32}[index_bits]
    if index_bits == 32 and max_offset(memref) >= 2**31:
        raise ValueError(f"a 32-bit-index kernel cannot address a view whose largest "
                         f"element offset is {max_offset(memref)} (>= 2**31)")
    pointer = ctypes.c_uint64(memref.pointer)
    return (
        [pointer, ctypes.c_uint64(memref.pointer), index(0)]
        + [index(s) for s in memref.sizes]
        + [index(s) for s in memref.strides]
    )


def max_offset(memref: Memref) -> int:
    """The largest element offset of the view (0 when it is empty)."""
    if any(s == 0 for s in memref.sizes):
        return 0
    return sum((n - 1) * abs(st) for n, st in zip(memref.sizes, memref.strides))


def pack_params(memrefs: Sequence[Memref], scale: float, index_bits: int = 64) -> KernelParams:
    """The parameters of ``sdpa_fwd(q, k, v, o, scale)``: 45 values."""
    if len(memrefs) != 4:
        raise ValueError(f"expected 4 memrefs (q, k, v, o), got {len(memrefs)}")
    values: List[Any] = []
    for memref in memrefs:
        values += memref_values(memref, index_bits)
    values.append(ctypes.c_float(scale))
    return KernelParams(values)

"""Stand-ins for torch tensors, enough for the runtime's torch-free checks."""

from __future__ import annotations

from typing import Optional, Sequence, Tuple


class FakeDevice:
    """``torch.device``: ``.type``, ``.index`` and ``str()``."""

    def __init__(self, spec: str = "cuda:0") -> None:
        kind, _, index = spec.partition(":")
        self.type = kind
        self.index: Optional[int] = int(index) if index else None
        self._spec = spec

    def __str__(self) -> str:
        return self._spec


class FakeDtype:
    """``torch.dtype``: only its ``str()`` is read."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __str__(self) -> str:
        return f"torch.{self.name}"


def contiguous_strides(shape: Sequence[int]) -> Tuple[int, ...]:
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= max(size, 1)
    return tuple(reversed(strides))


class FakeTensor:
    """A tensor-like object with shape, dtype, device, strides and a data pointer."""

    def __init__(
        self,
        shape: Sequence[int],
        dtype: str = "float16",
        device: str = "cuda:0",
        strides: Optional[Sequence[int]] = None,
        pointer: int = 0x7F0000000000,
    ) -> None:
        self.shape = tuple(shape)
        self.dtype = FakeDtype(dtype)
        self.device = FakeDevice(device)
        self._strides = tuple(strides) if strides is not None else contiguous_strides(shape)
        self._pointer = pointer

    def dim(self) -> int:
        return len(self.shape)

    def stride(self) -> Tuple[int, ...]:
        return self._strides

    def data_ptr(self) -> int:
        return self._pointer


def qkv(
    b: int = 2, h: int = 4, s_q: int = 100, s_k: int = 77, d: int = 64, **kwargs
) -> Tuple[FakeTensor, FakeTensor, FakeTensor]:
    """A valid (q, k, v) triple."""
    return (FakeTensor((b, h, s_q, d), **kwargs), FakeTensor((b, h, s_k, d), **kwargs),
            FakeTensor((b, h, s_k, d), **kwargs))

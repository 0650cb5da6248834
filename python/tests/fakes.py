"""Stand-ins for torch tensors, enough for the runtime's torch-free checks,
and small kernel libraries for the C++ runtime to open."""

from __future__ import annotations

import contextlib
import json
import os
import types
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple


class FakeDevice:
    """``torch.device``: ``.type``, ``.index`` and ``str()``."""

    def __init__(self, spec: str = "cuda:0") -> None:
        kind, _, index = spec.partition(":")
        self.type = kind
        self.index: Optional[int] = int(index) if index else None
        self._spec = spec

    def __str__(self) -> str:
        return self._spec

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FakeDevice) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self) -> int:
        return hash((self.type, self.index))


class FakeDtype:
    """``torch.dtype``: only its ``str()`` is read."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __str__(self) -> str:
        return f"torch.{self.name}"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FakeDtype) and self.name == other.name

    def __hash__(self) -> int:
        return hash(self.name)

    @property
    def is_floating_point(self) -> bool:
        return "float" in self.name


def contiguous_strides(shape: Sequence[int]) -> Tuple[int, ...]:
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= max(size, 1)
    return tuple(reversed(strides))


class FakeTensor:
    """A tensor-like object with shape, dtype, device, strides, a data pointer and
    ``requires_grad`` (False unless set; views and copies keep it, as torch's
    differentiable ops do)."""

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
        self.requires_grad = False

    def requires_grad_(self, requires_grad: bool = True) -> "FakeTensor":
        self.requires_grad = requires_grad
        return self

    def dim(self) -> int:
        return len(self.shape)

    def stride(self) -> Tuple[int, ...]:
        return self._strides

    def data_ptr(self) -> int:
        return self._pointer

    def transpose(self, dim0: int, dim1: int) -> "FakeTensor":
        """A view with dimensions ``dim0`` and ``dim1`` swapped: the same data,
        their sizes and strides exchanged."""
        shape, strides = list(self.shape), list(self._strides)
        shape[dim0], shape[dim1] = shape[dim1], shape[dim0]
        strides[dim0], strides[dim1] = strides[dim1], strides[dim0]
        view = FakeTensor(shape, device=str(self.device), strides=strides, pointer=self._pointer)
        view.dtype, view.requires_grad = self.dtype, self.requires_grad
        return view

    def reshape(self, shape: Sequence[int]) -> "FakeTensor":
        """A view with leading dimensions of size 1 added (all sdpa needs)."""
        extra = len(shape) - len(self.shape)
        assert extra >= 0 and tuple(shape[extra:]) == self.shape
        view = FakeTensor(shape, device=str(self.device),
                          strides=(0,) * extra + self._strides, pointer=self._pointer)
        view.dtype, view.requires_grad = self.dtype, self.requires_grad
        return view

    def expand(self, *shape: int) -> "FakeTensor":
        """A broadcast view: stride 0 along the dimensions of size 1 made larger."""
        strides = tuple(0 if old == 1 and new != 1 else s
                        for old, new, s in zip(self.shape, shape, self._strides))
        view = FakeTensor(shape, device=str(self.device), strides=strides,
                          pointer=self._pointer)
        view.dtype, view.requires_grad = self.dtype, self.requires_grad
        return view

    def narrow(self, dim: int, start: int, length: int) -> "FakeTensor":
        """A view of ``length`` elements from ``start`` along ``dim``."""
        dim %= len(self.shape)
        shape = self.shape[:dim] + (length,) + self.shape[dim + 1:]
        view = FakeTensor(shape, device=str(self.device), strides=self._strides,
                          pointer=self._pointer + start * self._strides[dim] * _ITEM_SIZES[str(self.dtype).replace("torch.", "")])
        view.dtype, view.requires_grad = self.dtype, self.requires_grad
        return view

    @property
    def is_cuda(self) -> bool:
        return self.device.type == "cuda"

    def to(self, dtype: Any) -> "FakeTensor":
        """A contiguous copy of another dtype at a new address."""
        copy = FakeTensor(self.shape, device=str(self.device), pointer=_allocate())
        copy.dtype, copy.requires_grad = dtype, self.requires_grad
        return copy

    def copy_(self, src: "FakeTensor") -> "FakeTensor":
        """Copies nothing (fakes hold no data); checks the shapes. Requires
        grad after a copy from a tensor that does (as torch's copy_)."""
        assert tuple(src.shape) == tuple(self.shape)
        self.requires_grad = self.requires_grad or src.requires_grad
        return self

    def clone(self, memory_format: Any = None) -> "FakeTensor":
        """A contiguous copy at a new address (:func:`fake_torch`'s allocator)."""
        copy = FakeTensor(self.shape, device=str(self.device), pointer=_allocate())
        copy.dtype, copy.requires_grad = self.dtype, self.requires_grad
        return copy


_ITEM_SIZES = {"float16": 2, "bfloat16": 2, "float32": 4, "int32": 4, "int64": 8, "bool": 1,
               "int8": 1, "uint8": 1}

_NEXT_ADDRESS = [0x7E0000000000]


def _allocate() -> int:
    """A fresh, 256-byte aligned made-up device address."""
    _NEXT_ADDRESS[0] += 1 << 24
    return _NEXT_ADDRESS[0]


#: The stream fake_torch's _cuda_getCurrentRawStream gives.
FAKE_STREAM = 0x5150


def fake_torch() -> types.ModuleType:
    """A stand-in for the ``torch`` module, enough for the eager path of
    :func:`tiled_attn.sdpa_varlen` on FakeTensors: dtypes, ``empty`` (fresh
    made-up addresses) and ``zeros`` (the same, recorded in ``zeroed``),
    ``contiguous_format``, ``compiler.is_compiling``, the current stream
    (:data:`FAKE_STREAM`), the grad mode: ``is_grad_enabled`` (on at first)
    and ``no_grad()`` (a context manager that turns it off), and the
    deterministic-algorithms flags (``deterministic``, off at first)."""
    torch = types.ModuleType("torch")
    for name in ("float16", "bfloat16", "float32", "int32", "int64", "bool", "int8", "uint8"):
        setattr(torch, name, FakeDtype(name))
    torch.contiguous_format = object()  # type: ignore[attr-defined]

    def empty(shape: "Sequence[int] | int", dtype: Any = None, device: Any = None) -> FakeTensor:
        t = FakeTensor((shape,) if isinstance(shape, int) else tuple(shape), device=str(device),
                       pointer=_allocate())
        t.dtype = dtype
        return t

    torch.empty = empty  # type: ignore[attr-defined]
    #: The tensors torch.zeros made (fakes hold no data: a test reads which
    #: allocations were asked to be zero).
    torch.zeroed = []  # type: ignore[attr-defined]

    def zeros(shape: Sequence[int], dtype: Any = None, device: Any = None) -> FakeTensor:
        t = empty(shape, dtype, device)
        torch.zeroed.append(t)  # type: ignore[attr-defined]
        return t

    torch.zeros = zeros  # type: ignore[attr-defined]
    # torch.use_deterministic_algorithms(mode, warn_only=...), as the flags
    # PyTorch's functions read.
    torch.deterministic = {"enabled": False, "warn_only": False}  # type: ignore[attr-defined]
    torch.are_deterministic_algorithms_enabled = (  # type: ignore[attr-defined]
        lambda: torch.deterministic["enabled"])  # type: ignore[attr-defined]
    torch.is_deterministic_algorithms_warn_only_enabled = (  # type: ignore[attr-defined]
        lambda: torch.deterministic["warn_only"])  # type: ignore[attr-defined]
    torch.compiler = types.SimpleNamespace(is_compiling=lambda: False)  # type: ignore
    grad_mode = [True]
    torch.is_grad_enabled = lambda: grad_mode[0]  # type: ignore[attr-defined]

    @contextlib.contextmanager
    def no_grad() -> Iterator[None]:
        before, grad_mode[0] = grad_mode[0], False
        try:
            yield
        finally:
            grad_mode[0] = before

    torch.no_grad = no_grad  # type: ignore[attr-defined]
    torch._C = types.SimpleNamespace(  # type: ignore[attr-defined]
        _cuda_getCurrentRawStream=lambda device: FAKE_STREAM)
    return torch


def qkv(
    b: int = 2, h: int = 4, s_q: int = 100, s_k: int = 77, d: int = 64, **kwargs
) -> Tuple[FakeTensor, FakeTensor, FakeTensor]:
    """A valid (q, k, v) triple."""
    return (FakeTensor((b, h, s_q, d), **kwargs), FakeTensor((b, h, s_k, d), **kwargs),
            FakeTensor((b, h, s_k, d), **kwargs))


# ---------------------------------------------------------------- kernel libraries
#
# Small v2 kernel libraries for the runtime's tests, as test/Runtime/TestLibrary
# writes them for the C++ tests: a manifest, and for each kernel a PTX-like file
# whose ".entry" declares the parameters of its manifest entry (the fake
# libcuda reads their sizes from it, as the real driver does from a module).

TENSORS = ("q", "k", "v", "o")


def standard_params(index_type: str = "i64") -> List[Dict[str, Any]]:
    """ABI tiled-attn-v2's usual list: for q, k, v, o the base pointer,
    sizes[0..3] and strides[0..3] (``index_type``), then the scale."""
    params: List[Dict[str, Any]] = []
    for name in TENSORS:
        params.append({"name": name, "kind": "base", "type": "ptr"})
        for kind in ("size", "stride"):
            for dim in range(4):
                params.append({"name": name, "kind": kind, "dim": dim, "type": index_type})
    params.append({"name": "scale", "kind": "scalar", "type": "f32"})
    return params


def kernel_entry(name: str, **fields: Any) -> Dict[str, Any]:
    """A valid manifest entry (sm_80, f16, D=64, no mask, 64-bit indices, the
    standard parameters, block 128, block_m 64, 16 KiB of shared memory), with
    ``fields`` replacing or adding fields; a field given as None is removed."""
    entry: Dict[str, Any] = {
        "name": name,
        "arch": "sm_80",
        "dtype": "f16",
        "head_dim": 64,
        "causal": "none",
        "symbol": "sdpa_fwd",
        "ptx": f"{name}.ptx",
        "block": [128, 1, 1],
        "block_m": 64,
        "shared_bytes": 16384,
        "abi": "tiled-attn-v2",
        "index_bits": 64,
        "params": standard_params(),
        "schedule": {"block_n": 32, "options": "block-m=64"},
    }
    entry.update(fields)
    return {key: value for key, value in entry.items() if value is not None}


def window_entry(name: str, index_type: str = "i64", window_type: Optional[str] = None,
                 **fields: Any) -> Dict[str, Any]:
    """:func:`kernel_entry` of a "window" kernel: the standard parameters of
    ``index_type``, then the scalars window_lo and window_hi (of ``window_type``,
    default ``index_type``)."""
    params = standard_params(index_type) + [
        {"name": bound, "kind": "scalar", "type": window_type or index_type}
        for bound in ("window_lo", "window_hi")]
    fields.setdefault("index_bits", 32 if index_type == "i32" else 64)
    return kernel_entry(name, causal="window", params=params, **fields)


def lse_params(index_type: str = "i64") -> List[Dict[str, Any]]:
    """The parameters of the view "lse" as the compiler emits them: its base, its
    three sizes, the strides of dims 0 and 1."""
    return ([{"name": "lse", "kind": "base", "type": "ptr"}]
            + [{"name": "lse", "kind": "size", "dim": d, "type": index_type} for d in range(3)]
            + [{"name": "lse", "kind": "stride", "dim": d, "type": index_type} for d in range(2)])


def lse_entry(name: str, causal: str = "window", **fields: Any) -> Dict[str, Any]:
    """:func:`kernel_entry` of a kernel that writes the log-sum-exps
    (``"lse": true``), as the compiler builds them: by default a "window"
    kernel (:func:`window_entry`'s parameters), then the view lse."""
    if causal == "window":
        base = window_entry(name)
    else:
        base = kernel_entry(name, causal=causal, params=standard_params())
    base["params"] = base["params"] + lse_params()
    base["lse"] = True
    base.update(fields)
    return base


def softcap_entry(name: str, causal: str = "window", index_type: str = "i64",
                  **fields: Any) -> Dict[str, Any]:
    """:func:`kernel_entry` of a kernel compiled with softcap (``"softcap": true``),
    as the compiler builds them: by default a "window" kernel, whose parameters
    are :func:`window_entry`'s, then the f32 scalar softcap. Another ``causal``
    gives the standard parameters, then the softcap."""
    if causal == "window":
        base = window_entry(name, index_type)
    else:
        base = kernel_entry(name, causal=causal, params=standard_params(index_type),
                            index_bits=32 if index_type == "i32" else 64)
    base["params"] = base["params"] + [{"name": "softcap", "kind": "scalar", "type": "f32"}]
    base["softcap"] = True
    base.update(fields)
    return {key: value for key, value in base.items() if value is not None}


def cu_seqlens_params(index_type: str = "i64") -> List[Dict[str, Any]]:
    """The parameters of the views cu_seqlens_q and cu_seqlens_k as the compiler
    emits them: the base and size 0 of each."""
    return [param for name in ("cu_seqlens_q", "cu_seqlens_k")
            for param in ({"name": name, "kind": "base", "type": "ptr"},
                          {"name": name, "kind": "size", "dim": 0, "type": index_type})]


def varlen_entry(name: str, causal: str = "window", index_type: str = "i64",
                 softcap: bool = False, lse: bool = False, **fields: Any) -> Dict[str, Any]:
    """:func:`kernel_entry` of a kernel of variable-length batches (``"varlen":
    true``) in the ABI's order: the standard parameters, for a "window" kernel
    window_lo, window_hi and window_align, with ``softcap`` the softcap, with
    ``lse`` the view lse, then :func:`cu_seqlens_params`."""
    params = standard_params(index_type)
    if causal == "window":
        params += [{"name": scalar, "kind": "scalar", "type": index_type}
                   for scalar in ("window_lo", "window_hi", "window_align")]
    if softcap:
        params.append({"name": "softcap", "kind": "scalar", "type": "f32"})
        fields.setdefault("softcap", True)
    if lse:
        params += lse_params(index_type)
        fields.setdefault("lse", True)
    base = kernel_entry(name, causal=causal, params=params + cu_seqlens_params(index_type),
                        index_bits=32 if index_type == "i32" else 64, varlen=True)
    base.update(fields)
    return {key: value for key, value in base.items() if value is not None}


def _view_params(name: str, rank: int, index_type: str = "i64") -> List[Dict[str, Any]]:
    """A view's parameters as the compiler emits them: the base, the sizes of
    its first ``min(rank, 3)`` dimensions and the strides of all but its last."""
    return ([{"name": name, "kind": "base", "type": "ptr"}]
            + [{"name": name, "kind": "size", "dim": d, "type": index_type}
               for d in range(min(rank, 3))]
            + [{"name": name, "kind": "stride", "dim": d, "type": index_type}
               for d in range(min(rank, 4) - 1)])


def backward_params(phase: str, mask: str = "none", softcap: bool = False,
                    varlen: bool = False) -> List[Dict[str, Any]]:
    """A backward kernel's parameters in the compiler's order (as the real
    library's manifest lists them): preprocess o, do, delta, dq_accum; main
    q, k, v, do, lse, delta, dq_accum, dk, dv, the scale, a window kernel's
    window_lo and window_hi, the softcap; dq (the deterministic mode's) as
    main with dq for dq_accum, dk and dv; postprocess dq_accum, dq and the
    scale; with varlen, cu_seqlens_q (main and dq: and cu_seqlens_k, and a
    window's window_align) last."""
    views = {"preprocess": [("o", 4), ("do", 4), ("delta", 3), ("dq_accum", 4)],
             "main": [("q", 4), ("k", 4), ("v", 4), ("do", 4), ("lse", 3), ("delta", 3),
                      ("dq_accum", 4), ("dk", 4), ("dv", 4)],
             "dq": [("q", 4), ("k", 4), ("v", 4), ("do", 4), ("lse", 3), ("delta", 3),
                    ("dq", 4)],
             "postprocess": [("dq_accum", 4), ("dq", 4)]}[phase]
    scores = phase in ("main", "dq")
    params = [p for name, rank in views for p in _view_params(name, rank)]
    if phase != "preprocess":
        params.append({"name": "scale", "kind": "scalar", "type": "f32"})
    if scores and mask == "window":
        params += [{"name": bound, "kind": "scalar", "type": "i64"}
                   for bound in ("window_lo", "window_hi")]
    if scores and softcap:
        params.append({"name": "softcap", "kind": "scalar", "type": "f32"})
    if varlen:
        names = ("cu_seqlens_q", "cu_seqlens_k") if scores else ("cu_seqlens_q",)
        params += [p for name in names for p in _view_params(name, 1)]
        if scores and mask == "window":
            params.append({"name": "window_align", "kind": "scalar", "type": "i64"})
    return params


def backward_entry(name: str, phase: str, mask: str = "none", softcap: bool = False,
                   varlen: bool = False, **fields: Any) -> Dict[str, Any]:
    """A backward kernel's manifest entry ("program": "sdpa_backward"), as
    tiled-attn-compile writes it (sm_80, f16, D = 64, block_m = block_n =
    64): of ``phase`` and, for the main kernel, ``mask`` and ``softcap``;
    with ``varlen``, the sequences' offsets. ``fields`` replace or add fields."""
    symbol = "sdpa_bwd" if phase == "main" else f"sdpa_bwd_{phase}"  # (dq: sdpa_bwd_dq)
    entry = kernel_entry(name, program="sdpa_backward", phase=phase, causal=mask,
                         softcap=softcap, varlen=varlen, head_dim_v=64, symbol=symbol,
                         block_n=64, shared_bytes=92160 if phase == "main" else 18432,
                         params=backward_params(phase, mask, softcap, varlen), schedule=None)
    entry.update(fields)
    return {key: value for key, value in entry.items() if value is not None}


def backward_library_entries(dtype: str = "f16", head_dim: int = 64,
                             prefix: str = "") -> List[Dict[str, Any]]:
    """The backward kernels of one dtype and head dim, as kernels/library.json
    builds them: preprocess and postprocess (and their varlen twins), and
    main kernels of none, top_left, bottom_right and window, each with and
    without a softcap, and of none, top_left and bottom_right with varlen;
    a dq kernel (the deterministic mode's) of each non-varlen main kernel's
    mask and softcap."""
    def entry(name: str, *args: Any) -> Dict[str, Any]:
        return backward_entry(f"{prefix}{name}", *args, dtype=dtype, head_dim=head_dim,
                              head_dim_v=head_dim)

    entries = [entry(phase, phase) for phase in ("preprocess", "postprocess")]
    entries += [entry(f"{phase}_varlen", phase, "none", False, True)
                for phase in ("preprocess", "postprocess")]
    for mask in ("none", "top_left", "bottom_right", "window"):
        entries.append(entry(mask, "main", mask))
        entries.append(entry(f"{mask}_softcap", "main", mask, True))
    entries += [entry(f"{mask}_varlen", "main", mask, False, True)
                for mask in ("none", "top_left", "bottom_right")]
    for mask in ("none", "top_left", "bottom_right", "window"):
        entries.append(entry(f"{mask}_dq", "dq", mask))
        entries.append(entry(f"{mask}_softcap_dq", "dq", mask, True))
    return entries


#: What a fake cubin starts with: an ELF header's magic, which the runtime checks
#: (no NUL byte: the fake driver reads the image as text).
FAKE_CUBIN_HEADER = "\x7fELF\n"


def fake_ptx(symbol: str, params: Sequence[Dict[str, Any]], marker: str = "ptx") -> str:
    """The PTX-like text of a kernel taking ``params``, as the fake driver parses it."""
    lines = [f"// {marker}", f".visible .entry {symbol}("]
    for i, param in enumerate(params):
        kind = param.get("type")
        if kind == "tensor_map":
            lines.append(f"  .param .align 64 .b8 p{i}[128],")
        elif kind in ("i32", "f32"):
            lines.append(f"  .param .u32 p{i},")
        else:
            lines.append(f"  .param .u64 p{i},")
    return "\n".join(lines) + "\n)\n{\n  ret;\n}\n"


def write_library(
    folder: "str | os.PathLike[str]",
    entries: Sequence[Dict[str, Any]],
    *,
    version: Any = 2,
    images: bool = True,
) -> Path:
    """Writes a manifest of ``entries`` into ``folder`` (created) and, unless
    ``images`` is False, each entry's fake PTX and cubins (after
    :data:`FAKE_CUBIN_HEADER`); returns the folder."""
    root = Path(folder)
    root.mkdir(parents=True, exist_ok=True)
    manifest = {"version": version, "generator": "test", "kernels": list(entries)}
    (root / "manifest.json").write_text(json.dumps(manifest, indent=2))
    if images:
        for entry in entries:
            symbol = entry.get("symbol", "sdpa_fwd")
            params = entry.get("params", [])
            if isinstance(entry.get("ptx"), str):
                (root / entry["ptx"]).write_text(fake_ptx(symbol, params))
            for arch, file in (entry.get("cubin") or {}).items():
                (root / file).write_text(FAKE_CUBIN_HEADER
                                         + fake_ptx(symbol, params, f"cubin {arch}"))
    return root

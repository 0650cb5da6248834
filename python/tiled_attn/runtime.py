"""The C++ runtime (``libtiled_attn_runtime.so``) through its C API, by ctypes.

Everything below the torch layer lives in the runtime: the manifest, kernel
choice, argument checks, parameter packing from the manifest's record of
each kernel's parameters, TMA descriptors, the per-context module cache and
the launch through the CUDA driver API. This module only finds the library
files, declares the C types of ``include/tiled_attn/Runtime/TiledAttn.h``
and turns a failed call into the exception its status stands for. It needs
neither torch nor a GPU.

Where things are found, first match wins:

- the runtime library: ``$TILED_ATTN_RUNTIME`` (a file), the package's own
  ``tiled_attn/lib/libtiled_attn_runtime.so`` (an installed wheel), the
  repository's ``build/lib/`` (a source checkout);
- the kernel library: the ``library`` argument, ``$TILED_ATTN_KERNELS``, the
  package's ``tiled_attn/kernels/`` (an installed wheel), the repository's
  ``build/kernels/``.
"""

from __future__ import annotations

import ctypes
import os
import threading
from ctypes import (POINTER, Structure, addressof, byref, c_char_p, c_double, c_float, c_int, c_int32,
                    c_int64, c_uint32, c_uint64, c_ubyte, c_void_p)
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, FrozenSet, Optional, Sequence, Tuple

from .errors import NoKernelError, TiledAttnError

__all__ = [
    "KERNELS_ENV_VAR",
    "RUNTIME_ENV_VAR",
    "KernelInfo",
    "KernelLibrary",
    "kernel_features",
    "LaunchPlan",
    "TaSdpaBackwardArgs",
    "TaVarlen",
    "TaWindow",
    "default_library",
    "default_library_path",
    "packed_view",
    "runtime_path",
    "set_packed_tensor",
    "set_tensor",
]

RUNTIME_ENV_VAR = "TILED_ATTN_RUNTIME"
KERNELS_ENV_VAR = "TILED_ATTN_KERNELS"
RUNTIME_NAME = "libtiled_attn_runtime.so"
#: TA_API_VERSION of the header this binding was written against.
API_VERSION = 15

_PACKAGE = Path(__file__).resolve().parent
_REPO_BUILD = _PACKAGE.parents[1] / "build"

# ta_status
TA_OK = 0
TA_ERROR_INVALID_ARGUMENT = 1
TA_ERROR_NO_KERNEL = 2
TA_ERROR_LIBRARY = 3
TA_ERROR_DRIVER = 4

#: Manifest dtype name -> ta_dtype; mask name -> ta_mask. A kernel's mask
#: may also be "window" (a band of diagonals, given at launch), which is no
#: ta_mask: a window is asked for with ta_sdpa_args.window (TaWindow).
DTYPES = {"f16": 0, "bf16": 1}
MASKS = {"none": 0, "top_left": 1, "bottom_right": 2}

TA_MAX_PARAMS = 128
TA_MAX_PARAM_BYTES = 4096


_C_STRINGS: Dict[str, Any] = {}


def c_string_address(text: str) -> int:
    """The address of a NUL-terminated copy of ``text``, kept for the process
    (the names ta_sdpa_args points to: a kernel's, a function's)."""
    entry = _C_STRINGS.get(text)
    if entry is None:
        # setdefault: two threads' first calls keep one buffer, so that no
        # address handed out is freed.
        entry = _C_STRINGS.setdefault(text, ctypes.create_string_buffer(text.encode()))
    return ctypes.addressof(entry)


class TaTensor(Structure):
    _fields_ = [("data", c_uint64), ("sizes", c_int64 * 4), ("strides", c_int64 * 4)]


class TaWindow(Structure):
    """ta_window: FlashAttention's window_size (left, right), -1 = no bound on
    that side; ``enabled`` 0 is no window; ``bottom_right`` the alignment
    without a causal mask (with one it must be the mask's)."""

    _fields_ = [("enabled", c_int32), ("bottom_right", c_int32), ("left", c_int64),
                ("right", c_int64)]


class TaVarlen(Structure):
    """ta_varlen: a variable-length batch, ``enabled`` 0 for none; ``num_seqs``
    sequences whose int32 offsets (``num_seqs + 1`` each) are at the device
    addresses ``cu_seqlens_q`` and ``cu_seqlens_k``, none longer than
    ``max_seqlen_q`` queries and ``max_seqlen_k`` keys; q, k, v and o are then
    ``[1, H, total, D]`` views of packed ``[total, H, D]`` tensors."""

    _fields_ = [("enabled", c_int32), ("num_seqs", c_int64), ("cu_seqlens_q", c_uint64),
                ("cu_seqlens_k", c_uint64), ("max_seqlen_q", c_int64),
                ("max_seqlen_k", c_int64)]


#: ta_capture_type, by torch dtype name (one byte, i8: bool, int8 or uint8).
CAPTURE_TYPES = {"float32": 0, "int32": 1, "float16": 2, "bfloat16": 3, "bool": 4,
                 "int8": 4, "uint8": 4}
#: ta_capture_type's names, as the manifest spells them.
CAPTURE_TYPE_NAMES = ("f32", "i32", "f16", "bf16", "i8")


class TaCapture(Structure):
    """ta_capture: a captured input of a score or mask function, by name: a
    view (``rank`` 1-4: device address, sizes, strides in elements) or a
    scalar (``rank`` 0, in ``scalar``)."""

    _fields_ = [("name", c_char_p), ("type", c_int), ("rank", c_int32), ("data", c_uint64),
                ("sizes", c_int64 * 4), ("strides", c_int64 * 4), ("scalar", c_double)]


class TaCaptureInfo(Structure):
    _fields_ = [("name", c_char_p), ("function", c_char_p), ("type", c_int),
                ("rank", c_int32), ("align_bytes", c_int32)]


class TaSdpaArgs(Structure):
    """ta_sdpa_args; ``softcap`` > 0 soft-caps the scores to
    ``softcap * tanh(scale * q.k / softcap)`` (0: off); ``lse``, the address of a
    contiguous ``[B, H, S_q]`` float32 tensor, gets the rows' log-sum-exps (0: none);
    ``varlen`` makes the call a variable-length batch (:class:`TaVarlen`)."""

    _fields_ = [("q", TaTensor), ("k", TaTensor), ("v", TaTensor), ("o", TaTensor),
                ("dtype", c_int), ("mask", c_int), ("scale", c_float), ("kernel", c_char_p),
                ("window", TaWindow), ("softcap", c_float), ("lse", c_uint64),
                ("varlen", TaVarlen), ("score_function", c_char_p),
                ("mask_function", c_char_p), ("captures", c_void_p),
                ("num_captures", c_int32), ("num_splits", c_int32),
                ("workspace", c_uint64), ("workspace_bytes", c_uint64),
                ("seqused_k", c_uint64)]


class TaSdpaBackwardArgs(Structure):
    """ta_sdpa_backward_args (API version 15): the gradients ``dq``, ``dk`` and
    ``dv`` of one attention call, given ``d_o``, the gradient of its output.
    ``forward`` is the call as ta_sdpa was given it, its output ``o`` and
    its log-sum-exps ``lse`` included (both read); ``workspace`` the device
    address of ``workspace_bytes`` bytes (at least what
    :meth:`KernelLibrary.backward_workspace_size` says, 256-byte aligned)
    that the call overwrites; ``deterministic`` non-zero: dq by the
    deterministic mode's dq kernel (API version 15)."""

    _fields_ = [("forward", TaSdpaArgs), ("d_o", TaTensor), ("dq", TaTensor),
                ("dk", TaTensor), ("dv", TaTensor), ("workspace", c_uint64),
                ("workspace_bytes", c_uint64), ("deterministic", c_int32)]


class TaBlockMaskArgs(Structure):
    """ta_block_mask_args: the block kinds of a library mask function's mask
    (``mask_function``, its ``captures``), of ``seq_q`` x ``seq_k``, into the
    int8 ``[B, H, ceil(seq_q / 128), ceil(seq_k / 128)]`` ``block_kinds``."""

    _fields_ = [("mask_function", c_char_p), ("captures", c_void_p),
                ("num_captures", c_int32), ("seq_q", c_int64), ("seq_k", c_int64),
                ("block_kinds", TaTensor)]


class TaKernelInfo(Structure):
    _fields_ = [("name", c_char_p), ("arch", c_char_p), ("dtype", c_char_p),
                ("mask", c_char_p), ("schedule", c_char_p), ("head_dim", c_int32),
                ("block_m", c_int32), ("block_n", c_int32), ("threads", c_int32),
                ("shared_bytes", c_int32), ("index_bits", c_int32), ("align_bytes", c_int32),
                ("num_params", c_int32), ("softcap", c_int32), ("lse", c_int32),
                ("varlen", c_int32), ("head_dim_v", c_int32),
                ("score_function", c_char_p), ("mask_function", c_char_p),
                ("num_captures", c_int32), ("captures", POINTER(TaCaptureInfo)),
                ("variant", c_char_p), ("features", c_uint32), ("page_size", c_int32),
                ("phase", c_char_p)]


class TaLaunchPlan(Structure):
    _fields_ = [("kernel", c_int32), ("grid", c_uint32 * 3), ("block", c_uint32 * 3),
                ("shared_bytes", c_uint32), ("num_params", c_int32),
                ("param_offsets", c_uint32 * TA_MAX_PARAMS),
                ("param_sizes", c_uint32 * TA_MAX_PARAMS),
                # param_data is 64-byte aligned in C (TA_ALIGNAS(64)): it
                # starts at offset 1088, after 28 bytes of padding.
                ("_padding", c_ubyte * 28),
                ("param_data", c_ubyte * TA_MAX_PARAM_BYTES)]


assert TaLaunchPlan.param_data.offset == 1088 and ctypes.sizeof(TaLaunchPlan) % 64 == 0


def _aligned_plan(count: int = 1) -> Tuple[Any, Any]:
    """A zeroed TaLaunchPlan (``count`` > 1: an array of them, as
    ta_sdpa_backward_plan fills) at a 64-byte aligned address (as C declares
    it), and the buffer that holds it (keep it alive)."""
    kind = TaLaunchPlan if count == 1 else TaLaunchPlan * count
    buffer = ctypes.create_string_buffer(ctypes.sizeof(kind) + 64)
    offset = -ctypes.addressof(buffer) % 64
    return kind.from_buffer(buffer, offset), buffer


def _launch_plan(plan: TaLaunchPlan) -> "LaunchPlan":
    """The LaunchPlan of a filled TaLaunchPlan: each parameter's bytes."""
    raw = bytes(plan.param_data)
    params = tuple(raw[plan.param_offsets[i]:plan.param_offsets[i] + plan.param_sizes[i]]
                   for i in range(plan.num_params))
    return LaunchPlan(plan.kernel, tuple(plan.grid), tuple(plan.block), plan.shared_bytes,
                      params)


_SIGNATURES: Dict[str, Tuple[Any, Sequence[Any]]] = {
    "ta_api_version": (c_int, []),
    "ta_last_error": (c_char_p, []),
    "ta_library_open": (c_int, [c_char_p, POINTER(c_void_p)]),
    "ta_library_close": (None, [c_void_p]),
    "ta_library_path": (c_char_p, [c_void_p]),
    "ta_library_kernel_count": (c_int32, [c_void_p]),
    "ta_library_kernel": (c_int, [c_void_p, c_int32, POINTER(TaKernelInfo)]),
    "ta_kernel_feature": (c_char_p, [c_int32]),
    "ta_sdpa_plan": (c_int, [c_void_p, POINTER(TaSdpaArgs), c_int32, c_int32,
                             POINTER(TaLaunchPlan)]),
    "ta_sdpa": (c_int, [c_void_p, c_void_p, c_int32, c_void_p]),
    "ta_sdpa_workspace_size": (c_int, [c_void_p, c_void_p, c_int32, POINTER(c_uint64)]),
    "ta_library_block_mask_count": (c_int32, [c_void_p]),
    "ta_library_block_mask": (c_int, [c_void_p, c_int32, POINTER(TaKernelInfo)]),
    "ta_block_mask": (c_int, [c_void_p, POINTER(TaBlockMaskArgs), c_int32, c_void_p]),
    "ta_library_backward_count": (c_int32, [c_void_p]),
    "ta_library_backward_kernel": (c_int, [c_void_p, c_int32, POINTER(TaKernelInfo)]),
    "ta_sdpa_backward_workspace_size": (c_int, [c_void_p, c_void_p, POINTER(c_uint64)]),
    "ta_sdpa_backward_plan": (c_int, [c_void_p, c_void_p, c_int32, c_int32, c_void_p]),
    "ta_sdpa_backward": (c_int, [c_void_p, c_void_p, c_int32, c_void_p]),
}


def runtime_path() -> Path:
    """The runtime library to load (see the module's search order)."""
    env = os.environ.get(RUNTIME_ENV_VAR)
    if env:
        return Path(env)
    for candidate in (_PACKAGE / "lib" / RUNTIME_NAME, _REPO_BUILD / "lib" / RUNTIME_NAME):
        if candidate.is_file():
            return candidate
    raise TiledAttnError(
        f"cannot find {RUNTIME_NAME}: not in the package ({_PACKAGE / 'lib'}) nor in the "
        f"source tree's build ({_REPO_BUILD / 'lib'}); build it (scripts/setup.sh) or set "
        f"{RUNTIME_ENV_VAR} to its path"
    )


_RUNTIME: Optional[Any] = None
_RUNTIME_LOCK = threading.Lock()


def runtime() -> Any:
    """The loaded runtime library, its functions declared (loaded once)."""
    global _RUNTIME
    if _RUNTIME is not None:
        return _RUNTIME
    with _RUNTIME_LOCK:
        if _RUNTIME is None:
            path = runtime_path()
            try:
                lib = ctypes.CDLL(str(path))
            except OSError as exc:
                raise TiledAttnError(f"cannot load the runtime library {path}: {exc}") from None
            for name, (restype, argtypes) in _SIGNATURES.items():
                function = getattr(lib, name)
                function.restype = restype
                function.argtypes = list(argtypes)
            version = lib.ta_api_version()
            if version != API_VERSION:
                raise TiledAttnError(
                    f"{path} implements runtime API version {version}, this package "
                    f"needs {API_VERSION}; rebuild it or reinstall the package"
                )
            _RUNTIME = lib
    return _RUNTIME


_FEATURES: Optional[Tuple[str, ...]] = None


def kernel_features() -> Tuple[str, ...]:
    """The features a kernel may have ("softcap", "lse", "varlen", "sparse",
    ...), in the order of their bits in ``ta_kernel_info.features``: the
    runtime's list (``ta_kernel_feature``), from the one declaration the
    compiler also builds from (``include/tiled_attn/Kernels/KernelVariant.def``)."""
    global _FEATURES
    if _FEATURES is None:
        lib, names = runtime(), []
        while (name := lib.ta_kernel_feature(len(names))) is not None:
            names.append(name.decode())
        _FEATURES = tuple(names)
    return _FEATURES


def raise_for(status: int) -> None:
    """Raise the exception for a failed call: ValueError for a bad argument,
    NoKernelError when the library has no kernel for the call, TiledAttnError
    for the rest (the library, the driver)."""
    message = (runtime().ta_last_error() or b"").decode("utf-8", "replace")
    if status == TA_ERROR_INVALID_ARGUMENT:
        raise ValueError(message)
    if status == TA_ERROR_NO_KERNEL:
        raise NoKernelError(message)
    raise TiledAttnError(message)


@dataclass(frozen=True)
class KernelInfo:
    """One kernel of the library, as its manifest entry describes it."""

    index: int
    name: str
    arch: str
    dtype: str
    mask: str
    schedule: str
    head_dim: int
    block_m: int
    block_n: int
    threads: int
    shared_bytes: int
    index_bits: int
    align_bytes: int
    num_params: int
    #: What the kernel computes, as the library spec and its name say it:
    #: the mask, the features, the functions (``"window_softcap_lse"``,
    #: ``"none_sparse+document"``).
    variant: str = ""
    #: Its features, of :func:`kernel_features`. Each also reads as a
    #: boolean attribute: ``kernel.softcap`` (it soft-caps the scores and runs
    #: the calls with ``softcap > 0`` only), ``kernel.lse`` (it can write the
    #: rows' log-sum-exps), ``kernel.varlen`` (it runs
    #: :func:`tiled_attn.sdpa_varlen`'s calls only), ``kernel.sparse`` (it
    #: runs the calls with a ``block_mask`` only).
    features: FrozenSet[str] = frozenset()
    #: V's and O's head dim (D_v): :attr:`head_dim`, or DeepSeek's MLA's 128
    #: where Q and K have 192; 0 reads as :attr:`head_dim`.
    head_dim_v: int = 0
    #: The score and mask functions ("" without one) and their captured
    #: inputs, each ``(name, function, dtype, rank, align_bytes)`` (rank 0: a
    #: scalar; align_bytes 16 for a view the kernel copies by 16-byte blocks,
    #: whose data pointer and strides must be multiples of it, else 1), in
    #: the order each function declares them.
    score_function: str = ""
    mask_function: str = ""
    captures: Tuple[Tuple[str, str, str, int, int], ...] = ()
    #: A paged kernel's one page size, smaller than :attr:`block_n` (its key
    #: blocks gathered from several pages), or 0: a paged kernel then takes
    #: the page sizes :attr:`block_n` divides.
    page_size: int = 0
    #: "" for a forward kernel; a backward kernel's phase (of
    #: :attr:`KernelLibrary.backward_kernels`): "preprocess", "main",
    #: "postprocess" or "dq" (the deterministic mode's). A main or dq
    #: kernel's :attr:`mask`, ``softcap`` and ``varlen`` say what it
    #: computes; every phase's dtype, head dims and ``varlen``.
    phase: str = ""

    def __post_init__(self) -> None:
        if not self.head_dim_v:
            object.__setattr__(self, "head_dim_v", self.head_dim)

    def __getattr__(self, name: str) -> bool:
        # Only for names the dataclass lacks: a feature's name says whether
        # the kernel has it.
        if not name.startswith("_") and name in kernel_features():
            return name in self.features
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    @property
    def causal(self) -> str:
        """The mask's name (also :attr:`mask`): none, top_left, bottom_right, or
        window (a kernel that takes the band of diagonals ``window_lo <= j - i
        <= window_hi`` a query sees as two more parameters, and so computes any
        mask but none in place of the others; a softcap window kernel computes
        none too, for the calls with a softcap)."""
        return self.mask

    def describe(self) -> str:
        features = "".join(f", {name}" for name in kernel_features() if name in self.features)
        head_dim = (f"{self.head_dim}" if self.head_dim_v == self.head_dim
                    else f"{self.head_dim} (D_v={self.head_dim_v})")
        phase = f", {self.phase}" if self.phase else ""
        return (f"{self.name} ({self.arch}, {self.dtype}, D={head_dim}, "
                f"mask={self.mask}{features}{phase})")


@dataclass(frozen=True)
class LaunchPlan:
    """What a launch would be: the kernel, the grid, the packed parameters."""

    kernel: int
    grid: Tuple[int, int, int]
    block: Tuple[int, int, int]
    shared_bytes: int
    params: Tuple[bytes, ...]


class KernelLibrary:
    """A kernel library opened by the runtime (manifest checked, files found).

    Thread-safe; modules are loaded on first use, once per CUDA context.
    """

    def __init__(self, path: "str | os.PathLike[str]") -> None:
        lib = runtime()
        handle = c_void_p()
        status = lib.ta_library_open(os.fsencode(str(path)), byref(handle))
        if status != TA_OK:
            raise_for(status)
        self._lib = lib
        self.handle = handle
        self._handle_value = handle.value
        self._ta_sdpa = lib.ta_sdpa
        self._ta_workspace_size = lib.ta_sdpa_workspace_size
        self._workspace_bytes = c_uint64(0)
        self._workspace_bytes_ref = byref(self._workspace_bytes)
        self.path = Path(lib.ta_library_path(handle).decode())
        self.kernels: Tuple[KernelInfo, ...] = tuple(
            self._kernel(i) for i in range(lib.ta_library_kernel_count(handle)))
        self.head_dims: Tuple[int, ...] = tuple(sorted({k.head_dim for k in self.kernels}))
        #: The (D, D_v) pairs some kernel computes.
        self.head_dim_pairs: Tuple[Tuple[int, int], ...] = tuple(
            sorted({(k.head_dim, k.head_dim_v) for k in self.kernels}))
        #: The strictest alignment any kernel needs; the torch layer copies
        #: inputs that miss it.
        self.align_bytes = max((k.align_bytes for k in self.kernels), default=16)
        #: The block mask kernels (each of one mask function: its
        #: ``mask_function`` and ``captures``; the SDPA fields empty).
        self.block_masks: Tuple[KernelInfo, ...] = tuple(
            self._kernel(i, lib.ta_library_block_mask)
            for i in range(lib.ta_library_block_mask_count(handle)))
        #: The backward kernels (the manifest's "sdpa_backward" entries, each
        #: of a :attr:`KernelInfo.phase`), indexed as the plans of
        #: :meth:`backward_plan` name them.
        self.backward_kernels: Tuple[KernelInfo, ...] = tuple(
            self._kernel(i, lib.ta_library_backward_kernel)
            for i in range(lib.ta_library_backward_count(handle)))

    @classmethod
    def load(cls, root: "str | os.PathLike[str] | None" = None) -> "KernelLibrary":
        """The library at ``root``, default :func:`default_library_path`."""
        return cls(root if root is not None else default_library_path())

    def _kernel(self, index: int, describe: Any = None) -> KernelInfo:
        """Kernel ``index`` as ``describe`` (ta_library_kernel when None,
        ta_library_block_mask, ta_library_backward_kernel) gives it."""
        info = TaKernelInfo()
        describe = describe or self._lib.ta_library_kernel
        status = describe(self.handle, index, byref(info))
        if status != TA_OK:
            raise_for(status)
        text = {name: getattr(info, name).decode()
                for name in ("name", "arch", "dtype", "mask", "schedule")}
        numbers = {name: getattr(info, name)
                   for name in ("head_dim", "block_m", "block_n", "threads", "shared_bytes",
                                "index_bits", "align_bytes", "num_params")}
        captures = tuple((c.name.decode(), c.function.decode(), CAPTURE_TYPE_NAMES[c.type],
                          c.rank, c.align_bytes)
                         for c in (info.captures[i] for i in range(info.num_captures)))
        features = frozenset(name for bit, name in enumerate(kernel_features())
                             if info.features >> bit & 1)
        return KernelInfo(index=index, **text, **numbers, variant=info.variant.decode(),
                          features=features, head_dim_v=info.head_dim_v,
                          score_function=info.score_function.decode(),
                          mask_function=info.mask_function.decode(), captures=captures,
                          page_size=info.page_size, phase=(info.phase or b"").decode())

    def plan(self, args: TaSdpaArgs, capability: Tuple[int, int]) -> LaunchPlan:
        """The launch ``sdpa`` would make for ``args`` on a device of ``capability``."""
        plan, _buffer = _aligned_plan()
        status = self._lib.ta_sdpa_plan(self.handle, byref(args), capability[0],
                                        capability[1], byref(plan))
        if status != TA_OK:
            raise_for(status)
        return _launch_plan(plan)

    def backward_plan(self, args: "TaSdpaBackwardArgs | int",
                      capability: Tuple[int, int]) -> Tuple[LaunchPlan, LaunchPlan, LaunchPlan]:
        """ta_sdpa_backward_plan: the three launches (preprocess, main,
        postprocess) :meth:`launch_backward` would make for ``args`` (a
        TaSdpaBackwardArgs, or the address of one) on a device of
        ``capability``; each plan's kernel an index of :attr:`backward_kernels`,
        -1 for a phase with nothing to do."""
        plans, _buffer = _aligned_plan(3)
        status = self._lib.ta_sdpa_backward_plan(self.handle, _address(args), capability[0],
                                                 capability[1], ctypes.addressof(plans))
        if status != TA_OK:
            raise_for(status)
        return tuple(_launch_plan(plan) for plan in plans)  # type: ignore[return-value]

    def backward_workspace_size(self, args: "TaSdpaBackwardArgs | int") -> int:
        """ta_sdpa_backward_workspace_size: the bytes of workspace the backward
        call of ``args`` (a TaSdpaBackwardArgs or its address; its workspace
        fields are not read) needs (0 for an empty problem). Checks the
        arguments as :meth:`launch_backward` does."""
        size = c_uint64(0)
        status = self._lib.ta_sdpa_backward_workspace_size(self.handle, _address(args),
                                                           byref(size))
        if status != TA_OK:
            raise_for(status)
        return size.value

    def launch_backward(self, args: "TaSdpaBackwardArgs | int", device: int,
                        stream: int) -> None:
        """ta_sdpa_backward: check ``args`` (a TaSdpaBackwardArgs or its
        address), choose the three backward kernels for CUDA device ``device``
        and launch them on ``stream``, one after the other (asynchronous: no
        allocation, no synchronization)."""
        status = self._lib.ta_sdpa_backward(self.handle, _address(args), device, stream)
        if status != TA_OK:
            raise_for(status)

    @property
    def root(self) -> Path:
        """The library's folder (also :attr:`path`)."""
        return self.path

    @property
    def entries(self) -> Tuple[KernelInfo, ...]:
        """The kernels (also :attr:`kernels`)."""
        return self.kernels

    def runs_on(self, kernel: KernelInfo, capability: Tuple[int, int],
                functions: bool = False) -> bool:
        """Whether the runtime would launch ``kernel`` (asked for by name) on a
        device of ``capability``: the runtime's own architecture rules. A
        score or mask function's kernel says no unless ``functions``, which
        asks it with its functions and stand-ins of its captured inputs."""
        args = TaSdpaArgs()
        # One query and key; a window kernel is asked for a top-left causal
        # mask, which it computes where there is more than one key; a softcap
        # kernel is given a softcap, without which it runs nothing; a varlen
        # kernel one sequence of them.
        window = kernel.mask == "window"
        step = max(1, kernel.align_bytes // 2)  # elements per aligned row start
        row = -(-max(kernel.head_dim, kernel.head_dim_v) // step) * step
        # Each view at an address of its own: the runtime refuses an output
        # that shares memory with an input.
        for i, (slot, keys, d) in enumerate(((args.q, 1, kernel.head_dim),
                                             (args.k, 1 + window, kernel.head_dim),
                                             (args.v, 1 + window, kernel.head_dim_v),
                                             (args.o, 1, kernel.head_dim_v))):
            slot.data = (i + 1) << 20
            slot.sizes[:] = (1, 1, keys, d)
            slot.strides[:] = (keys * row, keys * row, row, 1)
        mask = MASKS["top_left"] if window else MASKS[kernel.mask]
        args.dtype, args.mask, args.scale = DTYPES[kernel.dtype], mask, 1.0
        args.softcap = 1.0 if kernel.softcap else 0.0
        if kernel.varlen:
            args.varlen = TaVarlen(1, 1, 5 << 20, 5 << 20, 1, 1 + window)
        # With `functions`, a function kernel is given its functions and
        # captured inputs: each view of one element at an address of its own,
        # each scalar 0.
        captures = (TaCapture * max(1, len(kernel.captures)))()
        if functions:
            for i, (name, _, dtype, rank, _) in enumerate(kernel.captures):
                capture = captures[i]
                capture.name, capture.rank = name.encode(), rank
                capture.type = CAPTURE_TYPE_NAMES.index(dtype)
                if rank:
                    capture.data = (8 + i) << 20
                    capture.sizes[:], capture.strides[:] = (1, 1, 1, 1), (1, 1, 1, 1)
            args.score_function = kernel.score_function.encode() or None
            args.mask_function = kernel.mask_function.encode() or None
            args.captures, args.num_captures = addressof(captures), len(kernel.captures)
        args.kernel = kernel.name.encode()
        try:
            self.plan(args, capability)
        except TiledAttnError:
            return False
        return True

    def launch(self, args: TaSdpaArgs, device: int, stream: int) -> None:
        """Check, choose, pack and launch on ``stream`` of CUDA device ``device``."""
        self.launch_packed(ctypes.addressof(args), device, stream)

    def launch_block_mask(self, args: TaBlockMaskArgs, device: int, stream: int) -> None:
        """ta_block_mask: check, choose the function's block mask kernel and
        launch it on ``stream`` of CUDA device ``device``."""
        status = self._lib.ta_block_mask(self.handle, byref(args), device, stream)
        if status != TA_OK:
            raise_for(status)

    def launch_packed(self, args_address: int, device: int, stream: int) -> None:
        """:meth:`launch` with the ta_sdpa_args at ``args_address`` (the hot path)."""
        status = self._ta_sdpa(self._handle_value, args_address, device, stream)
        if status != TA_OK:
            raise_for(status)

    def workspace_size(self, args_address: int, device: int) -> int:
        """ta_sdpa_workspace_size: the bytes of split-KV's workspace the
        ta_sdpa_args at ``args_address`` need on CUDA device ``device`` (0: the
        call does not split)."""
        status = self._ta_workspace_size(self._handle_value, args_address, device,
                                         self._workspace_bytes_ref)
        if status != TA_OK:
            raise_for(status)
        return self._workspace_bytes.value

    def __del__(self) -> None:
        handle = getattr(self, "handle", None)
        if handle:
            self._lib.ta_library_close(handle)
            self.handle = None

    def __repr__(self) -> str:
        return f"KernelLibrary({str(self.path)!r}, {len(self.kernels)} kernels)"


def _address(args: Any) -> int:
    """The address of a ctypes structure, or ``args`` itself if it is one."""
    return args if isinstance(args, int) else ctypes.addressof(args)


def set_tensor(slot: TaTensor, t: Any) -> None:
    """Fill ``slot`` from a tensor-like (``data_ptr()``, ``shape``, ``stride()``) of rank 4."""
    slot.data = t.data_ptr()
    slot.sizes[:] = t.shape
    slot.strides[:] = t.stride()


def packed_view(t: Any) -> Tuple[int, ...]:
    """The ta_tensor fields (data, sizes[4], strides[4]) of the ``[1, H, total, D]``
    view of a packed ``[total, H, D]`` tensor-like (a variable-length batch's q,
    k, v or o; see :class:`TaVarlen`)."""
    total, heads, d = t.shape
    s_token, s_head, s_d = t.stride()
    # The batch's stride is unused (its size is 1): a token's times the total,
    # as torch's unsqueeze(0) gives it.
    return (t.data_ptr(), 1, heads, total, d, total * s_token, s_head, s_token, s_d)


def set_packed_tensor(slot: TaTensor, t: Any) -> None:
    """Fill ``slot`` with :func:`packed_view` of ``t``."""
    fields = packed_view(t)
    slot.data = fields[0]
    slot.sizes[:] = fields[1:5]
    slot.strides[:] = fields[5:]


def default_library_path() -> Path:
    """``$TILED_ATTN_KERNELS``, else the package's kernels, else ``build/kernels``."""
    env = os.environ.get(KERNELS_ENV_VAR)
    if env:
        return Path(env)
    packaged = _PACKAGE / "kernels"
    if (packaged / "manifest.json").is_file():
        return packaged
    return _REPO_BUILD / "kernels"


_LIBRARIES: Dict[Optional[str], KernelLibrary] = {}
_LIBRARIES_LOCK = threading.Lock()


def default_library(path: "str | os.PathLike[str] | None" = None) -> KernelLibrary:
    """The library at ``path`` (default :func:`default_library_path`), opened once per path.

    It is also remembered under the key ``sdpa`` looks up first: ``path``
    itself, or for None the value of ``$TILED_ATTN_KERNELS`` (None when unset).
    """
    key = str(path) if path is not None else str(default_library_path())
    library = _LIBRARIES.get(key)
    if library is None:
        with _LIBRARIES_LOCK:
            library = _LIBRARIES.get(key)
            if library is None:
                library = _LIBRARIES[key] = KernelLibrary(key)
    fast_key = path if path is not None else os.environ.get(KERNELS_ENV_VAR)
    if isinstance(fast_key, (str, type(None))):
        _LIBRARIES.setdefault(fast_key, library)  # type: ignore[arg-type]
    return library

"""A minimal binding of the CUDA driver API through ctypes.

Only what the runtime needs: initialise the driver, find the context torch
made current, load a module from PTX (JIT-compiled by the driver) or cubin,
look up a kernel, raise its dynamic shared memory limit and launch it. Every
``CUresult`` is checked; a failure raises :class:`TiledAttnError` carrying
the call, the error's name and the driver's description of it.

Nothing here imports torch, and ``libcuda.so.1`` is opened on first use only.
"""

from __future__ import annotations

import ctypes
import threading
from ctypes import POINTER, byref, c_char_p, c_int, c_uint, c_void_p
from pathlib import Path
from typing import Any, Dict, Optional, Sequence, Tuple

from .errors import TiledAttnError

__all__ = ["CudaDriver", "get_driver"]

LIBCUDA = "libcuda.so.1"
CUDA_SUCCESS = 0
CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
CU_JIT_ERROR_LOG_BUFFER = 5
CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6
#: Dynamic shared memory a kernel gets without opting in.
DEFAULT_DYNAMIC_SHARED_LIMIT = 48 * 1024
_JIT_LOG_BYTES = 16 * 1024

Dim3 = Tuple[int, int, int]

# argtypes of each entry point used; every one returns a CUresult (int).
_SIGNATURES: Dict[str, Sequence[Any]] = {
    "cuInit": [c_uint],
    "cuGetErrorName": [c_int, POINTER(c_char_p)],
    "cuGetErrorString": [c_int, POINTER(c_char_p)],
    "cuDeviceGet": [POINTER(c_int), c_int],
    "cuDevicePrimaryCtxRetain": [POINTER(c_void_p), c_int],
    "cuCtxGetCurrent": [POINTER(c_void_p)],
    "cuCtxSetCurrent": [c_void_p],
    "cuCtxGetDevice": [POINTER(c_int)],
    "cuModuleLoadDataEx": [POINTER(c_void_p), c_char_p, c_uint, POINTER(c_int), POINTER(c_void_p)],
    "cuModuleGetFunction": [POINTER(c_void_p), c_void_p, c_char_p],
    "cuFuncSetAttribute": [c_void_p, c_int, c_int],
    "cuLaunchKernel": [
        c_void_p, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint,
        c_uint, c_void_p, POINTER(c_void_p), POINTER(c_void_p),
    ],
}


def _open_libcuda() -> Any:
    """``libcuda.so.1`` with the signatures declared; TiledAttnError if absent."""
    try:
        lib = ctypes.CDLL(LIBCUDA)
    except OSError as exc:
        raise TiledAttnError(
            f"cannot load the CUDA driver ({LIBCUDA}): {exc}; "
            "tiled_attn needs an NVIDIA GPU and its driver"
        ) from None
    for name, argtypes in _SIGNATURES.items():
        try:
            function = getattr(lib, name)
        except AttributeError:
            raise TiledAttnError(f"the CUDA driver {LIBCUDA} lacks {name}; it is too old") from None
        function.argtypes = list(argtypes)
        function.restype = c_int
    return lib


class CudaDriver:
    """The CUDA driver: checked calls, and a cache of loaded modules and kernels."""

    def __init__(self, lib: Any = None) -> None:
        """Wrap ``lib`` (default: ``libcuda.so.1``) and call ``cuInit(0)``."""
        self._lib = lib if lib is not None else _open_libcuda()
        self._lock = threading.Lock()
        self._modules: Dict[Tuple[int, str], c_void_p] = {}
        self._functions: Dict[Tuple[int, str, str], c_void_p] = {}
        self._shared_limits: Dict[int, int] = {}
        self.check(self._lib.cuInit(0), "cuInit")

    # ---------------------------------------------------------------- errors

    def error_text(self, result: int) -> str:
        """``NAME: description`` of a CUresult, as the driver words it."""
        name, text = c_char_p(), c_char_p()
        if self._lib.cuGetErrorName(result, byref(name)) != CUDA_SUCCESS or not name.value:
            return f"unknown CUDA error {result}"
        self._lib.cuGetErrorString(result, byref(text))
        description = text.value.decode(errors="replace") if text.value else ""
        return f"{name.value.decode(errors='replace')} ({result}): {description}"

    def check(self, result: int, call: str, detail: str = "") -> None:
        """Raise TiledAttnError naming ``call`` unless ``result`` is CUDA_SUCCESS."""
        if result != CUDA_SUCCESS:
            suffix = f"\n{detail}" if detail else ""
            raise TiledAttnError(f"{call} failed: {self.error_text(result)}{suffix}")

    # -------------------------------------------------------------- contexts

    def current_context(self, ordinal: int) -> int:
        """The context current on this thread, which must be on device ``ordinal``.

        torch makes its primary context current when it selects a device;
        if none is current (or one of another device), the device's primary
        context, which torch shares, is retained and made current.
        """
        ctx = c_void_p()
        self.check(self._lib.cuCtxGetCurrent(byref(ctx)), "cuCtxGetCurrent")
        if ctx.value and self._context_device() == ordinal:
            return ctx.value
        device = c_int()
        self.check(self._lib.cuDeviceGet(byref(device), ordinal), f"cuDeviceGet({ordinal})")
        self.check(self._lib.cuDevicePrimaryCtxRetain(byref(ctx), device),
                   "cuDevicePrimaryCtxRetain")
        self.check(self._lib.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
        return int(ctx.value or 0)

    def _context_device(self) -> int:
        device = c_int()
        self.check(self._lib.cuCtxGetDevice(byref(device)), "cuCtxGetDevice")
        return device.value

    # --------------------------------------------------------------- modules

    def function(self, ctx: int, path: Path, kind: str, symbol: str) -> c_void_p:
        """Kernel ``symbol`` of the module at ``path`` in context ``ctx``, cached."""
        key = (ctx, str(path), symbol)
        with self._lock:
            func = self._functions.get(key)
            if func is None:
                module = self._module(ctx, path, kind)
                func = c_void_p()
                self.check(
                    self._lib.cuModuleGetFunction(byref(func), module, symbol.encode()),
                    f"cuModuleGetFunction({symbol!r} in {path.name})",
                )
                self._functions[key] = func
            return func

    def _module(self, ctx: int, path: Path, kind: str) -> c_void_p:
        """The module loaded from ``path`` (``kind`` "ptx" or "cubin") in ``ctx``."""
        key = (ctx, str(path))
        module = self._modules.get(key)
        if module is None:
            module = self._modules[key] = self._load_module(path, kind)
        return module

    def _load_module(self, path: Path, kind: str) -> c_void_p:
        try:
            image = path.read_bytes()
        except OSError as exc:
            raise TiledAttnError(f"cannot read kernel file {path}: {exc}") from None
        if kind == "ptx":
            image += b"\0"
        log = ctypes.create_string_buffer(_JIT_LOG_BYTES)
        options = (c_int * 2)(CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
        values = (c_void_p * 2)(ctypes.cast(log, c_void_p), c_void_p(_JIT_LOG_BYTES))
        module = c_void_p()
        result = self._lib.cuModuleLoadDataEx(byref(module), image, 2, options, values)
        detail = log.value.decode(errors="replace").strip()
        self.check(result, f"cuModuleLoadDataEx({path.name}, {kind})",
                   f"JIT log: {detail}" if detail else "")
        return module

    # -------------------------------------------------------------- launches

    def set_max_dynamic_shared(self, func: c_void_p, nbytes: int) -> None:
        """Let ``func`` use ``nbytes`` of dynamic shared memory (needed above 48 KiB)."""
        if nbytes <= DEFAULT_DYNAMIC_SHARED_LIMIT:
            return
        with self._lock:
            if self._shared_limits.get(func.value or 0, 0) >= nbytes:
                return
            self.check(
                self._lib.cuFuncSetAttribute(
                    func, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, nbytes),
                f"cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES={nbytes})",
            )
            self._shared_limits[func.value or 0] = nbytes

    def launch(
        self,
        func: c_void_p,
        grid: Dim3,
        block: Dim3,
        shared_bytes: int,
        stream: int,
        params: "ctypes.Array[c_void_p]",
    ) -> None:
        """``cuLaunchKernel`` with ``params``, a ``void*[]`` of argument addresses."""
        self.check(
            self._lib.cuLaunchKernel(
                func, *grid, *block, shared_bytes, c_void_p(stream or None),
                ctypes.cast(params, POINTER(c_void_p)), None,
            ),
            f"cuLaunchKernel(grid={grid}, block={block}, shared_bytes={shared_bytes})",
        )


_DRIVER: Optional[CudaDriver] = None
_DRIVER_LOCK = threading.Lock()


def get_driver() -> CudaDriver:
    """The process-wide driver binding, created on first use."""
    global _DRIVER
    with _DRIVER_LOCK:
        if _DRIVER is None:
            _DRIVER = CudaDriver()
        return _DRIVER

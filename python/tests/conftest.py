"""Fixtures of the Python tests: small kernel libraries and the fake CUDA driver.

The runtime (``libtiled_attn_runtime.so``) opens libcuda with dlopen when a
kernel library first needs the driver (a launch, or a plan with a TMA
descriptor), at the path ``$TILED_ATTN_LIBCUDA`` names then; each library
keeps the driver it got. Every test not marked ``gpu`` runs with it set to
the fake driver built next to the runtime (``build/lib/libfakecuda.so``): two
devices, of compute capability 9.0 and 8.0, that record launches and run
nothing. It is set per test rather than for the whole session so that the
GPU tests, in the same run, get the real driver.
"""

from __future__ import annotations

import ctypes
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import pytest
from fakes import write_library

from tiled_attn import runtime
from tiled_attn.errors import TiledAttnError

LIBCUDA_ENV_VAR = "TILED_ATTN_LIBCUDA"
FAKE_CUDA_NAME = "libfakecuda.so"
#: The fake driver's devices (test/Runtime/FakeCudaState.h), by ordinal.
FAKE_DEVICES = ((9, 0), (8, 0))


def _fake_cuda_path() -> Optional[Path]:
    """The fake driver: next to the runtime the tests load, else in build/lib."""
    folders = []
    try:
        folders.append(runtime.runtime_path().parent)
    except TiledAttnError:
        pass
    folders.append(runtime._REPO_BUILD / "lib")
    for folder in folders:
        if (folder / FAKE_CUDA_NAME).is_file():
            return (folder / FAKE_CUDA_NAME).resolve()
    return None


FAKE_CUDA_PATH = _fake_cuda_path()


@pytest.fixture(autouse=True)
def _fake_libcuda(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """$TILED_ATTN_LIBCUDA: the fake driver, for every test but the GPU ones."""
    if request.node.get_closest_marker("gpu") is not None:
        return
    # Without the fake, no libcuda at all rather than a real one: the tests
    # that launch then fail, and the fake_cuda fixture says why.
    path = FAKE_CUDA_PATH or runtime._REPO_BUILD / "lib" / FAKE_CUDA_NAME
    monkeypatch.setenv(LIBCUDA_ENV_VAR, str(path))


class FakeCuda:
    """The fake driver's counters (process-wide; compare before and after).

    They are C++ functions of namespace ``fakecuda`` returning int, called by
    their mangled names. ctypes opens the file the runtime opened, so both
    see the same state.
    """

    COUNTERS = ("initCalls", "moduleLoads", "moduleUnloads", "launches",
                "funcSetAttributeCalls", "maxDynamicShared", "tensorMapCalls")

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lib = ctypes.CDLL(str(path))
        self._functions: Dict[str, Any] = {}
        for name in self.COUNTERS:
            function = getattr(self._lib, f"_ZN8fakecuda{len(name)}{name}Ev")
            function.restype = ctypes.c_int
            function.argtypes = []
            self._functions[name] = function

    def count(self, name: str) -> int:
        return int(self._functions[name]())

    def counts(self) -> Dict[str, int]:
        return {name: self.count(name) for name in self.COUNTERS}

    def last_grid(self) -> Tuple[int, int, int]:
        """The grid of the last launch."""
        grid = (ctypes.c_uint * 3)()
        self._lib.fakecuda_last_launch_grid(grid)
        return tuple(grid)  # type: ignore[return-value]

    def last_params(self) -> List[bytes]:
        """The bytes of each parameter of the last launch."""
        params: List[bytes] = []
        buffer = ctypes.create_string_buffer(256)
        while True:
            size = self._lib.fakecuda_last_launch_param(len(params), buffer, len(buffer))
            if size < 0:
                return params
            params.append(buffer.raw[:size])


@pytest.fixture(scope="session")
def fake_cuda() -> FakeCuda:
    if FAKE_CUDA_PATH is None:
        pytest.fail(f"{FAKE_CUDA_NAME} is not built: run "
                    f"`ninja -C build tiled_attn_runtime fakecuda` (or scripts/setup.sh)")
    return FakeCuda(FAKE_CUDA_PATH)


@pytest.fixture
def make_library(tmp_path: Path) -> Callable[..., Path]:
    """``make_library(entries, name="lib", version=2, images=True)``: writes a
    kernel library (manifest + fake PTX files) under tmp_path; its folder."""

    def make(entries: Sequence[Dict[str, Any]], name: str = "lib", **kwargs: Any) -> Path:
        return write_library(tmp_path / name, entries, **kwargs)

    return make


@pytest.fixture
def open_library(make_library: Callable[..., Path]) -> Callable[..., runtime.KernelLibrary]:
    """``open_library(entries, ...)``: make_library, then open it with the runtime."""

    def open_(entries: Sequence[Dict[str, Any]], **kwargs: Any) -> runtime.KernelLibrary:
        return runtime.KernelLibrary(make_library(entries, **kwargs))

    return open_

"""The kernel parameter list, the launch grid and the driver binding, against fakes."""

from __future__ import annotations

import ctypes
from ctypes import POINTER, c_float, c_int32, c_int64, c_uint64
from pathlib import Path
from typing import Any, List, Tuple

import pytest
from fakes import FakeTensor, qkv

from tiled_attn import TiledAttnError
from tiled_attn import driver as driver_module
from tiled_attn.abi import INDEX_BITS, NUM_PARAMS, Memref, pack_params
from tiled_attn.driver import CudaDriver
from tiled_attn.manifest import ABI_NUM_PARAMS, Arch, KernelEntry
from tiled_attn.sdpa import launch_grid
from tiled_attn.validation import validate_inputs

# ---------------------------------------------------------------- parameters


def read_param(params: Any, index: int, ctype: Any) -> Any:
    return ctypes.cast(params.array[index], POINTER(ctype)).contents.value


def test_pack_params_is_four_descriptors_then_scale() -> None:
    q = FakeTensor((2, 4, 100, 64), strides=(4 * 100 * 64, 64, 4 * 64, 1), pointer=0x1000)
    k, v, o = (FakeTensor((2, 4, 77, 64), pointer=p) for p in (0x2000, 0x3000, 0x4000))
    params = pack_params([Memref.of(t) for t in (q, k, v, o)], 0.125)
    assert len(params) == NUM_PARAMS == 45
    for index, tensor in enumerate((q, k, v, o)):
        base = 11 * index
        assert read_param(params, base, c_uint64) == tensor.data_ptr()
        assert read_param(params, base + 1, c_uint64) == tensor.data_ptr()
        assert read_param(params, base + 2, c_int64) == 0
        sizes = [read_param(params, base + 3 + i, c_int64) for i in range(4)]
        strides = [read_param(params, base + 7 + i, c_int64) for i in range(4)]
        assert tuple(sizes) == tensor.shape and tuple(strides) == tensor.stride()
    assert read_param(params, 44, c_float) == 0.125


def test_pack_params_index32_packs_32_bit_fields() -> None:
    q, k, v, o = (FakeTensor((2, 4, 100, 64), pointer=p) for p in (0x1000, 0x2000, 0x3000, 0x4000))
    params = pack_params([Memref.of(t) for t in (q, k, v, o)], 0.5, index_bits=32)
    assert len(params) == NUM_PARAMS
    for index, tensor in enumerate((q, k, v, o)):
        base = 11 * index
        assert read_param(params, base, c_uint64) == tensor.data_ptr()
        assert ctypes.sizeof(params.values[base + 2]) == 4
        sizes = [read_param(params, base + 3 + i, c_int32) for i in range(4)]
        strides = [read_param(params, base + 7 + i, c_int32) for i in range(4)]
        assert tuple(sizes) == tensor.shape and tuple(strides) == tensor.stride()
    assert read_param(params, 44, c_float) == 0.5


def test_pack_params_index32_rejects_offsets_past_2_31() -> None:
    # 2 * 16 * 65536 * 1024 elements: the last one sits at offset 2^31 - 1.
    fits = Memref(0x1000, (2, 16, 65536, 1024), (16 * 65536 * 1024, 65536 * 1024, 1024, 1))
    pack_params([fits] * 4, 1.0, index_bits=32)
    big = Memref(0x1000, (3, 16, 65536, 1024), fits.strides)
    with pytest.raises(ValueError, match="largest element offset is 3221225471"):
        pack_params([big] * 4, 1.0, index_bits=32)
    pack_params([big] * 4, 1.0)  # 64-bit kernels take it


def test_every_manifest_abi_has_an_index_width() -> None:
    assert set(INDEX_BITS) == set(ABI_NUM_PARAMS)


def test_pack_params_rejects_wrong_arity() -> None:
    with pytest.raises(ValueError, match="expected 4 memrefs"):
        pack_params([Memref(0, (1, 1, 1, 64), (64, 64, 64, 1))], 1.0)
    with pytest.raises(ValueError, match="rank-4"):
        pack_params([Memref(0, (1, 64), (64, 1))] * 4, 1.0)


# ---------------------------------------------------------------- grid


def entry(block_m: int = 64) -> KernelEntry:
    return KernelEntry(
        name="k", arch=Arch(8, 0), dtype="f16", head_dim=64, causal="none",
        symbol="sdpa_fwd", ptx=Path("k.ptx"), block=(128, 1, 1), block_m=block_m,
        shared_bytes=0, abi="memref-descriptor-v1", num_params=45,
    )


@pytest.mark.parametrize("s_q, blocks", [(1, 1), (64, 1), (65, 2), (100, 2), (128, 2)])
def test_grid_covers_the_queries(s_q: int, blocks: int) -> None:
    problem = validate_inputs(*qkv(b=3, h=5, s_q=s_q))
    assert launch_grid(problem, entry()) == (blocks, 5, 3)


def test_grid_limit_on_heads_and_batch() -> None:
    with pytest.raises(ValueError, match="batch size 70000"):
        launch_grid(validate_inputs(*qkv(b=70000, h=1)), entry())


# ---------------------------------------------------------------- driver


class FakeLibcuda:
    """Records calls; every entry point succeeds unless told to fail."""

    def __init__(self, fail: str = "", code: int = 100) -> None:
        self.fail, self.code = fail, code
        self.calls: List[Tuple[str, tuple]] = []

    def __getattr__(self, name: str) -> Any:
        def call(*args: Any) -> int:
            self.calls.append((name, args))
            if name == "cuGetErrorName":
                args[1]._obj.value = b"CUDA_ERROR_NO_DEVICE"
            elif name == "cuGetErrorString":
                args[1]._obj.value = b"no CUDA-capable device is detected"
            return self.code if name == self.fail else 0
        return call

    def names(self) -> List[str]:
        return [name for name, _ in self.calls]


def test_driver_error_carries_the_driver_string() -> None:
    with pytest.raises(TiledAttnError, match=r"cuInit failed: CUDA_ERROR_NO_DEVICE \(100\): "
                                             "no CUDA-capable device is detected"):
        CudaDriver(FakeLibcuda(fail="cuInit"))


def test_missing_libcuda(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_library(name: str) -> None:
        raise OSError(f"{name}: cannot open shared object file")

    monkeypatch.setattr(driver_module.ctypes, "CDLL", no_library)
    with pytest.raises(TiledAttnError, match=r"cannot load the CUDA driver \(libcuda.so.1\)"):
        driver_module._open_libcuda()


def test_dynamic_shared_attribute_only_above_48k_and_once() -> None:
    lib = FakeLibcuda()
    driver = CudaDriver(lib)
    func = ctypes.c_void_p(0x1234)
    driver.set_max_dynamic_shared(func, 48 * 1024)
    assert "cuFuncSetAttribute" not in lib.names()
    driver.set_max_dynamic_shared(func, 96 * 1024)
    driver.set_max_dynamic_shared(func, 64 * 1024)
    calls = [args for name, args in lib.calls if name == "cuFuncSetAttribute"]
    assert len(calls) == 1 and calls[0][1:] == (8, 96 * 1024)


def test_modules_are_loaded_once_per_context_and_file(tmp_path: Path) -> None:
    ptx = tmp_path / "k.ptx"
    ptx.write_text(".version 8.0\n")
    lib = FakeLibcuda()
    driver = CudaDriver(lib)
    for ctx, symbol in ((1, "a"), (1, "a"), (1, "b"), (2, "a")):
        driver.function(ctx, ptx, "ptx", symbol)
    assert lib.names().count("cuModuleLoadDataEx") == 2
    assert lib.names().count("cuModuleGetFunction") == 3
    image = next(args[1] for name, args in lib.calls if name == "cuModuleLoadDataEx")
    assert image == b".version 8.0\n\0"


def test_module_load_failure_names_the_file(tmp_path: Path) -> None:
    (tmp_path / "k.ptx").write_text("garbage")
    driver = CudaDriver(FakeLibcuda(fail="cuModuleLoadDataEx", code=218))
    with pytest.raises(TiledAttnError, match=r"cuModuleLoadDataEx\(k.ptx, ptx\) failed"):
        driver.function(1, tmp_path / "k.ptx", "ptx", "sdpa_fwd")


def test_launch_passes_grid_block_shared_stream() -> None:
    lib = FakeLibcuda()
    driver = CudaDriver(lib)
    params = pack_params([Memref(0x1000, (1, 1, 1, 64), (64, 64, 64, 1))] * 4, 1.0)
    driver.launch(ctypes.c_void_p(0x99), (2, 3, 4), (128, 1, 1), 1024, 0x55, params.array)
    args = next(args for name, args in lib.calls if name == "cuLaunchKernel")
    assert args[1:8] == (2, 3, 4, 128, 1, 1, 1024)
    assert args[8].value == 0x55

"""Launch a library kernel's cubin with cuda-bindings, its parameters packed
from its manifest entry's list (the kernel ABI: a view's base, sizes and
strides by name; scalars by name). For kernels the runtime does not launch
yet (check_split_kv.py's split pair, check_backward.py's backward pass)."""
from __future__ import annotations

import ctypes
from pathlib import Path

import torch
from cuda.bindings import driver as cu


def check(result):
    """The value of a cuda-bindings call, or an error naming its status."""
    if result[0] != cu.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"CUDA driver: {result[0]}")
    return result[1] if len(result) == 2 else result[1:]


class Kernel:
    """A cubin's entry point, its parameters packed by the manifest's list
    (views by name: base, sizes, strides; scalars by name)."""

    def __init__(self, cubin: Path, symbol: str, params, threads: int, shared: int):
        self.module = check(cu.cuModuleLoadData(Path(cubin).read_bytes()))
        self.function = check(cu.cuModuleGetFunction(self.module, symbol.encode()))
        self.params, self.threads, self.shared = params, threads, shared
        check(cu.cuFuncSetAttribute(
            self.function,
            cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, shared))

    @classmethod
    def from_manifest(cls, folder: Path, entry: dict, arch: str) -> "Kernel":
        """The kernel of a manifest entry, from its cubin for `arch`."""
        return cls(Path(folder) / entry["cubin"][arch], entry["symbol"], entry["params"],
                   entry["block"][0], entry["shared_bytes"])

    def __call__(self, grid, views: dict, scalars: dict):
        values, types = [], []
        for p in self.params:
            if p["kind"] == "base":
                values.append(views[p["name"]].data_ptr()); types.append(ctypes.c_void_p)
            elif p["kind"] in ("size", "stride"):
                t = views[p["name"]]
                values.append(t.shape[p["dim"]] if p["kind"] == "size" else t.stride(p["dim"]))
                types.append(ctypes.c_int64)
            else:
                values.append(scalars[p["name"]])
                types.append(ctypes.c_float if p["type"] == "f32" else ctypes.c_int64)
        check(cu.cuLaunchKernel(self.function, *grid, self.threads, 1, 1, self.shared,
                                torch.cuda.current_stream().cuda_stream,
                                (tuple(values), tuple(types)), 0))

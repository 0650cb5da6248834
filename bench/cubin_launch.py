"""Launch a library kernel's cubin with cuda-bindings, its parameters packed
from its manifest entry's list (the kernel ABI: a view's base, sizes and
strides by name; scalars by name; a TMA descriptor of a view encoded as the
runtime's TensorMap.cpp does). For kernels the runtime does not launch
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
        """The kernel of a manifest entry, from its cubin for `arch` (or its
        only cubin, where it has one: an sm_90a kernel's)."""
        cubins = entry["cubin"]
        cubin = cubins[arch] if arch in cubins or len(cubins) != 1 else next(iter(cubins.values()))
        return cls(Path(folder) / cubin, entry["symbol"], entry["params"],
                   entry["block"][0], entry["shared_bytes"])

    def __call__(self, grid, views: dict, scalars: dict):
        args = []
        for p in self.params:
            if p["kind"] == "base":
                args.append(ctypes.c_void_p(views[p["name"]].data_ptr()))
            elif p["kind"] in ("size", "stride"):
                t = views[p["name"]]
                args.append(ctypes.c_int64(
                    t.shape[p["dim"]] if p["kind"] == "size" else t.stride(p["dim"])))
            elif p["kind"] == "tensor_map":
                args.append(tensor_map(views[p["name"]], p))
            else:
                value = scalars[p["name"]]
                args.append(ctypes.c_float(value) if p["type"] == "f32" else ctypes.c_int64(value))
        pointers = (ctypes.c_void_p * len(args))(*[ctypes.addressof(a) for a in args])
        check(cu.cuLaunchKernel(self.function, *grid, self.threads, 1, 1, self.shared,
                                torch.cuda.current_stream().cuda_stream,
                                ctypes.addressof(pointers), 0))


def tensor_map(t, param) -> ctypes.Array:
    """The 128-byte TMA descriptor of a [B, H, S, D] view: dims D, S, H, B,
    the parameter's box and swizzle, zero fill out of bounds
    (lib/Runtime/TensorMap.cpp)."""
    types = {torch.bfloat16: cu.CUtensorMapDataType.CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
             torch.float16: cu.CUtensorMapDataType.CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
             torch.float32: cu.CUtensorMapDataType.CU_TENSOR_MAP_DATA_TYPE_FLOAT32}
    swizzles = {0: cu.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_NONE,
                32: cu.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_32B,
                64: cu.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_64B,
                128: cu.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_128B}
    item = t.element_size()
    dims = [t.shape[3 - i] for i in range(4)]
    strides, contiguous = [], dims[0] * item
    for i in range(3):
        dim = 2 - i
        strides.append(-(-contiguous // 16) * 16 if t.shape[dim] <= 1 else t.stride(dim) * item)
        contiguous = strides[-1] * dims[i + 1]
    box = [param["box"][1], param["box"][0], 1, 1]  # the manifest's [rows, cols]
    result = check(cu.cuTensorMapEncodeTiled(
        types[t.dtype], 4, t.data_ptr(), [cu.cuuint64_t(d) for d in dims],
        [cu.cuuint64_t(s) for s in strides], [cu.cuuint32_t(b) for b in box],
        [cu.cuuint32_t(1)] * 4, cu.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE,
        swizzles[param.get("swizzle", 0)],
        cu.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
        cu.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE))
    words = [w if isinstance(w, int) else int(getattr(w, "value", w)) for w in result.opaque]
    return (ctypes.c_uint64 * 16)(*words)

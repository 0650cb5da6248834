"""tiled_attn.runtime over the real libtiled_attn_runtime.so, without torch or a GPU.

Kernel libraries are small v2 manifests written into tmp_path with PTX-like
files the fake driver (libfakecuda.so, through $TILED_ATTN_LIBCUDA, set by
conftest.py) parses; tensors are fakes.FakeTensor stand-ins at made-up
device addresses. The fake driver has two devices: 0 of compute capability
9.0 and 1 of 8.0.
"""

from __future__ import annotations

import ctypes
import importlib
import math
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any, Optional, Sequence, Tuple

import pytest
from conftest import FAKE_DEVICES, LIBCUDA_ENV_VAR
from fakes import (FakeTensor, cu_seqlens_params, fake_torch, kernel_entry, lse_entry, lse_params,
                   softcap_entry, standard_params, varlen_entry, window_entry)

from tiled_attn import runtime
from tiled_attn.errors import NoKernelError, TiledAttnError
from tiled_attn.functions import NO_FUNCTIONS
from tiled_attn.runtime import (DTYPES, MASKS, KernelInfo, KernelLibrary, LaunchPlan, TaSdpaArgs,
                                TaVarlen, TaWindow, default_library, default_library_path,
                                runtime_path, set_packed_tensor, set_tensor)
from tiled_attn.validation import copy_reason

PACKAGE_ROOT = Path(__file__).resolve().parents[1]

#: Made-up device addresses, 256-byte aligned; the output far (16 TiB) above
#: the inputs, which some tests stretch over terabytes (the runtime refuses an
#: output that overlaps an input).
Q, K, V, O = 0x100000000, 0x200000000, 0x300000000, 1 << 44
HOW_TO_BUILD = "build the kernels or set TILED_ATTN_KERNELS to a folder holding manifest.json"
#: struct formats of the manifest's parameter types (little-endian).
FORMATS = {"ptr": "<Q", "i32": "<i", "i64": "<q", "f32": "<f"}


def tensors(b: int = 2, h: int = 3, s_q: int = 77, s_k: int = 131, d: int = 64,
            dv: Optional[int] = None):
    """Contiguous q, k, v, o at distinct addresses (v and o of head dim dv, d
    when None)."""
    dv = dv or d
    return (FakeTensor((b, h, s_q, d), pointer=Q), FakeTensor((b, h, s_k, d), pointer=K),
            FakeTensor((b, h, s_k, dv), pointer=V), FakeTensor((b, h, s_q, dv), pointer=O))


def make_args(q: Any, k: Any, v: Any, o: Any, dtype: str = "f16", mask: str = "none",
              scale: float = 0.125, kernel: Optional[str] = None,
              window: Optional[Tuple[int, int]] = None, bottom_right: bool = False,
              softcap: float = 0.0, lse: int = 0) -> TaSdpaArgs:
    """ta_sdpa_args; ``window`` (left, right) turns the window on, aligned
    bottom-right if ``bottom_right`` (which must agree with a causal mask);
    ``softcap`` > 0 soft-caps the scores; ``lse`` is the log-sum-exps' address."""
    args = TaSdpaArgs()
    for slot, t in ((args.q, q), (args.k, k), (args.v, v), (args.o, o)):
        set_tensor(slot, t)
    args.dtype = DTYPES[dtype]
    args.mask = MASKS[mask]
    args.scale = scale
    if kernel is not None:
        args.kernel = kernel.encode()
    if window is not None:
        args.window = TaWindow(1, int(bottom_right), *window)
    args.softcap = softcap
    args.lse = lse
    return args


def problem(b: int = 2, h: int = 3, s_q: int = 77, s_k: int = 131, d: int = 64,
            dv: Optional[int] = None, **kwargs: Any) -> TaSdpaArgs:
    """The arguments of a contiguous problem (f16, no mask, scale 1/8 by default)."""
    return make_args(*tensors(b, h, s_q, s_k, d, dv), **kwargs)


def chosen(library: KernelLibrary, args: TaSdpaArgs, capability=(9, 0)) -> str:
    return library.kernels[library.plan(args, capability).kernel].name


def decode(params: Sequence[dict], packed: Sequence[bytes]) -> list:
    """Each packed parameter read as its manifest type says."""
    assert len(packed) == len(params)
    values = []
    for param, raw in zip(params, packed):
        fmt = FORMATS[param["type"]]
        assert len(raw) == struct.calcsize(fmt), param
        values.append(struct.unpack(fmt, raw)[0])
    return values


def expected_values(params: Sequence[dict], args: TaSdpaArgs) -> list:
    """What each parameter should hold, from the arguments."""
    values = []
    for param in params:
        if param["kind"] == "scalar":
            values.append(ctypes.c_float(args.scale).value)
            continue
        t = getattr(args, param["name"])
        values.append({"base": t.data, "size": t.sizes[param.get("dim", 0)],
                       "stride": t.strides[param.get("dim", 0)]}[param["kind"]])
    return values


def error_of(kind: type, call, *args: Any) -> str:
    """The message of the exception ``call(*args)`` raises, which must be exactly ``kind``."""
    with pytest.raises(kind) as info:
        call(*args)
    assert type(info.value) is kind, f"{type(info.value).__name__}: {info.value}"
    return str(info.value)


# ================================================================ finding the files


def test_runtime_path_env_var_comes_first(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("TILED_ATTN_RUNTIME", str(tmp_path / "elsewhere.so"))
    # Taken as it is, existing or not: loading it says what is wrong.
    assert runtime_path() == tmp_path / "elsewhere.so"


def test_runtime_path_search_order(monkeypatch, tmp_path) -> None:
    package, build = tmp_path / "pkg", tmp_path / "repo" / "build"
    monkeypatch.setattr(runtime, "_PACKAGE", package)
    monkeypatch.setattr(runtime, "_REPO_BUILD", build)
    monkeypatch.setenv("TILED_ATTN_RUNTIME", "")  # empty: as if unset
    for folder in (package / "lib", build / "lib"):
        folder.mkdir(parents=True)
        (folder / "libtiled_attn_runtime.so").write_bytes(b"")
    assert runtime_path() == package / "lib" / "libtiled_attn_runtime.so"
    (package / "lib" / "libtiled_attn_runtime.so").unlink()
    assert runtime_path() == build / "lib" / "libtiled_attn_runtime.so"
    (build / "lib" / "libtiled_attn_runtime.so").unlink()
    # A folder of that name is not the library.
    (build / "lib" / "libtiled_attn_runtime.so").mkdir()
    message = error_of(TiledAttnError, runtime_path)
    assert message == (
        f"cannot find libtiled_attn_runtime.so: not in the package ({package / 'lib'}) nor in "
        f"the source tree's build ({build / 'lib'}); build it (scripts/setup.sh) or set "
        "TILED_ATTN_RUNTIME to its path")


def test_runtime_path_of_this_checkout(monkeypatch) -> None:
    monkeypatch.delenv("TILED_ATTN_RUNTIME", raising=False)
    if (runtime._PACKAGE / "lib" / "libtiled_attn_runtime.so").is_file():
        pytest.skip("an installed package with its own runtime")  # pragma: no cover
    assert runtime_path() == PACKAGE_ROOT.parent / "build" / "lib" / "libtiled_attn_runtime.so"


def test_a_wrong_runtime_path_fails_clearly(tmp_path) -> None:
    # The runtime is loaded once per process: a fresh one tries the bad paths.
    missing = tmp_path / "missing.so"
    not_elf = tmp_path / "not-a-library.so"
    not_elf.write_text("this is not a shared library\n" * 10)
    code = (
        "import os, sys\n"
        "from tiled_attn import KernelLibrary, TiledAttnError\n"
        "for path in sys.argv[1:]:\n"
        "    os.environ['TILED_ATTN_RUNTIME'] = path\n"
        "    try:\n"
        "        KernelLibrary('/nowhere')\n"
        "    except TiledAttnError as error:\n"
        "        print(error)\n"
        "    else:\n"
        "        print('no error')\n"
    )
    result = subprocess.run([sys.executable, "-c", code, str(missing), str(not_elf)],
                            cwd=PACKAGE_ROOT, check=True, capture_output=True, text=True)
    lines = result.stdout.splitlines()
    assert len(lines) == 2, result.stdout
    assert lines[0].startswith(f"cannot load the runtime library {missing}: ")
    assert "No such file or directory" in lines[0]
    assert lines[1].startswith(f"cannot load the runtime library {not_elf}: ")
    assert "invalid ELF header" in lines[1]


def test_the_loaded_runtime_is_this_checkouts() -> None:
    lib = runtime.runtime()
    assert lib is runtime.runtime()
    assert lib.ta_api_version() == runtime.API_VERSION == 15


def test_default_library_path_search_order(monkeypatch, tmp_path) -> None:
    package, build = tmp_path / "pkg", tmp_path / "repo" / "build"
    monkeypatch.setattr(runtime, "_PACKAGE", package)
    monkeypatch.setattr(runtime, "_REPO_BUILD", build)
    monkeypatch.setenv("TILED_ATTN_KERNELS", str(tmp_path / "mine"))
    assert default_library_path() == tmp_path / "mine"
    monkeypatch.setenv("TILED_ATTN_KERNELS", "")
    # No packaged kernels (a folder without a manifest does not count): the build's.
    (package / "kernels").mkdir(parents=True)
    assert default_library_path() == build / "kernels"
    monkeypatch.delenv("TILED_ATTN_KERNELS")
    assert default_library_path() == build / "kernels"
    (package / "kernels" / "manifest.json").write_text("{}")
    assert default_library_path() == package / "kernels"


def test_default_library_is_opened_once_per_path(monkeypatch, make_library) -> None:
    monkeypatch.setattr(runtime, "_LIBRARIES", {})
    root = make_library([kernel_entry("a")])
    first = default_library(str(root))
    assert isinstance(first, KernelLibrary) and first.path == root
    assert default_library(str(root)) is first
    monkeypatch.setenv("TILED_ATTN_KERNELS", str(root))
    assert default_library() is first
    other = make_library([kernel_entry("b")], name="other")
    monkeypatch.setenv("TILED_ATTN_KERNELS", str(other))
    assert [k.name for k in default_library().kernels] == ["b"]


def test_load_defaults_to_the_default_path(monkeypatch, make_library) -> None:
    root = make_library([kernel_entry("a")])
    monkeypatch.setenv("TILED_ATTN_KERNELS", str(root))
    assert KernelLibrary.load().path == root
    assert KernelLibrary.load(root).path == root


def test_an_empty_path_means_the_env_var(monkeypatch, make_library) -> None:
    # The runtime's own fallback (ta_library_open with an empty folder).
    monkeypatch.delenv("TILED_ATTN_KERNELS", raising=False)
    assert error_of(TiledAttnError, KernelLibrary, "") == (
        "no kernel library given: the folder is null or empty and $TILED_ATTN_KERNELS is not set")
    root = make_library([kernel_entry("a")])
    monkeypatch.setenv("TILED_ATTN_KERNELS", str(root))
    assert KernelLibrary("").path == root


# ================================================================ opening a library


def test_missing_folder(tmp_path) -> None:
    root = tmp_path / "nowhere"
    assert error_of(TiledAttnError, KernelLibrary, root) == (
        f"no kernel library at {root}: the folder does not exist; {HOW_TO_BUILD}")


def test_missing_manifest(tmp_path) -> None:
    assert error_of(TiledAttnError, KernelLibrary, tmp_path) == (
        f"no kernel library at {tmp_path}: manifest.json is missing; {HOW_TO_BUILD}")


@pytest.mark.parametrize("text, detail", [
    ('{"version": 2, "kernels": [', "parse error at line 1, column 28"),
    ("", "parse error at line 1, column 1"),
    ('{"version": 2}\n{}', "parse error at line 2, column 1"),
])
def test_malformed_json(tmp_path, text, detail) -> None:
    (tmp_path / "manifest.json").write_text(text)
    message = error_of(TiledAttnError, KernelLibrary, tmp_path)
    assert message.startswith(f"{tmp_path}/manifest.json is not valid JSON: {detail}")
    assert "[json.exception" not in message


def test_json_that_is_not_an_object(tmp_path) -> None:
    (tmp_path / "manifest.json").write_text("[1, 2]")
    assert error_of(TiledAttnError, KernelLibrary, tmp_path) == (
        f"{tmp_path}/manifest.json: expected a JSON object at the top, got array")


def test_version_1_manifest_says_to_rebuild(make_library) -> None:
    root = make_library([kernel_entry("a")], version=1)
    assert error_of(TiledAttnError, KernelLibrary, root) == (
        f"{root}/manifest.json: manifest version 1 (kernel ABI memref-descriptor-v1) is no "
        "longer supported; this runtime reads version 2 (ABI tiled-attn-v2): rebuild the "
        "kernel library with this version of tiled-attn-compile (scripts/build_kernels.sh)")


@pytest.mark.parametrize("version, shown", [(3, "3"), ("2", '"2"'), (None, "(missing)")])
def test_unsupported_version(make_library, version, shown) -> None:
    root = make_library([kernel_entry("a")], version=version)
    if version is None:
        manifest = (root / "manifest.json").read_text().replace('"version": null,', "")
        (root / "manifest.json").write_text(manifest)
    assert error_of(TiledAttnError, KernelLibrary, root) == (
        f"{root}/manifest.json: unsupported manifest version {shown} (this runtime reads 2)")


def test_entry_of_abi_v1_says_to_rebuild(make_library) -> None:
    root = make_library([kernel_entry("a", abi="memref-descriptor-v1")])
    message = error_of(TiledAttnError, KernelLibrary, root)
    assert message.startswith(f"{root}/manifest.json: kernel #0 (a): kernel ABI "
                              "memref-descriptor-v1 (manifest version 1) is no longer supported")
    assert "rebuild the kernel library" in message


def test_missing_kernel_file(make_library) -> None:
    root = make_library([kernel_entry("a"), kernel_entry("b")], images=False)
    (root / "a.ptx").write_text("// ptx\n")
    assert error_of(TiledAttnError, KernelLibrary, root) == (
        f"{root}/manifest.json: kernel #1 (b): field 'ptx' names b.ptx, which is missing "
        f"from {root}")


def test_missing_cubin_file(make_library) -> None:
    root = make_library([kernel_entry("a", cubin={"sm_80": "a.sm_80.cubin"})])
    (root / "a.sm_80.cubin").unlink()
    assert error_of(TiledAttnError, KernelLibrary, root) == (
        f"{root}/manifest.json: kernel #0 (a): field 'cubin.sm_80' names a.sm_80.cubin, "
        f"which is missing from {root}")


@pytest.mark.parametrize("fields, detail", [
    ({"params": None}, "missing field 'params'"),
    ({"dtype": "f32"}, "field 'dtype' must be one of 'f16', 'bf16', got \"f32\""),
    ({"arch": "ampere"}, "field 'arch' must be an arch like 'sm_80' or 'sm_90a', got \"ampere\""),
    ({"index_bits": 16}, "field 'index_bits' must be 32 or 64, got 16"),
    ({"align_bytes": 24}, "field 'align_bytes' must be a power of two, got 24"),
    ({"block": [2048, 1, 1]}, "field 'block' must be a list of 3 positive integers, got "
                              "[2048,1,1]"),
    ({"ptx": "../a.ptx"}, "field 'ptx' must be a file name inside the library folder, got "
                          "\"../a.ptx\""),
    ({"params": [{"name": "q", "kind": "size", "dim": 4, "type": "i32"}]},
     "field 'params[0].dim' must be an integer from 0 to 3, got 4"),
])
def test_bad_entry_fields(make_library, tmp_path, fields, detail) -> None:
    (tmp_path / "a.ptx").write_text("// outside the library\n")
    root = make_library([kernel_entry("a", **fields)])
    assert error_of(TiledAttnError, KernelLibrary, root) == (
        f"{root}/manifest.json: kernel #0 (a): {detail}")


def test_duplicate_kernel_names(make_library) -> None:
    root = make_library([kernel_entry("a"), kernel_entry("a", head_dim=128)])
    assert error_of(TiledAttnError, KernelLibrary, root) == (
        f"{root}/manifest.json: kernel #1: kernel name 'a' appears twice")


# ================================================================ what a library holds


def test_kernels_head_dims_and_align_bytes(open_library) -> None:
    library = open_library([
        kernel_entry("a"),
        kernel_entry("b", arch="sm_90a", dtype="bf16", head_dim=128, causal="top_left",
                     index_bits=32, align_bytes=32, block=[64, 2, 1], block_m=128,
                     shared_bytes=100000, schedule={"block_n": 64, "options": ""},
                     params=standard_params("i32")),
        kernel_entry("c", head_dim=128, causal="bottom_right", schedule=None),
        kernel_entry("mla", head_dim=192, head_dim_v=128),
    ])
    assert library.kernels == (
        KernelInfo(index=0, name="a", arch="sm_80", dtype="f16", mask="none",
                   schedule="block-m=64", head_dim=64, block_m=64, block_n=32, threads=128,
                   shared_bytes=16384, index_bits=64, align_bytes=16, num_params=37,
                   variant="none"),
        KernelInfo(index=1, name="b", arch="sm_90a", dtype="bf16", mask="top_left",
                   schedule="", head_dim=128, block_m=128, block_n=64, threads=128,
                   shared_bytes=100000, index_bits=32, align_bytes=32, num_params=37,
                   variant="top_left"),
        KernelInfo(index=2, name="c", arch="sm_80", dtype="f16", mask="bottom_right",
                   schedule="", head_dim=128, block_m=64, block_n=0, threads=128,
                   shared_bytes=16384, index_bits=64, align_bytes=16, num_params=37,
                   variant="bottom_right"),
        KernelInfo(index=3, name="mla", arch="sm_80", dtype="f16", mask="none",
                   schedule="block-m=64", head_dim=192, block_m=64, block_n=32, threads=128,
                   shared_bytes=16384, index_bits=64, align_bytes=16, num_params=37,
                   variant="none", head_dim_v=128),
    )
    assert library.kernels[0].head_dim_v == 64
    assert library.head_dims == (64, 128, 192)
    assert library.head_dim_pairs == ((64, 64), (128, 128), (192, 128))
    assert library.align_bytes == 32
    assert library.kernels[1].describe() == "b (sm_90a, bf16, D=128, mask=top_left)"
    assert library.kernels[3].describe() == "mla (sm_80, f16, D=192 (D_v=128), mask=none)"
    assert repr(library) == f"KernelLibrary({str(library.path)!r}, 4 kernels)"


def test_path_is_the_folder_as_given(make_library) -> None:
    root = make_library([kernel_entry("a")])
    assert KernelLibrary(f"{root}//").path == root
    assert KernelLibrary(root).path == root


def test_an_empty_library(open_library) -> None:
    library = open_library([])
    assert library.kernels == () and library.head_dims == ()
    assert library.align_bytes == 16
    # With no head dim at all, any problem's head dim is unsupported.
    assert error_of(ValueError, library.plan, problem(), (9, 0)) == (
        "head dim D=64 is not supported; the kernel library has head dims none")


# ================================================================ plan: which kernel


def test_highest_arch_not_above_the_device(open_library) -> None:
    library = open_library([kernel_entry("a80", arch="sm_80"), kernel_entry("a90", arch="sm_90"),
                            kernel_entry("a86", arch="sm_86"),
                            kernel_entry("a120", arch="sm_120")])
    args = problem()
    for capability, name in [((8, 0), "a80"), ((8, 6), "a86"), ((8, 9), "a86"),
                             ((9, 0), "a90"), ((10, 0), "a90"), ((12, 1), "a120")]:
        assert chosen(library, args, capability) == name, capability
    message = error_of(NoKernelError, library.plan, args, (7, 5))
    assert message.startswith("no kernel in the library for sm_75, f16, D=64, causal=none")


def test_arch_specific_and_family_code(open_library) -> None:
    library = open_library([kernel_entry("plain90", arch="sm_90"),
                            kernel_entry("a90", arch="sm_90a"),
                            kernel_entry("f100", arch="sm_100f"),
                            kernel_entry("a100", arch="sm_100a")])
    args = problem()
    # "a" code runs on its own capability only, and wins there; "f" code on
    # the same major and an equal or later minor.
    for capability, name in [((9, 0), "a90"), ((10, 0), "a100"), ((10, 3), "f100"),
                             ((11, 0), "plain90"), ((12, 0), "plain90")]:
        assert chosen(library, args, capability) == name, capability


#: The arch of the kernel the library spec (kernels/library.json) gives each
#: compute capability, for every dtype, head dim and mask it holds. B200 (10.0)
#: runs the tcgen05 kernels of its own arch, B300 (10.3) their family twins.
SPEC_ARCH_BY_CAPABILITY = {(8, 0): "sm_80", (8, 6): "sm_80", (8, 9): "sm_80", (9, 0): "sm_90a",
                           (10, 0): "sm_100a", (10, 3): "sm_100f", (12, 0): "sm_120a",
                           (12, 1): "sm_121a"}


def spec_kernels() -> list:
    """The kernels of kernels/library.json (a matrix of configurations x head
    dims x variants x dtypes, see docs/library.md) without score or mask
    functions, each as a dict of its chip, dtype, head dims, mask, softcap,
    lse, varlen and index width."""
    import json
    spec = json.loads((PACKAGE_ROOT.parent / "kernels" / "library.json").read_text())
    kernels = []
    for config in spec["configurations"]:
        if config.get("program", "sdpa") != "sdpa":
            continue  # block mask kernels: test_functions.py
        options = dict(opt.split("=", 1) for opt in config["lowering"].split())
        for head_dim in config["head_dims"]:
            d, dv = (head_dim, head_dim) if isinstance(head_dim, int) else head_dim
            # "@NAME" names one of the spec's variant lists.
            lists = spec.get("variant_lists", {})
            variants = [v for item in config["variants"]
                        for v in (lists[item[1:]] if item.startswith("@") else [item])]
            for variant in variants:
                # Kernels with score and mask functions (none+alibi) or a
                # block mask (none_sparse) are chosen only when the call
                # names them (test_functions.py), split-KV kernels only by a
                # call that splits (test/Runtime/SplitKvTest.cpp).
                if ("+" in variant or "_sparse" in variant or "_split" in variant
                        or "_seqused" in variant):
                    continue
                mask = next(m for m in ("none", "top_left", "window") if variant.startswith(m))
                flags = variant[len(mask):].split("_")
                for dtype in config.get("dtypes", spec["dtypes"]):
                    kernels.append({"chip": options["chip"], "dtype": dtype, "d": d, "dv": dv,
                                    "causal": mask, "softcap": "softcap" in flags,
                                    "lse": "lse" in flags, "varlen": "varlen" in flags,
                                    "bits": int(options.get("index-bitwidth", 64))})
    return kernels


def spec_entries() -> list:
    """One fake manifest entry per kernel of kernels/library.json (its chip,
    dtype, head dim, mask, softcap, log-sum-exps and index width), named
    after them."""
    entries = []
    for k in spec_kernels():
        chip, dtype, d, dv, causal, bits = (k["chip"], k["dtype"], k["d"], k["dv"],
                                            k["causal"], k["bits"])
        softcap = "_softcap" if k["softcap"] else ""
        dims = f"d{d}" if dv == d else f"d{d}v{dv}"
        name = f"{chip}_{dtype}_{dims}_{causal}{softcap}_{bits}"
        if k["varlen"]:
            name = f"{chip}_{dtype}_{dims}_{causal}{softcap}_varlen_{bits}"
            entries.append(varlen_entry(name, causal, index_type=f"i{bits}",
                                        softcap=k["softcap"], lse=k["lse"],
                                        arch=chip, dtype=dtype, head_dim=d, head_dim_v=dv))
        elif causal == "window":
            entry = window_entry(name, index_type=f"i{bits}", arch=chip,
                                 dtype=dtype, head_dim=d, head_dim_v=dv)
            if k["softcap"]:
                entry["params"] = entry["params"] + [SOFTCAP_PARAM]
                entry["softcap"] = True
            if k["lse"]:
                entry["params"] = entry["params"] + lse_params(f"i{bits}")
                entry["lse"] = True
            entries.append(entry)
        else:
            entries.append(kernel_entry(name, arch=chip, dtype=dtype, head_dim=d,
                                        head_dim_v=dv, causal=causal, index_bits=bits))
    return entries


def spec_arch(arch: str, d: int, dv: int) -> str:
    """The arch of the library's kernels of head dims (d, dv) that a device
    whose own arch is ``arch`` runs: its own at D 64 and 128; at D 96, 192
    (and 192/128) and 256 Hopper's and sm_120a's own, the sm_100f kernels on
    both datacenter Blackwells, and the sm_80 PTX on sm_121a and before
    Hopper."""
    if (d, dv) in ((64, 64), (128, 128)) or arch in ("sm_90a", "sm_120a"):
        return arch
    if arch in ("sm_100a", "sm_100f"):
        return "sm_100f"
    return "sm_80"


def test_library_spec_choice_per_capability(open_library) -> None:
    entries = spec_entries()
    library = open_library(entries)
    groups = {(e["dtype"], e["head_dim"], e.get("head_dim_v", e["head_dim"]), e["causal"])
              for e in entries if not e.get("softcap") and not e.get("varlen")}
    # f16/bf16 x D 64/96/128/192/256 and 192/128 x none, top_left, window
    assert len(groups) == 36
    for dtype, d, dv, causal in sorted(groups):
        # A window kernel is what a sliding window runs on; the head dims
        # 96, 192 (and 192/128) and 256 have no sm_100a or sm_121a kernels
        # (spec_arch).
        dims = f"d{d}" if dv == d else f"d{d}v{dv}"
        args = (problem(d=d, dv=dv, dtype=dtype, mask="top_left", window=(16, 0))
                if causal == "window" else problem(d=d, dv=dv, dtype=dtype, mask=causal))
        for capability, arch in SPEC_ARCH_BY_CAPABILITY.items():
            arch = spec_arch(arch, d, dv)
            name = chosen(library, args, capability)
            assert name.startswith(f"{arch}_{dtype}_{dims}_{causal}_"), (capability, name)
            # With a softcap, or the log-sum-exps, a window kernel of the same arch.
            args.softcap = 50.0
            assert chosen(library, args, capability) == f"{arch}_{dtype}_{dims}_window_softcap_64"
            args.softcap, args.lse = 0.0, 0x500000000
            assert chosen(library, args, capability) == f"{arch}_{dtype}_{dims}_window_64"
            args.lse = 0
        message = error_of(NoKernelError, library.plan, args, (7, 5))
        shown = f"{d}" if dv == d else f"{d} (D_v={dv})"
        assert message.startswith(f"no kernel in the library for sm_75, {dtype}, D={shown}"), \
            message
    # Every entry has its varlen twin: a packed batch of each capability runs
    # on the varlen kernel of the arch and mask a padded batch would run on.
    for dtype, d, dv, causal in sorted(groups):
        dims = f"d{d}" if dv == d else f"d{d}v{dv}"
        for capability, arch in SPEC_ARCH_BY_CAPABILITY.items():
            arch = spec_arch(arch, d, dv)
            if causal == "window":
                args = varlen_problem(d=d, dv=dv, dtype=dtype, mask="top_left", window=(16, 0))
                expected = f"{arch}_{dtype}_{dims}_window_varlen_64"
            else:
                args = varlen_problem(d=d, dv=dv, dtype=dtype, mask=causal)
                expected = f"{arch}_{dtype}_{dims}_{causal}_varlen_64"
            if causal == "top_left":
                # No varlen kernel of a causal mask alone: the window kernel
                # computes it.
                expected = f"{arch}_{dtype}_{dims}_window_varlen_64"
            assert chosen(library, args, capability) == expected, (capability, args)


def test_dtype_head_dim_and_mask(open_library) -> None:
    library = open_library([
        kernel_entry("f16"),
        kernel_entry("bf16", dtype="bf16"),
        kernel_entry("d128", head_dim=128),
        kernel_entry("top_left", causal="top_left"),
        kernel_entry("bottom_right", causal="bottom_right"),
        kernel_entry("bf16_128_causal", dtype="bf16", head_dim=128, causal="top_left"),
    ])
    assert chosen(library, problem()) == "f16"
    assert chosen(library, problem(dtype="bf16")) == "bf16"
    assert chosen(library, problem(d=128)) == "d128"
    assert chosen(library, problem(mask="top_left")) == "top_left"
    assert chosen(library, problem(mask="bottom_right")) == "bottom_right"
    assert chosen(library, problem(d=128, dtype="bf16", mask="top_left")) == "bf16_128_causal"
    message = error_of(NoKernelError, library.plan, problem(d=128, mask="bottom_right"), (9, 0))
    assert message.startswith("no kernel in the library for sm_90, f16, D=128, "
                              "causal=bottom_right (library ")


def test_ties_go_to_manifest_order(open_library) -> None:
    library = open_library([kernel_entry("first"), kernel_entry("second")])
    assert chosen(library, problem()) == "first"


def test_named_kernel(open_library) -> None:
    library = open_library([kernel_entry("first"), kernel_entry("second"),
                            kernel_entry("a90", arch="sm_90a")])
    assert chosen(library, problem()) == "a90"
    assert chosen(library, problem(kernel="second")) == "second"
    assert chosen(library, problem(kernel="first"), (8, 0)) == "first"
    # A name restricts the choice to that entry, which must fit.
    message = error_of(NoKernelError, library.plan, problem(kernel="a90"), (8, 0))
    assert message.startswith("no kernel in the library for sm_80, f16, D=64, causal=none, "
                              "name=a90 (library ")
    message = error_of(NoKernelError, library.plan, problem(kernel="nope"), (9, 0))
    assert "name=nope" in message
    message = error_of(NoKernelError, library.plan,
                       problem(kernel="first", mask="top_left"), (9, 0))
    assert "causal=top_left, name=first" in message


def test_index32_wins_unless_an_offset_reaches_2_to_31(open_library) -> None:
    # align_bytes 2: any stride, so that an offset can be exactly 2**31.
    library = open_library([kernel_entry("wide", align_bytes=2),
                            kernel_entry("narrow", index_bits=32, align_bytes=2),
                            kernel_entry("wide90", arch="sm_90", align_bytes=2)])
    assert chosen(library, problem(), (8, 0)) == "narrow"
    # A higher arch beats the index width.
    assert chosen(library, problem(), (9, 0)) == "wide90"
    q, k, v, o = tensors()
    # A tensor's largest element offset is stride0 + the rest (sizes - 1 times strides).
    for name in ("q", "k", "v", "o"):
        for offset, kernel in [(2**31 - 1, "narrow"), (2**31, "wide"), (2**40, "wide")]:
            four = dict(q=q, k=k, v=v, o=o)
            t = four[name]
            rest = sum((size - 1) * stride for size, stride in zip(t.shape[1:], t.stride()[1:]))
            four[name] = FakeTensor(t.shape, strides=(offset - rest,) + t.stride()[1:],
                                    pointer=t.data_ptr())
            assert chosen(library, make_args(**four), (8, 0)) == kernel, (name, offset)
    # A negative stride counts by its magnitude.
    o_flipped = FakeTensor(o.shape, strides=(-(2**31),) + o.stride()[1:], pointer=O)
    assert chosen(library, make_args(q, k, v, o_flipped), (8, 0)) == "wide"


def test_only_narrow_kernels_and_a_large_offset(open_library) -> None:
    library = open_library([kernel_entry("narrow", index_bits=32)])
    q, k, v, o = tensors()
    k_far = FakeTensor(k.shape, strides=(k.stride()[0], 2**31, 64, 1), pointer=K)
    assert error_of(NoKernelError, library.plan, make_args(q, k_far, v, o), (8, 0)) == (
        "no kernel in the library for sm_80, f16, D=64, causal=none, 64-bit indices (an "
        f"element offset reaches 2**31) (library {library.path}: available: narrow (sm_80, f16, "
        "D=64, causal=none))")


def test_no_kernel_lists_the_library(open_library) -> None:
    library = open_library([kernel_entry("a"),
                            kernel_entry("b", arch="sm_90a", head_dim=128, causal="top_left")])
    assert error_of(NoKernelError, library.plan, problem(dtype="bf16"), (8, 0)) == (
        f"no kernel in the library for sm_80, bf16, D=64, causal=none (library {library.path}: "
        "available: a (sm_80, f16, D=64, causal=none); b (sm_90a, f16, D=128, "
        "causal=top_left))")


# ================================================================ plan: grid and parameters


@pytest.mark.parametrize("s_q, block_m, blocks", [
    (1, 64, 1), (63, 64, 1), (64, 64, 1), (65, 64, 2), (77, 64, 2), (128, 64, 2), (129, 64, 3),
    (1000, 128, 8), (1025, 128, 9), (5, 1, 5),
])
def test_grid(open_library, s_q, block_m, blocks) -> None:
    library = open_library([kernel_entry("a", block_m=block_m, block=[128, 2, 1],
                                         shared_bytes=100000)])
    plan = library.plan(problem(b=5, h=7, s_q=s_q), (8, 0))
    assert isinstance(plan, LaunchPlan)
    assert plan.kernel == 0
    assert plan.grid == (blocks, 7, 5)
    assert plan.block == (128, 2, 1)
    assert plan.shared_bytes == 100000


@pytest.mark.parametrize("index_type", ["i64", "i32"])
def test_standard_parameters(open_library, index_type) -> None:
    params = standard_params(index_type)
    library = open_library([kernel_entry("a", params=params)])
    q, k, v, o = tensors(b=2, h=3, s_q=77, s_k=131, d=64)
    # Some non-contiguous layouts, so that no two strides agree by chance.
    k = FakeTensor(k.shape, strides=(131 * 3 * 64, 64, 3 * 64, 1), pointer=K)
    v = FakeTensor(v.shape, strides=(0, 131 * 64 * 2, -64, 1), pointer=V + 130 * 128)
    args = make_args(q, k, v, o, scale=0.1)
    plan = library.plan(args, (8, 0))
    values = decode(params, plan.params)
    assert values == expected_values(params, args)
    # Spelled out for q and v, and the scale (float32 of 0.1).
    assert values[:9] == [Q, 2, 3, 77, 64, 3 * 77 * 64, 77 * 64, 64, 1]
    assert values[18:27] == [V + 130 * 128, 2, 3, 131, 64, 0, 131 * 128, -64, 1]
    assert values[36] == struct.unpack("<f", struct.pack("<f", 0.1))[0] != 0.1
    assert [len(raw) for raw in plan.params] == [8 if p["type"] in ("ptr", "i64") else 4
                                                 for p in params]


def test_parameters_in_manifest_order(open_library) -> None:
    params = [
        {"name": "scale", "kind": "scalar", "type": "f32"},
        {"name": "v", "kind": "base", "type": "ptr"},
        {"name": "k", "kind": "size", "dim": 2, "type": "i32"},
        {"name": "q", "kind": "stride", "dim": 1, "type": "i64"},
        {"name": "o", "kind": "size", "dim": 3, "type": "i32"},
        {"name": "o", "kind": "size", "dim": 0, "type": "i32"},
        {"name": "q", "kind": "base", "type": "ptr"},
        {"name": "k", "kind": "stride", "dim": 2, "type": "i64"},
    ]
    library = open_library([kernel_entry("a", params=params)])
    args = problem(scale=0.125)
    plan = library.plan(args, (8, 0))
    assert library.kernels[0].num_params == len(plan.params) == 8
    assert decode(params, plan.params) == [0.125, V, 131, 77 * 64, 64, 2, Q, 64]


def test_an_unused_stride_that_does_not_fit_i32_is_passed_as_0(open_library) -> None:
    library = open_library([kernel_entry("a", params=standard_params("i32"))])
    q, k, v, o = tensors(b=1)
    q_far = FakeTensor(q.shape, strides=(2**40, 77 * 64, 64, 1), pointer=Q)
    values = decode(standard_params("i32"), library.plan(make_args(q_far, k, v, o), (8, 0)).params)
    assert values[5:9] == [0, 77 * 64, 64, 1]


@pytest.mark.parametrize("change, message", [
    # A size: S_q = 2**31 (the grid still fits with block_m 64).
    (dict(s_q=2**31), "q's size along dimension 2 is 2147483648, which does not fit the i32 "
                      "parameter params[3] of kernel a"),
    # A stride along a dimension longer than 1.
    (dict(k_stride0=2**31), "k's stride along dimension 0 is 2147483648, which does not fit "
                            "the i32 parameter params[14] of kernel a"),
    (dict(k_stride0=-(2**31) - 8), "k's stride along dimension 0 is -2147483656, which does "
                                   "not fit the i32 parameter params[14] of kernel a"),
])
def test_a_size_or_stride_that_does_not_fit_i32(open_library, change, message) -> None:
    # 64-bit indices (the offsets do reach 2**31), i32 parameters.
    library = open_library([kernel_entry("a", params=standard_params("i32"))])
    q, k, v, o = tensors(s_q=change.get("s_q", 77))
    if "k_stride0" in change:
        k = FakeTensor(k.shape, strides=(change["k_stride0"],) + k.stride()[1:], pointer=K)
    assert error_of(ValueError, library.plan, make_args(q, k, v, o), (8, 0)) == message


def test_i32_values_at_the_limits_fit(open_library) -> None:
    library = open_library([kernel_entry("a", params=standard_params("i32"))])
    q, k, v, o = tensors()
    k = FakeTensor(k.shape, strides=(2**31 - 8, 64, 3 * 64, 1), pointer=K)
    v = FakeTensor(v.shape, strides=(-(2**31), 131 * 64, 64, 1), pointer=V)
    values = decode(standard_params("i32"), library.plan(make_args(q, k, v, o), (8, 0)).params)
    assert values[14] == 2**31 - 8 and values[23] == -(2**31)


def test_tensor_map_parameter(open_library, fake_cuda) -> None:
    # A TMA descriptor is built by the driver (the fake writes q's address and
    # its dims, innermost first, into the descriptor's first words).
    params = [{"name": "q", "kind": "tensor_map", "type": "tensor_map", "box": [64, 64],
               "swizzle": 128},
              {"name": "o", "kind": "base", "type": "ptr"},
              {"name": "scale", "kind": "scalar", "type": "f32"}]
    library = open_library([kernel_entry("tma", arch="sm_90a", params=params)])
    before = fake_cuda.count("tensorMapCalls")
    plan = library.plan(problem(b=2, h=3, s_q=77), (9, 0))
    assert fake_cuda.count("tensorMapCalls") == before + 1
    assert [len(raw) for raw in plan.params] == [128, 8, 4]
    assert struct.unpack("<5Q", plan.params[0][:40]) == (Q, 64, 77, 3, 2)
    assert struct.unpack("<Q", plan.params[1]) == (O,)
    assert struct.unpack("<f", plan.params[2]) == (0.125,)


# ================================================================ plan: empty problems


@pytest.mark.parametrize("sizes", [dict(b=0), dict(h=0), dict(s_q=0), dict(b=0, h=0, s_q=0)])
def test_empty_output_plans_nothing(open_library, sizes) -> None:
    library = open_library([kernel_entry("a")])
    empty = LaunchPlan(kernel=-1, grid=(0, 0, 0), block=(0, 0, 0), shared_bytes=0, params=())
    assert library.plan(problem(**sizes), (8, 0)) == empty
    # Not even a kernel is chosen: a device without one is fine.
    assert library.plan(problem(**sizes), (7, 5)) == empty
    # Null pointers are allowed for tensors without elements.
    q, k, v, o = tensors(**sizes)
    nulls = [FakeTensor(t.shape, pointer=0) for t in (q, o)]
    if 0 in (sizes.get("b", 2), sizes.get("h", 3)):
        k, v = (FakeTensor(t.shape, pointer=0) for t in (k, v))
    assert library.plan(make_args(nulls[0], k, v, nulls[1]), (8, 0)) == empty


# ================================================================ plan: bad arguments


def shapes(**overrides) -> TaSdpaArgs:
    """The standard problem's args with some tensors' shapes replaced."""
    four = dict(zip("qkvo", tensors()))
    for name, shape in overrides.items():
        four[name] = FakeTensor(shape, pointer=four[name].data_ptr())
    return make_args(**four)


@pytest.mark.parametrize("args, message", [
    (lambda: problem(d=96),
     "head dim D=96 is not supported; the kernel library has head dims 64, 128"),
    (lambda: shapes(k=(3, 3, 131, 64)),
     "k has batch size 3 but q has 2 (q [2, 3, 77, 64], k [3, 3, 131, 64])"),
    (lambda: shapes(k=(2, 2, 131, 64)),
     "k has head count 2 but q has 3; q's head count must be a multiple of k's and v's "
     "(grouped KV heads) (q [2, 3, 77, 64], k [2, 2, 131, 64])"),
    (lambda: shapes(k=(2, 1, 131, 64)),
     "v has head count 3 but k has 1 (k [2, 1, 131, 64], v [2, 3, 131, 64])"),
    (lambda: shapes(k=(2, 3, 131, 128)),
     "k has head dim 128 but q has 64 (q [2, 3, 77, 64], k [2, 3, 131, 128])"),
    (lambda: shapes(v=(1, 3, 131, 64)),
     "v has batch size 1 but q has 2 (q [2, 3, 77, 64], v [1, 3, 131, 64])"),
    (lambda: shapes(v=(2, 6, 131, 64)),
     "v has head count 6 but k has 3 (k [2, 3, 131, 64], v [2, 6, 131, 64])"),
    # v's head dim is its own (D_v), which o must have.
    (lambda: shapes(v=(2, 3, 131, 32)),
     "o has shape [2, 3, 77, 64] but q has [2, 3, 77, 64] and v [2, 3, 131, 32]; the output "
     "must have q's shape with v's head dim"),
    (lambda: shapes(v=(2, 3, 131, 32), o=(2, 3, 77, 32)),
     "head dim D=64 (D_v=32) is not supported; the kernel library has head dims 64, 128"),
    (lambda: shapes(v=(2, 3, 130, 64)),
     "v has sequence length 130 but k has 131 (k [2, 3, 131, 64], v [2, 3, 130, 64])"),
    (lambda: shapes(o=(2, 3, 76, 64)),
     "o has shape [2, 3, 76, 64] but q has [2, 3, 77, 64] and v [2, 3, 131, 64]; the output "
     "must have q's shape with v's head dim"),
    (lambda: problem(s_k=0), "k has sequence length 0; tiled-attn needs at least one key"),
    (lambda: problem(s_q=0, s_k=0), "k has sequence length 0; tiled-attn needs at least one key"),
    (lambda: shapes(q=(2, 3, -1, 64), o=(2, 3, -1, 64)),
     "q has a negative size along dimension 2: -1 (q [2, 3, -1, 64])"),
    (lambda: make_args(FakeTensor((2, 3, 77, 64), pointer=0), *tensors()[1:]),
     "q has a null data pointer (q [2, 3, 77, 64])"),
    (lambda: problem(h=65536), "q has head count 65536; tiled-attn launches one block row per "
                               "head and batch entry, at most 65535"),
    (lambda: problem(b=65536, h=1),
     "q has batch size 65536; tiled-attn launches one block row per head and batch entry, "
     "at most 65535"),
])
def test_bad_shapes(open_library, args, message) -> None:
    library = open_library([kernel_entry("a"), kernel_entry("b", head_dim=128)])
    assert error_of(ValueError, library.plan, args(), (8, 0)) == message


@pytest.mark.parametrize("scale, shown", [
    (math.nan, "nan"), (0.0, "0"), (-0.0, "-0"), (-1.0, "-1"), (math.inf, "inf"),
    (-math.inf, "-inf"),
    # Beyond float32: 1e39 becomes inf, 1e-50 becomes 0.
    (1e39, "inf"), (1e-50, "0"),
])
def test_bad_scale(open_library, scale, shown) -> None:
    library = open_library([kernel_entry("a")])
    assert error_of(ValueError, library.plan, problem(scale=scale), (8, 0)) == (
        f"scale must be a finite positive float32 value, got {shown}")


@pytest.mark.parametrize("scale", [1e-45, 3.4e38, 1.0, 1e-3])
def test_extreme_float32_scales_are_accepted(open_library, scale) -> None:
    library = open_library([kernel_entry("a")])
    plan = library.plan(problem(scale=scale), (8, 0))
    assert struct.unpack("<f", plan.params[-1])[0] == ctypes.c_float(scale).value > 0


def test_bad_enums_and_capability(open_library) -> None:
    library = open_library([kernel_entry("a")])
    args = problem()
    args.dtype = 7
    assert error_of(ValueError, library.plan, args, (8, 0)) == (
        "dtype must be TA_DTYPE_F16 (0) or TA_DTYPE_BF16 (1), got 7")
    args = problem()
    args.mask = 3
    assert error_of(ValueError, library.plan, args, (8, 0)) == (
        "mask must be TA_MASK_NONE (0), TA_MASK_CAUSAL_TOP_LEFT (1) or "
        "TA_MASK_CAUSAL_BOTTOM_RIGHT (2), got 3")
    for capability in [(0, 0), (8, 10), (8, -1)]:
        assert error_of(ValueError, library.plan, problem(), capability) == (
            f"compute capability {capability[0]}.{capability[1]} is not one of a CUDA device")


def test_too_many_blocks_along_x(open_library) -> None:
    library = open_library([kernel_entry("a", block_m=1)])
    assert error_of(ValueError, library.plan, problem(b=1, h=1, s_q=2**31), (8, 0)) == (
        "q has sequence length 2147483648; kernel a (block_m 1) would need 2147483648 blocks "
        "along x, at most 2147483647")


@pytest.mark.parametrize("layout", [
    dict(strides=(3 * 77 * 64 * 2, 77 * 64 * 2, 128, 2)),        # every other element
    dict(offset=2),                                                # misaligned pointer
    dict(offset=8),
    dict(strides=(3 * 77 * 65, 77 * 65, 65, 1)),                   # padded rows of 65
    dict(strides=(3 * 77 * 64 + 4, 77 * 64, 64, 1)),               # dim 0 misaligned
    dict(strides=(3 * 77 * 64, 64, 3 * 64, 1)),                    # BSHD: fine
    dict(strides=(0, 0, 64, 1)),                                   # broadcast: fine
])
@pytest.mark.parametrize("name", ["q", "k", "o"])
def test_strides_the_kernel_cannot_take(open_library, layout, name) -> None:
    """The runtime's stride rule is copy_reason's, with the same words."""
    library = open_library([kernel_entry("a")])
    four = dict(zip("qkvo", tensors(s_k=77)))
    t = four[name]
    four[name] = FakeTensor(t.shape, strides=layout.get("strides"),
                            pointer=t.data_ptr() + layout.get("offset", 0))
    reason = copy_reason(four[name], library.align_bytes)
    if name == "o" and layout.get("strides", (1,))[0] == 0:
        # A broadcast input is fine; a broadcast output is written by many
        # programs at once (tests/test_bad_inputs.py).
        assert "has elements that share an address" in error_of(
            ValueError, library.plan, make_args(**four), (8, 0))
        return
    if reason is None:
        assert library.plan(make_args(**four), (8, 0)).kernel == 0
        return
    assert error_of(ValueError, library.plan, make_args(**four), (8, 0)) == (
        f"{name} cannot be passed to kernel a as it is: {reason} (the kernels need a "
        "last-dimension stride of 1, and a data pointer and strides of the other dimensions "
        "longer than 1 that are multiples of 16 bytes: copy "
        f"{name} into a contiguous buffer first)")


def test_alignment_is_the_chosen_kernels(open_library) -> None:
    library = open_library([kernel_entry("a", align_bytes=4)])
    q, k, v, o = tensors()
    q = FakeTensor(q.shape, strides=(3 * 77 * 66, 77 * 66, 66, 1), pointer=Q + 4)
    assert library.plan(make_args(q, k, v, o), (8, 0)).kernel == 0
    q = FakeTensor(q.shape, pointer=Q + 2)
    assert "its data pointer 0x100000002 is not 4-byte aligned" in error_of(
        ValueError, library.plan, make_args(q, k, v, o), (8, 0))


# ================================================================ launch


def test_launch(open_library, fake_cuda) -> None:
    library = open_library([kernel_entry("a")])
    before = fake_cuda.counts()
    assert library.launch(problem(), 0, 0) is None
    after = fake_cuda.counts()
    assert after["launches"] == before["launches"] + 1
    assert after["moduleLoads"] == before["moduleLoads"] + 1
    # The module stays loaded in device 0's context; device 1 has its own.
    library.launch(problem(), 0, 0x1234)
    assert fake_cuda.count("moduleLoads") == before["moduleLoads"] + 1
    library.launch(problem(b=1, s_q=1000), 1, 0)
    assert fake_cuda.count("moduleLoads") == before["moduleLoads"] + 2
    assert fake_cuda.count("launches") == before["launches"] + 3


def test_launch_opts_into_large_shared_memory(open_library, fake_cuda) -> None:
    library = open_library([kernel_entry("a", shared_bytes=100 * 1024)])
    calls = fake_cuda.count("funcSetAttributeCalls")
    library.launch(problem(), 0, 0)
    library.launch(problem(), 0, 0)
    assert fake_cuda.count("funcSetAttributeCalls") == calls + 1
    assert fake_cuda.count("maxDynamicShared") == 100 * 1024


@pytest.mark.parametrize("sizes", [dict(b=0), dict(s_q=0), dict(h=0)])
def test_an_empty_launch_launches_nothing(open_library, fake_cuda, sizes) -> None:
    library = open_library([kernel_entry("a")])
    before = fake_cuda.count("launches")
    assert library.launch(problem(**sizes), 0, 0) is None
    assert fake_cuda.count("launches") == before


def test_an_empty_launch_needs_no_driver(open_library, monkeypatch, tmp_path) -> None:
    library = open_library([kernel_entry("a")])
    monkeypatch.setenv(LIBCUDA_ENV_VAR, str(tmp_path / "no-libcuda.so"))
    library.launch(problem(b=0), 0, 0)
    library.launch(problem(s_q=0), 5, 0)


def test_the_device_chooses_the_kernel(open_library, fake_cuda) -> None:
    # Device 0 (9.0) runs a90; device 1 (8.0) the sm_80 kernel, whose PTX the
    # fake's JIT rejects: the error names the driver call and the file.
    library = open_library([kernel_entry("bad80"), kernel_entry("a90", arch="sm_90a")])
    with open(library.path / "bad80.ptx", "a") as ptx:
        ptx.write("// FAKE_JIT_ERROR\n")
    before = fake_cuda.count("launches")
    library.launch(problem(), 0, 0)
    assert fake_cuda.count("launches") == before + 1
    assert error_of(TiledAttnError, library.launch, problem(), 1, 0) == (
        "cuModuleLoadDataEx(bad80.ptx, ptx) failed: CUDA_ERROR_INVALID_PTX (218): a PTX JIT "
        "compilation failed\nJIT log: ptxas fatal   : fake JIT error in line 1")
    assert fake_cuda.count("launches") == before + 1


def test_cubin_of_the_device_else_ptx(open_library) -> None:
    library = open_library([kernel_entry("a", cubin={"sm_80": "a.sm_80.cubin"})])
    with open(library.path / "a.ptx", "a") as ptx:
        ptx.write("// FAKE_JIT_ERROR\n")
    library.launch(problem(), 1, 0)  # 8.0: the cubin
    message = error_of(TiledAttnError, library.launch, problem(), 0, 0)  # 9.0: the PTX
    assert message.startswith("cuModuleLoadDataEx(a.ptx, ptx) failed: CUDA_ERROR_INVALID_PTX")


def test_a_symbol_missing_from_the_module(open_library) -> None:
    library = open_library([kernel_entry("a", symbol="attention")])
    text = (library.path / "a.ptx").read_text().replace(".entry attention(", ".entry other(")
    (library.path / "a.ptx").write_text(text)
    assert error_of(TiledAttnError, library.launch, problem(), 0, 0) == (
        "cuModuleGetFunction('attention' in kernel a) failed: CUDA_ERROR_NOT_FOUND (500): "
        "named symbol not found")


@pytest.mark.parametrize("device", [2, 7, -1])
def test_a_device_the_driver_does_not_have(open_library, device) -> None:
    library = open_library([kernel_entry("a")])
    # A bad argument (ValueError), not a driver failure: the runtime checks the
    # ordinal against cuDeviceGetCount's answer before calling cuDeviceGet.
    assert error_of(ValueError, library.launch, problem(), device, 0) == (
        f"device {device} does not exist: the CUDA driver sees {len(FAKE_DEVICES)} devices")


def test_no_kernel_for_the_device(open_library) -> None:
    library = open_library([kernel_entry("a90", arch="sm_90")])
    library.launch(problem(), 0, 0)
    assert error_of(NoKernelError, library.launch, problem(), 1, 0) == (
        "no kernel in the library for sm_80, f16, D=64, causal=none "
        f"(library {library.path}: none of its kernels runs on a device of compute "
        "capability 8.0: it has kernels for sm_90 only)")


def test_launch_checks_the_arguments(open_library) -> None:
    library = open_library([kernel_entry("a")])
    assert error_of(ValueError, library.launch, problem(s_k=0), 0, 0) == (
        "k has sequence length 0; tiled-attn needs at least one key")
    assert error_of(ValueError, library.launch, problem(scale=-1.0), 0, 0) == (
        "scale must be a finite positive float32 value, got -1")
    q, k, v, o = tensors()
    q = FakeTensor(q.shape, pointer=Q + 2)
    assert "q cannot be passed to kernel a as it is: its data pointer 0x100000002" in error_of(
        ValueError, library.launch, make_args(q, k, v, o), 0, 0)


def test_a_missing_driver(open_library, monkeypatch, tmp_path) -> None:
    # $TILED_ATTN_LIBCUDA is read when a library first needs the driver; this
    # library has not needed it yet.
    library = open_library([kernel_entry("a")])
    missing = tmp_path / "no-libcuda.so"
    monkeypatch.setenv(LIBCUDA_ENV_VAR, str(missing))
    message = error_of(TiledAttnError, library.launch, problem(), 0, 0)
    assert message.startswith(f"cannot load the CUDA driver ({missing}, from "
                              "$TILED_ATTN_LIBCUDA): ")
    assert message.endswith("; tiled-attn needs an NVIDIA GPU and its driver")
    # A plan without TMA descriptors needs no driver.
    assert library.plan(problem(), (8, 0)).kernel == 0


def test_a_library_that_is_not_a_driver(open_library, monkeypatch) -> None:
    library = open_library([kernel_entry("a")])
    not_a_driver = runtime_path().resolve()
    monkeypatch.setenv(LIBCUDA_ENV_VAR, str(not_a_driver))
    assert error_of(TiledAttnError, library.launch, problem(), 0, 0) == (
        f"the CUDA driver {not_a_driver} lacks cuInit; it is too old or not a CUDA driver")


def test_a_loaded_driver_stays_with_its_library(open_library, monkeypatch, tmp_path) -> None:
    library = open_library([kernel_entry("a")])
    library.launch(problem(), 0, 0)
    monkeypatch.setenv(LIBCUDA_ENV_VAR, str(tmp_path / "no-libcuda.so"))
    library.launch(problem(), 0, 0)
    fresh = KernelLibrary(library.path)
    assert "cannot load the CUDA driver" in error_of(TiledAttnError, fresh.launch, problem(), 0, 0)


# ================================================================ windows, bottom-right causal
#
# A problem runs on a kernel of the mask its band of diagonals is (none,
# top_left, bottom_right, window), else on a "window" kernel (for any band
# but the unbounded one), which takes the band as window_lo and window_hi.


def window_band(library: KernelLibrary, args: TaSdpaArgs, capability=(9, 0)) -> Tuple[int, int]:
    """window_lo and window_hi of the plan of a window kernel (its last two parameters)."""
    plan = library.plan(args, capability)
    kernel = library.kernels[plan.kernel]
    assert kernel.mask == "window", kernel
    formats = {4: "<i", 8: "<q"}
    lo, hi = (struct.unpack(formats[len(raw)], raw)[0] for raw in plan.params[-2:])
    return lo, hi


def test_a_window_kernel_is_described(open_library) -> None:
    library = open_library([window_entry("w", "i32")])
    (info,) = library.kernels
    assert (info.mask, info.causal, info.num_params, info.index_bits) == ("window", "window", 39,
                                                                          32)
    assert info.describe() == "w (sm_80, f16, D=64, mask=window)"


@pytest.mark.parametrize("index_type", ["i64", "i32"])
def test_window_parameters_are_packed(open_library, index_type) -> None:
    params = window_entry("w", index_type)["params"]
    library = open_library([window_entry("w", index_type)])
    args = problem(mask="top_left", window=(4, 4))
    plan = library.plan(args, (8, 0))
    values = decode(params, plan.params)
    # Everything as for any kernel, then the band: causal and window (4, 4)
    # let query i see keys i - 4 .. i.
    assert values[:37] == expected_values(params[:37], args)
    assert values[37:] == [-4, 0]
    assert [len(raw) for raw in plan.params[37:]] == [8, 8] if index_type == "i64" else [4, 4]


@pytest.mark.parametrize("mask, window, bottom_right, band", [
    # S_q = 77, S_k = 131: bottom-right's diagonal is 54.
    ("top_left", (4, 4), False, (-4, 0)),
    ("bottom_right", (4, 4), True, (50, 54)),
    ("bottom_right", None, False, (-76, 54)),  # plain bottom-right causal
    ("none", (4, 2), True, (50, 56)),
    ("none", (4, 2), False, (-4, 2)),
    ("none", (3, -1), False, (-3, 130)),
    ("none", (-1, 3), False, (-76, 3)),
    ("top_left", (2**62, 8), False, (-76, 0)),  # a huge left is no bound
])
def test_the_band_of_the_mask_and_the_window(open_library, mask, window, bottom_right,
                                             band) -> None:
    library = open_library([window_entry("w")])
    args = problem(mask=mask, window=window, bottom_right=bottom_right)
    assert window_band(library, args) == band


def test_bottom_right_causal_runs_on_a_window_kernel(open_library) -> None:
    library = open_library([kernel_entry("none"), kernel_entry("tl", causal="top_left"),
                            window_entry("w")])
    assert chosen(library, problem(mask="bottom_right")) == "w"
    assert window_band(library, problem(mask="bottom_right")) == (-76, 54)
    # With S_q == S_k bottom-right is top-left: its own kernel.
    assert chosen(library, problem(s_q=131, mask="bottom_right")) == "tl"
    # A bottom_right kernel, where there is one, comes first.
    library = open_library([window_entry("w"), kernel_entry("br", causal="bottom_right")],
                           name="with_br")
    assert chosen(library, problem(mask="bottom_right")) == "br"


def test_the_masks_own_kernel_comes_before_a_window_kernel(open_library) -> None:
    library = open_library([window_entry("w90", arch="sm_90a"),
                            kernel_entry("tl", causal="top_left"), kernel_entry("none")])
    assert chosen(library, problem(mask="top_left")) == "tl"
    assert chosen(library, problem(mask="top_left", window=(8, 0))) == "w90"
    # A window that bounds nothing (wider than the sequences, or -1) is none.
    assert chosen(library, problem(mask="top_left", window=(4096, 4096))) == "tl"
    assert chosen(library, problem(mask="none", window=(-1, -1))) == "none"
    assert chosen(library, problem(mask="none", window=(500, 500))) == "none"
    # Where no top_left kernel fits (grouped KV heads here), a window kernel.
    q, k, v, o = tensors(h=6)
    k, v = (FakeTensor((2, 2, 131, 64), pointer=t.data_ptr()) for t in (k, v))
    grouped = make_args(q, k, v, o, mask="top_left")
    assert "grouped KV heads" in error_of(NoKernelError, library.plan, grouped, (9, 0))
    library = open_library([window_entry("w", grouped_kv=True),
                            kernel_entry("tl", causal="top_left")], name="grouped")
    assert chosen(library, grouped) == "w"
    assert chosen(library, problem(mask="top_left")) == "tl"


def test_no_mask_never_runs_on_a_window_kernel(open_library) -> None:
    library = open_library([window_entry("w")])
    assert error_of(NoKernelError, library.plan, problem(), (9, 0)) == (
        f"no kernel in the library for sm_90, f16, D=64, causal=none (library {library.path}: "
        "available: w (sm_80, f16, D=64, causal=window))")
    assert error_of(NoKernelError, library.plan, problem(window=(-1, 500), bottom_right=True),
                    (9, 0)) == (
        "no kernel in the library for sm_90, f16, D=64, causal=none, window_size=(-1, 500) "
        f"bottom_right (library {library.path}: available: w (sm_80, f16, D=64, "
        "causal=window)); a kernel of causal=none would compute it")


def test_no_kernel_for_a_window_names_what_would_do(open_library) -> None:
    library = open_library([kernel_entry("none")])
    available = f"(library {library.path}: available: none (sm_80, f16, D=64, causal=none))"
    assert error_of(NoKernelError, library.plan, problem(mask="top_left", window=(4096, 0)),
                    (9, 0)) == (
        f"no kernel in the library for sm_90, f16, D=64, causal=top_left, window_size=(4096, 0) "
        f"{available}; a kernel of causal=top_left or causal=window would compute it")
    assert error_of(NoKernelError, library.plan, problem(mask="top_left", window=(16, 0)),
                    (9, 0)) == (
        f"no kernel in the library for sm_90, f16, D=64, causal=top_left, window_size=(16, 0) "
        f"{available}; a kernel of causal=window would compute it")
    assert error_of(NoKernelError, library.plan, problem(mask="bottom_right"), (9, 0)) == (
        f"no kernel in the library for sm_90, f16, D=64, causal=bottom_right {available}; a "
        "kernel of causal=bottom_right or causal=window would compute it")


def test_a_named_window_kernel(open_library) -> None:
    library = open_library([kernel_entry("tl", causal="top_left"), window_entry("w")])
    assert chosen(library, problem(mask="top_left", kernel="w")) == "w"
    assert "causal=top_left, window_size=(8, 0), name=tl (library " in error_of(
        NoKernelError, library.plan, problem(mask="top_left", window=(8, 0), kernel="tl"),
        (9, 0))
    assert "causal=none, name=w (library " in error_of(
        NoKernelError, library.plan, problem(kernel="w"), (9, 0))
    assert library.runs_on(library.kernels[1], (8, 0))
    assert not library.runs_on(library.kernels[1], (7, 5))


@pytest.mark.parametrize("mask, window, bottom_right, message", [
    ("none", (-2, 0), False,
     "window.left must be -1 (no bound) or a number of keys >= 0, got -2"),
    ("top_left", (0, -3), False,
     "window.right must be -1 (no bound) or a number of keys >= 0, got -3"),
    ("top_left", (4, 0), True,
     "window.bottom_right is 1 but mask is TA_MASK_CAUSAL_TOP_LEFT: with a causal mask the "
     "window is aligned as the mask is (set window.bottom_right to 0)"),
    ("bottom_right", (4, 0), False,
     "window.bottom_right is 0 but mask is TA_MASK_CAUSAL_BOTTOM_RIGHT: with a causal mask the "
     "window is aligned as the mask is (set window.bottom_right to 1)"),
])
def test_bad_windows(open_library, mask, window, bottom_right, message) -> None:
    library = open_library([window_entry("w")])
    args = problem(mask=mask, window=window, bottom_right=bottom_right)
    assert error_of(ValueError, library.plan, args, (9, 0)) == message


def test_a_disabled_window_is_not_read(open_library) -> None:
    library = open_library([kernel_entry("a")])
    args = problem()
    args.window = TaWindow(0, 1, -5, -9)
    assert chosen(library, args) == "a"


def test_a_band_that_does_not_fit_i32(open_library) -> None:
    # i32 window parameters on a 64-bit kernel, 3 * 10**9 keys.
    library = open_library([window_entry("w", "i64", "i32")])
    args = problem(b=1, h=1, s_q=2, s_k=3 * 10**9, window=(0, -1))
    assert error_of(ValueError, library.plan, args, (9, 0)) == (
        "the window's window_hi (the highest diagonal j - i a query sees) is 2999999999, which "
        "does not fit the i32 parameter params[38] of kernel w")


@pytest.mark.parametrize("fields, detail", [
    (dict(causal="window"),
     "a kernel of 'causal' 'window' takes the scalar 'window_lo' (the band of diagonals it "
     "computes), which field 'params' lacks"),
    (dict(causal="window",
          params=standard_params() + [{"name": "window_lo", "kind": "scalar", "type": "i64"}]),
     "a kernel of 'causal' 'window' takes the scalar 'window_hi' (the band of diagonals it "
     "computes), which field 'params' lacks"),
    (dict(causal="bottom_right",
          params=standard_params() + [{"name": "window_hi", "kind": "scalar", "type": "i64"}]),
     "field 'params[37]' is the scalar 'window_hi', which only a kernel of 'causal' 'window' "
     "takes (this one is 'bottom_right')"),
    (dict(causal="window",
          params=[{"name": "window_lo", "kind": "scalar", "type": "f32"}]),
     "field 'params[0].type' must be 'i32' or 'i64' for scalar 'window_lo', got \"f32\""),
    (dict(causal="sliding"),
     "field 'causal' must be one of 'none', 'top_left', 'bottom_right', 'window', got "
     "\"sliding\""),
])
def test_bad_window_entries(make_library, fields, detail) -> None:
    root = make_library([kernel_entry("a", **fields)])
    assert error_of(TiledAttnError, KernelLibrary, root) == (
        f"{root}/manifest.json: kernel #0 (a): {detail}")


def test_a_window_kernel_launches(open_library, fake_cuda) -> None:
    library = open_library([window_entry("w")])
    before = fake_cuda.count("launches")
    library.launch(problem(mask="bottom_right", window=(16, 16), bottom_right=True), 0, 0)
    assert fake_cuda.count("launches") == before + 1


# ================================================================ sdpa's packing of the window
#
# sdpa's eager path packs ta_sdpa_args with one struct.pack_into
# (sdpa._ARGS_LAYOUT); without torch, its packing is checked here against
# the runtime, which reads it.


def packed_args(causal: bool, causal_align: str, window_size: Any,
                softcap: float = 0.0, lse: int = 0) -> TaSdpaArgs:
    """The args sdpa would pass for the standard problem, packed as sdpa packs them."""
    sdpa_module = importlib.import_module("tiled_attn.sdpa")

    q, k, v, o = tensors()
    if causal_align == "top_left" and tuple(window_size) == (-1, -1):
        mask, window = (MASKS["top_left"] if causal else MASKS["none"]), sdpa_module._WINDOW_OFF
    else:
        mask, window = sdpa_module._mask_and_window(causal, causal_align, window_size)
    args = TaSdpaArgs()
    sdpa_module._ARGS_LAYOUT.pack_into(
        args, 0, Q, *q.shape, *q.stride(), K, *k.shape, *k.stride(), V, *v.shape, *v.stride(),
        O, *o.shape, *o.stride(), DTYPES["f16"], mask, 0.125, 0, *window, softcap, lse,
        *sdpa_module._VARLEN_OFF, *NO_FUNCTIONS, *sdpa_module.NO_SPLIT)
    return args


def test_sdpa_packs_the_defaults_as_before(open_library) -> None:
    library = open_library([kernel_entry("none"), kernel_entry("tl", causal="top_left")])
    for causal, mask, name in ((False, "none", "none"), (True, "top_left", "tl")):
        args = packed_args(causal, "top_left", (-1, -1))
        assert (args.mask, args.window.enabled) == (MASKS[mask], 0)
        assert chosen(library, args) == name
        # Byte for byte what a zero-initialized ta_sdpa_args holds.
        assert bytes(args) == bytes(make_args(*tensors(), mask=mask))


@pytest.mark.parametrize("causal, causal_align, window_size, band", [
    (True, "top_left", (4, 4), (-4, 0)),
    (True, "bottom_right", (4, 4), (50, 54)),
    (True, "bottom_right", (-1, -1), (-76, 54)),
    (False, "bottom_right", [4, 2], (50, 56)),
    (False, "top_left", (-1, 0), (-76, 0)),
    (True, "top_left", (2**70, 3), (-76, 0)),  # past an int64: no bound
])
def test_sdpa_packs_the_window_as_the_runtime_reads_it(open_library, causal, causal_align,
                                                       window_size, band) -> None:
    library = open_library([window_entry("w")])
    assert window_band(library, packed_args(causal, causal_align, window_size)) == band


def test_sdpa_mask_and_window_fields() -> None:
    from tiled_attn.sdpa import _mask_and_window

    assert _mask_and_window(False, "top_left", (-1, -1)) == (0, (0, 0, 0, 0))
    assert _mask_and_window(True, "bottom_right", (-1, -1)) == (2, (0, 0, 0, 0))
    assert _mask_and_window(False, "bottom_right", (-1, -1)) == (0, (0, 0, 0, 0))
    assert _mask_and_window(True, "top_left", [7, 0]) == (1, (1, 0, 7, 0))
    assert _mask_and_window(True, "bottom_right", (7, 7)) == (2, (1, 1, 7, 7))
    assert _mask_and_window(False, "bottom_right", (7, -1)) == (0, (1, 1, 7, -1))
    with pytest.raises(ValueError, match=r"window_size must be \(left, right\) with each -1"):
        _mask_and_window(True, "top_left", (-2, 0))


# ================================================================ logit soft-capping
#
# A call with softcap > 0 runs only on kernels compiled with it ("softcap":
# true, which take it as an f32 parameter), the compiler's being "window"
# kernels, which then compute every band, no mask included; a call without
# one never runs on them.

SOFTCAP_PARAM = {"name": "softcap", "kind": "scalar", "type": "f32"}


def test_softcap_entry_is_a_window_entry_and_the_softcap() -> None:
    entry = softcap_entry("ws")
    assert entry["causal"] == "window" and entry["softcap"] is True
    assert entry["params"] == window_entry("ws")["params"] + [SOFTCAP_PARAM]
    assert softcap_entry("tls", "top_left", "i32")["params"] == (standard_params("i32")
                                                                 + [SOFTCAP_PARAM])
    # The other helpers are unchanged: no softcap.
    assert "softcap" not in kernel_entry("a") and "softcap" not in window_entry("w")


def test_variants_and_features_come_from_the_runtime(open_library) -> None:
    # One declaration (KernelVariant.def) names the features, in the order of
    # ta_kernel_info.features' bits; KernelInfo reads each as an attribute.
    assert runtime.kernel_features()[:4] == ("softcap", "lse", "varlen", "sparse")
    library = open_library([softcap_entry("ws"), kernel_entry("a")])
    ws, a = library.kernels
    assert (ws.variant, ws.features) == ("window_softcap", frozenset({"softcap"}))
    assert (ws.softcap, ws.lse, ws.varlen, ws.sparse) == (True, False, False, False)
    assert (a.variant, a.features, a.softcap) == ("none", frozenset(), False)
    with pytest.raises(AttributeError, match="no attribute 'softcapped'"):
        ws.softcapped  # noqa: B018 (the attribute access is the test)


def test_a_softcap_kernel_is_described(open_library) -> None:
    library = open_library([softcap_entry("ws"), window_entry("w"), kernel_entry("a")])
    ws, w, a = library.kernels
    assert (ws.mask, ws.softcap, ws.num_params) == ("window", True, 40)
    assert ws.describe() == "ws (sm_80, f16, D=64, mask=window, softcap)"
    assert (w.softcap, a.softcap) == (False, False)
    assert a.describe() == "a (sm_80, f16, D=64, mask=none)"
    # Asked for by name with a softcap, it runs on any device of its arch.
    assert library.runs_on(ws, (8, 0)) and not library.runs_on(ws, (7, 5))


@pytest.mark.parametrize("index_type", ["i64", "i32"])
def test_the_softcap_is_packed_after_the_window(open_library, index_type) -> None:
    params = softcap_entry("ws", index_type=index_type)["params"]
    library = open_library([softcap_entry("ws", index_type=index_type)])
    args = problem(mask="top_left", window=(4, 4), softcap=50.0)
    plan = library.plan(args, (8, 0))
    values = decode(params, plan.params)
    assert values[:37] == expected_values(params[:37], args)
    assert values[37:] == [-4, 0, 50.0]
    assert len(plan.params[39]) == 4
    # The float32 of the argument, bit for bit.
    plan = library.plan(problem(mask="top_left", softcap=0.1), (8, 0))
    assert plan.params[39] == struct.pack("<f", 0.1)


@pytest.mark.parametrize("mask, window, bottom_right, band", [
    # S_q = 77, S_k = 131: every band, the unbounded one too.
    ("none", None, False, (-76, 130)),
    ("top_left", None, False, (-76, 0)),
    ("bottom_right", None, False, (-76, 54)),
    ("top_left", (8, 8), False, (-8, 0)),
    ("none", (4, 2), True, (50, 56)),
    ("none", (-1, 500), False, (-76, 130)),  # a window that bounds nothing
])
def test_softcap_calls_run_on_a_softcap_window_kernel(open_library, mask, window, bottom_right,
                                                      band) -> None:
    library = open_library([kernel_entry("none"), kernel_entry("tl", causal="top_left"),
                            kernel_entry("br", causal="bottom_right"), window_entry("w"),
                            softcap_entry("ws")])
    args = problem(mask=mask, window=window, bottom_right=bottom_right, softcap=50.0)
    assert chosen(library, args) == "ws"
    plan = library.plan(args, (9, 0))
    lo, hi, softcap = decode(softcap_entry("ws")["params"][37:], plan.params[37:])
    assert (lo, hi, softcap) == (*band, 50.0)
    # Without the softcap, the choice of API version 3, never ws.
    args.softcap = 0.0
    expected = ("w" if window is not None and band != (-76, 130)
                else {"none": "none", "top_left": "tl", "bottom_right": "br"}[mask])
    assert chosen(library, args) == expected


def test_the_bands_own_softcap_kernel_comes_first(open_library) -> None:
    library = open_library([softcap_entry("ws90", arch="sm_90a"), softcap_entry("ws"),
                            softcap_entry("tls", "top_left")])
    assert chosen(library, problem(mask="top_left", softcap=50.0)) == "tls"
    assert chosen(library, problem(mask="none", softcap=50.0)) == "ws90"
    assert chosen(library, problem(mask="none", softcap=50.0), (8, 0)) == "ws"
    assert chosen(library, problem(mask="top_left", window=(8, 0), softcap=50.0)) == "ws90"


def test_calls_without_a_softcap_never_run_on_softcap_kernels(open_library) -> None:
    library = open_library([softcap_entry("ws"), softcap_entry("tls", "top_left")])
    available = (f"(library {library.path}: available: ws (sm_80, f16, D=64, causal=window, "
                 "softcap); tls (sm_80, f16, D=64, causal=top_left, softcap))")
    assert error_of(NoKernelError, library.plan, problem(), (9, 0)) == (
        f"no kernel in the library for sm_90, f16, D=64, causal=none {available}")
    assert error_of(NoKernelError, library.plan, problem(mask="top_left"), (9, 0)) == (
        f"no kernel in the library for sm_90, f16, D=64, causal=top_left {available}; a kernel "
        "of causal=top_left or causal=window would compute it")
    assert "causal=top_left, name=ws (library " in error_of(
        NoKernelError, library.plan, problem(mask="top_left", kernel="ws"), (9, 0))


def test_no_kernel_for_a_softcap_names_it(open_library) -> None:
    library = open_library([kernel_entry("none"), window_entry("w")])
    available = (f"(library {library.path}: available: none (sm_80, f16, D=64, causal=none); "
                 "w (sm_80, f16, D=64, causal=window))")
    assert error_of(NoKernelError, library.plan, problem(softcap=50.0), (9, 0)) == (
        f"no kernel in the library for sm_90, f16, D=64, causal=none, softcap=50 {available}; "
        "a kernel of causal=none or causal=window, with softcap, would compute it")
    assert error_of(NoKernelError, library.plan,
                    problem(mask="top_left", window=(16, 0), softcap=30.5), (9, 0)) == (
        "no kernel in the library for sm_90, f16, D=64, causal=top_left, window_size=(16, 0), "
        f"softcap=30.5 {available}; a kernel of causal=window, with softcap, would compute it")
    assert "causal=none, softcap=50, name=w (library " in error_of(
        NoKernelError, library.plan, problem(softcap=50.0, kernel="w"), (9, 0))


@pytest.mark.parametrize("softcap, shown", [(-1.0, "-1"), (-1e-30, "-1e-30"),
                                            (math.inf, "inf"), (-math.inf, "-inf"),
                                            (math.nan, "nan"), (1e39, "inf")])
def test_bad_softcaps(open_library, softcap, shown) -> None:
    library = open_library([softcap_entry("ws")])
    assert error_of(ValueError, library.plan, problem(softcap=softcap), (9, 0)) == (
        f"softcap must be a finite float32 value >= 0 (0: no soft-capping), got {shown}")


@pytest.mark.parametrize("fields, detail", [
    (dict(softcap=True),
     "a kernel of 'softcap' true takes the scalar 'softcap' (the cap of its scores), which "
     "field 'params' lacks"),
    (dict(params=standard_params() + [SOFTCAP_PARAM]),
     "field 'params[37]' is the scalar 'softcap', which only a kernel of 'softcap' true takes "
     "(this one's 'softcap' is absent)"),
    (dict(softcap=False, params=standard_params() + [SOFTCAP_PARAM]),
     "field 'params[37]' is the scalar 'softcap', which only a kernel of 'softcap' true takes "
     "(this one's 'softcap' is false)"),
    (dict(softcap=True, params=standard_params() + [dict(SOFTCAP_PARAM, type="i32")]),
     "field 'params[37].type' must be 'f32' for scalar 'softcap', got \"i32\""),
    (dict(softcap="yes", params=standard_params() + [SOFTCAP_PARAM]),
     "field 'softcap' must be true or false, got \"yes\""),
    (dict(params=[{"name": "cap", "kind": "scalar", "type": "f32"}]),
     "field 'params[0].name' must be 'scale', 'window_lo', 'window_hi', 'window_align', "
     "'softcap' or 'num_splits' for kind 'scalar', got \"cap\""),
])
def test_bad_softcap_entries(make_library, fields, detail) -> None:
    root = make_library([kernel_entry("a", **fields)])
    assert error_of(TiledAttnError, KernelLibrary, root) == (
        f"{root}/manifest.json: kernel #0 (a): {detail}")


def test_a_softcap_kernel_launches(open_library, fake_cuda) -> None:
    library = open_library([softcap_entry("ws")])
    before = fake_cuda.count("launches")
    library.launch(problem(softcap=50.0), 0, 0)
    assert fake_cuda.count("launches") == before + 1


def test_sdpa_packs_the_softcap_as_the_runtime_reads_it(open_library) -> None:
    library = open_library([kernel_entry("tl", causal="top_left"), softcap_entry("ws")])
    args = packed_args(True, "top_left", (-1, -1), 50.0)
    assert args.softcap == 50.0 and args.window.enabled == 0
    assert bytes(args) == bytes(make_args(*tensors(), mask="top_left", softcap=50.0))
    plan = library.plan(args, (9, 0))
    assert library.kernels[plan.kernel].name == "ws"
    assert plan.params[-1] == struct.pack("<f", 50.0)
    assert decode(softcap_entry("ws")["params"][37:39], plan.params[37:39]) == [-76, 0]
    # Without it, as before.
    assert chosen(library, packed_args(True, "top_left", (-1, -1))) == "tl"


def test_sdpa_takes_softcap_as_a_keyword() -> None:
    import inspect

    from tiled_attn.sdpa import sdpa, sdpa_eager

    parameter = inspect.signature(sdpa).parameters["softcap"]
    assert parameter.kind is inspect.Parameter.KEYWORD_ONLY and parameter.default == 0.0
    assert inspect.signature(sdpa_eager).parameters["softcap"].default == 0.0


def test_the_custom_op_takes_softcap() -> None:
    torch = pytest.importorskip("torch")
    from tiled_attn import ops

    # softcap after the window, then the functions' arguments (score_mod,
    # mask_mod and their captured tensors, a block mask's lists).
    assert "int[2] window_size=[-1, -1], float softcap=0.0, str? score_mod=None" in ops.SCHEMA
    assert ops.SCHEMA.endswith("Tensor[]? block_mask=None) -> Tensor")
    schema = torch.ops.tiled_attn.sdpa.default._schema
    (softcap,) = [a for a in schema.arguments if a.name == "softcap"]
    assert str(softcap.type) == "float" and softcap.default_value == 0.0
    names = [a.name for a in schema.arguments]
    assert names[names.index("softcap") + 1] == "score_mod"


# ================================================================ the rows' log-sum-exps
#
# A call with return_lse (ta_sdpa_args.lse != 0) runs only on kernels that
# write them ("lse": true), which the compiler builds as "window" kernels;
# a call without runs on kernels without them first, else on one with them,
# which gets a view of no rows.

LSE = 0x500000000


def test_an_lse_kernel_is_described(open_library) -> None:
    library = open_library([lse_entry("wl"), window_entry("w")])
    wl, w = library.kernels
    assert (wl.mask, wl.lse, wl.num_params) == ("window", True, 45)
    assert wl.describe() == "wl (sm_80, f16, D=64, mask=window, lse)"
    assert w.lse is False


def test_the_lse_view_is_packed_contiguous(open_library) -> None:
    params = lse_entry("wl")["params"]
    library = open_library([lse_entry("wl")])
    plan = library.plan(problem(mask="top_left", lse=LSE), (9, 0))
    # [B, H, S_q] = [2, 3, 77] at the address, strides [H * S_q, S_q].
    assert decode(params[37:], plan.params[37:]) == [-76, 0, LSE, 2, 3, 77, 231, 77]
    # Not asked for: the same kernel, a view of no rows at address 0.
    plan = library.plan(problem(mask="top_left"), (9, 0))
    assert decode(params[39:], plan.params[39:]) == [0, 2, 3, 0, 0, 77]


@pytest.mark.parametrize("mask, window", [("none", None), ("top_left", None),
                                          ("bottom_right", None), ("top_left", (8, 0))])
def test_lse_calls_run_only_on_lse_kernels(open_library, mask, window) -> None:
    library = open_library([kernel_entry("none"), kernel_entry("tl", causal="top_left"),
                            kernel_entry("br", causal="bottom_right"), window_entry("w"),
                            lse_entry("wl")])
    assert chosen(library, problem(mask=mask, window=window, lse=LSE)) == "wl"
    expected = "w" if window else {"none": "none", "top_left": "tl", "bottom_right": "br"}[mask]
    assert chosen(library, problem(mask=mask, window=window)) == expected


def test_no_kernel_for_lse_names_it(open_library) -> None:
    library = open_library([kernel_entry("none"), window_entry("w")])
    message = error_of(NoKernelError, library.plan, problem(lse=LSE), (9, 0))
    assert message.startswith("no kernel in the library for sm_90, f16, D=64, causal=none, "
                              "log-sum-exp (library ")
    assert message.endswith("; a kernel of causal=none or causal=window, with lse, would "
                            "compute it")
    assert error_of(ValueError, library.plan, problem(lse=LSE + 2), (9, 0)) == (
        "lse (the rows' log-sum-exps, float32) must be 4-byte aligned, got 0x500000002")


@pytest.mark.parametrize("fields, detail", [
    (dict(lse=True), "a kernel of 'lse' true takes the view 'lse' (the rows' log-sum-exps), "
                     "whose base field 'params' lacks"),
    (dict(params=standard_params() + lse_params()),
     "field 'params[37]' belongs to the view 'lse', which only a kernel of 'lse' true takes "
     "(this one's 'lse' is absent)"),
])
def test_manifest_checks_the_lse_view(open_library, fields, detail) -> None:
    with pytest.raises(TiledAttnError) as info:
        open_library([kernel_entry("a", **fields)])
    assert detail in str(info.value)


def test_sdpa_packs_the_lse_address_last(open_library) -> None:
    library = open_library([lse_entry("wl"), kernel_entry("tl", causal="top_left")])
    args = packed_args(True, "top_left", (-1, -1), lse=LSE)
    assert args.lse == LSE
    assert bytes(args) == bytes(make_args(*tensors(), mask="top_left", lse=LSE))
    assert chosen(library, args) == "wl"
    assert chosen(library, packed_args(True, "top_left", (-1, -1))) == "tl"


def test_sdpa_takes_return_lse_as_a_keyword() -> None:
    import inspect

    from tiled_attn.sdpa import sdpa, sdpa_eager
    from tiled_attn.validation import check_return_lse

    parameter = inspect.signature(sdpa).parameters["return_lse"]
    assert parameter.kind is inspect.Parameter.KEYWORD_ONLY and parameter.default is False
    assert inspect.signature(sdpa_eager).parameters["return_lse"].default is False
    assert check_return_lse(True) is True and check_return_lse(False) is False
    for bad in (1, 0, None, "yes"):
        with pytest.raises(TypeError, match="return_lse must be a bool"):
            check_return_lse(bad)


def test_the_custom_op_with_lse_returns_two_tensors() -> None:
    torch = pytest.importorskip("torch")
    from tiled_attn import ops

    assert ops.LSE_SCHEMA.startswith("sdpa_lse(")
    assert ops.LSE_SCHEMA.endswith("Tensor[]? block_mask=None) -> (Tensor, Tensor)")
    schema = torch.ops.tiled_attn.sdpa_lse.default._schema
    assert len(schema.returns) == 2
    q = torch.empty(2, 3, 5, 64, dtype=torch.float16, device="meta")
    out, lse = ops._sdpa_lse_fake(q, q, q)
    assert out.shape == q.shape and out.dtype == torch.float16
    assert lse.shape == (2, 3, 5) and lse.dtype == torch.float32
    # MLA: the output has v's head dim.
    q192 = torch.empty(2, 3, 5, 192, dtype=torch.float16, device="meta")
    v128 = torch.empty(2, 3, 7, 128, dtype=torch.float16, device="meta")
    assert ops._sdpa_fake(q192, q192, v128).shape == (2, 3, 5, 128)
    out, lse = ops._sdpa_lse_fake(q192, q192, v128)
    assert out.shape == (2, 3, 5, 128) and lse.shape == (2, 3, 5)


# ================================================================ variable-length batches
#
# A variable-length batch (ta_sdpa_args.varlen) runs only on kernels of
# "varlen": true, which take the int32 views cu_seqlens_q and cu_seqlens_k
# (and, as "window" kernels, window_align); q, k, v, o are [1, H, total, D]
# views of packed [total, H, D] tensors; the grid is (query blocks of the
# longest sequence, heads, sequences).

CU_Q, CU_K = 0x600000000, 0x600001000


def varlen_problem(total_q: int = 500, total_k: int = 700, h: int = 3, h_kv: int = 3,
                   d: int = 64, num_seqs: int = 4, max_q: int = 300, max_k: int = 320,
                   dv: Optional[int] = None, **kwargs: Any) -> TaSdpaArgs:
    """ta_sdpa_args of packed q [total_q, h, d], k [total_k, h_kv, d], v and o
    (of head dim dv, d when None), ``num_seqs`` sequences of at most ``max_q``
    queries and ``max_k`` keys."""
    args, dv = problem(**kwargs), dv or d
    for slot, pointer, total, heads, cols in ((args.q, Q, total_q, h, d),
                                              (args.k, K, total_k, h_kv, d),
                                              (args.v, V, total_k, h_kv, dv),
                                              (args.o, O, total_q, h, dv)):
        set_packed_tensor(slot, FakeTensor((total, heads, cols), pointer=pointer))
    args.varlen = TaVarlen(1, num_seqs, CU_Q, CU_K, max_q, max_k)
    return args


def test_ta_varlen_follows_the_lse_and_precedes_the_functions() -> None:
    assert ctypes.sizeof(TaVarlen) == 48
    assert TaSdpaArgs.varlen.offset == TaSdpaArgs.lse.offset + 8
    assert TaSdpaArgs.score_function.offset == TaSdpaArgs.varlen.offset + 48
    # Then split-KV's fields (API version 11): num_splits packed after
    # num_captures, the workspace's address and bytes.
    assert TaSdpaArgs.num_splits.offset == TaSdpaArgs.num_captures.offset + 4
    assert TaSdpaArgs.workspace.offset == TaSdpaArgs.num_splits.offset + 4
    # Then the entries' key lengths (seqused_k).
    assert TaSdpaArgs.seqused_k.offset == TaSdpaArgs.workspace_bytes.offset + 8
    assert ctypes.sizeof(TaSdpaArgs) == TaSdpaArgs.seqused_k.offset + 8
    assert TaSdpaArgs().varlen.enabled == 0


def test_a_varlen_kernel_is_described(open_library) -> None:
    library = open_library([varlen_entry("vw"), varlen_entry("vtl", "top_left"),
                            window_entry("w")])
    vw, vtl, w = library.kernels
    assert (vw.mask, vw.varlen, vw.num_params) == ("window", True, 44)
    assert vw.describe() == "vw (sm_80, f16, D=64, mask=window, varlen)"
    assert (vtl.varlen, vtl.num_params, w.varlen) == (True, 41, False)
    # Asked for by name with a variable-length batch, it runs on any device of its arch.
    assert library.runs_on(vw, (8, 0)) and library.runs_on(vtl, (9, 0))
    assert not library.runs_on(vw, (7, 5))


@pytest.mark.parametrize("index_type", ["i64", "i32"])
def test_varlen_parameters_and_grid(open_library, index_type) -> None:
    params = varlen_entry("vw", index_type=index_type)["params"]
    library = open_library([varlen_entry("vw", index_type=index_type)])
    args = varlen_problem(mask="bottom_right")
    plan = library.plan(args, (9, 0))
    assert plan.grid == (5, 3, 4)  # (ceil(300 / 64), H, num_seqs)
    values = decode(params, plan.params)
    assert values[:37] == expected_values(params[:37], args)
    assert values[1:9] == [1, 3, 500, 64, 96000, 64, 192, 1]  # q, packed [500, 3, 64]
    # The band relative to each sequence's top-left diagonal, aligned bottom-right
    # (window_align 1): lo unbounded on the longest keys, hi the diagonal.
    assert values[37:] == [-319, 0, 1, CU_Q, 5, CU_K, 5]


def test_varlen_calls_run_only_on_varlen_kernels(open_library) -> None:
    library = open_library([kernel_entry("none"), kernel_entry("tl", causal="top_left"),
                            window_entry("w"), varlen_entry("vnone", "none"),
                            varlen_entry("vtl", "top_left"), varlen_entry("vw")])
    for mask, plain, varlen in (("none", "none", "vnone"), ("top_left", "tl", "vtl"),
                                ("bottom_right", "w", "vw")):
        assert chosen(library, problem(mask=mask)) == plain
        assert chosen(library, varlen_problem(mask=mask)) == varlen
    message = error_of(NoKernelError, open_library([kernel_entry("none")], name="plain").plan,
                       varlen_problem(), (9, 0))
    assert message.startswith("no kernel in the library for sm_90, f16, D=64, causal=none, "
                              "varlen (num_seqs=4, max_seqlen_q=300, max_seqlen_k=320) (library ")
    assert message.endswith("; a kernel of causal=none, with varlen, would compute it")


@pytest.mark.parametrize("fields, detail", [
    (dict(varlen=True), "a kernel of 'varlen' true takes the view 'cu_seqlens_q' (the query "
                        "sequences' offsets), whose base field 'params' lacks"),
    (dict(params=standard_params() + cu_seqlens_params()),
     "field 'params[37]' belongs to the view 'cu_seqlens_q', which only a kernel of 'varlen' "
     "true takes (this one's 'varlen' is absent)"),
])
def test_manifest_checks_the_varlen_views(open_library, fields, detail) -> None:
    with pytest.raises(TiledAttnError) as info:
        open_library([kernel_entry("a", **fields)])
    assert detail in str(info.value)


def test_a_varlen_kernel_is_not_heavy_first(make_library) -> None:
    root = make_library([varlen_entry("v", "top_left",
                                      schedule={"block_n": 64, "options": "heavy-first=1"})])
    assert "must be a schedule without heavy-first for a kernel of 'varlen' true" in error_of(
        TiledAttnError, KernelLibrary, root)


# ---------------------------------------------------------------- sdpa_varlen
#
# tiled_attn.sdpa_varlen's eager path on FakeTensors, with a stand-in for the
# torch module (fakes.fake_torch): the checks, the packed views, the offsets
# and the band as the fake driver receives them at launch.


@pytest.fixture
def torch_stand_in(monkeypatch) -> Any:
    torch = fake_torch()
    monkeypatch.setitem(sys.modules, "torch", torch)
    return torch


def packed_inputs(total_q: int = 500, total_k: int = 700, h: int = 3, h_kv: int = 3,
                  d: int = 64, num_seqs: int = 4, dtype: str = "float16"):
    """Packed q [total_q, h, d], k, v [total_k, h_kv, d] and the int32 offsets."""
    return (FakeTensor((total_q, h, d), dtype=dtype, pointer=Q),
            FakeTensor((total_k, h_kv, d), dtype=dtype, pointer=K),
            FakeTensor((total_k, h_kv, d), dtype=dtype, pointer=V),
            FakeTensor((num_seqs + 1,), dtype="int32", pointer=CU_Q),
            FakeTensor((num_seqs + 1,), dtype="int32", pointer=CU_K))


def launched(fake_cuda, entry: dict) -> list:
    """The last launch's parameters, read as ``entry``'s list says."""
    return decode(entry["params"], fake_cuda.last_params())


def test_sdpa_varlen_launches_the_packed_views(open_library, fake_cuda, torch_stand_in) -> None:
    from tiled_attn import sdpa_varlen

    entry = varlen_entry("vw")
    library = open_library([entry, varlen_entry("vtl", "top_left")])
    q, k, v, cu_q, cu_k = packed_inputs()
    before = fake_cuda.count("launches")
    out = sdpa_varlen(q, k, v, cu_q, cu_k, 300, 320, causal=True, causal_align="bottom_right",
                      window_size=(16, 16), library=library)
    assert fake_cuda.count("launches") == before + 1
    assert out.shape == q.shape and out.dtype is q.dtype and out.data_ptr() not in (Q, K, V)
    assert fake_cuda.last_grid() == (5, 3, 4)
    values = launched(fake_cuda, entry)
    assert values[:9] == [Q, 1, 3, 500, 64, 96000, 64, 192, 1]
    assert values[9:18] == [K, 1, 3, 700, 64, 134400, 64, 192, 1]
    assert values[27:36] == [out.data_ptr(), 1, 3, 500, 64, 96000, 64, 192, 1]
    assert values[36] == ctypes.c_float(1 / 8).value
    # The band relative to each sequence's top-left diagonal, aligned bottom-right.
    assert values[37:] == [-16, 0, 1, CU_Q, 5, CU_K, 5]
    # Top-left causal alone: the top_left kernel, which takes no band.
    sdpa_varlen(q, k, v, cu_q, cu_k, 300, 320, causal=True, library=library)
    assert launched(fake_cuda, varlen_entry("vtl", "top_left"))[37:] == [CU_Q, 5, CU_K, 5]


def test_sdpa_varlen_with_lse_softcap_and_grouped_heads(open_library, fake_cuda,
                                                        torch_stand_in) -> None:
    from tiled_attn import sdpa_varlen

    entry = varlen_entry("vwsl", softcap=True, lse=True, grouped_kv=True)
    library = open_library([entry])
    q, k, v, cu_q, cu_k = packed_inputs(h=6, h_kv=2, d=64)
    given = FakeTensor((500, 6, 64), pointer=O)
    given.dtype = q.dtype
    out, lse = sdpa_varlen(q, k, v, cu_q, cu_k, 300, 320, scale=0.5, enable_gqa=True,
                           softcap=30.0, return_lse=True, library=library, kernel="vwsl",
                           out=given)
    assert out is given
    assert lse.shape == (6, 500) and str(lse.dtype) == "torch.float32"
    values = launched(fake_cuda, entry)
    assert values[9:12] == [K, 1, 2]  # k: two heads
    assert values[36:41] == [0.5, -299, 319, 0, 30.0]
    # lse: [1, H, total_q] contiguous, that is the returned [H, total_q].
    assert values[41:47] == [lse.data_ptr(), 1, 6, 500, 3000, 500]
    assert values[47:] == [CU_Q, 5, CU_K, 5]


def test_sdpa_varlen_copies_what_the_kernels_cannot_take(open_library, fake_cuda,
                                                         torch_stand_in) -> None:
    from tiled_attn import sdpa_varlen

    library = open_library([varlen_entry("vnone", "none")])
    q, k, v, cu_q, cu_k = packed_inputs()
    # q 2 bytes into its storage, v with a token stride of 65 elements.
    q = FakeTensor(q.shape, pointer=Q + 2)
    v = FakeTensor(v.shape, strides=(65 * 3, 65, 1), pointer=V)
    sdpa_varlen(q, k, v, cu_q, cu_k, 300, 320, library=library)
    values = launched(fake_cuda, varlen_entry("vnone", "none"))
    assert values[0] not in (Q, Q + 2) and values[0] % 256 == 0
    assert values[9] == K
    assert values[18] != V and values[24:27] == [64, 192, 1]


@pytest.mark.parametrize("change, kind, message", [
    (dict(q=FakeTensor((2, 500, 3, 64))), ValueError,
     r"q must have rank 3 \[total, H, D\], got rank 4 with shape \(2, 500, 3, 64\)"),
    (dict(q=FakeTensor((500, 3, 64), device="cpu")), ValueError,
     "q is on cpu; tiled_attn.sdpa_varlen needs CUDA tensors"),
    (dict(q=FakeTensor((500, 3, 64), dtype="float32")), TypeError,
     "q has dtype torch.float32; tiled_attn.sdpa_varlen supports torch.float16 and "
     "torch.bfloat16"),
    (dict(cu_q=FakeTensor((5,), dtype="int64")), TypeError,
     r"cu_seqlens_q has dtype torch.int64; tiled_attn.sdpa_varlen needs torch.int32 offsets"),
    (dict(cu_k=FakeTensor((6,), dtype="int32")), ValueError,
     "cu_seqlens_k has 6 entries but cu_seqlens_q has 5; both hold num_seqs"),
    (dict(max_q=0), ValueError,
     r"max_seqlen_q must be >= 1 \(the longest sequence's length\) and below 2\*\*63, got 0"),
    (dict(max_k=320.0), TypeError, "max_seqlen_k must be an int, got float 320.0"),
    (dict(k=FakeTensor((700, 1, 64)), v=FakeTensor((700, 1, 64))), ValueError,
     "k and v have 1 and 1 heads but q has 3; pass enable_gqa=True"),
    # The runtime's checks, on the [1, H, total, D] views.
    (dict(max_q=501), ValueError,
     r"varlen.max_seqlen_q is 501 but q holds 500 query rows in all \(q \[1, 3, 500, 64\]\)"),
    (dict(v=FakeTensor((699, 3, 64))), ValueError,
     r"v has total length 699 but k has 700"),
])
def test_sdpa_varlen_errors(open_library, torch_stand_in, change, kind, message) -> None:
    from tiled_attn import sdpa_varlen

    library = open_library([varlen_entry("vnone", "none")])
    q, k, v, cu_q, cu_k = packed_inputs()
    call = dict(q=q, k=k, v=v, cu_q=cu_q, cu_k=cu_k, max_q=300, max_k=320)
    call.update(change)
    with pytest.raises(kind, match=message):
        sdpa_varlen(call["q"], call["k"], call["v"], call["cu_q"], call["cu_k"], call["max_q"],
                    call["max_k"], library=library)


def test_sdpa_varlen_needs_a_varlen_kernel(open_library, torch_stand_in) -> None:
    from tiled_attn import sdpa_varlen

    library = open_library([kernel_entry("none"), window_entry("w")])
    with pytest.raises(TiledAttnError, match=r"causal=top_left, varlen \(num_seqs=4, "
                                             r"max_seqlen_q=300, max_seqlen_k=320\) "):
        sdpa_varlen(*packed_inputs(), 300, 320, causal=True, library=library)


def test_sdpa_varlen_signature() -> None:
    import inspect

    from tiled_attn import sdpa_varlen

    parameters = inspect.signature(sdpa_varlen).parameters
    assert list(parameters)[:9] == ["q", "k", "v", "cu_seqlens_q", "cu_seqlens_k",
                                    "max_seqlen_q", "max_seqlen_k", "causal", "scale"]
    for name, default in (("enable_gqa", False), ("causal_align", "top_left"),
                          ("window_size", (-1, -1)), ("softcap", 0.0), ("return_lse", False),
                          ("library", None), ("kernel", None), ("out", None)):
        assert parameters[name].kind is inspect.Parameter.KEYWORD_ONLY
        assert parameters[name].default == default


def test_the_varlen_custom_ops() -> None:
    torch = pytest.importorskip("torch")
    from tiled_attn import ops

    assert ops.VARLEN_SCHEMA == (
        "sdpa_varlen(Tensor q, Tensor k, Tensor v, Tensor cu_seqlens_q, Tensor cu_seqlens_k, "
        "int max_seqlen_q, int max_seqlen_k, bool causal=False, float? scale=None, "
        "str? kernel_name=None, str? library_path=None, bool enable_gqa=False, "
        "str causal_align=\"top_left\", int[2] window_size=[-1, -1], float softcap=0.0) "
        "-> Tensor")
    assert ops.VARLEN_LSE_SCHEMA.startswith("sdpa_varlen_lse(Tensor q, ")
    assert ops.VARLEN_LSE_SCHEMA.endswith(" -> (Tensor, Tensor)")
    assert len(torch.ops.tiled_attn.sdpa_varlen_lse.default._schema.returns) == 2
    q = torch.empty(500, 3, 64, dtype=torch.float16, device="meta")
    cu = torch.empty(5, dtype=torch.int32, device="meta")
    out = ops._sdpa_varlen_fake(q, q, q, cu, cu, 300, 300)
    assert out.shape == q.shape and out.dtype == torch.float16
    out, lse = ops._sdpa_varlen_lse_fake(q, q, q, cu, cu, 300, 300)
    assert lse.shape == (3, 500) and lse.dtype == torch.float32
    # V's head dim (MLA's 128 under Q's 192) is the output's.
    q192 = torch.empty(500, 3, 192, dtype=torch.float16, device="meta")
    v128 = torch.empty(700, 3, 128, dtype=torch.float16, device="meta")
    assert ops._sdpa_varlen_fake(q192, q192, v128, cu, cu, 300, 300).shape == (500, 3, 128)
    out, lse = ops._sdpa_varlen_lse_fake(q192, q192, v128, cu, cu, 300, 300)
    assert out.shape == (500, 3, 128) and lse.shape == (3, 500)

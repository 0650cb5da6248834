"""manifest.json: loading, checking, and picking a kernel for a device."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List

import pytest

from tiled_attn import KernelLibrary, TiledAttnError
from tiled_attn.manifest import Arch, default_library_path


def make_entry(**overrides: Any) -> Dict[str, Any]:
    """A valid entry; ``overrides`` replace fields (a value of None deletes one)."""
    arch = overrides.get("arch") or "sm_80"
    dtype = overrides.get("dtype") or "f16"
    head_dim = overrides.get("head_dim") or 64
    causal = overrides.get("causal") or "none"
    name = f"sdpa_fwd_{arch.replace('_', '')}_{dtype}_d{head_dim}_{causal}"
    entry = {
        "name": name, "arch": arch, "dtype": dtype, "head_dim": head_dim, "causal": causal,
        "symbol": "sdpa_fwd", "ptx": f"{name}.ptx", "cubin": {},
        "block": [128, 1, 1], "block_m": 64, "shared_bytes": 16384,
        "abi": "memref-descriptor-v1", "num_params": 45,
        "schedule": {"block_m": 64, "block_n": 64, "stages": 2, "exp2": True},
        "ptxas": {"sm_80": {"registers": 128, "spill_bytes": 0, "shared_bytes": 16384}},
    }
    entry.update(overrides)
    return {key: value for key, value in entry.items() if value is not None}


def write_library(root: Path, entries: List[Dict[str, Any]], **top: Any) -> Path:
    """Write the manifest and an empty file for every PTX and cubin it names."""
    root.mkdir(parents=True, exist_ok=True)
    for entry in entries:
        if not isinstance(entry, dict):
            continue
        cubins = entry.get("cubin")
        files = [entry.get("ptx")] + list(cubins.values() if isinstance(cubins, dict) else [])
        for name in files:
            if isinstance(name, str) and "/" not in name:
                (root / name).write_text("// kernel\n")
    manifest = {"version": 1, "generator": "tiled-attn test", "kernels": entries}
    manifest.update(top)
    (root / "manifest.json").write_text(json.dumps(manifest))
    return root


# ---------------------------------------------------------------- loading


def test_valid_manifest(tmp_path: Path) -> None:
    entry = make_entry(cubin={"sm_80": "k.sm_80.cubin"})
    library = KernelLibrary.load(write_library(tmp_path, [entry, make_entry(head_dim=128)]))
    assert library.generator == "tiled-attn test"
    assert library.head_dims == (64, 128)
    first = library.entries[0]
    assert first.arch == Arch(8, 0) and first.block == (128, 1, 1)
    assert first.ptx == tmp_path / entry["ptx"]
    assert first.cubins == {"sm_80": tmp_path / "k.sm_80.cubin"}
    assert first.schedule["stages"] == 2 and first.align_bytes == 16
    assert "2 kernels" in repr(library)


def test_entry_as_tiled_attn_compile_writes_it(tmp_path: Path) -> None:
    """The schedule's and lowering's option strings and the compile times load."""
    entry = make_entry(
        schedule={"block_m": 128, "options": "exp2=1 mask-split=1",
                  "lowering": "chip=sm_80 warps=4 smem-lhs=1"},
        compile_seconds={"to_ptx": 4.881, "to_cubin": {"sm_80": 0.707}})
    first = KernelLibrary.load(write_library(tmp_path, [entry])).entries[0]
    assert first.schedule["options"] == "exp2=1 mask-split=1"
    assert first.schedule["lowering"] == "chip=sm_80 warps=4 smem-lhs=1"


def test_missing_folder(tmp_path: Path) -> None:
    with pytest.raises(TiledAttnError, match="does not exist.*TILED_ATTN_KERNELS"):
        KernelLibrary.load(tmp_path / "nowhere")


def test_missing_manifest(tmp_path: Path) -> None:
    with pytest.raises(TiledAttnError, match="manifest.json is missing"):
        KernelLibrary.load(tmp_path)


def test_malformed_json(tmp_path: Path) -> None:
    (tmp_path / "manifest.json").write_text('{"version": 1, "kernels": [')
    with pytest.raises(TiledAttnError, match="is not valid JSON: .* line 1"):
        KernelLibrary.load(tmp_path)


def test_top_level_not_an_object(tmp_path: Path) -> None:
    (tmp_path / "manifest.json").write_text("[]")
    with pytest.raises(TiledAttnError, match="expected a JSON object"):
        KernelLibrary.load(tmp_path)


def test_unsupported_version(tmp_path: Path) -> None:
    with pytest.raises(TiledAttnError, match="unsupported manifest version 2"):
        KernelLibrary.load(write_library(tmp_path, [], version=2))


def test_kernels_not_a_list(tmp_path: Path) -> None:
    with pytest.raises(TiledAttnError, match="'kernels' must be a list"):
        KernelLibrary.load(write_library(tmp_path, [], kernels={}))


@pytest.mark.parametrize(
    "field",
    ["name", "arch", "dtype", "head_dim", "causal", "symbol", "ptx", "block", "block_m",
     "shared_bytes", "abi", "num_params"],
)
def test_missing_field(tmp_path: Path, field: str) -> None:
    with pytest.raises(TiledAttnError, match=f"kernel #0.*missing field '{field}'"):
        KernelLibrary.load(write_library(tmp_path, [make_entry(**{field: None})]))


@pytest.mark.parametrize(
    "overrides, message",
    [
        ({"dtype": "f32"}, "'dtype' must be one of 'f16', 'bf16', got 'f32'"),
        ({"causal": "yes"}, "'causal' must be one of"),
        ({"arch": "gfx90a"}, "'arch' must be an arch like 'sm_80'"),
        ({"head_dim": "64"}, "'head_dim' must be an integer >= 1, got '64'"),
        ({"head_dim": True}, "'head_dim' must be an integer"),
        ({"block": [0, 1, 1]}, "'block' must be a list of 3 positive integers"),
        ({"block": [2048, 1, 1]}, "'block' must be at most 1024 threads"),
        ({"shared_bytes": -1}, "'shared_bytes' must be an integer >= 0"),
        ({"abi": "bare-pointer"},
         "'abi' must be one of 'memref-descriptor-v1', 'memref-descriptor-v1-index32'"),
        ({"num_params": 44}, "'num_params' must be 45 for abi"),
        ({"align_bytes": 12}, "'align_bytes' must be a power of two"),
        ({"cubin": {"sm_9": "x.cubin"}}, "'cubin' must be an arch like"),
        ({"cubin": ["x.cubin"]}, "'cubin' must be an object"),
        ({"ptx": "../escape.ptx"}, "'ptx' must be a file name inside the library folder"),
        ({"ptx": "sub/missing.ptx"}, "'ptx' names sub/missing.ptx, which is missing"),
        ({"schedule": 3}, "'schedule' must be an object"),
    ],
)
def test_bad_field(tmp_path: Path, overrides: Dict[str, Any], message: str) -> None:
    with pytest.raises(TiledAttnError, match=message.replace("(", r"\(").replace("[", r"\[")):
        KernelLibrary.load(write_library(tmp_path / "lib", [make_entry(**overrides)]))


def test_entry_not_an_object(tmp_path: Path) -> None:
    with pytest.raises(TiledAttnError, match="kernel #0: expected an object"):
        KernelLibrary.load(write_library(tmp_path, ["sdpa"]))


def test_duplicate_names(tmp_path: Path) -> None:
    with pytest.raises(TiledAttnError, match="appears twice"):
        KernelLibrary.load(write_library(tmp_path, [make_entry(), make_entry()]))


def test_missing_cubin_file(tmp_path: Path) -> None:
    write_library(tmp_path, [make_entry(cubin={"sm_90": "k.cubin"})])
    (tmp_path / "k.cubin").unlink()
    with pytest.raises(TiledAttnError, match="'cubin.sm_90' names k.cubin, which is missing"):
        KernelLibrary.load(tmp_path)


# ---------------------------------------------------------------- selection


def library_of(tmp_path: Path, *entries: Dict[str, Any]) -> KernelLibrary:
    return KernelLibrary.load(write_library(tmp_path, list(entries)))


def test_no_kernel_lists_what_is_available(tmp_path: Path) -> None:
    library = library_of(tmp_path, make_entry(), make_entry(arch="sm_90a", head_dim=128))
    with pytest.raises(TiledAttnError) as info:
        library.select((7, 5), "f16", 64, "none")
    message = str(info.value)
    assert "no kernel in the library for sm_75, f16, D=64, causal=none" in message
    assert "sdpa_fwd_sm80_f16_d64_none (sm_80, f16, D=64, causal=none)" in message
    assert "sdpa_fwd_sm90a_f16_d128_none (sm_90a, f16, D=128, causal=none)" in message


def test_no_kernel_in_an_empty_library(tmp_path: Path) -> None:
    with pytest.raises(TiledAttnError, match="holds no kernels"):
        library_of(tmp_path).select((9, 0), "bf16", 128, "top_left")


@pytest.mark.parametrize(
    "cc, arch",
    [((8, 0), "sm_80"), ((8, 9), "sm_80"), ((9, 0), "sm_90a"), ((10, 0), "sm_100a"),
     ((10, 3), "sm_90"), ((12, 1), "sm_90")],
)
def test_highest_arch_not_above_the_device(tmp_path: Path, cc, arch: str) -> None:
    library = library_of(tmp_path, make_entry(arch="sm_80"), make_entry(arch="sm_90"),
                         make_entry(arch="sm_90a"), make_entry(arch="sm_100a"))
    assert str(library.select(cc, "f16", 64, "none").arch) == arch


def test_family_arch(tmp_path: Path) -> None:
    library = library_of(tmp_path, make_entry(arch="sm_80"), make_entry(arch="sm_100f"))
    assert str(library.select((10, 3), "f16", 64, "none").arch) == "sm_100f"
    assert str(library.select((12, 0), "f16", 64, "none").arch) == "sm_80"


def test_dtype_head_dim_causal_and_name_filter(tmp_path: Path) -> None:
    entries = [make_entry(dtype=d, head_dim=h, causal=c)
               for d in ("f16", "bf16") for h in (64, 128) for c in ("none", "top_left")]
    library = library_of(tmp_path, *entries)
    chosen = library.select((9, 0), "bf16", 128, "top_left")
    assert (chosen.dtype, chosen.head_dim, chosen.causal) == ("bf16", 128, "top_left")
    named = library.select((9, 0), "f16", 64, "none", name="sdpa_fwd_sm80_f16_d64_none")
    assert named.name == "sdpa_fwd_sm80_f16_d64_none"
    with pytest.raises(TiledAttnError, match="name=other"):
        library.select((9, 0), "f16", 64, "none", name="other")


def test_same_arch_tie_goes_to_the_first_listed(tmp_path: Path) -> None:
    library = library_of(tmp_path, make_entry(name="a", ptx="a.ptx"),
                         make_entry(name="b", ptx="b.ptx"))
    assert library.select((8, 0), "f16", 64, "none").name == "a"


@pytest.mark.parametrize(
    "cc, image, kind",
    [((8, 0), "k.sm_80.cubin", "cubin"), ((8, 6), None, "ptx"),
     ((9, 0), "k.sm_90.cubin", "cubin"), ((12, 0), None, "ptx")],
)
def test_cubin_only_on_an_exact_match(tmp_path: Path, cc, image, kind) -> None:
    entry = make_entry(cubin={"sm_80": "k.sm_80.cubin", "sm_90": "k.sm_90.cubin"})
    chosen = library_of(tmp_path, entry).select(cc, "f16", 64, "none")
    path, got_kind = chosen.image_for(cc)
    assert got_kind == kind
    assert path == tmp_path / (image or entry["ptx"])


def test_cubin_of_the_entry_arch_first(tmp_path: Path) -> None:
    entry = make_entry(arch="sm_90a", cubin={"sm_90": "plain.cubin", "sm_90a": "a.cubin"})
    chosen = library_of(tmp_path, entry).select((9, 0), "f16", 64, "none")
    assert chosen.image_for((9, 0)) == (tmp_path / "a.cubin", "cubin")


# ---------------------------------------------------------------- arch, paths


@pytest.mark.parametrize("text", ["sm_80", "sm_90a", "sm_100a", "sm_100f", "sm_121a"])
def test_arch_round_trip(text: str) -> None:
    assert str(Arch.parse(text)) == text


@pytest.mark.parametrize("text", ["sm80", "sm_8", "sm_90b", "compute_80", 80])
def test_arch_rejects(text: Any) -> None:
    with pytest.raises(ValueError, match="expected an arch like"):
        Arch.parse(text)


def test_library_path_from_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TILED_ATTN_KERNELS", str(tmp_path))
    assert default_library_path() == tmp_path
    monkeypatch.delenv("TILED_ATTN_KERNELS")
    repo_root = Path(__file__).resolve().parents[2]
    assert default_library_path() == repo_root / "build" / "kernels"


def index32_entry(**overrides: Any) -> Dict[str, Any]:
    entry = make_entry(**overrides)
    name = entry["name"] + "_index32"
    return dict(entry, name=name, ptx=f"{name}.ptx", abi="memref-descriptor-v1-index32")


def test_index32_kernel_wins_where_offsets_fit(tmp_path: Path) -> None:
    library = library_of(tmp_path, make_entry(causal="top_left"),
                         index32_entry(causal="top_left"), make_entry())
    chosen = library.select((9, 0), "f16", 64, "top_left")
    assert chosen.name.endswith("_index32") and chosen.index_bits == 32
    fallback = library.select((9, 0), "f16", 64, "top_left", index32_ok=False)
    assert fallback.name == "sdpa_fwd_sm80_f16_d64_top_left" and fallback.index_bits == 64
    # Where the library has only a 64-bit kernel, it is the choice either way.
    assert library.select((9, 0), "f16", 64, "none").index_bits == 64


def test_index32_only_library_names_the_offset_limit(tmp_path: Path) -> None:
    library = library_of(tmp_path, index32_entry())
    with pytest.raises(TiledAttnError, match=r"64-bit indices \(an element offset reaches 2\*\*31\)"):
        library.select((9, 0), "f16", 64, "none", index32_ok=False)


def test_higher_arch_beats_index32(tmp_path: Path) -> None:
    library = library_of(tmp_path, index32_entry(arch="sm_80"), make_entry(arch="sm_90"))
    assert str(library.select((9, 0), "f16", 64, "none").arch) == "sm_90"

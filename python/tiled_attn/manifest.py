"""The kernel library: ``manifest.json`` and the PTX/cubin files it names.

The compiler writes a folder holding one PTX file per kernel (and, where
``ptxas`` was installed, cubin files) plus ``manifest.json``::

    {"version": 1, "generator": "tiled-attn <git sha>",
     "kernels": [{"name": "sdpa_fwd_sm80_f16_d64_none", "arch": "sm_80",
                  "dtype": "f16", "head_dim": 64, "causal": "none",
                  "symbol": "sdpa_fwd", "ptx": "sdpa_fwd_sm80_f16_d64_none.ptx",
                  "cubin": {"sm_80": "sdpa_fwd_sm80_f16_d64_none.sm_80.cubin"},
                  "block": [128, 1, 1], "block_m": 64, "shared_bytes": 16384,
                  "abi": "memref-descriptor-v1", "num_params": 45,
                  "schedule": {...}, "ptxas": {...}}]}

This module reads and checks that file and picks the kernel for a device. It
needs neither torch nor a GPU.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from .errors import TiledAttnError

__all__ = [
    "ABI",
    "ABI_NUM_PARAMS",
    "ENV_VAR",
    "MANIFEST_NAME",
    "Arch",
    "KernelEntry",
    "KernelLibrary",
    "default_library",
    "default_library_path",
]

#: The environment variable naming the kernel library folder.
ENV_VAR = "TILED_ATTN_KERNELS"
#: The manifest's file name inside the library folder.
MANIFEST_NAME = "manifest.json"
#: The manifest versions this runtime reads.
SUPPORTED_VERSIONS = (1,)
#: The kernel ABI this runtime can launch: MLIR memref descriptors for q, k,
#: v, o (11 parameters each), then the f32 scale.
ABI = "memref-descriptor-v1"
ABI_INDEX32 = "memref-descriptor-v1-index32"
ABI_NUM_PARAMS = {ABI: 4 * 11 + 1, ABI_INDEX32: 4 * 11 + 1}
DTYPES = ("f16", "bf16")
CAUSAL_MODES = ("none", "top_left", "bottom_right")
#: Alignment, in bytes, that a kernel needs of its base pointers and of every
#: stride other than the unit one, unless its entry says otherwise
#: (``"align_bytes"``): 16 bytes is one vectorized load (``cp.async``) or
#: store (the output leaves in 16-byte row pieces). It holds for the output
#: that ``sdpa`` allocates.
DEFAULT_ALIGN_BYTES = 16
MAX_THREADS_PER_BLOCK = 1024

ComputeCapability = Tuple[int, int]

_ARCH_RE = re.compile(r"^sm_(\d+)([af]?)$")
# Arch-specific ("a") code is the most specific, family ("f") next, plain last.
_SPECIFICITY = {"": 0, "f": 1, "a": 2}


@dataclass(frozen=True)
class Arch:
    """A target such as ``sm_80``, ``sm_90a`` (arch-specific) or ``sm_100f`` (family)."""

    major: int
    minor: int
    suffix: str = ""

    @classmethod
    def parse(cls, text: str) -> "Arch":
        """Parse ``sm_<major><minor>[a|f]``; raise ValueError on anything else."""
        match = _ARCH_RE.match(text) if isinstance(text, str) else None
        if match is None or len(match.group(1)) < 2:
            raise ValueError(f"expected an arch like 'sm_80' or 'sm_90a', got {text!r}")
        digits, suffix = match.groups()
        return cls(int(digits[:-1]), int(digits[-1]), suffix)

    @classmethod
    def of_device(cls, cc: ComputeCapability) -> "Arch":
        """The plain arch of a device of compute capability ``cc``."""
        return cls(cc[0], cc[1])

    @property
    def capability(self) -> ComputeCapability:
        """The compute capability this arch is named after."""
        return (self.major, self.minor)

    def runs_on(self, cc: ComputeCapability) -> bool:
        """Whether code for this arch runs on a device of compute capability ``cc``.

        Plain PTX runs on any later device (the driver JIT-compiles it);
        arch-specific code only on its own capability; family code on the
        same major version with an equal or later minor.
        """
        if self.suffix == "a":
            return cc == self.capability
        if self.suffix == "f":
            return cc[0] == self.major and cc[1] >= self.minor
        return cc >= self.capability

    def sort_key(self) -> Tuple[int, int, int]:
        """Order by capability, then by how specific the code is."""
        return (self.major, self.minor, _SPECIFICITY[self.suffix])

    def __str__(self) -> str:
        return f"sm_{self.major}{self.minor}{self.suffix}"


@dataclass(frozen=True)
class KernelEntry:
    """One kernel of the library, as described by the manifest."""

    name: str
    arch: Arch
    dtype: str
    head_dim: int
    causal: str
    symbol: str
    ptx: Path
    block: Tuple[int, int, int]
    block_m: int
    shared_bytes: int
    abi: str
    num_params: int
    cubins: Mapping[str, Path] = field(default_factory=dict)
    align_bytes: int = DEFAULT_ALIGN_BYTES
    schedule: Mapping[str, Any] = field(default_factory=dict)
    ptxas: Mapping[str, Any] = field(default_factory=dict)

    @property
    def index_bits(self) -> int:
        """32 for a kernel of 32-bit index arithmetic (ABI ``-index32``), else 64."""
        return 32 if self.abi == ABI_INDEX32 else 64

    def matches(self, cc: ComputeCapability, dtype: str, head_dim: int, causal: str) -> bool:
        """Whether this kernel computes (dtype, head_dim, causal) on a ``cc`` device."""
        return (
            self.arch.runs_on(cc)
            and self.dtype == dtype
            and self.head_dim == head_dim
            and self.causal == causal
        )

    def image_for(self, cc: ComputeCapability) -> Tuple[Path, str]:
        """The file to load on a ``cc`` device and its kind, ``"cubin"`` or ``"ptx"``.

        A cubin is used only when it was built for exactly the device's
        capability (the entry's own arch string first); otherwise the PTX,
        which the driver JIT-compiles.
        """
        exact = [key for key in self.cubins if Arch.parse(key).capability == cc]
        if exact:
            exact.sort(key=lambda key: key != str(self.arch))
            return self.cubins[exact[0]], "cubin"
        return self.ptx, "ptx"

    def describe(self) -> str:
        """A one-line summary used in error messages."""
        return (
            f"{self.name} ({self.arch}, {self.dtype}, D={self.head_dim}, "
            f"causal={self.causal})"
        )


class KernelLibrary:
    """A checked kernel library folder: its manifest entries and their files."""

    def __init__(self, root: Path, entries: Sequence[KernelEntry], generator: str = "") -> None:
        self.root = Path(root)
        self.entries: Tuple[KernelEntry, ...] = tuple(entries)
        self.generator = generator

    @classmethod
    def load(cls, root: "str | os.PathLike[str] | None" = None) -> "KernelLibrary":
        """Read and check ``<root>/manifest.json``.

        ``root`` defaults to :func:`default_library_path`. Raises
        :class:`TiledAttnError` when the folder or manifest is missing, the
        JSON is malformed, a field is missing or wrong, or a named file is
        not there.
        """
        root_path = Path(root) if root is not None else default_library_path()
        manifest_path = root_path / MANIFEST_NAME
        data = _read_json(manifest_path)
        return cls(root_path, _parse_manifest(data, root_path, manifest_path),
                   str(data.get("generator", "")))

    @property
    def head_dims(self) -> Tuple[int, ...]:
        """The head dimensions some kernel of the library handles, sorted."""
        return tuple(sorted({entry.head_dim for entry in self.entries}))

    def select(
        self,
        cc: ComputeCapability,
        dtype: str,
        head_dim: int,
        causal: str,
        name: Optional[str] = None,
        index32_ok: bool = True,
    ) -> KernelEntry:
        """The kernel for a device of compute capability ``cc``.

        Among the entries that match (dtype, head_dim, causal) and run on the
        device, the one with the highest arch not above the device's wins;
        at equal arch a kernel of 32-bit index arithmetic wins (the library
        carries one only where it measured faster), unless ``index32_ok`` is
        false (some element offset reaches 2**31); further ties go to the one
        listed first. ``name`` restricts the choice to the entry of that
        name. Raises :class:`TiledAttnError` listing what the library holds
        when nothing fits.
        """
        candidates = [e for e in self.entries if e.matches(cc, dtype, head_dim, causal)]
        if name is not None:
            candidates = [e for e in candidates if e.name == name]
        if not index32_ok:
            candidates = [e for e in candidates if e.index_bits == 64]
        if not candidates:
            raise TiledAttnError(self._no_kernel_message(cc, dtype, head_dim, causal, name,
                                                         index32_ok))
        return max(candidates, key=lambda e: (e.arch.sort_key(), e.index_bits == 32))

    def _no_kernel_message(
        self, cc: ComputeCapability, dtype: str, head_dim: int, causal: str, name: Optional[str],
        index32_ok: bool = True,
    ) -> str:
        wanted = f"{Arch.of_device(cc)}, {dtype}, D={head_dim}, causal={causal}"
        if name is not None:
            wanted += f", name={name}"
        if not index32_ok:
            wanted += ", 64-bit indices (an element offset reaches 2**31)"
        if not self.entries:
            available = "it holds no kernels"
        else:
            available = "available: " + "; ".join(e.describe() for e in self.entries)
        return f"no kernel in the library for {wanted} (library {self.root}: {available})"

    def __repr__(self) -> str:
        return f"KernelLibrary({str(self.root)!r}, {len(self.entries)} kernels)"


def default_library_path() -> Path:
    """``$TILED_ATTN_KERNELS``, else ``<repo root>/build/kernels``."""
    env = os.environ.get(ENV_VAR)
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[2] / "build" / "kernels"


_LIBRARIES: Dict[Path, KernelLibrary] = {}


def default_library() -> KernelLibrary:
    """The library at :func:`default_library_path`, loaded once per path."""
    path = default_library_path().resolve()
    library = _LIBRARIES.get(path)
    if library is None:
        library = _LIBRARIES[path] = KernelLibrary.load(path)
    return library


# --------------------------------------------------------------------------
# Reading and checking the manifest.


def _read_json(manifest_path: Path) -> Dict[str, Any]:
    """The manifest's top-level object; TiledAttnError when absent or not JSON."""
    if not manifest_path.parent.is_dir():
        raise TiledAttnError(
            f"no kernel library at {manifest_path.parent}: the folder does not exist; "
            f"build the kernels or set {ENV_VAR} to a folder holding {MANIFEST_NAME}"
        )
    try:
        text = manifest_path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise TiledAttnError(
            f"no kernel library at {manifest_path.parent}: {MANIFEST_NAME} is missing; "
            f"build the kernels or set {ENV_VAR} to a folder holding {MANIFEST_NAME}"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise TiledAttnError(f"cannot read {manifest_path}: {exc}") from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise TiledAttnError(
            f"{manifest_path} is not valid JSON: {exc.msg} at line {exc.lineno} "
            f"column {exc.colno}"
        ) from None
    if not isinstance(data, dict):
        raise TiledAttnError(
            f"{manifest_path}: expected a JSON object at the top, got {type(data).__name__}"
        )
    return data


def _parse_manifest(data: Mapping[str, Any], root: Path, manifest_path: Path) -> List[KernelEntry]:
    """Check the top-level fields and every entry."""
    version = data.get("version")
    if version not in SUPPORTED_VERSIONS:
        raise TiledAttnError(
            f"{manifest_path}: unsupported manifest version {version!r} "
            f"(this runtime reads {', '.join(map(str, SUPPORTED_VERSIONS))})"
        )
    kernels = data.get("kernels")
    if not isinstance(kernels, list):
        raise TiledAttnError(
            f"{manifest_path}: field 'kernels' must be a list, got {kernels!r}"
        )
    entries = [_parse_entry(raw, index, root, manifest_path) for index, raw in enumerate(kernels)]
    _check_unique_names(entries, manifest_path)
    return entries


def _check_unique_names(entries: Sequence[KernelEntry], manifest_path: Path) -> None:
    seen = set()
    for entry in entries:
        if entry.name in seen:
            raise TiledAttnError(f"{manifest_path}: kernel name {entry.name!r} appears twice")
        seen.add(entry.name)


class _EntryReader:
    """Typed access to one manifest entry; every failure names the entry and field."""

    def __init__(self, raw: Mapping[str, Any], where: str) -> None:
        self.raw = raw
        self.where = where

    def fail(self, key: str, expected: str, value: Any) -> TiledAttnError:
        return TiledAttnError(f"{self.where}: field {key!r} must be {expected}, got {value!r}")

    def get(
        self, key: str, check: Callable[[Any], bool], expected: str, default: Any = ...
    ) -> Any:
        """``raw[key]`` if ``check`` accepts it; ``default`` when absent, if given."""
        if key not in self.raw:
            if default is not ...:
                return default
            raise TiledAttnError(f"{self.where}: missing field {key!r}")
        value = self.raw[key]
        if not check(value):
            raise self.fail(key, expected, value)
        return value

    def string(self, key: str, choices: Optional[Sequence[str]] = None) -> str:
        if choices is None:
            return self.get(key, lambda v: isinstance(v, str) and v != "", "a non-empty string")
        return self.get(key, lambda v: v in choices, "one of " + ", ".join(map(repr, choices)))

    def integer(self, key: str, minimum: int, default: Any = ...) -> int:
        return self.get(key, lambda v: _is_int(v) and v >= minimum,
                        f"an integer >= {minimum}", default)

    def mapping(self, key: str) -> Mapping[str, Any]:
        return self.get(key, lambda v: isinstance(v, dict), "an object", {})


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _parse_entry(raw: Any, index: int, root: Path, manifest_path: Path) -> KernelEntry:
    """Check one entry of ``kernels`` and resolve its files."""
    where = f"{manifest_path}: kernel #{index}"
    if not isinstance(raw, dict):
        raise TiledAttnError(f"{where}: expected an object, got {raw!r}")
    if isinstance(raw.get("name"), str):
        where += f" ({raw['name']})"
    r = _EntryReader(raw, where)
    name = r.string("name")
    arch = _parse_arch(r, "arch", r.string("arch"))
    abi = r.string("abi", tuple(ABI_NUM_PARAMS))
    num_params = r.integer("num_params", 0)
    if num_params != ABI_NUM_PARAMS[abi]:
        raise r.fail("num_params", f"{ABI_NUM_PARAMS[abi]} for abi {abi!r}", num_params)
    block = r.get("block", lambda v: isinstance(v, list) and len(v) == 3
                  and all(_is_int(x) and x >= 1 for x in v), "a list of 3 positive integers")
    if block[0] * block[1] * block[2] > MAX_THREADS_PER_BLOCK:
        raise r.fail("block", f"at most {MAX_THREADS_PER_BLOCK} threads", block)
    align_bytes = r.integer("align_bytes", 1, DEFAULT_ALIGN_BYTES)
    if align_bytes & (align_bytes - 1):
        raise r.fail("align_bytes", "a power of two", align_bytes)
    return KernelEntry(
        name=name,
        arch=arch,
        dtype=r.string("dtype", DTYPES),
        head_dim=r.integer("head_dim", 1),
        causal=r.string("causal", CAUSAL_MODES),
        symbol=r.string("symbol"),
        ptx=_library_file(r, "ptx", r.string("ptx"), root),
        cubins=_parse_cubins(r, root),
        block=(block[0], block[1], block[2]),
        block_m=r.integer("block_m", 1),
        shared_bytes=r.integer("shared_bytes", 0),
        abi=abi,
        num_params=num_params,
        align_bytes=align_bytes,
        schedule=r.mapping("schedule"),
        ptxas=r.mapping("ptxas"),
    )


def _parse_arch(r: _EntryReader, key: str, text: str) -> Arch:
    try:
        return Arch.parse(text)
    except ValueError:
        raise r.fail(key, "an arch like 'sm_80' or 'sm_90a'", text) from None


def _parse_cubins(r: _EntryReader, root: Path) -> Dict[str, Path]:
    """The ``cubin`` object: arch -> file name, every file present."""
    cubins = r.mapping("cubin")
    result = {}
    for arch_text, file_name in cubins.items():
        arch = _parse_arch(r, "cubin", arch_text)
        if not isinstance(file_name, str) or not file_name:
            raise r.fail(f"cubin.{arch_text}", "a file name", file_name)
        result[str(arch)] = _library_file(r, f"cubin.{arch_text}", file_name, root)
    return result


def _library_file(r: _EntryReader, key: str, file_name: str, root: Path) -> Path:
    """``root / file_name``, which must stay inside ``root`` and exist."""
    path = root / file_name
    try:
        path.resolve().relative_to(root.resolve())
    except ValueError:
        raise r.fail(key, "a file name inside the library folder", file_name) from None
    if not path.is_file():
        raise TiledAttnError(
            f"{r.where}: field {key!r} names {file_name}, which is missing from {root}"
        )
    return path

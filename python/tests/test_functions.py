"""Score and mask functions through tiled_attn.sdpa (issue 37): the kernel of
the functions asked for is chosen, their captured inputs reach its parameters
by name, and bad captures are refused before anything launches. Runs on
fakes.FakeTensor stand-ins over the real runtime and the fake driver."""

from __future__ import annotations

import struct
import sys
from typing import Any, Dict, List

import pytest
from fakes import FakeTensor, fake_torch, kernel_entry, standard_params

from tiled_attn import sdpa
from tiled_attn.errors import NoKernelError

Q, K, V, SLOPES, DOCS = 0x100000000, 0x200000000, 0x300000000, 0x700000000, 0x710000000
FORMATS = {"ptr": "<Q", "i32": "<i", "i64": "<q", "f32": "<f"}


def function_entry(name: str, alibi: bool, document: bool) -> Dict[str, Any]:
    """A kernel with ALiBi (slopes: [H] f32) and/or document masking
    (document_ids: [B, S] i32), whose parameters follow the standard ones as
    the compiler's ABI lays them out."""
    params = standard_params()
    captures: List[Dict[str, Any]] = []
    if alibi:
        captures.append({"name": "slopes", "function": "alibi", "kind": "view",
                         "dtype": "f32", "rank": 1})
        params += [{"name": "slopes", "kind": "base", "type": "ptr"},
                   {"name": "slopes", "kind": "size", "dim": 0, "type": "i64"}]
    if document:
        captures.append({"name": "document_ids", "function": "document", "kind": "view",
                         "dtype": "i32", "rank": 2})
        params += [{"name": "document_ids", "kind": "base", "type": "ptr"},
                   {"name": "document_ids", "kind": "size", "dim": 0, "type": "i64"},
                   {"name": "document_ids", "kind": "size", "dim": 1, "type": "i64"},
                   {"name": "document_ids", "kind": "stride", "dim": 0, "type": "i64"}]
    return kernel_entry(name, params=params, captures=captures,
                        score_function="alibi" if alibi else "",
                        mask_function="document" if document else "")


def bias_entry(name: str) -> Dict[str, Any]:
    """A kernel with the bias score function (bias: [B, H, S_q, S_k] f32)."""
    params = standard_params() + [{"name": "bias", "kind": "base", "type": "ptr"}] + [
        {"name": "bias", "kind": kind, "dim": d, "type": "i64"}
        for kind in ("size", "stride") for d in range(4)]
    return kernel_entry(name, params=params, score_function="bias",
                        captures=[{"name": "bias", "function": "bias", "kind": "view",
                                   "dtype": "f32", "rank": 4}])


def mask_entry(name: str) -> Dict[str, Any]:
    """A kernel with the mask mask function (mask: [B, H, S_q, S_k] i8; its
    parameters without the unit last stride, so that it differs from the bias
    kernel's by their count)."""
    params = standard_params() + [{"name": "mask", "kind": "base", "type": "ptr"}] + [
        {"name": "mask", "kind": kind, "dim": d, "type": "i64"}
        for kind in ("size", "stride") for d in range(4 if kind == "size" else 3)]
    return kernel_entry(name, params=params, mask_function="mask",
                        captures=[{"name": "mask", "function": "mask", "kind": "view",
                                   "dtype": "i8", "rank": 4, "align_bytes": 16}])


ENTRIES = {"plain": kernel_entry("plain"), "bias": bias_entry("bias"),
           "mask": mask_entry("mask"),
           "alibi": function_entry("alibi", True, False),
           "doc": function_entry("doc", False, True),
           "alibi_doc": function_entry("alibi_doc", True, True)}


@pytest.fixture
def library(make_library, monkeypatch) -> Any:
    monkeypatch.setitem(sys.modules, "torch", fake_torch())
    return make_library(list(ENTRIES.values()))


def qkv():
    return (FakeTensor((2, 3, 77, 64), pointer=Q), FakeTensor((2, 3, 131, 64), pointer=K),
            FakeTensor((2, 3, 131, 64), pointer=V))


def slopes(dtype: str = "float32", shape=(3,)) -> FakeTensor:
    return FakeTensor(shape, dtype=dtype, pointer=SLOPES)


def docs(device: str = "cuda:0") -> FakeTensor:
    return FakeTensor((2, 131), dtype="int32", pointer=DOCS, device=device)


def launched(fake_cuda, **kwargs: Any) -> Dict[str, Any]:
    """The kernel launched (by parameter count) and its parameters past the
    standard 37, decoded."""
    before = fake_cuda.count("launches")
    sdpa(*qkv(), **kwargs)
    assert fake_cuda.count("launches") == before + 1
    raw = fake_cuda.last_params()
    (name,) = [n for n, e in ENTRIES.items() if len(e["params"]) == len(raw)]
    params = ENTRIES[name]["params"]
    values = [struct.unpack(FORMATS[p["type"]], b)[0] for p, b in zip(params, raw)]
    return {"kernel": name, "extra": values[37:]}


def test_the_kernel_of_the_functions_gets_their_captures(library, fake_cuda) -> None:
    assert launched(fake_cuda, library=library)["kernel"] == "plain"
    seen = launched(fake_cuda, library=library, score_mod="alibi", score_mod_args=(slopes(),))
    assert seen == {"kernel": "alibi", "extra": [SLOPES, 3]}
    seen = launched(fake_cuda, library=library, mask_mod="document", mask_mod_args=[docs()])
    assert seen == {"kernel": "doc", "extra": [DOCS, 2, 131, 131]}
    seen = launched(fake_cuda, library=library, score_mod="alibi", score_mod_args=(slopes(),),
                    mask_mod="document", mask_mod_args=(docs(),))
    assert seen == {"kernel": "alibi_doc", "extra": [SLOPES, 3, DOCS, 2, 131, 131]}


@pytest.mark.parametrize("kwargs, kind, message", [
    (dict(score_mod="relpos"), ValueError,
     "has no kernel with score_mod='relpos' and mask_mod=None; its functions: alibi, "
     "alibi+document, bias, document, mask"),
    (dict(score_mod="alibi"), ValueError,
     "score_mod 'alibi' takes 1 captured input (slopes) in score_mod_args, got 0"),
    (dict(score_mod="alibi", score_mod_args=(slopes(), slopes())), ValueError,
     "score_mod 'alibi' takes 1 captured input (slopes) in score_mod_args, got 2"),
    (dict(score_mod="alibi", score_mod_args=(slopes("float16"),)), ValueError,
     "score_mod_args (slopes) must be a torch.float32 tensor, got torch.float16"),
    (dict(score_mod="alibi", score_mod_args=(slopes(shape=(3, 1)),)), ValueError,
     "score_mod_args (slopes) must have rank 1, got shape (3, 1)"),
    (dict(mask_mod="document", mask_mod_args=(docs("cuda:1"),)), ValueError,
     "mask_mod_args (document_ids) must be on cuda:0 (with q), got cuda:1"),
    (dict(score_mod="alibi", score_mod_args=(0.5,)), TypeError,
     "score_mod_args (slopes) must be a tensor, got float"),
    (dict(score_mod_args=(slopes(),)), ValueError, "score_mod_args given without score_mod"),
    (dict(score_mod=3), TypeError,
     "score_mod must be the name of a library function (a str) or None, got int 3"),
    (dict(mask_mod="document", mask_mod_args=docs()), TypeError,
     "mask_mod_args must be a tuple of the function's captured inputs, got FakeTensor"),
])
def test_bad_functions_and_captures_are_refused(library, fake_cuda, kwargs, kind,
                                                message) -> None:
    before = fake_cuda.counts()
    with pytest.raises(kind) as info:
        sdpa(*qkv(), library=library, **kwargs)
    assert message in str(info.value)
    assert fake_cuda.counts() == before


def test_a_bool_attn_mask_is_the_mask_function(library, fake_cuda) -> None:
    # A bool attn_mask, broadcast over the heads: the mask kernel reads its
    # bytes (no float conversion) through a [B, H, S_q, S_k] view of stride 0
    # along H; rows 16-byte aligned as they are (no copy: rows 144 apart) or
    # copied into rows padded to 16 bytes (rows of 131 bytes).
    aligned = FakeTensor((2, 1, 77, 131), dtype="bool", pointer=0x740000000,
                         strides=(77 * 144, 77 * 144, 144, 1))
    seen = launched(fake_cuda, library=library, attn_mask=aligned)
    assert seen == {"kernel": "mask",
                    "extra": [0x740000000, 2, 3, 77, 131, 77 * 144, 0, 144]}
    mask = FakeTensor((2, 1, 77, 131), dtype="bool", pointer=0x740000000)
    seen = launched(fake_cuda, library=library, attn_mask=mask)
    assert seen["kernel"] == "mask" and seen["extra"][0] != 0x740000000
    assert seen["extra"][1:] == [2, 3, 77, 131, 77 * 144, 0, 144]
    # The mask's bytes as int8 or uint8 do too, as mask_mod="mask": the
    # kernel copies them in 16-byte blocks (its capture's align_bytes, which
    # KernelInfo.captures says), so rows of 131 bytes come as a copy with
    # rows of 144, and aligned ones as they are.
    from tiled_attn import KernelLibrary
    assert [k.captures for k in KernelLibrary.load(library).kernels
            if k.mask_function == "mask"] == [(("mask", "mask", "i8", 4, 16),)]
    for dtype in ("int8", "uint8"):
        byte_mask = FakeTensor((2, 3, 77, 131), dtype=dtype, pointer=0x740000000)
        seen = launched(fake_cuda, library=library, mask_mod="mask",
                        mask_mod_args=(byte_mask,))
        assert seen["kernel"] == "mask" and seen["extra"][0] != 0x740000000
        assert seen["extra"][1:] == [2, 3, 77, 131, 3 * 77 * 144, 77 * 144, 144]
    byte_mask = FakeTensor((2, 3, 77, 144), dtype="int8", pointer=0x740000000)
    seen = launched(fake_cuda, library=library, mask_mod="mask", mask_mod_args=(byte_mask,))
    assert seen["extra"][0] == 0x740000000
    # A float32 mask for the byte mask is refused, naming the dtypes.
    with pytest.raises(ValueError, match=r"mask_mod_args \(mask\) must be a torch.bool or "
                                         r"torch.int8 or torch.uint8 tensor, got torch.float32"):
        sdpa(*qkv(), library=library, mask_mod="mask",
             mask_mod_args=(FakeTensor((2, 3, 77, 131), dtype="float32"),))
    with pytest.raises(ValueError, match="a bool attn_mask and mask_mod together"):
        sdpa(*qkv(), library=library, attn_mask=mask, mask_mod="document",
             mask_mod_args=(docs(),))


def test_a_float_attn_mask_is_the_bias_function(library, fake_cuda) -> None:
    # PyTorch's attn_mask, broadcast over the batch: the bias kernel reads it
    # through a [B, H, S_q, S_k] view of stride 0 along B and H.
    # (Rows 132 floats apart, 16-byte aligned: no copy; see aligned_rows.)
    mask = FakeTensor((77, 131), dtype="float32", pointer=0x720000000, strides=(132, 1))
    seen = launched(fake_cuda, library=library, attn_mask=mask)
    assert seen == {"kernel": "bias",
                    "extra": [0x720000000, 2, 3, 77, 131, 0, 0, 132, 1]}



def test_a_float_attn_mask_gets_16_byte_aligned_rows(library, fake_cuda) -> None:
    # Rows of 131 floats (524 bytes) apart are copied into rows 132 apart, as
    # kernels that copy the bias in 16-byte blocks need (their manifest's
    # align_bytes); the view keeps S_k = 131.
    mask = FakeTensor((77, 131), dtype="float32", pointer=0x720000000)
    seen = launched(fake_cuda, library=library, attn_mask=mask)
    assert seen["kernel"] == "bias"
    assert seen["extra"][0] != 0x720000000 and seen["extra"][0] % 16 == 0
    assert seen["extra"][1:] == [2, 3, 77, 131, 0, 0, 132, 1]


def block_mask_entry(name: str = "block_mask_sm_80_document") -> Dict[str, Any]:
    """The block mask kernel of "document" as tiled-attn-compile records it:
    every parameter a captured input's (document_ids, seq_q, seq_k,
    block_kinds)."""
    params = [{"name": "document_ids", "kind": "base", "type": "ptr"},
              {"name": "document_ids", "kind": "size", "dim": 0, "type": "i64"},
              {"name": "document_ids", "kind": "size", "dim": 1, "type": "i64"},
              {"name": "document_ids", "kind": "stride", "dim": 0, "type": "i64"},
              {"name": "seq_q", "kind": "scalar", "type": "i64"},
              {"name": "seq_k", "kind": "scalar", "type": "i64"},
              {"name": "block_kinds", "kind": "base", "type": "ptr"}]
    params += [{"name": "block_kinds", "kind": kind, "dim": d, "type": "i64"}
               for kind in ("size", "stride") for d in range(4 if kind == "size" else 3)]
    return {"name": name, "program": "block_mask", "arch": "sm_80",
            "mask_function": "document",
            "captures": [{"name": "document_ids", "function": "document", "kind": "view",
                          "dtype": "i32", "rank": 2}],
            "symbol": "block_mask", "ptx": f"{name}.ptx", "block": [256, 1, 1],
            "block_size": 128, "shared_bytes": 256, "abi": "tiled-attn-v2",
            "index_bits": 64, "params": params}


def test_block_mask_kernels_are_listed_apart_and_launch_by_name(open_library,
                                                                fake_cuda) -> None:
    from ctypes import addressof

    from tiled_attn.functions import capture_array
    from tiled_attn.runtime import TaBlockMaskArgs

    library = open_library([kernel_entry("plain"), block_mask_entry()])
    assert [k.name for k in library.kernels] == ["plain"]
    (kernel,) = library.block_masks
    assert kernel.mask_function == "document"
    assert kernel.captures == (("document_ids", "document", "i32", 2, 1),)
    torch = fake_torch()
    ids = FakeTensor((2, 300), dtype="int32", pointer=DOCS)
    captures, count, keep = capture_array(torch, ids.device, kernel.captures,
                                          (("mask_mod", "document", (ids,)),))
    args = TaBlockMaskArgs(mask_function=b"document", captures=addressof(captures),
                           num_captures=count, seq_q=300, seq_k=700)
    args.block_kinds.data = 0x720000000
    args.block_kinds.sizes[:] = (2, 3, 3, 6)
    args.block_kinds.strides[:] = (54, 18, 6, 1)
    before = fake_cuda.count("launches")
    library.launch_block_mask(args, 0, 0)
    assert fake_cuda.count("launches") == before + 1
    assert fake_cuda.last_grid() == (3, 3, 2)
    values = [struct.unpack(FORMATS[p["type"]], b)[0]
              for p, b in zip(block_mask_entry()["params"], fake_cuda.last_params())]
    assert values == [DOCS, 2, 300, 300, 300, 700, 0x720000000, 2, 3, 3, 6, 54, 18, 6]
    # A function without a block mask kernel, and a capture of the wrong kind.
    args.mask_function = b"prefix_lm"
    with pytest.raises(NoKernelError, match="no block mask kernel of mask function "
                                            "'prefix_lm'.*'document'"):
        library.launch_block_mask(args, 0, 0)
    with pytest.raises(ValueError, match=r"mask_mod_args \(document_ids\) must be a "
                                         r"torch.int32 tensor"):
        capture_array(torch, ids.device, kernel.captures,
                      (("mask_mod", "document", (FakeTensor((2, 300), dtype="float32"),)),))
    del keep

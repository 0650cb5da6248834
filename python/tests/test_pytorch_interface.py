"""tiled_attn.sdpa in PyTorch's argument order, and the FlashAttention shim
(flash_attn_func, flash_attn_varlen_func): issue 37, item 5, without torch.

As in test_bad_inputs.py, the eager paths run on fakes.FakeTensor stand-ins
and fakes.fake_torch over the real runtime and the fake driver: a good call
launches once, and what it launched (the kernel's parameters, decoded as
its manifest entry types them) shows the mapping of the arguments (the
views' sizes and strides, the scale, the band of a window kernel); a
refused call raises exactly its error and launches nothing.
"""

from __future__ import annotations

import inspect
import struct
import sys
from typing import Any, Callable, Dict, List, Tuple

import pytest
from fakes import FakeTensor, fake_torch, kernel_entry, varlen_entry, window_entry

import tiled_attn
from tiled_attn import (NoKernelError, NotSupportedError, TiledAttnError, flash_attn_func,
                        flash_attn_varlen_func, sdpa)

#: Made-up device addresses, 256-byte aligned and far apart.
Q, K, V, CU_Q, CU_K = 0x100000000, 0x200000000, 0x300000000, 0x600000000, 0x600001000
FORMATS = {"ptr": "<Q", "i32": "<i", "i64": "<q", "f32": "<f"}


@pytest.fixture
def torch_stand_in(monkeypatch) -> Any:
    torch = fake_torch()
    monkeypatch.setitem(sys.modules, "torch", torch)
    return torch


ENTRIES = {"a": kernel_entry("a"), "w": window_entry("w", grouped_kv=True),
           "vnone": varlen_entry("vnone", "none"), "vw": varlen_entry("vw", grouped_kv=True)}


@pytest.fixture
def library(make_library, torch_stand_in) -> Any:
    """D=64 f16 kernels for sm_80: no mask, window (every band; grouped K/V heads
    too), and their varlen twins."""
    return make_library(list(ENTRIES.values()))


def tensor(shape, pointer: int, dtype: str = "float16") -> FakeTensor:
    return FakeTensor(shape, dtype=dtype, pointer=pointer)


def qkv(b: int = 2, h: int = 3, s_q: int = 77, s_k: int = 131, d: int = 64,
        h_kv: int = 3) -> Tuple[FakeTensor, FakeTensor, FakeTensor]:
    """sdpa's [B, H, S, D] q, k, v."""
    return (tensor((b, h, s_q, d), Q), tensor((b, h_kv, s_k, d), K),
            tensor((b, h_kv, s_k, d), V))


def bshd(b: int = 2, h: int = 3, s_q: int = 77, s_k: int = 131, d: int = 64,
         h_kv: int = 3) -> Tuple[FakeTensor, FakeTensor, FakeTensor]:
    """FlashAttention's [B, S, H, D] q, k, v, contiguous."""
    return (tensor((b, s_q, h, d), Q), tensor((b, s_k, h_kv, d), K),
            tensor((b, s_k, h_kv, d), V))


def packed(total_q: int = 500, total_k: int = 700, h: int = 3, d: int = 64, num_seqs: int = 4):
    return (tensor((total_q, h, d), Q), tensor((total_k, h, d), K), tensor((total_k, h, d), V),
            tensor((num_seqs + 1,), CU_Q, "int32"), tensor((num_seqs + 1,), CU_K, "int32"))


def launched(fake_cuda, call: Callable[..., Any], *args: Any, **kwargs: Any) -> Dict[str, Any]:
    """Runs ``call``, checks that it launched once, and returns what: the
    kernel (``"kernel"``, told by its parameter count), each view's
    ``(base, sizes, strides)`` (``"q"``, ``"k"``, ``"v"``, ``"o"``), the
    ``"scale"``, a window kernel's ``"band"`` (lo, hi) and a varlen window
    kernel's ``"align"``, and ``"result"``, the call's."""
    before = fake_cuda.count("launches")
    result = call(*args, **kwargs)
    assert fake_cuda.count("launches") == before + 1
    raw = fake_cuda.last_params()
    (name,) = [n for n, e in ENTRIES.items() if len(e["params"]) == len(raw)]
    params = ENTRIES[name]["params"]
    values: List[Any] = [struct.unpack(FORMATS[p["type"]], b)[0] for p, b in zip(params, raw)]
    seen: Dict[str, Any] = {"kernel": name, "result": result, "scale": values[36]}
    for index, view in enumerate(("q", "k", "v", "o")):
        base = 9 * index
        seen[view] = (values[base], tuple(values[base + 1:base + 5]),
                      tuple(values[base + 5:base + 9]))
    if name in ("w", "vw"):
        seen["band"] = tuple(values[37:39])
    if name == "vw":
        seen["align"] = values[39]
    return seen


def refused(fake_cuda, kind: type, call: Callable[..., Any], *args: Any, **kwargs: Any) -> str:
    """The message of the ``kind`` exception (exactly that type) ``call`` raises,
    after checking that nothing was launched or loaded meanwhile."""
    before = fake_cuda.counts()
    with pytest.raises(kind) as info:
        call(*args, **kwargs)
    assert type(info.value) is kind, f"{type(info.value).__name__}: {info.value}"
    after = fake_cuda.counts()
    assert (after["launches"], after["moduleLoads"]) == (before["launches"],
                                                         before["moduleLoads"])
    return str(info.value)


# ================================================================ sdpa in PyTorch's order


def test_sdpa_has_pytorchs_signature() -> None:
    parameters = inspect.signature(sdpa).parameters
    positional = [name for name, p in parameters.items()
                  if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD]
    assert positional == ["query", "key", "value", "attn_mask", "dropout_p", "is_causal",
                          "scale", "enable_gqa"]
    assert [parameters[name].default for name in positional[3:]] == [None, 0.0, False, None,
                                                                     False]
    keyword = [name for name, p in parameters.items() if p.kind is inspect.Parameter.KEYWORD_ONLY]
    assert keyword == ["causal", "causal_align", "window_size", "softcap", "score_mod",
                       "score_mod_args", "mask_mod", "mask_mod_args", "block_mask", "return_lse",
                       "library", "kernel", "out"]
    assert parameters["causal"].default is None


def test_sdpa_is_causal_positional_keyword_and_alias(library, fake_cuda) -> None:
    # Top-left causal on the window kernel: the band (-(S_q - 1), 0).
    for args, kwargs in (((None, 0.0, True), {}), ((), dict(is_causal=True)),
                         ((), dict(causal=True)), ((), dict(is_causal=True, causal=True)),
                         ((), dict(is_causal=False, causal=True))):
        seen = launched(fake_cuda, sdpa, *qkv(), *args, library=library, **kwargs)
        assert (seen["kernel"], seen["band"]) == ("w", (-76, 0)), (args, kwargs)
    for args, kwargs in (((), {}), ((None, 0.0, False), {}), ((None, 0), dict(causal=False)),
                         ((), dict(is_causal=False, causal=False))):
        assert launched(fake_cuda, sdpa, *qkv(), *args, library=library,
                        **kwargs)["kernel"] == "a"


def test_sdpa_scale_and_enable_gqa_positional(library, fake_cuda) -> None:
    seen = launched(fake_cuda, sdpa, *qkv(), None, 0.0, False, 0.5, library=library)
    assert seen["scale"] == 0.5
    assert launched(fake_cuda, sdpa, *qkv(), library=library)["scale"] == 0.125
    seen = launched(fake_cuda, sdpa, *qkv(h=4, h_kv=1), None, 0.0, True, None, True,
                    library=library)
    assert seen["k"][1] == (2, 1, 131, 64) and seen["band"] == (-76, 0)
    assert refused(fake_cuda, ValueError, sdpa, *qkv(h=4, h_kv=1), library=library).startswith(
        "k and v have 1 and 1 heads but q has 4; pass enable_gqa=True")


BOOL_MASK = ("attn_mask is the bool {0}: tiled_attn.sdpa's 4th positional argument is attn_mask "
             "now (PyTorch's order: query, key, value, attn_mask, dropout_p, is_causal, scale, "
             "enable_gqa), a tensor; for {1} pass is_causal={0}")


def test_a_bool_attn_mask_is_the_old_causal_and_refused(library, fake_cuda) -> None:
    # sdpa(q, k, v, True) was causal; now it fails loudly, never silently non-causal.
    assert refused(fake_cuda, TypeError, sdpa, *qkv(), True, library=library) == \
        BOOL_MASK.format(True, "a causal mask")
    assert refused(fake_cuda, TypeError, sdpa, *qkv(), False, library=library) == \
        BOOL_MASK.format(False, "no mask")
    # The old sdpa(q, k, v, causal, scale): the mask is named first, not dropout_p.
    assert refused(fake_cuda, TypeError, sdpa, *qkv(), True, 0.125, library=library) == \
        BOOL_MASK.format(True, "a causal mask")
    assert refused(fake_cuda, TypeError, sdpa, *qkv(), attn_mask=True, is_causal=True,
                   library=library) == BOOL_MASK.format(True, "a causal mask")


def test_attn_mask_tensors_are_checked(library, fake_cuda) -> None:
    # A float attn_mask runs on the library's bias kernels, a bool one on its
    # mask kernels (test_functions.py); this library has neither.
    mask = tensor((2, 1, 77, 131), 0x700000000, "float32")
    # A missing kernel is both the library's fault and the argument's.
    assert issubclass(NoKernelError, TiledAttnError) and issubclass(NoKernelError, ValueError)
    assert "has no kernel with score_mod='bias'" in refused(fake_cuda, NoKernelError, sdpa, *qkv(),
                                                          mask, library=library)
    assert "has no kernel with score_mod=None and mask_mod='mask'" in refused(
        fake_cuda, NoKernelError, sdpa, *qkv(), tensor((77, 131), 0x700000000, "bool"),
        library=library)
    assert refused(fake_cuda, ValueError, sdpa, *qkv(), tensor((2, 2, 77, 131), 0x700000000,
                                                               "float32"),
                   library=library) == ("attn_mask must broadcast to [B, H, S_q, S_k] = "
                                        "[2, 3, 77, 131], got shape (2, 2, 77, 131)")
    assert refused(fake_cuda, ValueError, sdpa, *qkv(), tensor((77, 131), 0x700000000, "int32"),
                   library=library) == ("attn_mask must be a bool or floating-point tensor "
                                        "(True or an additive value where a query sees a key), "
                                        "got torch.int32")
    assert refused(fake_cuda, ValueError, sdpa, *qkv(), FakeTensor((77, 131), dtype="float32",
                                                                   device="cuda:1"),
                   library=library) == "attn_mask must be on cuda:0 (with q), got cuda:1"
    assert refused(fake_cuda, ValueError, sdpa, *qkv(), mask, score_mod="alibi",
                   library=library).startswith("a float attn_mask and score_mod together")
    assert refused(fake_cuda, TypeError, sdpa, *qkv(), attn_mask="causal", library=library) == (
        "attn_mask must be None or a tensor, got str 'causal'")


def test_dropout_is_refused(library, fake_cuda) -> None:
    assert refused(fake_cuda, NotSupportedError, sdpa, *qkv(), None, 0.1, library=library) == (
        "dropout_p is 0.1, but tiled_attn.sdpa has no dropout (its kernels are inference "
        "kernels): pass dropout_p=0.0")
    assert refused(fake_cuda, NotSupportedError, sdpa, *qkv(), dropout_p=float("nan"),
                   library=library).startswith("dropout_p is nan, but tiled_attn.sdpa")
    assert refused(fake_cuda, TypeError, sdpa, *qkv(), dropout_p="0",
                   library=library) == "dropout_p must be a float, got str '0'"
    assert refused(fake_cuda, TypeError, sdpa, *qkv(), dropout_p=None,
                   library=library) == "dropout_p must be a float, got NoneType None"
    launched(fake_cuda, sdpa, *qkv(), dropout_p=0, library=library)


@pytest.mark.parametrize("kwargs, kind, message", [
    (dict(is_causal=1), TypeError, "is_causal must be a bool, got int 1"),
    (dict(is_causal=None), TypeError, "is_causal must be a bool, got NoneType None"),
    (dict(causal=1), TypeError, "causal must be a bool, got int 1"),
    (dict(is_causal=True, causal=1), TypeError,
     "causal (an alias of is_causal) must be a bool or None, got int 1"),
    (dict(is_causal=True, causal=False), ValueError,
     "is_causal=True and causal=False disagree; causal is an alias of is_causal: pass one of "
     "them"),
])
def test_is_causal_and_causal_errors(library, fake_cuda, kwargs, kind, message) -> None:
    assert refused(fake_cuda, kind, sdpa, *qkv(), library=library, **kwargs) == message


# ================================================================ flash_attn_func


def test_flash_attn_func_signature() -> None:
    parameters = list(inspect.signature(flash_attn_func).parameters.values())
    assert [(p.name, p.default) for p in parameters[3:11]] == [
        ("dropout_p", 0.0), ("softmax_scale", None), ("causal", False),
        ("window_size", (-1, -1)), ("softcap", 0.0), ("alibi_slopes", None),
        ("deterministic", False), ("return_attn_probs", False)]
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in parameters[11:])
    varlen = list(inspect.signature(flash_attn_varlen_func).parameters)
    assert varlen[:15] == ["q", "k", "v", "cu_seqlens_q", "cu_seqlens_k", "max_seqlen_q",
                           "max_seqlen_k"] + [p.name for p in parameters[3:11]]
    assert {"flash_attn_func", "flash_attn_varlen_func", "NotSupportedError"} <= set(
        tiled_attn.__all__)


def test_flash_attn_func_reads_and_writes_bshd_in_place(library, fake_cuda) -> None:
    q, k, v = bshd()
    seen = launched(fake_cuda, flash_attn_func, q, k, v, library=library)
    # The [B, H, S, D] views of the [B, S, H, D] tensors, at their addresses: no copy.
    assert seen["q"] == (Q, (2, 3, 77, 64), (77 * 3 * 64, 64, 3 * 64, 1))
    assert seen["k"] == (K, (2, 3, 131, 64), (131 * 3 * 64, 64, 3 * 64, 1))
    assert seen["v"] == (V, (2, 3, 131, 64), (131 * 3 * 64, 64, 3 * 64, 1))
    result = seen["result"]
    assert result.shape == (2, 77, 3, 64) and result.stride() == (77 * 3 * 64, 3 * 64, 64, 1)
    assert seen["o"] == (result.data_ptr(), (2, 3, 77, 64), (77 * 3 * 64, 64, 3 * 64, 1))
    assert result.dtype == q.dtype and (seen["kernel"], seen["scale"]) == ("a", 0.125)


@pytest.mark.parametrize("s_q, s_k, causal, window, band", [
    (77, 131, True, (-1, -1), (-76, 54)),      # bottom-right: the last query sees the last key
    (131, 77, True, (-1, -1), (-130, -54)),    # the first 54 queries see no key
    (77, 131, False, (4, 4), (50, 58)),        # the window bottom-right too, without causal
    (77, 131, True, (4, 4), (50, 54)),         # and with it: causal caps the right side
    (77, 131, False, (-1, 0), (-76, 54)),      # a one-sided window
    (131, 131, True, (4, 4), (-4, 0)),         # S_q == S_k: both alignments agree
    (131, 131, True, (-1, -1), (-130, 0)),
])
def test_flash_attn_func_is_bottom_right(library, fake_cuda, s_q, s_k, causal, window,
                                         band) -> None:
    seen = launched(fake_cuda, flash_attn_func, *bshd(s_q=s_q, s_k=s_k), causal=causal,
                    window_size=window, library=library)
    assert (seen["kernel"], seen["band"]) == ("w", band)


def test_flash_attn_func_scale_gqa_and_deterministic(library, fake_cuda) -> None:
    seen = launched(fake_cuda, flash_attn_func, *bshd(), 0.0, 0.25, library=library)
    assert seen["scale"] == 0.25
    seen = launched(fake_cuda, flash_attn_func, *bshd(h=6, h_kv=2), causal=True,
                    deterministic=True, library=library)
    assert seen["k"][1] == (2, 2, 131, 64) and seen["band"] == (-76, 54)
    assert seen["result"].shape == (2, 77, 6, 64)


@pytest.mark.parametrize("function, args", [
    (flash_attn_func, ()),
    (flash_attn_varlen_func, ()),
])
def test_flash_refusals(library, fake_cuda, function, args) -> None:
    name = f"tiled_attn.{function.__name__}"
    inputs = bshd() if function is flash_attn_func else (*packed(), 300, 320)
    call = lambda **kwargs: function(*inputs, library=library, **kwargs)  # noqa: E731
    assert refused(fake_cuda, NotSupportedError, call, dropout_p=0.1) == (
        f"dropout_p is 0.1, but {name} has no dropout (its kernels are inference kernels): pass "
        "dropout_p=0.0")
    slopes = tensor((3,), 0x700000000, "float32")
    if function is flash_attn_func:
        # Causal ALiBi runs on the alibi kernels (this library has none);
        # FlashAttention's non-causal ALiBi is symmetric: refused.
        assert refused(fake_cuda, NotSupportedError, call, alibi_slopes=slopes).startswith(
            "alibi_slopes without causal=True: FlashAttention's non-causal ALiBi")
        assert "has no kernel with score_mod='alibi'" in refused(
            fake_cuda, NoKernelError, call, alibi_slopes=slopes, causal=True)
        assert refused(fake_cuda, ValueError, call, causal=True,
                       alibi_slopes=tensor((2, 3), 0x700000000, "float32")) == (
            "alibi_slopes must have shape (3,) (one slope per query head; slopes per batch "
            "entry are not supported), got (2, 3)")
        assert refused(fake_cuda, ValueError, call, causal=True,
                       alibi_slopes=tensor((3,), 0x700000000, "float16")) == (
            "alibi_slopes must be float32 (FlashAttention's), got torch.float16")
    else:
        assert refused(fake_cuda, NotSupportedError, call, alibi_slopes=slopes).startswith(
            f"alibi_slopes is not None, but {name} has no ALiBi kernels")
    assert refused(fake_cuda, NotSupportedError, call, return_attn_probs=True) == (
        f"return_attn_probs=True is not supported: {name}'s kernels never form the attention "
        "probabilities; for the rows' log-sum-exps (FlashAttention's softmax_lse) call "
        "tiled_attn.sdpa or tiled_attn.sdpa_varlen with return_lse=True")
    assert refused(fake_cuda, TypeError, call, return_attn_probs=1) == (
        "return_attn_probs must be a bool, got int 1")
    assert refused(fake_cuda, TypeError, call, deterministic="yes") == (
        "deterministic must be a bool, got str 'yes'")
    assert refused(fake_cuda, TypeError, call, causal=1) == "causal must be a bool, got int 1"


def test_flash_attn_func_bad_tensors(library, fake_cuda) -> None:
    q, k, v = bshd()
    assert refused(fake_cuda, ValueError, flash_attn_func, tensor((77, 3, 64), Q), k, v,
                   library=library) == (
        "q must have rank 4 [B, S, H, D], got rank 3 with shape (77, 3, 64)")
    assert refused(fake_cuda, TypeError, flash_attn_func, "q", k, v,
                   library=library) == "q must be a torch.Tensor, got str"
    assert refused(fake_cuda, TypeError, flash_attn_func, q, k, v, softmax_scale="0.1",
                   library=library) == "scale must be a float or None, got str '0.1'"


# ================================================================ flash_attn_varlen_func


@pytest.mark.parametrize("causal, window, kernel, band", [
    (True, (-1, -1), "vw", (-319, 0)),   # relative to each sequence's bottom-right diagonal
    (False, (4, 4), "vw", (-4, 4)),
    (True, (4, 4), "vw", (-4, 0)),
    (False, (-1, -1), "vnone", None),
])
def test_flash_attn_varlen_func_is_bottom_right(library, fake_cuda, causal, window, kernel,
                                                band) -> None:
    seen = launched(fake_cuda, flash_attn_varlen_func, *packed(), 300, 320, causal=causal,
                    window_size=window, library=library)
    assert seen["kernel"] == kernel and seen["q"] == (Q, (1, 3, 500, 64), (96000, 64, 192, 1))
    if band is not None:
        assert (seen["band"], seen["align"]) == (band, 1)


def test_flash_attn_varlen_func_scale_and_gqa(library, fake_cuda) -> None:
    q, _, _, cu_q, cu_k = packed()
    k, v = tensor((700, 1, 64), K), tensor((700, 1, 64), V)
    seen = launched(fake_cuda, flash_attn_varlen_func, q, k, v, cu_q, cu_k, 300, 320, 0.0, 0.5,
                    True, library=library)
    assert seen["scale"] == 0.5 and seen["k"][1] == (1, 1, 700, 64)
    assert (seen["band"], seen["align"]) == ((-319, 0), 1)

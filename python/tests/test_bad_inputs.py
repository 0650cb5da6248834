"""Bad inputs to tiled_attn.sdpa and tiled_attn.sdpa_varlen: a clear error, no launch.

Issue 17's list, through the Python layer, without torch or a GPU: the eager
paths run on fakes.FakeTensor stand-ins and a stand-in for the torch module
(fakes.fake_torch), over the real runtime and the fake driver (conftest.py),
whose counters show that nothing was launched. Every case raises
TypeError (a wrong kind of value), ValueError (a wrong value) or
TiledAttnError (the library, a GPU it has no kernel for; NoBackwardError,
one, for a gradient of what has no backward pass: issues 36 and 39) and
leaves the fake driver's launch count where it was. The C API's side of the same list
is test/Runtime/BadInputsTest.cpp.
"""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple

import pytest
from fakes import FakeTensor, fake_torch, kernel_entry, varlen_entry

from tiled_attn import sdpa, sdpa_varlen
from tiled_attn.errors import NoBackwardError, NoKernelError, TiledAttnError

#: Made-up device addresses, 256-byte aligned and far apart.
Q, K, V, O = 0x100000000, 0x200000000, 0x300000000, 0x400000000
CU_Q, CU_K = 0x600000000, 0x600001000


@pytest.fixture
def torch_stand_in(monkeypatch) -> Any:
    torch = fake_torch()
    monkeypatch.setitem(sys.modules, "torch", torch)
    return torch


@pytest.fixture
def library(make_library, torch_stand_in) -> Path:
    """A library of D=64 f16 kernels for sm_80: plain, causal and varlen."""
    return make_library([kernel_entry("a"), kernel_entry("tl", causal="top_left"),
                         varlen_entry("v", "none")])


def tensor(shape, pointer: int, dtype: str = "float16", **kwargs: Any) -> FakeTensor:
    return FakeTensor(shape, dtype=dtype, pointer=pointer, **kwargs)


def qkv(b: int = 2, h: int = 3, s_q: int = 77, s_k: int = 131, d: int = 64,
        **kwargs: Any) -> Tuple[FakeTensor, FakeTensor, FakeTensor]:
    return (tensor((b, h, s_q, d), Q, **kwargs), tensor((b, h, s_k, d), K, **kwargs),
            tensor((b, h, s_k, d), V, **kwargs))


def out_like(q: FakeTensor, pointer: int = O, **kwargs: Any) -> FakeTensor:
    """An ``out`` of q's shape and dtype (the same dtype object, as torch's)."""
    out = FakeTensor(q.shape, pointer=pointer, **kwargs)
    out.dtype = q.dtype
    return out


def refused(fake_cuda, kind: type, call: Callable[..., Any], *args: Any, **kwargs: Any) -> str:
    """The message of the ``kind`` exception ``call`` raises (exactly that
    type), after checking that the fake driver launched nothing and loaded no
    module meanwhile."""
    before = fake_cuda.counts()
    with pytest.raises(kind) as info:
        call(*args, **kwargs)
    assert type(info.value) is kind, f"{type(info.value).__name__}: {info.value}"
    after = fake_cuda.counts()
    assert after["launches"] == before["launches"]
    assert after["moduleLoads"] == before["moduleLoads"]
    return str(info.value)


def launches(fake_cuda, call: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``call``'s result, checking that it launched once."""
    before = fake_cuda.count("launches")
    result = call(*args, **kwargs)
    assert fake_cuda.count("launches") == before + 1
    return result


def test_the_good_calls_launch(library, fake_cuda) -> None:
    launches(fake_cuda, sdpa, *qkv(), library=library)
    launches(fake_cuda, sdpa, *qkv(), causal=True, library=library)
    launches(fake_cuda, sdpa_varlen, *packed(), 300, 320, library=library)


# ---------------------------------------------------------------- pointers


@pytest.mark.parametrize("index, name", [(0, "q"), (1, "k"), (2, "v")])
def test_null_inputs(library, fake_cuda, index, name) -> None:
    args = list(qkv())
    args[index] = tensor(args[index].shape, 0)
    assert refused(fake_cuda, ValueError, sdpa, *args, library=library).startswith(
        f"{name} has a null data pointer ({name} [2, 3, ")


def test_null_output_and_offsets(library, fake_cuda) -> None:
    q, k, v = qkv()
    assert refused(fake_cuda, ValueError, sdpa, q, k, v, out=out_like(q, 0),
                   library=library) == "o has a null data pointer (o [2, 3, 77, 64])"
    q, k, v, cu_q, cu_k = packed()
    cu_q = tensor(cu_q.shape, 0, "int32")
    assert refused(fake_cuda, ValueError, sdpa_varlen, q, k, v, cu_q, cu_k, 300, 320,
                   library=library) == "varlen.cu_seqlens_q is null"


def test_misaligned_inputs_are_copied(library, fake_cuda) -> None:
    # The kernels need 16-byte aligned rows: sdpa copies an input that is not.
    q, k, v = qkv()
    q = tensor(q.shape, Q + 2)
    launches(fake_cuda, sdpa, q, k, v, library=library)
    assert fake_cuda.last_params()[0] not in (Q, Q + 2)


def test_misaligned_outputs_and_offsets(library, fake_cuda) -> None:
    q, k, v = qkv()
    assert refused(fake_cuda, ValueError, sdpa, q, k, v, out=out_like(q, O + 8),
                   library=library).startswith(
        "o cannot be passed to kernel a as it is: its data pointer 0x400000008 is not "
        "16-byte aligned")
    q, k, v, cu_q, cu_k = packed()
    cu_k = tensor(cu_k.shape, CU_K + 2, "int32")
    assert refused(fake_cuda, ValueError, sdpa_varlen, q, k, v, cu_q, cu_k, 300, 320,
                   library=library) == (
        "varlen.cu_seqlens_k (int32 offsets) must be 4-byte aligned, got 0x600001002")


# ---------------------------------------------------------------- shapes


@pytest.mark.parametrize("shapes, kind, message", [
    (((2, 3, 77, 64), (2, 3, 0, 64), (2, 3, 0, 64)), ValueError,
     "k has sequence length 0; tiled-attn needs at least one key"),
    (((2, 3, -77, 64), (2, 3, 131, 64), (2, 3, 131, 64)), ValueError,
     "q has a negative size along dimension 2: -77"),
    (((2, 3, 77, 64), (1, 3, 131, 64), (1, 3, 131, 64)), ValueError,
     "k has batch size 1 but q has 2"),
    (((2, 3, 77, 64), (2, 2, 131, 64), (2, 2, 131, 64)), ValueError,
     "k and v have 2 and 2 heads but q has 3; pass enable_gqa=True"),
    (((2, 3, 77, 64), (2, 3, 131, 64), (2, 3, 130, 64)), ValueError,
     "v has sequence length 130 but k has 131"),
    (((2, 3, 77, 96), (2, 3, 131, 96), (2, 3, 131, 96)), ValueError,
     "head dim D=96 is not supported; the kernel library has head dims 64"),
    # D = 0: no ZeroDivisionError from the default scale.
    (((2, 3, 77, 0), (2, 3, 131, 0), (2, 3, 131, 0)), ValueError,
     "head dim D=0 is not supported"),
    (((2, 3, 77, 64), (2, 3, 131, 64), (2, 3, 131, 128)), ValueError,
     r"head dim D=64 (D_v=128) is not supported"),
    (((3, 77, 64), (3, 131, 64), (3, 131, 64)), ValueError,
     r"q must have rank 4 [B, H, S, D], got rank 3"),
    # Past the grid; past an int64 (a torch tensor never is, a stand-in can).
    (((70000, 1, 7, 64), (70000, 1, 7, 64), (70000, 1, 7, 64)), ValueError,
     "q has batch size 70000; tiled-attn launches one block row per head and batch entry, "
     "at most 65535"),
    (((2, 3, 2**62, 64), (2, 3, 131, 64), (2, 3, 131, 64)), ValueError,
     "q has sizes (2, 3, 4611686018427387904, 64) and strides "),
])
def test_bad_shapes(library, fake_cuda, shapes, kind, message) -> None:
    q, k, v = (tensor(shape, pointer) for shape, pointer in zip(shapes, (Q, K, V)))
    assert message in refused(fake_cuda, kind, sdpa, q, k, v, library=library)


def test_grouped_heads_that_do_not_divide(library, fake_cuda) -> None:
    q, k, v = qkv(h=3)
    k, v = tensor((2, 2, 131, 64), K), tensor((2, 2, 131, 64), V)
    assert refused(fake_cuda, ValueError, sdpa, q, k, v, enable_gqa=True,
                   library=library).startswith(
        "k has head count 2 but q has 3; q's head count must be a multiple of k's and v's")


def test_an_output_of_another_shape(library, fake_cuda) -> None:
    q, k, v = qkv()
    out = out_like(tensor((2, 3, 76, 64), O))
    out.dtype = q.dtype
    assert refused(fake_cuda, ValueError, sdpa, q, k, v, out=out, library=library).startswith(
        "o has shape [2, 3, 76, 64] but q has [2, 3, 77, 64]")


def test_offsets_past_the_address_space(library, fake_cuda) -> None:
    # Element offsets whose bytes overflow an int64 (2 bytes * 2**62), and a
    # view that runs past 2**64.
    q, k, v = qkv()
    k = tensor(k.shape, K, strides=(2**62, 131 * 64, 64, 1))
    assert "does not fit the 64-bit address space" in refused(
        fake_cuda, ValueError, sdpa, q, k, v, library=library)
    q, k, v = qkv()
    v = tensor(v.shape, 2**64 - 4096)
    assert refused(fake_cuda, ValueError, sdpa, q, k, v, library=library) == (
        "v [2, 3, 131, 64] with strides [25152, 8384, 64, 1] at 0xfffffffffffff000 does not "
        "fit the 64-bit address space: its byte offsets overflow an int64 or its addresses "
        "pass 0 or 2^64")


# ---------------------------------------------------------------- gradients
#
# With grad mode on and an input requiring grad, sdpa and sdpa_varlen take
# their differentiable op (issue 39; python/tests/test_backward.py follows
# it, score and mask functions included); what has no backward (block
# masks, a gradient of a function's captured input or of an attn_mask
# tensor) is refused at the call (NoBackwardError, naming the inputs and
# what is missing), before anything runs; under torch.no_grad(), or with
# nothing requiring grad, the call runs the forward kernel as before.


def no_backward(function: str, subject: str) -> str:
    """needs_backward's message for ``function`` and ``subject`` ("q
    requires") with a block mask."""
    return (f"{function}: {subject} grad, but tiled_attn's backward pass does not compute a "
            "block_mask yet (its backward kernels take masks, windows, softcap, grouped heads "
            "and score and mask functions), so gradients through this call cannot be "
            "computed; call it under torch.no_grad() or torch.inference_mode(), or pass "
            "tensors that do not require grad (.detach())")


def no_captured_grad(function: str, subject: str) -> str:
    """needs_backward's message for captured inputs requiring grad."""
    return (f"{function}: {subject} grad, but tiled_attn's backward pass gives the captured "
            "inputs of score and mask functions no gradient (a learned bias or attn_mask is "
            "not trained through it); pass them detached (.detach()) to train q, k and v "
            "through the call, or use another attention implementation for that")


def sdpa_call(inputs: Tuple[FakeTensor, ...], **kwargs: Any) -> Any:
    return sdpa(*inputs, **kwargs)


def sdpa_varlen_call(inputs: Tuple[FakeTensor, ...], **kwargs: Any) -> Any:
    return sdpa_varlen(*inputs, packed()[3], packed()[4], 300, 320, **kwargs)


#: (function name, the call on (q, k, v), fresh (q, k, v)).
GRAD_CALLS = {
    "tiled_attn.sdpa": (sdpa_call, qkv),
    "tiled_attn.sdpa_varlen": (sdpa_varlen_call, lambda: packed()[:3]),
}


@pytest.mark.parametrize("index, name", [(0, "q"), (2, "v")])
def test_block_masks_with_an_input_that_requires_grad_are_refused(library, fake_cuda,
                                                                  torch_stand_in, index,
                                                                  name) -> None:
    inputs = qkv()
    inputs[index].requires_grad_()
    assert torch_stand_in.is_grad_enabled()
    message = refused(fake_cuda, NoBackwardError, sdpa, *inputs, library=library,
                      block_mask=object(), mask_mod="document")
    assert message == no_backward("tiled_attn.sdpa", f"{name} requires")
    # One of the package's errors, and what the transformers integration raised before.
    assert issubclass(NoBackwardError, TiledAttnError)
    assert issubclass(NoBackwardError, NotImplementedError)


@pytest.mark.parametrize("kwargs, names", [
    (dict(score_mod="alibi", score_mod_args=()), "score_mod='alibi' and mask_mod=None"),
    (dict(mask_mod="document"), "score_mod=None and mask_mod='document'"),
])
def test_functions_without_backward_kernels_are_refused_at_the_call(library, fake_cuda,
                                                                    torch_stand_in, kwargs,
                                                                    names) -> None:
    """Score and mask functions have a backward pass (its kernels of the
    same functions); a library without them is named at the forward call
    that will need a gradient, before anything runs."""
    q, k, v = qkv()
    q.requires_grad_()
    message = refused(fake_cuda, NoBackwardError, sdpa, q, k, v, library=library, **kwargs)
    assert message == (
        f"tiled_attn.sdpa: a gradient is needed, but the kernel library {library} has no "
        f"backward kernels of {names} (its backward kernels' functions: none); build them (a "
        "backward configuration with variants such as 'none+alibi', docs/backward.md), or "
        "call it under torch.no_grad()")


def test_attn_mask_and_captured_inputs_that_require_grad_are_named(library, fake_cuda,
                                                                  torch_stand_in) -> None:
    # A learned bias: q, k and v need no gradient, the mask (or a function's
    # captured input) does, which the backward does not compute.
    learned = tensor((77, 131), 0x700000000, "float32").requires_grad_()
    assert refused(fake_cuda, NoBackwardError, sdpa, *qkv(), learned, library=library) == (
        no_captured_grad("tiled_attn.sdpa", "attn_mask requires"))
    slopes = tensor((3,), 0x700000000, "float32").requires_grad_()
    assert refused(fake_cuda, NoBackwardError, sdpa, *qkv(), score_mod="alibi",
                   score_mod_args=(slopes,), library=library) == (
        no_captured_grad("tiled_attn.sdpa", "score_mod_args[0] requires"))


@pytest.fixture
def op_calls(monkeypatch, torch_stand_in) -> List[Tuple[str, tuple]]:
    """The calls of ``torch.ops.tiled_attn.*`` (the stand-in's), each (op name,
    arguments), which return a new output (and log-sum-exps); ``tiled_attn.ops``
    a stand-in module (the real one registers the ops with torch)."""
    calls: List[Tuple[str, tuple]] = []

    def op(name: str) -> Callable[..., Any]:
        def call(*args: Any) -> Any:
            calls.append((name, args))
            out = torch_stand_in.empty(args[0].shape, dtype=args[0].dtype,
                                       device=args[0].device)
            return (out, torch_stand_in.empty((1,), dtype=torch_stand_in.float32,
                                              device=args[0].device)) if "lse" in name else out
        return call

    names = ("sdpa", "sdpa_lse", "sdpa_varlen", "sdpa_varlen_lse")
    torch_stand_in.ops = types.SimpleNamespace(
        tiled_attn=types.SimpleNamespace(**{name: op(name) for name in names}))
    monkeypatch.setitem(sys.modules, "tiled_attn.ops", types.ModuleType("tiled_attn.ops"))
    return calls


@pytest.mark.parametrize("function", sorted(GRAD_CALLS))
@pytest.mark.parametrize("index", [0, 1, 2])
def test_an_input_that_requires_grad_takes_the_op(library, fake_cuda, torch_stand_in, op_calls,
                                                  function, index) -> None:
    """The differentiable path: the op (whose Autograd kernel records the
    gradient's formula), with the call's arguments, and no launch here."""
    call, make = GRAD_CALLS[function]
    inputs = make()
    inputs[index].requires_grad_()
    before = fake_cuda.count("launches")
    out = call(inputs, causal=True, scale=0.25, window_size=(7, 0), softcap=2.5,
               library=library)
    assert fake_cuda.count("launches") == before
    ((name, args),) = op_calls
    if function == "tiled_attn.sdpa":
        assert name == "sdpa" and args[:3] == inputs and out.shape == inputs[0].shape
        # causal, scale, kernel, library, enable_gqa, causal_align, window,
        # softcap, then no functions (None, not empty lists).
        assert args[3:] == (True, 0.25, None, library, False, "top_left", [7, 0], 2.5, None,
                            None, None, None, None)
    else:
        assert name == "sdpa_varlen" and args[:3] == inputs
        assert args[5:] == (300, 320, True, 0.25, None, library, False, "top_left", [7, 0], 2.5)
    op_calls.clear()
    lse_out = call(inputs, return_lse=True, library=library)
    assert [name for name, _ in op_calls] == [f"{name}_lse"] and len(lse_out) == 2


def test_out_is_written_by_copy_and_checked_on_the_op_path(library, fake_cuda, torch_stand_in,
                                                          op_calls) -> None:
    q, k, v = qkv()
    q.requires_grad_()
    short = FakeTensor((2, 3, 76, 64), pointer=O)
    short.dtype = q.dtype
    assert refused(fake_cuda, ValueError, sdpa, q, k, v, out=short, library=library) == (
        "out must have shape [2, 3, 77, 64] ([B, H, S_q, D_v]), got [2, 3, 76, 64]")
    out = out_like(q)
    assert sdpa(q, k, v, out=out, library=library) is out  # (FakeTensor.copy_ checks shapes)


@pytest.mark.parametrize("function", sorted(GRAD_CALLS))
def test_under_no_grad_inputs_that_require_grad_run(library, fake_cuda, torch_stand_in,
                                                    op_calls, function) -> None:
    call, make = GRAD_CALLS[function]
    inputs = tuple(t.requires_grad_() for t in make())
    with torch_stand_in.no_grad():
        assert not torch_stand_in.is_grad_enabled()
        out = launches(fake_cuda, call, inputs, library=library)
        # ... functions too: nothing to differentiate.
        if function == "tiled_attn.sdpa":
            with pytest.raises(NoKernelError, match="has no kernel with score_mod='alibi'"):
                call(inputs, score_mod="alibi", library=library)
    assert out.shape == inputs[0].shape and not op_calls
    assert torch_stand_in.is_grad_enabled()  # back on after the block
    # ... and with grad mode back on, the op.
    call(inputs, library=library)
    assert len(op_calls) == 1


@pytest.mark.parametrize("function", sorted(GRAD_CALLS))
def test_with_grad_mode_on_inputs_that_do_not_require_grad_run(library, fake_cuda,
                                                               torch_stand_in, op_calls,
                                                               function) -> None:
    call, make = GRAD_CALLS[function]
    inputs = make()
    assert torch_stand_in.is_grad_enabled() and not any(t.requires_grad for t in inputs)
    out = launches(fake_cuda, call, inputs, library=library)
    assert out.shape == inputs[0].shape and not op_calls


# ---------------------------------------------------------------- packed sequences


def packed(total_q: int = 500, total_k: int = 700, h: int = 3, d: int = 64, num_seqs: int = 4):
    return (tensor((total_q, h, d), Q), tensor((total_k, h, d), K), tensor((total_k, h, d), V),
            tensor((num_seqs + 1,), CU_Q, "int32"), tensor((num_seqs + 1,), CU_K, "int32"))


@pytest.mark.parametrize("change, kind, message", [
    (dict(cu_q=tensor((5,), CU_Q, "int64")), TypeError,
     "cu_seqlens_q has dtype torch.int64; tiled_attn.sdpa_varlen needs torch.int32 offsets"),
    (dict(cu_k=tensor((5,), CU_K, "float32")), TypeError,
     "cu_seqlens_k has dtype torch.float32"),
    (dict(cu_q=tensor((5,), CU_Q, "int32", device="cpu")), ValueError,
     "cu_seqlens_q is on cpu but q is on cuda:0; the sequences' offsets must be on q's device"),
    (dict(cu_k=tensor((5,), CU_K, "int32", device="cuda:1")), ValueError,
     "cu_seqlens_k is on cuda:1 but q is on cuda:0"),
    (dict(cu_k=tensor((6,), CU_K, "int32")), ValueError,
     "cu_seqlens_k has 6 entries but cu_seqlens_q has 5"),
    (dict(cu_q=tensor((1,), CU_Q, "int32"), cu_k=tensor((1,), CU_K, "int32")), ValueError,
     "cu_seqlens_q has 1 entry; it must hold num_seqs + 1 >= 2 offsets"),
    (dict(cu_q=tensor((5, 1), CU_Q, "int32")), ValueError,
     "cu_seqlens_q must have rank 1 [num_seqs + 1], got rank 2"),
    (dict(cu_q=tensor((5,), CU_Q, "int32", strides=(2,))), ValueError,
     "cu_seqlens_q must be contiguous, got stride 2"),
    (dict(cu_q=tensor((70001,), CU_Q, "int32"), cu_k=tensor((70001,), CU_K, "int32")),
     ValueError, "varlen.num_seqs is 70000; tiled-attn launches one block row per head and "
     "sequence, at most 65535"),
    # The totals: q's and the output's, k's and v's.
    (dict(v=tensor((699, 3, 64), V)), ValueError, "v has total length 699 but k has 700"),
    (dict(max_q=501), ValueError, "varlen.max_seqlen_q is 501 but q holds 500 query rows"),
    (dict(max_k=0), ValueError, "max_seqlen_k must be >= 1"),
    (dict(max_q=True), TypeError, "max_seqlen_q must be an int, got bool True"),
    (dict(q=tensor((2, 500, 3, 64), Q)), ValueError, "q must have rank 3 [total, H, D]"),
    (dict(q=tensor((500, 3, 64), Q, "float32")), TypeError, "q has dtype torch.float32"),
])
def test_bad_packed_sequences(library, fake_cuda, change, kind, message) -> None:
    q, k, v, cu_q, cu_k = packed()
    call: Dict[str, Any] = dict(q=q, k=k, v=v, cu_q=cu_q, cu_k=cu_k, max_q=300, max_k=320)
    call.update(change)
    assert message in refused(fake_cuda, kind, sdpa_varlen, call["q"], call["k"], call["v"],
                              call["cu_q"], call["cu_k"], call["max_q"], call["max_k"],
                              library=library)


def test_an_output_of_other_total_rows(library, fake_cuda) -> None:
    q, k, v, cu_q, cu_k = packed()
    out = out_like(tensor((499, 3, 64), O))
    out.dtype = q.dtype
    assert refused(fake_cuda, ValueError, sdpa_varlen, q, k, v, cu_q, cu_k, 300, 320, out=out,
                   library=library).startswith(
        "o has shape [1, 3, 499, 64] but q has [1, 3, 500, 64]")


# ---------------------------------------------------------------- strides and aliasing


@pytest.mark.parametrize("strides, message", [
    ((3 * 77 * 128, 77 * 128, 128, 2), "its last-dimension stride is 2, not 1"),
    ((3 * (77 * 68 + 4), 77 * 68 + 4, 68, 1),
     "its stride along dimension 2 (68 elements) is not a multiple of 16 bytes"),
])
def test_output_strides_the_kernels_cannot_take(library, fake_cuda, strides, message) -> None:
    q, k, v = qkv()
    assert message in refused(fake_cuda, ValueError, sdpa, q, k, v,
                              out=out_like(q, strides=strides), library=library)


@pytest.mark.parametrize("strides", [(0, 0, 64, 1), (3 * 77 * 64, 77 * 64, 0, 1),
                                     (3 * 77 * 64, 77 * 64, 64, 0),
                                     (3 * 77 * 64, 76 * 64, 64, 1)])
def test_outputs_whose_elements_share_an_address(library, fake_cuda, strides) -> None:
    q, k, v = qkv()
    assert refused(fake_cuda, ValueError, sdpa, q, k, v, out=out_like(q, strides=strides),
                   library=library) == (
        f"o [2, 3, 77, 64] with strides [{', '.join(map(str, strides))}] has elements that "
        "share an address; the kernels write each element of the output once: give it a "
        "layout whose elements do not overlap (contiguous, for one)")


@pytest.mark.parametrize("name, shift", [("q", 0), ("k", 0), ("v", 0), ("q", 128),
                                         ("k", -128)])
def test_outputs_that_share_memory_with_an_input(library, fake_cuda, name, shift) -> None:
    q, k, v = qkv(s_k=77)
    given = dict(q=q, k=k, v=v)[name]
    message = refused(fake_cuda, ValueError, sdpa, q, k, v,
                      out=out_like(q, given.data_ptr() + shift), library=library)
    assert message.startswith(f"o overlaps {name} in memory (o: bytes ")
    assert message.endswith("); the outputs (o, lse, and split-KV's workspace) must not share "
                            "memory with the inputs (q, k, v, the sequences' offsets) nor with "
                            "each other")


def test_inputs_of_other_layouts(library, fake_cuda) -> None:
    # Inputs may share memory, be broadcast, or be strided: copied where the
    # kernels cannot take them, never refused.
    q, k, v = qkv(s_k=77)
    launches(fake_cuda, sdpa, q, q, q, library=library)
    k = tensor(k.shape, K, strides=(0, 77 * 64, 64, 1))
    v = tensor(v.shape, V, strides=(3 * 77 * 64 * 2, 77 * 64 * 2, 128, 2))
    launches(fake_cuda, sdpa, q, k, v, library=library)


# ---------------------------------------------------------------- dtypes and kinds


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int8", "bool",
                                   "float8_e4m3fn", "float8_e5m2"])
def test_dtypes_the_kernels_do_not_take(library, fake_cuda, dtype) -> None:
    assert refused(fake_cuda, TypeError, sdpa, *qkv(dtype=dtype), library=library) == (
        f"q has dtype torch.{dtype}; tiled_attn.sdpa supports torch.float16 and "
        "torch.bfloat16")


def test_mixed_dtypes(library, fake_cuda) -> None:
    q, k, v = qkv()
    k = tensor(k.shape, K, "bfloat16")
    assert refused(fake_cuda, TypeError, sdpa, q, k, v, library=library) == (
        "k has dtype torch.bfloat16 but q has torch.float16; q, k and v must have the same "
        "dtype")
    out = FakeTensor(q.shape, dtype="bfloat16", pointer=O)
    assert refused(fake_cuda, ValueError, sdpa, *qkv(), out=out, library=library).startswith(
        "out must be a 4-d tensor of q's dtype (torch.float16)")


@pytest.mark.parametrize("change, kind, message", [
    (dict(q=None), TypeError, "q must be a torch.Tensor, got NoneType"),
    (dict(k=[1.0]), TypeError, "k must be a torch.Tensor, got list"),
    (dict(out=[1.0]), TypeError, "out must be a torch.Tensor, got list"),
    (dict(kernel=5), TypeError, "kernel must be a str (a manifest entry's name) or None, got "
                                "int 5"),
    (dict(kernel="a\0"), ValueError, "holds a NUL character"),
    (dict(scale="0.125"), TypeError, "scale must be a float or None, got str '0.125'"),
    (dict(scale=1e39), ValueError, "scale must be a finite positive float32 value, got 1e+39, "
                                   "which overflows float32"),
    (dict(scale=10**400), ValueError, "scale must be a finite positive float32 value, got "
                                      "1000000000"),
    (dict(scale=1e-50), ValueError, "got 1e-50, which rounds to 0 in float32"),
    (dict(scale=float("nan")), ValueError, "scale must be a finite positive float32 value, "
                                           "got nan"),
    (dict(scale=-0.125), ValueError, "got -0.125"),
    (dict(q=tensor((2, 3, 77, 64), Q, device="cpu")), ValueError,
     "q is on cpu; tiled_attn.sdpa needs CUDA tensors"),
    (dict(v=tensor((2, 3, 131, 64), V, device="cuda:1")), ValueError,
     "v is on cuda:1 but q is on cuda:0"),
])
def test_arguments_of_the_wrong_kind_or_value(library, fake_cuda, change, kind, message) -> None:
    q, k, v = qkv()
    call: Dict[str, Any] = dict(q=q, k=k, v=v)
    call.update(change)
    q, k, v = call.pop("q"), call.pop("k"), call.pop("v")
    assert message in refused(fake_cuda, kind, sdpa, q, k, v, library=library, **call)


def test_the_varlen_scale_and_kernel_name(library, fake_cuda) -> None:
    assert "overflows float32" in refused(fake_cuda, ValueError, sdpa_varlen, *packed(), 300,
                                          320, scale=1e39, library=library)
    assert "kernel must be a str" in refused(fake_cuda, TypeError, sdpa_varlen, *packed(), 300,
                                             320, kernel=b"v", library=library)


# ---------------------------------------------------------------- the library


def manifest(entries) -> str:
    return json.dumps({"version": 2, "generator": "test", "kernels": entries})


@pytest.mark.parametrize("text, message", [
    (None, "manifest.json is missing; build the kernels or set TILED_ATTN_KERNELS"),
    ("", "manifest.json is not valid JSON: parse error at line 1, column 1"),
    (manifest([kernel_entry("a")])[:200], "manifest.json is not valid JSON"),
    ("[" + manifest([kernel_entry("a")]) + "]", "expected a JSON object at the top, got array"),
    (manifest([kernel_entry("a")]).replace('"version": 2', '"version": 3'),
     "unsupported manifest version 3 (this runtime reads 2)"),
    (manifest([kernel_entry("a", head_dim=None)]), "kernel #0 (a): missing field 'head_dim'"),
    (manifest([kernel_entry("a", head_dim="64")]),
     "kernel #0 (a): field 'head_dim' must be an integer >= 1, got \"64\""),
    (manifest([kernel_entry("a", block_m=-64)]),
     "field 'block_m' must be an integer >= 1, got -64"),
    (manifest([kernel_entry("a", shared_bytes=2**64)]),
     "field 'shared_bytes' must be an integer >= 0, got 1.8446744073709552e+19"),
    (manifest([kernel_entry("a", shared_bytes=2**63)]),
     "field 'shared_bytes' must be an integer >= 0, got 9223372036854775808"),
    (manifest([kernel_entry("a", block=[2048, 1, 1])]),
     "field 'block' must be a list of 3 positive integers"),
    (manifest([kernel_entry("a", params={})]), "field 'params' must be a list of parameters"),
    ('{"version": 2, "kernels": ' + "[" * 100000 + "]" * 100000 + "}",
     "is not a manifest: its JSON nests more than 64 levels deep"),
])
def test_a_corrupt_manifest(make_library, fake_cuda, torch_stand_in, text, message) -> None:
    root = make_library([kernel_entry("a")])
    if text is None:
        (root / "manifest.json").unlink()
    else:
        (root / "manifest.json").write_text(text)
    assert message in refused(fake_cuda, TiledAttnError, sdpa, *qkv(), library=str(root))


def test_a_missing_library(tmp_path, fake_cuda, torch_stand_in) -> None:
    assert refused(fake_cuda, TiledAttnError, sdpa, *qkv(),
                   library=str(tmp_path / "nowhere")).startswith(
        f"no kernel library at {tmp_path / 'nowhere'}: the folder does not exist")


def test_a_missing_or_empty_kernel_file(make_library, fake_cuda, torch_stand_in) -> None:
    root = make_library([kernel_entry("a", cubin={"sm_90": "a.sm_90.cubin"})])
    (root / "a.sm_90.cubin").unlink()
    assert "field 'cubin.sm_90' names a.sm_90.cubin, which is missing from" in refused(
        fake_cuda, TiledAttnError, sdpa, *qkv(), library=str(root))
    (root / "a.sm_90.cubin").write_bytes(b"")
    assert "field 'cubin.sm_90' names a.sm_90.cubin, which is empty; rebuild the kernel " \
        "library" in refused(fake_cuda, TiledAttnError, sdpa, *qkv(), library=str(root))


@pytest.mark.parametrize("device, file, problem", [
    ("cuda:0", "a.sm_90.cubin", "it is not a cubin: it does not start with an ELF header"),
    ("cuda:1", "a.ptx", "it is not PTX text: it holds a NUL byte at offset 3"),
])
def test_a_damaged_kernel_file(make_library, fake_cuda, torch_stand_in, device, file,
                               problem) -> None:
    # Found when the module is first loaded: device 0 (9.0) loads the cubin,
    # device 1 (8.0) the PTX.
    root = make_library([kernel_entry("a", cubin={"sm_90": "a.sm_90.cubin"})])
    (root / file).write_bytes(b"\x13\x37\xee\x00garbage")
    assert refused(fake_cuda, TiledAttnError, sdpa, *qkv(device=device),
                   library=str(root)) == (
        f"kernel file {root / file} is damaged: {problem}; rebuild the kernel library")


def test_a_gpu_the_library_has_no_kernel_for(make_library, fake_cuda, torch_stand_in) -> None:
    # Device 1 is of compute capability 8.0; the library has sm_90a and sm_100f kernels.
    root = make_library([kernel_entry("h", arch="sm_90a"), kernel_entry("b", arch="sm_100f")])
    assert refused(fake_cuda, NoKernelError, sdpa, *qkv(device="cuda:1"),
                   library=str(root)) == (
        f"no kernel in the library for sm_80, f16, D=64, causal=none (library {root}: none "
        "of its kernels runs on a device of compute capability 8.0: it has kernels for "
        "sm_90a, sm_100f only)")
    # Device 0 (9.0) runs the sm_90a kernel.
    launches(fake_cuda, sdpa, *qkv(), library=str(root))


def test_a_large_library_is_summarized(make_library, fake_cuda, torch_stand_in) -> None:
    entries = [kernel_entry(f"k{i}", head_dim=64 * (1 + i % 2), arch=("sm_80", "sm_90a")[i % 2])
               for i in range(20)]
    root = make_library(entries)
    assert refused(fake_cuda, NoKernelError, sdpa, *qkv(dtype="bfloat16"),
                   library=str(root)) == (
        f"no kernel in the library for sm_90, bf16, D=64, causal=none (library {root}: 20 "
        "kernels for sm_80, sm_90a; f16; D=64, 128 (ta_library_kernel describes each))")

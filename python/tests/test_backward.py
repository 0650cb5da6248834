"""The backward pass from Python (issue 39) without a GPU.

Over the real runtime and the fake driver (conftest.py), with
fakes.FakeTensor stand-ins and fakes.fake_torch: the ctypes mirror of the
C API's new structures against the header itself (compiled), the library's
backward kernels, the arguments tiled_attn.backward fills (the forward
call's ta_sdpa_args as the forward fills them, d_o, the gradients, the
workspace), what the three launches get (each kernel's parameters decoded
as its manifest entry types them), and the refusals. Then, where torch is
installed (a CPU build is enough), the ops: their schemas, their fake
implementations, the autograd formula and the routing of the differentiable
calls, eager and under torch.compile, checked end to end with CPU
implementations of the ops registered by the test (the math of
attention_reference.py), which the dispatcher runs where the GPU kernels
would.

The GPU's side (the gradients' numbers against float64, CUDA graphs,
torch.compile over the real kernels) is test_backward_gpu.py.
"""

from __future__ import annotations

import ctypes
import re
import shutil
import struct
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any, Callable, Dict, List, Sequence, Tuple

import pytest
from attention_reference import (attention, attention_backward, varlen_attention,
                                 varlen_attention_backward)
from fakes import FakeTensor, backward_library_entries, fake_torch, kernel_entry, varlen_entry

import tiled_attn
from tiled_attn import runtime
from tiled_attn.backward import sdpa_backward_eager, sdpa_varlen_backward_eager
from tiled_attn.errors import NoBackwardError, NoKernelError
from tiled_attn.runtime import (KernelLibrary, TaKernelInfo, TaLaunchPlan, TaSdpaArgs,
                                TaSdpaBackwardArgs, TaTensor)

HEADER = Path(__file__).resolve().parents[2] / "include" / "tiled_attn" / "Runtime" / "TiledAttn.h"
#: Made-up device addresses, 256-byte aligned and far apart.
Q, K, V, O, DO, LSE = (n << 32 for n in range(1, 7))
CU_Q, CU_K = 0x700000000, 0x700001000
FORMATS = {"ptr": "<Q", "i32": "<i", "i64": "<q", "f32": "<f"}


# ================================================================ the C API's mirror


def test_the_backward_args_follow_the_forward_call() -> None:
    assert runtime.API_VERSION == 15
    assert TaSdpaBackwardArgs.forward.offset == 0
    assert TaSdpaBackwardArgs.d_o.offset == ctypes.sizeof(TaSdpaArgs)
    tensor = ctypes.sizeof(TaTensor)
    assert tensor == 72
    for i, name in enumerate(("d_o", "dq", "dk", "dv")):
        assert getattr(TaSdpaBackwardArgs, name).offset == ctypes.sizeof(TaSdpaArgs) + i * tensor
    assert TaSdpaBackwardArgs.workspace.offset == ctypes.sizeof(TaSdpaArgs) + 4 * tensor
    assert TaSdpaBackwardArgs.workspace_bytes.offset == TaSdpaBackwardArgs.workspace.offset + 8
    # deterministic (API version 15) last, then the struct's padding.
    assert TaSdpaBackwardArgs.deterministic.offset == TaSdpaBackwardArgs.workspace_bytes.offset + 8
    assert ctypes.sizeof(TaSdpaBackwardArgs) == TaSdpaBackwardArgs.deterministic.offset + 8
    # The phase, API version 14's field, last in ta_kernel_info.
    assert TaKernelInfo._fields_[-1] == ("phase", ctypes.c_char_p)
    assert ctypes.sizeof(TaKernelInfo) == TaKernelInfo.phase.offset + 8


#: The C program that prints what the header makes of the structures
#: Python mirrors: each field's offset, each structure's size.
LAYOUT_PROGRAM = r"""
#include <stddef.h>
#include <stdio.h>
#include "tiled_attn/Runtime/TiledAttn.h"
#define FIELD(s, f) printf(#s " " #f " %zu\n", offsetof(s, f));
#define SIZE(s) printf(#s " sizeof %zu\n", sizeof(s));
int main(void) {
%s
  return 0;
}
"""

#: The ctypes mirror of each C structure.
MIRRORS = {"ta_sdpa_args": TaSdpaArgs, "ta_sdpa_backward_args": TaSdpaBackwardArgs,
           "ta_kernel_info": TaKernelInfo, "ta_launch_plan": TaLaunchPlan,
           "ta_tensor": TaTensor}


def test_the_ctypes_mirror_matches_the_header(tmp_path) -> None:
    """Every field's offset and every size, as a C compiler reads the header
    (the C API's one declaration), against the ctypes structures."""
    compiler = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if compiler is None:
        pytest.skip("no C compiler to read the header with")
    lines = []
    for c_name, mirror in MIRRORS.items():
        for field, *_ in mirror._fields_:
            if not field.startswith("_"):
                lines.append(f"  FIELD({c_name}, {field})")
        lines.append(f"  SIZE({c_name})")
    source = tmp_path / "layout.c"
    source.write_text(LAYOUT_PROGRAM.replace("%s", "\n".join(lines)))
    binary = tmp_path / "layout"
    subprocess.run([compiler, "-std=c11", f"-I{HEADER.parents[2]}", str(source), "-o",
                    str(binary)], check=True, capture_output=True, text=True)
    seen = {}
    for line in subprocess.run([str(binary)], check=True, capture_output=True,
                               text=True).stdout.splitlines():
        struct_name, field, value = line.split()
        seen[struct_name, field] = int(value)
    mirrored = {}
    for c_name, mirror in MIRRORS.items():
        for field, *_ in mirror._fields_:
            if not field.startswith("_"):
                mirrored[c_name, field] = getattr(mirror, field).offset
        mirrored[c_name, "sizeof"] = ctypes.sizeof(mirror)
    assert mirrored == seen


# ================================================================ the library's kernels


@pytest.fixture
def library(make_library) -> KernelLibrary:
    """A forward kernel and the backward kernels of f16, D = 64 (every main
    variant kernels/library.json builds: none, top_left, bottom_right,
    window, each with and without softcap, and the three varlen masks)."""
    return KernelLibrary(make_library([kernel_entry("fwd")] + backward_library_entries()))


def test_the_backward_kernels_are_described(library) -> None:
    assert [k.name for k in library.kernels] == ["fwd"]
    assert library.kernels[0].phase == ""
    phases = [k.phase for k in library.backward_kernels]
    assert phases.count("preprocess") == phases.count("postprocess") == 2
    assert phases.count("main") == 11 and phases.count("dq") == 8
    by_name = {k.name: k for k in library.backward_kernels}
    main = by_name["window_softcap"]
    assert (main.mask, main.softcap, main.varlen, main.block_n) == ("window", True, False, 64)
    assert main.describe() == "window_softcap (sm_80, f16, D=64, mask=window, softcap, main)"
    assert by_name["preprocess_varlen"].describe() == (
        "preprocess_varlen (sm_80, f16, D=64, mask=none, varlen, preprocess)")
    assert by_name["top_left_dq"].describe() == (
        "top_left_dq (sm_80, f16, D=64, mask=top_left, dq)")
    assert [k.index for k in library.backward_kernels] == list(range(23))


def view(t: FakeTensor) -> Tuple[int, ...]:
    return (t.data_ptr(), *t.shape, *t.stride())


def backward_args(q, k, v, o, d_o, grads, mask: int = 0, lse: int = LSE) -> TaSdpaBackwardArgs:
    args = TaSdpaBackwardArgs()
    for slot, t in zip((args.forward.q, args.forward.k, args.forward.v, args.forward.o, args.d_o,
                        args.dq, args.dk, args.dv), (q, k, v, o, d_o, *grads)):
        runtime.set_tensor(slot, t)
    args.forward.mask, args.forward.scale, args.forward.lse = mask, 0.125, lse
    return args


def problem(b: int = 2, h: int = 3, h_kv: int = 3, s_q: int = 77, s_k: int = 131,
            d: int = 64) -> Tuple[FakeTensor, ...]:
    """q, k, v, o, d_o and dq, dk, dv, contiguous, at addresses of their own."""
    shapes = ((b, h, s_q, d), (b, h_kv, s_k, d), (b, h_kv, s_k, d), (b, h, s_q, d),
              (b, h, s_q, d), (b, h, s_q, d), (b, h_kv, s_k, d), (b, h_kv, s_k, d))
    return tuple(FakeTensor(shape, pointer=(i + 1) << 36) for i, shape in enumerate(shapes))


def test_the_plan_and_the_workspace(library) -> None:
    q, k, v, o, d_o, *grads = problem()
    args = backward_args(q, k, v, o, d_o, grads, mask=1)
    # delta [B, H, S_q] padded to 256 bytes, then dQ's accumulator [B, H, S_q, D]
    # (the workspace's fields are not read).
    rows = 2 * 3 * 77
    assert library.backward_workspace_size(args) == 2048 + 4 * rows * 64
    assert library.backward_workspace_size(ctypes.addressof(args)) == 2048 + 4 * rows * 64
    # A plan, as a launch, needs the workspace (its views are parameters).
    with pytest.raises(ValueError, match="workspace must be a 256-byte aligned device address, "
                                         "got 0"):
        library.backward_plan(args, (9, 0))
    args.workspace, args.workspace_bytes = 9 << 36, 2048 + 4 * rows * 64
    plans = library.backward_plan(args, (9, 0))
    names = [library.backward_kernels[p.kernel].name for p in plans]
    assert names == ["preprocess", "top_left", "postprocess"]
    # (ceil(S_q / 64), H, B), (ceil(S_k / 64), H_kv, B), (ceil(S_q / 64), H, B).
    assert [p.grid for p in plans] == [(2, 3, 2), (3, 3, 2), (2, 3, 2)]
    # The forward's lse is required.
    args.forward.lse = 0
    with pytest.raises(ValueError, match="forward.lse is 0"):
        library.backward_workspace_size(args)


# ================================================================ tiled_attn.backward on fakes


@pytest.fixture
def torch_stand_in(monkeypatch) -> Any:
    torch = fake_torch()
    monkeypatch.setitem(sys.modules, "torch", torch)
    return torch


class Launches:
    """What launch_backward was asked to launch: each call's arguments
    (ta_sdpa_backward_args, copied) and its three plans."""

    def __init__(self) -> None:
        self.args: List[TaSdpaBackwardArgs] = []
        self.plans: List[Tuple[Any, ...]] = []


@pytest.fixture
def launched(monkeypatch, fake_cuda) -> Launches:
    seen = Launches()
    original = KernelLibrary.launch_backward

    def record(self: KernelLibrary, args: Any, device: int, stream: int) -> None:
        address = args if isinstance(args, int) else ctypes.addressof(args)
        copy = TaSdpaBackwardArgs.from_buffer_copy(
            ctypes.string_at(address, ctypes.sizeof(TaSdpaBackwardArgs)))
        plans = self.backward_plan(address, (9, 0))
        before = fake_cuda.count("launches")
        original(self, args, device, stream)
        # One launch per phase with work.
        assert fake_cuda.count("launches") == before + sum(p.kernel >= 0 for p in plans)
        seen.args.append(copy)
        seen.plans.append(plans)

    monkeypatch.setattr(KernelLibrary, "launch_backward", record)
    return seen


def decoded(library: KernelLibrary, plan: Any) -> Dict[Any, Any]:
    """A plan's parameters by (name, kind, dim), read as the kernel's manifest
    types them; and "kernel": its name."""
    kernel = library.backward_kernels[plan.kernel]
    entry = {e["name"]: e for e in backward_library_entries()}[kernel.name]
    values: Dict[Any, Any] = {"kernel": kernel.name}
    for param, raw in zip(entry["params"], plan.params):
        values[param["name"], param["kind"], param.get("dim")] = struct.unpack(
            FORMATS[param["type"]], raw)[0]
    return values


def seen_view(values: Dict[Any, Any], name: str, rank: int = 4) -> Tuple[int, ...]:
    """A view's base, sizes (of its first 3 dimensions) and strides (all but
    the last) in decoded parameters."""
    return (values[name, "base", None],
            *(values[name, "size", d] for d in range(min(rank, 3))),
            *(values[name, "stride", d] for d in range(rank - 1)))


def tensor(shape: Sequence[int], pointer: int, dtype: str = "float16", **kwargs: Any) -> FakeTensor:
    return FakeTensor(shape, dtype=dtype, pointer=pointer, **kwargs)


def qkv_o(b: int = 2, h: int = 4, h_kv: int = 2, s_q: int = 77, s_k: int = 131,
          d: int = 64) -> Tuple[FakeTensor, ...]:
    """q, k, v, out, grad_out [B, H, S, D] and lse [B, H, S_q]."""
    return (tensor((b, h, s_q, d), Q), tensor((b, h_kv, s_k, d), K),
            tensor((b, h_kv, s_k, d), V), tensor((b, h, s_q, d), O),
            tensor((b, h, s_q, d), DO), tensor((b, h, s_q), LSE, "float32"))


def first_rows(view: Tuple[int, ...]) -> Tuple[int, ...]:
    """A [B, H, S, D] view's fields as a kernel takes them: base, sizes[0:3],
    strides[0:3]."""
    return (view[0], *view[1:4], *view[5:8])


@pytest.mark.parametrize("options, mask, window, main, band", [
    (dict(), 0, (0, 0, 0, 0), "none", None),
    (dict(causal=True), 1, (0, 0, 0, 0), "top_left", None),
    (dict(causal=True, causal_align="bottom_right"), 2, (0, 0, 0, 0), "bottom_right", None),
    (dict(window_size=(20, 5)), 0, (1, 0, 20, 5), "window", (-20, 5)),
    # The band lo <= j - i <= hi: bottom-right's shift (131 - 77) in it.
    (dict(causal=True, causal_align="bottom_right", window_size=(30, 0), softcap=7.5), 2,
     (1, 1, 30, 0), "window_softcap", (54 - 30, 54)),
    (dict(softcap=7.5), 0, (0, 0, 0, 0), "none_softcap", None),
])
def test_the_backward_call_is_the_forward_call(library, torch_stand_in, launched, options, mask,
                                               window, main, band) -> None:
    """The forward part of ta_sdpa_backward_args is the call as sdpa fills it
    (mask, scale, window, softcap, the output and the log-sum-exps, no
    kernel name, functions, split or workspace); the gradients' views and
    the workspace's follow; each phase's kernel gets them."""
    q, k, v, out, grad_out, lse = qkv_o()
    dq, dk, dv = sdpa_backward_eager(grad_out, q, k, v, out, lse, scale=0.25, library=library,
                                     enable_gqa=True, **options)
    assert (dq.shape, dk.shape, dv.shape) == (q.shape, k.shape, v.shape)
    assert not torch_stand_in.zeroed  # (torch.empty: every row is written)
    (args,) = launched.args
    forward = args.forward
    for slot, t in ((forward.q, q), (forward.k, k), (forward.v, v), (forward.o, out),
                    (args.d_o, grad_out), (args.dq, dq), (args.dk, dk), (args.dv, dv)):
        assert (slot.data, *slot.sizes, *slot.strides) == view(t)
    assert (forward.dtype, forward.mask, forward.scale, forward.lse) == (0, mask, 0.25, LSE)
    w = forward.window
    assert (w.enabled, w.bottom_right, w.left, w.right) == window
    assert forward.softcap == options.get("softcap", 0.0)
    assert not (forward.kernel or forward.score_function or forward.mask_function
                or forward.captures or forward.num_captures or forward.num_splits
                or forward.workspace or forward.seqused_k or forward.varlen.enabled)
    rows = 2 * 4 * 77
    assert args.workspace_bytes == 2560 + 4 * rows * 64 and args.workspace % 256 == 0
    pre, main_plan, post = (decoded(library, p) for p in launched.plans[0])
    assert (pre["kernel"], main_plan["kernel"], post["kernel"]) == ("preprocess", main,
                                                                    "postprocess")
    delta = (args.workspace, 2, 4, 77, 4 * 77, 77)
    accum = (args.workspace + 2560, 2, 4, 77, 4 * 77 * 64, 77 * 64, 64)
    assert seen_view(pre, "o") == first_rows(view(out))
    assert seen_view(pre, "do") == first_rows(view(grad_out))
    assert seen_view(pre, "delta", 3) == seen_view(main_plan, "delta", 3) == delta
    assert seen_view(pre, "dq_accum") == seen_view(main_plan, "dq_accum") == accum
    assert seen_view(post, "dq_accum") == accum
    for name, t in (("q", q), ("k", k), ("v", v), ("do", grad_out), ("dk", dk), ("dv", dv)):
        assert seen_view(main_plan, name) == first_rows(view(t)), name
    assert seen_view(main_plan, "lse", 3) == (LSE, 2, 4, 77, 4 * 77, 77)
    assert seen_view(post, "dq") == first_rows(view(dq))
    assert main_plan["scale", "scalar", None] == post["scale", "scalar", None] == 0.25
    if band is not None:
        assert (main_plan["window_lo", "scalar", None],
                main_plan["window_hi", "scalar", None]) == band
    if "softcap" in options:
        assert main_plan["softcap", "scalar", None] == 7.5


def test_grad_out_is_copied_or_converted_where_the_kernels_need(library, torch_stand_in,
                                                                launched) -> None:
    q, k, v, out, grad_out, lse = qkv_o()
    # [B, S, H, D] memory seen as [B, H, S, D]: taken as it is.
    bshd = tensor((2, 77, 4, 64), DO).transpose(1, 2)
    sdpa_backward_eager(bshd, q, k, v, out, lse, library=library, enable_gqa=True)
    assert (launched.args[-1].d_o.data, *launched.args[-1].d_o.strides) == (
        DO, 77 * 4 * 64, 64, 4 * 64, 1)
    for bad in (tensor((2, 4, 77, 64), DO, strides=(4 * 77 * 128, 77 * 128, 128, 2)),  # last
                tensor((2, 4, 77, 64), DO + 2),                                     # pointer
                tensor((2, 4, 77, 64), DO, "float32")):                             # dtype
        sdpa_backward_eager(bad, q, k, v, out, lse, library=library, enable_gqa=True)
        d_o = launched.args[-1].d_o
        assert d_o.data not in (DO, DO + 2)
        assert tuple(d_o.strides) == (4 * 77 * 64, 77 * 64, 64, 1)
    # lse: the runtime reads it as a contiguous float32 [B, H, S_q] tensor.
    for bad, shown in ((tensor((2, 4, 76), LSE, "float32"), "float32 of shape [2, 4, 76]"),
                       (tensor((2, 4, 77), LSE), "float16 of shape [2, 4, 77]")):
        with pytest.raises(ValueError, match=r"lse must be the forward call's log-sum-exps, a "
                                             r"float32 \[B, H, S_q\] = \[2, 4, 77\] tensor on "
                                             rf"cuda:0, got torch\.{re.escape(shown)} on cuda:0$"):
            sdpa_backward_eager(grad_out, q, k, v, out, bad, library=library, enable_gqa=True)
    strided = tensor((2, 4, 77), LSE, "float32", strides=(4 * 80, 80, 1))
    sdpa_backward_eager(grad_out, q, k, v, out, strided, library=library, enable_gqa=True)
    assert launched.args[-1].forward.lse not in (0, LSE)
    with pytest.raises(TypeError, match="out has dtype torch.float32 but q has torch.float16"):
        sdpa_backward_eager(grad_out, q, k, v, tensor(out.shape, O, "float32"), lse,
                            library=library, enable_gqa=True)
    assert len(launched.args) == 5  # none of the refused calls launched


def test_the_runtime_checks_the_gradients_shapes(library, torch_stand_in, launched,
                                                 fake_cuda) -> None:
    q, k, v, out, grad_out, lse = qkv_o()
    before = fake_cuda.count("launches")
    with pytest.raises(ValueError, match=r"d_o has sizes \[2, 4, 76, 64\], but o has "
                                         r"\[2, 4, 77, 64\]"):
        sdpa_backward_eager(tensor((2, 4, 76, 64), DO), q, k, v, out, lse, library=library,
                            enable_gqa=True)
    assert fake_cuda.count("launches") == before and not launched.args


def packed_call(total_q: int = 500, total_k: int = 700, h: int = 4, h_kv: int = 2,
                d: int = 64) -> Tuple[FakeTensor, ...]:
    """q, k, v, out, grad_out [total, H, D], lse [H, total_q], the offsets."""
    return (tensor((total_q, h, d), Q), tensor((total_k, h_kv, d), K),
            tensor((total_k, h_kv, d), V), tensor((total_q, h, d), O),
            tensor((total_q, h, d), DO), tensor((h, total_q), LSE, "float32"),
            tensor((5,), CU_Q, "int32"), tensor((5,), CU_K, "int32"))


@pytest.mark.parametrize("options, main", [(dict(), "none_varlen"),
                                           (dict(causal=True), "top_left_varlen"),
                                           (dict(causal=True, causal_align="bottom_right"),
                                            "bottom_right_varlen")])
def test_the_varlen_backward(library, torch_stand_in, launched, options, main) -> None:
    q, k, v, out, grad_out, lse, cu_q, cu_k = packed_call()
    grads = sdpa_varlen_backward_eager(grad_out, q, k, v, out, lse, cu_q, cu_k, 300, 320,
                                       library=library, enable_gqa=True, **options)
    # Zeroed: rows past the last sequence are not written by the kernels.
    assert torch_stand_in.zeroed == list(grads)
    assert [g.shape for g in grads] == [q.shape, k.shape, v.shape]
    (args,) = launched.args
    varlen = args.forward.varlen
    assert (varlen.enabled, varlen.num_seqs, varlen.cu_seqlens_q, varlen.cu_seqlens_k,
            varlen.max_seqlen_q, varlen.max_seqlen_k) == (1, 4, CU_Q, CU_K, 300, 320)
    for slot, t in ((args.forward.q, q), (args.d_o, grad_out), (args.dq, grads[0]),
                    (args.dk, grads[1]), (args.dv, grads[2])):
        assert (slot.data, *slot.sizes, *slot.strides) == runtime.packed_view(t)
    pre, main_plan, post = (decoded(library, p) for p in launched.plans[0])
    assert main_plan["kernel"] == main and pre["kernel"] == "preprocess_varlen"
    # (ceil(max_seqlen_q / 64), H, num_seqs), (ceil(max_seqlen_k / 64), H_kv, num_seqs).
    assert [p.grid for p in launched.plans[0]] == [(5, 4, 4), (5, 2, 4), (5, 4, 4)]
    for values in (pre, main_plan, post):
        assert values["cu_seqlens_q", "base", None] == CU_Q
    assert main_plan["cu_seqlens_k", "base", None] == CU_K
    assert seen_view(main_plan, "lse", 3) == (LSE, 1, 4, 500, 4 * 500, 500)


def test_a_missing_backward_kernel_is_named(library, torch_stand_in, launched,
                                            fake_cuda) -> None:
    """A library without a varlen window kernel (this one): the runtime's
    NoKernelError, which names what was asked for."""
    q, k, v, out, grad_out, lse, cu_q, cu_k = packed_call()
    with pytest.raises(NoKernelError, match=r"^no backward main kernel for sm_90, f16, D=64, "
                                            r"causal=window, varlen; 23 backward kernels "
                                            r"of D=64 \(ta_library_backward_kernel describes "
                                            r"each\)$"):
        sdpa_varlen_backward_eager(grad_out, q, k, v, out, lse, cu_q, cu_k, 300, 320,
                                   library=library, enable_gqa=True, window_size=(16, 0))
    assert not launched.args


def test_deterministic_mode_runs_the_dq_kernel(library, torch_stand_in, launched,
                                               fake_cuda) -> None:
    """torch.use_deterministic_algorithms(True): the runtime's deterministic
    mode (ta_sdpa_backward_args.deterministic), whose third launch is the
    dq kernel of the call's mask (not the postprocess); a call the library
    has no dq kernel for (varlen here) is the runtime's NoKernelError."""
    q, k, v, out, grad_out, lse = qkv_o()
    sdpa_backward_eager(grad_out, q, k, v, out, lse, library=library, enable_gqa=True,
                        causal=True)
    torch_stand_in.deterministic["enabled"] = True
    sdpa_backward_eager(grad_out, q, k, v, out, lse, library=library, enable_gqa=True,
                        causal=True)
    assert [args.deterministic for args in launched.args] == [0, 1]
    names = [[library.backward_kernels[p.kernel].name if p.kernel >= 0 else None for p in plans]
             for plans in launched.plans]
    assert names == [["preprocess", "top_left", "postprocess"],
                     ["preprocess", "top_left", "top_left_dq"]]
    q, k, v, out, grad_out, lse, cu_q, cu_k = packed_call()
    with pytest.raises(NoKernelError, match=r"^no backward dq kernel for sm_90, f16, D=64, "
                                            r"causal=none(?: or window)?, varlen; 23 backward kernels of D=64"):
        sdpa_varlen_backward_eager(grad_out, q, k, v, out, lse, cu_q, cu_k, 300, 320,
                                   library=library, enable_gqa=True)
    # warn_only: PyTorch's rule, a warning and the default mode.
    torch_stand_in.deterministic["warn_only"] = True
    with pytest.warns(UserWarning, match=r"no deterministic kernel \(dq kernel\) for this call"):
        sdpa_varlen_backward_eager(grad_out, q, k, v, out, lse, cu_q, cu_k, 300, 320,
                                   library=library, enable_gqa=True)
    assert launched.args[-1].deterministic == 0
    assert library.backward_kernels[launched.plans[-1][2].kernel].phase == "postprocess"


def test_an_empty_problem(library, torch_stand_in, launched) -> None:
    """No query rows: preprocess and postprocess have nothing to do; the main
    kernel still writes dk and dv (zeros: no query sees a key)."""
    q, k, v, out, grad_out, lse = qkv_o(s_q=0)
    sdpa_backward_eager(grad_out, q, k, v, out, lse, library=library, enable_gqa=True)
    kernels = [p.kernel for p in launched.plans[0]]
    assert kernels[0] == kernels[2] == -1 and kernels[1] >= 0


def test_flash_attn_func_deterministic_follows_pytorchs_switch(library, torch_stand_in) -> None:
    """FlashAttention's deterministic=True asks for a deterministic backward:
    tiled_attn's follows torch.use_deterministic_algorithms, so the flag
    with a gradient needed is refused while that switch is off (without a
    gradient, the forward is deterministic either way)."""
    q, k, v = (tensor((2, 77, 4, 64), p) for p in (Q, K, V))
    q.requires_grad_()
    with pytest.raises(tiled_attn.NotSupportedError,
                       match=r"deterministic=True with inputs that require grad, but "
                             r"torch.use_deterministic_algorithms is off"):
        tiled_attn.flash_attn_func(q, k, v, deterministic=True, library=library)


# ================================================================ the ops (torch)
#
# These need torch (a CPU build is enough); skipped where it is not installed.


@pytest.fixture(scope="module")
def torch_ops() -> Any:
    torch = pytest.importorskip("torch")
    import tiled_attn.ops  # noqa: F401

    return torch


def test_the_backward_ops_schemas(torch_ops) -> None:
    torch = torch_ops
    from tiled_attn import ops

    assert ops.BACKWARD_SCHEMA == (
        "sdpa_backward(Tensor grad_out, Tensor q, Tensor k, Tensor v, Tensor out, Tensor lse, "
        "bool causal=False, float? scale=None, str? library_path=None, bool enable_gqa=False, "
        "str causal_align=\"top_left\", int[2] window_size=[-1, -1], float softcap=0.0, "
        "str? score_mod=None, Tensor[]? score_mod_args=None, str? mask_mod=None, "
        "Tensor[]? mask_mod_args=None) -> (Tensor, Tensor, Tensor)")
    assert ops.VARLEN_BACKWARD_SCHEMA.startswith(
        "sdpa_varlen_backward(Tensor grad_out, Tensor q, Tensor k, Tensor v, Tensor out, "
        "Tensor lse, Tensor cu_seqlens_q, Tensor cu_seqlens_k, int max_seqlen_q, "
        "int max_seqlen_k, bool causal=False")
    for name in ("sdpa", "sdpa_lse", "sdpa_varlen", "sdpa_varlen_lse", "sdpa_backward",
                 "sdpa_varlen_backward", "sdpa_with_kvcache"):
        assert torch._C._dispatch_has_kernel_for_dispatch_key(f"tiled_attn::{name}",
                                                              "Autograd"), name


def test_the_backward_ops_fakes(torch_ops) -> None:
    torch = torch_ops
    meta = dict(device="meta", dtype=torch.bfloat16)
    q, k = torch.empty(2, 8, 77, 64, **meta), torch.empty(2, 2, 131, 64, **meta)
    lse = torch.empty(2, 8, 77, device="meta")
    grads = torch.ops.tiled_attn.sdpa_backward(q, q, k, k, q, lse, True, None, None, True)
    assert [tuple(g.shape) for g in grads] == [(2, 8, 77, 64), (2, 2, 131, 64), (2, 2, 131, 64)]
    assert all(g.dtype == torch.bfloat16 and g.is_contiguous() for g in grads)
    q, k = torch.empty(500, 8, 128, **meta), torch.empty(700, 2, 128, **meta)
    cu = torch.empty(5, dtype=torch.int32, device="meta")
    lse = torch.empty(8, 500, device="meta")
    grads = torch.ops.tiled_attn.sdpa_varlen_backward(q, q, k, k, q, lse, cu, cu, 300, 320)
    assert [tuple(g.shape) for g in grads] == [(500, 8, 128), (700, 2, 128), (700, 2, 128)]


def test_inputs_the_kernels_cannot_take_get_the_eager_errors(torch_ops) -> None:
    """With a gradient needed, the call takes the op, after the eager path's
    checks: a CPU tensor is named as without one (not by the dispatcher)."""
    torch = torch_ops
    q = torch.randn(1, 2, 3, 64, requires_grad=True)
    with pytest.raises(ValueError, match=r"^q is on cpu; tiled_attn.sdpa needs CUDA tensors$"):
        tiled_attn.sdpa(q, q, q)
    packed = q[0].transpose(0, 1)
    cu = torch.tensor([0, 3], dtype=torch.int32)
    with pytest.raises(ValueError, match=r"^q is on cpu; tiled_attn.sdpa_varlen needs CUDA "
                                         r"tensors$"):
        tiled_attn.sdpa_varlen(packed, packed, packed, cu, cu, 3, 3)


#: The CPU implementations the routing tests register: attention and its
#: gradients in float64 (attention_reference.py; the gradients written out,
#: as autograd does not record below autograd, where an op's kernel runs).
#: Each call is counted by op name.
CPU_CALLS: Dict[str, int] = {}


#: The score and mask functions each CPU backward call was given.
CPU_FUNCTIONS: List[Tuple[Any, ...]] = []


def _functions(torch: Any, q, k, score_mod=None, score_mod_args=None, mask_mod=None,
               mask_mod_args=None, block_mask=None) -> Dict[str, Any]:
    """The library's ALiBi and document masking as the reference's bias and
    keep (what the library's kernels of those functions compute)."""
    i = torch.arange(q.shape[2])[:, None]
    j = torch.arange(k.shape[2])[None, :]
    terms: Dict[str, Any] = {}
    if score_mod == "alibi":
        terms["bias"] = score_mod_args[0].double()[None, :, None, None] * (j - i)
    elif score_mod is not None:
        raise NotImplementedError(score_mod)
    if mask_mod == "document":
        docs = mask_mod_args[0]
        terms["keep"] = (docs[:, :q.shape[2], None] == docs[:, None, :k.shape[2]])[:, None]
    elif mask_mod is not None:
        raise NotImplementedError(mask_mod)
    return terms


def _cpu_lse(torch: Any, q, k, v, causal=False, scale=None, kernel_name=None,
             library_path=None, enable_gqa=False, causal_align="top_left",
             window_size=(-1, -1), softcap=0.0, *functions: Any) -> Tuple[Any, Any]:
    out, lse = attention(torch, q.double(), k.double(), v.double(), causal, scale, causal_align,
                         tuple(window_size), softcap, **_functions(torch, q, k, *functions))
    return out.to(q.dtype), lse.float()


def _cpu_backward(torch: Any, grad_out, q, k, v, out, lse, causal=False, scale=None,
                  library_path=None, enable_gqa=False, causal_align="top_left",
                  window_size=(-1, -1), softcap=0.0, *functions: Any) -> Tuple[Any, ...]:
    CPU_FUNCTIONS.append(functions)
    grads = attention_backward(torch, q.double(), k.double(), v.double(), grad_out.double(),
                               causal, scale, causal_align, tuple(window_size), softcap,
                               **_functions(torch, q, k, *functions))
    return tuple(g.to(q.dtype) for g in grads)


def _cpu_varlen_lse(torch: Any, q, k, v, cu_q, cu_k, max_q, max_k, causal=False, scale=None,
                    kernel_name=None, library_path=None, enable_gqa=False,
                    causal_align="top_left", window_size=(-1, -1), softcap=0.0):
    out, lse = varlen_attention(torch, q.double(), k.double(), v.double(), cu_q.tolist(),
                                cu_k.tolist(), causal=causal, scale=scale,
                                causal_align=causal_align, window_size=tuple(window_size),
                                softcap=softcap)
    return out.to(q.dtype), lse.float()


def _cpu_varlen_backward(torch: Any, grad_out, q, k, v, out, lse, cu_q, cu_k, max_q, max_k,
                         causal=False, scale=None, library_path=None, enable_gqa=False,
                         causal_align="top_left", window_size=(-1, -1), softcap=0.0):
    grads = varlen_attention_backward(torch, q.double(), k.double(), v.double(),
                                      grad_out.double(), cu_q.tolist(), cu_k.tolist(),
                                      causal=causal, scale=scale, causal_align=causal_align,
                                      window_size=tuple(window_size), softcap=softcap)
    return tuple(g.to(q.dtype) for g in grads)


@pytest.fixture
def cpu_ops(torch_ops) -> Any:
    """CPU implementations of the differentiable ops, registered for the
    test (and removed after), each counting its calls in CPU_CALLS."""
    torch = torch_ops
    library = torch.library.Library("tiled_attn", "IMPL")

    def counted(name: str, function: Callable[..., Any], pick: Any = None) -> Callable[..., Any]:
        def kernel(*args: Any) -> Any:
            CPU_CALLS[name] = CPU_CALLS.get(name, 0) + 1
            result = function(torch, *args)
            return result if pick is None else result[pick]
        return kernel

    for name, function, pick in (("sdpa", _cpu_lse, 0), ("sdpa_lse", _cpu_lse, None),
                                 ("sdpa_backward", _cpu_backward, None),
                                 ("sdpa_varlen", _cpu_varlen_lse, 0),
                                 ("sdpa_varlen_lse", _cpu_varlen_lse, None),
                                 ("sdpa_varlen_backward", _cpu_varlen_backward, None)):
        library.impl(name, counted(name, function, pick), "CPU")
    CPU_CALLS.clear()
    yield torch
    library._destroy()


def cpu_qkv(torch: Any, b: int = 2, h: int = 4, h_kv: int = 2, s_q: int = 37, s_k: int = 53,
            d: int = 16, dtype: Any = None, seed: int = 0) -> Tuple[Any, Any, Any, Any]:
    g = torch.Generator().manual_seed(seed)
    dtype = dtype or torch.float32
    q, k, v = (torch.randn(b, heads, s, d, generator=g, dtype=dtype)
               for heads, s in ((h, s_q), (h_kv, s_k), (h_kv, s_k)))
    return q, k, v, torch.randn(b, h, s_q, d, generator=g, dtype=dtype)


def reference_grads(torch: Any, q, k, v, grad_out, **options: Any) -> Tuple[Any, ...]:
    q64, k64, v64 = (t.detach().double().requires_grad_() for t in (q, k, v))
    out, _ = attention(torch, q64, k64, v64, **options)
    return torch.autograd.grad(out, (q64, k64, v64), grad_out.double())


def grads_of(torch: Any, call: Callable[..., Any], q, k, v, grad_out) -> Tuple[Any, ...]:
    leaves = [t.detach().clone().requires_grad_() for t in (q, k, v)]
    out = call(*leaves)
    return torch.autograd.grad(out, leaves, grad_out)


OPTIONS = [dict(), dict(causal=True), dict(causal=True, causal_align="bottom_right"),
           dict(window_size=(9, 3), softcap=3.0)]


@pytest.mark.parametrize("options", OPTIONS)
def test_the_op_and_sdpa_are_differentiable(cpu_ops, options) -> None:
    """torch.ops.tiled_attn.sdpa called directly and tiled_attn.sdpa: the
    gradients are sdpa_backward's, through sdpa_lse's formula (sdpa's
    Autograd kernel takes sdpa_lse where a gradient is needed)."""
    torch = cpu_ops
    q, k, v, grad_out = cpu_qkv(torch)
    expected = reference_grads(torch, q, k, v, grad_out, **options)
    causal = options.get("causal", False)
    rest = {key: val for key, val in options.items() if key != "causal"}
    window = list(rest.pop("window_size", (-1, -1)))
    for call in (lambda q, k, v: torch.ops.tiled_attn.sdpa(
                     q, k, v, causal, None, None, None, True, rest.get("causal_align", "top_left"),
                     window, rest.get("softcap", 0.0)),
                 lambda q, k, v: tiled_attn.sdpa(q, k, v, enable_gqa=True, **options)):
        CPU_CALLS.clear()
        grads = grads_of(torch, call, q, k, v, grad_out)
        assert CPU_CALLS == {"sdpa_lse": 1, "sdpa_backward": 1}
        for got, ref in zip(grads, expected):
            torch.testing.assert_close(got.double(), ref, rtol=1e-5, atol=1e-5)


def test_without_a_gradient_the_op_runs_the_kernel_without_lse(cpu_ops) -> None:
    torch = cpu_ops
    q, k, v, _ = cpu_qkv(torch)
    for context in (torch.no_grad, torch.inference_mode):
        with context():
            out = torch.ops.tiled_attn.sdpa(q.requires_grad_(), k, v, True, None, None, None,
                                            True)
        assert not out.requires_grad
    q.requires_grad_(False)
    assert not torch.ops.tiled_attn.sdpa(q, k, v, True, None, None, None, True).requires_grad
    assert CPU_CALLS == {"sdpa": 3}


def test_the_lse_gets_no_gradient(cpu_ops) -> None:
    """An lse that the loss does not use is no problem; one that it uses is
    refused at backward() (its gradient is not computed), not dropped."""
    torch = cpu_ops
    q, k, v, grad_out = cpu_qkv(torch)
    expected = reference_grads(torch, q, k, v, grad_out, causal=True)
    leaves = [t.clone().requires_grad_() for t in (q, k, v)]
    out, lse = tiled_attn.sdpa(*leaves, causal=True, enable_gqa=True, return_lse=True)
    assert lse.requires_grad
    grads = torch.autograd.grad(out, leaves, grad_out)
    for got, ref in zip(grads, expected):
        torch.testing.assert_close(got.double(), ref, rtol=1e-5, atol=1e-5)
    out, lse = torch.ops.tiled_attn.sdpa_lse(*leaves, True, None, None, None, True)
    with pytest.raises(NoBackwardError, match=r"^tiled_attn::sdpa_lse: the loss depends on the "
                                              r"log-sum-exps \(return_lse\), whose gradient"):
        ((out * grad_out).sum() + lse.sum()).backward()
    # lse.detach(): the output's gradients alone.
    out, lse = torch.ops.tiled_attn.sdpa_lse(*leaves, True, None, None, None, True)
    ((out * grad_out).sum() + lse.detach().sum()).backward()
    for leaf, ref in zip(leaves, expected):
        torch.testing.assert_close(leaf.grad.double(), ref, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("causal", [False, True])
def test_score_and_mask_functions_are_differentiable(cpu_ops, causal) -> None:
    """The forward's score and mask functions and their captured inputs
    reach sdpa_backward (the runtime then runs backward kernels of the same
    functions): ALiBi with document masking against float64 autograd."""
    torch = cpu_ops
    q, k, v, grad_out = cpu_qkv(torch)
    slopes = torch.tensor([0.5, 0.25, 0.125, 0.0625])
    docs = (torch.arange(53) // 20).int().repeat(2, 1)
    functions_op = dict(score_mod="alibi", score_mod_args=[slopes], mask_mod="document",
                        mask_mod_args=[docs])
    terms = _functions(torch, q, k, "alibi", [slopes], "document", [docs])
    expected = reference_grads(torch, q, k, v, grad_out, causal=causal, **terms)
    # (The op directly, and by keywords: tiled_attn.sdpa first asks the
    # library for backward kernels of the functions, which these CPU
    # implementations stand in for.)
    for call in (lambda q, k, v: torch.ops.tiled_attn.sdpa(q, k, v, causal, None, None, None,
                                                           True, **functions_op),
                 lambda q, k, v: torch.ops.tiled_attn.sdpa(
                     q, k, v, causal, None, None, None, True, "top_left", [-1, -1], 0.0,
                     "alibi", [slopes], "document", [docs])):
        CPU_CALLS.clear()
        CPU_FUNCTIONS.clear()
        grads = grads_of(torch, call, q, k, v, grad_out)
        assert CPU_CALLS == {"sdpa_lse": 1, "sdpa_backward": 1}
        (given,) = CPU_FUNCTIONS
        assert given[0] == "alibi" and given[2] == "document"
        assert torch.equal(given[1][0], slopes)
        assert torch.equal(given[3][0], docs)
        for got, ref in zip(grads, expected):
            torch.testing.assert_close(got.double(), ref, rtol=1e-5, atol=1e-5)
    # The same without the functions' terms is far: the test can fail.
    plain = reference_grads(torch, q, k, v, grad_out, causal=causal)
    assert not torch.allclose(grads[0].double(), plain[0], rtol=1e-3, atol=1e-3)


def test_what_has_no_backward_is_refused_at_the_forward_call(cpu_ops) -> None:
    torch = cpu_ops
    q, k, v, _ = cpu_qkv(torch)
    q.requires_grad_()
    slopes = torch.ones(4)
    # A learned captured input gets no gradient: refused, by sdpa's Autograd
    # kernel before anything runs, by sdpa_lse's formula in its setup, which
    # runs after its forward (register_autograd's order).
    for op, ran in ((torch.ops.tiled_attn.sdpa, {}),
                    (torch.ops.tiled_attn.sdpa_lse, {"sdpa_lse": 1})):
        name = op.default.name()
        with pytest.raises(NoBackwardError, match=rf"^{name}: score_mod_args\[0\] requires "
                                                  r"grad, but tiled_attn's backward pass gives "
                                                  r"the captured inputs"):
            op(q, k, v, False, None, None, None, True, "top_left", [-1, -1], 0.0, "alibi",
               [slopes.clone().requires_grad_()])
        assert CPU_CALLS == ran
    # A learned captured input alone too.
    with pytest.raises(NoBackwardError, match=r"score_mod_args\[0\] requires grad"):
        torch.ops.tiled_attn.sdpa(q.detach(), k, v, False, None, None, None, True, "top_left",
                                  [-1, -1], 0.0, "alibi", [slopes.requires_grad_()])


def test_a_second_derivative_is_refused(cpu_ops) -> None:
    torch = cpu_ops
    q, k, v, grad_out = cpu_qkv(torch)
    leaves = [t.requires_grad_() for t in (q, k, v)]
    out = tiled_attn.sdpa(*leaves, enable_gqa=True)
    with pytest.raises(NoBackwardError, match=r"^tiled_attn::sdpa_backward: a gradient of the "
                                              r"backward pass was asked for \(create_graph=True"):
        torch.autograd.grad(out, leaves, grad_out.requires_grad_(), create_graph=True)


@pytest.mark.parametrize("options", [dict(causal=True), dict(causal=True,
                                                             causal_align="bottom_right")])
def test_sdpa_varlen_is_differentiable(cpu_ops, options) -> None:
    torch = cpu_ops
    g = torch.Generator().manual_seed(3)
    lengths_q, lengths_k = [5, 0, 17, 9], [8, 6, 0, 20]
    cu_q = [0, *torch.tensor(lengths_q).cumsum(0).tolist()]
    cu_k = [0, *torch.tensor(lengths_k).cumsum(0).tolist()]
    # Two rows of each past the last sequence.
    q = torch.randn(cu_q[-1] + 2, 4, 16, generator=g)
    k, v = (torch.randn(cu_k[-1] + 2, 2, 16, generator=g) for _ in range(2))
    grad_out = torch.randn(q.shape, generator=g)
    q64, k64, v64 = (t.double().requires_grad_() for t in (q, k, v))
    out64, _ = varlen_attention(torch, q64, k64, v64, cu_q, cu_k, **options)
    expected = torch.autograd.grad(out64, (q64, k64, v64), grad_out.double())
    offsets = [torch.tensor(c, dtype=torch.int32) for c in (cu_q, cu_k)]
    grads = grads_of(torch, lambda q, k, v: tiled_attn.sdpa_varlen(
        q, k, v, *offsets, 17, 20, enable_gqa=True, **options), q, k, v, grad_out)
    assert CPU_CALLS == {"sdpa_varlen_lse": 1, "sdpa_varlen_backward": 1}
    for got, ref in zip(grads, expected):
        torch.testing.assert_close(got.double(), ref, rtol=1e-5, atol=1e-5)
    # The op called directly.
    grads = grads_of(torch, lambda q, k, v: torch.ops.tiled_attn.sdpa_varlen(
        q, k, v, *offsets, 17, 20, options["causal"], None, None, None, True,
        options.get("causal_align", "top_left")), q, k, v, grad_out)
    for got, ref in zip(grads, expected):
        torch.testing.assert_close(got.double(), ref, rtol=1e-5, atol=1e-5)


@pytest.mark.filterwarnings("ignore:Error detected in GeneratedBackward")
def test_torch_compile_traces_forward_and_backward(cpu_ops) -> None:
    """torch.compile(fullgraph=True) over tiled_attn.sdpa with gradients: one
    graph, whose forward holds sdpa_lse and whose backward sdpa_backward (the
    op's Autograd kernel traced by AOTAutograd); the gradients are eager's."""
    torch = cpu_ops
    q, k, v, grad_out = cpu_qkv(torch)

    def f(q, k, v):
        return tiled_attn.sdpa(q * 1.0, k, v, causal=True, enable_gqa=True, softcap=4.0) + 1.0

    torch._dynamo.reset()
    compiled = torch.compile(f, fullgraph=True, backend="aot_eager")
    eager = grads_of(torch, f, q, k, v, grad_out)
    CPU_CALLS.clear()
    got = grads_of(torch, compiled, q, k, v, grad_out)
    assert CPU_CALLS == {"sdpa_lse": 1, "sdpa_backward": 1}
    for a, b in zip(got, eager):
        torch.testing.assert_close(a, b, rtol=0, atol=0)
    # Without gradients the compiled graph runs the op without lse.
    CPU_CALLS.clear()
    with torch.no_grad():
        compiled(q, k, v)
    assert CPU_CALLS == {"sdpa": 1}
    # A returned lse that requires grad gets a gradient input in the traced
    # backward, used or not: refused while compiling; detached, fine.
    torch._dynamo.reset()
    with_lse = torch.compile(lambda q, k, v: tiled_attn.sdpa(q, k, v, enable_gqa=True,
                                                              return_lse=True),
                             fullgraph=True, backend="aot_eager")
    with pytest.raises(Exception, match=r"tiled_attn::sdpa_lse: the loss depends on the "
                                        r"log-sum-exps"):
        with_lse(*(t.clone().requires_grad_() for t in (q, k, v)))
    torch._dynamo.reset()
    detached = torch.compile(lambda q, k, v: [t.detach() if i else t for i, t in enumerate(
        tiled_attn.sdpa(q, k, v, enable_gqa=True, return_lse=True))],
                             fullgraph=True, backend="aot_eager")
    got = grads_of(torch, lambda q, k, v: detached(q, k, v)[0], q, k, v, grad_out)
    for a, b in zip(got, reference_grads(torch, q, k, v, grad_out)):
        torch.testing.assert_close(a.double(), b, rtol=1e-5, atol=1e-5)
    # A refusal while tracing: Dynamo's Unsupported quotes NoBackwardError.
    torch._dynamo.reset()
    refused = torch.compile(lambda q, k, v: tiled_attn.sdpa(q, k, v, enable_gqa=True,
                                                             mask_mod="document",
                                                             mask_mod_args=(k,)),
                            fullgraph=True, backend="aot_eager")
    with pytest.raises(Exception, match=r"tiled_attn::sdpa: q requires grad, but tiled_attn's "
                                        r"backward pass does not compute mask_mod 'document'"):
        refused(q.requires_grad_(), k, v)
    torch._dynamo.reset()

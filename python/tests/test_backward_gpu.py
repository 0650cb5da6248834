"""Gradients through tiled_attn on a GPU (issue 39): tiled_attn.sdpa, the op
tiled_attn::sdpa, sdpa_varlen and the FlashAttention shim, whose backward()
runs the library's backward kernels (preprocess, main, postprocess).

The numbers: dq, dk and dv against float64 (torch autograd over the
attention formula on float64 copies, attention_reference.py), each within
2x (plus a small floor) of PyTorch's own error on the same inputs: its
flash backend (FlashAttention-2, which rounds P and dS to the input dtype
as these kernels do) where it takes the call, else its math backend in the
input dtype (for a softcap, which no SDPA backend takes, its eager
arithmetic in the input dtype). On the shapes that break kernels: S not a
multiple of the blocks, S_q != S_k both ways, grouped KV heads, no mask,
both causal alignments, sliding windows, softcap, D = 64, 96 and 128, packed
sequences with empty ones.

Then the machinery: torch.compile(fullgraph=True) over forward and backward
and a CUDA graph of both give eager's gradients (dk and dv bit for bit; dq
up to the order of its atomic additions), a grad_out of any layout, the
torch.library checks of the ops, and the errors of what has no backward.

Needs torch, a CUDA GPU and a kernel library with backward kernels
(skipped otherwise); about a minute on an H100.
"""

from __future__ import annotations

import math
import zlib

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():  # pragma: no cover
    pytest.skip("no CUDA device", allow_module_level=True)

import torch.nn.functional as F  # noqa: E402
from attention_reference import attention, varlen_attention, visible  # noqa: E402
from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: E402

import tiled_attn  # noqa: E402
import tiled_attn.ops  # noqa: E402,F401  (registers the ops)
from tiled_attn import (NoBackwardError, NoKernelError, NotSupportedError,  # noqa: E402
                        TiledAttnError)

pytestmark = pytest.mark.gpu

try:
    _LIBRARY = tiled_attn.default_library()
except TiledAttnError as exc:  # pragma: no cover
    pytest.skip(f"no kernel library: {exc}", allow_module_level=True)
if not _LIBRARY.backward_kernels:  # pragma: no cover
    pytest.skip(f"the kernel library {_LIBRARY.path} has no backward kernels",
                allow_module_level=True)


@pytest.fixture(scope="module", autouse=True)
def math_in_the_input_dtype():
    """PyTorch's math backend in the input dtype, the baseline where flash
    does not take the call (since PyTorch 2.5 it computes 16-bit inputs in
    float32 unless told otherwise)."""
    allow = getattr(torch.backends.cuda, "allow_fp16_bf16_reduction_math_sdp", None)
    before = getattr(torch.backends.cuda, "fp16_bf16_reduction_math_sdp_allowed", lambda: None)()
    if allow:
        allow(True)
    yield
    if allow and before is not None:
        allow(before)


def randn(*shape, dtype, generator):
    return torch.randn(*shape, dtype=dtype, device="cuda", generator=generator)


def rel(a, ref) -> float:
    return ((a.double() - ref).norm() / ref.norm().clamp_min(1e-30)).item()


def float64_grads(q, k, v, grad_out, **options):
    """The reference: autograd through attention on float64 copies."""
    leaves = [t.detach().double().requires_grad_() for t in (q, k, v)]
    out, _ = attention(torch, *leaves, **options)
    return out.detach(), torch.autograd.grad(out, leaves, grad_out.double())


def grads(call, q, k, v, grad_out):
    """``call``'s output and the gradients of q, k and v for ``grad_out``."""
    leaves = [t.detach().clone().requires_grad_() for t in (q, k, v)]
    out = call(*leaves)
    return out.detach(), torch.autograd.grad(out, leaves, grad_out)


def pytorch_grads(q, k, v, grad_out, causal=False, causal_align="top_left",
                  window_size=(-1, -1), softcap=0.0, scale=None):
    """PyTorch's own gradients on the same inputs, and which computed them:
    its flash backend where it takes the call (no mask or top-left causal),
    else its math backend in the input dtype with the mask as a bool tensor;
    with a softcap (no backend caps), its eager arithmetic in the input dtype.
    K/V heads repeated for grouped queries (autograd sums their gradients)."""
    groups = q.shape[1] // k.shape[1]
    if softcap:
        _, result = grads(lambda q, k, v: attention(
            torch, q, k, v, causal, scale, causal_align, window_size, softcap)[0],
            q, k, v, grad_out)
        return result, "eager"
    mask = visible(torch, q.shape[2], k.shape[2], causal, causal_align, window_size, "cuda")
    plain = mask is None or (causal and causal_align == "top_left"
                             and tuple(window_size) == (-1, -1))
    for backend in (SDPBackend.FLASH_ATTENTION, SDPBackend.MATH):
        if backend == SDPBackend.FLASH_ATTENTION and not plain:
            continue

        def call(q, k, v):
            k, v = k.repeat_interleave(groups, 1), v.repeat_interleave(groups, 1)
            with sdpa_kernel(backend):
                if plain:
                    return F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale)
                return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=scale)

        try:
            return grads(call, q, k, v, grad_out)[1], backend.name.lower()
        except RuntimeError:  # (flash does not take this shape or dtype)
            continue
    raise AssertionError("no PyTorch backend computed the baseline")


def assert_within_2x(ours, ref, base, what, floor=1e-5):
    """Each gradient finite and within 2x (plus ``floor``) of PyTorch's
    relative L2 error against float64."""
    for name, mine, r, theirs in zip(("dq", "dk", "dv"), ours, ref, base):
        assert torch.isfinite(mine).all(), f"{what}: {name} is not finite"
        err, base_err = rel(mine, r), rel(theirs, r)
        assert err <= 2 * base_err + floor, (f"{what}: {name} relative L2 {err:.3e}, "
                                             f"PyTorch's {base_err:.3e}")


#: (B, H, H_kv, S_q, S_k, D, sdpa's options): every variant of the library's
#: backward kernels, odd lengths, S_q != S_k both ways, grouped KV heads.
CASES = {
    "none": (2, 4, 4, 257, 257, 64, {}),
    "top_left_gqa": (1, 8, 2, 300, 511, 64, dict(causal=True)),
    "bottom_right_mqa": (1, 4, 1, 511, 300, 64, dict(causal=True, causal_align="bottom_right")),
    "bottom_right_d128": (2, 2, 2, 77, 1000, 128, dict(causal=True,
                                                        causal_align="bottom_right")),
    "none_sq_gt_sk_d128": (1, 4, 2, 1000, 77, 128, {}),
    "window": (1, 4, 2, 700, 900, 64, dict(causal=True, window_size=(127, 0))),
    "window_both_sides_d128": (1, 2, 2, 513, 400, 128, dict(window_size=(50, 70),
                                                             causal_align="bottom_right")),
    "softcap": (1, 4, 2, 300, 511, 64, dict(softcap=30.0)),
    "top_left_softcap_d128": (1, 2, 1, 600, 600, 128, dict(causal=True, softcap=5.0)),
    "bottom_right_softcap": (1, 2, 2, 300, 450, 64, dict(causal=True,
                                                         causal_align="bottom_right",
                                                         softcap=10.0)),
    "window_softcap": (1, 2, 2, 400, 400, 64, dict(window_size=(64, 0), softcap=20.0)),
    "top_left_gqa_d96": (1, 8, 2, 300, 511, 96, dict(causal=True)),
    "bottom_right_softcap_d96": (2, 2, 2, 333, 200, 96, dict(causal=True,
                                                             causal_align="bottom_right",
                                                             softcap=10.0)),
    # The wide head dims (warps side by side on the columns of 64-key
    # blocks).
    "top_left_gqa_d192": (1, 4, 2, 300, 511, 192, dict(causal=True)),
    "window_both_sides_d256": (1, 2, 1, 513, 400, 256, dict(window_size=(50, 70),
                                                             causal_align="bottom_right")),
    "softcap_d256": (2, 2, 2, 257, 300, 256, dict(softcap=30.0)),
}


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("case", sorted(CASES))
def test_sdpa_gradients_against_float64(dtype, case):
    b, h, h_kv, s_q, s_k, d, options = CASES[case]
    g = torch.Generator(device="cuda").manual_seed(zlib.crc32(case.encode()))
    q, k, v = (randn(b, heads, s, d, dtype=dtype, generator=g)
               for heads, s in ((h, s_q), (h_kv, s_k), (h_kv, s_k)))
    grad_out = randn(b, h, s_q, d, dtype=dtype, generator=g)
    ref_out, ref = float64_grads(q, k, v, grad_out, **options)
    out, ours = grads(lambda q, k, v: tiled_attn.sdpa(q, k, v, enable_gqa=h != h_kv, **options),
                      q, k, v, grad_out)
    assert rel(out, ref_out) < 1e-2
    assert [t.shape for t in ours] == [q.shape, k.shape, v.shape]
    base, backend = pytorch_grads(q, k, v, grad_out, **options)
    assert_within_2x(ours, ref, base, f"{case}, {dtype} (PyTorch's {backend})")


@pytest.mark.parametrize("case", ["top_left_gqa", "window_softcap", "top_left_gqa_d96",
                                  "bottom_right_d128", "top_left_gqa_d192",
                                  "softcap_d256"])
def test_deterministic_mode(case):
    """torch.use_deterministic_algorithms(True): the dq kernel writes dq,
    the same bits in every run, within 2x of PyTorch's error as the default
    mode's; dk and dv as the default mode's, bit for bit."""
    b, h, h_kv, s_q, s_k, d, options = CASES[case]
    dtype = torch.bfloat16
    g = torch.Generator(device="cuda").manual_seed(zlib.crc32(case.encode()) + 1)
    q, k, v = (randn(b, heads, s, d, dtype=dtype, generator=g)
               for heads, s in ((h, s_q), (h_kv, s_k), (h_kv, s_k)))
    grad_out = randn(b, h, s_q, d, dtype=dtype, generator=g)

    def call(q, k, v):
        return tiled_attn.sdpa(q, k, v, enable_gqa=h != h_kv, **options)

    _, default = grads(call, q, k, v, grad_out)
    torch.use_deterministic_algorithms(True)
    try:
        runs = [grads(call, q, k, v, grad_out)[1] for _ in range(3)]
    finally:
        torch.use_deterministic_algorithms(False)
    for other in runs[1:]:
        assert all(torch.equal(a, b) for a, b in zip(runs[0], other)), "not deterministic"
    assert torch.equal(runs[0][1], default[1]) and torch.equal(runs[0][2], default[2])
    _, ref = float64_grads(q, k, v, grad_out, **options)
    base, backend = pytorch_grads(q, k, v, grad_out, **options)
    assert_within_2x(runs[0], ref, base, f"{case}, deterministic (PyTorch's {backend})")


def _head_dims_without_backward():
    """Head dims of bf16 forward kernels that write the log-sum-exps (window
    ones run any mask) and have no backward kernels."""
    forward = {k.head_dim for k in _LIBRARY.kernels
               if k.dtype == "bf16" and "lse" in k.features and k.mask == "window"}
    return forward - {k.head_dim for k in _LIBRARY.backward_kernels}


def same_gradients(got, expected, what):
    """dk and dv bit for bit (each sums its key block in one program); dq up to
    the order of its atomic float32 additions (a few of its last bits)."""
    dq, dk, dv = got
    assert torch.equal(dk, expected[1]) and torch.equal(dv, expected[2]), what
    assert rel(dq, expected[0].double()) < 1e-3, what


def test_the_op_and_torch_compile_give_eagers_gradients():
    g = torch.Generator(device="cuda").manual_seed(5)
    dtype = torch.bfloat16
    q = randn(2, 8, 300, 128, dtype=dtype, generator=g)
    k, v = (randn(2, 2, 400, 128, dtype=dtype, generator=g) for _ in range(2))
    grad_out = randn(2, 8, 300, 128, dtype=dtype, generator=g)

    def f(q, k, v):
        return tiled_attn.sdpa(q, k, v, is_causal=True, causal_align="bottom_right",
                               enable_gqa=True)

    out, eager = grads(f, q, k, v, grad_out)
    ref = float64_grads(q, k, v, grad_out, causal=True, causal_align="bottom_right")[1]
    assert max(rel(a, r) for a, r in zip(eager, ref)) < 1e-2
    # The op called directly (its Autograd kernel: sdpa_lse's formula).
    op_out, op = grads(lambda q, k, v: torch.ops.tiled_attn.sdpa(
        q, k, v, True, None, None, None, True, "bottom_right"), q, k, v, grad_out)
    assert torch.equal(op_out, out)
    same_gradients(op, eager, "the op")
    # torch.compile over forward and backward: one graph, eager's gradients.
    torch._dynamo.reset()
    compiled = torch.compile(f, fullgraph=True)
    compiled_out, got = grads(compiled, q, k, v, grad_out)
    assert torch.equal(compiled_out, out)
    same_gradients(got, eager, "torch.compile")
    explanation = torch._dynamo.explain(f)(*(t.clone().requires_grad_() for t in (q, k, v)))
    assert explanation.graph_break_count == 0 and explanation.graph_count == 1
    torch._dynamo.reset()


def test_cuda_graph_of_forward_and_backward():
    """Forward and backward captured in one CUDA graph (PyTorch's
    whole-network capture: warm-up on a side stream, which loads the
    modules), replayed on new inputs: eager's gradients."""
    dtype = torch.float16
    g = torch.Generator(device="cuda").manual_seed(11)

    def fresh():
        return [randn(*shape, dtype=dtype, generator=g) for shape in
                ((1, 4, 200, 64), (1, 2, 333, 64), (1, 2, 333, 64), (1, 4, 200, 64))]

    static = [t.requires_grad_(i < 3) for i, t in enumerate(fresh())]

    def step():
        out = tiled_attn.sdpa(*static[:3], is_causal=True, window_size=(100, 0),
                              causal_align="bottom_right", enable_gqa=True)
        out.backward(static[3])
        return out

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(2):
            for t in static[:3]:
                t.grad = None
            step()
    torch.cuda.current_stream().wait_stream(side)
    for t in static[:3]:
        t.grad = None
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        graphed_out = step()
    for _ in range(2):
        new = fresh()
        with torch.no_grad():
            for dst, src in zip(static, new):
                dst.copy_(src)
        graph.replay()
        torch.cuda.synchronize()
        out, expected = grads(lambda q, k, v: tiled_attn.sdpa(
            q, k, v, is_causal=True, window_size=(100, 0), causal_align="bottom_right",
            enable_gqa=True), *new[:3], new[3])
        assert torch.equal(graphed_out, out)
        same_gradients([t.grad for t in static[:3]], expected, "CUDA graph")


def test_grad_out_of_any_layout():
    """A grad_out the kernels take as it is ([B, S, H, D] memory seen as [B, H,
    S, D]) and one they cannot (a last stride of 2: copied) give the
    gradients of a contiguous one."""
    g = torch.Generator(device="cuda").manual_seed(13)
    dtype = torch.bfloat16
    q, k, v = (randn(2, 3, 130, 64, dtype=dtype, generator=g) for _ in range(3))
    grad_out = randn(2, 3, 130, 64, dtype=dtype, generator=g)
    _, expected = grads(lambda q, k, v: tiled_attn.sdpa(q, k, v, is_causal=True),
                        q, k, v, grad_out)
    bshd = grad_out.transpose(1, 2).contiguous().transpose(1, 2)
    strided = torch.zeros(2, 3, 130, 128, dtype=dtype, device="cuda")[..., ::2]
    strided.copy_(grad_out)
    for layout in (bshd, strided):
        assert not layout.is_contiguous()
        same_gradients(grads(lambda q, k, v: tiled_attn.sdpa(q, k, v, is_causal=True),
                             q, k, v, layout)[1], expected, str(layout.stride()))


#: (lengths of the queries, of the keys, H, H_kv, D, sdpa_varlen's options):
#: empty query and key ranges, S_q != S_k per sequence.
VARLEN_CASES = {
    "none_gqa": ((300, 0, 511, 77, 100), (511, 20, 300, 0, 1000), 4, 2, 64, {}),
    "top_left_mqa": ((300, 513, 77), (300, 1000, 77), 4, 1, 64, dict(causal=True)),
    "bottom_right_d128": ((300, 513, 0, 77), (511, 1000, 5, 7), 4, 2, 128,
                          dict(causal=True, causal_align="bottom_right")),
    # Windows per sequence: aligned bottom-right (shifted by each one's
    # S_k - S_q), and top-left on both sides with a softcap.
    "window_bottom_right": ((300, 513, 0, 77), (511, 1000, 5, 7), 4, 2, 64,
                            dict(causal=True, causal_align="bottom_right",
                                 window_size=(100, 0))),
    "window_softcap_d96": ((200, 0, 333), (150, 40, 400), 2, 2, 96,
                           dict(window_size=(64, 32), softcap=20.0)),
    "top_left_d256": ((300, 0, 77), (511, 20, 100), 2, 1, 256, dict(causal=True)),
}
#: Rows past the last sequence (not read by the kernels; their gradients 0).
PADDING = 3


def packed(lengths_q, lengths_k, h, h_kv, d, dtype, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    total_q, total_k = sum(lengths_q) + PADDING, sum(lengths_k) + PADDING
    q = randn(total_q, h, d, dtype=dtype, generator=g)
    k, v = (randn(total_k, h_kv, d, dtype=dtype, generator=g) for _ in range(2))
    grad_out = randn(total_q, h, d, dtype=dtype, generator=g)
    cu_q, cu_k = ([0, *torch.tensor(lengths).cumsum(0).tolist()]
                  for lengths in (lengths_q, lengths_k))
    return q, k, v, grad_out, cu_q, cu_k


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("case", sorted(VARLEN_CASES))
def test_sdpa_varlen_gradients_against_float64(dtype, case):
    lengths_q, lengths_k, h, h_kv, d, options = VARLEN_CASES[case]
    q, k, v, grad_out, cu_q, cu_k = packed(lengths_q, lengths_k, h, h_kv, d, dtype,
                                           zlib.crc32(case.encode()))
    offsets = [torch.tensor(c, dtype=torch.int32, device="cuda") for c in (cu_q, cu_k)]
    leaves = [t.detach().double().requires_grad_() for t in (q, k, v)]
    ref_out, _ = varlen_attention(torch, *leaves, cu_q, cu_k, **options)
    ref = torch.autograd.grad(ref_out, leaves, grad_out.double())

    def call(q, k, v):
        return tiled_attn.sdpa_varlen(q, k, v, *offsets, max(lengths_q), max(lengths_k),
                                      enable_gqa=h != h_kv, **options)

    out, ours = grads(call, q, k, v, grad_out)
    end_q, end_k = cu_q[-1], cu_k[-1]
    assert rel(out[:end_q], ref_out[:end_q].detach()) < 1e-2
    # Rows past the last sequence: zero gradients (zeroed, not written).
    for grad, end in zip(ours, (end_q, end_k, end_k)):
        assert torch.equal(grad[end:], torch.zeros_like(grad[end:]))
    # PyTorch per sequence (its SDPA has no varlen backward).
    base = [torch.zeros_like(t) for t in (q, k, v)]
    for b in range(len(lengths_q)):
        rows, keys = slice(cu_q[b], cu_q[b + 1]), slice(cu_k[b], cu_k[b + 1])
        if lengths_q[b] and lengths_k[b]:
            part, _ = pytorch_grads(*(t.transpose(0, 1)[None] for t in (
                q[rows], k[keys], v[keys], grad_out[rows])), **options)
            for whole, piece, span in zip(base, part, (rows, keys, keys)):
                whole[span] = piece[0].transpose(0, 1)
    assert_within_2x(ours, ref, base, f"{case}, {dtype}")
    # FlashAttention's shim: its causal is bottom-right.
    if options.get("causal_align") == "bottom_right":
        shim_out, shim = grads(lambda q, k, v: tiled_attn.flash_attn_varlen_func(
            q, k, v, *offsets, max(lengths_q), max(lengths_k), causal=True,
            window_size=options.get("window_size", (-1, -1))), q, k, v, grad_out)
        assert torch.equal(shim_out[:end_q], out[:end_q])
        same_gradients(shim, ours, "flash_attn_varlen_func")


def test_flash_attn_func_gradients():
    """[B, S, H, D] inputs, FlashAttention's bottom-right causal, grouped K/V
    heads: sdpa's gradients, in the shim's layout."""
    g = torch.Generator(device="cuda").manual_seed(17)
    dtype = torch.bfloat16
    q = randn(2, 200, 8, 64, dtype=dtype, generator=g)
    k, v = (randn(2, 333, 2, 64, dtype=dtype, generator=g) for _ in range(2))
    grad_out = randn(2, 200, 8, 64, dtype=dtype, generator=g)
    out, ours = grads(lambda q, k, v: tiled_attn.flash_attn_func(q, k, v, causal=True,
                                                                 softcap=8.0),
                      q, k, v, grad_out)
    assert out.is_contiguous() and [t.shape for t in ours] == [q.shape, k.shape, v.shape]
    t = lambda x: x.transpose(1, 2)  # noqa: E731
    _, expected = grads(lambda q, k, v: t(tiled_attn.sdpa(
        t(q), t(k), t(v), is_causal=True, causal_align="bottom_right", softcap=8.0,
        enable_gqa=True)), q, k, v, grad_out)
    same_gradients(ours, expected, "flash_attn_func")
    _, ref = float64_grads(t(q), t(k), t(v), t(grad_out), causal=True,
                           causal_align="bottom_right", softcap=8.0)
    assert max(rel(t(a), r) for a, r in zip(ours, ref)) < 1e-2
    with pytest.raises(NotSupportedError, match="deterministic=True with inputs that require "
                                                "grad"):
        tiled_attn.flash_attn_func(q.requires_grad_(), k, v, deterministic=True)


def test_opcheck_of_the_backward_ops():
    """torch.library.opcheck: the backward ops' schemas and fakes against the
    kernels; sdpa with inputs that require grad, its autograd registration
    and AOTAutograd's gradients (dynamic shapes) against eager's."""
    g = torch.Generator(device="cuda").manual_seed(19)
    dtype = torch.bfloat16
    q = randn(1, 4, 130, 64, dtype=dtype, generator=g)
    k, v = (randn(1, 2, 150, 64, dtype=dtype, generator=g) for _ in range(2))
    out, lse = torch.ops.tiled_attn.sdpa_lse(q, k, v, True, None, None, None, True)
    grad_out = torch.randn_like(out)
    torch.library.opcheck(torch.ops.tiled_attn.sdpa_backward.default,
                          (grad_out, q, k, v, out, lse, True, None, None, True),
                          test_utils=("test_schema", "test_faketensor",
                                      "test_aot_dispatch_dynamic"))
    leaves = [t.clone().requires_grad_() for t in (q, k, v)]
    torch.library.opcheck(torch.ops.tiled_attn.sdpa.default, tuple(leaves),
                          {"causal": True, "enable_gqa": True},
                          test_utils=("test_schema", "test_autograd_registration",
                                      "test_faketensor", "test_aot_dispatch_dynamic"))
    # Packed sequences.
    qp, kp, vp, _, cu_q, cu_k = packed((100, 0, 60), (80, 30, 90), 4, 2, 64, dtype, 23)
    offsets = [torch.tensor(c, dtype=torch.int32, device="cuda") for c in (cu_q, cu_k)]
    out, lse = torch.ops.tiled_attn.sdpa_varlen_lse(qp, kp, vp, *offsets, 100, 90, True, None,
                                                    None, None, True)
    torch.library.opcheck(torch.ops.tiled_attn.sdpa_varlen_backward.default,
                          (torch.randn_like(out), qp, kp, vp, out, lse, *offsets, 100, 90, True,
                           None, None, True),
                          test_utils=("test_schema", "test_faketensor",
                                      "test_aot_dispatch_dynamic"))


def test_what_has_no_backward_says_so():
    g = torch.Generator(device="cuda").manual_seed(29)
    dtype = torch.bfloat16
    q, k, v = (randn(1, 2, 100, 64, dtype=dtype, generator=g).requires_grad_()
               for _ in range(3))
    # A head dim with forward kernels that write the log-sum-exps but no
    # backward kernels: the runtime's NoKernelError at backward().
    lacking = _head_dims_without_backward()
    if lacking:
        d = max(lacking)
        qd = randn(1, 2, 100, d, dtype=dtype, generator=g).requires_grad_()
        with pytest.raises(NoKernelError, match=rf"no backward \w+ kernel for sm_\d+a?, bf16, "
                                                rf"D={d}"):
            tiled_attn.sdpa(qd, qd, qd).sum().backward()
    # Score functions: refused at the call where the library has no
    # backward kernels of them; a captured input that requires grad always.
    library = tiled_attn.KernelLibrary.load()
    if not any(k.score_function == "alibi" and k.phase == "main"
               for k in library.backward_kernels):
        with pytest.raises(NoBackwardError, match=r"no backward kernels of score_mod='alibi'"):
            tiled_attn.sdpa(q, k, v, score_mod="alibi",
                            score_mod_args=(torch.ones(2, device="cuda"),))
    with pytest.raises(NoBackwardError, match=r"score_mod_args\[0\] requires grad"):
        tiled_attn.sdpa(q.detach(), k.detach(), v.detach(), score_mod="alibi",
                        score_mod_args=(torch.ones(2, device="cuda").requires_grad_(),))
    # The log-sum-exps' gradient: refused at backward(); detached, fine.
    out, lse = tiled_attn.sdpa(q, k, v, return_lse=True)
    with pytest.raises(NoBackwardError, match=r"the loss depends on the log-sum-exps"):
        (out.float().sum() + lse.sum()).backward()
    out, lse = tiled_attn.sdpa(q, k, v, return_lse=True)
    (out.float().sum() + lse.detach().sum()).backward()
    assert all(t.grad is not None for t in (q, k, v))
    # A second derivative.
    out = tiled_attn.sdpa(q, k, v)
    with pytest.raises(NoBackwardError, match=r"create_graph=True"):
        torch.autograd.grad(out.sum(), (q, k, v), create_graph=True)
    # The backward op called directly with a grad_out of the wrong shape.
    q, k, v = (t.detach() for t in (q, k, v))
    out, lse = torch.ops.tiled_attn.sdpa_lse(q, k, v)
    with pytest.raises(ValueError, match=r"d_o has sizes \[1, 2, 99, 64\], but o has "
                                         r"\[1, 2, 100, 64\]"):
        torch.ops.tiled_attn.sdpa_backward(out[:, :, :99], q, k, v, out, lse)
    # ... and of another dtype: converted to q's.
    dq, dk, dv = torch.ops.tiled_attn.sdpa_backward(out.float(), q, k, v, out, lse)
    expected = torch.ops.tiled_attn.sdpa_backward(out, q, k, v, out, lse)
    same_gradients((dq, dk, dv), expected, "grad_out of float32")
    assert math.isfinite(dq.float().sum().item())

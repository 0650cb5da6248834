"""PyTorch's SDPA dispatch on a GPU (tiled_attn.install, issue 39):
F.scaled_dot_product_attention and PyTorch's flash ops running tiled-attn's
kernels, forward and backward.

- Gradients through F.scaled_dot_product_attention (PyTorch's default
  backend choice, no sdpa_kernel context) against float64, within 2x of
  PyTorch's own flash backend's error on the same inputs, with the calls
  counted as run by tiled-attn (dispatch.stats); models' [B, S, H, D]
  layouts (transposed views), odd lengths, D = 64, 96 and 128, GQA.
- Mixed paths: a head dim whose backward kernel the library lacks (256): the
  forward here, the backward PyTorch's, from this forward's log-sum-exps;
  dropout: PyTorch's kernels, logged; deterministic mode: tiled-attn's dq
  kernel (dq bit for bit the same run to run).
- torch.compile(fullgraph=True) over F.scaled_dot_product_attention and a
  CUDA graph of forward + backward: the same gradients as eager, run here.
- aten::_flash_attention_forward/_backward (FlashAttention-2's interface)
  dense with a window and varlen.
- uninstall(): PyTorch's kernels again.

Needs torch 2.11+, a CUDA GPU and a kernel library with forward and backward
kernels (skipped otherwise).
"""

from __future__ import annotations

import logging

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():  # pragma: no cover
    pytest.skip("no CUDA device", allow_module_level=True)
if not hasattr(torch.library, "get_kernel"):  # pragma: no cover
    pytest.skip("tiled_attn.install needs PyTorch 2.11+", allow_module_level=True)

import torch.nn.functional as F  # noqa: E402
from attention_reference import attention, varlen_attention  # noqa: E402
from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: E402

import tiled_attn  # noqa: E402
from tiled_attn import TiledAttnError, dispatch  # noqa: E402

pytestmark = pytest.mark.gpu

try:
    _LIBRARY = tiled_attn.default_library()
except TiledAttnError as exc:  # pragma: no cover
    pytest.skip(f"no kernel library: {exc}", allow_module_level=True)
if not _LIBRARY.backward_kernels:  # pragma: no cover
    pytest.skip(f"the kernel library {_LIBRARY.path} has no backward kernels",
                allow_module_level=True)

FWD = "_scaled_dot_product_flash_attention"
BWD = "_scaled_dot_product_flash_attention_backward"


@pytest.fixture
def installed():
    dispatch.reset_stats()
    with tiled_attn.installed():
        yield
    assert not dispatch.is_installed()


def rel(a, ref) -> float:
    return ((a.double() - ref).norm() / ref.norm().clamp_min(1e-30)).item()


def inputs(b, h, h_kv, s, d, dtype=torch.bfloat16, seed=0, layout="bshd"):
    """q, k, v [B, H, S, D] (views of [B, S, H, D] tensors with "bshd"),
    leaves requiring grad, and grad_out."""
    g = torch.Generator(device="cuda").manual_seed(seed)

    def make(heads):
        if layout == "bshd":
            return torch.randn(b, s, heads, d, dtype=dtype, device="cuda",
                               generator=g).transpose(1, 2)
        return torch.randn(b, heads, s, d, dtype=dtype, device="cuda", generator=g)

    q, k, v = make(h), make(h_kv), make(h_kv)
    return q, k, v, torch.randn(b, h, s, d, dtype=dtype, device="cuda", generator=g)


def run(call, q, k, v, grad_out):
    leaves = [t.detach().clone().requires_grad_() for t in (q, k, v)]
    out = call(*leaves)
    return out.detach(), torch.autograd.grad(out, leaves, grad_out)


def float64(q, k, v, grad_out, causal):
    leaves = [t.detach().double().requires_grad_() for t in (q, k, v)]
    out, _ = attention(torch, *leaves, causal)
    return out.detach(), torch.autograd.grad(out, leaves, grad_out.double())


def sdpa_call(causal, gqa=False, dropout_p=0.0):
    return lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=causal,
                                                          enable_gqa=gqa, dropout_p=dropout_p)


CASES = {  # (B, H, H_kv, S, D, causal)
    "d64": (2, 8, 8, 1000, 64, False),
    "d64_causal": (1, 16, 16, 777, 64, True),
    "d128": (2, 4, 4, 1333, 128, False),
    "d128_causal": (1, 8, 8, 2049, 128, True),
    "d96_causal": (2, 4, 4, 700, 96, True),
}


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "f16"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_f_sdpa_runs_the_kernels_and_trains(case, dtype):
    b, h, h_kv, s, d, causal = CASES[case]
    q, k, v, grad_out = inputs(b, h, h_kv, s, d, dtype, seed=len(case))
    ref_out, ref = float64(q, k, v, grad_out, causal)
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        base_out, base = run(sdpa_call(causal), q, k, v, grad_out)
    dispatch.reset_stats()
    with tiled_attn.installed():
        out, ours = run(sdpa_call(causal), q, k, v, grad_out)
    assert dispatch.stats() == {"ran": {FWD: 1, BWD: 1}, "fell_back": {}}
    assert rel(out, ref_out) <= 2 * rel(base_out, ref_out) + 1e-5
    for name, mine, theirs, r in zip("qkv", ours, base, ref):
        assert torch.isfinite(mine).all()
        assert rel(mine, r) <= 2 * rel(theirs, r) + 1e-5, (
            f"d{name}: {rel(mine, r):.3e} vs PyTorch flash {rel(theirs, r):.3e}")
    # The layouts of the ops' meta functions (what compiled graphs assume).
    meta = [t.to("meta") for t in (q, k, v)]
    meta_out, meta_lse = torch.ops.aten._scaled_dot_product_flash_attention(
        *meta, 0.0, causal)[:2]
    assert out.stride() == meta_out.stride()
    seed = torch.zeros(2, dtype=torch.uint64, device="meta")
    meta_grads = torch.ops.aten._scaled_dot_product_flash_attention_backward(
        grad_out.to("meta"), *meta, meta_out, meta_lse, None, None, s, s, 0.0, causal,
        seed, seed[0])
    assert [g.stride() for g in ours] == [g.stride() for g in meta_grads]


def test_grouped_heads(installed):
    q, k, v, grad_out = inputs(1, 16, 4, 1000, 128)
    _, ref = float64(q, k.repeat_interleave(4, 1), v.repeat_interleave(4, 1), grad_out, True)
    ref = (ref[0], ref[1].unflatten(1, (4, 4)).sum(2), ref[2].unflatten(1, (4, 4)).sum(2))
    out, ours = run(sdpa_call(True, gqa=True), q, k, v, grad_out)
    ran = dispatch.stats()["ran"]
    if not ran:
        pytest.skip("PyTorch's SDPA sent enable_gqa=True to a backend other than flash")
    assert ran == {FWD: 1, BWD: 1}
    for mine, r in zip(ours, ref):
        assert rel(mine, r) < 1e-2


def test_a_backward_the_library_lacks_runs_pytorchs_from_our_forward(installed, caplog):
    """A head dim with forward kernels in the library but no backward kernel
    (D = 256): PyTorch's flash backward computes the gradients from this
    forward's output and log-sum-exps. (The aten op called directly: which
    backend SDPA picks at D = 256 is PyTorch's choice.)"""
    from test_backward_gpu import _head_dims_without_backward
    lacking = _head_dims_without_backward()
    if not lacking:
        pytest.skip("every head dim with forward kernels has backward kernels")
    q, k, v, grad_out = inputs(2, 4, 4, 700, max(lacking))
    ref_out, ref = float64(q, k, v, grad_out, True)

    def flash_op(q, k, v):
        return torch.ops.aten._scaled_dot_product_flash_attention(q, k, v, 0.0, True)[0]

    with caplog.at_level(logging.WARNING, logger="tiled_attn.dispatch"):
        out, ours = run(flash_op, q, k, v, grad_out)
    stats = dispatch.stats()
    assert stats["ran"] == {FWD: 1}, stats
    # (PyTorch's kernel of the SDPA backward op calls
    # aten::_flash_attention_backward, which the override also takes and
    # hands back to PyTorch for the same reason.)
    fell_back = [op for op, _ in stats["fell_back"]]
    assert fell_back[0] == BWD and set(fell_back) <= {BWD, "_flash_attention_backward"}, stats
    assert any("ran PyTorch's kernel" in r.getMessage() for r in caplog.records)
    assert rel(out, ref_out) < 1e-2
    for mine, r in zip(ours, ref):
        assert rel(mine, r) < 1e-2


def test_dropout_runs_pytorchs_kernels_and_determinism_ours(installed):
    q, k, v, grad_out = inputs(1, 4, 4, 512, 64)
    out, ours = run(sdpa_call(False, dropout_p=0.1), q, k, v, grad_out)
    assert all(torch.isfinite(g).all() for g in ours)
    assert dispatch.stats()["ran"] == {}
    dispatch.reset_stats()
    torch.use_deterministic_algorithms(True)
    try:
        first = run(sdpa_call(True), q, k, v, grad_out)[1]
        second = run(sdpa_call(True), q, k, v, grad_out)[1]
    finally:
        torch.use_deterministic_algorithms(False)
    assert dispatch.stats() == {"ran": {FWD: 2, BWD: 2}, "fell_back": {}}
    assert all(torch.equal(a, b) for a, b in zip(first, second))


@pytest.mark.parametrize("layout", ["bshd", "bhsd"])
def test_torch_compile_and_cuda_graphs(installed, layout):
    q, k, v, grad_out = inputs(2, 8, 8, 1024, 128, layout=layout)
    _, eager = run(sdpa_call(True), q, k, v, grad_out)
    compiled = torch.compile(sdpa_call(True), fullgraph=True)
    dispatch.reset_stats()
    _, got = run(compiled, q, k, v, grad_out)
    assert dispatch.stats()["ran"] == {FWD: 1, BWD: 1}
    assert torch.equal(got[1], eager[1]) and torch.equal(got[2], eager[2])
    assert rel(got[0], eager[0].double()) < 1e-3  # dq: atomics' order
    # A CUDA graph of forward and backward (warmed up first on a side stream).
    leaves = [t.detach().clone().requires_grad_() for t in (q, k, v)]
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(2):
            grads = torch.autograd.grad(sdpa_call(True)(*leaves), leaves, grad_out)
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        grads = torch.autograd.grad(sdpa_call(True)(*leaves), leaves, grad_out)
    graph.replay()
    torch.cuda.synchronize()
    assert torch.equal(grads[1], eager[1]) and rel(grads[0], eager[0].double()) < 1e-3


@pytest.mark.parametrize("window", [(-1, -1), (255, 0)])
def test_the_flash_attention_ops(installed, window):
    g = torch.Generator(device="cuda").manual_seed(7)
    q, k, v = (torch.randn(2, s, h, 128, dtype=torch.bfloat16, device="cuda", generator=g)
               for s, h in ((600, 8), (900, 2), (900, 2)))
    out, lse = torch.ops.aten._flash_attention_forward(
        q, k, v, None, None, 600, 900, 0.0, True, False, window_size_left=window[0],
        window_size_right=window[1])[:2]
    kr, vr = (t.transpose(1, 2).repeat_interleave(4, 1).double() for t in (k, v))
    ref, ref_lse = attention(torch, q.transpose(1, 2).double(), kr, vr, True, None,
                             "bottom_right", window)
    assert rel(out.transpose(1, 2), ref) < 1e-2
    torch.testing.assert_close(lse.double(), ref_lse, atol=1e-3, rtol=1e-3)
    grads = torch.ops.aten._flash_attention_backward(
        torch.randn_like(out), q, k, v, out, lse, None, None, 600, 900, 0.0, True,
        torch.empty(2, dtype=torch.uint64, device="cuda"),
        torch.empty((), dtype=torch.uint64, device="cuda"), window_size_left=window[0],
        window_size_right=window[1])
    assert [t.shape for t in grads] == [q.shape, k.shape, v.shape]
    assert dispatch.stats()["ran"] == {"_flash_attention_forward": 1,
                                       "_flash_attention_backward": 1}
    # varlen
    cu_q = torch.tensor([0, 100, 100, 600], dtype=torch.int32, device="cuda")
    cu_k = torch.tensor([0, 300, 450, 900], dtype=torch.int32, device="cuda")
    packed = [t.flatten(0, 1)[:n] for t, n in ((q, 600), (k, 900), (v, 900))]
    out = torch.ops.aten._flash_attention_forward(*packed, cu_q, cu_k, 500, 450, 0.0, True,
                                                  False)[0]
    ref, _ = varlen_attention(torch, packed[0].double(),
                              *(t.repeat_interleave(4, 1).double() for t in packed[1:]),
                              cu_q.tolist(), cu_k.tolist(), causal=True,
                              causal_align="bottom_right")
    assert rel(out, ref) < 1e-2


def test_uninstall_gives_pytorch_its_kernels():
    dispatch.reset_stats()
    tiled_attn.install()
    tiled_attn.uninstall()
    q, k, v, grad_out = inputs(1, 4, 4, 256, 64)
    run(sdpa_call(True), q, k, v, grad_out)
    assert dispatch.stats() == {"ran": {}, "fell_back": {}}
    assert not dispatch.is_installed()

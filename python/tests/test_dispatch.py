"""PyTorch's SDPA dispatch (tiled_attn.install, issue 39) without a GPU.

tiled_attn.dispatch replaces the CUDA kernels of PyTorch's four flash
attention ops. Here it replaces their CPU kernels instead
(``install(dispatch_key="CPU")``), over stand-ins: "PyTorch's kernels" are
CPU kernels the test registers first (they record their calls and compute
the float64 reference), and the functions that would launch tiled-attn's
kernels (dispatch.KERNELS) are the same reference, recording theirs. So the
test sees which side ran each call, the arguments each got (layouts,
alignment, windows, varlen), the fallbacks and their log, autograd through
PyTorch's own derivative formulas, PyTorch's registry, and that uninstall
gives everything back. The GPU's side (the real kernels under
F.scaled_dot_product_attention, torch.compile, CUDA graphs, transformers,
context parallelism) is test_dispatch_gpu.py and bench/context_parallel.py.
"""

from __future__ import annotations

import logging
from typing import Any, Dict, List, Tuple

import pytest
from attention_reference import (attention, attention_backward, varlen_attention,
                                 varlen_attention_backward)

torch = pytest.importorskip("torch")
if not hasattr(torch.library, "get_kernel"):  # pragma: no cover
    pytest.skip("tiled_attn.install needs PyTorch 2.11+", allow_module_level=True)

from tiled_attn import dispatch  # noqa: E402
from tiled_attn.errors import NoKernelError  # noqa: E402

aten = torch.ops.aten

#: Who ran what: ("ours" | "pytorch", op name, details).
CALLS: List[Tuple[str, str, Dict[str, Any]]] = []


# ---------------------------------------------------------------- stand-ins

def _ours_sdpa(q, k, v, causal, scale, library, kernel, out, enable_gqa, causal_align, window,
               softcap, return_lse):
    if q.shape[-1] == 24:
        raise NoKernelError("no kernel of the library takes head dim 24")
    o, lse = attention(torch, q.double(), k.double(), v.double(), causal, scale, causal_align,
                       window, softcap)
    out.copy_(o)
    CALLS.append(("ours", "sdpa", dict(align=causal_align, window=tuple(window),
                                       out_strides=out.stride(), gqa=enable_gqa)))
    return out, lse.float()


def _ours_varlen(q, k, v, cu_q, cu_k, max_q, max_k, causal, scale, library, kernel, out,
                 enable_gqa, causal_align, window, softcap, return_lse):
    o, lse = varlen_attention(torch, q.double(), k.double(), v.double(), cu_q.tolist(),
                              cu_k.tolist(), causal=causal, scale=scale,
                              causal_align=causal_align, window_size=tuple(window))
    out.copy_(o)
    CALLS.append(("ours", "sdpa_varlen", dict(align=causal_align, window=tuple(window))))
    return out, lse.float()


def _ours_backward(grad_out, q, k, v, out, lse, causal, scale, library, enable_gqa, causal_align,
                   window, softcap, grads):
    parts = attention_backward(torch, q.double(), k.double(), v.double(), grad_out.double(),
                               causal, scale, causal_align, window, softcap)
    for grad, part in zip(grads, parts):
        grad.copy_(part)
    CALLS.append(("ours", "backward", dict(align=causal_align, window=tuple(window),
                                           lse_shape=tuple(lse.shape))))
    return grads


def _ours_varlen_backward(grad_out, q, k, v, out, lse, cu_q, cu_k, max_q, max_k, causal, scale,
                          library, enable_gqa, causal_align, window, softcap, grads):
    parts = varlen_attention_backward(torch, q.double(), k.double(), v.double(),
                                      grad_out.double(), cu_q.tolist(), cu_k.tolist(),
                                      causal=causal, scale=scale, causal_align=causal_align,
                                      window_size=tuple(window))
    for grad, part in zip(grads, parts):
        grad.copy_(part)
    CALLS.append(("ours", "varlen_backward", dict(window=tuple(window))))
    return grads


def _pytorch_sdpa(q, k, v, dropout_p=0.0, is_causal=False, return_debug_mask=False, *,
                  scale=None):
    CALLS.append(("pytorch", "_scaled_dot_product_flash_attention", dict(dropout_p=dropout_p)))
    o, lse = attention(torch, q.double(), k.double(), v.double(), is_causal, scale,
                       "bottom_right")
    return (o.to(q.dtype), lse.float(), None, None, q.shape[2], k.shape[2],
            torch.zeros(2, dtype=torch.uint64), torch.zeros((), dtype=torch.uint64),
            torch.empty(0, dtype=q.dtype))


def _pytorch_sdpa_backward(grad_out, q, k, v, out, lse, cu_q, cu_k, max_q, max_k, dropout_p,
                           is_causal, seed, offset, *, scale=None):
    CALLS.append(("pytorch", "_scaled_dot_product_flash_attention_backward", {}))
    parts = attention_backward(torch, q.double(), k.double(), v.double(), grad_out.double(),
                               is_causal, scale, "bottom_right")
    return tuple(p.to(q.dtype) for p in parts)


@pytest.fixture
def stand_ins(monkeypatch) -> Any:
    """PyTorch's CPU kernels of the sdpa flash ops (stand-ins, registered
    first), dispatch.KERNELS on the reference; installed on the CPU key for
    the test, uninstalled and removed after."""
    pytorch = torch.library.Library("aten", "IMPL")  # noqa: TOR901
    pytorch.impl("_scaled_dot_product_flash_attention", _pytorch_sdpa, "CPU")
    pytorch.impl("_scaled_dot_product_flash_attention_backward", _pytorch_sdpa_backward, "CPU")
    monkeypatch.setattr(dispatch, "KERNELS", dispatch.SimpleNamespace(
        sdpa=_ours_sdpa, sdpa_varlen=_ours_varlen, backward=_ours_backward,
        varlen_backward=_ours_varlen_backward))
    CALLS.clear()
    dispatch.reset_stats()
    order = list(torch._C._get_sdp_priority_order())
    dispatch.install(dispatch_key="CPU")
    yield
    dispatch.uninstall()
    pytorch._destroy()
    assert list(torch._C._get_sdp_priority_order()) == order


def qkv(b=2, h=4, h_kv=2, s_q=37, s_k=53, d=16, layout="bhsd", seed=0):
    """Random q, k, v ``[B, H, S, D]`` (float32), as views of ``[B, S, H, D]``
    tensors with ``layout="bshd"`` (how models lay them out)."""
    g = torch.Generator().manual_seed(seed)
    tensors = []
    for heads, s in ((h, s_q), (h_kv, s_k), (h_kv, s_k)):
        if layout == "bshd":
            tensors.append(torch.randn(b, s, heads, d, generator=g).transpose(1, 2))
        else:
            tensors.append(torch.randn(b, heads, s, d, generator=g))
    return tensors


def who() -> List[Tuple[str, str]]:
    return [(side, op) for side, op, _ in CALLS]


def meta_strides(op: Any, *args: Any, **kwargs: Any) -> List[Tuple[int, ...]]:
    """The strides of ``op``'s tensor outputs on meta copies of the tensor
    arguments: its meta function's, which compiled graphs are traced with."""
    meta = [a.to("meta") if isinstance(a, torch.Tensor) else a for a in args]
    return [t.stride() for t in op(*meta, **kwargs) if isinstance(t, torch.Tensor)]


# ---------------------------------------------------------------- tests

def test_the_name_is_in_pytorchs_registry() -> None:
    from torch.nn.attention import _registry

    assert dispatch.NAME in _registry.list_flash_attention_impls()


def test_install_puts_flash_first_and_uninstall_restores(stand_ins) -> None:
    flash = int(torch.nn.attention.SDPBackend.FLASH_ATTENTION)
    assert torch._C._get_sdp_priority_order()[0] == flash
    assert dispatch.is_installed()
    from torch.nn.attention import _registry
    assert _registry.current_flash_attention_impl() == dispatch.NAME


@pytest.mark.parametrize("layout", ["bhsd", "bshd"])
@pytest.mark.parametrize("causal", [False, True])
def test_the_sdpa_flash_op_runs_here_and_trains(stand_ins, layout, causal) -> None:
    """aten::_scaled_dot_product_flash_attention and, through PyTorch's own
    derivative formula, its backward: the output in q's layout (the meta
    function's empty_like), the gradients in q's, k's and v's, equal to the
    float64 reference."""
    q, k, v = qkv(s_q=53, layout=layout)
    leaves = [t.detach().requires_grad_() for t in (q, k, v)]
    outputs = aten._scaled_dot_product_flash_attention(*leaves, 0.0, causal)
    out, lse = outputs[:2]
    assert [t.stride() for t in outputs[:2]] == meta_strides(
        aten._scaled_dot_product_flash_attention.default, q, k, v, 0.0, causal)[:2]
    ref, ref_lse = attention(torch, q.double(), k.double(), v.double(), causal)
    torch.testing.assert_close(out.double(), ref, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(lse.double(), ref_lse, rtol=1e-5, atol=1e-5)
    grad_out = torch.randn_like(out)
    grads = torch.autograd.grad(out, leaves, grad_out)
    expected = attention_backward(torch, q.double(), k.double(), v.double(), grad_out.double(),
                                  causal)
    for got, ref_grad in zip(grads, expected):
        torch.testing.assert_close(got.double(), ref_grad, rtol=1e-5, atol=1e-5)
    seed = torch.zeros(2, dtype=torch.uint64)
    assert [g.stride() for g in grads] == meta_strides(
        aten._scaled_dot_product_flash_attention_backward.default, grad_out, q, k, v, out,
        lse, None, None, 53, 53, 0.0, causal, seed, seed[0])
    assert who() == [("ours", "sdpa"), ("ours", "backward")]
    assert CALLS[0][2]["gqa"] is True and CALLS[0][2]["align"] == "top_left"
    assert dispatch.stats() == {"ran": {"_scaled_dot_product_flash_attention": 1,
                                        "_scaled_dot_product_flash_attention_backward": 1},
                                "fell_back": {}}


def test_causal_with_unequal_lengths_is_aligned_bottom_right(stand_ins) -> None:
    """The flash kernel's meaning (SDPA itself sends such calls elsewhere)."""
    q, k, v = qkv(s_q=17, s_k=53)
    out = aten._scaled_dot_product_flash_attention(q, k, v, 0.0, True)[0]
    ref, _ = attention(torch, q.double(), k.double(), v.double(), True, None, "bottom_right")
    torch.testing.assert_close(out.double(), ref, rtol=1e-5, atol=1e-5)
    assert CALLS[0][2]["align"] == "bottom_right"


def test_dropout_falls_back_both_ways_with_a_log(stand_ins, caplog) -> None:
    q, k, v = qkv()
    leaves = [t.detach().requires_grad_() for t in (q, k, v)]
    with caplog.at_level(logging.WARNING, logger="tiled_attn.dispatch"):
        out = aten._scaled_dot_product_flash_attention(*leaves, 0.25, False)[0]
        out.sum().backward()
        aten._scaled_dot_product_flash_attention(q, k, v, 0.25, False)
    assert who() == [("pytorch", "_scaled_dot_product_flash_attention"),
                     ("pytorch", "_scaled_dot_product_flash_attention_backward"),
                     ("pytorch", "_scaled_dot_product_flash_attention")]
    reason = "dropout_p > 0 (tiled-attn's kernels have no dropout)"
    assert dispatch.stats()["fell_back"] == {
        ("_scaled_dot_product_flash_attention", reason): 2,
        ("_scaled_dot_product_flash_attention_backward", reason): 1}
    logged = [r.getMessage() for r in caplog.records]
    assert logged == [f"tiled_attn: aten::_scaled_dot_product_flash_attention ran PyTorch's "
                      f"kernel: {reason}",
                      f"tiled_attn: aten::_scaled_dot_product_flash_attention_backward ran "
                      f"PyTorch's kernel: {reason}"]  # once per op and reason


def test_no_kernel_falls_back_and_the_backward_still_runs_here(stand_ins) -> None:
    """A forward the library has no kernel for runs PyTorch's; the backward
    decides on its own (the log-sum-exps mean the same on both sides)."""
    q, k, v = qkv(d=24)
    leaves = [t.detach().requires_grad_() for t in (q, k, v)]
    out = aten._scaled_dot_product_flash_attention(*leaves, 0.0, True)[0]
    grad_out = torch.randn_like(out)
    grads = torch.autograd.grad(out, leaves, grad_out)
    assert who() == [("pytorch", "_scaled_dot_product_flash_attention"), ("ours", "backward")]
    (op, reason), = dispatch.stats()["fell_back"]
    assert reason == "NoKernelError: no kernel of the library takes head dim 24"
    expected = attention_backward(torch, q.double(), k.double(), v.double(), grad_out.double(),
                                  True, None, "bottom_right")
    for got, ref in zip(grads, expected):
        torch.testing.assert_close(got.double(), ref, rtol=1e-5, atol=1e-5)


def test_deterministic_mode_runs_here(stand_ins) -> None:
    """(The backward reads PyTorch's switch itself: its deterministic mode.)"""
    q, k, v = qkv()
    leaves = [t.detach().requires_grad_() for t in (q, k, v)]
    previous = torch.are_deterministic_algorithms_enabled()
    torch.use_deterministic_algorithms(True)
    try:
        aten._scaled_dot_product_flash_attention(*leaves, 0.0, False)[0].sum().backward()
    finally:
        torch.use_deterministic_algorithms(previous)
    assert who() == [("ours", "sdpa"), ("ours", "backward")]


def test_uninstall_gives_the_ops_back(stand_ins) -> None:
    q, k, v = qkv()
    dispatch.uninstall()
    assert not dispatch.is_installed()
    aten._scaled_dot_product_flash_attention(q, k, v)
    assert who() == [("pytorch", "_scaled_dot_product_flash_attention")]
    with dispatch.installed(dispatch_key="CPU"):
        aten._scaled_dot_product_flash_attention(q, k, v)
    aten._scaled_dot_product_flash_attention(q, k, v)
    assert who()[1:] == [("ours", "sdpa"), ("pytorch", "_scaled_dot_product_flash_attention")]


def test_pytorchs_registry_activates_and_restores(stand_ins) -> None:
    from torch.nn.attention import _registry

    _registry.restore_flash_attention_impl()
    assert not dispatch.is_installed()
    _registry.activate_flash_attention_impl(dispatch.NAME)  # with install()'s last options
    assert dispatch.is_installed()
    q, k, v = qkv()
    aten._scaled_dot_product_flash_attention(q, k, v)
    assert who() == [("ours", "sdpa")]


@pytest.mark.parametrize("window", [(-1, -1), (7, 0), (5, 3)])
def test_the_flash_attention_ops_bshd(stand_ins, window) -> None:
    """aten::_flash_attention_forward/_backward on [B, S, H, D]: sdpa on the
    [B, H, S, D] views, FlashAttention's window and bottom-right causal."""
    q, k, v = (t.transpose(1, 2).contiguous() for t in qkv(s_q=29, s_k=53))
    leaves = [t.detach().requires_grad_() for t in (q, k, v)]
    out, lse = aten._flash_attention_forward(*leaves, None, None, 29, 53, 0.0, True, False,
                                             window_size_left=window[0],
                                             window_size_right=window[1])[:2]
    assert out.shape == q.shape and lse.shape == (2, 4, 29)
    assert [out.stride(), lse.stride()] == meta_strides(
        aten._flash_attention_forward.default, q, k, v, None, None, 29, 53, 0.0, True,
        False)[:2]
    bhsd = [t.transpose(1, 2).double() for t in (q, k, v)]
    ref, _ = attention(torch, *bhsd, True, None, "bottom_right", window)
    torch.testing.assert_close(out.transpose(1, 2).double(), ref, rtol=1e-5, atol=1e-5)
    grad_out = torch.randn_like(out)
    dq, dk, dv = aten._flash_attention_backward(
        grad_out, q, k, v, out, lse, None, None, 29, 53, 0.0, True, torch.empty(2),
        torch.empty(()), window_size_left=window[0], window_size_right=window[1])
    expected = attention_backward(torch, *bhsd, grad_out.transpose(1, 2).double(), True, None,
                                  "bottom_right", window)
    for got, ref_grad in zip((dq, dk, dv), expected):
        torch.testing.assert_close(got.transpose(1, 2).double(), ref_grad, rtol=1e-5, atol=1e-5)
    assert [c[2]["window"] for c in CALLS] == [window, window]


def test_the_flash_attention_ops_varlen(stand_ins) -> None:
    cu_q, cu_k = torch.tensor([0, 5, 5, 30], dtype=torch.int32), \
        torch.tensor([0, 9, 20, 51], dtype=torch.int32)
    g = torch.Generator().manual_seed(3)
    q, k, v = (torch.randn(n, h, 16, generator=g) for n, h in ((30, 4), (51, 2), (51, 2)))
    out, lse = aten._flash_attention_forward(q, k, v, cu_q, cu_k, 25, 31, 0.0, True, False)[:2]
    ref, ref_lse = varlen_attention(torch, q.double(), k.double(), v.double(), cu_q.tolist(),
                                    cu_k.tolist(), causal=True, causal_align="bottom_right")
    torch.testing.assert_close(out.double(), ref, rtol=1e-5, atol=1e-5)
    assert lse.shape == (4, 30)
    grad_out = torch.randn_like(out)
    grads = aten._flash_attention_backward(grad_out, q, k, v, out, lse, cu_q, cu_k, 25, 31, 0.0,
                                           True, torch.empty(2), torch.empty(()))
    expected = varlen_attention_backward(torch, q.double(), k.double(), v.double(),
                                         grad_out.double(), cu_q.tolist(), cu_k.tolist(),
                                         causal=True, causal_align="bottom_right")
    for got, ref_grad in zip(grads, expected):
        torch.testing.assert_close(got.double(), ref_grad, rtol=1e-5, atol=1e-5)
    assert who() == [("ours", "sdpa_varlen"), ("ours", "varlen_backward")]


def test_alibi_and_seqused_k_fall_back(stand_ins) -> None:
    """Arguments the kernels do not take here go to PyTorch's kernel (none is
    registered for _flash_attention_forward on the CPU: its error shows the
    call reached it)."""
    q, k, v = (t.transpose(1, 2).contiguous() for t in qkv())
    for extra, reason in ((dict(alibi_slopes=torch.ones(4)), "alibi_slopes"),
                          (dict(seqused_k=torch.ones(2, dtype=torch.int32)),
                           "seqused_k without a paged cache")):
        with pytest.raises(NotImplementedError, match="_flash_attention_forward"):
            aten._flash_attention_forward(q, k, v, None, None, 37, 53, 0.0, False, False,
                                          **extra)
        assert dispatch.stats()["fell_back"][("_flash_attention_forward", reason)] == 1
    assert CALLS == []

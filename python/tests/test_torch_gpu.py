"""tiled_attn.sdpa under PyTorch on a GPU: the custom op, torch.compile,
CUDA graphs, streams and the torch-level errors (the gradients are
test_backward_gpu.py's); windows, softcap and the
log-sum-exps against float64; tiled_attn.sdpa_varlen on packed sequences,
each against float64 attention over it alone.

Needs torch, a CUDA GPU and a kernel library for it (skipped otherwise).
"""

from __future__ import annotations

import itertools
import math

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():  # pragma: no cover
    pytest.skip("no CUDA device", allow_module_level=True)

import torch.nn.functional as F  # noqa: E402

import tiled_attn  # noqa: E402
import tiled_attn.ops  # noqa: E402,F401  (registers tiled_attn::sdpa)
from tiled_attn import NoKernelError, TiledAttnError  # noqa: E402

pytestmark = pytest.mark.gpu

try:
    tiled_attn.default_library()
except TiledAttnError as exc:  # pragma: no cover
    pytest.skip(f"no kernel library: {exc}", allow_module_level=True)


def qkv(b=2, h=3, sq=77, sk=131, d=64, dtype=torch.float16, seed=0):
    g = torch.Generator(device="cuda").manual_seed(seed)
    return tuple(torch.randn(b, h, s, d, dtype=dtype, device="cuda", generator=g)
                 for s in (sq, sk, sk))


def reference(q, k, v, causal):
    q, k, v = q.double(), k.double(), v.double()
    scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    if causal:
        mask = torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool, device=q.device).tril()
        scores = scores.masked_fill(~mask, -math.inf)
    return torch.softmax(scores, dim=-1) @ v


def rel_l2(out, ref):
    return (torch.linalg.vector_norm(out.double() - ref) / torch.linalg.vector_norm(ref)).item()


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("d", [64, 128])
def test_sdpa_and_the_op_agree_with_float64(dtype, causal, d):
    q, k, v = qkv(d=d, dtype=dtype, sq=131 if causal else 77)
    ref = reference(q, k, v, causal)
    out = tiled_attn.sdpa(q, k, v, causal=causal)
    assert out.is_contiguous() and out.shape == q.shape and out.dtype == dtype
    assert rel_l2(out, ref) < 1e-2
    op = torch.ops.tiled_attn.sdpa(q, k, v, causal)
    assert torch.equal(op, out)


def test_strided_and_misaligned_inputs():
    q, k, v = qkv(sq=100, sk=100)
    # [B, S, H, D] memory seen as [B, H, S, D] (what transformers passes).
    qt = q.transpose(1, 2).contiguous().transpose(1, 2)
    # A view that starts 2 bytes into its storage: copied first.
    storage = torch.randn(k.numel() + 1, dtype=k.dtype, device="cuda")
    km = storage[1:].view(k.shape).copy_(k)
    out = tiled_attn.sdpa(qt, km, v, causal=True)
    assert rel_l2(out, reference(q, k, v, True)) < 1e-2


def test_compile_fullgraph_has_no_graph_break():
    q, k, v = qkv()

    def f(q, k, v):
        return tiled_attn.sdpa(q * 1.0, k, v, causal=True, scale=0.1) + 1.0

    torch._dynamo.reset()
    compiled = torch.compile(f, fullgraph=True)
    expected = f(q, k, v)
    assert torch.allclose(compiled(q, k, v), expected, atol=1e-3, rtol=1e-3)
    explanation = torch._dynamo.explain(f)(q, k, v)
    assert explanation.graph_break_count == 0 and explanation.graph_count == 1


def test_cuda_graph_capture_and_replay():
    q, k, v = qkv(b=1, h=4, sq=200, sk=200, d=128, dtype=torch.bfloat16)
    static = [t.clone() for t in (q, k, v)]
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up: loads the module before capture
        tiled_attn.sdpa(*static, causal=True)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = tiled_attn.sdpa(*static, causal=True)
    for seed in (1, 2):
        fresh = qkv(b=1, h=4, sq=200, sk=200, d=128, dtype=torch.bfloat16, seed=seed)
        for dst, src in zip(static, fresh):
            dst.copy_(src)
        graph.replay()
        torch.cuda.synchronize()
        assert rel_l2(out, reference(*fresh, True)) < 1e-2


def test_runs_on_the_current_stream():
    q, k, v = qkv(b=4, h=8, sq=1024, sk=1024)
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        # A long kernel first on this stream: ours must queue behind it.
        torch.cuda._sleep(50_000_000)
        out = tiled_attn.sdpa(q, k, v)
        done = torch.cuda.Event()
        done.record(stream)
    assert not done.query()  # still queued behind the sleep on `stream`
    stream.synchronize()
    assert rel_l2(out, reference(q, k, v, False)) < 1e-2


def test_empty_problem_and_torch_level_errors():
    q, k, v = qkv(sq=0)
    assert tiled_attn.sdpa(q, k, v).shape == q.shape
    q, k, v = qkv()
    with pytest.raises(TypeError, match="dtype torch.float32"):
        tiled_attn.sdpa(q.float(), k.float(), v.float())
    with pytest.raises(ValueError, match="needs CUDA tensors"):
        tiled_attn.sdpa(q.cpu(), k, v)
    with pytest.raises(ValueError, match="head dim 64 but q has 80"):
        tiled_attn.sdpa(torch.randn(2, 3, 77, 80, dtype=q.dtype, device="cuda"), k, v)
    # (D=96 was the example until the library took it, 2026-11-24.)
    with pytest.raises(ValueError, match="head dim D=112 is not supported"):
        d112 = torch.randn(2, 3, 77, 112, dtype=q.dtype, device="cuda")
        tiled_attn.sdpa(d112, d112, d112)
    with pytest.raises(TiledAttnError, match="no kernel"):
        tiled_attn.sdpa(q, k, v, kernel="no_such_kernel")


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("causal", [False, True])
def test_mla_head_dims(dtype, causal):
    """DeepSeek's MLA: q and k of 192 columns, v and the output of 128; with
    grouped KV heads, the log-sum-exps and through the op."""
    if (192, 128) not in tiled_attn.default_library().head_dim_pairs:
        pytest.skip("no kernel of head dims 192/128 in the library")
    g = torch.Generator(device="cuda").manual_seed(3)
    q = torch.randn(2, 4, 200, 192, dtype=dtype, device="cuda", generator=g)
    k = torch.randn(2, 2, 200, 192, dtype=dtype, device="cuda", generator=g)
    v = torch.randn(2, 2, 200, 128, dtype=dtype, device="cuda", generator=g)
    ref = reference(q, k.repeat_interleave(2, 1), v.repeat_interleave(2, 1), causal)
    out = tiled_attn.sdpa(q, k, v, causal=causal, enable_gqa=True)
    assert out.shape == (2, 4, 200, 128) and out.dtype == dtype
    assert rel_l2(out, ref) < 1e-2
    op = torch.ops.tiled_attn.sdpa(q, k, v, causal, enable_gqa=True)
    assert torch.equal(op, out)
    out2, lse = tiled_attn.sdpa(q, k, v, causal=causal, enable_gqa=True, return_lse=True)
    assert rel_l2(out2, ref) < 1e-2 and lse.shape == (2, 4, 200)
    # The output must have v's head dim.
    with pytest.raises(ValueError, match="the output must have q's shape with v's head dim"):
        tiled_attn.sdpa(q, k, v, causal=causal, enable_gqa=True, out=torch.empty_like(q))


def test_matches_pytorch_sdpa_at_model_shapes():
    q, k, v = qkv(b=2, h=16, sq=1024, sk=1024, d=128, dtype=torch.bfloat16)
    ours = tiled_attn.sdpa(q, k, v, causal=True)
    theirs = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    assert rel_l2(ours, theirs.double()) < 2e-2


def test_out_in_another_layout():
    q, k, v = qkv(b=2, h=4, sq=100, sk=100, d=128, dtype=torch.bfloat16)
    o = torch.full((2, 100, 4, 128), math.nan, dtype=q.dtype, device="cuda")
    result = tiled_attn.sdpa(q, k, v, causal=True, out=o.transpose(1, 2))
    assert result.data_ptr() == o.data_ptr()
    assert rel_l2(o.transpose(1, 2), reference(q, k, v, True)) < 1e-2
    with pytest.raises(ValueError, match="out must be a 4-d tensor of q's dtype"):
        tiled_attn.sdpa(q, k, v, out=o.float().transpose(1, 2))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("d", [64, 128])
@pytest.mark.parametrize("kv_heads", [1, 2])
def test_grouped_kv_heads(dtype, causal, d, kv_heads):
    """enable_gqa: 6 query heads on 2 K/V heads (GQA) or 1 (MQA), read in
    place, as PyTorch's SDPA computes them (and the float64 reference of K/V
    repeated); the op takes it too."""
    g = torch.Generator(device="cuda").manual_seed(7)
    q = torch.randn(2, 6, 131, d, dtype=dtype, device="cuda", generator=g)
    k, v = (torch.randn(2, kv_heads, 200, d, dtype=dtype, device="cuda", generator=g)
            for _ in range(2))
    out = tiled_attn.sdpa(q, k, v, causal=causal, enable_gqa=True)
    groups = 6 // kv_heads
    ref = reference(q, k.repeat_interleave(groups, 1), v.repeat_interleave(groups, 1), causal)
    ours = rel_l2(out, ref)
    theirs = rel_l2(F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True), ref)
    assert ours <= max(2 * theirs, 1e-3), (ours, theirs)
    op = torch.ops.tiled_attn.sdpa(q, k, v, causal, None, None, None, True)
    assert torch.equal(op, out)


def test_grouped_kv_heads_errors():
    q = torch.randn(1, 6, 64, 64, dtype=torch.float16, device="cuda")
    k = torch.randn(1, 2, 64, 64, dtype=torch.float16, device="cuda")
    with pytest.raises(ValueError, match=r"k and v have 2 and 2 heads but q has 6; pass "
                                         r"enable_gqa=True"):
        tiled_attn.sdpa(q, k, k)
    k4 = torch.randn(1, 4, 64, 64, dtype=torch.float16, device="cuda")
    with pytest.raises(ValueError, match=r"k has head count 4 but q has 6; q's head count "
                                         r"must be a multiple of k's and v's"):
        tiled_attn.sdpa(q, k4, k4, enable_gqa=True)
    with pytest.raises(TypeError, match=r"enable_gqa must be a bool, got int 1"):
        tiled_attn.sdpa(q, k, k, enable_gqa=1)


# ---------------------------------------------------------------- windows, bottom-right causal


def band_scores(q, k, causal, align, window, softcap=0.0):
    """float64 scores where query i sees key j iff i + shift - left <= j <=
    i + shift + right (each side unless -1) and, if causal, j <= i + shift;
    -inf where it does not. With softcap > 0 the scores s become
    softcap * tanh(s / softcap) before the mask."""
    q, k = q.double(), k.double()
    s_q, s_k = q.shape[-2], k.shape[-2]
    shift = s_k - s_q if align == "bottom_right" else 0
    i = torch.arange(s_q, device=q.device).view(-1, 1)
    j = torch.arange(s_k, device=q.device).view(1, -1)
    keep = torch.ones(s_q, s_k, dtype=torch.bool, device=q.device)
    left, right = window
    if left >= 0:
        keep &= j >= i + shift - left
    if right >= 0:
        keep &= j <= i + shift + right
    if causal:
        keep &= j <= i + shift
    scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    if softcap > 0:
        scores = softcap * torch.tanh(scores / softcap)
    return scores.masked_fill(~keep, -math.inf)


def band_reference(q, k, v, causal, align, window, softcap=0.0):
    """float64 attention over band_scores; a row that sees no key is 0."""
    scores = band_scores(q, k, causal, align, window, softcap)
    return torch.softmax(scores, dim=-1).nan_to_num(0.0) @ v.double()


def has_kernel(mask, dtype, d, softcap=False):
    name = {torch.float16: "f16", torch.bfloat16: "bf16"}[dtype]
    return any(k.mask == mask and k.dtype == name and k.head_dim == d and k.softcap == softcap
               for k in tiled_attn.default_library().kernels)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("d", [64, 128])
@pytest.mark.parametrize("causal, align, window, sq, sk", [
    (True, "top_left", (64, 0), 300, 300),         # causal sliding window (w=65)
    (True, "top_left", (64, 64), 300, 300),        # the same: causal caps the right side
    (True, "bottom_right", (100, 100), 77, 331),   # a chunk after a KV cache
    (True, "bottom_right", (-1, -1), 77, 331),     # bottom-right causal alone
    (True, "bottom_right", (-1, -1), 331, 77),     # rows before S_q - S_k see no key: 0
    (False, "top_left", (32, 16), 200, 150),       # a local window, both sides
    (False, "bottom_right", (16, -1), 150, 200),   # one side unbounded
    (False, "top_left", (5, 5), 300, 3),           # most rows see no key
])
def test_windows_agree_with_float64(dtype, d, causal, align, window, sq, sk):
    if not has_kernel("window", dtype, d):
        pytest.skip("the library has no window kernel of this dtype and head dim")
    q, k, v = qkv(sq=sq, sk=sk, d=d, dtype=dtype)
    ref = band_reference(q, k, v, causal, align, window)
    out = tiled_attn.sdpa(q, k, v, causal=causal, causal_align=align, window_size=window)
    assert torch.isfinite(out).all()
    assert rel_l2(out, ref) < 1e-2
    op = torch.ops.tiled_attn.sdpa(q, k, v, causal, None, None, None, False, align, list(window))
    assert torch.equal(op, out)


def test_window_under_compile_and_with_grouped_heads():
    if not has_kernel("window", torch.bfloat16, 128):
        pytest.skip("the library has no bf16 D=128 window kernel")
    g = torch.Generator(device="cuda").manual_seed(3)
    q = torch.randn(2, 8, 256, 128, dtype=torch.bfloat16, device="cuda", generator=g)
    k, v = (torch.randn(2, 2, 512, 128, dtype=torch.bfloat16, device="cuda", generator=g)
            for _ in range(2))

    def f(q, k, v):
        return tiled_attn.sdpa(q, k, v, causal=True, enable_gqa=True, causal_align="bottom_right",
                               window_size=(127, 127))

    torch._dynamo.reset()
    out = torch.compile(f, fullgraph=True)(q, k, v)
    ref = band_reference(q, k.repeat_interleave(4, 1), v.repeat_interleave(4, 1), True,
                         "bottom_right", (127, 127))
    assert rel_l2(out, ref) < 1e-2
    assert torch.equal(out, f(q, k, v))


# ---------------------------------------------------------------- softcap


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("d", [64, 128])
@pytest.mark.parametrize("causal, align, window, sq, sk, softcap", [
    (False, "top_left", (-1, -1), 77, 131, 1.0),       # no mask, on a softcap window kernel
    (True, "top_left", (-1, -1), 300, 300, 2.0),       # top-left causal
    (True, "bottom_right", (-1, -1), 77, 331, 50.0),   # a chunk after a KV cache
    (True, "top_left", (64, 64), 300, 300, 5.0),       # Gemma 2's sliding layers
    (False, "top_left", (5, 5), 300, 3, 1.0),          # most rows see no key
])
def test_softcap_agrees_with_float64(dtype, d, causal, align, window, sq, sk, softcap):
    if not has_kernel("window", dtype, d, softcap=True):
        pytest.skip("the library has no softcap window kernel of this dtype and head dim")
    # Scores of a few units (randn * 2 in q), so that a cap of 1 or 2 matters.
    q, k, v = qkv(sq=sq, sk=sk, d=d, dtype=dtype, seed=4)
    q = q * 2
    ref = band_reference(q, k, v, causal, align, window, softcap)
    out = tiled_attn.sdpa(q, k, v, causal=causal, causal_align=align, window_size=window,
                          softcap=softcap)
    assert torch.isfinite(out).all()
    assert rel_l2(out, ref) < 1e-2
    if softcap < 10:
        assert rel_l2(out, band_reference(q, k, v, causal, align, window)) > 2e-2
    op = torch.ops.tiled_attn.sdpa(q, k, v, causal, None, None, None, False, align, list(window),
                                   softcap)
    assert torch.equal(op, out)


def test_softcap_under_compile_and_with_grouped_heads():
    if not has_kernel("window", torch.bfloat16, 128, softcap=True):
        pytest.skip("the library has no bf16 D=128 softcap window kernel")
    g = torch.Generator(device="cuda").manual_seed(5)
    q = 2 * torch.randn(2, 8, 256, 128, dtype=torch.bfloat16, device="cuda", generator=g)
    k, v = (torch.randn(2, 2, 256, 128, dtype=torch.bfloat16, device="cuda", generator=g)
            for _ in range(2))

    def f(q, k, v):
        return tiled_attn.sdpa(q, k, v, causal=True, enable_gqa=True, softcap=2.0)

    torch._dynamo.reset()
    out = torch.compile(f, fullgraph=True)(q, k, v)
    ref = band_reference(q, k.repeat_interleave(4, 1), v.repeat_interleave(4, 1), True,
                         "top_left", (-1, -1), 2.0)
    assert rel_l2(out, ref) < 1e-2
    assert torch.equal(out, f(q, k, v))


def test_softcap_errors():
    q, k, v = qkv()
    with pytest.raises(TypeError, match=r"^softcap must be a float \(0.0: off\), got str"):
        tiled_attn.sdpa(q, k, v, softcap="50")
    with pytest.raises(ValueError, match=r"^softcap must be a finite number >= 0"):
        tiled_attn.sdpa(q, k, v, softcap=-1.0)
    if not any(k.softcap for k in tiled_attn.default_library().kernels):
        with pytest.raises(TiledAttnError, match=r"softcap=50 .*; a kernel of .*, with softcap, "):
            tiled_attn.sdpa(q, k, v, softcap=50.0)


# ---------------------------------------------------------------- log-sum-exp


def band_lse(q, k, causal, align, window, softcap=0.0):
    """float64 log-sum-exps of band_scores: -inf for a row that sees no key."""
    return torch.logsumexp(band_scores(q, k, causal, align, window, softcap), dim=-1)


def has_lse_kernel(dtype, d, softcap=False):
    name = {torch.float16: "f16", torch.bfloat16: "bf16"}[dtype]
    return any(k.lse and k.dtype == name and k.head_dim == d and k.softcap == softcap
               for k in tiled_attn.default_library().kernels)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("d", [64, 128])
@pytest.mark.parametrize("causal, align, window, sq, sk", [
    (False, "top_left", (-1, -1), 77, 131),        # no mask
    (True, "top_left", (-1, -1), 300, 300),        # PyTorch's is_causal
    (True, "bottom_right", (-1, -1), 331, 77),     # rows before S_q - S_k: -inf
    (True, "top_left", (64, 0), 300, 300),         # a sliding window
    (False, "top_left", (5, 5), 300, 3),           # most rows see no key
])
def test_lse_agrees_with_float64(dtype, d, causal, align, window, sq, sk):
    if not has_lse_kernel(dtype, d):
        pytest.skip("the library has no lse kernel of this dtype and head dim")
    q, k, v = qkv(sq=sq, sk=sk, d=d, dtype=dtype, seed=6)
    out, lse = tiled_attn.sdpa(q, k, v, causal=causal, causal_align=align, window_size=window,
                               return_lse=True)
    assert lse.shape == q.shape[:3] and lse.dtype == torch.float32 and lse.is_contiguous()
    ref = band_lse(q, k, causal, align, window)
    empty = torch.isneginf(ref)
    assert torch.equal(torch.isneginf(lse), empty)
    assert (lse.double() - ref)[~empty].abs().max().item() < 1e-4
    assert rel_l2(out, band_reference(q, k, v, causal, align, window)) < 1e-2
    # The output is the one sdpa gives without the log-sum-exps (same kernel
    # or not, the same attention).
    plain = tiled_attn.sdpa(q, k, v, causal=causal, causal_align=align, window_size=window)
    assert rel_l2(out, plain.double()) < 2e-3
    op_out, op_lse = torch.ops.tiled_attn.sdpa_lse(q, k, v, causal, None, None, None, False,
                                                   align, list(window))
    assert torch.equal(op_out, out) and torch.equal(op_lse, lse)


def test_lse_merges_split_kv_and_compiles():
    if not has_lse_kernel(torch.bfloat16, 128):
        pytest.skip("the library has no bf16 D=128 lse kernel")
    g = torch.Generator(device="cuda").manual_seed(7)
    q = torch.randn(2, 8, 1, 128, dtype=torch.bfloat16, device="cuda", generator=g)
    k, v = (torch.randn(2, 2, 3000, 128, dtype=torch.bfloat16, device="cuda", generator=g)
            for _ in range(2))

    def f(q, k, v):
        # Split-KV decoding: two halves of the cache, merged with their LSEs.
        o1, l1 = tiled_attn.sdpa(q, k[:, :, :1234], v[:, :, :1234], enable_gqa=True,
                                 return_lse=True)
        o2, l2 = tiled_attn.sdpa(q, k[:, :, 1234:], v[:, :, 1234:], enable_gqa=True,
                                 return_lse=True)
        lse = torch.logaddexp(l1, l2)
        out = (torch.exp(l1 - lse)[..., None] * o1.float()
               + torch.exp(l2 - lse)[..., None] * o2.float())
        return out, lse

    torch._dynamo.reset()
    out, lse = torch.compile(f, fullgraph=True)(q, k, v)
    whole, whole_lse = tiled_attn.sdpa(q, k, v, enable_gqa=True, return_lse=True)
    assert (lse - whole_lse).abs().max().item() < 1e-4
    assert rel_l2(out, whole.double()) < 1e-2
    ref = band_reference(q, k.repeat_interleave(4, 1), v.repeat_interleave(4, 1), False,
                         "top_left", (-1, -1))
    assert rel_l2(out, ref) < 1e-2


def test_lse_errors():
    q, k, v = qkv()
    with pytest.raises(TypeError, match=r"^return_lse must be a bool, got int 1"):
        tiled_attn.sdpa(q, k, v, return_lse=1)
    if not any(k.lse for k in tiled_attn.default_library().kernels):
        with pytest.raises(TiledAttnError, match=r"log-sum-exp .*; a kernel of .*, with lse, "):
            tiled_attn.sdpa(q, k, v, return_lse=True)


# ---------------------------------------------------------------- variable-length batches
#
# sdpa_varlen on packed sequences of awkward lengths (one query, none, not a
# multiple of 64), some with no keys, K/V with rows past the last offset;
# each sequence against float64 attention over it alone; the output
# NaN-poisoned, its rows past the last offset left unwritten.

#: (query lengths, key lengths): the same (self-attention), and different
#: ones, with a sequence of no keys (its rows give 0, log-sum-exps -inf).
VARLEN_LENGTHS = {
    "self": ([1, 0, 77, 300, 129], [1, 0, 77, 300, 129]),
    "cross": ([1, 0, 77, 300, 129, 5], [64, 3, 200, 250, 129, 0]),
}
#: Rows past the last offset, in q and in k and v: finite, never attended.
VARLEN_PADDING = 7


def varlen_kernel(dtype, d, masks, softcap=False, lse=False):
    """Whether the library has a varlen kernel of one of ``masks``."""
    name = {torch.float16: "f16", torch.bfloat16: "bf16"}[dtype]
    return any(k.varlen and k.mask in masks and k.dtype == name and k.head_dim == d
               and k.softcap == softcap and (k.lse or not lse)
               for k in tiled_attn.default_library().kernels)


def skip_without_varlen_kernel(dtype, d, causal, align, window, softcap=False, lse=False):
    """Skip unless a varlen kernel computes this mask: the band's own, or a
    window kernel (for a band with some bound, or any with a softcap or lse)."""
    own = "none" if not causal else align
    masks = {own, "window"} if causal or softcap or lse else {own}
    if window != (-1, -1):
        masks = {"window"}
    if not varlen_kernel(dtype, d, masks, softcap, lse):
        pytest.skip(f"the library has no varlen kernel of {sorted(masks)} for this dtype "
                    f"and head dim (softcap={softcap}, lse={lse})")


def test_gradients_take_the_op_and_without_them_nothing_changes():
    """Issue 39 (the gradients' numbers: test_backward_gpu.py): with grad mode
    on and an input requiring grad, sdpa's output tracks its gradient (eager,
    the op, torch.compile); under torch.no_grad() and torch.inference_mode(),
    or with nothing requiring grad, the call runs as before (the kernel
    without log-sum-exps, no grad_fn); what has no backward (score and mask
    functions) is refused at the call (NoBackwardError, naming it)."""
    q, k, v = qkv()
    expected = tiled_attn.sdpa(q, k, v)
    # (With a gradient, the kernel that writes the log-sum-exps: another
    # kernel, the same values up to rounding.)
    out = tiled_attn.sdpa(q.requires_grad_(), k, v)
    assert out.requires_grad and rel_l2(out, expected.double()) < 2e-3
    out = torch.ops.tiled_attn.sdpa(q, k, v)
    assert out.requires_grad and rel_l2(out, expected.double()) < 2e-3
    with torch.no_grad():
        out = tiled_attn.sdpa(q, k, v)
    assert not out.requires_grad and torch.equal(out, expected)
    with torch.inference_mode():
        assert torch.equal(tiled_attn.sdpa(q, k, v), expected)
    with torch.no_grad():
        assert torch.equal(torch.ops.tiled_attn.sdpa(q, k, v), expected)
    with pytest.raises(tiled_attn.NoBackwardError,
                       match=r"^tiled_attn\.sdpa: q requires grad, but tiled_attn's backward "
                             r"pass does not compute score_mod 'alibi' yet"):
        tiled_attn.sdpa(q, k, v, score_mod="alibi",
                        score_mod_args=(torch.ones(3, device="cuda"),))
    with pytest.raises(tiled_attn.NoBackwardError,
                       match=r"^tiled_attn::sdpa: q requires grad, but tiled_attn's backward "
                             r"pass does not compute score_mod 'alibi' yet"):
        torch.ops.tiled_attn.sdpa(q, k, v, score_mod="alibi",
                                  score_mod_args=[torch.ones(3, device="cuda")])

    def f(q, k, v):
        return tiled_attn.sdpa(q * 1.0, k, v) + 0.0

    torch._dynamo.reset()
    compiled = torch.compile(f, fullgraph=True)
    with torch.no_grad():
        assert torch.equal(compiled(q, k, v), expected)
    plain = [t.detach() for t in (q, k, v)]  # grad mode on, nothing requires grad
    out = compiled(*plain)
    assert not out.requires_grad and torch.equal(out, expected)
    out = compiled(q, k, v)
    assert out.requires_grad and rel_l2(out, expected.double()) < 2e-3


def packed_sequences(lengths_q, lengths_k, h=3, h_kv=3, d=64, dtype=torch.float16, seed=0,
                     q_scale=1.0):
    """Packed q [total_q, h, d], k and v [total_k, h_kv, d] (VARLEN_PADDING rows
    past the sequences) and their int32 offsets."""
    g = torch.Generator(device="cuda").manual_seed(seed)
    total_q, total_k = sum(lengths_q) + VARLEN_PADDING, sum(lengths_k) + VARLEN_PADDING

    def randn(*shape):
        return torch.randn(*shape, dtype=dtype, device="cuda", generator=g)

    q = randn(total_q, h, d) * q_scale
    k, v = randn(total_k, h_kv, d), randn(total_k, h_kv, d)
    cu_q, cu_k = (torch.tensor([0, *torch.tensor(lengths).cumsum(0).tolist()],
                               dtype=torch.int32, device="cuda")
                  for lengths in (lengths_q, lengths_k))
    return q, k, v, cu_q, cu_k


def varlen_reference(q, k, v, cu_q, cu_k, causal, align, window, softcap=0.0):
    """Per sequence, float64 (out [len_q, H, D], lse [H, len_q]) of attention
    over it alone (band_reference, band_lse); K/V heads repeated for GQA."""
    groups = q.shape[1] // k.shape[1]
    cq, ck = cu_q.tolist(), cu_k.tolist()
    results = []
    for b in range(len(cq) - 1):
        qs = q[cq[b]:cq[b + 1]].transpose(0, 1)[None]
        ks, vs = (t[ck[b]:ck[b + 1]].transpose(0, 1)[None].repeat_interleave(groups, 1)
                  for t in (k, v))
        out = band_reference(qs, ks, vs, causal, align, window, softcap)[0].transpose(0, 1)
        results.append((out, band_lse(qs, ks, causal, align, window, softcap)[0]))
    return results


def check_varlen(out, lse, q, k, v, cu_q, cu_k, causal, align, window, softcap=0.0):
    """Each sequence's rows within the file's tolerance of float64 (exactly 0
    where a row sees no key), log-sum-exps within 1e-4 (-inf exactly where a
    row sees no key); the padding rows of out untouched (NaN)."""
    cq = cu_q.tolist()
    assert torch.isnan(out[cq[-1]:]).all(), "rows past cu_seqlens_q[-1] were written"
    assert torch.isfinite(out[:cq[-1]]).all()
    refs = varlen_reference(q, k, v, cu_q, cu_k, causal, align, window, softcap)
    for b, (ref, ref_lse) in enumerate(refs):
        rows = out[cq[b]:cq[b + 1]]
        seen = ref.abs().amax(dim=(1, 2)) > 0
        assert torch.equal(rows[~seen], torch.zeros_like(rows[~seen])), f"sequence {b}"
        if seen.any():
            assert rel_l2(rows[seen], ref[seen]) < 1e-2, f"sequence {b}"
        if lse is not None:
            ours = lse[:, cq[b]:cq[b + 1]]
            empty = torch.isneginf(ref_lse)
            assert torch.equal(torch.isneginf(ours), empty), f"sequence {b}"
            if (~empty).any():
                assert (ours.double() - ref_lse)[~empty].abs().max().item() < 1e-4, \
                    f"sequence {b}"


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("d", [64, 128])
@pytest.mark.parametrize("lengths", ["self", "cross"])
@pytest.mark.parametrize("causal, align, window", [
    (False, "top_left", (-1, -1)),       # no mask
    (True, "top_left", (-1, -1)),        # PyTorch's is_causal, per sequence
    (True, "bottom_right", (-1, -1)),    # FlashAttention's causal, per sequence
    (True, "top_left", (64, 0)),         # a sliding window
    (False, "bottom_right", (32, 16)),   # a two-sided window, aligned bottom-right
])
def test_varlen_agrees_with_float64_per_sequence(dtype, d, lengths, causal, align, window):
    skip_without_varlen_kernel(dtype, d, causal, align, window)
    lengths_q, lengths_k = VARLEN_LENGTHS[lengths]
    q, k, v, cu_q, cu_k = packed_sequences(lengths_q, lengths_k, d=d, dtype=dtype, seed=8)
    out = torch.full_like(q, math.nan)
    result = tiled_attn.sdpa_varlen(q, k, v, cu_q, cu_k, max(lengths_q), max(lengths_k),
                                    causal=causal, causal_align=align, window_size=window,
                                    out=out)
    assert result is out
    check_varlen(out, None, q, k, v, cu_q, cu_k, causal, align, window)
    op = torch.ops.tiled_attn.sdpa_varlen(q, k, v, cu_q, cu_k, max(lengths_q), max(lengths_k),
                                          causal, None, None, None, False, align, list(window))
    end = int(cu_q[-1])
    assert torch.equal(op[:end], out[:end])


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("kv_heads", [1, 2])
def test_varlen_grouped_kv_heads(dtype, kv_heads):
    skip_without_varlen_kernel(dtype, 128, True, "bottom_right", (-1, -1))
    lengths_q, lengths_k = VARLEN_LENGTHS["cross"]
    q, k, v, cu_q, cu_k = packed_sequences(lengths_q, lengths_k, h=6, h_kv=kv_heads, d=128,
                                           dtype=dtype, seed=9)
    out = torch.full_like(q, math.nan)
    tiled_attn.sdpa_varlen(q, k, v, cu_q, cu_k, 300, 250, causal=True, enable_gqa=True,
                           causal_align="bottom_right", out=out)
    check_varlen(out, None, q, k, v, cu_q, cu_k, True, "bottom_right", (-1, -1))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("d", [64, 128])
@pytest.mark.parametrize("causal, align, window, softcap", [
    (False, "top_left", (-1, -1), 1.0),
    (True, "bottom_right", (-1, -1), 50.0),
    (True, "top_left", (64, 64), 5.0),
])
def test_varlen_softcap(dtype, d, causal, align, window, softcap):
    skip_without_varlen_kernel(dtype, d, causal, align, window, softcap=True)
    lengths_q, lengths_k = VARLEN_LENGTHS["cross"]
    q, k, v, cu_q, cu_k = packed_sequences(lengths_q, lengths_k, d=d, dtype=dtype, seed=10,
                                           q_scale=2.0)
    out = torch.full_like(q, math.nan)
    tiled_attn.sdpa_varlen(q, k, v, cu_q, cu_k, 300, 250, causal=causal, causal_align=align,
                           window_size=window, softcap=softcap, out=out)
    check_varlen(out, None, q, k, v, cu_q, cu_k, causal, align, window, softcap)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("d", [64, 128])
@pytest.mark.parametrize("causal, align, window", [
    (False, "top_left", (-1, -1)),
    (True, "bottom_right", (-1, -1)),    # rows before len_q - len_k: -inf
    (True, "top_left", (64, 0)),
])
def test_varlen_lse(dtype, d, causal, align, window):
    skip_without_varlen_kernel(dtype, d, causal, align, window, lse=True)
    lengths_q, lengths_k = VARLEN_LENGTHS["cross"]
    q, k, v, cu_q, cu_k = packed_sequences(lengths_q, lengths_k, d=d, dtype=dtype, seed=11)
    out = torch.full_like(q, math.nan)
    result, lse = tiled_attn.sdpa_varlen(q, k, v, cu_q, cu_k, 300, 250, causal=causal,
                                         causal_align=align, window_size=window,
                                         return_lse=True, out=out)
    assert result is out
    assert lse.shape == (3, q.shape[0]) and lse.dtype == torch.float32 and lse.is_contiguous()
    check_varlen(out, lse, q, k, v, cu_q, cu_k, causal, align, window)
    end = int(cu_q[-1])
    op_out, op_lse = torch.ops.tiled_attn.sdpa_varlen_lse(q, k, v, cu_q, cu_k, 300, 250, causal,
                                                          None, None, None, False, align,
                                                          list(window))
    assert torch.equal(op_out[:end], out[:end]) and torch.equal(op_lse[:, :end], lse[:, :end])


def test_varlen_compiles_and_replays_in_a_cuda_graph():
    """Under torch.compile(fullgraph) it is the custom op; in a CUDA graph the
    offsets are read on the GPU at each replay (new lengths, same maxima)."""
    skip_without_varlen_kernel(torch.bfloat16, 128, True, "top_left", (-1, -1))
    lengths = [100, 0, 33, 200]
    q, k, v, cu_q, cu_k = packed_sequences(lengths, lengths, h=4, h_kv=4, d=128,
                                           dtype=torch.bfloat16, seed=12)

    def f(q, k, v, cu_q, cu_k):
        return tiled_attn.sdpa_varlen(q * 1.0, k, v, cu_q, cu_k, 200, 200, causal=True) + 0.0

    torch._dynamo.reset()
    compiled = torch.compile(f, fullgraph=True)
    end = int(cu_q[-1])
    assert torch.equal(compiled(q, k, v, cu_q, cu_k)[:end], f(q, k, v, cu_q, cu_k)[:end])
    explanation = torch._dynamo.explain(f)(q, k, v, cu_q, cu_k)
    assert explanation.graph_break_count == 0
    # Compiled with out=: the rows past the last offset keep their values, as
    # in eager mode.
    torch._dynamo.reset()
    poisoned = torch.full_like(q, math.nan)
    into = torch.compile(lambda q, k, v, cu_q, cu_k, out: tiled_attn.sdpa_varlen(
        q, k, v, cu_q, cu_k, 200, 200, causal=True, out=out), fullgraph=True)
    into(q, k, v, cu_q, cu_k, poisoned)
    assert poisoned[end:].isnan().all() and not poisoned[:end].isnan().any()
    assert torch.equal(poisoned[:end], f(q, k, v, cu_q, cu_k)[:end])

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    out = torch.full_like(q, math.nan)
    with torch.cuda.stream(side):  # warm-up: loads the module before capture
        tiled_attn.sdpa_varlen(q, k, v, cu_q, cu_k, 200, 200, causal=True, out=out)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        tiled_attn.sdpa_varlen(q, k, v, cu_q, cu_k, 200, 200, causal=True, out=out)
    for new in ([200, 100, 33, 0], [1, 1, 131, 200]):
        _, _, _, new_q, new_k = packed_sequences(new, new)
        cu_q.copy_(new_q)
        cu_k.copy_(new_k)
        out.fill_(math.nan)
        graph.replay()
        torch.cuda.synchronize()
        check_varlen(out, None, q, k, v, cu_q, cu_k, True, "top_left", (-1, -1))


def test_varlen_without_gradients_runs_as_before():
    """sdpa_varlen under torch.no_grad() with inputs that require grad: the
    kernel without log-sum-exps, an output without grad_fn (with grad mode
    on, the differentiable op: test_backward_gpu.py)."""
    q, k, v, cu_q, cu_k = packed_sequences([5, 6], [5, 6])
    skip_without_varlen_kernel(torch.float16, 64, False, "top_left", (-1, -1))
    out = torch.full_like(q, math.nan)
    with torch.no_grad():
        assert tiled_attn.sdpa_varlen(q, k, v.requires_grad_(), cu_q, cu_k, 6, 6, out=out) is out
    assert not out.requires_grad
    check_varlen(out, None, q, k, v.detach(), cu_q, cu_k, False, "top_left", (-1, -1))


def test_varlen_torch_level_errors():
    q, k, v, cu_q, cu_k = packed_sequences([5, 6], [5, 6])
    with pytest.raises(TypeError, match=r"cu_seqlens_q has dtype torch.int64; "
                                        r"tiled_attn.sdpa_varlen needs torch.int32"):
        tiled_attn.sdpa_varlen(q, k, v, cu_q.long(), cu_k, 6, 6)
    with pytest.raises(ValueError, match=r"cu_seqlens_k is on cpu but q is on cuda"):
        tiled_attn.sdpa_varlen(q, k, v, cu_q, cu_k.cpu(), 6, 6)
    with pytest.raises(ValueError, match=r"q must have rank 3 \[total, H, D\]"):
        tiled_attn.sdpa_varlen(q[None], k, v, cu_q, cu_k, 6, 6)
    with pytest.raises(ValueError, match=r"varlen.max_seqlen_k is 100 but k holds 18 keys"):
        tiled_attn.sdpa_varlen(q, k, v, cu_q, cu_k, 6, 100)
    if not any(kernel.varlen for kernel in tiled_attn.default_library().kernels):
        with pytest.raises(TiledAttnError, match=r"varlen \(num_seqs=2, .*; a kernel of .*, with varlen, "):
            tiled_attn.sdpa_varlen(q, k, v, cu_q, cu_k, 6, 6)


# ================================================================ PyTorch's order, the shim
#
# Issue 37, item 5: sdpa(query, key, value, attn_mask, dropout_p, is_causal,
# scale, enable_gqa) against F.scaled_dot_product_attention, and
# flash_attn_func / flash_attn_varlen_func against float64 references of
# FlashAttention's semantics ([B, S, H, D], causal and window aligned
# bottom-right).


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("sq, sk", [(131, 131), (77, 131)])
def test_sdpa_in_pytorchs_order_agrees_with_torch(dtype, sq, sk):
    q, k, v = qkv(sq=sq, sk=sk, dtype=dtype, seed=11)
    ref = reference(q, k, v, True)  # PyTorch's is_causal: top-left
    theirs = F.scaled_dot_product_attention(q, k, v, None, 0.0, True)
    ours = tiled_attn.sdpa(q, k, v, None, 0.0, True)
    assert rel_l2(ours, ref) < 1e-2 and rel_l2(ours, theirs.double()) < 1e-2
    assert torch.equal(tiled_attn.sdpa(q, k, v, is_causal=True), ours)
    assert torch.equal(tiled_attn.sdpa(q, k, v, causal=True), ours)
    # scale: keyword-only in PyTorch's schema, positional (7th) here too.
    theirs = F.scaled_dot_product_attention(q, k, v, None, 0.0, True, scale=0.05)
    assert rel_l2(tiled_attn.sdpa(q, k, v, None, 0.0, True, 0.05), theirs.double()) < 1e-2
    # The old sdpa(q, k, v, True) fails loudly.
    with pytest.raises(TypeError, match=r"^attn_mask is the bool True: .* pass is_causal=True$"):
        tiled_attn.sdpa(q, k, v, True)
    # A bool attn_mask runs on the mask kernels (the library's at D = 64,
    # 128 and 256 on sm_90a and sm_80): all true is no mask; a library
    # without them names the function it lacks.
    try:
        masked = tiled_attn.sdpa(q, k, v, torch.ones(sq, sk, dtype=torch.bool, device="cuda"))
    except (ValueError, tiled_attn.TiledAttnError) as exc:
        assert "mask_mod='mask'" in str(exc) or "mask_function=mask" in str(exc), exc
    else:
        assert rel_l2(masked, reference(q, k, v, False)) < 1e-2
    with pytest.raises(tiled_attn.NotSupportedError, match=r"^dropout_p is 0.1, but"):
        tiled_attn.sdpa(q, k, v, None, 0.1, True)


def masked_math_reference(q, k, v, mask, causal=False):
    """PyTorch's math backend in float64 on `attn_mask` (bool or additive,
    broadcast to [B, H, S_q, S_k]), with a top-left causal mask on top."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    (b, h, sq, _), sk = q.shape, k.shape[2]
    dense = mask.expand(b, h, sq, sk)
    if dense.dtype != torch.bool:
        dense = dense.double()
    if causal:
        tri = torch.ones(sq, sk, dtype=torch.bool, device=q.device).tril()
        dense = dense & tri if dense.dtype == torch.bool else dense.masked_fill(~tri, -math.inf)
    with sdpa_kernel(SDPBackend.MATH):
        return F.scaled_dot_product_attention(q.double(), k.double(), v.double(), dense)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_attn_mask_float_and_bool_agree_with_torch(dtype):
    # The bias and mask kernels (sm_90a, D = 128): PyTorch's float and bool
    # masks, broadcast, against F.scaled_dot_product_attention's math backend.
    if torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("the bias and mask kernels are sm_90a's")
    q, k, v = qkv(sq=77, sk=131, d=128, dtype=dtype, seed=13)
    g = torch.Generator(device="cuda").manual_seed(14)
    # (S_k = 131: rows of float32 that are not 16-byte aligned, which the
    # kernels that copy the bias in 16-byte blocks get padded.)
    masks = (torch.randn(2, 1, 77, 131, dtype=dtype, device="cuda", generator=g),
             torch.randn(2, 1, 77, 131, dtype=torch.float32, device="cuda", generator=g),
             torch.rand(77, 131, device="cuda", generator=g) > 0.3)
    for mask in masks:
        if mask.dtype == torch.bool:
            mask[:, 0] = True
        ours = tiled_attn.sdpa(q, k, v, mask)
        assert rel_l2(ours, masked_math_reference(q, k, v, mask)) < 1e-2


@pytest.mark.parametrize("d", [64, 96, 128, 192, 256])
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_16bit_attn_mask_runs_as_it_is(dtype, d):
    # A float mask of q's 16-bit dtype runs on the bias_bf16 / bias_f16
    # kernels (sm_90a) as it is, no float32 copy: the same values
    # as the float32 bias's, so the same output up to rounding (the two
    # kernels take 128- and 64-key blocks, so their probabilities round to
    # q's dtype against different running maxima: within half a bf16 ulp).
    if torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("the 16-bit bias kernels are sm_90a's")
    from tiled_attn.sdpa import takes_16bit_bias
    q, k, v = qkv(sq=77, sk=144, d=d, dtype=dtype, seed=17)
    if not takes_16bit_bias(torch, q, torch.zeros(1, dtype=dtype, device="cuda"), None):
        pytest.skip(f"the library has no 16-bit bias kernel at D = {d}")
    g = torch.Generator(device="cuda").manual_seed(18)
    for mask in (torch.randn(2, 1, 77, 144, dtype=dtype, device="cuda", generator=g),
                 torch.randn(77, 131, dtype=dtype, device="cuda", generator=g)[:, :144]):
        assert takes_16bit_bias(torch, q, mask, None)
        kk, vv = k[:, :, :mask.shape[-1]], v[:, :, :mask.shape[-1]]
        for causal in (False, True):
            ours = tiled_attn.sdpa(q, kk, vv, mask, is_causal=causal)
            wide = tiled_attn.sdpa(q, kk, vv, mask.float(), is_causal=causal)
            assert rel_l2(ours, wide) < 4e-3
            theirs = masked_math_reference(q, kk, vv, mask, causal)
            assert rel_l2(ours, theirs) < 1e-2, (tuple(mask.shape), causal)


@pytest.mark.parametrize("d", [64, 128, 256])
def test_attn_mask_broadcast_by_stride_zero(d):
    # Masks broadcast by stride 0 over heads, queries or the batch, with rows
    # 16-byte aligned (S_k = 144) so that they reach the kernels as views
    # (the sm_90a kernels copy their blocks with TMA, through a tensor map
    # with those zero strides), and causal on top.
    if torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("the bias and mask kernels of each head dim are sm_90a's")
    q, k, v = qkv(sq=77, sk=144, d=d, dtype=torch.bfloat16, seed=15)
    g = torch.Generator(device="cuda").manual_seed(16)
    keep = torch.rand(2, 1, 1, 144, device="cuda", generator=g) > 0.4
    keep[..., 0] = True
    masks = (torch.randn(2, 1, 1, 144, dtype=torch.float32, device="cuda", generator=g),
             torch.randn(1, 1, 77, 144, dtype=torch.float32, device="cuda", generator=g),
             keep,
             (torch.rand(1, 3, 1, 144, device="cuda", generator=g) > 0.4) | keep[:1])
    for mask in masks:
        for causal in (False, True):
            theirs = masked_math_reference(q, k, v, mask, causal)
            ours = tiled_attn.sdpa(q, k, v, mask, is_causal=causal)
            assert rel_l2(ours, theirs) < 1e-2, (tuple(mask.shape), mask.dtype, causal)


def test_sdpa_enable_gqa_positional_and_compiled():
    g = torch.Generator(device="cuda").manual_seed(12)
    q = torch.randn(2, 8, 200, 64, dtype=torch.float16, device="cuda", generator=g)
    k, v = (torch.randn(2, 2, 200, 64, dtype=torch.float16, device="cuda", generator=g)
            for _ in range(2))
    ours = tiled_attn.sdpa(q, k, v, None, 0.0, True, None, True)
    ref = reference(q, k.repeat_interleave(4, 1), v.repeat_interleave(4, 1), True)
    assert rel_l2(ours, ref) < 1e-2
    torch._dynamo.reset()
    compiled = torch.compile(lambda q, k, v: tiled_attn.sdpa(q, k, v, is_causal=True,
                                                              enable_gqa=True), fullgraph=True)
    assert rel_l2(compiled(q, k, v), ref) < 1e-2


def flash_reference(q, k, v, causal, window, scale=None, softcap=0.0):
    """FlashAttention's semantics in float64 on [B, S, H, D] tensors: with
    shift = S_k - S_q, query i sees key j iff j <= i + shift when causal and
    i + shift - left <= j <= i + shift + right for each bound not -1; K/V
    heads grouped (head h on K/V head h // (H / H_kv)); a row that sees no
    key is 0. Written from FlashAttention's docstring, not from band_scores."""
    q, k, v = (t.double().transpose(1, 2) for t in (q, k, v))
    groups = q.shape[1] // k.shape[1]
    k, v = k.repeat_interleave(groups, 1), v.repeat_interleave(groups, 1)
    s_q, s_k = q.shape[2], k.shape[2]
    shift = s_k - s_q
    i = torch.arange(s_q, device=q.device).view(-1, 1)
    j = torch.arange(s_k, device=q.device).view(1, -1)
    keep = torch.ones(s_q, s_k, dtype=torch.bool, device=q.device)
    if causal:
        keep &= j <= i + shift
    if window[0] >= 0:
        keep &= j >= i + shift - window[0]
    if window[1] >= 0:
        keep &= j <= i + shift + window[1]
    scores = q @ k.transpose(-1, -2) * (scale if scale is not None else q.shape[-1] ** -0.5)
    if softcap > 0:
        scores = softcap * torch.tanh(scores / softcap)
    probs = torch.softmax(scores.masked_fill(~keep, -math.inf), dim=-1).nan_to_num(0.0)
    return (probs @ v).transpose(1, 2)


def bshd(b=2, sq=77, sk=331, h=6, h_kv=2, d=64, dtype=torch.float16, seed=13):
    g = torch.Generator(device="cuda").manual_seed(seed)
    return (torch.randn(b, sq, h, d, dtype=dtype, device="cuda", generator=g),
            *(torch.randn(b, sk, h_kv, d, dtype=dtype, device="cuda", generator=g)
              for _ in range(2)))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("causal, window, sq, sk", [
    (True, (-1, -1), 77, 331),      # bottom-right: the last query sees the last key
    (True, (-1, -1), 331, 77),      # the first 254 queries see no key: 0
    (True, (100, 0), 77, 331),      # a causal sliding window after a cache
    (False, (32, 16), 150, 200),    # a two-sided window, bottom-right
    (True, (-1, -1), 200, 200),     # S_q == S_k
    (False, (-1, -1), 77, 331),     # no mask
])
def test_flash_attn_func_agrees_with_flash_attentions_semantics(dtype, causal, window, sq, sk):
    if (causal and sq != sk or window != (-1, -1)) and not has_kernel("window", dtype, 64):
        pytest.skip("the library has no window kernel of this dtype (bottom-right, windows)")
    q, k, v = bshd(sq=sq, sk=sk, dtype=dtype)
    ref = flash_reference(q, k, v, causal, window)
    out = tiled_attn.flash_attn_func(q, k, v, causal=causal, window_size=window)
    assert out.shape == q.shape and out.is_contiguous() and out.dtype == dtype
    assert torch.isfinite(out).all()
    seen = ref.abs().amax(dim=(2, 3)) > 0  # [B, S_q]: rows that see a key
    assert torch.equal(out[~seen], torch.zeros_like(out[~seen]))
    assert rel_l2(out[seen], ref[seen]) < 1e-2
    # softmax_scale and softcap, FlashAttention's names.
    if has_kernel("window", dtype, 64, softcap=True):
        out = tiled_attn.flash_attn_func(q, k, v, 0.0, 0.1, causal, window, 5.0,
                                         deterministic=True)
        ref = flash_reference(q, k, v, causal, window, 0.1, 5.0)
        assert rel_l2(out[seen], ref[seen]) < 1e-2


def test_flash_attn_func_alibi_is_flashattentions():
    # FlashAttention's causal ALiBi, -slope * |i + S_k - S_q - j| added to the
    # scaled scores, written from its docstring, on the alibi kernels (D = 128).
    if not any(k.score_function == "alibi" and k.mask == "top_left" and k.head_dim == 128
               for k in tiled_attn.default_library().kernels):
        pytest.skip("the library has no alibi kernels")
    g = torch.Generator(device="cuda").manual_seed(21)
    b, s, h, h_kv, d = 2, 333, 8, 2, 128
    q = torch.randn(b, s, h, d, dtype=torch.bfloat16, device="cuda", generator=g)
    k, v = (torch.randn(b, s, h_kv, d, dtype=torch.bfloat16, device="cuda", generator=g)
            for _ in range(2))
    slopes = torch.rand(h, device="cuda", generator=g)
    ours = tiled_attn.flash_attn_func(q, k, v, causal=True, alibi_slopes=slopes)
    qd, kd, vd = (t.double().transpose(1, 2) for t in (q, k, v))
    kd, vd = kd.repeat_interleave(h // h_kv, 1), vd.repeat_interleave(h // h_kv, 1)
    i = torch.arange(s, device="cuda").view(s, 1)
    j = torch.arange(s, device="cuda").view(1, s)
    scores = (qd @ kd.transpose(-1, -2)) * d ** -0.5
    scores = scores - slopes.double().view(1, h, 1, 1) * (i - j).abs()
    scores = scores.masked_fill(j > i, -math.inf)
    ref = (torch.softmax(scores, -1) @ vd).transpose(1, 2)
    assert rel_l2(ours, ref) < 1e-2
    with pytest.raises(tiled_attn.NotSupportedError, match=r"^alibi_slopes without causal"):
        tiled_attn.flash_attn_func(q, k, v, alibi_slopes=slopes)


def test_flash_attn_func_compiles_and_refuses():
    if not has_kernel("window", torch.float16, 64):
        pytest.skip("the library has no f16 D=64 window kernel")
    q, k, v = bshd(sq=64, sk=256)
    torch._dynamo.reset()
    compiled = torch.compile(lambda q, k, v: tiled_attn.flash_attn_func(q, k, v, causal=True),
                             fullgraph=True)
    assert rel_l2(compiled(q, k, v), flash_reference(q, k, v, True, (-1, -1))) < 1e-2
    with pytest.raises(tiled_attn.NotSupportedError, match=r"^dropout_p is 0.1"):
        tiled_attn.flash_attn_func(q, k, v, 0.1)
    with pytest.raises(tiled_attn.NotSupportedError, match=r"^alibi_slopes without causal"):
        tiled_attn.flash_attn_func(q, k, v, alibi_slopes=torch.ones(6, device="cuda"))
    with pytest.raises(tiled_attn.NotSupportedError, match=r"^return_attn_probs=True"):
        tiled_attn.flash_attn_func(q, k, v, return_attn_probs=True)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("causal, window", [(True, (-1, -1)), (False, (32, 16)),
                                            (True, (64, 0))])
def test_flash_attn_varlen_func_is_bottom_right_per_sequence(dtype, causal, window):
    skip_without_varlen_kernel(dtype, 64, causal, "bottom_right", window)
    lengths_q, lengths_k = VARLEN_LENGTHS["cross"]
    q, k, v, cu_q, cu_k = packed_sequences(lengths_q, lengths_k, dtype=dtype, seed=14)
    out = tiled_attn.flash_attn_varlen_func(q, k, v, cu_q, cu_k, max(lengths_q), max(lengths_k),
                                            causal=causal, window_size=window)
    end = int(cu_q[-1])
    padded = torch.full_like(q, math.nan)
    padded[:end] = out[:end]
    check_varlen(padded, None, q, k, v, cu_q, cu_k, causal, "bottom_right", window)


# torch.library.opcheck on every op of the package: the schema (no aliasing
# or mutation it does not declare), the fake implementation against the real
# kernel (shapes, strides, dtypes), and tracing through AOTAutograd with
# dynamic shapes. The inputs require no grad here (the gradients' opcheck,
# with the autograd registration test, is test_backward_gpu.py's).
OPCHECK_TESTS = ("test_schema", "test_faketensor", "test_aot_dispatch_dynamic")


@pytest.mark.parametrize("lse", [False, True])
@pytest.mark.parametrize("causal", [False, True])
def test_opcheck_sdpa(lse, causal):
    q, k, v = qkv(sq=77, sk=131)
    op = torch.ops.tiled_attn.sdpa_lse if lse else torch.ops.tiled_attn.sdpa
    torch.library.opcheck(op.default, (q, k, v),
                          {"causal": causal, "causal_align": "bottom_right"},
                          test_utils=OPCHECK_TESTS)
    # A window with grouped K/V heads, through the same checks.
    q, k, v = qkv(h=4, sq=130, sk=130)
    k, v = k[:, :2].contiguous(), v[:, :2].contiguous()
    torch.library.opcheck(op.default, (q, k, v),
                          {"enable_gqa": True, "window_size": [31, 0]},
                          test_utils=OPCHECK_TESTS)


def test_opcheck_and_compile_with_functions():
    # Score and mask functions and their captured tensors through the ops:
    # opcheck (schema, fake, dispatch), torch.compile(fullgraph=True) and a
    # CUDA graph, against the eager call (sm_90a's D = 128 function kernels).
    if torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("the function kernels are sm_90a's")
    q, k, v = qkv(h=8, sq=130, sk=130, d=128, dtype=torch.bfloat16, seed=21)
    k, v = k[:, :4].contiguous(), v[:, :4].contiguous()
    slopes = torch.rand(8, device="cuda")
    docs = (torch.arange(130, device="cuda") // 40).to(torch.int32).repeat(2, 1)
    torch.library.opcheck(torch.ops.tiled_attn.sdpa.default, (q, k, v),
                          {"enable_gqa": True, "score_mod": "alibi",
                           "score_mod_args": [slopes], "mask_mod": "document",
                           "mask_mod_args": [docs]},
                          test_utils=OPCHECK_TESTS)

    def call(q, k, v, slopes, docs):
        return tiled_attn.sdpa(q, k, v, enable_gqa=True, score_mod="alibi",
                               score_mod_args=(slopes,), mask_mod="document",
                               mask_mod_args=(docs,))
    eager = call(q, k, v, slopes, docs)
    compiled = torch.compile(call, fullgraph=True)(q, k, v, slopes, docs)
    assert torch.equal(compiled, eager)
    mask = torch.randn(130, 130, device="cuda", dtype=torch.bfloat16)
    masked = torch.compile(lambda q, k, v, m: tiled_attn.sdpa(q, k, v, m, enable_gqa=True),
                           fullgraph=True)(q, k, v, mask)
    assert torch.equal(masked, tiled_attn.sdpa(q, k, v, mask, enable_gqa=True))
    # A CUDA graph replays the launch with its captured tensors.
    call(q, k, v, slopes, docs)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        graphed = call(q, k, v, slopes, docs)
    slopes.mul_(0.5)
    graph.replay()
    assert torch.equal(graphed, call(q, k, v, slopes, docs))


def test_block_mask_document_matches_every_block_and_compiles():
    # A block mask (create_block_mask from the document mask) on the
    # block-sparse document kernel: the output of the kernel that visits
    # every block (up to rounding); through opcheck, torch.compile(fullgraph=True)
    # and a CUDA graph; bad lists refused naming the field, nothing run.
    if torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("the block-sparse kernels measured here are sm_90a's")
    q, k, v = qkv(h=8, sq=700, sk=700, d=128, dtype=torch.bfloat16, seed=23)
    k, v = k[:, :4].contiguous(), v[:, :4].contiguous()
    lengths = [200, 300, 200]
    docs = torch.cat([torch.full((n,), i, dtype=torch.int32, device="cuda")
                      for i, n in enumerate(lengths)]).repeat(2, 1)
    visible = docs[:, None, :, None] == docs[:, None, None, :]
    block_mask = tiled_attn.create_block_mask(visible)
    assert block_mask.kv_num_blocks.shape == (2, 1, 6)
    assert block_mask.kv_indices.shape == (2, 1, 6, 6)
    # FlexAttention's form, a mask function of index tensors evaluated a
    # chunk of rows at a time, gives the same lists.
    from_function = tiled_attn.create_block_mask(
        lambda b, h, q_idx, kv_idx: docs[b, q_idx] == docs[b, kv_idx], 2, None, 700, 700,
        rows_per_chunk=256)
    for a, b in zip(block_mask.as_tuple(), from_function.as_tuple()):
        assert torch.equal(a, b)

    def call(q, k, v, docs, block_mask):
        return tiled_attn.sdpa(q, k, v, enable_gqa=True, mask_mod="document",
                               mask_mod_args=(docs,), block_mask=block_mask)
    sparse = call(q, k, v, docs, block_mask)
    dense = tiled_attn.sdpa(q, k, v, enable_gqa=True, mask_mod="document",
                            mask_mod_args=(docs,))
    # The partial blocks come first, then the full ones: another order of
    # the online softmax's blocks, equal up to rounding.
    assert ((sparse.float() - dense.float()).norm() / dense.float().norm()).item() < 4e-3
    lists = list(block_mask_args(block_mask, q, k))
    torch.library.opcheck(torch.ops.tiled_attn.sdpa.default, (q, k, v),
                          {"enable_gqa": True, "mask_mod": "document",
                           "mask_mod_args": [docs], "block_mask": lists},
                          test_utils=OPCHECK_TESTS)
    compiled = torch.compile(call, fullgraph=True)(q, k, v, docs, block_mask)
    assert torch.equal(compiled, sparse)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        graphed = call(q, k, v, docs, block_mask)
    graph.replay()
    assert torch.equal(graphed, sparse)
    # Bad block masks and calls.
    from dataclasses import replace
    for bad, field in ((replace(block_mask, kv_indices=block_mask.kv_indices[..., :3]),
                        "kv_indices"),
                       (replace(block_mask, kv_num_blocks=block_mask.kv_num_blocks.long()),
                        "kv_num_blocks"),
                       (replace(block_mask, full_kv_indices=block_mask.full_kv_indices.cpu()),
                        "full_kv_indices")):
        with pytest.raises(ValueError, match=f"block_mask.{field}"):
            call(q, k, v, docs, bad)
    with pytest.raises(ValueError, match="block_mask takes no causal mask"):
        tiled_attn.sdpa(q, k, v, is_causal=True, enable_gqa=True, block_mask=block_mask)
    with pytest.raises(TypeError, match="tiled_attn.BlockMask"):
        call(q, k, v, docs, lists)
    with pytest.raises(ValueError, match="create_block_mask: mask must be a torch.bool"):
        tiled_attn.create_block_mask(visible.float())
    with pytest.raises(ValueError, match="needs Q_LEN and KV_LEN"):
        tiled_attn.create_block_mask(lambda b, h, q, kv: q >= kv)


def test_block_mask_from_a_library_mask_function():
    # create_block_mask("document", ...): the library's block mask kernel of
    # the function gives the lists the dense mask gives; the sparse kernel
    # runs on them; a CUDA graph replays it; bad calls are refused naming the
    # argument.
    library = tiled_attn.default_library()
    if not any(k.mask_function == "document" for k in library.block_masks):
        pytest.skip("the library has no block mask kernel of 'document'")
    docs = torch.cat([torch.full((n,), i, dtype=torch.int32, device="cuda")
                      for i, n in enumerate([200, 300, 229])]).repeat(2, 1)
    compiled = tiled_attn.create_block_mask("document", 2, 3, 729, 729, mask_mod_args=(docs,))
    dense = tiled_attn.create_block_mask(
        lambda b, h, q_idx, kv_idx: docs[b, q_idx] == docs[b, kv_idx], 2, 3, 729, 729)
    for a, b in zip(compiled.as_tuple(), dense.as_tuple()):
        assert torch.equal(a, b)
    # S_q != S_k, and the lists of a CUDA graph's replay.
    prefix = torch.tensor([0, 300], dtype=torch.int32, device="cuda")
    short = tiled_attn.create_block_mask("prefix_lm", 2, None, 130, 700, mask_mod_args=(prefix,))
    expected = tiled_attn.create_block_mask(
        lambda b, h, q_idx, kv_idx: (kv_idx < prefix[b].view(-1, 1, 1, 1)) | (kv_idx <= q_idx),
        2, None, 130, 700)
    for a, b in zip(short.as_tuple(), expected.as_tuple()):
        assert torch.equal(a, b)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        graphed = tiled_attn.create_block_mask("document", 2, 3, 729, 729,
                                               mask_mod_args=(docs,))
    docs[1, :] = 0  # one document: every block of batch entry 1 is full
    graph.replay()
    whole = tiled_attn.create_block_mask(
        lambda b, h, q_idx, kv_idx: docs[b, q_idx] == docs[b, kv_idx], 2, 3, 729, 729)
    for a, b in zip(graphed.as_tuple(), whole.as_tuple()):
        assert torch.equal(a, b)
    with pytest.raises(NoKernelError, match="no block mask kernel of mask function 'alibi'"):
        tiled_attn.create_block_mask("alibi", 2, 3, 729, 729, mask_mod_args=(docs,))
    with pytest.raises(ValueError, match=r"document_ids\) must be a torch.int32"):
        tiled_attn.create_block_mask("document", 2, 3, 729, 729, mask_mod_args=(docs.float(),))
    with pytest.raises(ValueError, match="takes 1 captured input"):
        tiled_attn.create_block_mask("document", 2, 3, 729, 729)
    with pytest.raises(ValueError, match="needs Q_LEN and KV_LEN"):
        tiled_attn.create_block_mask("document", 2, 3, mask_mod_args=(docs,))
    with pytest.raises(ValueError, match="runs on a CUDA device"):
        tiled_attn.create_block_mask("document", 2, 3, 729, 729, mask_mod_args=(docs,),
                                     device="cpu")


def block_mask_args(block_mask, q, k):
    from tiled_attn.block_mask import block_mask_args as args
    return args(torch, block_mask, q, k)


@pytest.mark.parametrize("lse", [False, True])
def test_opcheck_sdpa_varlen(lse):
    # Without rows past the last sequence: those are left unwritten (an
    # empty output's), which the eager and traced runs need not agree on.
    q, k, v, cu_q, cu_k = packed_sequences([1, 77, 0, 130], [5, 77, 3, 130])
    q, k, v = q[:208].contiguous(), k[:215].contiguous(), v[:215].contiguous()
    op = torch.ops.tiled_attn.sdpa_varlen_lse if lse else torch.ops.tiled_attn.sdpa_varlen
    torch.library.opcheck(op.default, (q, k, v, cu_q, cu_k, 130, 130), {"causal": True},
                          test_utils=OPCHECK_TESTS)


def decode_qkv(b=1, hq=32, hkv=8, sk=8192, d=128, dtype=torch.bfloat16, seed=0):
    """A decode step: one query token per sequence, grouped KV heads."""
    g = torch.Generator(device="cuda").manual_seed(seed)
    return (torch.randn(b, hq, 1, d, dtype=dtype, device="cuda", generator=g),
            torch.randn(b, hkv, sk, d, dtype=dtype, device="cuda", generator=g),
            torch.randn(b, hkv, sk, d, dtype=dtype, device="cuda", generator=g))


def grouped_reference(q, k, v):
    group = q.shape[1] // k.shape[1]
    return reference(q, k.repeat_interleave(group, 1), v.repeat_interleave(group, 1), False)


def test_decode_step_in_a_cuda_graph():
    # Packed GQA and split-KV (where the library has split kernels): two
    # launches and a workspace from PyTorch's allocator, captured once.
    static = [t.clone() for t in decode_qkv()]
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        tiled_attn.sdpa(*static, enable_gqa=True)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = tiled_attn.sdpa(*static, enable_gqa=True)
    for seed in (1, 2):
        fresh = decode_qkv(seed=seed)
        for dst, src in zip(static, fresh):
            dst.copy_(src)
        graph.replay()
        torch.cuda.synchronize()
        assert rel_l2(out, grouped_reference(*fresh)) < 1e-2


def test_decode_step_compiles_without_graph_break():
    q, k, v = decode_qkv(b=2, sk=3000)

    def f(q, k, v):
        return tiled_attn.sdpa(q, k, v, enable_gqa=True, causal=True,
                               causal_align="bottom_right") * 2.0

    torch._dynamo.reset()
    compiled = torch.compile(f, fullgraph=True)
    assert rel_l2(compiled(q, k, v), 2.0 * grouped_reference(q, k, v)) < 1e-2
    explanation = torch._dynamo.explain(f)(q, k, v)
    assert explanation.graph_break_count == 0 and explanation.graph_count == 1


def kvcache_reference(q, k_cache, v_cache, lengths):
    """float64 attention of each sequence's queries to its first lengths[b]
    keys, bottom-right causal, [B, S_q, H, D]."""
    out = torch.zeros(q.shape, dtype=torch.float64, device=q.device)
    for b, length in enumerate(lengths):
        if length:
            qb = q[b:b + 1].transpose(1, 2).double()
            kb, vb = (t[b:b + 1, :length].transpose(1, 2) for t in (k_cache, v_cache))
            group = q.shape[2] // k_cache.shape[2]
            kb, vb = kb.double().repeat_interleave(group, 1), vb.double().repeat_interleave(group, 1)
            scores = qb @ kb.transpose(-1, -2) / math.sqrt(q.shape[-1])
            i = torch.arange(q.shape[1], device=q.device)[:, None]
            j = torch.arange(length, device=q.device)[None, :]
            scores = scores.masked_fill(j > i + length - q.shape[1], -math.inf)
            out[b] = (torch.softmax(scores, -1) @ vb)[0].transpose(0, 1)
    return out


def check_replayed_as_caches_fill(step, q, lengths, kc, vc, g):
    """A decode step, ``step(q, lengths)`` on a 3-entry batch, captured once in
    a CUDA graph and replayed as the caches fill (new queries and lengths
    each time), against the float64 reference on the contiguous caches kc,
    vc."""
    static_q, static_lengths = q.clone(), lengths.clone()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        captured = step(static_q, static_lengths)
    for i, fill in enumerate(([5, 2047, 64], [0, 300, 2048])):
        static_q.copy_(torch.randn(q.shape, dtype=q.dtype, device="cuda", generator=g))
        static_lengths.copy_(torch.tensor(fill, dtype=torch.int32))
        graph.replay()
        torch.cuda.synchronize()
        assert rel_l2(captured, kvcache_reference(static_q, kc, vc, fill)) < 1e-2, i


def test_kvcache_decode_in_a_cuda_graph_and_compiled():
    g = torch.Generator(device="cuda").manual_seed(3)
    b, hq, hkv, smax, d = 3, 16, 4, 2048, 128
    q = torch.randn(b, 1, hq, d, dtype=torch.bfloat16, device="cuda", generator=g)
    kc, vc = (torch.randn(b, smax, hkv, d, dtype=torch.bfloat16, device="cuda", generator=g)
              for _ in range(2))
    lengths = torch.tensor([smax, 1, 700], dtype=torch.int32, device="cuda")
    out = tiled_attn.sdpa_with_kvcache(q, kc, vc, lengths)
    assert out.shape == q.shape
    assert rel_l2(out, kvcache_reference(q, kc, vc, [smax, 1, 700])) < 1e-2
    check_replayed_as_caches_fill(
        lambda q, n: tiled_attn.sdpa_with_kvcache(q, kc, vc, n), q, lengths, kc, vc, g)
    torch._dynamo.reset()
    compiled = torch.compile(lambda q, k, v, n: tiled_attn.sdpa_with_kvcache(q, k, v, n) * 2.0,
                             fullgraph=True)
    assert rel_l2(compiled(q, kc, vc, lengths),
                  2.0 * kvcache_reference(q, kc, vc, [smax, 1, 700])) < 1e-2


def paged_caches(k_cache, v_cache, page, generator):
    """[B, S_max, H_kv, D] caches as pages of ``page`` keys in a random
    order, with two more no sequence uses (random values everywhere no key
    is): (k pages, v pages [num_pages, page, H_kv, D], block_table int32
    [B, max_pages])."""
    b, smax = k_cache.shape[:2]
    per = -(-smax // page)
    order = torch.randperm(b * per + 2, device=k_cache.device, generator=generator)
    out = []
    for cache in (k_cache, v_cache):
        pages = torch.randn(b * per + 2, page, *cache.shape[2:], dtype=cache.dtype,
                            device=cache.device, generator=generator)
        padded = torch.nn.functional.pad(cache, (0, 0, 0, 0, 0, per * page - smax))
        pages[order[:b * per]] = padded.reshape(b * per, page, *cache.shape[2:])
        out.append(pages)
    return out[0], out[1], order[:b * per].view(b, per).to(torch.int32)


@pytest.mark.parametrize("page", [16, 32, 64, 256])
def test_kvcache_paged_in_a_cuda_graph_and_compiled(page):
    # A paged cache (a block table into pages in a random order): the same
    # results as the contiguous cache's reference, lengths not a multiple of
    # the page; a decode step captured once and replayed as the caches fill;
    # torch.compile(fullgraph=True) and opcheck of the op with the table.
    g = torch.Generator(device="cuda").manual_seed(4)
    b, hq, hkv, smax, d = 3, 16, 4, 2048, 128
    q = torch.randn(b, 1, hq, d, dtype=torch.bfloat16, device="cuda", generator=g)
    kc, vc = (torch.randn(b, smax, hkv, d, dtype=torch.bfloat16, device="cuda", generator=g)
              for _ in range(2))
    kp, vp, table = paged_caches(kc, vc, page, g)
    fill = [smax, 1, 700]
    lengths = torch.tensor(fill, dtype=torch.int32, device="cuda")
    out = tiled_attn.sdpa_with_kvcache(q, kp, vp, lengths, block_table=table)
    assert rel_l2(out, kvcache_reference(q, kc, vc, fill)) < 1e-2
    # Split-KV over the pages (batch 1, the whole cache).
    one = tiled_attn.sdpa_with_kvcache(q[:1], kp, vp, lengths[:1], block_table=table[:1])
    assert rel_l2(one, kvcache_reference(q[:1], kc[:1], vc[:1], fill[:1])) < 1e-2
    check_replayed_as_caches_fill(
        lambda q, n: tiled_attn.sdpa_with_kvcache(q, kp, vp, n, block_table=table),
        q, lengths, kc, vc, g)
    torch._dynamo.reset()
    compiled = torch.compile(
        lambda q, k, v, n, t: tiled_attn.sdpa_with_kvcache(q, k, v, n, block_table=t) * 2.0,
        fullgraph=True)
    assert rel_l2(compiled(q, kp, vp, lengths, table),
                  2.0 * kvcache_reference(q, kc, vc, [smax, 1, 700])) < 1e-2
    torch.library.opcheck(torch.ops.tiled_attn.sdpa_with_kvcache.default,
                          (q, kp, vp, lengths, True, None, 0.0, 0, None),
                          {"block_table": table})


def test_kvcache_paged_bad_inputs():
    q = torch.randn(2, 1, 8, 128, dtype=torch.bfloat16, device="cuda")
    kp = torch.randn(10, 64, 2, 128, dtype=torch.bfloat16, device="cuda")
    table = torch.zeros(2, 4, dtype=torch.int32, device="cuda")
    with pytest.raises(ValueError, match=r"block_table must be an int32 tensor of shape \[2"):
        tiled_attn.sdpa_with_kvcache(q, kp, kp, 10, block_table=table.long())
    with pytest.raises(ValueError, match=r"block_table must be an int32 tensor of shape \[2"):
        tiled_attn.sdpa_with_kvcache(q, kp, kp, 10, block_table=table[:1])
    # A page size no paged kernel's block_n divides.
    odd = torch.randn(10, 24, 2, 128, dtype=torch.bfloat16, device="cuda")
    with pytest.raises(tiled_attn.NoKernelError, match="page_size=24"):
        tiled_attn.sdpa_with_kvcache(q, odd, odd, 10, block_table=table)
    with pytest.raises(ValueError, match="v has 9 pages but k has 10"):
        tiled_attn.sdpa_with_kvcache(q, kp, kp[:9], 10, block_table=table)


@pytest.mark.parametrize("page", [16, 64])
def test_varlen_paged_decode_step_runs_as_its_batch(page):
    # vLLM's decode step (one query per sequence) through
    # sdpa_varlen_with_kvcache: run as the batch it is (packed GQA, split-KV
    # for one long sequence), the same outputs and log-sum-exps as
    # sdpa_with_kvcache's, right against float64, soft-capped too (a varlen
    # kernel has no softcap), and captured in a CUDA graph (the split's
    # workspace from PyTorch's allocator) and replayed as the caches fill.
    g = torch.Generator(device="cuda").manual_seed(6)
    hq, hkv, smax, d = 16, 4, 2048, 128
    kc, vc = (torch.randn(3, smax, hkv, d, dtype=torch.bfloat16, device="cuda", generator=g)
              for _ in range(2))
    kp, vp, table = paged_caches(kc, vc, page, g)
    q = torch.randn(3, hq, d, dtype=torch.bfloat16, device="cuda", generator=g)
    cu = torch.arange(4, dtype=torch.int32, device="cuda")
    fill = [smax, 1, 700]
    used = torch.tensor(fill, dtype=torch.int32, device="cuda")
    o = tiled_attn.sdpa_varlen_with_kvcache(q, kp, vp, cu, 1, used, table)
    batch_o, batch_lse = tiled_attn.sdpa_with_kvcache(q.unsqueeze(1), kp, vp, used,
                                                      block_table=table, return_lse=True)
    assert torch.equal(o, batch_o.squeeze(1))
    assert rel_l2(o.unsqueeze(1), kvcache_reference(q.unsqueeze(1), kc, vc, fill)) < 1e-2
    # With the log-sum-exps ([H_q, total_q]: a group's heads are total_q
    # apart, so unpacked).
    o_lse, lse = tiled_attn.sdpa_varlen_with_kvcache(q, kp, vp, cu, 1, used, table,
                                                     return_lse=True)
    assert rel_l2(o_lse.unsqueeze(1), kvcache_reference(q.unsqueeze(1), kc, vc, fill)) < 1e-2
    assert torch.allclose(lse, batch_lse.reshape(3, hq).t(), atol=1e-4)
    one = tiled_attn.sdpa_varlen_with_kvcache(q[:1], kp, vp, cu[:2], 1, used[:1], table[:1])
    assert rel_l2(one.unsqueeze(1),
                  kvcache_reference(q[:1].unsqueeze(1), kc[:1], vc[:1], fill[:1])) < 1e-2
    capped = tiled_attn.sdpa_varlen_with_kvcache(q, kp, vp, cu, 1, used, table, softcap=5.0)
    assert torch.equal(capped, tiled_attn.sdpa_with_kvcache(
        q.unsqueeze(1), kp, vp, used, block_table=table, softcap=5.0).squeeze(1))
    check_replayed_as_caches_fill(
        lambda q, n: tiled_attn.sdpa_varlen_with_kvcache(q.squeeze(1), kp, vp, cu, 1, n,
                                                         table).unsqueeze(1),
        q.unsqueeze(1), used, kc, vc, g)


@pytest.mark.parametrize("page", [16, 64])
def test_varlen_paged_as_vllm_calls_it(page):
    # vLLM's call: packed query sequences of a mixed batch (a prefill chunk,
    # decodes, an empty sequence) against paged caches, through
    # flash_attn_varlen_func with seqused_k and block_table; against the
    # float64 reference of each sequence (bottom-right causal by its length).
    g = torch.Generator(device="cuda").manual_seed(5)
    hq, hkv, smax, d = 8, 2, 600, 128
    s_q = [7, 1, 1, 0, 3, 2]
    lens = [300, 1, 599, 0, 37, 0]
    b = len(s_q)
    kc, vc = (torch.randn(b, smax, hkv, d, dtype=torch.bfloat16, device="cuda", generator=g)
              for _ in range(2))
    kp, vp, table = paged_caches(kc, vc, page, g)
    q = torch.randn(sum(s_q), hq, d, dtype=torch.bfloat16, device="cuda", generator=g)
    cu = torch.tensor([0] + list(itertools.accumulate(s_q)), dtype=torch.int32, device="cuda")
    used = torch.tensor(lens, dtype=torch.int32, device="cuda")
    out = tiled_attn.flash_attn_varlen_func(q, kp, vp, cu, None, max(s_q), None, causal=True,
                                            seqused_k=used, block_table=table)
    o, lse = tiled_attn.sdpa_varlen_with_kvcache(q, kp, vp, cu, max(s_q), used, table,
                                                 return_lse=True)
    assert torch.equal(out, o)
    assert lse.shape == (hq, sum(s_q))
    for i in range(b):
        rows = slice(int(cu[i]), int(cu[i + 1]))
        if s_q[i] == 0:
            continue
        ref = kvcache_reference(q[rows].unsqueeze(0), kc[i:i + 1], vc[i:i + 1], [lens[i]])
        if lens[i] == 0:
            assert o[rows].abs().max().item() == 0.0
            continue
        assert rel_l2(o[rows].unsqueeze(0), ref) < 1e-2, i
    # The op: torch.compile(fullgraph=True), opcheck.
    torch._dynamo.reset()
    compiled = torch.compile(
        lambda q, k, v, cu, n, t: tiled_attn.sdpa_varlen_with_kvcache(q, k, v, cu, 7, n, t),
        fullgraph=True)
    assert torch.equal(compiled(q, kp, vp, cu, used, table), o)
    torch.library.opcheck(torch.ops.tiled_attn.sdpa_varlen_with_kvcache_lse.default,
                          (q, kp, vp, cu, max(s_q), used, table, True, None, 0.0, None))

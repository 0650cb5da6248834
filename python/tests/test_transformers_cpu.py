"""The transformers integration's handling of masks, sliding windows and
softcaps, on the CPU.

``tiled_attn.sdpa`` is replaced by a float64 reference of its contract
(``causal``, ``causal_align``, ``window_size``, ``softcap``, ``enable_gqa``,
``out``), so that what the integration asks of it (the keys it passes, the
alignment, the window, the softcap) is checked against transformers' eager
attention on small random models, with no GPU and no kernel library. Needs torch and
transformers (skipped otherwise); test_transformers_gpu.py runs the real
kernels.
"""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from packaging.version import Version  # noqa: E402  (after the skips)
from transformers import (AutoModelForCausalLM, Gemma2Config, MistralConfig,  # noqa: E402
                          Qwen2Config)

import tiled_attn  # noqa: E402
import tiled_attn.integrations.transformers as ta_tf  # noqa: E402

if Version(transformers.__version__) < Version("4.53"):  # pragma: no cover
    pytest.skip("the sliding-window layers pass their window from transformers 4.53 on",
                allow_module_level=True)

DTYPE_KEYWORD = "dtype" if Version(transformers.__version__) >= Version("4.56") else "torch_dtype"


def reference_sdpa(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                   enable_gqa=False, *, causal=None, causal_align="top_left",
                   window_size=(-1, -1), softcap=0.0, library=None, kernel=None, out=None):
    """tiled_attn.sdpa's contract (PyTorch's argument order) in float64:
    query i sees key j iff i + shift - left <= j <= i + shift + right (each
    side unless -1), if causal j <= i + shift, and where a bool attn_mask is
    True (a float one is added to the scores); a row that sees nothing
    gives 0. With softcap > 0 the scores s = scale * q.k become
    softcap * tanh(s / softcap) first."""
    causal = is_causal if causal is None else causal
    CALLS.append(dict(q=tuple(q.shape), k=tuple(k.shape), causal=causal, align=causal_align,
                      window=tuple(window_size), softcap=softcap, mask=attn_mask is not None))
    heads, kv_heads = q.shape[1], k.shape[1]
    if kv_heads != heads:
        assert enable_gqa
        k, v = (t.repeat_interleave(heads // kv_heads, 1) for t in (k, v))
    s_q, s_k = q.shape[2], k.shape[2]
    scale = 1 / math.sqrt(q.shape[3]) if scale is None else scale
    shift = s_k - s_q if causal_align == "bottom_right" else 0
    i, j = torch.arange(s_q).view(s_q, 1), torch.arange(s_k).view(1, s_k)
    left, right = window_size
    keep = torch.ones(s_q, s_k, dtype=torch.bool)
    if left >= 0:
        keep &= j >= i + shift - left
    if right >= 0:
        keep &= j <= i + shift + right
    if causal:
        keep &= j <= i + shift
    scores = q.double() @ k.double().transpose(-1, -2) * scale
    if softcap > 0:
        scores = softcap * torch.tanh(scores / softcap)
    if attn_mask is not None and attn_mask.dtype == torch.bool:
        keep = keep & attn_mask
    elif attn_mask is not None:
        scores = scores + attn_mask.double()
    scores = scores.masked_fill(~keep, -math.inf)
    result = (torch.softmax(scores, -1).nan_to_num(0.0) @ v.double()).to(q.dtype)
    return result if out is None else out.copy_(result)


CALLS: list = []


@pytest.fixture(autouse=True)
def reference(monkeypatch):
    monkeypatch.setattr(tiled_attn, "sdpa", reference_sdpa)
    ta_tf.register()
    CALLS.clear()


def model(config_class, qk_gain=1.0, **fields):
    """A small random model; ``qk_gain`` scales the query and key projections
    (for scores large enough that a softcap changes them)."""
    torch.manual_seed(0)
    config = config_class(vocab_size=100, hidden_size=64, intermediate_size=128,
                          num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                          head_dim=16, max_position_embeddings=256, **fields)
    m = AutoModelForCausalLM.from_config(
        config, attn_implementation="eager", **{DTYPE_KEYWORD: torch.float32}).eval()
    if qk_gain != 1.0:
        with torch.no_grad():
            for layer in m.model.layers:
                layer.self_attn.q_proj.weight.mul_(qk_gain)
                layer.self_attn.k_proj.weight.mul_(qk_gain)
    return m


def logits(m, implementation, ids, **kwargs):
    ta_tf.set_attn_implementation(m, implementation)
    with torch.no_grad():
        return m(ids, **kwargs)


MODELS = {
    "mistral": lambda: model(MistralConfig, sliding_window=8),
    # Layer 0 full attention, layer 1 a sliding window.
    "qwen2": lambda: model(Qwen2Config, sliding_window=8, use_sliding_window=True,
                           max_window_layers=1),
}


@pytest.mark.parametrize("name", sorted(MODELS))
def test_prefill_passes_the_window(name) -> None:
    m = MODELS[name]()
    ids = torch.randint(3, 100, (2, 40), generator=torch.Generator().manual_seed(1))
    ours = logits(m, "tiled_attn", ids).logits
    assert torch.allclose(ours, logits(m, "eager", ids).logits, atol=1e-5)
    windows = {call["window"] for call in CALLS}
    assert (7, 7) in windows  # transformers' sliding_window 8: window_size (7, 7)
    assert all(call["causal"] and call["align"] == "top_left" for call in CALLS)
    assert all(call["softcap"] == 0.0 for call in CALLS)  # none passed


@pytest.mark.parametrize("name", sorted(MODELS))
def test_a_chunk_after_the_cache_is_bottom_right(name) -> None:
    m = MODELS[name]()
    ids = torch.randint(3, 100, (2, 40), generator=torch.Generator().manual_seed(2))

    def two_chunks(implementation):
        first = logits(m, implementation, ids[:, :24], use_cache=True)
        return logits(m, implementation, ids[:, 24:], past_key_values=first.past_key_values,
                      use_cache=True).logits

    ref = two_chunks("eager")
    CALLS.clear()
    assert torch.allclose(two_chunks("tiled_attn"), ref, atol=1e-5)
    chunk = [call for call in CALLS if call["q"][2] == 16]
    assert chunk and all(call["align"] == "bottom_right" for call in chunk)
    assert any(call["window"] == (7, 7) for call in chunk)


@pytest.mark.parametrize("cache", [None, "static"])
def test_decode_steps_pass_the_last_window_of_keys(cache) -> None:
    m = MODELS["mistral"]()
    prompt = torch.randint(3, 100, (2, 20), generator=torch.Generator().manual_seed(3))
    kwargs = dict(max_new_tokens=12, do_sample=False, pad_token_id=0)
    if cache:
        kwargs["cache_implementation"] = cache
    ta_tf.set_attn_implementation(m, "eager")
    with torch.no_grad():
        ref = m.generate(prompt, **kwargs)
    ta_tf.set_attn_implementation(m, "tiled_attn")
    CALLS.clear()
    with torch.no_grad():
        ours = m.generate(prompt, **kwargs)
    assert torch.equal(ours, ref)
    # One query: the 8 keys of its window, no window left to apply.
    step = CALLS[-1]
    assert step["k"][2] == 8 and step["window"] == (-1, -1) and not step["causal"]


def test_a_window_mask_without_sliding_window_runs_as_a_mask() -> None:
    m = MODELS["mistral"]()
    s = 12
    i, j = torch.arange(s).view(s, 1), torch.arange(s).view(1, s)
    band = ((j <= i) & (j > i - 4)).view(1, 1, s, s)
    q = torch.randn(1, 4, s, 16)
    kv = torch.randn(1, 4, s, 16)
    layer = m.model.layers[0].self_attn
    ta_tf.set_attn_implementation(m, "tiled_attn")
    # Not passed as sliding_window: the band is no causal mask, so it runs as
    # attn_mask (the library's mask kernels), and causal too, as no query
    # sees a later key.
    out, _ = ta_tf.tiled_attn_attention_forward(layer, q, kv, kv, band)
    assert CALLS[-1]["mask"] and CALLS[-1]["causal"] and CALLS[-1]["window"] == (-1, -1)
    expected = reference_sdpa(q, kv, kv, window_size=(3, 0)).transpose(1, 2)
    assert torch.allclose(out, expected, atol=1e-5)
    # With it, the mask is read as that window.
    out, _ = ta_tf.tiled_attn_attention_forward(layer, q, kv, kv, band, sliding_window=4)
    assert CALLS[-1]["window"] == (3, 3) and CALLS[-1]["causal"]
    # Another window size does not match the mask.
    with pytest.raises(NotImplementedError, match="a causal mask with a sliding window of 5"):
        ta_tf.tiled_attn_attention_forward(layer, q, kv, kv, band, sliding_window=5)


def test_a_padded_causal_mask_runs_causal_with_the_mask() -> None:
    # A causal mask with left padding: no query sees a later key, so the
    # mask runs with the causal flag too (the kernels skip the blocks above
    # the diagonal); one later key seen, and it runs as the mask alone.
    m = MODELS["mistral"]()
    s = 10
    keep = torch.ones(2, 1, s, s, dtype=torch.bool).tril()
    keep[1, :, :, :3] = False  # row 1 padded by 3 on the left
    q = torch.randn(2, 4, s, 16)
    kv = torch.randn(2, 4, s, 16)
    layer = m.model.layers[0].self_attn
    ta_tf.set_attn_implementation(m, "tiled_attn")
    out, _ = ta_tf.tiled_attn_attention_forward(layer, q, kv, kv, keep)
    assert CALLS[-1]["mask"] and CALLS[-1]["causal"]
    expected = reference_sdpa(q, kv, kv, keep).transpose(1, 2)
    assert torch.allclose(out, expected, atol=1e-5)
    # The next layer's call with the same mask reads it no more (the
    # refusal is kept for the mask object while its version is unchanged).
    ta_tf.tiled_attn_attention_forward(layer, q, kv, kv, keep)
    assert CALLS[-1]["mask"] and CALLS[-1]["causal"]
    keep[0, :, 2, 5] = True  # a new version: read again
    ta_tf.tiled_attn_attention_forward(layer, q, kv, kv, keep)
    assert CALLS[-1]["mask"] and not CALLS[-1]["causal"]
    # A float mask: its values other than 0 and the minimum are added to
    # scores the query sees, so one above the diagonal is a later key seen.
    additive = torch.zeros(2, 1, s, s).masked_fill(~keep, torch.finfo(torch.float32).min)
    additive[0, :, 2, 5] = torch.finfo(torch.float32).min
    additive[1, :, 6, 8] = -1.5
    out, _ = ta_tf.tiled_attn_attention_forward(layer, q, kv, kv, additive)
    assert CALLS[-1]["mask"] and not CALLS[-1]["causal"]
    assert torch.allclose(out, reference_sdpa(q, kv, kv, additive).transpose(1, 2), atol=1e-5)


@pytest.mark.parametrize("window", [0, -3, 2.5, True])
def test_a_bad_sliding_window(window) -> None:
    m = MODELS["mistral"]()
    q = torch.randn(1, 4, 3, 16)
    ta_tf.set_attn_implementation(m, "tiled_attn")
    with pytest.raises(NotImplementedError, match=r"sliding_window=.* is not supported"):
        ta_tf.tiled_attn_attention_forward(m.model.layers[0].self_attn, q, q, q, None,
                                           sliding_window=window)


def test_gradients_flow_through_the_attention_function() -> None:
    """Training: with grad mode on, the attention function calls tiled_attn.sdpa
    without its inference ``out`` buffer (autograd has none) and hands back the
    differentiable output, transposed to transformers' layout, so every
    parameter's gradient (here through the float64 stand-in for tiled_attn.sdpa)
    is the eager path's; under torch.no_grad() the ``out`` path runs. Grouped
    KV heads, the sliding window and the causal mask all train."""
    m = MODELS["mistral"]()
    m.train()
    ids = torch.randint(3, 100, (2, 12), generator=torch.Generator().manual_seed(6))

    def step(implementation):
        ta_tf.set_attn_implementation(m, implementation)
        m.zero_grad(set_to_none=True)
        loss = m(ids, labels=ids).loss
        loss.backward()
        return loss.item(), {n: p.grad.clone() for n, p in m.named_parameters()}

    loss_eager, grads_eager = step("eager")
    CALLS.clear()
    loss_ta, grads_ta = step("tiled_attn")
    assert CALLS and all(c["window"] == (7, 7) for c in CALLS)
    assert loss_ta == pytest.approx(loss_eager, rel=1e-5)
    for name, grad in grads_eager.items():
        assert grads_ta[name] is not None, name
        torch.testing.assert_close(grads_ta[name], grad, rtol=1e-4, atol=1e-6, msg=name)
    # The attention layer's own projections got a gradient through attention.
    assert grads_ta["model.layers.0.self_attn.k_proj.weight"].abs().sum() > 0
    # One input requiring grad is enough; the output is transformers' layout.
    layer = m.model.layers[0].self_attn
    q, kv = torch.randn(1, 4, 6, 16), torch.randn(1, 2, 6, 16)
    v = kv.clone().requires_grad_()
    out, _ = ta_tf.tiled_attn_attention_forward(layer, q, kv, v, None)
    assert out.shape == (1, 6, 4, 16) and out.requires_grad
    out.sum().backward()
    assert v.grad is not None and v.grad.abs().sum() > 0
    with torch.no_grad():
        out, _ = ta_tf.tiled_attn_attention_forward(layer, q, kv, v, None)
    assert out.shape == (1, 6, 4, 16) and out.is_contiguous()


# ---------------------------------------------------------------- softcap (Gemma 2)
#
# Gemma 2 passes softcap=config.attn_logit_softcapping to the attention
# function; its eager attention computes softcap * tanh(scaling * q.k /
# softcap) before the mask, FlashAttention's softcap, which the integration
# passes on as sdpa's. Layer 0 has a sliding window of 8, layer 1 none.

SOFTCAP = 5.0


def gemma2(softcap=SOFTCAP):
    # Scores of a few units (q and k projections scaled up), so that a cap of 5 matters.
    return model(Gemma2Config, qk_gain=20.0, sliding_window=8, query_pre_attn_scalar=16,
                 attn_logit_softcapping=softcap)


def test_gemma2_prefill_passes_the_softcap() -> None:
    m = gemma2()
    ids = torch.randint(3, 100, (2, 40), generator=torch.Generator().manual_seed(4))
    ref = logits(m, "eager", ids).logits
    # The softcap changes the result: a stand-in that ignored it would fail.
    assert (ref - logits(gemma2(None), "eager", ids).logits).abs().max() > 0.1
    CALLS.clear()
    assert torch.allclose(logits(m, "tiled_attn", ids).logits, ref, atol=1e-5)
    assert {call["softcap"] for call in CALLS} == {SOFTCAP}
    assert {call["window"] for call in CALLS} == {(7, 7), (-1, -1)}


def test_gemma2_chunk_and_decode_steps_pass_the_softcap() -> None:
    m = gemma2()
    ids = torch.randint(3, 100, (2, 40), generator=torch.Generator().manual_seed(5))

    def two_chunks(implementation):
        first = logits(m, implementation, ids[:, :24], use_cache=True)
        return logits(m, implementation, ids[:, 24:], past_key_values=first.past_key_values,
                      use_cache=True).logits

    ref = two_chunks("eager")
    CALLS.clear()
    assert torch.allclose(two_chunks("tiled_attn"), ref, atol=1e-5)
    assert any(call["align"] == "bottom_right" for call in CALLS)
    prompt = ids[:, :20]
    kwargs = dict(max_new_tokens=12, do_sample=False, pad_token_id=0)
    ta_tf.set_attn_implementation(m, "eager")
    with torch.no_grad():
        expected = m.generate(prompt, **kwargs)
    ta_tf.set_attn_implementation(m, "tiled_attn")
    CALLS.clear()
    with torch.no_grad():
        assert torch.equal(m.generate(prompt, **kwargs), expected)
    steps = [call for call in CALLS if call["q"][2] == 2]  # one query, its group's heads as rows
    assert steps and all(call["softcap"] == SOFTCAP for call in CALLS)


def test_a_softcap_needs_an_sdpa_that_takes_it(monkeypatch) -> None:
    def sdpa_without_softcap(q, k, v, causal=False, scale=None, *, enable_gqa=False,
                             causal_align="top_left", window_size=(-1, -1), out=None):
        return reference_sdpa(q, k, v, is_causal=causal, scale=scale, enable_gqa=enable_gqa,
                              causal_align=causal_align, window_size=window_size, out=out)

    monkeypatch.setattr(tiled_attn, "sdpa", sdpa_without_softcap)
    m = gemma2()
    layer = m.model.layers[1].self_attn
    q = torch.randn(1, 4, 6, 16)
    kv = torch.randn(1, 2, 6, 16)
    ta_tf.set_attn_implementation(m, "tiled_attn")
    with pytest.raises(NotImplementedError, match=r"soft-caps its attention scores "
                                                  r"\(softcap=5.0\), and this tiled_attn.sdpa "
                                                  r"has no softcap keyword"):
        ta_tf.tiled_attn_attention_forward(layer, q, kv, kv, None, softcap=SOFTCAP)
    # None or 0 is no softcap: nothing to pass.
    for off in (None, 0.0):
        ta_tf.tiled_attn_attention_forward(layer, q, kv, kv, None, softcap=off)

"""tiled_attn as a transformers attention implementation, against transformers' SDPA path.

A small Llama (4 layers, hidden 1024, 16 heads over 4 KV heads, head dim 64
or 128, vocabulary 1000) with random weights from a fixed seed, built from a
config (nothing is downloaded), in fp16 and bf16. The same model runs with
``attn_implementation="sdpa"`` and ``"tiled_attn"`` (switched in place, so
the weights are the same). Needs torch, transformers, a CUDA GPU and the
kernel library (``$TILED_ATTN_KERNELS`` or ``build/kernels``); skipped
otherwise::

    cd python && python -m pytest -q -m gpu tests/test_transformers_gpu.py

Next-token choices are compared where SDPA's choice is decisive: in bf16
1-3% of the positions of a random model have an exact tie between the two
best logits (logits are rounded to 8 bits of mantissa), and there two correct
implementations may pick either token. Wherever the choices differ, the one
tiled_attn made must be a near-tie under SDPA's own logits.
"""

from __future__ import annotations

import inspect
import statistics

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from packaging.version import Version  # noqa: E402  (after the skips)
from transformers import AutoModelForCausalLM, LlamaConfig  # noqa: E402

import tiled_attn  # noqa: E402
import tiled_attn.integrations.transformers as ta_tf  # noqa: E402
from tiled_attn import TiledAttnError  # noqa: E402
from tiled_attn import default_library  # noqa: E402

pytestmark = pytest.mark.gpu

SEED = 1234
DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16}
#: transformers renamed from_config's ``torch_dtype`` to ``dtype`` in 4.56.
DTYPE_KEYWORD = "dtype" if Version(transformers.__version__) >= Version("4.56") else "torch_dtype"
MAX_REL_L2 = 2e-2
MIN_AGREEMENT = 0.99
#: The end-to-end forward may be at most this much slower than SDPA's.
MAX_SLOWDOWN = 2.0


@pytest.fixture(scope="module")
def cuda():
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    try:
        default_library()
    except TiledAttnError as exc:
        pytest.skip(f"no kernel library: {exc}")
    return torch.device("cuda")


_MODELS: dict = {}


def llama(head_dim: int, dtype_name: str):
    """The test model for (head dim, dtype), built once, in eval mode, on the GPU."""
    key = (head_dim, dtype_name)
    if key not in _MODELS:
        ta_tf.register()
        config = LlamaConfig(
            vocab_size=1000, hidden_size=1024, intermediate_size=2816, num_hidden_layers=4,
            num_attention_heads=16, num_key_value_heads=4, head_dim=head_dim,
            max_position_embeddings=4096, pad_token_id=0, bos_token_id=1, eos_token_id=2)
        torch.manual_seed(SEED)
        with torch.device("cuda"):
            model = AutoModelForCausalLM.from_config(
                config, attn_implementation="sdpa", **{DTYPE_KEYWORD: DTYPES[dtype_name]})
        _MODELS[key] = model.eval()
    return _MODELS[key]


def token_ids(batch: int, seq: int, seed: int = 0) -> "torch.Tensor":
    """Random token ids in [1, 1000): never the padding id 0."""
    gen = torch.Generator(device="cuda").manual_seed(seed)
    return torch.randint(1, 1000, (batch, seq), device="cuda", generator=gen)


@torch.no_grad()
def run(model, implementation: str, ids, **kwargs):
    ta_tf.set_attn_implementation(model, implementation)
    return model(ids, **kwargs)


def tie_tolerance(logits) -> float:
    """One rounding step of the logits' dtype at their largest magnitude."""
    return torch.finfo(logits.dtype).eps * logits.abs().max().item()


def rel_l2(out, ref) -> float:
    return ((out.double() - ref.double()).norm() / ref.double().norm()).item()


# ---------------------------------------------------------------- registration


def test_register_is_idempotent_and_rejects_reserved_names():
    assert ta_tf.register() == ta_tf.register() == "tiled_attn"
    from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS

    assert ALL_ATTENTION_FUNCTIONS["tiled_attn"] is ta_tf.tiled_attn_attention_forward
    for name in ("sdpa", "eager", "my_flash", "flex_x", "paged|x", "org/kernel"):
        with pytest.raises(ValueError):
            ta_tf.register(name)


# ---------------------------------------------------------------- logits


@pytest.mark.parametrize("seq", [256, 300])
@pytest.mark.parametrize("dtype_name", list(DTYPES))
@pytest.mark.parametrize("head_dim", [64, 128])
def test_logits_match_sdpa(cuda, head_dim, dtype_name, seq):
    model = llama(head_dim, dtype_name)
    ids = token_ids(2, seq)
    ref = run(model, "sdpa", ids).logits
    out = run(model, "tiled_attn", ids).logits
    assert out.shape == ref.shape and torch.isfinite(out).all()
    err = rel_l2(out, ref)
    assert err < MAX_REL_L2, f"relative L2 of the logits vs SDPA: {err:.3e}"

    tol = tie_tolerance(ref)
    best2 = ref.float().topk(2, dim=-1).values
    decisive = (best2[..., 0] - best2[..., 1]) > tol
    same = out.argmax(-1) == ref.argmax(-1)
    agreement = same[decisive].float().mean().item()
    print(f"D={head_dim} {dtype_name} S={seq}: rel L2 {err:.2e}, argmax agreement "
          f"{same.float().mean().item():.4f} (all), {agreement:.4f} (the {decisive.sum().item()} "
          f"of {decisive.numel()} positions with a margin > {tol:.4f})")
    assert agreement >= MIN_AGREEMENT
    # Where the choices differ, tiled_attn's is within a near-tie of SDPA's best.
    chosen = ref.float().gather(-1, out.argmax(-1, keepdim=True)).squeeze(-1)
    assert (best2[..., 0] - chosen).max().item() <= 2 * tol


# ---------------------------------------------------------------- masks


def test_padded_batch_without_bias_kernels_is_refused(cuda):
    if any(k.head_dim == 64 and k.mask_function == "mask" for k in default_library().kernels):
        pytest.skip("the library has D = 64 mask kernels (test_padded_batch_matches_sdpa "
                    "runs padded batches on them)")
    model = llama(64, "bf16")
    ids = token_ids(2, 64)
    mask = torch.ones_like(ids)
    mask[1, :8] = 0  # left padding in row 1
    with pytest.raises(NotImplementedError,
                       match=r"without padding.*attention_mask of shape \(2, 1, 64.*mask or bias kernels"):
        run(model, "tiled_attn", ids, attention_mask=mask)


@pytest.mark.parametrize("dtype_name", list(DTYPES))
def test_padded_batch_matches_sdpa(cuda, dtype_name):
    # Left padding: the mask kernels (sm_90a, D = 128) take the mask.
    if torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("the mask kernels are sm_90a's")
    model = llama(128, dtype_name)
    ids = token_ids(2, 96)
    mask = torch.ones_like(ids)
    mask[1, :13] = 0
    ref = run(model, "sdpa", ids, attention_mask=mask).logits
    out = run(model, "tiled_attn", ids, attention_mask=mask).logits
    # The padded positions' logits are anything: compare the real tokens.
    real = mask.bool()
    assert rel_l2(out[real], ref[real]) < MAX_REL_L2
    prompt = token_ids(2, 40, seed=3)
    pmask = torch.ones_like(prompt)
    pmask[0, :7] = 0
    prompt = prompt.masked_fill(pmask == 0, 0)
    kwargs = dict(attention_mask=pmask, max_new_tokens=6, do_sample=False, pad_token_id=0)
    with torch.no_grad():
        ta_tf.set_attn_implementation(model, "sdpa")
        ref_ids = model.generate(prompt, **kwargs)
        ta_tf.set_attn_implementation(model, "tiled_attn")
        out_ids = model.generate(prompt, **kwargs)
    assert out_ids.shape == ref_ids.shape
    # Greedy decoding may part at a near-tie; the first new token agrees.
    assert torch.equal(out_ids[:, 40], ref_ids[:, 40])


def test_padded_causal_prompt_runs_causal(cuda, monkeypatch):
    # A causal mask with left padding lets no query see a later key: the
    # integration passes is_causal=True with the mask (the mask kernels
    # skip the key blocks above the diagonal); a mask with a later key seen
    # (here: bidirectional rows) does not.
    if torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("the mask kernels are sm_90a's")
    calls = []
    real = tiled_attn.sdpa

    def recording(*args, **kwargs):
        calls.append(kwargs.get("is_causal", False))
        return real(*args, **kwargs)

    monkeypatch.setattr(tiled_attn, "sdpa", recording)
    model = llama(128, "bf16")
    ids = token_ids(2, 96)
    mask = torch.ones_like(ids)
    mask[1, :13] = 0
    ref = run(model, "sdpa", ids, attention_mask=mask).logits
    calls.clear()
    out = run(model, "tiled_attn", ids, attention_mask=mask).logits
    assert calls and all(calls), calls
    real_tokens = mask.bool()
    assert rel_l2(out[real_tokens], ref[real_tokens]) < MAX_REL_L2
    layer = model.model.layers[0].self_attn
    q = torch.randn(2, 16, 64, 128, dtype=torch.bfloat16, device="cuda")
    kv = torch.randn(2, 4, 64, 128, dtype=torch.bfloat16, device="cuda")
    keep = torch.ones(2, 1, 64, 64, dtype=torch.bool, device="cuda").tril()
    keep[0, :, 10, 20] = True  # query 10 sees key 20
    calls.clear()
    ta_tf.tiled_attn_attention_forward(layer, q, kv, kv, keep)
    assert calls == [False]


def test_all_ones_attention_mask_is_causal(cuda):
    model = llama(64, "fp16")
    ids = token_ids(2, 128)
    ref = run(model, "sdpa", ids).logits
    out = run(model, "tiled_attn", ids, attention_mask=torch.ones_like(ids)).logits
    assert rel_l2(out, ref) < MAX_REL_L2


@pytest.mark.parametrize("dtype", [torch.bool, torch.bfloat16])
def test_mask_reader(cuda, dtype):
    def causal(s_q, s_k, offset, batch=2):
        keep = torch.arange(s_k, device="cuda") <= torch.arange(s_q, device="cuda")[:, None] + offset
        keep = keep.expand(batch, 1, s_q, s_k)
        if dtype == torch.bool:
            return keep
        return torch.where(keep, 0.0, torch.finfo(dtype).min).to(dtype)

    assert ta_tf._causal_offset(causal(70, 70, 0), 70, 70) == 0
    assert ta_tf._causal_offset(causal(5, 90, 85), 5, 90) == 85
    assert ta_tf._causal_offset(causal(1, 90, 89), 1, 90) == 89
    assert ta_tf._causal_offset(causal(8, 91, 0), 8, 90) == 0  # longer than the keys
    padded = causal(8, 8, 0).clone(memory_format=torch.contiguous_format)
    padded[1, :, :, :2] = padded[0, 0, 0, 1]  # row 1: the first two keys masked
    with pytest.raises(NotImplementedError, match="without padding"):
        ta_tf._causal_offset(padded, 8, 8)


# ---------------------------------------------------------------- KV cache


@pytest.mark.parametrize("dtype_name", list(DTYPES))
def test_generate_matches_sdpa(cuda, dtype_name):
    model = llama(128, dtype_name)
    prompt = token_ids(2, 48, seed=1)
    kwargs = dict(attention_mask=torch.ones_like(prompt), max_new_tokens=8, do_sample=False,
                  pad_token_id=0)
    with torch.no_grad():
        ta_tf.set_attn_implementation(model, "sdpa")
        ref = model.generate(prompt, **kwargs)
        ta_tf.set_attn_implementation(model, "tiled_attn")
        out = model.generate(prompt, **kwargs)
    assert out.shape == ref.shape
    for row in range(out.shape[0]):
        differ = (out[row] != ref[row]).nonzero()
        if differ.numel() == 0:
            continue
        at = differ[0].item()  # the first token chosen differently: must be a near-tie
        logits = run(model, "sdpa", out[row:row + 1, :at]).logits[0, -1].float()
        gap = (logits.max() - logits[out[row, at]]).item()
        assert gap <= 2 * tie_tolerance(logits), (
            f"row {row}: token {at} differs ({out[row, at].item()} vs SDPA's "
            f"{ref[row, at].item()}) and SDPA's logits put it {gap:.4f} below the best")


def test_chunk_after_kv_cache(cuda):
    """A chunk of 32 queries after 64 cached keys needs bottom-right causal."""
    model = llama(64, "bf16")
    ids = token_ids(2, 96, seed=2)

    def two_chunks(implementation):
        first = run(model, implementation, ids[:, :64], use_cache=True)
        return run(model, implementation, ids[:, 64:], past_key_values=first.past_key_values,
                   use_cache=True).logits

    ref = two_chunks("sdpa")
    if "causal_align" not in inspect.signature(tiled_attn.sdpa).parameters:
        with pytest.raises(NotImplementedError, match="bottom-right"):
            two_chunks("tiled_attn")
    elif not any(k.mask in ("bottom_right", "window") and k.dtype == "bf16" and k.head_dim == 64
                 and not k.softcap for k in default_library().kernels):
        # A library without the kernels says which would do.
        with pytest.raises(TiledAttnError, match="causal=bottom_right or causal=window"):
            two_chunks("tiled_attn")
    else:
        assert rel_l2(two_chunks("tiled_attn"), ref) < MAX_REL_L2


def test_sliding_window_model(cuda):
    """A Mistral-like model with a 128-token sliding window: prefill, a chunk
    after the cache and decode steps, against SDPA (needs window kernels)."""
    from transformers import MistralConfig

    if not any(k.mask == "window" and k.dtype == "bf16" and k.head_dim == 64 and not k.softcap
               for k in default_library().kernels):
        pytest.skip("the library has no bf16 D=64 window kernel")
    ta_tf.register()
    config = MistralConfig(
        vocab_size=1000, hidden_size=1024, intermediate_size=2816, num_hidden_layers=4,
        num_attention_heads=16, num_key_value_heads=4, head_dim=64,
        max_position_embeddings=4096, sliding_window=128, pad_token_id=0, bos_token_id=1,
        eos_token_id=2)
    torch.manual_seed(SEED)
    with torch.device("cuda"):
        model = AutoModelForCausalLM.from_config(
            config, attn_implementation="sdpa", **{DTYPE_KEYWORD: torch.bfloat16}).eval()
    ids = token_ids(2, 400, seed=5)
    assert rel_l2(run(model, "tiled_attn", ids).logits, run(model, "sdpa", ids).logits) < MAX_REL_L2

    def two_chunks(implementation):
        first = run(model, implementation, ids[:, :300], use_cache=True)
        return run(model, implementation, ids[:, 300:], past_key_values=first.past_key_values,
                   use_cache=True).logits

    assert rel_l2(two_chunks("tiled_attn"), two_chunks("sdpa")) < MAX_REL_L2
    prompt = ids[:, :200]
    with torch.no_grad():
        ta_tf.set_attn_implementation(model, "sdpa")
        ref = model.generate(prompt, max_new_tokens=16, do_sample=False)
        ta_tf.set_attn_implementation(model, "tiled_attn")
        out = model.generate(prompt, max_new_tokens=16, do_sample=False)
    assert out.shape == ref.shape
    # Decisive choices agree; near-ties may go either way (see the module docstring).
    assert (out == ref).float().mean().item() >= 0.9


# ---------------------------------------------------------------- time


def test_forward_time(cuda):
    """End-to-end forward of B=4, S=1024, D=128, bf16: report both, bound the ratio."""
    model = llama(128, "bf16")
    ids = token_ids(4, 1024, seed=3)
    times = {"sdpa": [], "tiled_attn": []}
    with torch.no_grad():
        for name in times:
            ta_tf.set_attn_implementation(model, name)
            for _ in range(3):
                model(ids)
        for _ in range(5):  # interleaved rounds, each the median of 10 timed runs
            for name, rounds in times.items():
                ta_tf.set_attn_implementation(model, name)
                rounds.append(_median_ms(lambda: model(ids), 10))
    sdpa_ms, ours_ms = (statistics.median(times[n]) for n in ("sdpa", "tiled_attn"))
    print(f"forward B=4 S=1024 D=128 bf16: sdpa {sdpa_ms:.3f} ms, tiled_attn {ours_ms:.3f} ms "
          f"({sdpa_ms / ours_ms:.2f}x)")
    assert ours_ms <= MAX_SLOWDOWN * sdpa_ms


def _median_ms(fn, iters: int) -> float:
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
    torch.cuda.synchronize()
    for start, end in zip(starts, ends):
        start.record()
        fn()
        end.record()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in zip(starts, ends))


@pytest.mark.parametrize("head_dim", [64, 128])
def test_teacher_forced_decode_steps_match_sdpa(cuda, head_dim):
    """Every decode step of a teacher-forced continuation (a 2000-token
    prompt into the dynamic KV cache, then 16 given tokens one at a time:
    packed GQA, and split-KV, which the runtime chooses for these 8 packed
    programs over 16 key blocks) has SDPA's logits."""
    model = llama(head_dim, "bf16")
    ids = token_ids(2, 2016, seed=5)

    def steps(implementation):
        out = run(model, implementation, ids[:, :2000], use_cache=True)
        cache, logits = out.past_key_values, []
        for t in range(2000, 2016):
            out = run(model, implementation, ids[:, t:t + 1], past_key_values=cache,
                      use_cache=True)
            cache = out.past_key_values
            logits.append(out.logits[:, -1])
        return torch.stack(logits, 1)

    ref, out = steps("sdpa"), steps("tiled_attn")
    assert out.shape == ref.shape and torch.isfinite(out).all()
    for step in range(ref.shape[1]):
        err = rel_l2(out[:, step], ref[:, step])
        assert err < MAX_REL_L2, f"decode step {step}: relative L2 of the logits {err:.3e}"


@pytest.mark.parametrize("head_dim", [64, 128])
def test_a_training_step_matches_sdpa_within_its_own_spread(cuda, head_dim: int) -> None:
    """Loss and every parameter's gradient of one training step (the model in
    train mode, bf16, causal, grouped KV heads) through tiled_attn's forward and
    backward, against a float32 copy of the model on SDPA's math backend:
    tiled_attn's error on each parameter within 2x the larger of SDPA's two
    schedules' (its default backend's and FlashAttention-2's) on the same
    parameter, plus a floor of 1e-3 for the parameters whose errors are
    rounding noise."""
    import copy

    from torch.nn.attention import SDPBackend, sdpa_kernel

    model = copy.deepcopy(llama(head_dim, "bf16")).train()
    ids = token_ids(2, 333, seed=head_dim)

    def step(m, implementation, backend=None):
        ta_tf.set_attn_implementation(m, implementation)
        m.zero_grad(set_to_none=True)
        with sdpa_kernel(backend) if backend else torch.enable_grad():
            loss = m(ids, labels=ids).loss
            loss.backward()
        return loss.item(), {n: p.grad.float() for n, p in m.named_parameters()}

    reference = copy.deepcopy(model).float()
    tf32, torch.backends.cuda.matmul.allow_tf32 = torch.backends.cuda.matmul.allow_tf32, False
    try:
        loss_ref, grads_ref = step(reference, "sdpa", SDPBackend.MATH)
    finally:
        torch.backends.cuda.matmul.allow_tf32 = tf32
    del reference
    results = {"tiled_attn": step(model, "tiled_attn"), "sdpa": step(model, "sdpa"),
               "flash": step(model, "sdpa", SDPBackend.FLASH_ATTENTION)}

    def err(grads, name):
        ref = grads_ref[name].double()
        return ((grads[name].double() - ref).norm() / ref.norm().clamp_min(1e-30)).item()

    losses = {k: abs(loss - loss_ref) for k, (loss, _) in results.items()}
    assert losses["tiled_attn"] <= 2 * max(losses["sdpa"], losses["flash"]) + 1e-3, losses
    worse = []
    for name in grads_ref:
        ours = err(results["tiled_attn"][1], name)
        theirs = max(err(results["sdpa"][1], name), err(results["flash"][1], name))
        if ours > 2 * theirs + 1e-3:
            worse.append((name, ours, theirs))
    assert not worse, worse[:5]

"""Argument checks and the strides policy of sdpa, without torch or a GPU."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest
from fakes import FakeTensor, qkv

from tiled_attn.validation import check_head_dim, copy_reason, validate_inputs

PACKAGE_ROOT = Path(__file__).resolve().parents[1]


# ---------------------------------------------------------------- accepted


def test_valid_inputs_give_the_problem_and_default_scale() -> None:
    problem = validate_inputs(*qkv(b=2, h=4, s_q=100, s_k=77, d=64))
    assert (problem.batch, problem.heads, problem.seq_q, problem.seq_k) == (2, 4, 100, 77)
    assert problem.head_dim == 64 and problem.dtype == "f16"
    assert problem.scale == pytest.approx(1 / 8)
    assert problem.causal is False and problem.causal_mode == "none"
    assert not problem.is_empty


def test_bf16_causal_and_explicit_scale() -> None:
    problem = validate_inputs(*qkv(d=128, dtype="bfloat16"), causal=True, scale=2)
    assert problem.dtype == "bf16" and problem.head_dim == 128
    assert problem.causal_mode == "top_left"
    assert problem.scale == 2.0 and isinstance(problem.scale, float)


def test_empty_query_is_accepted() -> None:
    assert validate_inputs(*qkv(s_q=0)).is_empty


# ---------------------------------------------------------------- rejected


def test_cpu_tensor() -> None:
    q, k, v = qkv()
    with pytest.raises(ValueError, match="q is on cpu; tiled_attn.sdpa needs CUDA tensors"):
        validate_inputs(FakeTensor(q.shape, device="cpu"), k, v)
    with pytest.raises(ValueError, match="k is on cpu"):
        validate_inputs(q, FakeTensor(k.shape, device="cpu"), v)


def test_mixed_devices() -> None:
    q, k, v = qkv()
    with pytest.raises(ValueError, match="v is on cuda:1 but q is on cuda:0"):
        validate_inputs(q, k, FakeTensor(v.shape, device="cuda:1"))


def test_not_a_tensor() -> None:
    _, k, v = qkv()
    with pytest.raises(TypeError, match="q must be a torch.Tensor, got list"):
        validate_inputs([[1.0]], k, v)


def test_float32() -> None:
    with pytest.raises(TypeError, match=r"q has dtype torch.float32; .*torch.float16"):
        validate_inputs(*qkv(dtype="float32"))


def test_mixed_dtypes() -> None:
    q, k, v = qkv()
    with pytest.raises(TypeError, match="k has dtype torch.bfloat16 but q has torch.float16"):
        validate_inputs(q, FakeTensor(k.shape, dtype="bfloat16"), v)


def test_rank_3() -> None:
    q, k, v = qkv()
    with pytest.raises(ValueError, match=r"q must have rank 4 \[B, H, S, D\], got rank 3"):
        validate_inputs(FakeTensor((4, 100, 64)), k, v)


@pytest.mark.parametrize(
    "k_shape, message",
    [
        ((3, 4, 77, 64), "k has batch size 3 but q has 2"),
        ((2, 8, 77, 64), "k has head count 8 but q has 4"),
        ((2, 4, 77, 128), "k has head dim 128 but q has 64"),
    ],
)
def test_mismatched_batch_heads_head_dim(k_shape, message) -> None:
    q, _, _ = qkv()
    k = FakeTensor(k_shape)
    with pytest.raises(ValueError, match=message):
        validate_inputs(q, k, FakeTensor(k_shape))


def test_k_v_length_mismatch() -> None:
    q, k, _ = qkv(s_k=128)
    with pytest.raises(ValueError, match="v has sequence length 100 but k has 128"):
        validate_inputs(q, k, FakeTensor((2, 4, 100, 64)))


def test_no_keys() -> None:
    with pytest.raises(ValueError, match="k has sequence length 0"):
        validate_inputs(*qkv(s_k=0))


def test_unsupported_head_dim() -> None:
    with pytest.raises(ValueError, match=r"head dim D=96 is not supported; .* 64, 128"):
        validate_inputs(*qkv(d=96))


def test_head_dim_check_follows_the_library() -> None:
    assert validate_inputs(*qkv(d=96), head_dims=None).head_dim == 96
    check_head_dim(96, (64, 96))
    with pytest.raises(ValueError, match="has head dims none"):
        check_head_dim(64, ())


@pytest.mark.parametrize("scale", [0, 0.0, -1.0, math.inf, math.nan, 1e300, 1e-50])
def test_bad_scale_value(scale) -> None:
    with pytest.raises(ValueError, match="scale must be a finite positive"):
        validate_inputs(*qkv(), scale=scale)


@pytest.mark.parametrize("scale", ["0.125", True, [0.1]])
def test_bad_scale_type(scale) -> None:
    with pytest.raises(TypeError, match="scale must be a float or None"):
        validate_inputs(*qkv(), scale=scale)


@pytest.mark.parametrize("causal", [1, 0, "yes", None])
def test_non_bool_causal(causal) -> None:
    with pytest.raises(TypeError, match=r"causal must be a bool, got"):
        validate_inputs(*qkv(), causal=causal)


# ---------------------------------------------------------------- strides


def test_contiguous_needs_no_copy() -> None:
    assert copy_reason(FakeTensor((2, 4, 100, 64)), 2, 16) is None


def test_transposed_layout_is_taken_as_is() -> None:
    # A [B, S, H, D] tensor viewed as [B, H, S, D].
    bshd = FakeTensor((2, 4, 100, 64), strides=(100 * 4 * 64, 64, 4 * 64, 1))
    assert copy_reason(bshd, 2, 16) is None


def test_broadcast_and_unit_dims_are_taken_as_is() -> None:
    expanded = FakeTensor((2, 4, 100, 64), strides=(0, 0, 64, 1))
    assert copy_reason(expanded, 2, 16) is None
    odd_unit = FakeTensor((1, 1, 100, 64), strides=(3, 7, 64, 1))
    assert copy_reason(odd_unit, 2, 16) is None


def test_last_dim_stride_not_one_is_copied() -> None:
    t = FakeTensor((2, 4, 100, 64), strides=(2 * 4 * 100 * 64, 2 * 100 * 64, 2 * 64, 2))
    assert "last-dimension stride is 2" in copy_reason(t, 2, 16)


def test_misaligned_pointer_or_stride_is_copied() -> None:
    shifted = FakeTensor((2, 4, 100, 64), pointer=0x7F0000000002)
    assert "not 16-byte aligned" in copy_reason(shifted, 2, 16)
    odd_row = FakeTensor((2, 4, 100, 64), strides=(4 * 6400, 6400, 65, 1))
    assert "dimension 2 (65 elements)" in copy_reason(odd_row, 2, 16)
    assert copy_reason(odd_row, 2, 2) is None


# ---------------------------------------------------------------- imports


def test_package_import_does_not_import_torch() -> None:
    code = (
        "import sys, tiled_attn, tiled_attn.driver, tiled_attn.validation;"
        "from tiled_attn import sdpa, KernelLibrary, TiledAttnError;"
        "assert issubclass(TiledAttnError, RuntimeError);"
        "assert 'torch' not in sys.modules, 'torch imported'"
    )
    subprocess.run([sys.executable, "-c", code], cwd=PACKAGE_ROOT, check=True)

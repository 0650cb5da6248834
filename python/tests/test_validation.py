"""The torch-level checks of sdpa (tiled_attn.validation), without torch or a GPU.

``check_inputs`` checks what only Python can tell (tensors, CUDA, one device,
dtype, rank, the types of causal and scale); the sizes are the runtime's to
check (test_runtime.py). ``check_window`` checks causal_align and
window_size, ``check_softcap`` the softcap, ``check_gqa`` enable_gqa and
the heads, ``check_varlen`` the offsets and longest lengths of packed
sequences. ``copy_reason`` says which inputs sdpa copies. ``check_no_grad``
refuses inputs that require grad while grad mode is on (no backward pass).
"""

from __future__ import annotations

import fractions
import math
import re
import subprocess
import sys
from pathlib import Path

import pytest
from fakes import FakeTensor, qkv

from tiled_attn.errors import NoBackwardError
from tiled_attn.validation import (CAUSAL_ALIGNS, TORCH_DTYPES, check_gqa, check_inputs,
                                  check_no_grad, check_softcap, check_varlen, check_window,
                                  copy_reason)

PACKAGE_ROOT = Path(__file__).resolve().parents[1]
SUPPORTED = "tiled_attn.sdpa supports torch.float16 and torch.bfloat16"


def replace(triple, index, tensor):
    """``triple`` with element ``index`` (0: q, 1: k, 2: v) replaced."""
    items = list(triple)
    items[index] = tensor
    return tuple(items)


# ---------------------------------------------------------------- accepted


def test_valid_inputs_give_the_dtype_name() -> None:
    assert check_inputs(*qkv()) == "f16"
    assert check_inputs(*qkv(dtype="bfloat16"), causal=True, scale=0.5) == "bf16"
    assert TORCH_DTYPES == {"torch.float16": "f16", "torch.bfloat16": "bf16"}


@pytest.mark.parametrize("scale", [None, 0.125, 2, fractions.Fraction(1, 8)])
def test_real_scales_are_accepted(scale) -> None:
    assert check_inputs(*qkv(), scale=scale) == "f16"


@pytest.mark.parametrize("scale", [0.0, -1.0, math.nan, math.inf, 1e39])
def test_scale_values_are_left_to_the_runtime(scale) -> None:
    # A real number of a bad value is the runtime's to reject (ValueError).
    assert check_inputs(*qkv(), scale=scale) == "f16"


def test_sizes_are_left_to_the_runtime() -> None:
    # Disagreeing shapes, an empty key sequence, any head dim: rank 4 is enough here.
    q = FakeTensor((2, 4, 100, 96))
    assert check_inputs(q, FakeTensor((3, 1, 0, 7)), FakeTensor((5, 5, 5, 5))) == "f16"
    assert check_inputs(*qkv(b=0, s_q=0)) == "f16"


def test_causal_false_and_true() -> None:
    assert check_inputs(*qkv(), causal=False) == "f16"
    assert check_inputs(*qkv(), causal=True) == "f16"


# ---------------------------------------------------------------- not tensors


@pytest.mark.parametrize("index, name", [(0, "q"), (1, "k"), (2, "v")])
@pytest.mark.parametrize("value, type_name", [([[1.0]], "list"), (None, "NoneType"), (3, "int")])
def test_not_a_tensor(index, name, value, type_name) -> None:
    with pytest.raises(TypeError, match=rf"^{name} must be a torch.Tensor, got {type_name}$"):
        check_inputs(*replace(qkv(), index, value))


def test_an_object_with_a_shape_only_is_not_a_tensor() -> None:
    class ShapeOnly:
        shape = (2, 4, 100, 64)

    with pytest.raises(TypeError, match="^k must be a torch.Tensor, got ShapeOnly$"):
        check_inputs(qkv()[0], ShapeOnly(), qkv()[2])


# ---------------------------------------------------------------- devices


def test_cpu_q() -> None:
    with pytest.raises(ValueError, match="^q is on cpu; tiled_attn.sdpa needs CUDA tensors$"):
        check_inputs(*qkv(device="cpu"))


@pytest.mark.parametrize("index, name", [(1, "k"), (2, "v")])
def test_cpu_k_or_v(index, name) -> None:
    q, k, v = qkv()
    other = FakeTensor((2, 4, 77, 64), device="cpu")
    with pytest.raises(ValueError,
                       match=rf"^{name} is on cpu; tiled_attn.sdpa needs CUDA tensors$"):
        check_inputs(*replace((q, k, v), index, other))


@pytest.mark.parametrize("index, name", [(1, "k"), (2, "v")])
def test_different_cuda_devices(index, name) -> None:
    other = FakeTensor((2, 4, 77, 64), device="cuda:1")
    with pytest.raises(ValueError, match=rf"^{name} is on cuda:1 but q is on cuda:0; "
                                         "q, k and v must be on the same device$"):
        check_inputs(*replace(qkv(), index, other))


def test_all_on_another_device_is_fine() -> None:
    assert check_inputs(*qkv(device="cuda:3")) == "f16"


def test_device_is_checked_before_dtype() -> None:
    with pytest.raises(ValueError, match="q is on cpu"):
        check_inputs(*qkv(device="cpu", dtype="float32"))


# ---------------------------------------------------------------- dtypes


@pytest.mark.parametrize("dtype", ["float32", "float64", "int8", "float8_e4m3fn"])
def test_unsupported_q_dtype(dtype) -> None:
    with pytest.raises(TypeError, match=rf"^q has dtype torch.{dtype}; {SUPPORTED}$"):
        check_inputs(*qkv(dtype=dtype))


@pytest.mark.parametrize("index, name", [(1, "k"), (2, "v")])
def test_unsupported_k_or_v_dtype(index, name) -> None:
    other = FakeTensor((2, 4, 77, 64), dtype="float32")
    with pytest.raises(TypeError, match=rf"^{name} has dtype torch.float32; {SUPPORTED}$"):
        check_inputs(*replace(qkv(), index, other))


@pytest.mark.parametrize("index, name", [(1, "k"), (2, "v")])
def test_mixed_dtypes(index, name) -> None:
    other = FakeTensor((2, 4, 77, 64), dtype="bfloat16")
    with pytest.raises(TypeError, match=rf"^{name} has dtype torch.bfloat16 but q has "
                                        r"torch.float16; q, k and v must have the same dtype$"):
        check_inputs(*replace(qkv(), index, other))


def test_mixed_dtypes_bf16_q() -> None:
    q, k, v = qkv(dtype="bfloat16")
    with pytest.raises(TypeError, match="v has dtype torch.float16 but q has torch.bfloat16"):
        check_inputs(q, k, FakeTensor(v.shape))


# ---------------------------------------------------------------- ranks


@pytest.mark.parametrize("index, name", [(0, "q"), (1, "k"), (2, "v")])
@pytest.mark.parametrize("shape", [(4, 100, 64), (1, 2, 4, 100, 64), (64,), ()])
def test_rank_not_4(index, name, shape) -> None:
    expected = (rf"^{name} must have rank 4 \[B, H, S, D\], got rank {len(shape)} "
                rf"with shape {re.escape(repr(tuple(shape)))}$")
    with pytest.raises(ValueError, match=expected):
        check_inputs(*replace(qkv(), index, FakeTensor(shape)))


# ---------------------------------------------------------------- causal and scale


@pytest.mark.parametrize("causal, shown", [(1, "int 1"), (0, "int 0"), ("yes", "str 'yes'"),
                                           (None, "NoneType None"), (1.0, "float 1.0")])
def test_causal_not_a_bool(causal, shown) -> None:
    with pytest.raises(TypeError, match=rf"^causal must be a bool, got {shown}$"):
        check_inputs(*qkv(), causal=causal)


@pytest.mark.parametrize("scale, shown", [
    ("0.125", "str '0.125'"),
    (True, "bool True"),
    (False, "bool False"),
    ([0.1], r"list \[0.1\]"),
    (1j, r"complex 1j"),
])
def test_scale_of_the_wrong_type(scale, shown) -> None:
    with pytest.raises(TypeError, match=rf"^scale must be a float or None, got {shown}$"):
        check_inputs(*qkv(), scale=scale)


# ---------------------------------------------------------------- causal_align and window_size


def test_default_window_is_none_and_top_left() -> None:
    assert check_window("top_left", (-1, -1)) == (False, -1, -1)
    assert CAUSAL_ALIGNS == ("top_left", "bottom_right")


@pytest.mark.parametrize("causal_align, window_size, expected", [
    ("bottom_right", (-1, -1), (True, -1, -1)),
    ("top_left", (4096, 0), (False, 4096, 0)),
    ("bottom_right", [3, 5], (True, 3, 5)),
    ("top_left", (0, 0), (False, 0, 0)),
    ("top_left", (-1, 7), (False, -1, 7)),
    # Bounds past an int64 are the largest int64: no bound, as any that
    # reaches past the sequences.
    ("top_left", (2**64, 2**63), (False, 2**63 - 1, 2**63 - 1)),
])
def test_windows_are_accepted(causal_align, window_size, expected) -> None:
    assert check_window(causal_align, window_size) == expected


def test_window_bounds_are_python_ints() -> None:
    class Index(int):  # numbers.Integral, as numpy's integers are
        pass

    bottom_right, left, right = check_window("top_left", (Index(5), Index(-1)))
    assert (left, right) == (5, -1) and type(left) is int and type(right) is int


@pytest.mark.parametrize("causal_align, shown", [("Top_Left", "'Top_Left'"),
                                                 ("bottom-right", "'bottom-right'"),
                                                 ("", "''")])
def test_causal_align_of_a_bad_value(causal_align, shown) -> None:
    with pytest.raises(ValueError, match=rf"^causal_align must be 'top_left' or 'bottom_right', "
                                         rf"got {shown}$"):
        check_window(causal_align, (-1, -1))


@pytest.mark.parametrize("causal_align, shown", [(None, "NoneType None"), (1, "int 1"),
                                                 (True, "bool True")])
def test_causal_align_not_a_str(causal_align, shown) -> None:
    with pytest.raises(TypeError, match=rf"^causal_align must be a str, got {shown}$"):
        check_window(causal_align, (-1, -1))


@pytest.mark.parametrize("window_size, shown", [
    (4096, "int 4096"),
    (None, "NoneType None"),
    ((1, 2, 3), r"tuple \(1, 2, 3\)"),
    ((4,), r"tuple \(4,\)"),
    ((1.0, 0), r"tuple \(1.0, 0\)"),
    ((True, 0), r"tuple \(True, 0\)"),
    (("4", "0"), r"tuple \('4', '0'\)"),
    ({4: 0}, r"dict \{4: 0\}"),
])
def test_window_size_not_a_pair_of_ints(window_size, shown) -> None:
    with pytest.raises(TypeError, match=rf"^window_size must be a pair of ints \(left, right\), "
                                        rf"got {shown}$"):
        check_window("top_left", window_size)


@pytest.mark.parametrize("window_size, shown", [((-2, 0), r"\(-2, 0\)"),
                                                ((0, -5), r"\(0, -5\)"),
                                                ([-3, -3], r"\(-3, -3\)")])
def test_window_size_below_minus_one(window_size, shown) -> None:
    with pytest.raises(ValueError, match=rf"^window_size must be \(left, right\) with each -1 "
                                         rf"\(no bound\) or a number of keys >= 0, got {shown}$"):
        check_window("top_left", window_size)


def test_the_alignment_is_checked_before_the_window() -> None:
    with pytest.raises(ValueError, match="causal_align"):
        check_window("middle", (-5, 0))


# ---------------------------------------------------------------- softcap


@pytest.mark.parametrize("softcap, expected", [
    (0.0, 0.0),                        # the default: off
    (0, 0.0),
    (-0.0, 0.0),
    (50.0, 50.0),                      # Gemma 2's attn_logit_softcapping
    (30, 30.0),
    (fractions.Fraction(1, 2), 0.5),
    (1e-45, 1e-45),                    # float32's smallest positive value
    (3.4028234663852886e38, 3.4028234663852886e38),  # and its largest
])
def test_softcaps_are_accepted(softcap, expected) -> None:
    value = check_softcap(softcap)
    assert value == expected and type(value) is float


@pytest.mark.parametrize("softcap, shown", [
    ("50", "str '50'"),
    (None, "NoneType None"),
    (True, "bool True"),
    (False, "bool False"),
    ([50.0], r"list \[50.0\]"),
    (1j, "complex 1j"),
])
def test_softcap_of_the_wrong_type(softcap, shown) -> None:
    with pytest.raises(TypeError, match=rf"^softcap must be a float \(0.0: off\), got {shown}$"):
        check_softcap(softcap)


@pytest.mark.parametrize("softcap, shown", [(-1.0, "-1.0"), (-1e-300, "-1e-300"), (-5, "-5"),
                                            (math.nan, "nan"), (math.inf, "inf"),
                                            (-math.inf, "-inf")])
def test_softcap_negative_or_not_finite(softcap, shown) -> None:
    with pytest.raises(ValueError, match=rf"^softcap must be a finite number >= 0 \(0.0: off\), "
                                         rf"got {shown}$"):
        check_softcap(softcap)


@pytest.mark.parametrize("softcap, why", [(1e39, "overflows float32"),
                                          (2**200, "overflows float32"),
                                          (1e-50, "rounds to 0 in float32")])
def test_softcap_that_is_no_float32(softcap, why) -> None:
    with pytest.raises(ValueError, match=rf"^softcap must be a float32 value \(0.0: off\), "
                                         rf"got .*, which {why}$"):
        check_softcap(softcap)


# ---------------------------------------------------------------- copy_reason


def test_contiguous_needs_no_copy() -> None:
    assert copy_reason(FakeTensor((2, 4, 100, 64)), 16) is None


def test_transposed_layout_is_taken_as_is() -> None:
    # A [B, S, H, D] tensor viewed as [B, H, S, D].
    bshd = FakeTensor((2, 4, 100, 64), strides=(100 * 4 * 64, 64, 4 * 64, 1))
    assert copy_reason(bshd, 16) is None


def test_last_dim_stride_not_one() -> None:
    every_other = FakeTensor((2, 4, 100, 64), strides=(2 * 4 * 100 * 64, 2 * 100 * 64, 128, 2))
    assert copy_reason(every_other, 16) == "its last-dimension stride is 2, not 1"
    # Whatever the alignment, and even with a last dimension of size 1.
    assert copy_reason(every_other, 1) == "its last-dimension stride is 2, not 1"
    column = FakeTensor((2, 4, 100, 1), strides=(400, 100, 1, 0))
    assert copy_reason(column, 2) == "its last-dimension stride is 0, not 1"


@pytest.mark.parametrize("pointer, align, reason", [
    (0x7F0000000002, 16, "its data pointer 0x7f0000000002 is not 16-byte aligned"),
    (0x7F0000000008, 16, "its data pointer 0x7f0000000008 is not 16-byte aligned"),
    (0x7F0000000010, 32, "its data pointer 0x7f0000000010 is not 32-byte aligned"),
    (0x7F0000000010, 16, None),
    (0x7F0000000002, 2, None),
    (0, 16, None),
])
def test_pointer_alignment(pointer, align, reason) -> None:
    assert copy_reason(FakeTensor((2, 4, 100, 64), pointer=pointer), align) == reason


def test_the_last_stride_is_checked_before_the_pointer() -> None:
    t = FakeTensor((2, 4, 100, 64), strides=(1, 1, 1, 3), pointer=0x7F0000000001)
    assert "last-dimension stride is 3" in copy_reason(t, 16)


@pytest.mark.parametrize("dim", [0, 1, 2])
def test_a_misaligned_stride_along_a_dim_longer_than_1(dim) -> None:
    strides = [4 * 100 * 64, 100 * 64, 64, 1]
    strides[dim] = 65
    t = FakeTensor((2, 4, 100, 64), strides=strides)
    assert copy_reason(t, 16) == (f"its stride along dimension {dim} (65 elements) is not a "
                                  "multiple of 16 bytes")
    # 65 elements of 2 bytes: a multiple of 2 bytes, not of 4.
    assert copy_reason(t, 2) is None
    assert "not a multiple of 4 bytes" in copy_reason(t, 4)


@pytest.mark.parametrize("dim", [0, 1, 2])
def test_strides_along_dims_of_size_1_are_free(dim) -> None:
    shape = [2, 4, 100, 64]
    shape[dim] = 1
    strides = [4 * 100 * 64, 100 * 64, 64, 1]
    strides[dim] = 65
    assert copy_reason(FakeTensor(shape, strides=strides), 16) is None
    # Size 0 too: nothing is indexed along it.
    shape[dim] = 0
    assert copy_reason(FakeTensor(shape, strides=strides), 16) is None


def test_broadcast_and_unit_dims_are_taken_as_is() -> None:
    expanded = FakeTensor((2, 4, 100, 64), strides=(0, 0, 64, 1))
    assert copy_reason(expanded, 16) is None
    odd_unit = FakeTensor((1, 1, 100, 64), strides=(3, 7, 64, 1))
    assert copy_reason(odd_unit, 16) is None


def test_stride_alignment_is_in_bytes() -> None:
    # 8 elements are 16 bytes: enough for 16-byte alignment, not for 32.
    t = FakeTensor((2, 4, 100, 8), strides=(4 * 100 * 8, 100 * 8, 8, 1))
    assert copy_reason(t, 16) is None
    assert copy_reason(t, 32) == ("its stride along dimension 2 (8 elements) is not a "
                                  "multiple of 32 bytes")


def test_the_first_misaligned_dim_is_named() -> None:
    t = FakeTensor((2, 4, 100, 64), strides=(33, 65, 64, 1))
    assert "dimension 0 (33 elements)" in copy_reason(t, 16)


def test_negative_strides_are_checked_by_magnitude() -> None:
    flipped = FakeTensor((2, 4, 100, 64), strides=(4 * 100 * 64, 100 * 64, -64, 1))
    assert copy_reason(flipped, 16) is None
    odd = FakeTensor((2, 4, 100, 64), strides=(4 * 100 * 64, 100 * 64, -65, 1))
    assert "dimension 2 (-65 elements)" in copy_reason(odd, 16)


# ---------------------------------------------------------------- grouped heads


def test_grouped_heads() -> None:
    check_gqa(False, 6, (6, 6))
    check_gqa(True, 6, (2, 2))
    check_gqa(True, 6, (4, 4))  # the runtime checks that 4 does not divide 6
    with pytest.raises(ValueError, match=r"^k and v have 2 and 3 heads but q has 6; pass "
                                         r"enable_gqa=True for grouped KV heads"):
        check_gqa(False, 6, (2, 3))
    with pytest.raises(TypeError, match="^enable_gqa must be a bool, got int 1$"):
        check_gqa(1, 6, (6, 6))


# ---------------------------------------------------------------- packed sequences

VARLEN = "tiled_attn.sdpa_varlen"


def packed(total_q=500, total_k=700, h=4, d=64, **kwargs):
    """Packed (q, k, v) of [total, H, D]."""
    return (FakeTensor((total_q, h, d), **kwargs), FakeTensor((total_k, h, d), **kwargs),
            FakeTensor((total_k, h, d), **kwargs))


def offsets(n=5, **kwargs):
    return FakeTensor((n,), dtype=kwargs.pop("dtype", "int32"), **kwargs)


def test_packed_inputs_have_rank_3() -> None:
    assert check_inputs(*packed(), function=VARLEN, layout="[total, H, D]") == "f16"
    with pytest.raises(ValueError, match=r"^k must have rank 3 \[total, H, D\], got rank 4 "
                                         r"with shape \(1, 700, 4, 64\)$"):
        q, k, v = packed()
        check_inputs(q, FakeTensor((1, 700, 4, 64)), v, function=VARLEN,
                     layout="[total, H, D]")
    with pytest.raises(ValueError, match=f"^q is on cpu; {VARLEN} needs CUDA tensors$"):
        check_inputs(*packed(device="cpu"), function=VARLEN, layout="[total, H, D]")


def test_offsets_and_longest_lengths_are_accepted() -> None:
    q = packed()[0]
    assert check_varlen(q, offsets(), offsets(), 300, 320) == 4
    assert check_varlen(q, offsets(2), offsets(2), 1, 1) == 1
    # Their values are the caller's: a longest length past the total is the
    # runtime's to refuse, the offsets' contents the kernels' to read.
    assert check_varlen(q, offsets(), offsets(), 10**6, 10**6) == 4


@pytest.mark.parametrize("cu_q, cu_k, kind, message", [
    ([0, 5], None, TypeError, "^cu_seqlens_q must be a torch.Tensor, got list$"),
    (None, offsets(dtype="int64"), TypeError,
     r"^cu_seqlens_k has dtype torch.int64; tiled_attn.sdpa_varlen needs torch.int32 offsets "
     r"\(FlashAttention's cu_seqlens\)$"),
    (offsets(device="cuda:1"), None, ValueError,
     "^cu_seqlens_q is on cuda:1 but q is on cuda:0; the sequences' offsets must be on q's "
     "device$"),
    (offsets(device="cpu"), None, ValueError, "^cu_seqlens_q is on cpu but q is on cuda:0"),
    (FakeTensor((2, 5), dtype="int32"), None, ValueError,
     r"^cu_seqlens_q must have rank 1 \[num_seqs \+ 1\], got rank 2 with shape \(2, 5\)$"),
    (offsets(1), offsets(1), ValueError,
     r"^cu_seqlens_q has 1 entry; it must hold num_seqs \+ 1 >= 2 offsets, 0 first$"),
    (offsets(0), offsets(0), ValueError, "^cu_seqlens_q has no entries; it must hold"),
    (None, FakeTensor((5,), dtype="int32", strides=(2,)), ValueError,
     "^cu_seqlens_k must be contiguous, got stride 2$"),
    (offsets(5), offsets(4), ValueError,
     r"^cu_seqlens_k has 4 entries but cu_seqlens_q has 5; both hold num_seqs \+ 1 offsets$"),
])
def test_bad_offsets(cu_q, cu_k, kind, message) -> None:
    with pytest.raises(kind, match=message):
        check_varlen(packed()[0], offsets() if cu_q is None else cu_q,
                     offsets() if cu_k is None else cu_k, 300, 320)


@pytest.mark.parametrize("max_q, max_k, kind, message", [
    (0, 320, ValueError,
     r"^max_seqlen_q must be >= 1 \(the longest sequence's length\) and below 2\*\*63, got 0$"),
    # Past what ta_varlen's int64 holds: a ValueError, not struct.error.
    (300, 2**63, ValueError, r"^max_seqlen_k must be >= 1 .* got 9223372036854775808$"),
    (300, -1, ValueError, "^max_seqlen_k must be >= 1"),
    (True, 320, TypeError, "^max_seqlen_q must be an int, got bool True$"),
    (300, 320.0, TypeError, "^max_seqlen_k must be an int, got float 320.0$"),
    (None, 320, TypeError, "^max_seqlen_q must be an int, got NoneType None$"),
])
def test_bad_longest_lengths(max_q, max_k, kind, message) -> None:
    with pytest.raises(kind, match=message):
        check_varlen(packed()[0], offsets(), offsets(), max_q, max_k)


# ---------------------------------------------------------------- imports


def test_package_import_does_not_import_torch() -> None:
    code = (
        "import sys, tiled_attn, tiled_attn.runtime, tiled_attn.validation;"
        "from tiled_attn import sdpa, sdpa_varlen, KernelLibrary, TiledAttnError, "
        "default_library;"
        "assert issubclass(TiledAttnError, RuntimeError);"
        "assert 'torch' not in sys.modules, 'torch imported'"
    )
    subprocess.run([sys.executable, "-c", code], cwd=PACKAGE_ROOT, check=True)


# ---------------------------------------------------------------- check_no_grad


class GradMode:
    """The torch module as check_no_grad reads it: ``is_grad_enabled()``."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def is_grad_enabled(self) -> bool:
        return self.enabled


@pytest.mark.parametrize("flags, subject", [
    ((True, False, False), "q requires"),
    ((False, True, False), "k requires"),
    ((False, False, True), "v requires"),
    ((True, False, True), "q and v require"),
    ((True, True, True), "q, k and v require"),
])
def test_check_no_grad_names_the_inputs(flags, subject) -> None:
    triple = qkv()
    for t, flag in zip(triple, flags):
        t.requires_grad_(flag)
    with pytest.raises(NoBackwardError) as info:
        check_no_grad(GradMode(True), *triple, function="tiled_attn.sdpa_varlen")
    assert str(info.value) == (
        f"tiled_attn.sdpa_varlen: {subject} grad, but tiled_attn has no backward pass yet (its "
        "kernels are forward only), so gradients through attention would be dropped without a "
        "word; call it under torch.no_grad() or torch.inference_mode() (model.eval() does not "
        "turn gradients off), or pass tensors that do not require grad (.detach())")
    # Grad mode off (torch.no_grad(), torch.inference_mode()): nothing to refuse.
    check_no_grad(GradMode(False), *triple)


def test_check_no_grad_passes_what_needs_no_gradient() -> None:
    check_no_grad(GradMode(True), *qkv())
    # Not tensors at all: check_inputs' TypeError is for them, not this.
    check_no_grad(GradMode(True), None, 1, "v")



def test_a_16bit_bias_without_its_kernel_runs_on_a_float32_copy_of_its_own_elements() -> None:
    # sdpa_eager's choice for a bias of q's 16-bit dtype (eager, and under
    # torch.compile when the op runs): the view as it is where the call has
    # a bias_bf16 kernel (here: kernel= names one), else the float32 bias
    # function on a float32 copy of the [1, 1, S_q, S_k] elements the view
    # broadcasts, not of its [B, H, S_q, S_k] expansion.
    from fakes import fake_torch

    from tiled_attn.sdpa import bias_16bit_or_float32

    torch = fake_torch()
    q = FakeTensor((2, 3, 77, 64), dtype="bfloat16")
    base = FakeTensor((1, 1, 77, 136), dtype="bfloat16", pointer=0x750000000)
    base.dtype = q.dtype
    view = base.expand(2, 3, 77, 136)
    name, (same,) = bias_16bit_or_float32(torch, q, view, None,
                                          "sdpa_fwd_sm_90a_bf16_d64_none_bias_bf16", "bias_bf16")
    assert name == "bias_bf16" and same is view
    name, (wide,) = bias_16bit_or_float32(torch, q, view, None,
                                          "sdpa_fwd_sm_90a_bf16_d64_none_bias", "bias_bf16")
    assert name == "bias" and str(wide.dtype) == "torch.float32"
    assert wide.shape == (2, 3, 77, 136) and wide.stride() == (0, 0, 136, 1)
    assert wide.data_ptr() != base.data_ptr()


def test_a_16bit_attn_mask_of_q_dtype_stays_16bit_where_the_library_has_its_kernel() -> None:
    # With bias_16bit (sdpa's, which leaves the kernel to sdpa_eager), a bf16
    # attn_mask of a bf16 q is the bias_bf16 function's input as it is: no
    # float32 copy; its rows of 131 bf16 (262 bytes) padded to 136 for the
    # 16-byte copies, broadcast over batch and heads by stride 0.
    from fakes import fake_torch

    from tiled_attn.validation import attn_mask_as_function

    torch = fake_torch()
    q = FakeTensor((2, 3, 77, 64), dtype="bfloat16")
    k = FakeTensor((2, 3, 131, 64), dtype="bfloat16")
    mask = FakeTensor((77, 131), dtype="bfloat16", pointer=0x720000000)
    name, view = attn_mask_as_function(torch, mask, q, k, None, None, bias_16bit=True)
    assert name == "bias_bf16" and str(view.dtype) == "torch.bfloat16"
    assert view.shape == (2, 3, 77, 131) and view.stride() == (0, 0, 136, 1)
    # An aligned f16 mask of an f16 q: the view itself, as bias_f16's.
    q16 = FakeTensor((2, 3, 77, 64), dtype="float16")
    mask16 = FakeTensor((1, 1, 77, 136), dtype="float16", pointer=0x730000000)
    name, view = attn_mask_as_function(torch, mask16, q16, FakeTensor((2, 3, 136, 64)),
                                       None, None, bias_16bit=True)
    assert name == "bias_f16" and view.data_ptr() == 0x730000000
    assert view.stride() == (0, 0, 136, 1)
    # Without such a kernel, or of another dtype than q's, it is float32's
    # bias (a float32 mask as it is).
    mask32 = FakeTensor((77, 132), dtype="float32", pointer=0x740000000)
    name, view = attn_mask_as_function(torch, mask32, q, FakeTensor((2, 3, 132, 64)), None,
                                       None, bias_16bit=True)
    assert name == "bias" and view.data_ptr() == 0x740000000

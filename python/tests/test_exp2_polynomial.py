"""The bound of the exp2 polynomial that ``exp2-poly-every`` lowers to.

``convert-tilegpu-to-nvvm{exp2-poly-every=N}`` computes 2^f, f in [0, 1), as
1 + f (c1 + f (c2 + f c3)) on the FMA units (FlashAttention-4's emulation;
``lib/Conversion/TileGPUToNVVM/Elementwise.cpp``). The coefficients are read
from that source, rounded to f32 as the lowering's constants are, and the
relative error is measured in float64 on a dense grid: it must stay within
the 8.7e-5 the source documents (and the README quotes), and be the error of
a degree-3 fit, not of something better or far worse.
"""

from __future__ import annotations

import re
import struct
from pathlib import Path

SOURCE = (Path(__file__).resolve().parents[2] / "lib" / "Conversion" /
          "TileGPUToNVVM" / "Elementwise.cpp")
DOCUMENTED_BOUND = 8.7e-5


def f32(x: float) -> float:
    return struct.unpack("f", struct.pack("f", x))[0]


def coefficients() -> tuple[float, float, float]:
    """c1, c2, c3 from the three fma of exp2Polynomial, in Horner order."""
    text = SOURCE.read_text()
    body = text[text.index("Value exp2Polynomial("):]
    body = body[:body.index("\n}\n")]
    constants = [float(c) for c in re.findall(r"cst\(([0-9.eE+-]+)f\)", body)]
    # cst(-127), cst(127), then c3, c2, c1, 1, then cst(-126), cst(0).
    c3, c2, c1, one = constants[2:6]
    assert one == 1.0
    return f32(c1), f32(c2), f32(c3)


def max_relative_error(c1: float, c2: float, c3: float, n: int = 1 << 16) -> float:
    worst = 0.0
    for i in range(n):
        f = i / n
        p = 1.0 + f * (c1 + f * (c2 + f * c3))
        worst = max(worst, abs(p - 2.0 ** f) / 2.0 ** f)
    return worst


def test_the_source_documents_the_bound() -> None:
    assert "8.7e-5" in SOURCE.read_text()


def test_the_polynomial_is_within_the_documented_bound() -> None:
    error = max_relative_error(*coefficients())
    assert error <= DOCUMENTED_BOUND
    # A degree-3 minimax fit of 2^f on [0, 1) cannot do much better: an
    # error far below the bound means the bound (or the test) is stale.
    assert error > 0.5 * DOCUMENTED_BOUND


def test_the_polynomial_meets_two_at_one() -> None:
    # 2^f is continuous across j: p(1) must be close to 2, or results jump
    # where x crosses an integer.
    c1, c2, c3 = coefficients()
    assert abs((1.0 + c1 + c2 + c3) - 2.0) / 2.0 <= DOCUMENTED_BOUND


def test_a_wrong_coefficient_would_be_caught() -> None:
    c1, c2, c3 = coefficients()
    assert max_relative_error(c1, c3, c2) > DOCUMENTED_BOUND
    assert max_relative_error(c1 * 1.001, c2, c3) > DOCUMENTED_BOUND

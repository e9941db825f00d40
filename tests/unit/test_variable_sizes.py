"""cexpr.Sym, the run-time size lowering computes with, and the fit of extents.py that finds them: C text,
comparisons answered only where the range settles them, and every silent conversion to a number refused."""

from __future__ import annotations

import math

import pytest

from mlcc import cexpr
from mlcc.cexpr import Sym, VariableExtentError
from mlcc.extents import Variable, _Fitter, samples

S = Sym.symbol("seq", 1, 128)
T = Sym.symbol("width", 32, 640)


def test_arithmetic_stays_symbolic_and_folds_to_numbers():
    assert (S * 64).c() == "d_seq * 64u" and (64 * S + 3).c() == "d_seq * 64u + 3u"
    assert (S * T * 2 - S).c() == "d_seq * d_width * 2u - d_seq"
    assert (S * 64) // 64 == S and S - S == 0 and isinstance(S - S, int)
    assert math.prod((1, S, 64)).text() == "64*seq"
    assert cexpr.offset("p", ("i", S * 64), ("j", 1), (2, 5)) == "p + i * (d_seq * 64u) + j + 10u"
    assert cexpr.bound(S * 64) == 8192 and cexpr.bound(S * 64, "min") == 64


def test_comparisons_only_where_the_range_settles_them():
    assert S >= 1 and S <= 128 and S < 129 and not S > 128 and S != 0 and S * 2 != 1
    assert cexpr.same(S * 2, 2 * S) and not cexpr.same(S, 1) and not cexpr.is_one(S)
    for question in (lambda: S > 5, lambda: S == 1, lambda: S < T, lambda: (S - 5) // 2):
        with pytest.raises(VariableExtentError):
            question()


@pytest.mark.parametrize("convert", [int, str, lambda s: range(s), lambda s: f"{s}u", lambda s: [0, 1][s]])
def test_no_silent_number(convert):
    with pytest.raises(VariableExtentError):
        convert(S)


def test_floor_division_of_a_size():
    """A strided convolution's output size: a quotient atom, exact at every size, bracketed as a factor."""
    out = (T + 2 - 3) // 2 + 1
    assert out.c() == "((d_width - 1u) / 2u) + 1u" and out.text() == "(width-1)//2+1"
    assert [out.at({"width": w}) for w in (32, 33, 640)] == [16, 17, 320] and out.bounds() == (16, 320)
    assert (out * 4).c() == "((d_width - 1u) / 2u) * 4u + 4u" and cexpr.same(out, (T - 1) // 2 + 1)
    assert (S % 4).at({"seq": 7}) == 3


def test_fit_is_multilinear_and_confirmed_at_the_check_points():
    variables = [Variable("h", 2, 9), Variable("w", 3, 7)]
    points = samples(variables)
    assert points[0] == {"h": 9, "w": 7} and len(points) == 6
    assert all(p["h"] != p["w"] for p in points[4:])  # each variable its own size at the check points
    fitter = _Fitter(variables, points)
    assert fitter.fit([p["h"] * p["w"] * 4 + 1 for p in points]).text() == "4*h*w+1"
    assert fitter.fit([5] * len(points)) == 5
    assert fitter.fit([p["h"] // 2 for p in points]) is None  # not multilinear: refused, never guessed

"""Fits the polynomial and rational coefficients of runtime_c/include/mlcc/simd/math-scalar.h (our own
near-minimax fits, in double, by Lawson-weighted least squares; rationals linearised as in Loeb's method),
then prints them as float literals with the error of the fit alone (before float rounding: the C test
tests/kernels/test_vmath.py measures what the float code achieves).

    python scripts/fit_vmath.py
"""

from __future__ import annotations

import math

import numpy as np


def lawson(basis: np.ndarray, target: np.ndarray, weight: np.ndarray, iterations: int = 300) -> np.ndarray:
    """Coefficients c minimising max |weight * (basis @ c - target)| (approached by reweighting)."""
    lw = np.full(len(target), 1.0 / len(target))
    coef = None
    for _ in range(iterations):
        sw = np.sqrt(lw)[:, None] * weight[:, None]
        coef, *_ = np.linalg.lstsq(basis * sw, target * sw[:, 0], rcond=None)
        err = np.abs(weight * (basis @ coef - target))
        lw = lw * err
        lw /= lw.sum()
    return coef


def as_float(c: np.ndarray) -> np.ndarray:
    return c.astype(np.float32).astype(np.float64)


def show(name: str, coef, err: float) -> None:
    print(f"{name}: max error of the fit {err:.3g}")
    for i, c in enumerate(coef):
        print(f"    c{i} = {float(np.float32(c)).hex()}f  /* {np.float32(c)!r} */")


def fit_exp() -> None:
    """e^r = 1 + r + r^2 * (c2 + c3 r + c4 r^2 + c5 r^3 + c6 r^4) on |r| <= ln2 / 2, relative error."""
    r = np.linspace(-math.log(2) / 2, math.log(2) / 2, 4000)  # an even count: no r = 0
    target = (np.expm1(r) - r) / r**2
    basis = np.stack([r**k for k in range(5)], axis=1)
    weight = r**2 / np.exp(r)
    coef = lawson(basis, target, weight)
    approx = 1 + r + r**2 * (basis @ as_float(coef))
    show("exp", coef, float(np.max(np.abs(approx / np.exp(r) - 1))))


def fit_odd_rational(name: str, f, hi: float, p_terms: int, q_terms: int, relative: bool) -> None:
    """f(x) = x * P(x^2) / Q(x^2) on [0, hi] with Q(0) = 1: relative or absolute error."""
    x = np.linspace(1e-6, hi, 4001)
    y = f(x)
    t = x * x
    P = np.stack([x * t**k for k in range(p_terms)], axis=1)
    Q = np.stack([t**k for k in range(1, q_terms + 1)], axis=1)
    q_prev = np.ones_like(x)
    scale = 1 / y if relative else np.ones_like(y)
    for _ in range(8):  # Loeb: linearise with the previous denominator
        basis = np.concatenate([P, -y[:, None] * Q], axis=1)
        coef = lawson(basis, y, scale / q_prev, iterations=100)
        p, q = coef[:p_terms], coef[p_terms:]
        q_prev = 1 + Q @ q
    p, q = as_float(p), as_float(q)
    approx = (P @ p) / (1 + Q @ q)
    show(f"{name} numerator", p, float(np.max(np.abs((approx - y) * scale))))
    show(f"{name} denominator (after the leading 1)", q, float(np.max(np.abs((approx - y) * scale))))


if __name__ == "__main__":
    fit_exp()
    fit_odd_rational("erf", np.vectorize(math.erf), 4.0, 6, 5, relative=True)
    fit_odd_rational("tanh", np.tanh, 9.0, 5, 4, relative=True)

"""What the integer ops made by passes/lower_quantized_islands share: the fixed-point requantization
parameters, the weights laid out for runtime_c/kernels/qs8-gemm, and the kernel variant a target runs.

Requantization is in fixed point (a 31-bit multiplier and a right shift, as gemmlowp and TFLite), not float:
the same bits on every target, FPU or not (Cortex-M0), and within 2^-31 of the exact real product, which is
well inside one rounding of the result; it rounds exact ties half up where the reference (float, then rint)
rounds them to even - a tie needs the accumulator times the multiplier to land on .5 exactly, which
real-valued scales practically never give.
"""

from __future__ import annotations

import math

import numpy as np

from .. import kernels
from ..targets import Target

FAMILY = "qs8-gemm"
K_ALIGN = 16  # each weight row is padded with zeros to a multiple of this many bytes (one 128-bit vector)
CONV_ROWS = 64  # output pixels whose patches the convolution copies out at a time (a multiple of 16)
SIZE_CONV_ROWS = 16  # the same where memory binds (memory_policy "size"): the patches often set the arena's peak


def fixed_point(real: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """(multiplier, shift) int32 arrays with real ~= multiplier * 2^-shift, multiplier in [2^30, 2^31), shift
    in 1..62 (0 and 62 for a scale too small to move the result); None when a scale is too large."""
    mult, shift = [], []
    for r in np.asarray(real, np.float64).reshape(-1):
        if not r > 0 or not math.isfinite(r):
            return None
        fraction, exponent = math.frexp(r)  # r = fraction * 2^exponent, fraction in [0.5, 1)
        m, s = round(fraction * 2**31), 31 - exponent
        if m == 2**31:
            m, s = m // 2, s - 1
        if s > 62:
            m, s = 0, 62
        if s < 1:
            return None
        mult.append(m)
        shift.append(s)
    return np.array(mult, np.int32), np.array(shift, np.int32)


def split_sum(multipliers: list, offset, shift: int, bound: int = 255, widest: int = 21) -> dict | None:
    """The requantization of the elementwise integer ops, floor((sum_i x_i * m_i + offset + 2^(shift-1)) /
    2^shift) for operands |x_i| <= bound and int32 multipliers (scalars or per-channel arrays), in 32-bit
    arithmetic only, so a loop of it vectorises in 32-bit lanes (SIMD128 and NEON have no cheap 64-bit
    multiply): each multiplier and the offset split at bit p into high and low parts (h = m >> p, l = m & (2^p - 1)),
        low  = sum_i x_i * l_i + o_low
        high = sum_i x_i * h_i + o_high + floor(low / 2^p)
        result = floor(high / 2^(shift - p)),
    exact by floor((2^p A + B) / 2^s) = floor((A + floor(B / 2^p)) / 2^(s-p)). |low| < 2^30; o_high is clamped to
    +-(2^(shift-p+10) + D), D bounding the rest of `high`, where the result is beyond +-1024 and clamps to the
    8-bit range either way, so |high| < 2^30 too, and floors are logical shifts of the value plus 2^30. None when
    no split point keeps both below 2^30 (the caller keeps its 64-bit form). Returns {"split": p, "rest": shift - p,
    "low": [l_i], "high": [h_i], "low_offset", "high_offset"}, arrays shaped as the multipliers and offset. p is
    the largest that fits up to `widest` (15: low parts of 16 bits, and high parts too for multipliers below 2^30)."""
    n = len(multipliers)
    m = [np.asarray(v, np.int64) for v in multipliers]
    o = np.asarray(offset, np.int64) + (1 << (shift - 1))
    for p in range(min(shift, widest), -1, -1):
        if (n * bound + 1) << p >= 1 << 30:
            continue
        rest, d = shift - p, n * bound * (1 << (31 - p)) + (1 << (30 - p)) + 1
        if (1 << (rest + 10)) + 2 * d + 2 >= 1 << 30:
            return None  # a smaller p only makes rest and d larger
        cap = (1 << (rest + 10)) + d
        return {"split": p, "rest": rest, "low": [v & ((1 << p) - 1) for v in m], "high": [v >> p for v in m],
                "low_offset": o & ((1 << p) - 1), "high_offset": np.clip(o >> p, -cap, cap)}
    return None


def split_c(plan: dict, operands: list[str], high: list[str], low: list[str], high_offset: str, low_offset: str,
            y_zero: int) -> dict[str, str]:
    """split_sum's plan as C: `low`, `high` and `value` (the result plus y_zero, not yet clamped) int32
    expressions over the operands (int32 C names), given each multiplier's high and low parts and the offset's
    as C (literals or array reads; a literal high offset carries the 2^(30-p) the floor of low takes back)."""
    p, rest = plan["split"], plan["rest"]

    def sum_of(parts: list[str], offset: str, bias: int = 0) -> str:
        terms = [f"{x} * {part}" for x, part in zip(operands, parts) if part != "0"]
        if offset.lstrip("-").isdigit():
            bias += int(offset)
        elif offset:
            terms.append(offset)
        if bias:
            terms.append(str(bias))
        return " + ".join(terms).replace("+ -", "- ") or "0"

    carry = f"(int32_t)((uint32_t)(low + 1073741824) >> {p})"
    unbias = 2 ** (30 - rest) - y_zero
    value = f"(int32_t)((uint32_t)(high + 1073741824) >> {rest})" + (f" - {unbias}" if unbias > 0 else f" + {-unbias}" if unbias else "")
    return {"low": sum_of(low, low_offset), "high": f"{sum_of(high, high_offset, -(2 ** (30 - p)))} + {carry}", "value": value}


def narrow_sum(dtypes: list, zeros: list[int], multipliers: list[int], shift: int, y_zero: int, y_min: int,
               y_max: int, spread: int = 4) -> tuple[list[int], int, int] | None:
    """The requantization of an elementwise integer op over 8-bit operands (each dtype, zero point and int64
    multiplier), clamp(y_zero + floor((sum_i (x_i - zero_i) * m_i + 2^(shift-1)) / 2^shift)), as one 32-bit
    multiply-add of the raw codes and a shift: (ms, o, s) with clamp(floor((sum_i code_i * ms_i + o) / 2^s)) the
    same on every tuple of codes (checked on all of them at build time) and |sum_i code_i * ms_i + o| < 2^30, so
    the C adds 2^30 to o and floors with a logical shift. Searched from the largest s that keeps that range, a
    dozen down (not below 8), each ms_i within `spread` of m_i / 2^(shift - s); None where none fits (split_sum's form then)."""
    grids = np.meshgrid(*[np.arange(np.iinfo(d).min, np.iinfo(d).max + 1, dtype=np.int64) for d in dtypes], indexing="ij")
    codes = [g.reshape(-1) for g in grids]
    total = sum((c - z) * int(m) for c, z, m in zip(codes, zeros, multipliers)) + (1 << (shift - 1))
    exact = (total >> shift) + y_zero
    y = np.clip(exact, y_min, y_max)
    limit = 1 << 30
    top = min(shift, 30 - int(np.ceil(np.log2(np.abs(exact).max() + 2))))
    steps = sorted(np.ndindex(*[2 * spread + 1] * len(codes)), key=lambda k: sum(abs(i - spread) for i in k))
    for s in range(top, max(top - 12, 7), -1):  # a dozen shifts at most: each tries every step
        lo = np.where(y > y_min, y << s, -limit)
        hi = np.where(y < y_max, ((y + 1) << s) - 1, limit - 1)
        for step in steps:
            ms = [(int(m) >> (shift - s)) + i - spread for m, i in zip(multipliers, step)]
            t = sum(c * m for c, m in zip(codes, ms))
            low, high = int((lo - t).max()), int((hi - t).min())
            if low > high:
                continue
            o = (low + high) // 2
            if abs(o) < limit and np.abs(t + o).max() < limit:
                return ms, o, s
    return None


def padded_rows(w: np.ndarray, align: int = K_ALIGN) -> np.ndarray:
    """int8 [n, k] weights as rows of ldw bytes (k rounded up to `align`, zero padded). A depthwise
    convolution's rows are read by scalar code: align 1 keeps its 9 taps 9 bytes."""
    n, k = w.shape
    ldw = -(-k // align) * align
    out = np.zeros((n, ldw), np.int8)
    out[:, :k] = w
    return out


def folded_bias(bias: np.ndarray, w: np.ndarray, x_zero: int, a_flip: int) -> np.ndarray:
    """The kernel's int32 bias: bias + sum_p (a - x_zero) w = (bias + (flip - x_zero) * sum_p w) + sum_p a' w
    where a' = a - flip is what the kernel multiplies (flip 128 for uint8 activations, else 0)."""
    sums = w.astype(np.int64).sum(axis=1)
    folded = bias.astype(np.int64) + (a_flip - x_zero) * sums
    if np.abs(folded).max(initial=0) >= 2**31 - w.shape[1] * 128 * 128:
        raise OverflowError("folded bias leaves no room in int32")
    return folded.astype(np.int32)


def variants() -> list[dict]:
    return kernels.family(FAMILY).data["variant"]


def variant_for(target: Target) -> dict:
    """The first manifest variant whose features the target has."""
    features = set(target.features)
    for variant in variants():
        if set(variant["features"]) <= features:
            return variant
    raise AssertionError("the qs8-gemm manifest has no feature-free reference row")


def gemm_for(target: Target) -> str:
    return f"mlcc_qs8_gemm__{variant_for(target)['gemm']}"


def nchw_gemm_for(target: Target) -> str | None:
    """The target's channel-major kernel, when its variant has one."""
    variant = variant_for(target)
    return f"mlcc_qs8_gemm_nchw__{variant['nchw']}" if variant.get("nchw") else None


PANEL = 16  # qs8-packed's columns per panel (MLCC_QS8_PACKED_NR)
PATCH_BYTES = 16384  # the channels-last convolution's patches block: rows of k bytes, about a third of L1
SIZE_PATCH_BYTES = 2048  # the same where memory binds


def conv_rows(target: Target) -> int:
    """Output pixels per block of patches of a channel-major convolution on the row kernel."""
    return SIZE_CONV_ROWS if target.memory_policy == "size" else CONV_ROWS


def patch_bytes(target: Target) -> int:
    """The channels-last convolution's patches block."""
    return SIZE_PATCH_BYTES if target.memory_policy == "size" else PATCH_BYTES


def byte_pointer(ctx, value, writes: bool = False) -> str:
    """A tensor's data pointer as the qs8 kernels take it, uint8_t (an int8 tensor's bytes read with their sign
    bit flipped by the kernels' a_flip): a cast only for an int8 tensor."""
    name = ctx.ptr(value)
    if value.dtype == np.uint8:
        return name
    return f"({'' if writes else 'const '}uint8_t *){name}"


def packed_layout(target: Target, kernel: str = "mlcc_qs8_packed_gemm") -> str:
    """The order of the bytes in each quad of qs8-packed's panels for the target's form of `kernel`: "quads" (16
    columns x 4 bytes of k) or "pairs" (the manifest row's `layout`: per pair of k, 16 columns x 2 bytes, as
    a kernel that widens weights to 16 bits and multiplies pairs reads them: WebAssembly SIMD128)."""
    return kernels.kernel(target, kernel).layout or "quads"


def packed_panels(w: np.ndarray, layout: str = "quads") -> np.ndarray:
    """int8 [n, k] weights in qs8-packed's layout (runtime_c/include/mlcc/kernels/qs8-packed.h): per panel of
    16 columns, their int32 sums, then ceil(k/4) quads of 64 bytes, zero past k and n: 16 columns x 4 bytes of
    k ("quads"), or bytes 4q, 4q + 1 of the 16 columns, then bytes 4q + 2, 4q + 3 ("pairs")."""
    n, k = w.shape
    panels, quads = -(-n // PANEL), -(-k // 4)
    padded = np.zeros((panels * PANEL, quads * 4), np.int8)
    padded[:n, :k] = w
    sums = padded.sum(axis=1, dtype=np.int64).astype("<i4").reshape(panels, PANEL)
    if layout == "pairs":  # (panel, quad, pair, column, byte of the pair)
        body = padded.reshape(panels, PANEL, quads, 2, 2).transpose(0, 2, 3, 1, 4)
    else:  # (panel, quad, column, byte of the quad)
        body = padded.reshape(panels, PANEL, quads, 4).transpose(0, 2, 1, 3)
    body = body.reshape(panels, quads * PANEL * 4)
    return np.ascontiguousarray(np.concatenate([sums.view(np.int8).reshape(panels, 4 * PANEL), body], axis=1).reshape(-1))


def runs_channels_last(target: Target) -> bool:
    """Channels-last int8 where the target has a packed GEMM on its ISA, or no qs8-gemm kernel on its ISA
    either (then both layouts are scalar, and channels-last spares the transposes around the float ops). A
    target with only qs8-gemm kernels (a row or channel-major one) keeps channel-major convolutions on them."""
    if kernels.kernel(target, "mlcc_qs8_packed_gemm").where == "isa":
        return True
    return variant_for(target)["gemm"] == "reference" and nchw_gemm_for(target) is None

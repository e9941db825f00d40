"""What Gemm, MatMul, Conv and ConvTranspose share about the f32-gemm kernel family.

The kernel computes C = activation(alpha * A * B + beta * bias + residual) with A read in place through
(row, column) strides and B packed into panels of `nr` columns (runtime_c/include/mlcc/kernels/f32-gemm.h).
Here: the variant chosen from the target's features (the family's manifest), its cache blocking from the
target's cache sizes, the build-time packing of constant B (the same layout as mlcc_f32_gemm_pack_b), and
the width of the column chunks packed at run time so scratch stays bounded.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .. import cexpr, kernels, tuning
from ..ir import Value
from ..targets import Target

# Scratch a node may take for packed B columns (and col buffers): chunks keep it below this.
SCRATCH_BUDGET = 2 << 20
# The same where memory binds (a target's memory_policy "size"): row tiles of a few KiB. A tile is never
# narrower than one GEMM panel, so a long k can take more (ResNet-8's 576-deep 3x3: 2.3 KiB a pixel).
SIZE_SCRATCH_BUDGET = 4 << 10


def scratch_budget(target: Target) -> int:
    return SIZE_SCRATCH_BUDGET if target.memory_policy == "size" else SCRATCH_BUDGET


# The driver's stack buffer for packed A, in floats (MLCC_F32_GEMM_PACK_FLOATS, f32-gemm.h): 16 KB, 2 KB on
# Cortex-M, the targets without a data cache (64 KB on WebAssembly).
PACK_FLOATS = 4096
PACK_FLOATS_UNCACHED = 512


@dataclass(frozen=True)
class Blocking:
    """Cache blocking of the f32-gemm driver: kc rows of k per slice, mc rows of A per block, nc columns of B."""
    kc: int
    mc: int
    nc: int


@dataclass(frozen=True)
class Tile:
    """A kernel variant of runtime_c/kernels/f32-gemm/manifest.toml, with the blocking a target gives it."""
    name: str  # e.g. "8x32__avx512": tile, then the ISA
    mr: int
    nr: int
    isa: str
    features: tuple[str, ...] = ()
    min_vector_bytes: int = 0
    lanes: int = 0  # floats per vector of its ISA; 0 for "scalar": the target's vector width
    least_n: int = 0  # on products narrower than this the variant loses ties on multiply-adds
    blocking: Blocking | None = dataclasses.field(default=None, compare=False)

    @property
    def config(self) -> str:
        """A C expression of the kernel configuration (a `struct mlcc_f32_gemm_config`): the variant's own, or
        with this tile's blocking."""
        name = f"mlcc_f32_gemm_config_{self.name}"
        if self.blocking is None:
            return name
        b = self.blocking
        return f"MLCC_F32_GEMM_BLOCKED({name}, {b.kc}u, {b.mc}u, {b.nc}u)"


@lru_cache(maxsize=1)
def variants() -> tuple[Tile, ...]:
    """The manifest's variants, best first."""
    rows = kernels.family("f32-gemm").data["variant"]
    return tuple(Tile(r["name"], r["mr"], r["nr"], r["isa"], tuple(r["features"]), r.get("min_vector_bytes", 0),
                      r.get("lanes", 0), r.get("least_n", 0))
                 for r in rows)


def blocking(target: Target, tile: Tile) -> Blocking:
    """The driver's blocking for this tile on the target's caches. A is read in place, so L2 holds the block
    of A (mc x kc, half of it) while B streams past it in micro-panels of kc x nr (a 16th of L2, kc at most
    1024: long slices of k, each of which reads and writes all of C) from a kc x nc block the size of four
    L2s (the core's share of a last-level cache). Measured on AVX-512 and
    AVX2 (benchmarks/gemm.py --sweep): kc 1024 ahead of the L1-sized 192-384 by 0-10% in place, and reading
    rows in place ahead of packing them. The driver cuts a packed block (transposed A, or a variant that
    packs) to its stack buffer. Without a data cache, slices as long as the small stack buffer holds."""
    def down(x: float, step: int, least: int) -> int:
        return max(least, int(x) // step * step)

    if not target.l1d_bytes:
        return Blocking(PACK_FLOATS_UNCACHED // tile.mr, 1 << 16, 1 << 16)
    l2 = max(target.l2_bytes, 2 * target.l1d_bytes)
    kc = min(down(l2 / 16 / (4 * tile.nr), 16, 64), 1024)
    return Blocking(kc, down(l2 / 2 / (4 * kc), tile.mr, tile.mr), down(4 * l2 / (4 * kc), tile.nr, tile.nr))


def runnable(target: Target) -> tuple[Tile, ...]:
    """The variants whose features the target has and whose vectors fit its width, best first."""
    have = set(target.features)
    return tuple(t for t in variants() if set(t.features) <= have and t.min_vector_bytes <= target.vector_bytes)


def tile_for(target: Target, n: int | None = None) -> Tile:
    """The variant for a product of n columns, blocked for the target's caches. Without n, the first the
    target runs. With it (portable variants only where no SIMD one runs): the first whose least_n n reaches,
    unless a narrower tile issues at most three quarters of its vector multiply-adds per row and
    step of k (n rounded up to the tile, `lanes` floats a vector), counted in the narrowest vectors among
    the target's tiles: a 512-bit multiply-add issues as two 256-bit ones on AMD Zen 4 (and on Intel cores
    with one 512-bit FMA unit), so on AVX-512 an AVX2 tile that pads n less wins. Then the first issuing the
    fewest. AMD EPYC Zen 4 (benchmarks/gemm.py, + ReLU): n = 8, 8x8__avx2 66-84 GFLOP/s against 12x16__avx512's
    14-43; n = 24, 84 against 8x32__avx512's 56-62; n = 40, 91 against 85; n = 16, 32 and 48 stay AVX-512's."""
    tiles = runnable(target)
    if n is not None:
        tiles = tuple(t for t in tiles if t.isa != "scalar") or tiles

        def lanes(t: Tile) -> int:
            return t.lanes or max(1, target.vector_bytes // 4)

        narrowest = min(lanes(t) for t in tiles)

        def padded(t: Tile) -> int:
            return -(-max(n, 1) // t.nr) * t.nr

        def fmas(t: Tile) -> int:
            return -(-padded(t) // lanes(t)) * max(1, lanes(t) // narrowest)

        usual = next((t for t in tiles if n >= t.least_n), tiles[0])
        best = min(tiles, key=fmas)
        tiles = (best if 4 * fmas(best) <= 3 * fmas(usual) else usual,)
    return dataclasses.replace(tiles[0], blocking=blocking(target, tiles[0]))


CONFIG_PREFIX = "mlcc_f32_gemm_config_"  # + a tile's name: the configuration a step records (use_tile)


def tuned_tile(target: Target, node) -> Tile | None:
    """The tile a tuning file (mlcc/tuning.py) chose for this node, blocked for the target: None without one,
    or where it names a tile the target does not run."""
    name = tuning.choice(target, node, "tile")
    tile = next((t for t in runnable(target) if t.name == name), None) if name else None
    return None if tile is None else dataclasses.replace(tile, blocking=blocking(target, tile))


def use_tile(ctx, n: int | None = None) -> Tile:
    """tile_for the step being lowered (or the tuning file's tile for its node): links f32-gemm and records
    the tile on the step (a portable "scalar" tile counts as a generic form: mlcc/slow_path.py)."""
    tile = tuned_tile(ctx.target, ctx.step.node) if ctx.step is not None else None
    tile = tile or tile_for(ctx.target, n)
    ctx.uses_kernel(CONFIG_PREFIX + tile.name, "f32-gemm", "scalar" if tile.isa == "scalar" else "vector")
    return tile


def pack_b(b: np.ndarray, nr: int) -> np.ndarray:
    """B [..., k, n] -> [..., ceil(n / nr), k, nr] zero-padded: mlcc_f32_gemm_pack_b's layout."""
    *batch, k, n = b.shape
    panels = -(-n // nr)
    padded = np.zeros((*batch, k, panels * nr), dtype=np.float32)
    padded[..., :n] = b
    return np.ascontiguousarray(padded.reshape(*batch, k, panels, nr).swapaxes(-3, -2))


def packed_size(k: int, n: int, nr: int) -> int:
    """Floats in one packed B of k x n."""
    return -(-n // nr) * nr * k


def packed_constant(source: Value, b: np.ndarray, nr: int, suffix: str = "packed") -> Value:
    """A new constant holding `b` ([..., k, n], derived from `source`) packed for the kernel."""
    data = pack_b(b.astype(np.float32), nr)
    return Value(f"{source.name}_{suffix}{nr}", np.dtype(np.float32), data.shape, data)


def chunk_columns(rows: int, n: int, nr: int, extra_rows: int = 0, budget: int = SCRATCH_BUDGET) -> int:
    """Columns per run-time chunk: a multiple of nr (at least one panel) whose packed B of `rows` rows,
    plus `extra_rows` rows of other scratch, fits `budget` bytes; never more than n rounded up."""
    per_column = (rows + extra_rows) * 4
    fit = max(nr, budget // max(per_column, 1) // nr * nr)
    return min(fit, -(-n // nr) * nr)


def bias_strides(shape: tuple[int, ...], m: int, n: int) -> tuple[int, int]:
    """Row and column strides reading a bias unidirectionally broadcast to [m, n] (0 where it repeats)."""
    rows, cols = ((1, 1) + tuple(shape))[-2:]
    return (cols if rows != 1 else 0), (1 if cols != 1 else 0)


# Epilogue.activation -> the C enumerator (runtime_c/include/mlcc/activation.h)
ACTIVATIONS = {name: f"MLCC_ACTIVATION_{name.upper()}" for name in (
    "none", "relu", "clip", "leaky_relu", "sigmoid", "hard_sigmoid", "hard_swish", "silu", "tanh",
    "gelu_erf", "gelu_tanh")}


@dataclass
class Epilogue:
    """What a kernel applies to each finished output element: activation(sum + residual).

    activation: a key of ACTIVATIONS; a, b: its parameters (clip: min, max; leaky_relu: alpha; hard_sigmoid:
    alpha, beta). residual: a tensor added before the activation, element (i, j) of the product's output
    read at i * residual_rs + j * residual_cs (0 broadcasts), one matrix every residual_batch_stride elements
    for batched products (for Conv: per image; rows are output channels, columns output pixels)."""
    activation: str = "none"
    a: float = 0.0
    b: float = 0.0
    residual: Value | None = None
    residual_rs: int = 0
    residual_cs: int = 0
    residual_batch_stride: int = 0

    def fields(self, ctx, offset: str | None = None) -> dict:
        """Template values of the C struct: kind, a, b and residual (a C expression, "NULL" for none)
        advanced by `offset` elements (a C expression) when given."""
        if self.activation not in ACTIVATIONS:
            raise ValueError(f"unknown epilogue activation {self.activation!r}")
        residual = "NULL"
        if self.residual is not None:
            residual = ctx.ptr(self.residual) + (f" + {offset}" if offset else "")
        return dict(kind=ACTIVATIONS[self.activation], a=self.a, b=self.b, residual=residual,
                    rs=self.residual_rs, cs=self.residual_cs)


@dataclass
class Operand:
    """A matrix operand read in place: its tensor and its (row, column) strides in elements."""
    value: Value
    rs: int
    cs: int
    batch_stride: int = 0  # elements between consecutive matrices of a batch


def emit_gemm(ctx, m: int, n: int, k: int, a: Operand, b: Operand, out: Value, *,
              b_logical: np.ndarray | None = None, alpha: float = 1.0,
              bias: Value | None = None, bias_rs: int = 0, bias_cs: int = 0, beta: float = 1.0,
              nest=None, epilogue: Epilogue | None = None) -> None:
    """Render out = activation(alpha * A * B + beta * bias + residual) through templates/ops/gemm.c.j2.

    b_logical: B's values as [..., k, n] when B is a constant; it is then packed at build time (alpha folded
    in) and handed to the kernel as a new constant. Otherwise B is packed at run time, in column chunks.
    nest: a LoopNest over batch dims, indices giving (out, a, b) matrix numbers, or None for one product;
    the residual of an epilogue follows the output's matrix number.
    """
    tile = use_tile(ctx, cexpr.bound(n))  # tiles and chunks for the largest n: right at every size
    index = (lambda i: nest.operand_index[i]) if nest else (lambda i: 0)

    def at(ptr: str, idx: str | int, stride: int) -> str:
        return cexpr.offset(ptr, (idx, stride))

    values = dict(config=tile.config, m=m, n=n, k=k, nr=tile.nr, nest=nest,
                  a=at(ctx.ptr(a.value), index(0), a.batch_stride), a_rs=a.rs, a_cs=a.cs,
                  c=at(ctx.ptr(out), nest.out_index if nest else 0, m * n), ldc=n,
                  bias="NULL", bias_rs=0, bias_cs=0, beta=beta, alpha=alpha)
    if bias is not None and beta != 0.0:
        values.update(bias=ctx.ptr(bias), bias_rs=bias_rs, bias_cs=bias_cs)
    if b_logical is not None:
        scaled = b_logical.astype(np.float32) * np.float32(alpha) if alpha != 1.0 else b_logical
        packed = packed_constant(b.value, scaled, tile.nr)
        values.update(alpha=1.0, packed=at(ctx.constant(packed), index(1), packed_size(k, n, tile.nr)))
    else:
        nc = chunk_columns(cexpr.bound(k), cexpr.bound(n), tile.nr, budget=scratch_budget(ctx.target))
        values.update(packed=None, nc=nc, scratch=ctx.scratch(4 * packed_size(k, nc, tile.nr), "packed_b"),
                      b=at(ctx.ptr(b.value), index(1), b.batch_stride), b_rs=b.rs, b_cs=b.cs,
                      bias_chunk=values["bias"] if values["bias"] == "NULL"
                      else cexpr.offset(values["bias"], ("j0", values["bias_cs"])))
    epi = None
    if epilogue is not None:
        out_index = nest.out_index if nest else 0
        epi = epilogue.fields(ctx, cexpr.offset(None, (out_index, epilogue.residual_batch_stride),
                                                ("j0", epilogue.residual_cs if b_logical is None else 0)))
    ctx.emit("ops/gemm.c.j2", epilogue=epi, parallel=ctx.parallel(), **values)

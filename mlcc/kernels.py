"""The runtime's kernel families as data.

Every runtime_c/kernels/<family>/manifest.toml lists the family's functions (`[[kernel]]`: where each runs,
its source, its oracle), the families it calls into (`requires`) and how tests/kernels checks it (`[[test]]`);
f32-gemm's also lists its tile variants (`[[variant]]`, read by mlcc/ops/_gemm.py).
runtime_c/include/mlcc/simd/manifest.toml lists the SIMD shims in the order mlcc/isa.h picks them.

Names say what and where (mlcc/isa.h): mlcc_<dtype>_<family>_<what>__<where>, where `where` is
- `reference`: the family's oracle, plain C; the tests compare the other forms with it, and lowering calls it
  where the family has nothing faster;
- an ISA (avx512, avx2, neon, rvv, wasmsimd; `scalar` for a target without a SIMD shim): a kernel written once
  on mlcc/simd.h and built for the target's shim (`where = "shim"` in the manifest), or written on one ISA's
  intrinsics (`where = "isa"`, with its `isa` and the target `features` it needs; the f32-gemm tiles are
  [[variant]] rows instead);
- nothing: a portable driver or layout helper with no arithmetic of its own to speed up (mlcc_f32_gemm
  dispatches through the tile configuration it is handed; im2col copies).
Lowering asks `function(target, name)` for the C function a target calls.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from . import paths
from .targets import Target

WHERE = ("reference", "shim", "isa", "portable")


@dataclass(frozen=True)
class Kernel:
    """One function of a family: `name` without its suffix, `where` one of WHERE, `file` its source."""
    name: str
    family: str
    where: str
    file: str
    oracle: str  # the C function its tests compare it with ("" for a reference or a portable helper)
    isa: str = ""  # where = "isa": the ISA its intrinsics are
    features: tuple[str, ...] = ()  # where = "isa": what a target needs to build and run it
    layout: str = ""  # how this form reads weights its family packs at build time ("": the family's own)

    def function(self, shim: str) -> str:
        """The C function built for a target whose SIMD shim is `shim`."""
        suffix = {"reference": "reference", "shim": shim, "isa": self.isa}.get(self.where)
        return f"{self.name}__{suffix}" if suffix else self.name

    def runs_on(self, target: Target) -> bool:
        return set(self.features) <= set(target.features)


@dataclass(frozen=True)
class Family:
    name: str
    folder: Path
    requires: tuple[str, ...]
    kernels: tuple[Kernel, ...]
    tests: tuple[dict, ...]
    data: dict  # the whole manifest (f32-gemm's [[variant]] rows)


def kernels_dir() -> Path:
    return paths.runtime_dir() / "kernels"


def _load(folder: Path) -> Family:
    with (folder / "manifest.toml").open("rb") as f:
        data = tomllib.load(f)
    kernels = []
    for row in data.get("kernel", []):
        if row["where"] not in WHERE:
            raise ValueError(f"{folder.name}/manifest.toml: {row['name']}: where must be one of {WHERE}")
        oracle = row.get("oracle", f"{row['name']}__reference" if row["where"] in ("shim", "isa") else "")
        kernels.append(Kernel(row["name"], folder.name, row["where"], row["file"], oracle, row.get("isa", ""),
                              tuple(row.get("features", ())), row.get("layout", "")))
    return Family(folder.name, folder, tuple(data.get("requires", ())), tuple(kernels), tuple(data.get("test", ())), data)


@lru_cache(maxsize=1)
def families() -> dict[str, Family]:
    """Every family with a manifest, by name (the freestanding C library stand-ins have none: no kernels)."""
    return {p.parent.name: _load(p.parent) for p in sorted(kernels_dir().glob("*/manifest.toml"))}


def family(name: str) -> Family:
    return families()[name]


@lru_cache(maxsize=1)
def shims() -> tuple[dict, ...]:
    with (paths.runtime_dir() / "include" / "mlcc" / "simd" / "manifest.toml").open("rb") as f:
        return tuple(tomllib.load(f)["shim"])


def shim_isa(target: Target) -> str:
    """The SIMD shim the target's kernels are built on (mlcc/isa.h's MLCC_ISA): "scalar" without one."""
    have = set(target.features)
    return next((s["isa"] for s in shims() if set(s["features"]) <= have), "scalar")


@lru_cache(maxsize=None)
def _by_name() -> dict[str, list[Kernel]]:
    by_name: dict[str, list[Kernel]] = {}
    for f in families().values():
        for k in f.kernels:
            by_name.setdefault(k.name, []).append(k)
    return by_name


def kernel(target: Target, name: str) -> Kernel:
    """The manifest row a target calls for a kernel named without suffix (e.g. "mlcc_f32_pool_max_nhwc"): the
    first of its forms on one ISA the target runs (in manifest order), else its form on the SIMD shim or
    the portable one, else its reference."""
    rows = _by_name().get(name)
    if not rows:
        raise KeyError(f"no kernel family's manifest lists {name!r} (runtime_c/kernels/*/manifest.toml)")
    rank = {"isa": 0, "shim": 1, "portable": 1, "reference": 2}
    return min((k for k in rows if k.where != "isa" or k.runs_on(target)), key=lambda k: rank[k.where])


def form(target: Target, k: Kernel) -> str:
    """How the target builds a kernel: "vector" (one ISA's intrinsics, or the SIMD shim), "scalar" (the shim
    lane by lane: the target has no SIMD shim), "reference" (the oracle) or "portable" (a driver)."""
    if k.where == "shim":
        return "scalar" if shim_isa(target) == "scalar" else "vector"
    return {"isa": "vector"}.get(k.where, k.where)


def by_function(target: Target, function: str) -> Kernel:
    """The manifest row of a C function as the target builds it (e.g. mlcc_qs8_gemm__avx2)."""
    shim = shim_isa(target)
    for rows in _by_name().values():
        for k in rows:
            if k.function(shim) == function:
                return k
    raise KeyError(f"no kernel family's manifest builds {function!r} for {target.name}")


def function(target: Target, name: str) -> str:
    """The C function the target calls for kernel `name`: e.g. mlcc_f32_pool_max_nhwc__avx512 on AVX-512,
    mlcc_f32_pool_max_nhwc__scalar on a target without a SIMD shim."""
    return kernel(target, name).function(shim_isa(target))

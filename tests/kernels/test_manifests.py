"""The kernel families' manifests (runtime_c/kernels/<family>/manifest.toml, read by mlcc/kernels.py) agree
with the C: every family has one, with an oracle and a test; the functions a family's objects define are
exactly the ones its manifest names, suffixed for the ISA they were built for (mlcc/isa.h), never __simd; the
SIMD shim table (runtime_c/include/mlcc/simd/manifest.toml) picks the shim mlcc/isa.h picks on every target;
and f32-gemm's tile variants agree with f32-gemm.h's extern list, MLCC_F32_GEMM_MAX_MR/NR, gemm.c's packing
cases and each variant's source. Objects are built (and cached) by mlcc's toolchain for x86_64-avx512."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from mlcc import kernels, paths, sizes, toolchain
from mlcc.ops._gemm import variants
from mlcc.targets import all_targets, host_target

FAMILIES = sorted(kernels.families())
GEMM = kernels.kernels_dir() / "f32-gemm"


def test_every_family_folder_has_a_manifest():
    # freestanding/ is the runtime's stand-in for the C library on targets without one, threadpool/ its optional
    # thread pool (mlcc/threadpool.h): neither is a kernel family
    folders = {p.name for p in kernels.kernels_dir().iterdir()
               if p.is_dir() and p.name not in ("freestanding", toolchain.THREAD_POOL)}
    assert folders == set(FAMILIES)


@pytest.mark.parametrize("family", FAMILIES)
def test_manifest_rows(family):
    fam = kernels.family(family)
    names = {(k.name, k.where) for k in fam.kernels}
    assert len({(k.name, k.where, k.isa) for k in fam.kernels}) == len(fam.kernels), "a kernel listed twice"
    assert any(k.where == "reference" for k in fam.kernels), f"{family} has no __reference oracle"
    for k in fam.kernels:
        assert (fam.folder / k.file).is_file(), f"{k.name}: no {k.file}"
        assert "simd" not in k.name and "scalar" not in k.name, f"{k.name}: the suffix is the manifest's `where`"
        if k.where in ("shim", "isa"):
            assert k.oracle.endswith("__reference") and (k.oracle[:-len("__reference")], "reference") in names, \
                f"{k.name}: its oracle {k.oracle} is not a reference of {family}"
    listed = {k.file for k in fam.kernels} | {v["file"] for v in fam.data.get("variant", []) if "file" in v}
    assert {p.name for p in fam.folder.glob("*.c")} == listed, "a source no manifest row names, or the reverse"
    assert set(fam.requires) <= set(FAMILIES)
    assert fam.tests, f"{family} has no [[test]]"
    for test in fam.tests:
        path = paths.runtime_dir().parent / test["pytest"] if "pytest" in test else \
            paths.runtime_dir().parent / "tests" / "kernels" / test["harness"]
        assert path.is_file(), path
        assert set(test.get("families", [])) <= set(FAMILIES)


def _tile_functions(row: dict) -> set[str]:
    """What an f32-gemm [[variant]] row's source defines: its configuration, tile and row kernels."""
    tile = row["name"].split("__")[0]
    return {f"mlcc_f32_gemm_config_{row['name']}", f"mlcc_f32_gemm_ukernel_{tile}__{row['isa']}",
            f"mlcc_f32_gemm_ukernel_1x{row['nr']}__{row['isa']}"}


def test_objects_define_what_the_manifests_name():
    # The host target, whose objects the model builds of the other tests have cached already (a fixed one,
    # x86_64-avx512, compiled every family cold on an AVX-512 VNNI host: 100-250 s); the __scalar names of
    # targets without a shim come from the same macro, which test_shim_table_matches_isa_header checks.
    target = host_target()
    target_name = target.name
    isa = kernels.shim_isa(target)
    have = set(target.features)
    for family in FAMILIES:
        fam = kernels.family(family)
        defined = set()
        for obj in toolchain.kernel_objects(target, [family]):
            defined |= sizes.elf_symbols(obj.read_bytes())[0]
        # kernels on another ISA's intrinsics build to nothing here
        want = {k.function(isa) for k in fam.kernels if k.runs_on(target)}
        for v in fam.data.get("variant", []):
            if family == "f32-gemm" and set(v["features"]) <= have:
                want |= _tile_functions(v)
        assert not {s for s in defined if "__simd" in s}
        assert defined == want, f"{family} on {target_name}: defined but not in the manifest " \
            f"{sorted(defined - want)}, in the manifest but not defined {sorted(want - defined)}"


def test_shim_table_matches_isa_header():
    """mlcc/kernels.shim_isa (the table) and mlcc/isa.h's MLCC_ISA (the compiler's macros) on every target."""
    include = str(paths.runtime_dir() / "include")
    for target in all_targets().values():
        flags = [f for f in toolchain.compile_flags(target, [include]) if not f.startswith("-W")]
        proc = subprocess.run([sys.executable, "-m", "ziglang", "cc", *flags, "-E", "-P", "-x", "c", "-"],
                              input='#include "mlcc/isa.h"\nisa MLCC_ISA\n', capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        assert f"isa {kernels.shim_isa(target)}" in proc.stdout.splitlines(), f"{target.name}: {proc.stdout}"


def test_gemm_header_and_driver_agree_with_the_variants():
    header = (paths.runtime_dir() / "include" / "mlcc" / "kernels" / "f32-gemm.h").read_text()
    externs = set(re.findall(r"extern const struct mlcc_f32_gemm_config mlcc_f32_gemm_config_(\w+);", header))
    assert externs == {v.name for v in variants()}
    max_mr = int(re.search(r"#define MLCC_F32_GEMM_MAX_MR (\d+)u", header).group(1))
    max_nr = int(re.search(r"#define MLCC_F32_GEMM_MAX_NR (\d+)u", header).group(1))
    assert (max_mr, max_nr) == (max(v.mr for v in variants()), max(v.nr for v in variants()))
    # pack_a's unrolled cases are for tile heights the manifest has (any other height takes the general loop)
    driver = (GEMM / "gemm.c").read_text()
    pack_a = driver[driver.index("static void pack_a("):driver.index("\n}\n", driver.index("static void pack_a("))]
    assert {int(m) for m in re.findall(r"mr == (\d+)", pack_a)} <= {v.mr for v in variants()}


@pytest.mark.parametrize("variant", variants(), ids=lambda v: v.name)
def test_gemm_variant_source_defines_its_row(variant):
    rows = {r["name"]: r for r in kernels.family("f32-gemm").data["variant"]}
    source = (GEMM / rows[variant.name]["file"]).read_text()
    tile = variant.name.split("__")[0]
    assert tile == f"{variant.mr}x{variant.nr}"
    for macro, value in [("MR", f"{variant.mr}u"), ("NR", f"{variant.nr}u"),
                         ("TILE", f"mlcc_f32_gemm_ukernel_{tile}__{variant.isa}"),
                         ("ROW", f"mlcc_f32_gemm_ukernel_1x{variant.nr}__{variant.isa}"),
                         ("CONFIG", f"mlcc_f32_gemm_config_{variant.name}")]:
        assert re.search(rf"^#define {macro} {value}$", source, re.M), f"{rows[variant.name]['file']}: {macro}"
    if variant.isa != "scalar":
        shim = paths.runtime_dir() / "include" / "mlcc" / "simd" / f"{variant.isa}.h"
        assert shim.is_file() and f'"mlcc/simd/{variant.isa}.h"' in source

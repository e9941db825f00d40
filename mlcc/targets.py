"""Targets are data: one TOML file per target in targets/. `host` resolves to the best one this machine runs."""

from __future__ import annotations

import dataclasses
import platform
import tomllib
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from . import paths
from .errors import UsageError


@dataclass(frozen=True)
class Target:
    name: str
    description: str
    triple: str  # zig target triple
    cpu: str  # zig -mcpu value ("" for the triple's default)
    cflags: tuple[str, ...]
    ldflags: tuple[str, ...]
    features: tuple[str, ...]  # ISA features kernel variants select on
    vector_bytes: int
    alignment: int
    libc: bool
    artifacts: tuple[str, ...]  # artifact kinds: shared_library, static_library, wasm, executable, firmware
    runner: str  # host | wasmtime | qemu | qemu-system
    aliases: tuple[str, ...] = ()
    machine: str = ""  # platform.machine() of hosts that run it natively
    cpu_flags: tuple[str, ...] = ()  # /proc/cpuinfo flags a host needs to run it natively
    host_priority: int = 0  # among targets this host runs, the highest is `host`
    qemu: tuple[str, ...] = field(default=())  # qemu-user command (runner "qemu") or qemu-system one ("qemu-system")
    board: str = ""  # runtime_c/boards/<board>: startup, linker script of the firmware artifact
    qemu_min_version: str = ""  # oldest qemu-user that runs this target's code correctly
    conv_layout: str = "NCHW"  # activations' layout in convolutional regions: NCHW or NHWC (passes/choose_layout)
    l1d_bytes: int = 32768  # per-core data caches the kernels block for (0: none); ops/_gemm.blocking
    l2_bytes: int = 262144
    # SIMD registers a kernel may hold at once (mlcc/simd/<isa>.h's MLCC_F32V_REGISTERS): ymm0-15 on AVX2,
    # zmm0-31 on AVX-512, v0-31 on AArch64; how wide a register tile can be (ops/_conv_direct)
    vector_registers: int = 16
    # k per group (channels x taps) up to which f32-conv's direct kernel beats a packed GEMM per group
    # (ops/_conv_direct): it reads A unpacked, one broadcast per input element and pixel. AVX-512,
    # ShuffleNet's grouped 1x1, thread CPU time per group (min of 1000): 28x28 k 34 n 34 31 vs 49 us,
    # 14x14 k 68 n 68 18 vs 19, 7x7 k 136 n 136 18 vs 16.5
    direct_conv_max_group_k: int = 96
    # k (channels x taps) up to which an ungrouped convolution of few input channels (a stem) runs on the
    # direct kernel rather than im2col + f32-gemm; None: any k. AMD Zen 4, ResNet-50's 7x7 stem (k 147),
    # whole model, thread CPU medians alternating in one process: im2col 0.98-0.99x the time on AVX2 and
    # AVX-512; ResNet-8's 3x3 (k 27) within the noise either way
    direct_conv_max_k: int | None = None
    # the part's memory (0: not bounded, a hosted target): report.json compares the plan with them
    ram_bytes: int = 0
    flash_bytes: int = 0
    # "size": kernels take workspaces of a few KiB (im2col in small row tiles, channels-last activations so
    # 1x1 and depthwise convolutions need none); "speed": workspaces up to ops/_gemm.SCRATCH_BUDGET
    memory_policy: str = "speed"
    # "model": the weights blob is no larger than the model's own weights (no build-time Winograd transform);
    # "speed": transforms may enlarge the weights for speed
    weights_policy: str = "speed"
    # the ISA the generated C was chosen for, in GCC and Clang spelling: what a build's CMakeLists.txt
    # compiles with (zig's -mcpu names are Zig's own); empty for the triple's baseline
    portable_cflags: tuple[str, ...] = ()
    # the runtime's thread pool built into the libraries ("pthreads": runtime_c/kernels/threadpool, declared in
    # mlcc/threadpool.h), an mlcc_parallel for NAME_run_parallel; "" for none (the caller brings its own)
    thread_pool: str = ""
    # large steps cut into tasks for NAME_run_parallel's parallel-for (mlcc/parallel.h); false on single-core
    # parts, where NAME_run_parallel runs every step on the calling thread and the stack bound stays tight
    parallel_steps: bool = True
    # per-layer choices measured by `mlcc tune` (mlcc/tuning.Tuning), set by `mlcc build --tuning FILE`
    tuning: object = field(default=None, compare=False, repr=False)

    @property
    def is_wasm(self) -> bool:
        return self.triple.startswith("wasm")


OPTIMIZE_FOR = ("size", "speed")
POLICIES = {"memory_policy": ("size", "speed"), "weights_policy": ("model", "speed")}


def optimized_for(target: Target, goal: str | None) -> Target:
    """The target as `mlcc build --optimize-for` asks: "size" takes small workspaces and the model's own
    weights, "speed" lets both grow, None keeps the target's own policies. Where memory binds, convolutions
    run channels-last: their 1x1 and depthwise kernels read activations in place, with no workspace."""
    if goal is not None and goal not in OPTIMIZE_FOR:
        raise UsageError(f"--optimize-for {goal!r}: expected one of {', '.join(OPTIMIZE_FOR)}")
    if goal == "size":
        target = dataclasses.replace(target, memory_policy="size", weights_policy="model")
    elif goal == "speed":
        target = dataclasses.replace(target, memory_policy="speed", weights_policy="speed")
    if target.memory_policy == "size" and target.conv_layout != "NHWC":
        target = dataclasses.replace(target, conv_layout="NHWC")
    return target


def with_weights_policy(target: Target, policy: str) -> Target:
    """The target with its weights policy replaced (BuildOptions.weights_policy: e.g. to take the "model"
    policy's load-time preparation on a host target)."""
    if policy not in POLICIES["weights_policy"]:
        raise UsageError(f"weights policy {policy!r}: expected one of {', '.join(POLICIES['weights_policy'])}")
    return dataclasses.replace(target, weights_policy=policy)


def _load(path: Path) -> Target:
    with path.open("rb") as f:
        data = tomllib.load(f)
    tupled = {k: tuple(v) if isinstance(v, list) else v for k, v in data.items()}
    for key, allowed in POLICIES.items():
        if tupled.get(key, "speed") not in allowed:
            raise RuntimeError(f"{path}: {key} {tupled[key]!r} is not one of {', '.join(allowed)}")
    return Target(**tupled)


@lru_cache(maxsize=1)
def all_targets() -> dict[str, Target]:
    found = {}
    for path in sorted(paths.targets_dir().glob("*.toml")):
        target = _load(path)
        if target.name != path.stem:
            raise RuntimeError(f"{path}: name {target.name!r} differs from the file name")
        found[target.name] = target
    return found


def _host_cpu_flags() -> set[str]:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return set()
    for line in text.splitlines():
        if line.startswith(("flags", "Features")):
            return set(line.split(":", 1)[1].split())
    return set()


@lru_cache(maxsize=1)
def host_target() -> Target:
    machine, flags = platform.machine(), _host_cpu_flags()
    runnable = [
        t for t in all_targets().values()
        if t.runner == "host" and t.machine == machine and set(t.cpu_flags) <= flags
    ]
    if not runnable:
        raise UsageError(f"no target in targets/ runs natively on this {machine} machine")
    return max(runnable, key=lambda t: t.host_priority)


def resolve(name: str) -> Target:
    if name == "host":
        return host_target()
    targets = all_targets()
    if name in targets:
        return targets[name]
    for target in targets.values():
        if name in target.aliases:
            return target
    valid = ", ".join(["host", *targets])
    raise UsageError(f"unknown target {name!r}; valid targets: {valid}")

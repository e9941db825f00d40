"""Bare-metal builds executed on emulated boards (qemu-system-arm: cortex-m4 on mps2-an386, cortex-m55 on
mps3-an547), in the default run: the sample, one graph per family of ops and element types (the cross
targets' four), the MLPerf Tiny models in fp32, the firmware sample, and how a fault or a hang is reported.
The per-op sweep on both boards is documented in tests/targets/README.md.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest

from benchmarks import models as benchmark_models
from mlcc import firmware, runners, sizes
from mlcc.errors import RunError
from mlcc.pipeline import BuildOptions, build
from mlcc.targets import resolve
from tests.golden import check_model, rand
from tests.models.test_samples import SAMPLE, synthetic_image
from tests.targets.test_cross import (
    check_mlcc_run,
    double_and_half_graph,
    float_network,
    graph_model,
    integer_and_index_graph,
    quantized_and_recurrent_graph,
)

ROOT = Path(__file__).resolve().parents[2]
BOARDS = ["cortex-m4", "cortex-m55"]
MLPERF_TINY = ["ds_cnn_kws", "resnet8", "mobilenet_v1_025_vww", "fc_autoencoder"]
FAMILIES = {"float_network": (float_network, 1e-4, 1e-5), "integers": (integer_and_index_graph, 0, 0),
            "double_and_float16": (double_and_half_graph, 1e-3, 1e-3),
            "quantized_and_recurrent": (quantized_and_recurrent_graph, 1e-4, 1e-5)}


@pytest.mark.parametrize("target", BOARDS)
def test_sample_model(target, tmp_path):
    check_model(onnx.load(str(SAMPLE)), {"image": synthetic_image()}, target, tmp_path, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("target", BOARDS)
def test_op_families(target, family, tmp_path):
    make, rtol, atol = FAMILIES[family]
    model, feeds = make()
    check_model(model, feeds, target, tmp_path, rtol=rtol, atol=atol)


@pytest.mark.parametrize("model", MLPERF_TINY)
@pytest.mark.parametrize("target", BOARDS)
def test_mlperf_tiny_fp32(target, model, tmp_path):
    proto = benchmark_models.SUITE[model]()
    feeds = {i.name: rand(*[d.dim_value for d in i.type.tensor_type.shape.dim], seed=21) for i in proto.graph.input}
    check_model(proto, feeds, target, tmp_path, rtol=1e-4, atol=1e-5)


@pytest.fixture(scope="module")
def built_sample(tmp_path_factory):
    return build(SAMPLE, BuildOptions(target="cortex-m4", out_dir=tmp_path_factory.mktemp("board") / "digits"))


def test_build_makes_library_and_firmware_image(built_sample):
    out, report = built_sample
    assert report["artifacts"] == {"static_library": "libdigits_cnn.a", "firmware": "digits_cnn_firmware.elf"}
    header = (out / "digits_cnn_firmware.elf").read_bytes()[:20]
    assert header[:4] == b"\x7fELF" and header[4] == 1 and header[18] == 40, "a 32-bit ELF for Arm"


def _relink(out: Path, main_c: str, tmp_path: Path) -> None:
    """Replaces the firmware image with one whose main is `main_c` (the same startup, script and link)."""
    (out / "main.c").write_text(main_c)
    target = resolve("cortex-m4")
    script = f"mlcc_runtime/boards/{target.board}.ld"
    sources = ["main.c", "mlcc_runtime/boards/startup.c", "mlcc_runtime/boards/semihost.c"]
    subprocess.run([sys.executable, "-m", "ziglang", "cc", *firmware.link_command(target, sources, "libdigits_cnn.a", script,
                    "digits_cnn_firmware.elf")], cwd=out, check=True)


def test_fault_is_one_line(built_sample, tmp_path):
    out = tmp_path / "faulty"
    subprocess.run(["cp", "-r", str(built_sample[0]), str(out)], check=True)
    _relink(out, "int main(void) { return *(volatile int *)0xF0000000u; }\n", tmp_path)
    with pytest.raises(RunError, match=r"failed \(the processor faulted\): fault: \w+ at pc 0x[0-9a-f]{8} \(CFSR") as info:
        runners.load(out).run({"image": synthetic_image()})
    assert "\n" not in str(info.value)


def test_hang_stops_at_the_timeout(built_sample, tmp_path):
    out = tmp_path / "hangs"
    subprocess.run(["cp", "-r", str(built_sample[0]), str(out)], check=True)
    _relink(out, "int main(void) { for (;;) {} }\n", tmp_path)
    model = runners.load(out)
    with pytest.raises(RunError, match=r"ran past 2 s \(qemu-system-arm stopped\)"):
        model.execute([synthetic_image()], [np.empty((1, 10), np.float32)], timeout=2)


def test_mlcc_run_on_the_board(built_sample, tmp_path):
    out, _ = built_sample
    check_mlcc_run(out, tmp_path)


def test_missing_emulator_is_one_error(built_sample, monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(RunError, match=r"qemu-system-arm not found: install it \(Debian: apt-get install qemu-system-arm\)"):
        runners.load(built_sample[0])


def test_firmware_links_what_the_compiler_calls_on_its_own(tmp_path):
    """An LSTM (its cell descriptor is zeroed by __aeabi_memclr4) and Pow, as in Silero VAD: the library needs
    compiler runtime helpers, and the documented link line (NAME_firmware.elf's) provides them. No soft-double
    helper is among them: the runtime's powf works in float (cb0e9b8)."""
    n = onnx.helper.make_node
    nodes = [n("LSTM", ["seq", "W", "R", "B"], ["Y", "Y_h"], hidden_size=5), n("Abs", ["Y_h"], ["a"]),
             n("Pow", ["a", "e"], ["p"])]
    inits = {"W": rand(1, 20, 4, seed=16) * 0.5, "R": rand(1, 20, 5, seed=17) * 0.5, "B": rand(1, 40, seed=18) * 0.1,
             "e": np.array(1.7, np.float32)}
    feeds = {"seq": rand(6, 2, 4, seed=20)}
    model = graph_model(nodes, feeds, {"p": (onnx.TensorProto.FLOAT, [1, 2, 5]), "Y": (onnx.TensorProto.FLOAT, [6, 1, 2, 5])}, inits)
    check_model(model, feeds, "cortex-m4", tmp_path, rtol=1e-5, atol=1e-6)
    out = tmp_path / "out-cortex-m4"
    _, needed = sizes.archive_symbols((out / "libmodel.a").read_bytes())
    assert any(s.startswith("__aeabi_memclr") for s in needed), sorted(needed)
    assert not any(s.startswith("__aeabi_d") for s in needed), sorted(needed)
    assert sizes.elf_symbols((out / "model_firmware.elf").read_bytes())[1] == set()
    assert "-nostdlib" not in firmware.link_command(resolve("cortex-m4"), ["main.c"], "libmodel.a", "board.ld", "x.elf")


@pytest.mark.parametrize("target", BOARDS)
def test_stack_bound_holds_on_the_board(target, tmp_path):
    """report.json's stack depth (static: frames over the call graph) is an upper bound of the depth the
    board measures by painting, and a tight one; flash and RAM add up per artifact."""
    out, report = build(SAMPLE, BuildOptions(target=target, out_dir=tmp_path / "digits"))
    loaded = runners.load(out)
    loaded.run({"image": synthetic_image()})
    static, measured = report["size"]["stack_bytes"], loaded.stack_bytes
    assert 0 < measured <= static <= measured * 1.25, (static, measured)
    path = report["stack"]["deepest_path"]
    assert path[0] == "digits_cnn_run" and "digits_cnn_steps" in path[1:3], path  # run_v may be inlined
    for kind, s in report["size"]["artifacts"].items():
        assert s["flash_bytes"] == s["code_bytes"] + s["rodata_bytes"] + s["data_bytes"]
        arena = 0 if kind == "firmware" else report["arena_bytes"]
        assert s["ram_bytes"] == arena + static + s["data_bytes"] + s["bss_bytes"]
    image = report["size"]["artifacts"]["firmware"]
    assert image["bss_bytes"] >= report["arena_bytes"] and image["stack_region_bytes"] >= static


def test_model_without_inputs(tmp_path):
    """All its inputs folded away: the harness still hands run_v a (non-NULL) input table."""
    n = onnx.helper.make_node
    value = onnx.numpy_helper.from_array(rand(2, 3, seed=4), "c")
    model = graph_model([n("Constant", [], ["k"], value=value), n("Relu", ["k"], ["y"])], {},
                        {"y": (onnx.TensorProto.FLOAT, [2, 3])})
    check_model(model, {}, "cortex-m4", tmp_path, rtol=0, atol=0)


def test_model_larger_than_the_board_builds_its_library_and_refuses_to_run(tmp_path):
    x = rand(1, 1100, seed=1)
    model = graph_model([onnx.helper.make_node("MatMul", ["x", "w"], ["y"])], {"x": x},
                        {"y": (onnx.TensorProto.FLOAT, [1, 1000])}, {"w": rand(1100, 1000, seed=2)})  # 4.4 MB
    path = tmp_path / "big.onnx"
    onnx.save(model, str(path))
    out, report = build(path, BuildOptions(target="cortex-m4", out_dir=tmp_path / "out"))
    assert report["artifacts"] == {"static_library": "libbig.a"}
    with pytest.raises(RunError, match=r"does not fit the memory of the emulated board mps2-an386"):
        runners.load(out)

"""Linux cross targets under qemu-user, in the default run: the sample model and a few small graphs that
together cover the op families and element types most likely to differ between ISAs (32-bit size_t and
64-bit integer division on armv7, vector lengths, float16, double, fused multiply-add), plus the runner's
command line. The full sweep (one case per op test, samples, zoo) is documented in tests/targets/README.md.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from mlcc import runners
from mlcc.errors import RunError
from mlcc.pipeline import BuildOptions, build
from mlcc.runners.qemu import qemu_command
from mlcc.targets import resolve
from tests.golden import check_model, check_sizes, rand
from tests.models.test_samples import SAMPLE, synthetic_image

CROSS = ["aarch64", "armv7", "riscv64", "riscv64-scalar"]


def graph_model(nodes, inputs: dict, outputs: dict, initializers: dict | None = None, opset: int = 17) -> onnx.ModelProto:
    """inputs: name -> array (graph inputs); outputs: name -> (TensorProto type, shape)."""
    graph = helper.make_graph(
        nodes, "cross",
        [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape) for n, a in inputs.items()],
        [helper.make_tensor_value_info(n, t, s) for n, (t, s) in outputs.items()],
        [numpy_helper.from_array(np.asarray(a), n) for n, a in (initializers or {}).items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model


def float_network() -> tuple[onnx.ModelProto, dict]:
    """Conv (strided, padded, bias) -> Relu -> MaxPool -> depthwise Conv -> GlobalAveragePool -> Gemm ->
    LayerNormalization -> Softmax, with a MatMul branch through Erf/Tanh/Sigmoid/Exp, a Resize, a Transpose,
    a ReduceMean and a Concat."""
    n = helper.make_node
    nodes = [
        n("Conv", ["x", "w1", "b1"], ["c1"], strides=[2, 2], pads=[1, 1, 1, 1]),
        n("Relu", ["c1"], ["r1"]),
        n("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
        n("Conv", ["p1", "wd"], ["c2"], group=8, pads=[1, 1, 1, 1], kernel_shape=[3, 3]),
        n("Resize", ["c2", "", "scales"], ["up"], mode="linear"),
        n("GlobalAveragePool", ["up"], ["g"]),
        n("Flatten", ["g"], ["f"]),
        n("Gemm", ["f", "wg", "bg"], ["h"], transB=1),
        n("LayerNormalization", ["h", "gamma", "beta"], ["ln"], axis=-1),
        n("Softmax", ["ln"], ["probs"], axis=-1),
        n("MatMul", ["t", "wm"], ["m"]),
        n("Erf", ["m"], ["e"]),
        n("Tanh", ["e"], ["th"]),
        n("Sigmoid", ["m"], ["sg"]),
        n("Mul", ["th", "sg"], ["prod"]),
        n("Exp", ["prod"], ["ex"]),
        n("Transpose", ["ex"], ["tr"], perm=[0, 2, 1]),
        n("ReduceMean", ["tr"], ["rm"], axes=[2], keepdims=0),
        n("Concat", ["probs", "rm"], ["joined"], axis=1),
    ]
    inits = {"w1": rand(8, 3, 3, 3, seed=1) * 0.3, "b1": rand(8, seed=2), "wd": rand(8, 1, 3, 3, seed=3),
             "scales": np.array([1, 1, 2, 2], np.float32), "wg": rand(10, 8, seed=4), "bg": rand(10, seed=5),
             "gamma": rand(10, seed=6), "beta": rand(10, seed=7), "wm": rand(19, 6, seed=8) * 0.3}
    feeds = {"x": rand(1, 3, 20, 20, seed=9), "t": rand(1, 5, 19, seed=10)}
    return graph_model(nodes, feeds, {"joined": (TensorProto.FLOAT, [1, 16])}, inits), feeds


def integer_and_index_graph() -> tuple[onnx.ModelProto, dict]:
    """64-bit integer arithmetic (division and modulo: library calls on armv7), int32, uint8, bool, Gather
    with negative indices, ArgMax, TopK, CumSum, Where, Cast."""
    n = helper.make_node
    nodes = [
        n("Div", ["a", "b"], ["q"]),
        n("Mod", ["a", "b"], ["r"], fmod=0),
        n("Mul", ["q", "b"], ["qb"]),
        n("Add", ["qb", "r"], ["a_again"]),
        n("CumSum", ["a_again", "axis"], ["cs"]),
        n("Gather", ["x", "idx"], ["gx"], axis=1),
        n("ArgMax", ["gx"], ["am"], axis=1, keepdims=0),
        n("TopK", ["x", "k"], ["tv", "ti"], axis=1),
        n("Greater", ["x", "zero"], ["pos"]),
        n("Where", ["pos", "x", "zero"], ["relu"]),
        n("Cast", ["relu"], ["u8"], to=TensorProto.UINT8),
        n("Cast", ["x"], ["i32"], to=TensorProto.INT32),
        n("Abs", ["i32"], ["abs32"]),
    ]
    a = np.array([[7, -7, 2**40 + 3, -(2**35) - 1, 100, 0]], np.int64)
    b = np.array([[2, 3, -5, 7, -9, 11]], np.int64)
    feeds = {"a": a, "b": b, "x": rand(3, 12, seed=11) * 10}
    inits = {"axis": np.array(1, np.int64), "idx": np.array([0, -1, 5, -12, 3], np.int64), "k": np.array([4], np.int64),
             "zero": np.array(0, np.float32)}
    outputs = {"cs": (TensorProto.INT64, [1, 6]), "r": (TensorProto.INT64, [1, 6]), "am": (TensorProto.INT64, [3]),
               "tv": (TensorProto.FLOAT, [3, 4]), "ti": (TensorProto.INT64, [3, 4]), "u8": (TensorProto.UINT8, [3, 12]),
               "abs32": (TensorProto.INT32, [3, 12])}
    return graph_model(nodes, feeds, outputs, inits), feeds


def double_and_half_graph() -> tuple[onnx.ModelProto, dict]:
    """double arithmetic and float16 in and out (widened to float inside)."""
    n = helper.make_node
    nodes = [
        n("Sqrt", ["d"], ["sd"]),
        n("Div", ["sd", "d2"], ["qd"]),
        n("Log", ["qd"], ["ld"]),
        n("Add", ["h", "h"], ["hh"]),
        n("Relu", ["hh"], ["hr"]),
        n("Cast", ["hr"], ["hd"], to=TensorProto.DOUBLE),
        n("ReduceSum", ["hd", "axes"], ["hs"], keepdims=1),
        n("Mul", ["ld", "hs"], ["out"]),
    ]
    feeds = {"d": np.abs(rand(4, 6, seed=12, dtype=np.float64)) + 0.5, "d2": np.abs(rand(4, 6, seed=13, dtype=np.float64)) + 0.5,
             "h": rand(4, 6, seed=14).astype(np.float16)}
    outputs = {"out": (TensorProto.DOUBLE, [4, 6]), "hr": (TensorProto.FLOAT16, [4, 6])}
    return graph_model(nodes, feeds, outputs, {"axes": np.array([1], np.int64)}), feeds


def quantized_and_recurrent_graph() -> tuple[onnx.ModelProto, dict]:
    """QuantizeLinear -> QLinearMatMul (int8 products, int32 sums) -> DequantizeLinear, and an LSTM."""
    n = helper.make_node
    nodes = [
        n("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
        n("QLinearMatMul", ["xq", "xs", "xz", "wq", "ws", "wz", "ys", "yz"], ["yq"]),
        n("DequantizeLinear", ["yq", "ys", "yz"], ["y"]),
        n("LSTM", ["seq", "W", "R", "B"], ["Y", "Y_h"], hidden_size=5),
    ]
    rng = np.random.default_rng(15)
    inits = {"xs": np.float32(0.05), "xz": np.int8(3), "wq": rng.integers(-60, 60, (8, 6)).astype(np.int8),
             "ws": np.float32(0.02), "wz": np.int8(-2), "ys": np.float32(0.1), "yz": np.int8(1),
             "W": rand(1, 20, 4, seed=16) * 0.5, "R": rand(1, 20, 5, seed=17) * 0.5, "B": rand(1, 40, seed=18) * 0.1}
    feeds = {"x": rand(3, 8, seed=19), "seq": rand(6, 2, 4, seed=20)}
    outputs = {"y": (TensorProto.FLOAT, [3, 6]), "Y": (TensorProto.FLOAT, [6, 1, 2, 5]), "Y_h": (TensorProto.FLOAT, [1, 2, 5])}
    return graph_model(nodes, feeds, outputs, inits), feeds


@pytest.mark.parametrize("target", CROSS)
def test_sample_model(target, tmp_path):
    check_model(onnx.load(str(SAMPLE)), {"image": synthetic_image()}, target, tmp_path, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("target", CROSS)
def test_float_network(target, tmp_path):
    model, feeds = float_network()
    check_model(model, feeds, target, tmp_path, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("target", CROSS)
def test_integers_and_indexing(target, tmp_path):
    model, feeds = integer_and_index_graph()
    check_model(model, feeds, target, tmp_path, rtol=0, atol=0)


@pytest.mark.parametrize("target", CROSS)
def test_double_and_float16(target, tmp_path):
    model, feeds = double_and_half_graph()
    check_model(model, feeds, target, tmp_path, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("target", CROSS)
def test_quantized_and_recurrent(target, tmp_path):
    model, feeds = quantized_and_recurrent_graph()
    check_model(model, feeds, target, tmp_path, rtol=1e-4, atol=1e-5)


@pytest.fixture(scope="module")
def built_sample(tmp_path_factory):
    out, report = build(SAMPLE, BuildOptions(target="armv7", out_dir=tmp_path_factory.mktemp("cross") / "digits"))
    return out, report


def test_build_makes_static_library_and_runner(built_sample):
    out, report = built_sample
    assert report["artifacts"] == {"static_library": "libdigits_cnn.a", "executable": "digits_cnn_runner"}
    header = (out / "digits_cnn_runner").read_bytes()[:20]
    assert header[:4] == b"\x7fELF" and header[4] == 1 and header[18] == 40, "a 32-bit ELF for Arm"
    assert report["code_bytes"]["executable"] > 0


def test_runner_command_line(built_sample, tmp_path):
    out, _ = built_sample
    qemu = qemu_command(resolve("armv7"))
    image, result = tmp_path / "image.bin", tmp_path / "probs.bin"
    image.write_bytes(synthetic_image().tobytes())
    run = lambda *args: subprocess.run([*qemu, str(out / "digits_cnn_runner"), *map(str, args)],  # noqa: E731
                                       capture_output=True, text=True)
    timed = run("--warmup", 1, "--repeat", 3, image, result)
    assert timed.returncode == 0, timed.stderr
    assert len([line for line in timed.stdout.splitlines() if line.startswith("run_ns ")]) == 3
    assert abs(float(np.fromfile(result, np.float32).sum()) - 1.0) < 1e-5
    assert run(image).returncode == 1  # an output path is missing: usage
    image.write_bytes(b"short")
    refused = run(image, result)
    assert refused.returncode == 2 and "takes exactly 3136 bytes" in refused.stderr


def check_mlcc_run(out, tmp_path) -> None:
    """`mlcc run` on the sample's build folder `out` through npz files: the probabilities it writes sum to 1."""
    np.savez(tmp_path / "in.npz", image=synthetic_image())
    proc = subprocess.run([sys.executable, "-m", "mlcc", "run", str(out), "--inputs", str(tmp_path / "in.npz"),
                           "--outputs", str(tmp_path / "out.npz")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert abs(float(np.load(tmp_path / "out.npz")["probabilities"].sum()) - 1.0) < 1e-5


def test_mlcc_run_executes_under_qemu(built_sample, tmp_path):
    out, _ = built_sample
    check_mlcc_run(out, tmp_path)


def test_runner_override_and_unknown_runner(built_sample):
    out, _ = built_sample
    with pytest.raises(RunError, match="no runner 'nosuch'"):
        runners.load(out, runner="nosuch")
    with pytest.raises(RunError, match=r"runner 'host' runs shared library artifacts; .* has none: its runners are qemu"):
        runners.load(out, runner="host")


def test_run_time_dimensions_under_qemu(tmp_path):
    """One build with a run-time width on armv7 (32-bit size_t): the driver takes the sizes with --dims,
    reads inputs and writes outputs packed at their shapes and prints the shapes; three widths match
    onnxruntime, and a width outside the range is refused by the C (status 4, nothing written) and by
    `mlcc run` (one error line)."""
    n = helper.make_node
    nodes = [n("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]), n("Relu", ["c"], ["r"]),
             n("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1),
             n("ReduceMean", ["p"], ["m"], axes=[2], keepdims=0), n("Transpose", ["m"], ["t"], perm=[0, 2, 1]),
             n("MatMul", ["t", "wm"], ["y"])]
    graph = helper.make_graph(nodes, "dims", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 6, "W"])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              [numpy_helper.from_array(rand(4, 2, 3, 3, seed=3), "w"),
                               numpy_helper.from_array(rand(4, 5, seed=4), "wm")])
    model = onnx.shape_inference.infer_shapes(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))
    feeds = lambda w: {"x": rand(1, 2, 6, w, seed=w)}  # noqa: E731
    report = check_sizes(model, feeds, [3, 10, 33], "armv7", tmp_path, rtol=1e-4, atol=1e-5, dims={"W": (3, 40)})
    assert report["outputs"][0]["dims"] == [1, "(W-1)//2+1", 5]  # ceil(W / 2)
    out = tmp_path / "out-armv7"
    image, result = tmp_path / "x.bin", tmp_path / "y.bin"
    run = lambda width: subprocess.run([*qemu_command(resolve("armv7")), str(out / "model_runner"), "--dims",  # noqa: E731
                                        str(width), image, result], capture_output=True, text=True)
    image.write_bytes(rand(1, 2, 6, 2).tobytes())
    refused = run(2)
    assert refused.returncode == 3 and "run_dims returned status 4" in refused.stderr and not result.exists()
    image.write_bytes(rand(1, 2, 6, 41).tobytes())  # more than the largest input: the driver refuses the file
    assert run(41).returncode == 2 and not result.exists()
    np.savez(tmp_path / "wide.npz", x=rand(1, 2, 6, 41))
    proc = subprocess.run([sys.executable, "-m", "mlcc", "run", str(out), "--inputs", str(tmp_path / "wide.npz")],
                          capture_output=True, text=True)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1
    assert proc.stderr.startswith("error: ") and "W must be within 3..40" in proc.stderr

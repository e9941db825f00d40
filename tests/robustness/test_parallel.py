"""NAME_run_parallel on the runtime's thread pool (mlcc/threadpool.h): the large steps are cut into tasks,
and every output is bit-identical for 1, 2 and 3 threads (1 is NAME_run_v) and matches onnxruntime. The
models route each kernel that splits through a step large enough to split: a direct stem, pointwise,
Winograd, depthwise, im2col (stride 2), grouped direct and grouped GEMM convolutions with fused residuals
(one reading a channel shuffle through its table of channels), max and average pooling, a GEMV, a tall product and a wide
one (its tiles numbered down panels of B), and attention. A ThreadSanitizer build of a C driver on the pool
fails on any data race."""

from __future__ import annotations

import base64
import json
import subprocess
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from mlcc import runners
from mlcc.pipeline import BuildOptions, build
from mlcc.verify import compare, reference_outputs
from tests.golden import rand
from tests.passes.test_recognise_attention import bert_heads, constants
from tests.passes.util import make
from tests.robustness.harness import STRICT, compile_c, run, system_gcc
from tests.web_runners import needs_chromium, needs_node

THREADS = (2, 3)


def _conv_net() -> onnx.ModelProto:
    rng = np.random.default_rng(0)
    inits, nodes = [], []

    def const(name, array):
        inits.append(numpy_helper.from_array(np.asarray(array, np.float32), name))
        return name

    def conv(x, cin, cout, k, stride=1, group=1, act=True, residual=None, name=""):
        w = const(f"{name}_w", rng.standard_normal((cout, cin // group, k, k)) * np.sqrt(2 / (cin // group * k * k)))
        b = const(f"{name}_b", rng.standard_normal(cout) * 0.1)
        nodes.append(helper.make_node("Conv", [x, w, b], [f"{name}_c"], name=name, kernel_shape=[k, k],
                                      strides=[stride, stride], pads=[k // 2] * 4, group=group))
        y = f"{name}_c"
        if residual is not None:
            nodes.append(helper.make_node("Add", [y, residual], [f"{name}_sum"], name=f"{name}_add"))
            y = f"{name}_sum"
        if act:
            nodes.append(helper.make_node("Relu", [y], [f"{name}_y"], name=f"{name}_relu"))
            y = f"{name}_y"
        return y

    x = conv("image", 3, 32, 3, stride=2, name="stem")                  # direct, 3 input channels
    x = conv(x, 32, 48, 1, name="expand")                                 # pointwise
    x = conv(x, 48, 48, 3, residual=x, name="winograd")                   # Winograd, residual fused
    x = conv(x, 48, 48, 3, group=48, name="depthwise")                    # depthwise
    for pool in ("MaxPool", "AveragePool"):                               # pools: rows, borders in the pads
        nodes.append(helper.make_node(pool, [x], [f"{pool}_y"], name=pool, kernel_shape=[3, 3], pads=[1, 1, 1, 1]))
        x = f"{pool}_y"
    x = conv(x, 48, 64, 3, stride=2, name="down")                         # im2col
    x = conv(x, 64, 64, 1, group=4, residual=x, name="grouped")           # grouped direct, residual fused
    # a channel shuffle, folded into the next grouped convolution's reads through the direct kernel's table
    inits += [numpy_helper.from_array(np.array(shape, np.int64), name)
              for name, shape in (("split", [1, 4, 16, 24, 24]), ("merge", [1, 64, 24, 24]))]
    nodes += [helper.make_node("Reshape", [x, "split"], ["parts"], name="split"),
              helper.make_node("Transpose", ["parts"], ["swapped"], perm=[0, 2, 1, 3, 4], name="swap"),
              helper.make_node("Reshape", ["swapped", "merge"], ["shuffled"], name="merge")]
    x = conv("shuffled", 64, 64, 3, group=64, act=False, name="shuffled_depthwise")
    x = conv(x, 64, 64, 1, group=4, name="shuffled_grouped")
    nodes.append(helper.make_node("MaxPool", [x], ["halved"], name="halve", kernel_shape=[2, 2], strides=[2, 2]))
    x = conv("halved", 64, 256, 1, name="widen")
    x = conv(x, 256, 256, 1, group=2, residual=x, name="wide_grouped")  # grouped GEMM: 18 row tiles x 4 panels
    x = conv(x, 256, 256, 1, group=16, name="narrow_grouped")  # grouped direct: 12 rows x 16 groups, cut mid-row
    nodes.append(helper.make_node("GlobalAveragePool", [x], ["pooled"], name="pool"))
    nodes.append(helper.make_node("Flatten", ["pooled"], ["features"], name="flatten"))
    w = const("fc_w", rng.standard_normal((256, 4072)) * 0.1)
    nodes.append(helper.make_node("Gemm", ["features", w], ["logits"], name="fc"))  # a GEMV, a part group at its end
    graph = helper.make_graph(nodes, "conv_net", [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, 96, 96])],
                              [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 4072])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def _attention_net() -> onnx.ModelProto:
    batch, seq, heads, dim = 1, 100, 4, 32
    nodes, inputs, outputs = bert_heads("a_", batch=batch, seq=seq, heads=heads, dim=dim)
    rng = np.random.default_rng(1)
    w = numpy_helper.from_array((rng.standard_normal((heads * dim, 300)) * 0.1).astype(np.float32), "proj_w")
    nodes.append(helper.make_node("MatMul", ["a_y", "proj_w"], ["proj"], name="proj"))  # a tall product
    outputs.append(helper.make_tensor_value_info("proj", TensorProto.FLOAT, [batch, seq, 300]))
    # a wide one, its tiles numbered down panels of B (half of B outweighs half of A and C), ends partial
    wide = numpy_helper.from_array((rng.standard_normal((heads * dim, 2000)) * 0.1).astype(np.float32), "wide_w")
    nodes.append(helper.make_node("MatMul", ["a_y", "wide_w"], ["wide"], name="wide"))
    outputs.append(helper.make_tensor_value_info("wide", TensorProto.FLOAT, [batch, seq, 2000]))
    return make(nodes, inputs, outputs, [*constants(batch, seq, heads, dim), w, wide], opset=17)


MODELS = {"conv_net": _conv_net, "attention": _attention_net}


def _feeds(model: onnx.ModelProto) -> dict[str, np.ndarray]:
    feeds = {i.name: rand(*[d.dim_value for d in i.type.tensor_type.shape.dim], seed=n)
             for n, i in enumerate(model.graph.input)}
    if "a_mask" in feeds:
        feeds["a_mask"] = np.where(np.random.default_rng(2).random(feeds["a_mask"].shape) < 0.3, -1e4, 0).astype(np.float32)
    return feeds


@pytest.mark.parametrize("name", sorted(MODELS))
def test_any_thread_count_gives_the_same_bits(name, tmp_path):
    model = MODELS[name]()
    path = tmp_path / "model.onnx"
    onnx.save(model, str(path))
    out_dir, report = build(path, BuildOptions(target="host", out_dir=tmp_path / "out"))
    feeds = _feeds(model)
    loaded = runners.load(out_dir)
    single = loaded.run(feeds)
    expected, _ = reference_outputs(model, feeds, list(single))
    for output, value in single.items():
        result = compare(value, expected[output], 1e-4, 1e-4)
        assert result.ok, f"{output}: max abs err {result.max_abs:.3g}, max rel err {result.max_rel:.3g}"
    for threads in THREADS:
        loaded.use_threads(threads)
        for _ in range(3):  # the pool's workers take tasks in a different order each time
            got = loaded.run(feeds)
            for output, value in single.items():
                assert np.array_equal(got[output], value), (
                    f"{output} with {threads} threads differs from one thread by up to "
                    f"{np.abs(got[output] - value).max():.3g}")
    loaded.close()
    _check_task_profile(out_dir, report, feeds, single)


def _check_task_profile(out_dir: Path, report: dict, feeds: dict, single: dict) -> None:
    """The instrumented build on 2 threads (what benchmarks/threads.py tabulates) gives the same bits, counts
    tasks only in the steps that call a _parallel kernel, and no thread's time inside a step's tasks exceeds
    that step's wall time; its serial form cuts the same tasks and times each one."""
    from mlcc import bench

    steps = len(report["steps"])
    profiled = bench.HostProfiled(out_dir, report, bench.resolve("host"), feeds, steps, threads=2)
    _, walls, _, calls, tasks, busy = profiled.run_tasks(2)
    for spec, got in zip(report["outputs"], profiled._buffers[1]):
        assert np.array_equal(got, single[spec["name"]]), spec["name"]
    split = np.array([bool(s.get("parallel")) for s in report["steps"]])
    assert tasks[:, split].sum() > 0 and not tasks[:, ~split].any() and not calls[:, ~split].any()
    assert ((tasks > 0) == (calls > 0)).all() and (tasks >= calls).all()
    assert (busy.sum(axis=2)[tasks == 0] == 0).all() and (busy.sum(axis=2)[tasks > 0] > 0).all()
    assert (busy.max(axis=2) <= walls).all()
    # serial: the same tasks one by one on the calling thread (the schedule benchmarks/threads.py simulates)
    profiled._buffers[1][0].fill(np.nan)
    _, walls, serial_tasks, task_ns = profiled.run_serial(1)
    for spec, got in zip(report["outputs"], profiled._buffers[1]):
        assert np.array_equal(got, single[spec["name"]]), spec["name"]
    assert (serial_tasks == tasks[:1]).all()
    timed = np.minimum(serial_tasks[0], task_ns.shape[2])
    assert all((task_ns[0, i, :n] > 0).all() and not task_ns[0, i, n:].any() for i, n in enumerate(timed))
    assert (task_ns.sum(axis=2) <= walls).all()


CUT_CHECK = r"""
#include <stdio.h>
#include "mlcc/parallel.h"
/* every cut of `units` into tasks for `threads` claimers: consecutive, non-empty, covering [0, units), and
 * each thread's share (tasks / threads consecutive tasks) within one unit of the others' */
int main(void)
{
    for (size_t threads = 2; threads <= 4; ++threads)
        for (size_t tasks = 2; tasks <= 16; ++tasks)
            for (size_t units = tasks; units <= 200; ++units) {
                size_t least = units, most = 0, end = 0;
                const size_t per_share = tasks % threads == 0 ? tasks / threads : 0;
                for (size_t i = 0; i < tasks; ++i) {
                    const size_t b = mlcc_parallel_share_begin(units, tasks, threads, i);
                    const size_t e = mlcc_parallel_share_begin(units, tasks, threads, i + 1);
                    if (b != end || e <= b) return printf("task %zu of %zu over %zu: [%zu, %zu)\n", i, tasks, units, b, e), 1;
                    end = e;
                }
                for (size_t s = 0; per_share != 0 && s < threads; ++s) {
                    const size_t b0 = mlcc_parallel_share_begin(units, tasks, threads, s * per_share);
                    const size_t b1 = mlcc_parallel_share_begin(units, tasks, threads, s * per_share + 1);
                    const size_t e0 = mlcc_parallel_share_begin(units, tasks, threads, (s + 1) * per_share - 1);
                    const size_t e1 = mlcc_parallel_share_begin(units, tasks, threads, (s + 1) * per_share);
                    /* the task a share's thread claims first (the caller's at its front) is the largest */
                    if (per_share > 1 && (s == 0 ? b1 - b0 < e1 - e0 : e1 - e0 < b1 - b0))
                        return printf("%zu tasks over %zu units, %zu threads: share %zu grows\n", tasks, units,
                                      threads, s), 1;
                    least = e1 - b0 < least ? e1 - b0 : least;
                    most = e1 - b0 > most ? e1 - b0 : most;
                }
                if (end != units || (per_share != 0 && most > least + 1))
                    return printf("%zu tasks over %zu units, %zu threads: end %zu, shares %zu..%zu\n", tasks, units,
                                  threads, end, least, most), 1;
            }
    return 0;
}
"""


def test_tasks_cut_into_even_shares_per_thread(tmp_path):
    """mlcc_parallel_share_begin: the tasks cover every unit once, none empty, the threads' shares of units
    (the caller's from the front, the workers' from the back) differ by one unit at most, whatever the
    remainder (14 rows in 8 tasks: 7 and 7, not 8 and 6), and in each share the task its thread claims first
    is the largest, so the last ones, where the threads meet, are small."""
    source, exe = tmp_path / "cut.c", tmp_path / "cut"
    source.write_text(CUT_CHECK)
    runtime = Path(__file__).resolve().parents[2] / "runtime_c" / "include"
    build = subprocess.run([system_gcc(), *STRICT, f"-I{runtime}", str(source), "-o", str(exe)], capture_output=True,
                           text=True)
    assert build.returncode == 0, build.stderr[-3000:]
    proc = run([exe], tmp_path)
    assert proc.returncode == 0, proc.stdout


def test_no_data_race_on_the_pool(tmp_path):
    """The conv net through NAME_run_parallel on a pool of 3 threads under ThreadSanitizer, against
    NAME_run_v's bytes (tests/robustness/parallel.c)."""
    model = _conv_net()
    path = tmp_path / "model.onnx"
    onnx.save(model, str(path))
    out_dir, report = build(path, BuildOptions(target="host", out_dir=tmp_path / "out", name="net", compile=False))
    exe = tmp_path / "parallel"
    compile_c(out_dir, report, "parallel.c", exe, ["-O1", "-g", "-fsanitize=thread", "-pthread"])
    sizes = [int(np.prod(t["shape"])) * np.dtype(t["dtype"]).itemsize for t in report["inputs"] + report["outputs"]]
    proc = run([exe, 3, 4, len(report["inputs"]), *sizes], tmp_path)
    assert "ThreadSanitizer" not in proc.stderr, proc.stderr[-6000:]
    assert proc.returncode == 0, proc.stdout + proc.stderr[-4000:]
    assert "identical" in proc.stdout, proc.stdout



# wasm32-threads: NAME.mjs's pool of workers on one shared memory (node's worker_threads; Web Workers in
# Chromium), against the same build loaded on one thread, and the fallback to one thread without shared memory.
WASM_THREADS = (1, 2, 4)
WASM_DRIVER = Path(__file__).with_name("wasm_threads.mjs")
PAGE_FOLDER = Path(runners.__file__).with_name("web")  # the chromium runner's blank page


@pytest.fixture(scope="module")
def wasm_threads_builds(tmp_path_factory):
    """name -> (build folder, input folder with input<i>.bin, feeds): each model built once."""
    built = {}

    def get(name):
        if name not in built:
            tmp = tmp_path_factory.mktemp(f"wasm_threads_{name}")
            model = MODELS[name]()
            onnx.save(model, str(tmp / "model.onnx"))
            out_dir, _ = build(tmp / "model.onnx", BuildOptions(target="wasm32-threads", out_dir=tmp / "out", name=name))
            feeds = _feeds(model)
            for i, value in enumerate(feeds.values()):
                (tmp / f"input{i}.bin").write_bytes(value.tobytes())
            built[name] = (out_dir, tmp, model, feeds)
        return built[name]

    return get


def _outputs(folder: Path, model: onnx.ModelProto, label: str, run: int) -> list[np.ndarray]:
    return [np.fromfile(folder / f"output{i}-{label}-{run}.bin", np.float32) for i in range(len(model.graph.output))]


@needs_node
@pytest.mark.parametrize("name", sorted(MODELS))
def test_wasm_threads_give_the_same_bits_in_node(name, wasm_threads_builds):
    out_dir, folder, model, feeds = wasm_threads_builds(name)
    proc = subprocess.run(["node", str(WASM_DRIVER), str(out_dir / f"{name}.mjs"), str(folder), *map(str, WASM_THREADS)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-4000:]
    loads = {load["label"]: load for load in json.loads(proc.stdout)}
    assert [loads[f"t{t}"]["threads"] for t in WASM_THREADS] == list(WASM_THREADS)
    assert loads["fallback"]["threads"] == 1 and loads["fallback"]["workerTasks"] == 0
    assert sum(loads[f"t{t}"]["workerTasks"] for t in WASM_THREADS) > 0, f"no task ran on a worker: {loads}"
    single = _outputs(folder, model, "t1", 0)
    expected, _ = reference_outputs(model, feeds, [o.name for o in model.graph.output])
    for value, output in zip(single, model.graph.output):
        result = compare(value.reshape(expected[output.name].shape), expected[output.name], 1e-4, 1e-4)
        assert result.ok, f"{output.name}: max abs err {result.max_abs:.3g}, max rel err {result.max_rel:.3g}"
    for label in [*(f"t{t}" for t in WASM_THREADS), "fallback"]:
        for repeat in range(2):
            for got, value, output in zip(_outputs(folder, model, label, repeat), single, model.graph.output):
                assert np.array_equal(got, value), (
                    f"{output.name} on {label} (run {repeat}) differs from one thread by up to {np.abs(got - value).max():.3g}")


@needs_node
@needs_chromium
def test_wasm_threads_in_chromium(wasm_threads_builds):
    """A cross-origin isolated page (COOP/COEP headers) runs the pool of Web Workers; the same page served
    without them falls back to one thread; both give the bits of node's one-thread run."""
    from mlcc.runners.devtools import Browser, Page, StaticServer

    out_dir, folder, model, feeds = wasm_threads_builds("conv_net")
    if not (folder / "output0-t1-0.bin").exists():
        subprocess.run(["node", str(WASM_DRIVER), str(out_dir / "conv_net.mjs"), str(folder), "1"], check=True,
                       capture_output=True, timeout=300)
    single = _outputs(folder, model, "t1", 0)
    (image,) = feeds.values()
    encoded = base64.b64encode(image.tobytes()).decode()
    browser = Browser()
    try:
        for isolated, threads in ((True, 2), (False, 1)):
            server = StaticServer(isolated=isolated)
            try:
                page = Page(browser)
                page.navigate(server.mount(PAGE_FOLDER) + "index.html")
                url = server.mount(out_dir) + "conv_net.mjs"
                got = page.evaluate(f"""import({json.dumps(url)}).then(async (m) => {{
                    const model = await m.load(undefined, {{ threads: 2 }});
                    const image = Uint8Array.from(atob({json.dumps(encoded)}), (c) => c.charCodeAt(0));
                    model.run({{ image: new Float32Array(image.buffer) }});  // the first run prepares Winograd's weights
                    const logits = model.run({{ image: new Float32Array(image.buffer) }}).logits;
                    const bytes = new Uint8Array(logits.buffer);
                    let text = "";
                    for (let i = 0; i < bytes.length; i++) text += String.fromCharCode(bytes[i]);
                    const result = {{ isolated: crossOriginIsolated, threads: model.threads, logits: btoa(text) }};
                    model.close();
                    return result;
                }})""")
                page.close()
            finally:
                server.close()
            assert (got["isolated"], got["threads"]) == (isolated, threads), got
            logits = np.frombuffer(base64.b64decode(got["logits"]), np.float32)
            assert np.array_equal(logits, single[0]), f"isolated={isolated}: differs from one thread in node"
    finally:
        browser.close()


def test_run_time_sizes_in_parallel(tmp_path):
    """NAME_run_dims_parallel: a convolution stack over a run-time height and width (a strided one on im2col,
    a Winograd one with its residual fused), one build, gives at each size on 2 threads the bits of
    NAME_run_dims and matches onnxruntime."""
    n = helper.make_node
    rng = np.random.default_rng(3)
    inits = [numpy_helper.from_array((rng.standard_normal(s) * 0.2).astype(np.float32), name)
             for name, s in (("w1", (32, 3, 3, 3)), ("w2", (32, 32, 3, 3)))]
    nodes = [n("Conv", ["x", "w1"], ["c1"], pads=[1, 1, 1, 1], strides=[2, 2]), n("Relu", ["c1"], ["r1"]),
             n("Conv", ["r1", "w2"], ["c2"], pads=[1, 1, 1, 1]), n("Add", ["c2", "r1"], ["y"])]
    graph = helper.make_graph(nodes, "dims", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, "H", "W"])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    model = onnx.shape_inference.infer_shapes(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))
    onnx.save(model, str(tmp_path / "model.onnx"))
    out_dir, _ = build(tmp_path / "model.onnx", BuildOptions(target="host", out_dir=tmp_path / "out",
                                                             dims={"H": (16, 96), "W": (16, 96)}))
    loaded = runners.load(out_dir)
    for size in ((17, 96), (64, 40)):
        feeds = {"x": rand(1, 3, *size, seed=size[0])}
        loaded.use_threads(1)
        single = loaded.run(feeds)["y"]
        expected, _ = reference_outputs(model, feeds, ["y"])
        assert compare(single, expected["y"], 1e-4, 1e-4).ok
        loaded.use_threads(2)
        assert np.array_equal(loaded.run(feeds)["y"], single), f"2 threads differ at {size}"
    loaded.close()


@needs_node
def test_wasm_threads_run_time_sizes(tmp_path):
    """A wasm32-threads build with a run-time dimension runs NAME_run_dims_parallel on the workers: the
    same bits as one thread at a size that splits (64 rows) and one that does not (7)."""
    rng = np.random.default_rng(3)
    w = numpy_helper.from_array(rng.standard_normal((256, 256)).astype(np.float32), "w")
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "rows",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["seq", 256])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["seq", 256])], [w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(tmp_path / "rows.onnx"))
    out_dir, _ = build(tmp_path / "rows.onnx", BuildOptions(target="wasm32-threads", out_dir=tmp_path / "out",
                                                            dims={"seq": (1, 64)}))
    loaded = runners.load(out_dir)
    feeds = [{"x": rand(seq, 256, seed=seq)} for seq in (7, 64)]
    single = [loaded.run(f)["y"] for f in feeds]
    np.testing.assert_allclose(single[1], feeds[1]["x"] @ numpy_helper.to_array(w), rtol=1e-4, atol=1e-4)
    loaded.use_threads(2)
    for f, expected in zip(feeds, single):
        got = loaded.run(f)["y"]
        assert np.array_equal(got, expected), f"seq {len(got)}: 2 threads differ from 1 by {np.abs(got - expected).max():.3g}"

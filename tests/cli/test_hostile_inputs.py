"""Hostile inputs (issue 7): each is refused with exit 2 and one `error:` line naming what and where, fast,
leaving no output folder and nothing else behind; hostile names compile to correct code."""

import os
import time

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from mlcc import cli
from tests.cli.test_cli import assert_one_line_error, mlcc, tiny_model
from tests.golden import check_model

F, I64 = TensorProto.FLOAT, TensorProto.INT64
SECONDS = 20  # "a few seconds", with slack for a loaded machine


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def save(path, nodes, inputs, outputs, inits=(), opsets=(("", 17),), name="g"):
    model = helper.make_model(helper.make_graph(nodes, name, inputs, outputs, list(inits)),
                              opset_imports=[helper.make_opsetid(d, v) for d, v in opsets])
    model.ir_version = 8
    path.write_bytes(model.SerializeToString())
    return path


def refused(tmp_path, model, *needles, args=(), commands=("build",)):
    """Each command exits 2 with one error line holding the needles, quickly, writing nothing."""
    before = set(tmp_path.rglob("*"))
    for command in commands:
        extra = ["-o", tmp_path / "out"] if command == "build" else []
        started = time.monotonic()
        proc = mlcc(command, model, *extra, *args, cwd=tmp_path, timeout=120)
        assert time.monotonic() - started < SECONDS, f"{command} took {time.monotonic() - started:.1f} s"
        assert_one_line_error(proc, *needles)
    assert set(tmp_path.rglob("*")) == before  # no output folder, no staging folder, no mlcc-out


# --- unreadable files ----------------------------------------------------------------------------

def test_truncated_file(tmp_path):
    good = tiny_model(tmp_path / "good.onnx").read_bytes()
    (tmp_path / "cut.onnx").write_bytes(good[: len(good) // 2])
    refused(tmp_path, tmp_path / "cut.onnx", "cut.onnx", "not a readable ONNX model", commands=("build", "inspect", "verify"))


def test_empty_file(tmp_path):
    (tmp_path / "zero.onnx").write_bytes(b"")
    refused(tmp_path, tmp_path / "zero.onnx", "zero.onnx", "no ONNX graph")


def test_random_bytes(tmp_path):
    (tmp_path / "noise.onnx").write_bytes(np.random.default_rng(7).integers(0, 256, 4096, dtype=np.uint8).tobytes())
    refused(tmp_path, tmp_path / "noise.onnx", "noise.onnx", commands=("build", "inspect"))


@pytest.mark.parametrize("seed", range(6))
def test_bit_flipped_model_is_refused_or_correct(tmp_path, seed):
    """One flipped bit: either a clean one-line refusal or a model that still builds (then it is valid)."""
    data = bytearray(tiny_model(tmp_path / "good.onnx", dims=(2, 3), ops=("Relu", "Neg")).read_bytes())
    rng = np.random.default_rng(seed)
    data[int(rng.integers(len(data)))] ^= 1 << int(rng.integers(8))
    (tmp_path / "flip.onnx").write_bytes(bytes(data))
    started = time.monotonic()
    proc = mlcc("build", tmp_path / "flip.onnx", "-o", tmp_path / "out", cwd=tmp_path)
    assert time.monotonic() - started < SECONDS
    if proc.returncode == 0:
        assert (tmp_path / "out" / "report.json").is_file()
    else:
        assert_one_line_error(proc)  # names the file, or the input or node the flip damaged
        assert not (tmp_path / "out").exists()


# --- graph structure -----------------------------------------------------------------------------

def test_graph_without_outputs(tmp_path):
    model = save(tmp_path / "m.onnx", [helper.make_node("Relu", ["x"], ["y"])], [vi("x", F, [2])], [], name="lonely")
    refused(tmp_path, model, "no outputs", "lonely", commands=("build", "inspect"))


def test_graph_without_anything(tmp_path):
    refused(tmp_path, save(tmp_path / "m.onnx", [], [], []), "no outputs")


def test_graph_without_nodes_passes_its_input_through(tmp_path):
    # no nodes but an output: a valid identity model, compiled (not refused) and correct
    model = helper.make_model(helper.make_graph([], "g", [vi("x", F, [2, 3])], [vi("x", F, [2, 3])]),
                              opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    check_model(model, {"x": np.arange(6, dtype=np.float32).reshape(2, 3)}, "host", tmp_path)


def test_reads_a_tensor_nobody_produces(tmp_path):
    model = save(tmp_path / "m.onnx", [helper.make_node("Add", ["x", "ghost"], ["y"], name="adder")],
                 [vi("x", F, [2])], [vi("y", F, [2])])
    refused(tmp_path, model, "'ghost'", "adder", "m.onnx")


def test_cycle_between_nodes(tmp_path):
    nodes = [helper.make_node("Relu", ["b"], ["a"], name="n1"), helper.make_node("Relu", ["a"], ["b"], name="n2"),
             helper.make_node("Add", ["x", "b"], ["y"], name="n3")]
    refused(tmp_path, save(tmp_path / "m.onnx", nodes, [vi("x", F, [2])], [vi("y", F, [2])]), "topologically sorted", "n1")


def test_unknown_op(tmp_path):
    model = save(tmp_path / "m.onnx", [helper.make_node("Frobnicate", ["x"], ["y"], name="fz")], [vi("x", F, [2])], [vi("y", F, [2])])
    refused(tmp_path, model, "Frobnicate", commands=("build", "inspect"))


def test_unknown_domain(tmp_path):
    model = save(tmp_path / "m.onnx", [helper.make_node("Relu", ["x"], ["y"], name="rz", domain="com.nowhere")],
                 [vi("x", F, [2])], [vi("y", F, [2])], opsets=(("", 17), ("com.nowhere", 1)))
    refused(tmp_path, model, "com.nowhere", "'rz'")
    listed = mlcc("inspect", model, cwd=tmp_path)  # inspect reports what a build would refuse
    assert listed.returncode == 0 and "unsupported ops (1): Relu (rz)" in listed.stdout, listed.stderr


def test_domain_without_opset_import(tmp_path):
    model = save(tmp_path / "m.onnx", [helper.make_node("Relu", ["x"], ["y"], domain="com.nowhere")],
                 [vi("x", F, [2])], [vi("y", F, [2])])
    refused(tmp_path, model, "com.nowhere")


def test_duplicate_graph_outputs(tmp_path):
    model = save(tmp_path / "m.onnx", [helper.make_node("Relu", ["x"], ["y"])], [vi("x", F, [2])],
                 [vi("y", F, [2]), vi("y", F, [2])])
    refused(tmp_path, model, "'y'", "twice")


def test_missing_graph_output(tmp_path):
    model = save(tmp_path / "m.onnx", [helper.make_node("Relu", ["x"], ["y"])], [vi("x", F, [2])], [vi("z", F, [2])])
    refused(tmp_path, model, "'z'")


def test_dtype_mismatch(tmp_path):
    model = save(tmp_path / "m.onnx", [helper.make_node("Add", ["x", "i"], ["y"], name="mix")],
                 [vi("x", F, [2]), vi("i", I64, [2])], [vi("y", F, [2])])
    refused(tmp_path, model, "'mix'", "int64", commands=("build", "inspect"))


# --- dimensions and sizes ------------------------------------------------------------------------

def test_zero_dim_is_an_empty_tensor(tmp_path):
    # a 0 dim is valid ONNX (an empty tensor): compiled, not refused
    model = helper.make_model(helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g", [vi("x", F, [0, 3])],
                                                [vi("y", F, [0, 3])]), opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    check_model(model, {"x": np.zeros((0, 3), np.float32)}, "host", tmp_path)


def test_negative_dim(tmp_path):
    model = save(tmp_path / "m.onnx", [helper.make_node("Relu", ["x"], ["y"])], [vi("x", F, [-3, 3])], [vi("y", F, [-3, 3])])
    refused(tmp_path, model, "input 'x'", "free", commands=("build", "inspect"))


@pytest.mark.parametrize("dims", [[2**40], [2**20, 2**20, 2**20]])
def test_huge_input_dim(tmp_path, dims):
    model = save(tmp_path / "m.onnx", [helper.make_node("Relu", ["x"], ["y"])], [vi("x", F, dims)], [vi("y", F, ["a"] * len(dims))])
    refused(tmp_path, model, "'y'", "limit", commands=("build", "inspect"))


def _shape(values):
    return numpy_helper.from_array(np.array(values, np.int64), "s")


@pytest.mark.parametrize("kind", ["ConstantOfShape", "Constant+ConstantOfShape", "Expand", "Expand of a constant"])
def test_huge_generated_tensor(tmp_path, kind):
    one = numpy_helper.from_array(np.ones(1, np.float32), "one")
    nodes, inits = {
        "ConstantOfShape": ([helper.make_node("ConstantOfShape", ["s"], ["c"])], [_shape([10**6, 10**6])]),
        "Constant+ConstantOfShape": ([helper.make_node("Constant", [], ["s"], value=_shape([10**12])),
                                      helper.make_node("ConstantOfShape", ["s"], ["c"])], []),
        "Expand": ([helper.make_node("Expand", ["x", "s"], ["c"])], [_shape([10**6, 10**6])]),
        "Expand of a constant": ([helper.make_node("Expand", ["one", "s"], ["c"])], [_shape([10**6, 10**6]), one]),
    }[kind]
    nodes.append(helper.make_node("Add", ["x", "c"], ["y"]))
    model = save(tmp_path / "m.onnx", nodes, [vi("x", F, [1])], [vi("y", F, ["a", "b"][: 1 if "Constant+" in kind else 2])], inits)
    refused(tmp_path, model, "'c'", "limit", commands=("build", "inspect"))


def test_folding_that_would_allocate_gigabytes_is_refused_before_it_runs(tmp_path):
    # 10^9 float32 = 4 GB: under the one-tensor limit, over the limit of what folding may create
    nodes = [helper.make_node("ConstantOfShape", ["s"], ["c"], name="fill"), helper.make_node("Add", ["x", "c"], ["y"])]
    model = save(tmp_path / "m.onnx", nodes, [vi("x", F, [1])], [vi("y", F, ["a"])], [_shape([10**9])])
    refused(tmp_path, model, "'fill'", "limit")


def test_arena_over_the_limit_is_refused_before_any_file(tmp_path):
    # four 1.2 GB tensors live at once: each is allowed, the arena (4.8 GB) is not. Four Expands of four
    # inputs: nothing to merge or fuse, and their one reader's output is the caller's (no in-place either)
    names = ["x1", "x2", "x3", "x4"]
    nodes = [helper.make_node("Expand", [x, "s"], [f"e{i}"]) for i, x in enumerate(names)]
    nodes.append(helper.make_node("Sum", [f"e{i}" for i in range(4)], ["y"]))
    model = save(tmp_path / "big.onnx", nodes, [vi(x, F, [1]) for x in names], [vi("y", F, ["p"])], [_shape([3 * 10**8])])
    refused(tmp_path, model, "arena", "limit", "big", commands=("build", "inspect"))


def test_reshape_to_a_different_element_count(tmp_path):
    nodes = [helper.make_node("Reshape", ["x", "s"], ["y"], name="reshaper")]
    model = save(tmp_path / "m.onnx", nodes, [vi("x", F, [2, 3])], [vi("y", F, ["a", "b"])], [_shape([7, 7])])
    refused(tmp_path, model, "'reshaper'", "6", "49")


def test_folded_node_the_reference_rejects(tmp_path):
    # all-constant Reshape: folded at build time, where numpy refuses it
    nodes = [helper.make_node("Reshape", ["w", "s"], ["c"], name="reshaper"), helper.make_node("Add", ["x", "c"], ["y"])]
    inits = [numpy_helper.from_array(np.ones((2, 3), np.float32), "w"), _shape([7, 7])]
    model = save(tmp_path / "m.onnx", nodes, [vi("x", F, [7, 7])], [vi("y", F, ["a", "b"])], inits)
    refused(tmp_path, model, "'reshaper'", "build time")


# --- external data -------------------------------------------------------------------------------

def _external_model(folder, location):
    w = numpy_helper.from_array(np.zeros(4, np.float32), "w")
    w.data_location = TensorProto.EXTERNAL
    w.ClearField("raw_data")
    for key, value in (("location", location), ("offset", "0"), ("length", "16")):
        entry = w.external_data.add()
        entry.key, entry.value = key, value
    return save(folder / "m.onnx", [helper.make_node("Add", ["x", "w"], ["y"])], [vi("x", F, [4])], [vi("y", F, [4])], [w])


@pytest.mark.parametrize("how", ["dotdot", "absolute", "symlink", "nested dotdot"])
def test_external_data_escaping_the_folder(tmp_path, how):
    secret = tmp_path / "secret.bin"
    secret.write_bytes(np.ones(4, np.float32).tobytes())
    folder = tmp_path / "model"
    (folder / "sub").mkdir(parents=True)
    if how == "symlink":
        (folder / "weights.bin").symlink_to(secret)
    location = {"dotdot": "../secret.bin", "absolute": str(secret), "symlink": "weights.bin",
                "nested dotdot": "sub/../../secret.bin"}[how]
    model = _external_model(folder, location)
    refused(tmp_path, model, "initializer 'w'", "outside the model's folder", commands=("build", "inspect"))


# --- hostile names -------------------------------------------------------------------------------

HOSTILE = ["x */ int evil; /*", "a\nb", 'q"uote', "back\\slash", "#include <stdio.h>", "int", "return", "é名前",
           "3d", "??/", "a", "a_", "A"]


def test_hostile_names_compile_to_correct_code(tmp_path, target):
    nodes, inits, prev = [], [], HOSTILE[0]
    for i, name in enumerate(HOSTILE[1:]):
        inits.append(numpy_helper.from_array(np.full((2, 3), i + 1, np.float32), f"w {name}"))
        nodes.append(helper.make_node("Add" if i % 2 else "Mul", [prev, f"w {name}"], [name], name=f"node {HOSTILE[-1 - i]} */\n"))
        prev = name
    graph = helper.make_graph(nodes, 'graph */ #include "x"\n\\', [vi(HOSTILE[0], F, [2, 3])],
                              [vi(prev, F, [2, 3]), vi(HOSTILE[5], F, [2, 3])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], doc_string="*/ #error evil")
    model.ir_version = 8
    x = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
    report = check_model(model, {HOSTILE[0]: x}, target, tmp_path)
    assert [o["name"] for o in report["outputs"]] == [prev, HOSTILE[5]]


def test_hostile_model_file_name(tmp_path):
    path = tiny_model(tmp_path / 'we"ird *\n#include x\\ é.onnx')
    proc = mlcc("build", path, "-o", tmp_path / "out", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "out" / "we_ird_include_x.h").is_file()


# --- command line --------------------------------------------------------------------------------

@pytest.mark.parametrize("args,needles", [
    (["--shape", "nope=1,4"], ["'nope'", "inputs are: x"]),
    (["--shape", "x=1,a"], ["--shape", "whole numbers"]),
    (["--shape", "x=0,4"], ["--shape", "positive"]),
    (["--shape", "x=-1,4"], ["--shape", "positive"]),
    (["--shape", "x=99999999999999999999,4"], ["--shape", "positive"]),
    (["--shape", "x=2**40,4"], ["--shape"]),
    (["--shape", "x=1099511627776,4"], ["limit"]),
    (["--shape", "x"], ["--shape", "INPUT=D0,D1"]),
    (["--shape", "=1,4"], ["--shape", "INPUT=D0,D1"]),
    (["--shape", "x=1,4,5"], ["rank 2"]),
    (["--shape", "x="], ["rank 2"]),
    (["--dim", "nosuch=2"], ["'nosuch'", "symbolic dims are: batch"]),
    (["--dim", "batch=zero"], ["--dim", "SYMBOL=N"]),
    (["--dim", "batch=0"], ["--dim", "positive"]),
    (["--dim", "batch=-1"], ["--dim", "positive"]),
    (["--dim", "batch"], ["--dim", "SYMBOL=N"]),
    (["--dim", "batch=99999999999999999999"], ["--dim"]),
    (["-t", "pdp11"], ["'pdp11'", "wasm32", "host"]),
    (["-t", ""], ["unknown target", "wasm32"]),
    (["--disable-pass", "nosuchpass"], ["'nosuchpass'", "fold_constants"]),
    (["--print-after", "nosuchpass"], ["'nosuchpass'", "fold_constants"]),
    (["--freeze", "nope=1"], ["'nope'", "inputs are: x"]),
    (["--freeze", "x=abc"], ["--freeze", "numbers"]),
    (["--name", "int"], ["--name", "C identifier"]),
    (["--frobnicate"], ["--frobnicate", "build --help"]),
    (["-O7"], ["-O"]),
    (["-o"], ["-o", "argument"]),
    (["extra"], ["extra"]),
])
def test_bad_build_command_line(tmp_path, args, needles):
    path = tiny_model(tmp_path / "m.onnx", dims=("batch", 4))
    if args == ["-o"]:  # -o last, without its value
        refused(tmp_path, path, *needles, commands=("build",), args=["--dim", "batch=1", "-o"])
        return
    refused(tmp_path, path, *needles, args=args)


@pytest.mark.parametrize("command,args,needles", [
    ("inspect", ["--shape", "nope=1,4"], ["'nope'", "inputs are: x"]),
    ("inspect", ["--dim", "nosuch=2"], ["'nosuch'", "batch"]),
    ("inspect", ["-t", "pdp11"], ["'pdp11'", "wasm32"]),
    ("verify", ["--dim", "nosuch=2"], ["'nosuch'", "batch"]),
    ("verify", ["--rtol", "abc"], ["--rtol", "abc"]),
    ("verify", ["--dim", "batch=2", "-t", "pdp11"], ["'pdp11'", "wasm32"]),
    ("verify", ["--dim", "batch=2", "--seed", "x"], ["--seed"]),
])
def test_bad_inspect_and_verify_command_line(tmp_path, command, args, needles):
    refused(tmp_path, tiny_model(tmp_path / "m.onnx", dims=("batch", 4)), *needles, args=args, commands=(command,))


@pytest.mark.parametrize("argv,needles", [
    ([], ["no command given", "build", "verify"]),
    (["frobnicate"], ["'frobnicate'", ", ".join(sorted(cli.main.commands))]),  # every command, listed
    (["build"], ["MODEL"]),
    (["inspect"], ["MODEL"]),
    (["run"], ["FOLDER"]),
])
def test_bad_command(tmp_path, argv, needles):
    started = time.monotonic()
    assert_one_line_error(mlcc(*argv, cwd=tmp_path), *needles)
    assert time.monotonic() - started < SECONDS
    assert not os.listdir(tmp_path)

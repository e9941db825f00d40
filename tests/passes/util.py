"""Helpers for before/after pass tests: import a tiny ONNX graph, run one pass, read the IR text."""

import onnx
from onnx import helper

from mlcc import frontend, passes, targets
from mlcc.ir import format_graph


def make(nodes, inputs, outputs, initializers=(), opset=17):
    graph = helper.make_graph(nodes, "t", inputs, outputs, list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def imported(model):
    return frontend.import_model(model, name="t")


def run_pass(graph, name, target="x86_64"):
    """Run pass `name` as the pipeline does; `target` matters to the passes that take it (choose_layout...)."""
    return passes.get(name)(graph, targets.resolve(target))


def text(graph):
    return format_graph(graph)

"""Passes ask ops, not names: no pass in mlcc/passes/ compares an op_type or spells an op's name; they ask
an op's capabilities and roles (mlcc.ops.Op, mlcc.ops.Role), so a new op never needs a pass edited. And
the target reaches the passes that need it as their argument, not as an attribute set on the graph."""

import ast
from pathlib import Path

from mlcc import ops

MLCC = Path(__file__).resolve().parents[2] / "mlcc"
OP_NAMES = {op.op_type for op in ops.all_ops().values()}


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def _reads_op_type(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Attribute) and n.attr == "op_type" for n in ast.walk(node))


def op_name_uses(folder: Path) -> list[str]:
    """Each string literal naming an op (docstrings aside) and each comparison of an op_type in `folder`."""
    found = []
    for path in sorted(folder.glob("*.py")):
        tree = ast.parse(path.read_text())
        docstrings = _docstrings(tree)
        for node in ast.walk(tree):
            where = f"{path.name}:{getattr(node, 'lineno', '?')}"
            if (isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in OP_NAMES
                    and id(node) not in docstrings):
                found.append(f"{where}: the op name {node.value!r}")
            elif isinstance(node, ast.Compare) and any(_reads_op_type(part) for part in [node.left, *node.comparators]):
                found.append(f"{where}: a comparison of op_type")
            elif (isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and _reads_op_type(node.slice)) or (
                    isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
                    and node.args and _reads_op_type(node.args[0])):
                found.append(f"{where}: a table looked up by op_type")  # counting per op type (x[op_type] += 1) is fine
    return found


def test_no_pass_names_an_op():
    assert op_name_uses(MLCC / "passes") == []


def test_the_scan_finds_what_it_forbids(tmp_path):
    (tmp_path / "bad.py").write_text('"""Conv is fine in a docstring."""\n'
                                     'def run(node, table):\n'
                                     '    x = node.op_type == "Conv"\n'
                                     '    y = node.op_type in SEEDS\n'
                                     '    return table[node.op_type], {"Relu": 1}.get(node.op_type)\n')
    found = op_name_uses(tmp_path)
    assert [f.split(": ", 1)[1] for f in found].count("the op name 'Conv'") == 1
    assert sum("comparison" in f for f in found) == 2
    assert sum("table" in f for f in found) == 2
    assert any("'Relu'" in f for f in found)


def test_the_graph_carries_no_target():
    """pipeline.py hands each pass that takes one the target (passes.get(name)(graph, target))."""
    for path in sorted(MLCC.rglob("*.py")):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            assert not (isinstance(node, ast.Attribute) and node.attr == "target" and isinstance(node.value, ast.Name)
                        and node.value.id in ("graph", "g")), f"{path}:{node.lineno}: graph.target"

"""ONNX function bodies: an op mlcc has no lowering for, but whose schema defines it as a function of other
ops (Celu, Shrink, GroupNormalization, Attention, the losses, ...), is replaced by that body.

This is the same expansion onnx's own `_expanded` test cases are made from; the expanded nodes then go
through the frontend like any others (typed, folded, lowered).
"""

from __future__ import annotations

import onnx
from onnx import AttributeProto, FunctionProto, NodeProto, TypeProto

from . import control_flow


def _schema(node: NodeProto, opset: int):
    try:
        return onnx.defs.get_schema(node.op_type, opset, node.domain)
    except onnx.defs.SchemaError:
        return None


def has_body(node: NodeProto, opset: int) -> bool:
    schema = _schema(node, opset)
    return schema is not None and bool(_versions(schema, opset))


def _versions(schema, opset: int) -> list[tuple[int, bool]]:
    """(function opset version, context dependent) usable at `opset`, newest first."""
    found = [(v, False) for v in schema.function_opset_versions if v <= opset]
    found += [(v, True) for v in schema.context_dependent_function_opset_versions if v <= opset]
    return sorted(found, reverse=True)


def expand(node: NodeProto, opset: int, input_types: list[TypeProto], prefix: str) -> tuple[list[NodeProto], dict[str, int]] | None:
    """The body of `node` as nodes with names under `prefix`, and the body's opset imports; None if no body."""
    schema = _schema(node, opset)
    versions = _versions(schema, opset) if schema is not None else []
    if not versions:
        return None
    version, context_dependent = versions[0]
    node = _with_default_attributes(node, schema)
    if context_dependent:
        text = schema.get_context_dependent_function_with_opset_version(
            version, node.SerializeToString(), [t.SerializeToString() for t in input_types])
    else:
        text = schema.get_function_with_opset_version(version)
    function = FunctionProto()
    function.ParseFromString(text)

    names = {formal: node.input[i] if i < len(node.input) else "" for i, formal in enumerate(function.input)}
    names.update({formal: node.output[i] for i, formal in enumerate(function.output)
                  if i < len(node.output) and node.output[i]})
    for inner in function.node:  # every name the body defines moves under the prefix
        names.update({out: f"{prefix}{out}" for out in inner.output if out and out not in names})
    attributes = {a.name: a for a in node.attribute}
    body = [_renamed(inner, names, attributes, prefix) for inner in function.node]
    opsets = {o.domain or "": o.version for o in function.opset_import}
    return body, opsets


def _with_default_attributes(node: NodeProto, schema) -> NodeProto:
    given = {a.name for a in node.attribute}
    missing = [attr.default_value for name, attr in schema.attributes.items()
               if name not in given and attr.default_value.type != AttributeProto.UNDEFINED]
    if not missing:
        return node
    copy = NodeProto()
    copy.CopyFrom(node)
    copy.attribute.extend(missing)
    return copy


def _renamed(inner: NodeProto, names: dict[str, str], attributes: dict[str, AttributeProto], prefix: str) -> NodeProto:
    def rename(name: str) -> str:
        if name in names:
            return names[name]
        return f"{prefix}{name}" if name else ""

    out = NodeProto()
    out.CopyFrom(inner)
    out.ClearField("input")
    out.ClearField("output")
    out.ClearField("attribute")
    out.input.extend(rename(n) for n in inner.input)
    out.output.extend(rename(n) for n in inner.output)
    out.name = f"{prefix}{inner.name or inner.op_type}"
    for attr in inner.attribute:
        if attr.HasField("ref_attr_name"):
            if attr.ref_attr_name in attributes:  # an attribute the caller left out stays out
                bound = AttributeProto()
                bound.CopyFrom(attributes[attr.ref_attr_name])
                bound.name = attr.name
                out.attribute.append(bound)
        elif attr.type in (AttributeProto.GRAPH, AttributeProto.GRAPHS):  # a subgraph reads the renamed values
            copy = AttributeProto()
            copy.CopyFrom(attr)
            for graph in [copy.g] if attr.type == AttributeProto.GRAPH else copy.graphs:
                control_flow.rename_references(graph, names)
            out.attribute.append(copy)
        else:
            out.attribute.append(attr)
    return out

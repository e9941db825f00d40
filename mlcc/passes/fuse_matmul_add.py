"""A product + an Add of a constant bias -> one node adding the bias as the product is written.

The product's output must be read by the Add alone, and its op must take the bias (`Op.take_bias`: a float32
MatMul by a 2-D B becomes a Gemm, over A's rows flattened when A is N-D, as a transformer's Linear layer over
[batch, tokens, features]; transposes simplify_algebra folded into the MatMul become transA and transB).
"""

from __future__ import annotations

from .. import ops
from ..ir import Graph
from ..ops import Role
from ._rewrite import Rewriter


def run(graph: Graph) -> dict:
    rw = Rewriter(graph)
    fused = batched = 0
    for add in list(graph.nodes):
        if not ops.has_role(add, Role.ADD) or len(add.inputs) != 2:
            continue
        for side in (0, 1):
            product = rw.producer(add.inputs[side])
            if product is None or rw.sole_reader(product.outputs[0]) is not add:
                continue
            if not ops.of(product).take_bias(product, add.inputs[1 - side], add.outputs[0], rw.constant):
                continue
            batched += len(product.inputs[0].shape) > 2
            product.outputs = [add.outputs[0]]
            rw.drop(add)
            fused += 1
            break
    rw.finish()
    return {"fused": fused, "batched_rows": batched}

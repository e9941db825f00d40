"""Cast: element type conversion, C's conversions except where ONNX says otherwise (to bool: x != 0;
float16, stored as uint16_t bits, through mlcc/half.h's exact conversions). float16 <-> float32, the pair
the float16-in-float32 pass inserts around ops, is one runtime kernel call over the whole tensor.
`saturate` concerns the float8 types only, which mlcc does not have.
"""

from __future__ import annotations

import numpy as np

from ..ir import Node, Value
from . import REQUIRED, Op, Role, register
from ._broadcast import loop_nest

_F16, _F32, _BOOL = np.dtype("float16"), np.dtype("float32"), np.dtype("bool")

# (from, to) -> array kernel of the f16-convert family
_KERNELS = {(_F16, _F32): "mlcc_f16_f32_convert", (_F32, _F16): "mlcc_f32_f16_convert"}


def conversion(src: np.dtype, dst: np.dtype) -> str:
    """C expression converting a0 of type src to dst."""
    if src == dst:
        return "a0"
    if src == _F16:
        return "(a0 & 0x7fffu) != 0" if dst == _BOOL else "mlcc_f16_to_f32(a0)"  # NaN is true, +-0 false
    if dst == _F16:
        return "a0 ? 0x3c00u : 0u" if src == _BOOL else "mlcc_f32_to_f16((float)a0)"  # double rounds via float, as onnxruntime
    return "a0 != 0" if dst == _BOOL else "a0"


def lower_cast(ctx, x: Value, out: Value, unread: list[Value]) -> None:
    """out = x converted to out's type; `unread` are inputs that only give a type (CastLike's target)."""
    if _F16 in (x.dtype, out.dtype):
        ctx.use_kernels("f16-convert")
    kernel = _KERNELS.get((x.dtype, out.dtype))
    if kernel is not None:
        ctx.emit("ops/cast.c.j2", kernel=ctx.kernel(kernel), n=out.size, x=ctx.ptr(x), y=ctx.ptr(out),
                 unread=[ctx.ptr(v) for v in unread])
        return
    nest = loop_nest(out.shape, [x.shape])
    ctx.emit("ops/elementwise.c.j2", nest=nest, loads=[(ctx.c_type(x), "a0", f"{ctx.ptr(x)}[{nest.operand_index[0]}]")],
             temps=[], expr=conversion(x.dtype, out.dtype), out=f"{ctx.ptr(out)}[{nest.out_index}]",
             unread=[ctx.ptr(v) for v in unread])


@register
class Cast(Op):
    op_type = "Cast"
    role = Role.CAST
    attrs = {"to": REQUIRED, "saturate": 1, "round_mode": "up"}
    elementwise = True
    float16_native = True
    variable_extents = True  # a kernel over the run-time count, or one loop nest

    def lower(self, node: Node, ctx) -> None:
        lower_cast(ctx, node.inputs[0], node.outputs[0], [])

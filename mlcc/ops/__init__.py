"""The operator registry. Each ONNX operator lives in one module of this package (trivial elementwise
families in one table), as a subclass of `Op` registered with `@register`. Importing this package imports
every module in it, so the registry fills itself; nothing else lists op names.

An op provides:
  attrs      the attribute spec: name -> ONNX default (REQUIRED where the spec has none)
  infer      output (dtype, shape) pairs; the default asks onnx's own per-node shape inference
  reference  numpy outputs for constant folding; the default runs onnx.reference on the single node
  lower      the implementation for a target: kernel calls and/or template code (see mlcc.lower)
and capabilities that passes ask instead of testing op names (mlcc/passes never names an op): flags, a
`role` for the passes that recognise formulas and structures, and methods for layout, BatchNormalization
folding, transposed operands, strided views and Winograd.
"""

from __future__ import annotations

import enum
import importlib
import pkgutil
from typing import Any, Callable, ClassVar

import numpy as np
import onnx
from onnx import helper, numpy_helper

from .. import dtypes
from ..errors import UnsupportedError
from ..ir import Node, Value
from ._layout import permuted_constant
from ._views import View


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED = _Required()
# reads_permuted_channels' answers
ABSORB, FORWARD = "absorb", "forward"


class Role(enum.Enum):
    """What a node computes, in the terms of the passes that recognise a formula or a structure written out
    in several nodes (recognise_*, simplify_algebra, fuse_*) or that make such nodes. At most one op of the
    default domain takes each role (`for_role`)."""
    ADD = "x + y"
    SUB = "x - y"
    MUL = "x * y"
    DIV = "x / y"
    NEG = "-x"
    POW = "x ^ y"
    RECIPROCAL = "1 / x"
    SUM = "x + y + ... (variadic)"
    SQRT = "sqrt(x)"
    EXP = "exp(x)"
    ERF = "erf(x)"
    TANH = "tanh(x)"
    SIGMOID = "1 / (1 + exp(-x))"
    GELU = "x * Phi(x)"
    SELECT = "c ? x : y"
    CAST = "x converted to another dtype"
    REDUCE_SUM = "sum along axes"
    REDUCE_MEAN = "mean along axes"
    REDUCE_MAX = "max along axes"
    MATMUL = "matrix product, batched"
    SOFTMAX = "softmax along an axis"
    LAYER_NORMALIZATION = "normalised along trailing axes, then scaled and shifted"
    TRANSPOSE = "axes permuted"
    RESHAPE = "the same elements under a new shape given as an input"


class Op:
    op_type: ClassVar[str] = ""
    domain: ClassVar[str] = ""
    attrs: ClassVar[dict[str, Any]] = {}

    # capabilities, asked by passes and the planner
    elementwise: ClassVar[bool] = False  # output[i] depends on input[i] only (after broadcasting)
    inplace_safe: ClassVar[bool] = False  # output may share bytes with its first input
    always_folded: ClassVar[bool] = False  # its outputs are known at build time (Shape, Constant, ...)
    removable_identity: ClassVar[bool] = False  # at inference it forwards input 0 (Identity, Dropout)
    value_dependent_shape: ClassVar[bool] = False  # output shape depends on input values (NonZero, ...)
    float16_native: ClassVar[bool] = False  # handles float16 itself (else passes/widen_float16 widens it)
    shape_operands: ClassVar[tuple[int, ...]] = ()  # of those, the inputs that are shape parameters (Range's all)
    type_only_operands: ClassVar[tuple[int, ...]] = ()  # inputs read for their type only (CastLike's): folding needs no values
    # takes a fused epilogue (passes/fuse_epilogues): the index of its residual input, else None
    epilogue_input: ClassVar[int | None] = None
    # for the memory planner (mlcc/plan): see in_place_inputs, view_offsets, input_offsets
    in_place: ClassVar[bool] = False  # its code reads every input element i before writing output element i
    view_of_input: ClassVar[bool] = False  # each output is input 0's bytes, or a contiguous range of them
    gathers_inputs: ClassVar[bool] = False  # the output is its inputs laid end to end (Concat)
    row_pitch_output: ClassVar[bool] = False  # may write its output's rows at a longer pitch: see writes_row_pitch
    # for passes/lower_quantized_islands: "quantize" / "dequantize" for QuantizeLinear / DequantizeLinear;
    # the integer form a float op takes between them ("conv", "matmul", "gemm"; "qlinear_conv" for QLinearConv
    # itself; "monotonic" for an op whose outputs are its input's values picked by order, as MaxPool: it runs
    # on the 8-bit values themselves, since dequantization is increasing; "moves" for one whose outputs are
    # its input's values picked by position (Reshape, Flatten, Transpose), the same; "copies" for one whose output is
    # its inputs' values copied, as Concat; "add" / "mul" for Add / Mul, which become a QuantizedAdd /
    # QuantizedMul; "average" for AveragePool and GlobalAveragePool, which become a QuantizedAveragePool;
    # "lookup" for an elementwise op of one tensor and constant scalars, a QuantizedLookup table; "softmax"
    # for Softmax, a QuantizedSoftmax; "affine" for a per-channel affine map answering channel_affine
    # (BatchNormalization), a per-channel Requantize), else None
    quantization: ClassVar[str | None] = None
    quantized_form: ClassVar[str | None] = None
    # for pattern passes: what the node computes (see Role), and whether it only relabels its input's shape
    role: ClassVar[Role | None] = None
    # its lowering takes run-time extents (cexpr.Sym dims, mlcc/extents.py): it only does arithmetic on sizes,
    # asks nothing of them that only the run can answer, and writes them into C through cexpr
    variable_extents: ClassVar[bool] = False
    # inputs its lowering reads at build time as parameters (a Reshape's shape, a Slice's starts), not as data:
    # a folded integer that varies with the run-time sizes is written into a run-time tensor (ops/size_values)
    # only where it is read as data
    parameter_operands: ClassVar[tuple[int, ...]] = ()
    # attributes a pass chooses from sizes (an algorithm): with run-time extents the choice made at the maximum
    # stands for every size (mlcc/extents.py), so the lowering must stay correct below it
    choices_for_bound: ClassVar[tuple[str, ...]] = ()
    relabels_shape: ClassVar[bool] = False  # output = input 0's elements in order, another shape (Reshape, Flatten...)
    # for passes/choose_layout: a region running channels-last forms around nodes of this op (Conv, pools)
    channels_last_seed: ClassVar[bool] = False
    # for report.json's slow path (mlcc/slow_path.py): the kernel families holding vector forms of what this
    # op computes (f32-* for a float32 result, qs8-* for 8-bit operands); a step of it that calls none of
    # their vector kernels, where one of them has a form for the target, is listed as generic
    vector_families: ClassVar[tuple[str, ...]] = ()

    # --- attributes -----------------------------------------------------------------------------
    def parse_attrs(self, proto: onnx.NodeProto, where: str) -> dict[str, Any]:
        given = {a.name: helper.get_attribute_value(a) for a in proto.attribute}
        parsed: dict[str, Any] = {}
        for name, default in self.attrs.items():
            if name in given:
                value = given[name]
                if isinstance(value, bytes):
                    value = value.decode("utf-8", "replace")
                elif isinstance(value, onnx.TensorProto):
                    value = dtypes.tensor_array(value, f"{where}: attribute {name!r}")
                elif isinstance(value, list) and value and isinstance(value[0], bytes):
                    value = [v.decode("utf-8", "replace") for v in value]
                parsed[name] = value
            elif default is REQUIRED:
                raise UnsupportedError(f"attribute {name!r} is required", where)
            elif default is not None:
                parsed[name] = default
        for name, value in given.items():  # attributes the spec does not know still reach the reference
            parsed.setdefault(name, value)
        return parsed

    # --- semantics ------------------------------------------------------------------------------
    def infer(self, node: Node) -> list[tuple[np.dtype, tuple[int, ...]]] | None:
        """Output types, or None to use onnx's per-node shape inference (the frontend calls it)."""
        return None

    def reference(self, node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
        return run_onnx_reference(node, inputs)

    def lower(self, node: Node, ctx) -> None:
        """Emit the node's implementation into ctx (a mlcc.lower.LowerContext)."""
        raise UnsupportedError(f"{self.op_type} has no implementation for this target yet", node.where())

    def flops(self, node: Node) -> int:
        """Floating-point operations one run of the node does (a multiply-add counts 2)."""
        return 0

    def describe(self, node: Node) -> dict:
        """Facts about the node for its step in report.json (e.g. a tree model's bytes per node)."""
        return {}

    def prefers_function(self, proto: onnx.NodeProto, opset: int) -> bool:
        """True for forms this op leaves to its ONNX function body (mlcc.functions), e.g. rare extra outputs."""
        return False

    def function_body(self, proto: onnx.NodeProto, opset: int, prefix: str) -> tuple[list[onnx.NodeProto], dict[str, int]] | None:
        """For ops defined as other ops that ONNX gives no function body (com.microsoft's QLinearAdd is
        DequantizeLinear -> Add -> QuantizeLinear): the nodes, their names under `prefix`, and the opset
        imports they need. The frontend takes it when prefers_function says so."""
        return None

    def fused_activation(self, node: Node) -> tuple[str, float, float] | None:
        """For activations a GEMM or convolution can apply in its epilogue: (kind, a, b) as in
        runtime_c/include/mlcc/activation.h (e.g. ("clip", 0.0, 6.0)), else None."""
        return None

    def packed_integer_product(self, node: Node) -> tuple[Value, np.ndarray, Value | None] | None:
        """For passes/fuse_integer_matmul: an 8-bit product by constant weights as (a, w, a_zero), the int32
        sum_p (a[i][p] - a_zero) * w[j][p] with w int8 [n, k] (the weights less their zero point, transposed);
        None when this node is not one."""
        return None

    def absorb_bias(self, node: Node, bias: np.ndarray) -> bool:
        """For epilogue ops: fold a constant added to the output into the node's own bias; False if its
        broadcast does not fit (e.g. not per output channel)."""
        return False

    def in_place_inputs(self, node: Node) -> list[int]:
        """For in_place ops: the inputs the single output may overwrite (same dtype and element count, so
        element i sits at the same index in both)."""
        if not self.in_place or len(node.outputs) != 1:
            return []
        out = node.outputs[0]
        return [i for i, v in enumerate(node.inputs) if v is not None and v.dtype == out.dtype and v.size == out.size]

    def tail_inputs(self, node: Node) -> list[int]:
        """The inputs that may lie at the very end of the single output's bytes (plan/output_room: in a graph
        output's buffer): the code reads element i of such an input before writing element i of the output, in
        increasing i, and the output has as many elements, each at least as wide (a DequantizeLinear to float)."""
        return []

    def view_offsets(self, node: Node) -> list[int] | None:
        """For view_of_input ops: each output's byte offset in input 0, or None when this node must copy."""
        return [0] * len(node.outputs) if self.view_of_input else None

    def input_offsets(self, node: Node) -> list[int] | None:
        """For gathers_inputs ops: each input's byte offset in the output, or None when they are not
        contiguous ranges of it."""
        return None

    def writes_row_pitch(self, node: Node) -> bool:
        """For row_pitch_output ops: can this node write its single output's rows (runs of its last
        dimension) at a longer row pitch, as a channel slice of a channels-last Concat's output? Its lowering
        then asks ops.concat.output_row_pitch for the pitch."""
        return self.row_pitch_output

    def forwards_input(self, node: Node) -> bool:
        """For removable_identity ops: does this node forward input 0 unchanged (e.g. Dropout in test mode)?"""
        return self.removable_identity

    # --- channels-last (passes/choose_layout) ----------------------------------------------------
    def activation_inputs(self, node: Node) -> list[int]:
        """The inputs carrying N, C, H, W activations, which change layout with the node (a Conv's weights
        and bias do not)."""
        return [i for i, v in enumerate(node.inputs) if v is not None]

    def runs_channels_last(self, node: Node) -> bool:
        """Can this node, whose output is 4-D, read and write its activations as N, H, W, C once
        `to_channels_last` has rewritten it? By default: an elementwise op whose run-time operands all have
        the output's shape (constant operands are permuted at build time: see channels_last_constant)."""
        if not self.elementwise or len(node.outputs) != 1:
            return False
        y = node.outputs[0]
        runtime = [v for v in node.inputs if v is not None and not v.is_const]
        return bool(runtime) and all(v.shape == y.shape for v in runtime) and all(
            len(v.shape) <= 4 for v in node.inputs if v is not None)

    def runs_channels_last_on(self, node: Node, target) -> bool:
        """Is channels-last this node's better layout on `target`? (An op whose channel-major kernels some
        targets run faster says no there.) Asked only of nodes that `runs_channels_last`."""
        return True

    def writes_transposed(self, node: Node) -> bool:
        """Can the node store its single output transposed (then write_transposed marks it), so that a layout
        Transpose of it needs no pass of its own? (passes/choose_layout, at a region's boundary.)"""
        return False

    def write_transposed(self, node: Node, perm: list[int]) -> None:
        """Store the output transposed by `perm` (its Value is swapped for the transposed one by the pass)."""
        raise NotImplementedError(f"{self.op_type} cannot write its output transposed")

    def to_channels_last(self, node: Node) -> None:
        """Rewrite the node's attributes for channels-last activations (the pass swaps its values)."""

    def channels_last_constant(self, node: Node, data: np.ndarray) -> np.ndarray:
        """A constant operand broadcast against N, C, H, W, as this node reads it channels-last."""
        return permuted_constant(data, keep_rank=False)

    # --- channel permutations (passes/fold_channel_permutations) ----------------------------------
    def reads_channels_first(self, node: Node, index: int, target) -> bool:
        """Can the channels-last node read input `index` where it is stored channels-first (N C [D] H W, as
        the model has it), with no copy (then read_channels_first marks it)? passes/fold_layout_transposes."""
        return False

    def read_channels_first(self, node: Node, index: int) -> None:
        """Mark input `index` as read channels-first (the pass then gives the node the channels-first tensor)."""
        raise NotImplementedError(f"{self.op_type} cannot read its input channels-first")

    def reads_permuted_channels(self, node: Node, index: int, order: np.ndarray, axis: int, target) -> str | None:
        """Can the node read input `index` stored with its channels (along `axis`) permuted, logical channel c
        at stored channel order[c], with no copy? ABSORB: its weights or a table of where each channel lies
        take the permutation, and its output is what it was; FORWARD: it computes each channel on its own, so
        its output comes out permuted alike once its per-channel constants are; None: it cannot. By default
        elementwise ops whose other operands are constant scalars forward."""
        if not self.elementwise or len(node.outputs) != 1 or node.outputs[0].shape != node.inputs[index].shape:
            return None
        others = [v for i, v in enumerate(node.inputs) if i != index and v is not None]
        return FORWARD if all(v.is_const and v.size == 1 for v in others) else None

    def read_permuted_channels(self, node: Node, index: int, order: np.ndarray, axis: int,
                               constant: Callable[[str, np.ndarray], Value]) -> None:
        """Rewrite the node as reads_permuted_channels answered (the pass then gives it the stored tensor)."""

    def writes_permuted_channels(self, node: Node, order: np.ndarray, axis: int) -> bool:
        """Can the node write its single output with its channels (along `axis`) permuted, stored channel j
        holding logical channel order[j], by rewriting its constants alone?"""
        return False

    def write_permuted_channels(self, node: Node, order: np.ndarray, axis: int,
                                constant: Callable[[str, np.ndarray], Value]) -> None:
        """Rewrite the node as writes_permuted_channels promised."""

    # --- other rewrites passes ask for ----------------------------------------------------------
    def channel_affine(self, node: Node) -> tuple[np.ndarray, np.ndarray, bool] | None:
        """For a node computing y = x * scale + shift per channel (axis 1) from constant parameters, as an
        inference BatchNormalization does: (scale, shift, per_activation) in float64, per_activation True
        when there is one scale per element of x's C x D1 x ... instead of per channel. Else None
        (passes/fold_batch_norm folds such nodes into the weights before them)."""
        return None

    def fold_scale_shift(self, node: Node, scale: np.ndarray, shift: np.ndarray,
                         constant: Callable[[str, np.ndarray], Value]) -> bool:
        """Make the node compute its output times `scale` plus `shift` (float64, one per output channel, as
        a BatchNormalization after it would: passes/fold_batch_norm) by rewriting its constant weights;
        `constant(base_name, array)` makes a new constant Value. False, node unchanged, when it cannot."""
        return False

    def take_bias(self, node: Node, bias: Value, out: Value, constant: Callable[[str, np.ndarray], Value]) -> bool:
        """Make the node also add the constant `bias` (an Add after it, whose output `out` it will write:
        passes/fuse_matmul_add). False, node unchanged, when it cannot."""
        return False

    def transposed_reads(self, node: Node) -> dict[int, str]:
        """Inputs this node can read transposed in their last two axes without a copy: index -> the flag
        attribute (0 or 1) saying it does (passes/simplify_algebra folds a Transpose into it)."""
        return {}

    def strided_view(self, node: Node, view: View) -> View | None:
        """When the output is a strided view of input 0 (passes/recognise_attention reads through such
        nodes): the output's View given input 0's, else None."""
        return None

    def input_view(self, node: Node, view: View) -> View | None:
        """The inverse of strided_view: input 0's View given the output's, for ops whose output is a
        reordering of all of input 0 (Transpose, reshapes), else None."""
        return None

    @property
    def has_strided_view(self) -> bool:
        return type(self).strided_view is not Op.strided_view

    @property
    def has_input_view(self) -> bool:
        return type(self).input_view is not Op.input_view

    def winograd_extra_bytes(self, node: Node, target, measured: bool = False) -> int | None:
        """When this node should run as Winograd F(4x4, 3x3) on `target` (passes/choose_winograd marks it):
        the bytes its transformed weights add; None to keep its direct algorithm. measured: a tuning file
        chose Winograd, so only whether the transforms compute the node counts, not the speed heuristic."""
        return None

    def algorithms(self, node: Node, target) -> tuple[str, ...]:
        """The algorithms (mlcc/tuning.ALGORITHMS) this node can run as on `target`, for `mlcc tune` to time
        and a tuning file to choose (passes/choose_winograd sets the attr `algorithm`); () where there is
        no choice. The heuristics decide where the file says nothing."""
        return ()

    @property
    def can_lower(self) -> bool:
        return type(self).lower is not Op.lower


_REGISTRY: dict[tuple[str, str], Op] = {}


def register(cls: type[Op]) -> type[Op]:
    key = (cls.domain, cls.op_type)
    if key in _REGISTRY:
        raise RuntimeError(f"op {cls.op_type} registered twice")
    _REGISTRY[key] = cls()
    return cls


def register_family(make: Callable[..., type[Op]], table: dict[str, Any]) -> None:
    """Register one op class per table row: `make(op_type, row)` builds the class."""
    for op_type, row in table.items():
        register(make(op_type, row))


def lookup(op_type: str, domain: str = "") -> Op | None:
    return _REGISTRY.get((domain or "", op_type))


def of(node: Node) -> Op | None:
    """The registered op of a node (None for ops mlcc does not know)."""
    return _REGISTRY.get((node.domain or "", node.op_type))


def has_role(node: Node, *roles: Role) -> bool:
    """Is `node` of the default domain with one of `roles`?"""
    op = None if node.domain else of(node)
    return op is not None and op.role in roles


def for_role(role: Role) -> Op:
    """The op of the default domain that takes `role` (for passes making such nodes)."""
    return _BY_ROLE[role]


def all_ops() -> dict[tuple[str, str], Op]:
    return dict(_REGISTRY)


def onnx_attr_protos(node: Node) -> list[onnx.AttributeProto]:
    protos = []
    for name, value in node.attrs.items():
        if isinstance(value, np.ndarray):
            value = numpy_helper.from_array(value)
        protos.append(helper.make_attribute(name, value))
    return protos


def _schema_attribute_names(node: Node) -> set[str] | None:
    try:
        return set(onnx.defs.get_schema(node.op_type, node.opset, node.domain).attributes)
    except Exception:  # not an ONNX-schema op (our own fused ops): keep every attribute
        return None


def to_node_proto(node: Node) -> onnx.NodeProto:
    """The node as ONNX, with only the attributes its opset's schema defines (specs fill in newer ones)."""
    names = ["" if v is None else v.name for v in node.inputs]
    proto = helper.make_node(node.op_type, names, [v.name for v in node.outputs], domain=node.domain or None)
    known = _schema_attribute_names(node)
    proto.attribute.extend(a for a in onnx_attr_protos(node) if known is None or a.name in known)
    return proto


def run_onnx_reference(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    """Evaluate one node with onnx's reference implementation (the oracle for constant folding).

    onnx.reference implements some ops only from a later version on (DequantizeLinear from 19): the node
    then runs as the nearest newer version whose schema takes the same inputs and attributes with the same
    defaults, so the same node means the same thing there."""
    try:
        return _evaluate(node, inputs, node.opset)
    except RuntimeError as exc:
        if "No implementation for operator" not in str(exc):
            raise
        for version in same_form_versions(node.op_type, node.domain, node.opset, set(node.attrs)):
            try:
                return _evaluate(node, inputs, version)
            except RuntimeError as newer:
                if "No implementation for operator" not in str(newer):
                    raise
        raise


def _evaluate(node: Node, inputs: list[np.ndarray | None], opset: int) -> list[np.ndarray]:
    from onnx.reference import ReferenceEvaluator

    proto = to_node_proto(node)
    graph_inputs, feeds = [], {}
    for v, data in zip(node.inputs, inputs):
        if v is None:
            continue
        graph_inputs.append(helper.make_tensor_value_info(v.name, onnx.helper.np_dtype_to_tensor_dtype(data.dtype), data.shape))
        feeds[v.name] = data
    outputs = [helper.make_tensor_value_info(v.name, onnx.TensorProto.UNDEFINED, None) for v in node.outputs]
    graph = helper.make_graph([proto], "fold", graph_inputs, outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid(node.domain, opset)])
    results = ReferenceEvaluator(model).run(None, feeds)
    return [np.asarray(r) for r in results]


def same_form_versions(op_type: str, domain: str, opset: int, given: set[str] = frozenset()) -> list[int]:
    """The op's later schema versions, oldest first, up to the first whose form differs from the version
    `opset` selects: an input renamed, moved or removed, a required input added, an attribute the node
    gives (`given`) dropped, or one made required or given another default. Type lists may grow (that is
    what most version bumps do)."""
    try:
        own = onnx.defs.get_schema(op_type, opset, domain)
    except Exception:
        return []
    history = sorted((s for s in onnx.defs.get_all_schemas_with_history()
                      if s.name == op_type and s.domain == own.domain and s.since_version > own.since_version),
                     key=lambda s: s.since_version)
    versions = []
    for schema in history:
        if not _same_form(own, schema, given):
            break
        versions.append(schema.since_version)
    return versions


def _same_form(old: onnx.defs.OpSchema, new: onnx.defs.OpSchema, given: set[str]) -> bool:
    if [i.name for i in new.inputs[:len(old.inputs)]] != [i.name for i in old.inputs]:
        return False
    if any(i.option == onnx.defs.OpSchema.FormalParameterOption.Single for i in new.inputs[len(old.inputs):]):
        return False  # a new required input
    if [o.name for o in new.outputs[:len(old.outputs)]] != [o.name for o in old.outputs]:
        return False
    for name, attr in new.attributes.items():
        before = old.attributes.get(name)
        if before is None:
            if attr.required:
                return False
        elif attr.required != before.required or attr.default_value != before.default_value:
            return False
    return all(name in new.attributes for name in old.attributes if name in given or old.attributes[name].required)


def _import_all() -> None:
    for info in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{info.name}")


def _roles() -> dict[Role, Op]:
    taken: dict[Role, Op] = {}
    for op in _REGISTRY.values():
        if op.role is not None and not op.domain:
            if op.role in taken:
                raise RuntimeError(f"ops {taken[op.role].op_type} and {op.op_type} both take role {op.role.name}")
            taken[op.role] = op
    return taken


_import_all()
_BY_ROLE = _roles()

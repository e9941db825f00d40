"""What RNN, GRU and LSTM share: attributes, geometry, a numpy reference, and the lowering frame.

Every direction runs as: one f32-gemm product for the input projections of all time steps at once
(gates_x = X W^T + Wb, [seq * batch, G * hidden]), then a time loop in the generated C where each step
multiplies the hidden state by R^T (+ Rb) on f32-gemm and an f32-rnn kernel applies the gates and updates
the state. Constant W and R are packed for the gemm at build time; otherwise they are packed into scratch
once per direction. The states live in Y_h / Y_c when the model has them (no copies), else in scratch.

Layout 0 is [seq, batch, ...] (Y [seq, dirs, batch, hidden], Y_h [dirs, batch, hidden]); layout 1 is
[batch, seq, ...] (Y [batch, seq, dirs, hidden], Y_h [batch, dirs, hidden]); both are only strides here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from .. import cexpr
from ..errors import UnsupportedError
from ..ir import Node, Value
from ._gemm import packed_constant, packed_size, use_tile

# Attributes every recurrent op has (LSTM adds input_forget, GRU linear_before_reset).
COMMON_ATTRS = {"activation_alpha": None, "activation_beta": None, "activations": None, "clip": None,
                "direction": "forward", "hidden_size": None, "layout": 0}

# Input positions shared by the three ops.
X, W, R, B, SEQUENCE_LENS, INITIAL_H = range(6)


@dataclass(frozen=True)
class Activation:
    kind: str  # the C enumerator
    alpha: float | None  # default when the activation takes alpha (consumed from activation_alpha), else None
    beta: float | None
    numpy: Callable[[np.ndarray, float, float], np.ndarray]


def _sigmoid(x, a, b):
    return 1.0 / (1.0 + np.exp(-x))


# Lower-case ONNX name -> activation. Defaults as onnxruntime: HardSigmoid 0.2/0.5, LeakyRelu 0.01,
# Elu 1.0, every other parameter 0.
ACTIVATIONS = {
    "sigmoid": Activation("MLCC_F32_RNN_SIGMOID", None, None, _sigmoid),
    "tanh": Activation("MLCC_F32_RNN_TANH", None, None, lambda x, a, b: np.tanh(x)),
    "relu": Activation("MLCC_F32_RNN_RELU", None, None, lambda x, a, b: np.maximum(x, 0)),
    "hardsigmoid": Activation("MLCC_F32_RNN_HARD_SIGMOID", 0.2, 0.5, lambda x, a, b: np.clip(a * x + b, 0, 1)),
    "affine": Activation("MLCC_F32_RNN_AFFINE", 0.0, 0.0, lambda x, a, b: a * x + b),
    "leakyrelu": Activation("MLCC_F32_RNN_LEAKY_RELU", 0.01, None, lambda x, a, b: np.where(x >= 0, x, a * x)),
    "thresholdedrelu": Activation("MLCC_F32_RNN_THRESHOLDED_RELU", 0.0, None, lambda x, a, b: np.where(x > a, x, 0)),
    "scaledtanh": Activation("MLCC_F32_RNN_SCALED_TANH", 0.0, 0.0, lambda x, a, b: a * np.tanh(b * x)),
    "elu": Activation("MLCC_F32_RNN_ELU", 1.0, None, lambda x, a, b: np.where(x >= 0, x, a * np.expm1(np.minimum(x, 0)))),
    "softsign": Activation("MLCC_F32_RNN_SOFTSIGN", None, None, lambda x, a, b: x / (1 + np.abs(x))),
    "softplus": Activation("MLCC_F32_RNN_SOFTPLUS", None, None, lambda x, a, b: np.logaddexp(x, 0)),
}


@dataclass(frozen=True)
class Act:
    """One activation with its parameters resolved."""
    activation: Activation
    alpha: float
    beta: float

    def __call__(self, x: np.ndarray) -> np.ndarray:
        return self.activation.numpy(x, np.float32(self.alpha), np.float32(self.beta)).astype(np.float32)


@dataclass(frozen=True)
class Cell:
    """What one recurrent op is: its gate count, default activations, states (hidden, and LSTM's cell), and
    its time step's template."""
    gates: int
    default_activations: tuple[str, ...]
    step_template: str
    states: int = 1


@dataclass
class Geometry:
    seq: int
    batch: int
    input_size: int
    hidden: int
    directions: int
    layout: int
    reverse: list[bool]  # per direction
    acts: list[list[Act]]  # per direction, the cell's activations in order (f, g, h)
    clip: float  # 0: none


def parse(node: Node, cell: Cell) -> Geometry:
    """Check the node against what mlcc supports and resolve its geometry and attributes."""
    where = node.where()
    x, w, r = node.inputs[X], node.inputs[W], node.inputs[R]
    for v in node.inputs:
        if v is not None and v is not node.input(SEQUENCE_LENS) and v.dtype != np.float32:
            raise UnsupportedError(f"{node.op_type} on {np.dtype(v.dtype).name} is not supported (float32 only)", where)
    direction = node.attrs["direction"]
    reverse = {"forward": [False], "reverse": [True], "bidirectional": [False, True]}.get(direction)
    if reverse is None:
        raise UnsupportedError(f"direction {direction!r} is not one of forward, reverse, bidirectional", where)
    layout = int(node.attrs.get("layout", 0))
    if layout not in (0, 1):
        raise UnsupportedError(f"layout {layout} is not 0 or 1", where)
    if len(x.shape) != 3 or len(w.shape) != 3 or len(r.shape) != 3:
        raise UnsupportedError(f"X, W and R must be 3-D, got {x.type_str()}, {w.type_str()}, {r.type_str()}", where)
    seq, batch, input_size = (x.shape[1], x.shape[0], x.shape[2]) if layout else x.shape
    dirs, hidden = len(reverse), r.shape[2]
    if node.attrs.get("hidden_size") not in (None, hidden):
        raise UnsupportedError(f"hidden_size {node.attrs['hidden_size']} disagrees with R {r.type_str()}", where)
    gh = cell.gates * hidden
    if w.shape != (dirs, gh, input_size) or r.shape != (dirs, gh, hidden):
        raise UnsupportedError(f"W {w.type_str()} and R {r.type_str()} do not fit {dirs} direction(s), "
                               f"{cell.gates} gates, hidden size {hidden}, input size {input_size}", where)
    if 0 in (seq, batch, input_size, hidden):
        raise UnsupportedError(f"{node.op_type} with an empty dimension is not supported", where)
    b = node.input(B)
    if b is not None and b.shape != (dirs, 2 * gh):
        raise UnsupportedError(f"B {b.type_str()} is not [{dirs}, {2 * gh}]", where)
    state_shape = (batch, dirs, hidden) if layout else (dirs, batch, hidden)
    for i in range(INITIAL_H, INITIAL_H + cell.states):
        v = node.input(i)
        if v is not None and v.shape != state_shape:
            raise UnsupportedError(f"initial state {v.type_str()} is not {list(state_shape)}", where)
    lens = node.input(SEQUENCE_LENS)
    if lens is not None and (lens.dtype != np.int32 or lens.shape != (batch,)):
        raise UnsupportedError(f"sequence_lens {lens.type_str()} is not int32[{batch}]", where)
    clip = node.attrs.get("clip")
    if clip is not None and not clip > 0:
        raise UnsupportedError(f"clip {clip} is not positive", where)
    return Geometry(seq, batch, input_size, hidden, dirs, layout, reverse, _activations(node, cell, dirs),
                    float(clip) if clip is not None else 0.0)


def _activations(node: Node, cell: Cell, dirs: int) -> list[list[Act]]:
    """Per direction, the cell's activations; alphas and betas are consumed in order by those that take them."""
    per = len(cell.default_activations)
    names = list(node.attrs.get("activations") or cell.default_activations * dirs)
    sets = len(names) // per if len(names) % per == 0 else 0  # one set for all directions, or one each
    if sets not in (1, 2, dirs):
        raise UnsupportedError(f"{len(names)} activations do not fit {dirs} direction(s) of {per}", node.where())
    alphas = [float(a) for a in node.attrs.get("activation_alpha") or []]
    betas = [float(b) for b in node.attrs.get("activation_beta") or []]
    resolved = []
    for name in names:
        activation = ACTIVATIONS.get(str(name).lower())
        if activation is None:
            raise UnsupportedError(f"activation {name!r} is not one of {', '.join(sorted(ACTIVATIONS))}", node.where())
        alpha = alphas.pop(0) if activation.alpha is not None and alphas else activation.alpha or 0.0
        beta = betas.pop(0) if activation.beta is not None and betas else activation.beta or 0.0
        resolved.append(Act(activation, alpha, beta))
    return [resolved[(d if sets > 1 else 0) * per:][:per] for d in range(dirs)]


# --- numpy reference (constant folding) -------------------------------------------------------------

def clipped(x: np.ndarray, bound: float) -> np.ndarray:
    return np.clip(x, -bound, bound) if bound > 0 else x


@dataclass
class Direction:
    """One direction's operands for a numpy step function (biases zero when absent)."""
    w: np.ndarray  # [G * hidden, input]
    r: np.ndarray  # [G * hidden, hidden]
    wb: np.ndarray
    rb: np.ndarray
    acts: list[Act]
    clip: float
    extra: dict = field(default_factory=dict)  # op-specific: peepholes, flags


# step(direction, gates_x [batch, G * hidden], h, c) -> (h, c); c is None for RNN and GRU.
StepFn = Callable[[Direction, np.ndarray, np.ndarray, np.ndarray | None], tuple[np.ndarray, np.ndarray | None]]


def reference(node: Node, inputs: list, cell: Cell, step: StepFn,
              extra: Callable[[int], dict] = lambda d: {}) -> list[np.ndarray]:
    """Y, Y_h (and Y_c): every direction through `step`, with sequence_lens, initial states and layout."""
    g = parse(node, cell)
    has_c = cell.states == 2

    def given(i: int, default: np.ndarray, batch_first: bool = False) -> np.ndarray:
        v = inputs[i] if i < len(inputs) else None
        return default if v is None else np.asarray(v).swapaxes(0, 1) if batch_first else np.asarray(v)

    gh = cell.gates * g.hidden
    x = given(X, None, bool(g.layout))
    b = given(B, np.zeros((g.directions, 2 * gh), np.float32))
    lens = given(SEQUENCE_LENS, np.full(g.batch, g.seq))
    zeros = np.zeros((g.directions, g.batch, g.hidden), np.float32)
    h0, c0 = given(INITIAL_H, zeros, bool(g.layout)), given(INITIAL_H + 1, zeros, bool(g.layout))
    y = np.zeros((g.seq, g.directions, g.batch, g.hidden), np.float32)
    y_h = np.zeros((g.directions, g.batch, g.hidden), np.float32)
    y_c = np.zeros_like(y_h)
    for d in range(g.directions):
        dn = Direction(inputs[W][d], inputs[R][d], b[d, :gh], b[d, gh:], g.acts[d], g.clip, extra(d))
        empty = (lens <= 0)[:, None]  # no last step: a zero final state, as onnxruntime
        h = np.where(empty, 0, h0[d]).astype(np.float32)
        c = np.where(empty, 0, c0[d]).astype(np.float32) if has_c else None
        times = range(g.seq - 1, -1, -1) if g.reverse[d] else range(g.seq)
        for t in times:
            active = (t < lens)[:, None]
            gates_x = (x[t] @ dn.w.T + dn.wb).astype(np.float32)
            h_new, c_new = step(dn, gates_x, h, c)
            h = np.where(active, h_new, h).astype(np.float32)
            if has_c:
                c = np.where(active, c_new, c).astype(np.float32)
            y[t, d] = np.where(active, h, 0)
        y_h[d] = h
        if has_c:
            y_c[d] = c
    if g.layout:
        y, y_h, y_c = y.transpose(2, 0, 1, 3), y_h.swapaxes(0, 1), y_c.swapaxes(0, 1)
    return [y, y_h, y_c][:len(node.outputs)]


# --- lowering --------------------------------------------------------------------------------------

@dataclass
class Product:
    """c[m, n] (leading dimension ldc) = a[m, k] (row stride a_rs) * packed + bias (broadcast rows)."""
    m: int
    n: int
    k: int
    a: str
    a_rs: int
    packed: str
    c: str
    ldc: int
    bias: str = "NULL"


@dataclass
class Pack:
    """mlcc_f32_gemm_pack_b of a run-time weight: b[p * b_rs + j * b_cs] for p < k, j < n."""
    k: int
    n: int
    b: str
    b_rs: int
    b_cs: int
    packed: str


def at(ptr: str, offset: int) -> str:
    """A C pointer expression `offset` elements past `ptr` (NULL stays NULL)."""
    return ptr if offset == 0 or ptr == "NULL" else f"{ptr} + {offset}u"


def _all_zero(v: Value | None) -> bool:
    return v is None or (v.is_const and not np.any(v.data))


# recurrent(lowering, d, h, h_stride, packs) -> the op's fields of direction d: at least "recurrent", the
# time step's products by R (run-time packs appended to packs)
RecurrentFn = Callable[["Lowering", int, str, int, list], dict]


class Lowering:
    """The lowering of one recurrent node: scratch, packed weights, per-direction C expressions."""

    def __init__(self, node: Node, ctx, cell: Cell):
        self.node, self.ctx, self.cell = node, ctx, cell
        self.g = g = parse(node, cell)
        self.gh = cell.gates * g.hidden
        self.tile = use_tile(ctx)
        ctx.use_kernels("f32-rnn")
        self._shared: dict[str, str] = {}
        self.gates_x = self.shared_scratch("gates_x", cexpr.bound(g.seq) * g.batch * self.gh)  # a run-time seq: its bound
        self.gates = self.shared_scratch("gates", g.batch * self.gh)
        b = node.input(B)
        self.bias = "NULL" if _all_zero(b) else ctx.ptr(b)
        lens = node.input(SEQUENCE_LENS)
        full = lens is not None and lens.is_const and bool(np.all(lens.data >= cexpr.bound(g.seq)))
        self.seq_lens = "NULL" if lens is None or full else ctx.ptr(lens)

    def shared_scratch(self, hint: str, floats: int) -> str:
        """A scratch buffer of `floats` floats, the same one for every direction."""
        if hint not in self._shared:
            self._shared[hint] = self.ctx.scratch(4 * floats, hint)
        return self._shared[hint]

    def output(self, index: int) -> Value | None:
        """Output `index` unless the model omits it."""
        out = self.node.outputs[index] if index < len(self.node.outputs) else None
        return out if out is not None and out.name else None

    def state_rows(self, ptr: str, d: int) -> tuple[str, int]:
        """(pointer, row stride) of direction d in a [dirs, batch, hidden] (layout 1: [batch, dirs, hidden])."""
        g = self.g
        if g.layout == 0:
            return at(ptr, d * g.batch * g.hidden), g.hidden
        return at(ptr, d * g.hidden), g.directions * g.hidden

    def state(self, index: int, d: int) -> dict:
        """State `index` (0 hidden, 1 cell) of direction d: its rows inside Y_h / Y_c when the model has that
        output (no copies), else in scratch; and its initial value's rows (NULL: zeros)."""
        out = self.output(1 + index)
        if out is not None:
            ptr, stride = self.state_rows(self.ctx.ptr(out), d)
        else:
            ptr, stride = self.shared_scratch("hc"[index] + "_state", self.g.batch * self.g.hidden), self.g.hidden
        init = self.node.input(INITIAL_H + index)
        src, src_stride = self.state_rows(self.ctx.ptr(init), d) if init is not None else ("NULL", 0)
        return dict(ptr=ptr, stride=stride, init=src, init_stride=src_stride)

    def weight(self, index: int, d: int, rows: slice, part: str, packs: list) -> str:
        """Rows `rows` (named `part`: "" for all, "_zr"...) of W or R (input `index`) of direction d, transposed and
        packed for the gemm: a build-time constant when the weight is one, else packed into scratch (the
        Pack appended to packs)."""
        v = self.node.inputs[index]
        k, n = v.shape[2], rows.stop - rows.start
        size = packed_size(k, n, self.tile.nr)
        name = f"{'XWR'[index]}{part}_packed".lower()
        if v.is_const:
            if name not in self._shared:
                block = np.ascontiguousarray(v.data[:, rows, :].transpose(0, 2, 1))
                self._shared[name] = self.ctx.constant(packed_constant(v, block, self.tile.nr, f"{part[1:]}_packed" if part else "packed"))
            return at(self._shared[name], d * size)
        packed = self.shared_scratch(name, size)
        packs.append(Pack(k, n, at(self.ctx.ptr(v), (d * v.shape[1] + rows.start) * k), 1, k, packed))
        return packed

    def recurrent_product(self, d: int, rows: slice, part: str, a: str, a_rs: int, packs: list) -> Product:
        """gates[:, rows] = a * (rows of R, named `part`)^T + those rows of Rb."""
        packed = self.weight(R, d, rows, part, packs)
        bias = at(self.bias, d * 2 * self.gh + self.gh + rows.start)
        return Product(self.g.batch, rows.stop - rows.start, self.g.hidden, a, a_rs, packed,
                       at(self.gates, rows.start), self.gh, bias)

    def direction(self, d: int, recurrent: RecurrentFn) -> dict:
        """Everything the frame template prints for direction d."""
        g, ctx = self.g, self.ctx
        packs: list[Pack] = []
        w = self.weight(W, d, slice(0, self.gh), "", packs)
        state = [self.state(i, d) for i in range(self.cell.states)]
        fields = dict(peephole="NULL")
        fields.update(recurrent(self, d, state[0]["ptr"], state[0]["stride"], packs))
        # rows of gates_x and of Y are (t, b) in layout 0, (b, t) in layout 1
        gx_t, gx_b = (g.batch * self.gh, self.gh) if g.layout == 0 else (self.gh, g.seq * self.gh)
        y_t, y_b = ((g.directions * g.batch * g.hidden, g.hidden) if g.layout == 0
                    else (g.directions * g.hidden, g.seq * g.directions * g.hidden))
        y = self.output(0)
        y_d = at(ctx.ptr(y), d * (g.hidden if g.layout else g.batch * g.hidden)) if y is not None else None
        return dict(
            fields, index=d, reverse=g.reverse[d], packs=packs, states=state,
            input=Product(g.seq * g.batch, self.gh, g.input_size, ctx.ptr(self.node.inputs[X]), g.input_size, w,
                          self.gates_x, self.gh, at(self.bias, d * 2 * self.gh)),
            gx=cexpr.offset(self.gates_x, ("t", gx_t)), gx_stride=gx_b,
            y=cexpr.offset(y_d, ("t", y_t)) if y_d else "NULL", y_stride=y_b if y_d else 0,
            acts=[dict(role=role, kind=a.activation.kind, alpha=a.alpha, beta=a.beta) for role, a in zip("fgh", g.acts[d])],
        )

    def emit(self, recurrent: RecurrentFn, **cell_fields) -> None:
        """Render the node: per direction, projections, the time loop and the op's step template."""
        g = self.g
        fields = dict(clip=g.clip, seq_lens=self.seq_lens, input_forget="false", linear_before_reset="false")
        fields.update(cell_fields)
        directions = [self.direction(d, recurrent) for d in range(g.directions)]
        seq_text = g.seq.text() if cexpr.is_variable(g.seq) else g.seq  # for a comment: the dims' own names
        self.ctx.emit("ops/recurrent.c.j2", seq=g.seq, seq_text=seq_text, batch=g.batch, hidden=g.hidden, config=self.tile.config,
                      nr=self.tile.nr, directions=directions, cell=fields, gates=self.gates,
                      step_template=self.cell.step_template)


def flops(node: Node, cell: Cell) -> int:
    x, r = node.inputs[X], node.inputs[R]
    dirs, gh, hidden = r.shape
    rows = x.shape[0] * x.shape[1]  # seq * batch in either layout
    return dirs * rows * (2 * gh * (x.shape[2] + hidden) + 4 * gh)

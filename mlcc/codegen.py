"""Code generation: render NAME.c and NAME.h, write the weights blob, copy in the runtime files needed.

Output is deterministic: the same model and options give byte-identical files.
"""

from __future__ import annotations

import hashlib
import math
import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import __version__, cexpr, cnames, dtypes, jsmodule, ops, paths, toolchain
from .ir import Value
from .lower import Program, Step
from .plan import MemoryPlan
from .render import render

WEIGHT_ALIGN = 64


@dataclass
class Sources:
    weights_bytes: int
    weights_count: int
    files: list[str]  # relative to the output folder


def _type(v: Value) -> str:
    return v.type_str()


def _layout_weights(program: Program, live: list[Step]) -> tuple[list[tuple[Value, int]], int]:
    """Constants some step's code names (or returned as outputs), in first-use order, at aligned offsets.
    A constant input the lowering consumed at build time (axes, shapes, bounds as literals) is left out."""
    placed, seen, offset = [], set(), 0
    used = [v for s in live for v in [*s.node.inputs, *s.constants] if v is not None and v.is_const and s.names(v)]
    used += [v for v in program.graph.outputs if v.is_const and v.nbytes]  # empty outputs are not copied
    for v in used:
        if id(v) in seen:
            continue
        seen.add(id(v))
        placed.append((v, offset))
        offset += (v.nbytes + WEIGHT_ALIGN - 1) // WEIGHT_ALIGN * WEIGHT_ALIGN
    return placed, offset


BYTE_ORDER_MARKS = (b"\xfe\xff", b"\xff\xfe", b"\xef\xbb\xbf")


def _clear_of_byte_order_marks(placed: list[tuple[Value, int]], total: int) -> tuple[list[tuple[Value, int]], int]:
    """clang's #embed refuses a file that opens like a UTF-16 or UTF-8 text (e.g. an int64 -2 first): such a
    blob starts 64 zero bytes later, which keeps every constant's alignment."""
    first = min(placed, key=lambda p: p[1], default=None)
    head = np.ascontiguousarray(first[0].data, dtype=first[0].dtype).tobytes()[:3] if first and first[1] == 0 else b""
    if not head.startswith(BYTE_ORDER_MARKS):
        return placed, total
    return [(v, offset + 64) for v, offset in placed], total + 64


def _write_weights(path: Path, placed: list[tuple[Value, int]], total: int) -> None:
    with path.open("wb") as f:
        for v, offset in placed:
            f.seek(offset)
            f.write(np.ascontiguousarray(v.data, dtype=v.dtype).tobytes())
        f.truncate(total)


def _copy_runtime(out_dir: Path, families: list[str], target) -> list[str]:
    runtime = paths.runtime_dir()
    dest = out_dir / "mlcc_runtime"
    files = []
    for header in sorted((runtime / "include").rglob("*.h")):
        rel = header.relative_to(runtime)
        family = header.stem if header.parent.name == "kernels" else None
        if family is not None and family not in families:
            continue
        files.append(rel)
    for family in families:
        files += [src.relative_to(runtime) for src in toolchain.family_sources(family, target)]
        files += [h.relative_to(runtime) for h in sorted((runtime / "kernels" / family).glob("*.h"))]
    for rel in files:
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(runtime / rel, dest / rel)
    return [f"mlcc_runtime/{rel.as_posix()}" for rel in files]


def _dims(variables, graph) -> tuple[list[dict], list[str], list[str]]:
    """The run-time dimensions as the templates see them, the C assignments writing each output's shape into
    output_shapes, and the dimensions no output shape names (their locals are marked used)."""
    dims = [dict(member=cnames.identifier(v.name), local=cexpr.dim_name(v.name), low=v.low, high=v.high,
                 macro=cnames.identifier(v.name).upper(), name=v.name) for v in variables]
    writes, named, at = [], set(), 0
    for v in graph.outputs:
        for d in (v.extents if v.extents is not None else v.shape):
            writes.append(f"output_shapes[{at}] = {cexpr.literal(d)};")
            named |= set(d.symbols) if cexpr.is_variable(d) else set()
            at += 1
    unnamed = [d["local"] for d, v in zip(dims, variables) if v.name not in named]
    return dims, writes, unnamed


def _nbytes(v: Value):
    """A tensor's bytes, a C expression of the run-time sizes where it varies."""
    if v.extents is None:
        return f"{v.nbytes}u"
    return cexpr.literal(cexpr.Sym.of(np.dtype(v.dtype).itemsize * math.prod(v.extents)))


def generate(program: Program, plan: MemoryPlan, out_dir: Path, name: str, model_bytes: bytes, source_name: str,
             variables=()) -> Sources:
    graph = program.graph
    names = program.names
    NAME = name.upper()
    codes = _step_codes(program, plan)
    live = [s for index, s in enumerate(program.steps) if index not in plan.elided_steps]  # steps with code
    placed, weights_total = _layout_weights(program, live)
    placed, weights_total = _clear_of_byte_order_marks(placed, weights_total)
    weights_file = f"{name}.weights.bin"
    if weights_total:
        _write_weights(out_dir / weights_file, placed, weights_total)

    read = {id(v) for s in live for v in s.reads if s.names(v)}
    params, taken = [], {"arena", "inputs", "outputs"}
    inputs = []
    for i, v in enumerate(graph.inputs):
        ident = cnames.identifier(v.name)
        while ident in taken:
            ident += "_"
        taken.add(ident)
        inputs.append(dict(index=i, onnx_name=v.name, type=_type(v), c_type=dtypes.c_type(v.dtype),
                           ident=names[id(v)], param_ident=ident, used=id(v) in read))
        params.append(f"const {dtypes.c_type(v.dtype)} *{ident}")

    produced = {id(v) for s in program.steps for v in s.writes}
    outputs, copies, bound, copied_values = [], [], set(), set()
    for i, (v, onnx_name) in enumerate(zip(graph.outputs, graph.output_names)):
        ident = cnames.identifier(onnx_name)
        while ident in taken:
            ident += "_"
        taken.add(ident)
        declared = id(v) in produced and id(v) not in bound  # a step writes straight into this buffer
        if declared:
            bound.add(id(v))
        else:  # an input, a constant, or a value already bound to an earlier output
            source_desc = ("a model input" if any(v is x for x in graph.inputs) else
                           "a constant" if v.is_const else "the same tensor as an earlier output")
            if v.nbytes:  # an empty output needs no copy
                copies.append(dict(index=i, onnx_name=onnx_name, source=names[id(v)], source_desc=source_desc, nbytes=_nbytes(v)))
                copied_values.add(id(v))
        outputs.append(dict(index=i, onnx_name=onnx_name, type=_type(v), c_type=dtypes.c_type(v.dtype),
                            ident=names[id(v)], param_ident=ident, declared=declared))
        params.append(f"{dtypes.c_type(v.dtype)} *{ident}")
    copied = {c["source"] for c in copies}
    used = {id(v) for s in live for v in s.uses.values()} | copied_values
    arena_tensors, views = _declarations(program, plan, used)
    bases = {v["base"] for v in views}
    for t in inputs:
        t["used"] = t["used"] or t["ident"] in copied or t["ident"] in bases
    weights = [dict(ident=names[id(v)], c_type=dtypes.c_type(v.dtype), offset=off, type=_type(v)) for v, off in placed]

    steps = []
    for index, s in enumerate(program.steps):
        ins = ", ".join(_type(v) for v in s.node.inputs if v is not None)
        outs = ", ".join(_type(v) for v in s.node.outputs if v.name)
        steps.append(dict(index=index, node_name=s.node.name, op_type=s.node.op_type,
                          code=_scoped(codes[index], s.scoped and index not in plan.elided_steps),
                          signature=cnames.comment_text(f"{ins} -> {outs}")))

    prepared = [dict(ident=names[id(v)], c_type=dtypes.c_type(v.dtype), offset=off, type=_type(v), nbytes=v.nbytes)
                for v, off in plan.prepared]
    headers = [f"mlcc/kernels/{f}.h" for f in program.kernel_families
               if (paths.runtime_dir() / "include" / "mlcc" / "kernels" / f"{f}.h").exists()]
    dims, shape_writes, unnamed_dims = _dims(variables, graph)
    common = dict(name=name, NAME=NAME, version=__version__, source=source_name, target=program.target.name,
                  inputs=inputs, outputs=outputs, params=params, arena_bytes=plan.arena_bytes,
                  weights_bytes=weights_total, prepared_bytes=plan.prepared_bytes, dims=dims,
                  outputs_hold_intermediates=any(a.link.kind in ("room", "tail") for a in plan.aliases),
                  output_shapes_len=len(shape_writes), output_ranks=[len(v.shape) for v in graph.outputs],
                  parallel_type=_parallel_type(),
                  parallel_steps=any(s.parallel for index, s in enumerate(program.steps)
                                     if index not in plan.elided_steps))
    (out_dir / f"{name}.h").write_text(render("model.h.j2", **common))
    c_text = render(
        "model.c.j2", **common,
        model_sha256=hashlib.sha256(model_bytes).hexdigest(),
        target_description=program.target.description,
        compile_command=toolchain.display_command(program.target, f"{name}.c"),
        intermediates_bytes=plan.intermediates_bytes,
        weights_file=weights_file, headers=headers, static_arrays=program.static_arrays,
        arena_tensors=arena_tensors, views=views, weights=weights, steps=steps, output_copies=copies,
        prepared=prepared, preparations=[p.code for p in program.preparations],
        prepared_marker=_prepared_marker(model_bytes, program, plan),
        shape_writes=shape_writes, unnamed_dims=unnamed_dims,
    )
    (out_dir / f"{name}.c").write_text(_tidy(c_text))
    files = [f"{name}.h", f"{name}.c", *([weights_file] if weights_total else []), *_copy_runtime(out_dir, program.kernel_families, program.target)]
    if program.target.is_wasm:  # the ES module that loads NAME.wasm in browsers and Node
        unlinked = (0, 0) if program.target.thread_pool else None  # a threads build's pages: written once linked
        files.insert(2, jsmodule.write_module(out_dir, name, source_name, graph, plan.arena_bytes, variables, unlinked))
    return Sources(weights_total, len(placed), files)


def _parallel_type() -> str:
    """mlcc_parallel's definition, from runtime_c/include/mlcc/parallel.h (its one home), for NAME.h: the
    generated header includes nothing of the runtime's."""
    text = (paths.runtime_dir() / "include" / "mlcc" / "parallel.h").read_text()
    begin, end = "/* mlcc_parallel: begin", "/* mlcc_parallel: end */"
    return text[text.index("\n", text.index(begin)) + 1:text.index(end)].rstrip("\n")


def _prepared_marker(model_bytes: bytes, program: Program, plan: MemoryPlan) -> str:
    """The 64-bit value the run function writes at the arena's start once its prepared weights are written:
    derived from the model and what is prepared where, so an arena prepared by another model or build does
    not pass (never zero, an arena's likeliest first bytes)."""
    layout = ";".join(f"{program.names[id(v)]}@{offset}:{v.nbytes}" for v, offset in plan.prepared)
    digest = hashlib.sha256(model_bytes + program.target.name.encode() + layout.encode()).digest()
    return f"0x{int.from_bytes(digest[:8], 'little') | 1:016x}"


_LINKED = {"view": "view of {}", "concat": "written into its range of {}", "strided": "written into its channels of {}",
           "in-place": "written over {}",
           "placed": "written where {} goes", "room": "in {}'s buffer, before it is written",
           "tail": "at the end of {}'s buffer, read as it is written"}


def _step_codes(program: Program, plan: MemoryPlan) -> list[str]:
    """Each step's C; a step whose outputs are all views of other tensors' bytes has none."""
    names = program.names
    codes = []
    for index, s in enumerate(program.steps):
        shown = [names[id(v)] for v in s.writes if v.nbytes]
        if index not in plan.elided_steps:
            codes.append(s.code)
        elif ops.lookup(s.node.op_type, s.node.domain).gathers_inputs:
            codes.append(f"/* no code: the inputs were written straight into {names[id(s.node.outputs[0])]} */")
        elif shown:
            views = "is a view" if len(shown) == 1 else "are views"
            codes.append(f"/* no code: {', '.join(shown)} {views} of {names[id(s.node.inputs[0])]} */")
        else:
            codes.append("/* no code: the outputs are empty */")
    return codes


def _declarations(program: Program, plan: MemoryPlan, used: set[int]) -> tuple[list[dict], list[dict]]:
    """Pointers to the arena's tensors (buffers and the aliases into them, by offset) and to the aliases
    into the caller's buffers, each declared only where some code uses it (`used`: ids of those values)."""
    names = program.names
    lifetime: dict[int, list[int]] = {}
    for index, s in enumerate(program.steps):
        for v in [*s.reads, *s.writes]:
            lifetime.setdefault(id(v), [index, index])[1] = index
    placed = {id(b.value): b.offset for b in plan.buffers}
    arena, views = [], []
    for b in plan.buffers:
        if id(b.value) in used:
            arena.append(dict(ident=names[id(b.value)], c_type=dtypes.c_type(b.value.dtype), offset=b.offset,
                              type=_type(b.value), nbytes=b.value.nbytes, first=b.first, last=b.last, note=""))
    for a in plan.aliases:
        v, ident = a.value, names[id(a.value)]
        if id(v) not in used:
            continue
        note = _LINKED[a.link.kind].format(names[id(a.link.parent)])
        first, last = lifetime[id(v)]
        if id(a.root) in placed:
            arena.append(dict(ident=ident, c_type=dtypes.c_type(v.dtype), offset=placed[id(a.root)] + a.offset,
                              type=_type(v), nbytes=v.nbytes, first=first, last=last, note=f", {note}"))
        else:
            read_only = any(a.root is x for x in program.graph.inputs)
            retyped = v.dtype != a.root.dtype  # (an output's room): the offset in bytes, through a byte pointer
            views.append(dict(ident=ident, c_type=dtypes.c_type(v.dtype), const="const " if read_only else "",
                              base=names[id(a.root)], elements=None if retyped else a.offset // v.dtype.itemsize,
                              byte_offset=a.offset if retyped else None, type=_type(v), note=note))
    arena.sort(key=lambda t: (t["offset"], t["first"], t["ident"]))
    return arena, views


def _tidy(text: str) -> str:
    """Collapse runs of blank lines that template control flow leaves behind."""
    out, blank = [], 0
    for line in text.splitlines():
        blank = blank + 1 if not line.strip() else 0
        if blank <= 1:
            out.append(line.rstrip())
    return "\n".join(out).rstrip() + "\n"


def _scoped(code: str, scoped: bool) -> str:
    """A step that declares variables at its top level (Step.scoped) gets its own block, so steps never collide."""
    if not scoped:
        return code
    return "{\n" + "\n".join(f"    {line}" if line else line for line in code.splitlines()) + "\n}"

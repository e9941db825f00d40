"""The `mlcc` command line. Every user error becomes one `error:` line and exit status 2."""

from __future__ import annotations

import functools
import json
import logging
import sys
from pathlib import Path

import click
import numpy as np

from . import __version__, extents
from .errors import MlccError, UsageError

log = logging.getLogger("mlcc")


class OneLineErrors(click.Group):
    """Turn MlccError and click's usage errors into `error: ...` on one line, exit 2."""

    def main(self, *args, **kwargs):
        kwargs["standalone_mode"] = False
        try:
            return super().main(*args, **kwargs)
        except MlccError as exc:
            _fail(str(exc))
        except click.exceptions.Abort:
            _fail("interrupted")
        except click.exceptions.NoArgsIsHelpError as exc:
            _fail(f"no command given; commands are: {', '.join(self.list_commands(exc.ctx))} (see `{exc.ctx.command_path} --help`)")
        except click.ClickException as exc:
            ctx = getattr(exc, "ctx", None)
            where = f" (see `{ctx.command_path} --help`)" if ctx is not None else ""
            _fail(f"{exc.format_message()}{where}")
        except KeyboardInterrupt:
            _fail("interrupted")
        except MemoryError:  # a last resort: size limits should refuse such models before they allocate
            _fail("out of memory")

    def resolve_command(self, ctx, args):
        try:
            return super().resolve_command(ctx, args)
        except click.UsageError as exc:
            raise click.UsageError(f"{exc.message} Commands are: {', '.join(self.list_commands(ctx))}.", ctx) from None


def _fail(message: str):
    click.echo(f"error: {' '.join(str(message).split())}", err=True)
    sys.exit(2)


_MAX_DIM = 2**62  # beyond ONNX's int64 dims; the frontend's size limits refuse smaller but too large ones


def _parse_shapes(values: tuple[str, ...]) -> dict[str, tuple[int, ...]]:
    shapes = {}
    for text in values:
        name, sep, dims = text.rpartition("=")
        if not sep or not name:
            raise UsageError(f"--shape {text!r}: expected INPUT=D0,D1,...")
        shape = tuple(extents.parse_range(d.strip(), f"--shape {text!r}") for d in dims.split(",")) if dims.strip() else ()
        if not all(_dim_ok(given) for given in shape):
            raise UsageError(f"--shape {text!r}: every dim must be a positive whole number up to {_MAX_DIM} "
                             "(or a range MIN..MAX of them, MIN from 0)")
        shapes[name] = shape
    return shapes


def _dim_ok(given: int | tuple[int, int]) -> bool:
    """A fixed dim is positive; a range may start at 0 (a KV cache's empty past)."""
    low, high = given if isinstance(given, tuple) else (given, given)
    return (0 <= low if isinstance(given, tuple) else 0 < low) and high <= _MAX_DIM


def _parse_dims(values: tuple[str, ...]) -> dict[str, int | tuple[int, int]]:
    dims = {}
    for text in values:
        name, sep, value = text.rpartition("=")
        expected = (f"--dim {text!r}: expected SYMBOL=N or SYMBOL=MIN..MAX with positive whole numbers up to {_MAX_DIM} "
                    "(MIN from 0)")
        if not sep or not name or not value.replace("..", "").strip().isdigit():
            raise UsageError(expected)
        given = extents.parse_range(value.strip(), f"--dim {text!r}")
        if not _dim_ok(given):
            raise UsageError(expected)
        dims[name] = given
    return dims


def _parse_frozen(values: tuple[str, ...]) -> dict[str, np.ndarray]:
    frozen = {}
    for text in values:
        name, sep, listed = text.partition("=")
        items = [item.strip() for item in listed.split(",") if item.strip()]
        try:
            numbers = [int(item) for item in items] if all(_is_int(item) for item in items) else [float(item) for item in items]
        except ValueError:
            numbers = None
        if not sep or not name or numbers is None:
            raise UsageError(f"--freeze {text!r}: expected INPUT=V0,V1,... with numbers")
        frozen[name] = np.array(numbers)
    return frozen


def _is_int(text: str) -> bool:
    return text.lstrip("+-").isdigit()


def _progress():
    """A stage printer on a terminal, silence otherwise."""
    if not sys.stderr.isatty():
        return lambda stage: None
    return lambda stage: click.echo(f"  {stage} ...", err=True)


shape_options = [
    click.option("--shape", "shapes", multiple=True, metavar="INPUT=D0,D1,...",
                 help="Fix an input's shape; a dim MIN..MAX varies at run time within that range."),
    click.option("--dim", "dims", multiple=True, metavar="SYMBOL=N|MIN..MAX",
                 help="Fix a symbolic dimension, or let it vary at run time within MIN..MAX."),
]


optimize_for_option = click.option(
    "--optimize-for", "optimize_for", type=click.Choice(["size", "speed"]), default=None,
    help="size: small workspaces and the model's own weights; speed: both may grow [the target's policy].")
outputs_overlap_option = click.option(
    "--outputs-overlap-inputs", "outputs_overlap_inputs", is_flag=True,
    help="The caller may pass an output buffer overlapping an input (processing in place): keep intermediates "
         "out of the output buffers (by default they use them before they are written).")


def with_shapes(f):
    for option in reversed(shape_options):
        f = option(f)
    return f


def opt_level_options(f):
    @functools.wraps(f)  # keeps the options declared below this one
    def with_default(*args, opt_level=None, **kwargs):
        # click lets a later flag's default override an earlier one's, so none has a default: unset is -O2
        if opt_level == 3:
            raise UsageError("-O3 is not a level (it ran exactly the -O2 passes and was removed); levels are -O0, -O1, -O2 (default)")
        return f(*args, opt_level=2 if opt_level is None else opt_level, **kwargs)

    for level in (3, 2, 1, 0):
        with_default = click.option(f"-O{level}", "opt_level", flag_value=level, hidden=level == 3,
                                    help=f"Optimisation level {level}" + (" (default)." if level == 2 else "."))(with_default)
    return with_default


def _feeds(path: str | None, report_inputs: list[dict], seed: int = 0) -> dict[str, np.ndarray]:
    if path:
        try:
            with np.load(path) as data:
                return {k: data[k] for k in data.files}
        except Exception as exc:
            raise UsageError(f"--inputs {path!r}: cannot read as .npz ({type(exc).__name__})") from None
    return random_inputs(report_inputs, seed)


def random_inputs(specs: list[dict], seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    feeds = {}
    for spec in specs:
        dtype = np.dtype(spec["dtype"])
        if dtype.kind == "f":
            feeds[spec["name"]] = rng.standard_normal(spec["shape"]).astype(dtype)
        elif dtype.kind == "b":
            feeds[spec["name"]] = rng.integers(0, 2, spec["shape"]).astype(dtype)
        else:
            feeds[spec["name"]] = rng.integers(0, 4, spec["shape"]).astype(dtype)
    return feeds


@click.group(cls=OneLineErrors, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="mlcc")
@click.option("-v", "--verbose", is_flag=True, help="Log what each stage does.")
def main(verbose: bool):
    """mlcc: compile ONNX models to standalone C and WebAssembly."""
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING, format="%(name)s: %(message)s")


@main.command()
@click.argument("model", type=click.Path(dir_okay=False))
@click.option("-t", "--target", default="host", show_default=True, help="Target name (see `mlcc targets`).")
@click.option("-o", "--out", "out_dir", type=click.Path(file_okay=False), help="Output folder [mlcc-out/<stem>-<target>].")
@click.option("--name", help="C name prefix [the model file's stem].")
@with_shapes
@opt_level_options
@click.option("--disable-pass", "disabled", multiple=True, metavar="PASS", help="Switch a pass off (repeatable).")
@click.option("--verify-each", is_flag=True, help="Check each stage's contract (slower).")
@click.option("--print-after", "print_after", multiple=True, metavar="PASS", help="Print the IR after a pass (repeatable).")
@click.option("--freeze", "frozen", multiple=True, metavar="INPUT=V0,V1,...",
              help="Make an input a constant with these values (e.g. a Reshape's shape fed as an input).")
@optimize_for_option
@click.option("--arena-limit", "arena_limit", type=click.IntRange(min=0), metavar="BYTES",
              help="Refuse a build whose memory plan needs a larger arena.")
@outputs_overlap_option
@click.option("--tuning", "tuning_file", type=click.Path(dir_okay=False), metavar="FILE",
              help="Per-layer choices measured by `mlcc tune` (entries for other targets or CPUs are ignored).")
def build(model, target, out_dir, name, shapes, dims, opt_level, disabled, verify_each, print_after, frozen,
          optimize_for, arena_limit, outputs_overlap_inputs, tuning_file):
    """Compile MODEL to C and the target's artifacts."""
    from . import passes, slow_path
    from .ir import format_graph
    from .pipeline import BuildOptions, build as run_build

    for pass_name in print_after:
        if pass_name not in passes.all_pass_names():
            raise UsageError(f"--print-after: unknown pass {pass_name!r}; passes are: {', '.join(passes.all_pass_names())}")

    def after_pass(pass_name, graph):
        if pass_name in print_after:
            click.echo(f"; IR after {pass_name}\n{format_graph(graph)}", err=True)

    options = BuildOptions(target=target, out_dir=Path(out_dir) if out_dir else None, name=name,
                           shapes=_parse_shapes(shapes), dims=_parse_dims(dims), frozen=_parse_frozen(frozen),
                           opt_level=opt_level, disabled_passes=tuple(disabled), verify_each=verify_each, progress=_progress(),
                           after_pass=after_pass, optimize_for=optimize_for, arena_limit=arena_limit,
                           outputs_overlap_inputs=outputs_overlap_inputs, tuning=Path(tuning_file) if tuning_file else None)
    folder, report = run_build(model, options)
    _tuning_note(report)
    artifacts = ", ".join(f"{p}" for p in report["artifacts"].values()) or "C sources only"
    click.echo(f"built {folder}/ for {report['target']}: {artifacts}")
    sizes = report["size"]["artifacts"]
    code = "; ".join(f"{s['code_bytes']} B in {report['artifacts'][k]}" for k, s in sizes.items()) or "not compiled"
    click.echo(f"  size: code {code}; read-only weights {report['weights_bytes']} B; arena {report['arena_bytes']} B "
               f"(intermediates {report['intermediates_bytes']} B; the unfused graph's greedy plan "
               f"{report['arena_greedy_unfused_bytes']} B)")
    policy = report["optimized_for"]
    click.echo(f"  policy: memory {policy['memory']}, weights {policy['weights']} "
               f"(the model's own {policy['model_weights_bytes']} B; {policy['winograd_convolutions']} Winograd convolutions)")
    stack = report["size"].get("stack_bytes")
    if sizes and stack is not None:  # bare metal: what a part's flash and RAM must hold
        totals = "; ".join(f"{report['artifacts'][k]} flash {s['flash_bytes']} B, RAM {s['ram_bytes']} B"
                           for k, s in sizes.items())
        click.echo(f"  memory: stack {stack} B (deepest call of the run function); {totals} "
                   f"(RAM = arena + stack + data + bss)")
    for line in slow_path.summary(report):
        click.echo(line)


def _tuning_note(report: dict) -> None:
    """Say what a tuning file gave the build, and that it ignored other machines' entries."""
    tuned = report.get("tuning")
    if tuned is None:
        return
    if tuned["ignored"]:
        click.echo(f"note: {tuned['file']}: {tuned['ignored']} tuning entries for other targets or CPUs ignored "
                   f"(this build: {report['target']} on {tuned['cpu']})", err=True)
    click.echo(f"  tuning: {tuned['entries']} entries of {tuned['file']} for {report['target']} on {tuned['cpu']}")


@main.command()
@click.argument("folder", type=click.Path(file_okay=False))
@click.option("--inputs", "inputs_path", type=click.Path(dir_okay=False), help="Inputs as .npz keyed by ONNX input names.")
@click.option("--outputs", "outputs_path", type=click.Path(dir_okay=False), help="Write outputs to this .npz.")
@click.option("--seed", default=0, show_default=True, help="Seed of the random inputs used without --inputs.")
@click.option("--runner", metavar="RUNNER",
              help="host, wasmtime, node, chromium, qemu-user or qemu-system [the target's own].")
def run(folder, inputs_path, outputs_path, seed, runner):
    """Run what `mlcc build` made in FOLDER on its target's runner (or --runner)."""
    from . import runners

    model = runners.load(folder, runner=runner)
    outputs = model.run(_feeds(inputs_path, model.inputs, seed))
    if outputs_path:
        np.savez(outputs_path, **outputs)
    for name, value in outputs.items():
        flat = value.reshape(-1)
        preview = np.array2string(flat[:6], precision=5, separator=", ")
        click.echo(f"{name}: {value.dtype}{list(value.shape)} {preview}{' ...' if flat.size > 6 else ''}")


@main.command()
@click.argument("model", type=click.Path(dir_okay=False))
@click.option("-t", "--target", default="host", show_default=True)
@with_shapes
@click.option("--inputs", "inputs_path", type=click.Path(dir_okay=False))
@click.option("--rtol", default=1e-3, show_default=True)
@click.option("--atol", default=1e-4, show_default=True)
@opt_level_options
@click.option("--seed", default=0, show_default=True)
@optimize_for_option
@click.option("--layers", is_flag=True, help="Compare every intermediate tensor, in execution order, to find the first wrong layer.")
@click.option("--runner", metavar="RUNNER", help="Run on this runner [the target's own] (see `mlcc run --help`).")
def verify(model, target, shapes, dims, inputs_path, rtol, atol, opt_level, seed, optimize_for, layers, runner):
    """Build MODEL, run it, and compare with onnxruntime (exit 1 on mismatch). A quantized model is compared
    with onnxruntime's graph as written (optimisation off: the exact integer semantics), each quantized
    output within one quantization step."""
    import tempfile

    import onnx

    from . import runners
    from .pipeline import BuildOptions, build as run_build
    from .verify import compare, is_quantized, output_step, reference_outputs

    if layers:
        from .layers import format_layers, verify_layers

        options = BuildOptions(target=target, shapes=_parse_shapes(shapes), dims=_parse_dims(dims), opt_level=opt_level,
                               progress=_progress(), optimize_for=optimize_for)
        feeds = _feeds(inputs_path, [], seed) if inputs_path else None
        results, engine = verify_layers(model, options, feeds, runner, rtol, atol, seed)
        click.echo(format_layers(results, engine, rtol, atol))
        sys.exit(0 if all(r.comparison.ok for r in results) else 1)
    with tempfile.TemporaryDirectory(prefix="mlcc-verify-") as tmp:
        options = BuildOptions(target=target, out_dir=Path(tmp) / "out", shapes=_parse_shapes(shapes),
                               dims=_parse_dims(dims), opt_level=opt_level, progress=_progress(),
                               optimize_for=optimize_for)
        folder, report = run_build(model, options)
        loaded = runners.load(folder, runner=runner)
        feeds = _feeds(inputs_path, loaded.inputs, seed)
        got = loaded.run(feeds)
    proto = onnx.load(str(model))
    quantized = is_quantized(proto)
    expected, engine = reference_outputs(proto, feeds, [o["name"] for o in report["outputs"]], exact=quantized)
    ok = True
    for name in got:
        step = output_step(proto, name) if quantized else None
        if step is not None:  # an 8-bit result may sit one step off the reference where a rounding tie falls
            result = compare(got[name], expected[name], 0.0, step * (1 + 1e-6))
            exact = float(np.mean(np.asarray(got[name]) == expected[name])) if expected[name].size else 1.0
            bound = f"vs {engine}, within one quantization step {step:.3g}; {exact:.1%} bit-exact"
        else:
            result = compare(got[name], expected[name], rtol, atol)
            bound = f"vs {engine}, rtol {rtol}, atol {atol}"
        ok &= result.ok
        click.echo(f"{'ok  ' if result.ok else 'FAIL'} {name}: max abs err {result.max_abs:.3g}, "
                   f"max rel err {result.max_rel:.3g} ({bound})")
    sys.exit(0 if ok else 1)


@main.command()
@click.argument("model", type=click.Path(dir_okay=False))
@click.option("-t", "--target", default="host", show_default=True)
@with_shapes
@opt_level_options
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.option("--plot", type=click.Path(dir_okay=False), help="Also draw the memory timeline (steps x offsets) into this SVG file.")
@optimize_for_option
@outputs_overlap_option
def inspect(model, target, shapes, dims, opt_level, as_json, plot, optimize_for, outputs_overlap_inputs):
    """Show ops, shapes, parameters, FLOPs and the memory plan, without compiling."""
    from .inspect import describe, format_text

    info = describe(Path(model), target, _parse_shapes(shapes), _parse_dims(dims), opt_level,
                    plot=Path(plot) if plot else None, optimize_for=optimize_for,
                    outputs_overlap_inputs=outputs_overlap_inputs)
    click.echo(json.dumps(info, indent=2) if as_json else format_text(info))


@main.command()
@click.argument("path", type=click.Path())
@click.option("-t", "--target", default="host", show_default=True, help="Target, when PATH is an .onnx model to build first.")
@click.option("--warmup", default=5, show_default=True, type=click.IntRange(min=0), help="Untimed runs first.")
@click.option("--repeat", default=30, show_default=True, type=click.IntRange(min=1), help="Timed runs.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output (with every run's time).")
@click.option("--profile", "with_profile", is_flag=True, help="Also time each step of an instrumented build.")
@click.option("--top", default=15, show_default=True, type=click.IntRange(min=1), help="Profile rows shown.")
@click.option("--seed", default=0, show_default=True, help="Seed of the random inputs.")
@click.option("--threads", default=1, show_default=True, type=click.IntRange(min=1),
              help="Threads: more than 1 times NAME_run_parallel on the runtime's thread pool (host targets).")
@optimize_for_option
def bench(path, target, warmup, repeat, as_json, with_profile, top, seed, threads, optimize_for):
    """Time what `mlcc build` made in PATH (or build the model PATH first): latency, memory, profile."""
    import tempfile

    from .bench import bench as run_bench, format_bench, format_profile, profile

    with tempfile.TemporaryDirectory(prefix="mlcc-bench-") as tmp:
        folder = Path(path)
        if folder.is_file():
            from .pipeline import BuildOptions, build as run_build

            folder, _ = run_build(path, BuildOptions(target=target, out_dir=Path(tmp) / "out", progress=_progress(),
                                                     optimize_for=optimize_for))
        elif not folder.is_dir():
            raise UsageError(f"{path}: no such build folder or model file")
        result = run_bench(folder, warmup, repeat, seed, threads)
        layers = profile(folder, warmup, repeat, seed, threads) if with_profile else None
    if as_json:
        click.echo(json.dumps({**result, **({"profile": layers} if layers else {})}, indent=2))
        return
    click.echo(format_bench(result))
    if layers:
        click.echo(format_profile(layers, top))


@main.command()
@click.argument("model", type=click.Path(dir_okay=False))
@click.option("--calibration", "calibration", required=True, type=click.Path(dir_okay=False), metavar="DATA.npz",
              help="Calibration inputs keyed by ONNX input names, samples stacked along the first axis.")
@click.option("-o", "--out", "out_path", type=click.Path(dir_okay=False), help="The int8 model [MODEL's stem + .int8.onnx].")
@click.option("--per-tensor", is_flag=True, help="One weight scale per tensor (default: per output channel).")
@click.option("--activations", type=click.Choice(["uint8", "int8"]), default="uint8", show_default=True,
              help="The 8-bit type of activations.")
def quantize(model, calibration, out_path, per_tensor, activations):
    """Quantize MODEL to int8 (QDQ, through onnxruntime.quantization) and report its error against fp32."""
    from . import quantize as quantizer

    source = Path(model)
    out = Path(out_path) if out_path else source.with_name(f"{source.stem}.int8.onnx")
    if out.resolve() == source.resolve():
        raise UsageError(f"-o {str(out)!r} would overwrite the model")
    result = quantizer.quantize(source, calibration, out, per_channel=not per_tensor, activations=activations)
    for line in quantizer.summary(model, result, not per_tensor, activations):
        click.echo(line)


@main.command()
@click.argument("model", type=click.Path(dir_okay=False))
@click.option("-t", "--target", default="host", show_default=True, help="Target name (see `mlcc targets`).")
@click.option("-o", "--out", "out_path", type=click.Path(dir_okay=False),
              help="The tuning file, merged with what it holds [MODEL's stem + .tuning.json].")
@with_shapes
@optimize_for_option
@click.option("--rounds", default=7, show_default=True, type=click.IntRange(min=1),
              help="Rounds alternating between the candidate builds.")
@click.option("--repeat", default=5, show_default=True, type=click.IntRange(min=1), help="Timed runs per build per round.")
@click.option("--margin", default=0.03, show_default=True, type=click.FloatRange(min=0, max=1, max_open=True),
              help="How much faster than the default a candidate must be to replace it.")
@click.option("--seed", default=0, show_default=True, help="Seed of the random inputs.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output (every candidate's time).")
def tune(model, target, out_path, shapes, dims, optimize_for, rounds, repeat, margin, seed, as_json):
    """Time each distinct layer's candidate implementations and write a tuning file for `mlcc build --tuning`."""
    from .pipeline import BuildOptions
    from .tune import summary, tune as run_tune

    source = Path(model)
    out = Path(out_path) if out_path else source.with_name(f"{source.stem}.tuning.json")
    options = BuildOptions(target=target, shapes=_parse_shapes(shapes), dims=_parse_dims(dims), optimize_for=optimize_for)
    log_line = (lambda line: None) if as_json else (lambda line: click.echo(line, err=True))
    result = run_tune(source, options, out, rounds, repeat, margin, seed, log_line)
    if as_json:
        click.echo(json.dumps(result, indent=2))
        return
    for line in summary(result):
        click.echo(line)


@main.command()
def targets():
    """List the targets."""
    from .targets import all_targets, host_target

    try:
        host = host_target().name
    except MlccError:
        host = None
    rows = [("name", "triple", "cpu", "artifacts", "runner", "memory/weights", "description")]
    for t in all_targets().values():
        mark = " (host)" if t.name == host else ""
        rows.append((t.name + mark, t.triple, t.cpu or "-", ",".join(t.artifacts), t.runner,
                     f"{t.memory_policy}/{t.weights_policy}", t.description))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    for r in rows:
        click.echo("  ".join(c.ljust(w) for c, w in zip(r, widths)) + "  " + r[-1])


if __name__ == "__main__":
    main()

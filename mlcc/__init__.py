"""mlcc: an ahead-of-time compiler from ONNX to standalone C and WebAssembly.

    model = mlcc.compile("model.onnx", target="host")   # or mlcc.load("mlcc-out/model-x86_64")
    y = model(x)                                         # numpy in, numpy out
"""

__version__ = "0.1.0"


def compile(model, target: str = "host", **options):
    """Build an ONNX model for `target` and load it: see mlcc.api.compile."""
    from .api import compile as compile_model

    return compile_model(model, target, **options)


def load(folder, runner=None, threads=1):
    """Load a build folder written by `mlcc build`: see mlcc.api.load."""
    from .api import load as load_model

    return load_model(folder, runner, threads)

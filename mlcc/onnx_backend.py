"""mlcc as an `onnx.backend.base.Backend`, so onnx's own backend test runner (the harness behind the public
ONNX Backend Scoreboard) runs against mlcc unchanged:

    import onnx.backend.test, mlcc.onnx_backend
    globals().update(onnx.backend.test.BackendTest(mlcc.onnx_backend, __name__).enable_report().test_cases)

`prepare` compiles the model exactly as `mlcc build` does (same passes, same lowering) for the target given
by the `target` keyword (default: the host), and the returned rep runs it with that target's runner.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import onnx
from onnx.backend.base import Backend, BackendRep, Device, DeviceType

from . import runners
from .errors import NeedsConstantError
from .pipeline import BuildOptions, build


class MlccRep(BackendRep):
    """A model for one target: `run(inputs)` takes arrays in graph-input order, returns outputs in graph order.

    mlcc compiles static shapes. When an operand that decides shapes (a Reshape's shape, a Slice's starts) is
    a graph input or computed from graph inputs, the model is compiled at the first `run` with those inputs
    frozen to the given values (`mlcc build --freeze`), once per distinct set of values.
    """

    def __init__(self, model: onnx.ModelProto, target: str, opt_level: int = 2):
        self.model, self.target, self.opt_level = model, target, opt_level
        initializers = {init.name for init in model.graph.initializer}
        self.input_names = [i.name for i in model.graph.input if i.name not in initializers]
        self.output_names = [o.name for o in model.graph.output]
        self.frozen_names: list[str] = []  # inputs that must be frozen, in the order the compiler asked
        self._builds: dict[bytes, runners.LoadedModel] = {}
        self._workdir = tempfile.TemporaryDirectory(prefix="mlcc-backend-")  # artifacts live as long as the rep
        self._compile({})

    def run(self, inputs: Any, **kwargs: Any) -> tuple[np.ndarray, ...]:
        if isinstance(inputs, dict):
            feeds = {k: np.asarray(v) for k, v in inputs.items()}
        else:
            arrays = [inputs] if isinstance(inputs, np.ndarray) else list(inputs)
            feeds = {name: np.asarray(a) for name, a in zip(self.input_names, arrays)}
        loaded = None
        while loaded is None:  # None: the compiler asked for one more input to freeze
            loaded = self._compile({name: feeds[name] for name in self.frozen_names})
        results = loaded.run({spec["name"]: feeds[spec["name"]] for spec in loaded.inputs})
        return tuple(results[name] for name in self.output_names)

    def _compile(self, frozen: dict[str, np.ndarray]) -> runners.LoadedModel | None:
        """The build for these frozen values (None when the compiler asks for one more input to freeze)."""
        key = b"".join(name.encode() + b"\0" + np.ascontiguousarray(v).tobytes() for name, v in frozen.items())
        if key in self._builds:
            return self._builds[key]
        folder = Path(tempfile.mkdtemp(prefix="build", dir=self._workdir.name))
        path = folder / "model.onnx"
        onnx.save(self.model, str(path))
        try:
            out_dir, _ = build(path, BuildOptions(target=self.target, out_dir=folder / "out", name="model", frozen=frozen,
                                                  opt_level=self.opt_level))
        except NeedsConstantError as exc:
            wanted = [name for name in exc.graph_inputs if name not in self.frozen_names]
            if not wanted:
                raise
            self.frozen_names.extend(wanted)
            return None
        self._builds[key] = runners.load(out_dir)
        return self._builds[key]


class MlccBackend(Backend):
    @classmethod
    def is_compatible(cls, model: onnx.ModelProto, device: str = "CPU", **kwargs: Any) -> bool:
        return cls.supports_device(device)

    @classmethod
    def prepare(cls, model: onnx.ModelProto, device: str = "CPU", target: str = "host",
                opt_level: int | None = None, **kwargs: Any) -> MlccRep:
        """opt_level: as mlcc build's -O (default 2, or $MLCC_BACKEND_OPT_LEVEL for whole test runs)."""
        super().prepare(model, device, **kwargs)
        if opt_level is None:
            opt_level = int(os.environ.get("MLCC_BACKEND_OPT_LEVEL", "2"))
        return MlccRep(model, target, opt_level)

    @classmethod
    def run_model(cls, model: onnx.ModelProto, inputs: Any, device: str = "CPU", **kwargs: Any) -> tuple[np.ndarray, ...]:
        return cls.prepare(model, device, **kwargs).run(inputs)

    @classmethod
    def run_node(cls, node: onnx.NodeProto, inputs: Any, device: str = "CPU",
                 outputs_info: Sequence[tuple[np.dtype, tuple[int, ...]]] | None = None, **kwargs: Any) -> tuple[np.ndarray, ...]:
        """One node on concrete inputs: wrapped into a one-node model with the inputs' types and shapes."""
        arrays = [np.asarray(a) for a in inputs]
        graph_inputs = [onnx.helper.make_tensor_value_info(name, onnx.helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
                        for name, a in zip(node.input, arrays) if name]
        graph_outputs = [onnx.helper.make_tensor_value_info(name, onnx.TensorProto.UNDEFINED, None) for name in node.output if name]
        graph = onnx.helper.make_graph([node], "run_node", graph_inputs, graph_outputs)
        model = onnx.shape_inference.infer_shapes(onnx.helper.make_model(graph), strict_mode=True)
        return cls.run_model(model, [a for name, a in zip(node.input, arrays) if name], device, **kwargs)

    @classmethod
    def supports_device(cls, device: str) -> bool:
        return Device(device).type == DeviceType.CPU


prepare = MlccBackend.prepare
run_model = MlccBackend.run_model
run_node = MlccBackend.run_node
supports_device = MlccBackend.supports_device
is_compatible = MlccBackend.is_compatible

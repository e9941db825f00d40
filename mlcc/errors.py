"""Errors a user can cause. The CLI prints each as one `error:` line and exits 2."""


class MlccError(Exception):
    """Base of every error caused by the user's model or command line.

    `where` names the node, tensor or file concerned, so the message can say what and where.
    """

    def __init__(self, message: str, where: str | None = None):
        super().__init__(message)
        self.message = message
        self.where = where

    def __str__(self) -> str:
        text = " ".join(self.message.split())  # one line, always
        return f"{self.where}: {text}" if self.where else text


class ModelLoadError(MlccError):
    """The file is not a readable, valid ONNX model."""


class UnsupportedError(MlccError):
    """The model uses something mlcc does not implement (op, dtype, attribute value)."""


class ShapeError(MlccError):
    """A shape is unknown, dynamic, inconsistent or too large."""


class NeedsConstantError(ShapeError):
    """An operand that decides shapes (a Reshape's shape, a Slice's starts, ...) is computed at run time.

    `value_name` names it; when it is a graph input, freezing it to a value (`--freeze`) makes it constant.
    """

    def __init__(self, message: str, where: str | None = None, value_name: str = ""):
        super().__init__(message, where)
        self.value_name = value_name
        self.graph_inputs: list[str] = []  # the graph inputs it is computed from (set by the frontend)


class MemoryLimitError(MlccError):
    """The memory plan does not fit the limit the user set (`--arena-limit`)."""


class UsageError(MlccError):
    """A bad command-line value (unknown input name, malformed --shape, unknown target)."""


class ToolchainError(MlccError):
    """The C compiler or linker failed: a bug in mlcc, reported with the compiler's output."""


class RunError(MlccError):
    """Running a built artifact failed (missing files, bad inputs, non-zero status)."""

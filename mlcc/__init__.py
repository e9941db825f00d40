"""mlcc: an ahead-of-time compiler from ONNX to standalone C and WebAssembly."""

__version__ = "0.1.0"

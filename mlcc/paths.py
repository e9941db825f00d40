"""Where mlcc's data lives: the C runtime, the target files, the templates, the object cache."""

from __future__ import annotations

import os
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def _data_dir(name: str) -> Path:
    # A source checkout (or editable install) has them beside the package; a wheel carries them inside it.
    for candidate in (_PACKAGE.parent / name, _PACKAGE / "_data" / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"mlcc installation is missing its {name}/ folder")


def runtime_dir() -> Path:
    return _data_dir("runtime_c")


def targets_dir() -> Path:
    return _data_dir("targets")


def templates_dir() -> Path:
    return _PACKAGE / "templates"


def cache_dir() -> Path:
    root = os.environ.get("MLCC_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "mlcc"
    )
    path = Path(root)
    path.mkdir(parents=True, exist_ok=True)
    return path

"""Skip marks for tests that need a JavaScript engine besides wasmtime: Node.js, or Chromium (scripts/test.sh
installs both)."""

from __future__ import annotations

import shutil

import pytest


def _chromium_missing() -> bool:
    from mlcc.errors import RunError
    from mlcc.runners.devtools import find_chromium

    try:
        find_chromium()
    except RunError:
        return True
    return False


needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="Node.js is not installed")
needs_chromium = pytest.mark.skipif(_chromium_missing(), reason="Chromium is not installed (scripts/test.sh installs it)")

"""The Python sources are lint-clean: `ruff check` (rules and line length in pyproject.toml, [tool.ruff])
over mlcc, tests, benchmarks and samples finds nothing. ruff comes with the `test` extra."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_ruff_finds_nothing():
    proc = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "mlcc", "tests", "benchmarks", "samples"],
                          cwd=ROOT, capture_output=True, text=True)
    assert "No module named ruff" not in proc.stderr, "ruff is missing: pip install -e '.[test]'"
    assert proc.returncode == 0, proc.stdout + proc.stderr

"""The command line the sweeps (sklearn_models, hf_models, vision_models) share: the target, exporter and case
options, reading them, the work folder, and the ending (the text printed and written as Markdown, the exit
status)."""

from __future__ import annotations

import argparse
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from benchmarks.sweep import Result


def add_target_arguments(p: argparse.ArgumentParser, exporters: tuple[str, ...] = (),
                         all_exporters: tuple[str, ...] = ()) -> None:
    """--targets, and --exporters (`exporters` by default, any of `all_exporters`) where a sweep has several."""
    p.add_argument("--targets", default="host,wasm32", help="host always; other targets for the cases marked for "
                                                           "them [host,wasm32]")
    if exporters:
        p.add_argument("--exporters", default=",".join(exporters),
                       help=f"any of {', '.join(all_exporters)} [{','.join(exporters)}]")


def add_case_arguments(p: argparse.ArgumentParser, work: str, fast: bool = True) -> None:
    """--fast where a sweep has a CI subset, --only, --markdown, and --work keeping `work` ("builds")."""
    if fast:
        p.add_argument("--fast", action="store_true", help="only the CI subset")
    p.add_argument("--only", help="comma-separated case names")
    p.add_argument("--markdown", type=Path, help="also write the table here")
    p.add_argument("--work", type=Path, help=f"keep {work} here [a temporary folder]")


def names(text: str) -> list[str]:
    """A comma-separated option's names, blanks dropped."""
    return [t.strip() for t in text.split(",") if t.strip()]


def case_names(only: str | None) -> list[str] | None:
    """--only's names, or None for every case."""
    return [c.strip() for c in only.split(",")] if only else None


def exporter_names(text: str, known: tuple[str, ...]) -> list[str]:
    """--exporters' names; one not in `known` stops the sweep."""
    exporters = names(text)
    if set(exporters) - set(known):
        raise SystemExit(f"unknown exporter(s): {', '.join(sorted(set(exporters) - set(known)))}")
    return exporters


@contextmanager
def work_folder(work: Path | None) -> Iterator[Path]:
    """--work's folder (made if need be), or a temporary one for the sweep's duration."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = work or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        yield folder


def finish(results: list[Result], text: str, markdown: Path | None, heading: str, command: str,
           appendix: str = "") -> int:
    """Prints the sweep's text and writes it to `markdown` (under `heading` and the `command` that made it,
    `appendix` after it); the exit status: 0 when every result that ran passed."""
    print(text)
    if markdown:
        markdown.parent.mkdir(parents=True, exist_ok=True)
        markdown.write_text(f"# {heading}\n\n`{command}`\n\n{text}{appendix}")
    return 0 if all(r.status in ("pass", "not run", "export failed") for r in results) else 1

"""chromium runner: runs a wasm32 build's NAME.mjs in headless Chromium, the way a web page would.

One browser and one page per process, started on first use and reused by every model: the page imports
each model's module from a local server (127.0.0.1 only) and keeps the last few loaded. Tensors cross
the DevTools pipe as base64 (web/harness.mjs is the page side).
"""

from __future__ import annotations

import atexit
import base64
import json
from pathlib import Path

import numpy as np

from . import LoadedModel, register
from .devtools import Browser, Page, StaticServer
from .node import js_module

HARNESS = Path(__file__).with_name("web")


class Session:
    """The process's browser, server and runner page."""

    _current: "Session | None" = None

    def __init__(self):
        self.server = StaticServer()
        self.browser = Browser()
        self.harness_url = self.server.mount(HARNESS, "/__mlcc__/") + "harness.mjs"
        self.page = Page(self.browser)
        self.page.navigate(self.server.origin + "/__mlcc__/index.html")

    @classmethod
    def get(cls) -> "Session":
        """The running session, started (again, if Chromium died) when needed."""
        if cls._current is None or not cls._current.browser.alive():
            if cls._current is not None:
                cls._current.close()
            cls._current = cls()
        return cls._current

    def close(self) -> None:
        self.browser.close()
        self.server.close()
        if Session._current is self:
            Session._current = None


@atexit.register
def _close_session() -> None:
    if Session._current is not None:
        Session._current.close()


@register("chromium", runs="wasm")
class ChromiumModel(LoadedModel):
    def __init__(self, out_dir: Path, report: dict):
        super().__init__(out_dir, report)
        self.module_name = js_module(out_dir, report).name
        self.session, self.url = None, ""
        self._serve()

    def _serve(self) -> None:
        """Mount the build folder on the current session's server (again, if Chromium was restarted)."""
        session = Session.get()
        if session is not self.session:
            self.session, self.url = session, session.server.mount(self.out_dir) + self.module_name

    def _invoke(self, inputs: list[np.ndarray], outputs: list[np.ndarray]) -> int:
        self._serve()
        session = self.session
        encoded = [base64.b64encode(a.tobytes()).decode() for a in inputs]
        expression = (f"import({json.dumps(session.harness_url)})"
                      f".then((harness) => harness.run({json.dumps(self.url)}, {json.dumps(encoded)}))")
        for a, text in zip(outputs, session.page.evaluate(expression)):
            a[...] = np.frombuffer(base64.b64decode(text), dtype=a.dtype).reshape(a.shape)
        return 0

"""Headless Chromium for the chromium runner and the browser tests, with no dependency beyond Chromium.

`Browser` drives Chromium over the DevTools protocol on a pipe (--remote-debugging-pipe: JSON messages
ended by NUL on file descriptors 3 and 4), so no port is opened for control. `StaticServer` serves folders
on 127.0.0.1 only, each under its own URL prefix, for the pages and modules the browser loads.
"""

from __future__ import annotations

import base64
import collections
import fcntl
import itertools
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from ..errors import RunError

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "chrome")
# Only our own pages from 127.0.0.1 are loaded; Chromium's sandbox needs namespaces a container often lacks.
FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
    "--no-default-browser-check", "--disable-extensions", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--mute-audio", "--hide-scrollbars",
    "--remote-debugging-pipe", "about:blank",
)
CONTENT_TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript", ".mjs": "text/javascript",
                 ".wasm": "application/wasm", ".json": "application/json", ".css": "text/css", ".png": "image/png"}


def find_chromium() -> str:
    explicit = os.environ.get("MLCC_CHROMIUM")
    found = explicit or next(filter(None, map(shutil.which, CHROMIUM_NAMES)), None)
    if not found or not os.access(found, os.X_OK):
        raise RunError("the chromium runner needs Chromium (Debian package chromium, or MLCC_CHROMIUM=/path/to/it)")
    return found


# Puts two descriptors on 3 and 4, where Chromium expects its pipe, then becomes the command (a shell
# cannot: dash only redirects descriptors below 10, and any of ours could be 3 or 4).
_ON_FDS_3_AND_4 = ("import os, sys; r, w = int(sys.argv[1]), int(sys.argv[2]); os.dup2(r, 3); os.dup2(w, 4); "
                   "os.close(r); os.close(w); os.execvp(sys.argv[3], sys.argv[3:])")


def _high_fd(fd: int) -> int:
    """The same pipe end on a descriptor above 4, so that putting one end on 3 or 4 never clobbers the other."""
    high = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 5)
    os.close(fd)
    return high


class Browser:
    def __init__(self, executable: str | None = None, timeout: float = 600.0):
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="mlcc-chromium-")
        browser_reads, self._write_fd = map(_high_fd, os.pipe())
        self._read_fd, browser_writes = map(_high_fd, os.pipe())
        command = [executable or find_chromium(), *FLAGS, f"--user-data-dir={self.profile}"]
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _ON_FDS_3_AND_4, str(browser_reads), str(browser_writes), *command],
            pass_fds=(browser_reads, browser_writes), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT)
        # Chromium's processes all hold its output: its end means the last one exited, so the profile can go
        self._log: collections.deque = collections.deque(maxlen=20)
        self._log_reader = threading.Thread(target=self._read_log, name="mlcc-chromium-log", daemon=True)
        self._log_reader.start()
        os.close(browser_reads)
        os.close(browser_writes)
        self._ids = itertools.count(1)
        self._buffer = b""
        self._events: collections.deque = collections.deque(maxlen=1000)
        self._lock = threading.RLock()
        try:
            self.call("Target.setDiscoverTargets", {"discover": False})  # fails fast if Chromium did not start
        except RunError:
            self.close()
            raise

    def alive(self) -> bool:
        return self.proc.poll() is None

    def call(self, method: str, params: dict | None = None, session: str | None = None,
             timeout: float | None = None) -> dict:
        message = {"id": next(self._ids), "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        with self._lock:
            self._send(message)
            deadline = time.monotonic() + (timeout or self.timeout)
            while True:
                reply = self._receive(deadline, method)
                if reply.get("id") == message["id"]:
                    if "error" in reply:
                        raise RunError(f"chromium: {method} failed: {reply['error'].get('message')}")
                    return reply.get("result", {})
                if "method" in reply:
                    self._events.append(reply)

    def wait_event(self, method: str, session: str | None = None, timeout: float | None = None) -> dict:
        """The next event `method` of the session (one that arrived during an earlier call counts)."""
        with self._lock:
            deadline = time.monotonic() + (timeout or self.timeout)
            while True:
                while self._events:
                    event = self._events.popleft()
                    if event["method"] == method and event.get("sessionId") == session:
                        return event.get("params", {})
                event = self._receive(deadline, method)
                if "method" in event:
                    self._events.append(event)

    def close(self) -> None:
        if self.alive():
            try:
                self.call("Browser.close", timeout=10)
            except RunError:
                pass
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for fd in (self._read_fd, self._write_fd):
            try:
                os.close(fd)
            except OSError:
                pass
        self._log_reader.join(timeout=10)
        shutil.rmtree(self.profile, ignore_errors=True)

    def _send(self, message: dict) -> None:
        data = json.dumps(message).encode() + b"\0"
        try:
            while data:
                data = data[os.write(self._write_fd, data):]
        except OSError as exc:
            raise RunError(f"chromium is gone ({exc.strerror}){self._log_tail()}") from None

    def _receive(self, deadline: float, waiting_for: str) -> dict:
        while b"\0" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise RunError(f"chromium: no answer to {waiting_for} within {self.timeout:.0f} s")
            ready, _, _ = select.select([self._read_fd], [], [], remaining)
            if ready:
                chunk = os.read(self._read_fd, 1 << 20)
                if not chunk:
                    raise RunError(f"chromium exited while waiting for {waiting_for}{self._log_tail()}")
                self._buffer += chunk
        text, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(text)

    def _read_log(self) -> None:
        for line in self.proc.stdout:
            self._log.append(line.decode(errors="replace").strip())
        self.proc.stdout.close()

    def _log_tail(self) -> str:
        self._log_reader.join(timeout=1)  # when Chromium is exiting, its last words are on the way
        lines = [line for line in self._log if line]
        return f": {lines[-1]}" if lines else ""


class Page:
    """One tab: navigate, evaluate JavaScript (awaiting promises), take screenshots."""

    def __init__(self, browser: Browser, width: int = 900, height: int = 700):
        self.browser = browser
        self.target = browser.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = browser.call("Target.attachToTarget", {"targetId": self.target, "flatten": True})["sessionId"]
        self._call("Page.enable")
        self._call("Emulation.setDeviceMetricsOverride",
                   {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})

    def _call(self, method: str, params: dict | None = None) -> dict:
        return self.browser.call(method, params, session=self.session)

    def navigate(self, url: str) -> None:
        reply = self._call("Page.navigate", {"url": url})
        if reply.get("errorText"):
            raise RunError(f"chromium could not open {url}: {reply['errorText']}")
        self.browser.wait_event("Page.loadEventFired", self.session)

    def evaluate(self, expression: str):
        """The value of a JavaScript expression (a promise is awaited); a thrown error becomes RunError."""
        reply = self._call("Runtime.evaluate", {"expression": expression, "awaitPromise": True, "returnByValue": True})
        if "exceptionDetails" in reply:
            details = reply["exceptionDetails"]
            description = details.get("exception", {}).get("description") or details.get("text", "error")
            raise RunError(f"in chromium: {description.splitlines()[0]}")
        return reply["result"].get("value")

    def screenshot(self, path: Path) -> Path:
        data = self._call("Page.captureScreenshot", {"format": "png"})["data"]
        Path(path).write_bytes(base64.b64decode(data))
        return Path(path)

    def close(self) -> None:
        if self.browser.alive():
            self.browser.call("Target.closeTarget", {"targetId": self.target})


class StaticServer:
    """Serves folders read-only on 127.0.0.1, each mounted under a URL prefix of its own. isolated: every
    response carries the headers that make a page cross-origin isolated (COOP same-origin, COEP
    require-corp), which a page needs to share memory with workers (a wasm32-threads build's pool)."""

    ISOLATION_HEADERS = {"Cross-Origin-Opener-Policy": "same-origin", "Cross-Origin-Embedder-Policy": "require-corp"}

    def __init__(self, isolated: bool = False):
        self.mounts: dict[str, Path] = {}
        extra_headers = self.ISOLATION_HEADERS if isolated else {}
        self._counter = itertools.count()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                path = server.resolve(urllib.parse.unquote(urllib.parse.urlsplit(self.path).path))
                if path is None:
                    self.send_error(404)
                    return
                body = path.read_bytes()
                self.send_response(200)
                self.send_header("Content-Type", CONTENT_TYPES.get(path.suffix, "application/octet-stream"))
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Cache-Control", "no-store")
                for header, value in extra_headers.items():
                    self.send_header(header, value)
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.origin = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, name="mlcc-static-server", daemon=True).start()

    def mount(self, folder: Path, prefix: str | None = None) -> str:
        """Serve folder under prefix (default: a fresh one, so modules are never served from a stale cache);
        returns the folder's URL, ending in /."""
        prefix = prefix or f"/m{next(self._counter)}/"
        self.mounts[prefix] = Path(folder).resolve()
        return self.origin + prefix

    def resolve(self, url_path: str) -> Path | None:
        for prefix in sorted(self.mounts, key=len, reverse=True):
            if url_path.startswith(prefix):
                root = self.mounts[prefix]
                path = (root / url_path[len(prefix):]).resolve()
                if path.is_dir():
                    path = path / "index.html"
                if path.is_file() and path.is_relative_to(root):
                    return path
                return None
        return None

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

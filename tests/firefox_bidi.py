"""Drive headless Firefox through WebDriver BiDi, the W3C protocol Firefox itself speaks.

Selenium drives Firefox through geckodriver, which neither Debian nor PyPI ships for Linux
(PyPI's packaged ones are Windows builds or download it at run time). Firefox needs no
driver for BiDi: started with ``--remote-debugging-port`` it listens on a WebSocket, and
this client sends the few commands the site's tests need (navigate, evaluate a script,
pointer actions, a screenshot) over ``websocket-client``, a dependency of selenium. Pointer
actions are real input (trusted events: hover, click), as selenium's are.
"""

from __future__ import annotations

import base64
import json
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

FIREFOX = shutil.which("firefox-esr") or shutil.which("firefox")


class BiDiError(RuntimeError):
    """A command the browser answered with an error."""


class FirefoxBiDi:
    """One headless Firefox with a fresh profile, and its one tab."""

    def __init__(self, width: int = 1200, height: int = 900, timeout: float = 60.0):
        import websocket  # websocket-client, installed with selenium

        if FIREFOX is None:
            raise FileNotFoundError("no firefox or firefox-esr on PATH")
        self.timeout = timeout
        self.profile = Path(tempfile.mkdtemp(prefix="firefox-bidi-"))
        # No first-run pages or background fetches: the tests' pages are local.
        (self.profile / "user.js").write_text(
            'user_pref("browser.shell.checkDefaultBrowser", false);\n'
            'user_pref("app.update.disabledForTesting", true);\n'
            'user_pref("datareporting.policy.dataSubmissionEnabled", false);\n'
            'user_pref("browser.startup.homepage_override.mstone", "ignore");\n'
        )
        self.process = subprocess.Popen(
            [FIREFOX, "--headless", "--no-remote", "--profile", str(self.profile)]
            + [f"--width={width}", f"--height={height}", "--remote-debugging-port", "0"]
            + ["about:blank"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        address = self._listening_address()
        # Firefox refuses a handshake that names an Origin (a web page would).
        self.socket = websocket.create_connection(
            f"{address}/session", timeout=timeout, suppress_origin=True
        )
        self._next_id = 0
        self.command("session.new", {"capabilities": {}})
        tree = self.command("browsingContext.getTree", {})
        self.context = tree["contexts"][0]["context"]

    def _listening_address(self) -> str:
        assert self.process.stderr is not None
        deadline = time.monotonic() + self.timeout
        seen = []
        while time.monotonic() < deadline:
            line = self.process.stderr.readline()
            if not line and self.process.poll() is not None:
                break
            seen.append(line)
            found = re.search(r"WebDriver BiDi listening on (ws://\S+)", line)
            if found:
                return found.group(1)
        self.close()
        raise RuntimeError("firefox did not open its BiDi socket:\n" + "".join(seen[-10:]))

    def command(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self._next_id += 1
        self.socket.send(json.dumps({"id": self._next_id, "method": method, "params": params}))
        while True:  # events arrive between answers; skip them
            message = json.loads(self.socket.recv())
            if message.get("id") != self._next_id:
                continue
            if message.get("type") == "error":
                raise BiDiError(f"{method}: {message.get('error')}: {message.get('message')}")
            return message["result"]

    def get(self, url: str) -> None:
        self.command(
            "browsingContext.navigate", {"context": self.context, "url": url, "wait": "complete"}
        )

    def run(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (strings, numbers, booleans,
        null and arrays of those)."""
        result = self.command(
            "script.evaluate",
            {
                "expression": expression,
                "target": {"context": self.context},
                "awaitPromise": True,
            },
        )
        if result.get("type") == "exception":
            raise BiDiError(f"{expression}: {result['exceptionDetails'].get('text')}")
        return _value(result["result"])

    def wait_for(self, expression: str) -> Any:
        """Evaluate ``expression`` until it is truthy (a page loading after a click); its value."""
        deadline = time.monotonic() + self.timeout
        while True:
            try:
                value = self.run(expression)
            except BiDiError:  # the page is being replaced
                value = None
            if value:
                return value
            if time.monotonic() > deadline:
                raise TimeoutError(f"never true: {expression}")
            time.sleep(0.1)

    def _pointer(self, selector: str, *actions: dict[str, Any]) -> None:
        box = self.run(
            f"(function () {{ var e = document.querySelector({json.dumps(selector)});"
            " e.scrollIntoView({block: 'center'}); var r = e.getBoundingClientRect();"
            " return [r.left + r.width / 2, r.top + r.height / 2]; })()"
        )
        move = {"type": "pointerMove", "x": int(box[0]), "y": int(box[1])}
        self.command(
            "input.performActions",
            {
                "context": self.context,
                "actions": [
                    {
                        "type": "pointer",
                        "id": "mouse",
                        "parameters": {"pointerType": "mouse"},
                        "actions": [move, *actions],
                    }
                ],
            },
        )

    def hover(self, selector: str) -> None:
        self._pointer(selector)

    def click(self, selector: str) -> None:
        self._pointer(
            selector,
            {"type": "pointerDown", "button": 0},
            {"type": "pointerUp", "button": 0},
        )

    def screenshot(self) -> bytes:
        data = self.command("browsingContext.captureScreenshot", {"context": self.context})
        return base64.b64decode(data["data"])

    def close(self) -> None:
        if getattr(self, "socket", None) is not None:
            try:
                self.command("session.end", {})
            except Exception:  # noqa: BLE001 - closing anyway
                pass
            self.socket.close()
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        shutil.rmtree(self.profile, ignore_errors=True)


def _value(remote: dict[str, Any]) -> Any:
    """A BiDi remote value as Python (the serialisable kinds)."""
    kind = remote["type"]
    if kind in ("undefined", "null"):
        return None
    if kind == "array":
        return [_value(item) for item in remote["value"]]
    if kind in ("string", "number", "boolean"):
        return remote["value"]
    raise BiDiError(f"a {kind} value: return strings, numbers, booleans or arrays")

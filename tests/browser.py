"""Headless Chromium (Debian's /usr/bin/chromium) driven over the DevTools
protocol, for tests that look at a page as a reader would.

    with Browser() as browser:
        page = browser.open("file:///tmp/report.html")   # the network is off
        page.evaluate("document.title")
        page.click(x, y)                                  # a real mouse click
        png = page.screenshot()
        page.problems()   # console messages, JavaScript errors, log warnings
        page.requests     # every URL the page asked for

The network is off three times over: the page's conditions are emulated
offline, every host name resolves to nothing, and any connection would go
to a proxy on a closed loopback port; Chromium's own background services
(updates, safe browsing, metrics) are switched off. The protocol needs only
a websocket (websocket-client); nothing is downloaded.
"""
from __future__ import annotations

import base64
import json
import os
import re
import select
import shutil
import signal
import subprocess
import tempfile
import time

import websocket

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
START_SECONDS = 20        # Chromium printing its DevTools address
ANSWER_SECONDS = 20       # one protocol command or awaited event
QUIT_SECONDS = 10
VIEWPORT = (1280, 900)
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--no-default-browser-check", "--disable-extensions", "--disable-sync",
         "--disable-background-networking", "--disable-component-update",
         "--disable-domain-reliability", "--disable-client-side-phishing-detection",
         "--disable-default-apps", "--no-pings", "--metrics-recording-only", "--mute-audio",
         "--host-resolver-rules=MAP * ~NOTFOUND", "--proxy-server=127.0.0.1:9",
         "--allow-file-access-from-files", "--remote-debugging-port=0")
DEVTOOLS_LINE = re.compile(rb"DevTools listening on (ws://\S+)")


class BrowserError(AssertionError):
    """Chromium did not start, or did not answer in time."""


class Browser:
    def __init__(self) -> None:
        if CHROMIUM is None:
            raise BrowserError("chromium is not installed (apt-get install -y chromium)")
        self.profile = tempfile.TemporaryDirectory(prefix="chromium-", ignore_cleanup_errors=True)
        # A session of its own: its renderer and zygote processes can be ended with it.
        self.process = subprocess.Popen([CHROMIUM, *FLAGS, f"--user-data-dir={self.profile.name}",
                                         "about:blank"], stdout=subprocess.DEVNULL,
                                        stderr=subprocess.PIPE, start_new_session=True)
        self.socket = None
        self.socket = websocket.create_connection(self._devtools_url(), timeout=ANSWER_SECONDS,
                                                  suppress_origin=True)
        self.next_id = 0
        self.events: list[dict] = []

    def _devtools_url(self) -> str:
        """Read Chromium's stderr until it names its DevTools websocket."""
        deadline, seen = time.monotonic() + START_SECONDS, b""
        while time.monotonic() < deadline:
            ready, _, _ = select.select([self.process.stderr], [], [], deadline - time.monotonic())
            chunk = self.process.stderr.read1(65536) if ready else b""
            if ready and not chunk:
                break   # Chromium exited
            seen += chunk
            found = DEVTOOLS_LINE.search(seen)
            if found:
                return found.group(1).decode()
        self.close()
        raise BrowserError(f"chromium gave no DevTools address: {seen[-2000:].decode(errors='replace')}")

    def send(self, method: str, params: dict | None = None, session: str | None = None) -> dict:
        """One protocol command; its result (events read meanwhile are kept)."""
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        self.socket.send(json.dumps(message))
        while True:
            answer = self._receive()
            if answer.get("id") == self.next_id:
                if "error" in answer:
                    raise BrowserError(f"{method}: {answer['error']}")
                return answer.get("result", {})

    def wait_for(self, method: str, session: str) -> dict:
        while True:
            for event in self.events:
                if event.get("method") == method and event.get("sessionId") == session:
                    self.events.remove(event)
                    return event["params"]
            self._receive()

    def _receive(self) -> dict:
        try:
            message = json.loads(self.socket.recv())
        except websocket.WebSocketTimeoutException:
            raise BrowserError(f"chromium did not answer within {ANSWER_SECONDS} s") from None
        if "method" in message:
            self.events.append(message)
        return message

    def open(self, url: str) -> Page:
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        page = Page(self, session)
        page.go(url)
        return page

    def close(self) -> None:
        """Ask Chromium to quit; end its process group if it does not in time."""
        if self.socket is not None:
            try:
                self.send("Browser.close")
            except (BrowserError, websocket.WebSocketException, OSError):
                pass   # it may close the socket before it answers
            self.socket.close()
        try:
            self.process.wait(timeout=QUIT_SECONDS)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=QUIT_SECONDS)
        self.process.stderr.close()
        self.profile.cleanup()

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class Page:
    """One tab, attached through a flat session."""

    def __init__(self, browser: Browser, session: str) -> None:
        self.browser, self.session = browser, session
        for domain in ("Runtime", "Log", "Page", "Network"):
            self.send(f"{domain}.enable")
        self.send("Network.emulateNetworkConditions", {"offline": True, "latency": 0,
                                                       "downloadThroughput": -1,
                                                       "uploadThroughput": -1})
        width, height = VIEWPORT
        self.send("Emulation.setDeviceMetricsOverride", {"width": width, "height": height,
                                                         "deviceScaleFactor": 1, "mobile": False})
        self.send("Emulation.setScrollbarsHidden", {"hidden": True})   # the page gets all 1280 px

    def send(self, method: str, params: dict | None = None) -> dict:
        return self.browser.send(method, params, self.session)

    def go(self, url: str) -> None:
        self.send("Page.navigate", {"url": url})
        # A load event of the blank tab may still be on its way: wait for this page's.
        while True:
            self.browser.wait_for("Page.loadEventFired", self.session)
            if self.evaluate("location.href") == url:
                return

    def evaluate(self, expression: str):
        """The expression's value, as JSON; a JavaScript error fails the test."""
        result = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                "awaitPromise": True})
        if "exceptionDetails" in result:
            raise BrowserError(f"{expression!r} threw: {result['exceptionDetails']}")
        return result["result"].get("value")

    def click(self, x: float, y: float) -> None:
        """Press and release the left button at (x, y) in the viewport."""
        for kind in ("mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y, "button": "left",
                                                   "clickCount": 1})

    def screenshot(self) -> bytes:
        """The whole page as PNG, not only the viewport."""
        size = self.send("Page.getLayoutMetrics")["cssContentSize"]
        clip = {"x": 0, "y": 0, "width": size["width"], "height": size["height"], "scale": 1}
        shot = self.send("Page.captureScreenshot", {"format": "png", "clip": clip,
                                                    "captureBeyondViewport": True})
        return base64.b64decode(shot["data"])

    def _mine(self, method: str) -> list[dict]:
        return [e["params"] for e in self.browser.events
                if e.get("method") == method and e.get("sessionId") == self.session]

    def problems(self) -> list[str]:
        """Console calls, uncaught exceptions and log entries above info, one line each."""
        self.evaluate("0")   # reads the events the page sent until now
        found = [f"console.{e['type']}: {e['args']}" for e in self._mine("Runtime.consoleAPICalled")]
        found += [f"exception: {e['exceptionDetails']}" for e in self._mine("Runtime.exceptionThrown")]
        found += [f"log {e['entry']['level']}: {e['entry'].get('text')} {e['entry'].get('url', '')}"
                  for e in self._mine("Log.entryAdded") if e["entry"]["level"] != "verbose"]
        return found

    @property
    def requests(self) -> list[str]:
        return [e["request"]["url"] for e in self._mine("Network.requestWillBeSent")]

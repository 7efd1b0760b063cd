"""A real forward proxy for the tests: Debian's tinyproxy on loopback, an
ephemeral port, its own config file and log, started and stopped by the test.

The log is the proxy's own record of what it was asked: ``requests()``
reads its "Request" lines, so a test sees "GET http://127.0.0.1:PORT/ ..."
(a plain http:// URL relayed in absolute form) or "CONNECT 127.0.0.1:PORT"
(an https:// URL tunnelled), exactly as the proxy received them.

With ``BasicAuth USER PASSWORD`` (``credentials``) tinyproxy answers 407
to requests without those credentials.
"""
from __future__ import annotations

import re
import shutil
import socket
import subprocess
import time
from pathlib import Path

from childproc import free_port, stop

TINYPROXY = shutil.which("tinyproxy") or "/usr/bin/tinyproxy"
START_SECONDS = 10
_REQUEST = re.compile(r"Request \(file descriptor \d+\): (\S+) (\S+) HTTP/1\.[01]")


class TinyProxy:
    def __init__(self, folder: Path, credentials: tuple[str, str] | None = None):
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.credentials = credentials
        self.log = self.folder / "tinyproxy.log"
        self.port = 0
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def requests(self) -> list[tuple[str, str]]:
        """(method, target) of every request the proxy received, in order."""
        text = self.log.read_text(encoding="utf-8", errors="replace") if self.log.exists() else ""
        return [match.groups() for match in _REQUEST.finditer(text)]

    def start(self) -> TinyProxy:
        for _ in range(5):   # a free port can be taken between the probe and the bind
            port = free_port()
            config = self.folder / "tinyproxy.conf"
            config.write_text(self._config(port), encoding="utf-8")
            self.log.unlink(missing_ok=True)
            self.proc = subprocess.Popen([TINYPROXY, "-d", "-c", str(config)],
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            if self._wait_up(port):
                self.port = port
                return self
            self.stop()
        raise RuntimeError("tinyproxy did not start (is the Debian package tinyproxy installed?)")

    def _config(self, port: int) -> str:
        lines = [f"Port {port}", "Listen 127.0.0.1", "Allow 127.0.0.1", "Timeout 30",
                 f'LogFile "{self.log}"', "LogLevel Connect", "MaxClients 64",
                 "DisableViaHeader Yes"]   # no ConnectPort line: CONNECT to any port
        if self.credentials:
            lines.append("BasicAuth {} {}".format(*self.credentials))
        return "\n".join(lines) + "\n"

    def _wait_up(self, port: int) -> bool:
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return False   # exited: most likely the port was taken
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                return True
            except OSError:
                time.sleep(0.02)
        return False

    def stop(self) -> None:
        stop(self.proc)

    def __enter__(self) -> TinyProxy:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

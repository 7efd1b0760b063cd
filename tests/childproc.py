"""What the tests' own server processes (redis-server, tinyproxy) share: a
free loopback port to start on, and a stop that waits, then insists."""
from __future__ import annotations

import socket
import subprocess


def free_port() -> int:
    """A port free on 127.0.0.1 now (another process can take it before the
    server binds: callers retry their start)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def stop(proc: subprocess.Popen | None) -> None:
    """SIGTERM, ten seconds to exit, then SIGKILL."""
    if proc and proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

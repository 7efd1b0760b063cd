"""A scripted HTTP server on 127.0.0.1 for the GetPage tests.

Each path is answered by a function of the request handler; every request
is recorded (path, headers, arrival time, client port) so tests can assert
what the server received. Unknown paths get 404. HTTP/1.1 with keep-alive,
so connection reuse is observable. ``host`` binds it to another loopback
address (127.0.0.2 ...), which tests name a "private" host.

``local_config`` is the FetchConfig for fetching from these servers.
"""
from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from getpage import FetchConfig

Route = Callable[[BaseHTTPRequestHandler], None]
# The stub servers live on loopback, which a Fetcher refuses by default.
LOCAL = frozenset({"public", "loopback"})


def local_config(user_agent: str, **settings: object) -> FetchConfig:
    """A FetchConfig for the stub servers: loopback allowed, and no
    retries unless a test asks (retries would sleep for real)."""
    return FetchConfig(user_agent=user_agent, **{"allowed_addresses": LOCAL, "retries": 0, **settings})


@dataclass(frozen=True)
class Received:
    path: str
    headers: dict[str, str]
    at: float           # time.monotonic() when the request line and headers were in
    client_port: int    # tells connections apart


def send(handler: BaseHTTPRequestHandler, status: int = 200, body: bytes = b"",
         headers: dict[str, str] | None = None) -> None:
    """Answer with a complete response, Content-Length included."""
    handler.send_response(status)
    for name, value in (headers or {}).items():
        handler.send_header(name, value)
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


def page(body: bytes | str, content_type: str = "text/html; charset=utf-8", status: int = 200) -> Route:
    data = body.encode() if isinstance(body, str) else body
    return lambda handler: send(handler, status, data, {"Content-Type": content_type})


def redirect(location: str, status: int = 302) -> Route:
    return lambda handler: send(handler, status, b"moved", {"Location": location,
                                                             "Content-Type": "text/plain"})


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        # Clients hanging up mid-response is what many tests provoke.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class StubServer:
    def __init__(self, host: str = "127.0.0.1") -> None:
        self.routes: dict[str, Route] = {}
        self.received: list[Received] = []
        self._lock = threading.Lock()
        self._httpd = _QuietServer((host, 0), self._handler_class())
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.01,), daemon=True)
        self._thread.start()

    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    def url(self, path: str = "/", host: str = "") -> str:
        """The URL of ``path`` here; ``host`` names the server otherwise
        than by its address (for a resolver stub to map back)."""
        return f"http://{host or self._httpd.server_address[0]}:{self.port}{path}"

    def paths(self) -> list[str]:
        with self._lock:
            return [request.path for request in self.received]

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def _record(self, handler: BaseHTTPRequestHandler) -> Route | None:
        received = Received(handler.path, {k.lower(): v for k, v in handler.headers.items()},
                            time.monotonic(), handler.client_address[1])
        with self._lock:
            self.received.append(received)
        return self.routes.get(handler.path)

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body go out as separate writes

            def do_GET(self) -> None:
                route = stub._record(self)
                if route is None:
                    send(self, 404, b"not found", {"Content-Type": "text/plain"})
                else:
                    route(self)

            def log_message(self, format: str, *args: object) -> None:
                pass

        return Handler


class FakeTime:
    """A clock that only moves when someone sleeps: politeness waits and retry
    backoffs cost no real time in tests."""

    def __init__(self, now: float = 1000.0):
        self.now = now
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds

"""Serving on loopback: a small threaded HTTP/1.1 server, and the demo site on it.

HttpServer answers every request by calling one handler function, records
every request it receives (for tests asserting what a crawler asked for),
keeps connections alive (Content-Length on every response), and prints
nothing per request. DemoServer is HttpServer answering with a DemoSite,
gzip-compressing text when the client accepts it. `serve(handler)` is the
one-liner for tests that need an ad-hoc server (faults, slowness, resets).
"""
from __future__ import annotations

import contextlib
import gzip
import socket
import ssl
import sys
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable, Iterator

from demosite.site import DemoSite, Response

# A handler gets the live request (path, command, headers, connection, wfile)
# and returns the Response to send, or None when it wrote (or refused to
# write) the response itself, in which case the connection is closed after.
Handler = Callable[[BaseHTTPRequestHandler], "Response | tuple[int, dict[str, str], bytes] | None"]

# Socket errors are what a client hanging up looks like; handler bugs are
# caught in dispatch, so nothing else should reach handle_error.
_QUIET_ERRORS = (OSError,)
# How often the accept loop checks for stop(): stop() waits up to this long,
# and tests start and stop many servers.
_POLL_SECONDS = 0.02


@dataclass(frozen=True)
class RequestRecord:
    time: float  # time.monotonic() when the request line and headers were read
    method: str  # "GET", "HEAD"
    path: str  # the request target as received, e.g. "/news/?page=2"
    headers: dict[str, str]  # header names lower-cased
    client_port: int  # the client's port: one per connection, so keep-alive is visible


class RequestLog:
    """Append-only, thread-safe record of requests; iterating gives a snapshot."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._records: list[RequestRecord] = []

    def append(self, record: RequestRecord) -> None:
        with self._lock:
            self._records.append(record)

    def snapshot(self) -> list[RequestRecord]:
        with self._lock:
            return list(self._records)

    def paths(self) -> list[str]:
        return [record.path for record in self.snapshot()]

    def clear(self) -> None:
        with self._lock:
            self._records.clear()

    def __iter__(self) -> Iterator[RequestRecord]:
        return iter(self.snapshot())

    def __len__(self) -> int:
        with self._lock:
            return len(self._records)

    def __getitem__(self, index: int) -> RequestRecord:
        with self._lock:
            return self._records[index]


class _RequestHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, hence Content-Length everywhere
    disable_nagle_algorithm = True  # headers and body go out as separate writes
    server: "_ThreadedServer"

    def do_GET(self) -> None:
        self.server.owner.dispatch(self)

    do_HEAD = do_GET

    def log_message(self, format: str, *args: object) -> None:
        """Silent: a crawl makes thousands of requests."""


class _ThreadedServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(self, address: tuple[str, int], owner: "HttpServer"):
        self.owner = owner
        self.open_sockets: set[socket.socket] = set()
        self.sockets_lock = threading.Lock()
        super().__init__(address, _RequestHandler)

    def process_request(self, request, client_address) -> None:
        with self.sockets_lock:
            self.open_sockets.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request) -> None:
        with self.sockets_lock:
            self.open_sockets.discard(request)
        super().shutdown_request(request)

    def handle_error(self, request, client_address) -> None:
        # A client hanging up mid-response is normal for a crawler under test.
        if not isinstance(sys.exc_info()[1], _QUIET_ERRORS):
            super().handle_error(request, client_address)


class HttpServer:
    """A threaded HTTP/1.1 server on host:port (0 = any free port) calling handler.

    Bound on construction, so url is known before start(). Use as a context
    manager, or start()/stop(), or serve_forever() for a foreground server.
    A handler that raises gets a 500 sent and the exception kept in errors.
    With ``tls`` (a server-side SSLContext holding a certificate) it serves
    https:// (the handshake happens as a connection is accepted).
    """

    def __init__(self, handler: Handler, host: str = "127.0.0.1", port: int = 0,
                 tls: ssl.SSLContext | None = None):
        self.handler = handler
        self.request_log = RequestLog()
        self.errors: list[BaseException] = []
        self._server = _ThreadedServer((host, port), self)
        if tls is not None:
            self._server.socket = tls.wrap_socket(self._server.socket, server_side=True)
        self._thread: threading.Thread | None = None
        self._serving = threading.Event()
        bound_host, bound_port = self._server.server_address[:2]
        self.address = f"{bound_host}:{bound_port}"
        self.url = f"{'https' if tls else 'http'}://{self.address}/"

    @property
    def requests(self) -> list[RequestRecord]:
        """A snapshot of every request received so far, in arrival order."""
        return self.request_log.snapshot()

    def clear_requests(self) -> None:
        self.request_log.clear()

    def start(self) -> "HttpServer":
        """Serve from a background thread; returns self."""
        self._thread = threading.Thread(target=self.serve_forever,
                                        name=f"http-{self.address}", daemon=True)
        self._serving.set()
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop accepting, close kept-alive connections, release the port."""
        if self._serving.is_set():
            self._server.shutdown()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join()
            self._thread = None
        with self._server.sockets_lock:
            for sock in list(self._server.open_sockets):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
        self._server.server_close()

    def serve_forever(self) -> None:
        """Serve in the calling thread until Ctrl-C (which ends it quietly) or stop()."""
        self._serving.set()
        try:
            self._server.serve_forever(_POLL_SECONDS)
        except KeyboardInterrupt:
            pass
        finally:
            self._serving.clear()
            self._server.server_close()

    def __enter__(self) -> "HttpServer":
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def dispatch(self, request: BaseHTTPRequestHandler) -> None:
        """Log the request, ask the handler, write its response."""
        self.request_log.append(RequestRecord(
            time.monotonic(), request.command, request.path,
            {name.lower(): value for name, value in request.headers.items()},
            request.client_address[1],
        ))
        try:
            response = self.handler(request)
        except Exception as error:  # a bug in a handler: make it visible, keep serving
            self.errors.append(error)
            response = Response(500, {"Content-Type": "text/plain"}, repr(error).encode())
        if response is None:
            request.close_connection = True
            return
        write_response(request, response if isinstance(response, Response) else Response(*response))


def write_response(request: BaseHTTPRequestHandler, response: Response) -> None:
    """Send status, headers, Content-Length and (except for HEAD) the body."""
    request.send_response(response.status)
    for name, value in response.headers.items():
        if name.lower() != "content-length":
            # A tuple of values is that many header lines (X-Robots-Tag, Set-Cookie).
            for line in (value if isinstance(value, tuple) else (value,)):
                request.send_header(name, line)
    request.send_header("Content-Length", str(len(response.body)))
    request.end_headers()
    if request.command != "HEAD":
        request.wfile.write(response.body)


class DemoServer(HttpServer):
    """The demo site on a threaded loopback server (a context manager)."""

    def __init__(self, site: DemoSite | None = None, host: str = "127.0.0.1", port: int = 0):
        self.site = site if site is not None else DemoSite()
        super().__init__(self._answer, host, port)

    def _answer(self, request: BaseHTTPRequestHandler) -> Response:
        # Absolute links are built from the Host header, as a virtual host would.
        host = request.headers.get("Host") or self.address
        response = self.site.respond(request.path, host)
        return compressed(response, request.headers.get("Accept-Encoding", ""))


_COMPRESSIBLE = ("text/", "application/json")


def compressed(response: Response, accept_encoding: str) -> Response:
    """The response gzip-encoded if it is text and the client accepts gzip."""
    content_type = response.headers.get("Content-Type", "")
    if not content_type.startswith(_COMPRESSIBLE) or not accepts_gzip(accept_encoding):
        return response
    headers = {**response.headers, "Content-Encoding": "gzip", "Vary": "Accept-Encoding"}
    # mtime=0 keeps the compressed bytes deterministic too.
    return Response(response.status, headers, gzip.compress(response.body, mtime=0))


def accepts_gzip(accept_encoding: str) -> bool:
    """Whether an Accept-Encoding value allows gzip (q=0 forbids it)."""
    for item in accept_encoding.split(","):
        coding, _, params = item.strip().partition(";")
        if coding.strip().lower() not in ("gzip", "x-gzip", "*"):
            continue
        quality = params.strip().lower()
        if quality.startswith("q="):
            try:
                return float(quality[2:]) > 0
            except ValueError:
                return False
        return True
    return False


@contextlib.contextmanager
def serve(handler: Handler, host: str = "127.0.0.1",
          port: int = 0) -> Iterator[tuple[str, RequestLog]]:
    """An ad-hoc server for the with-block: yields (base URL, live request log)."""
    with HttpServer(handler, host, port) as server:
        yield server.url, server.request_log

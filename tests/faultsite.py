"""A hostile web site on 127.0.0.1, for crawl-level fault tests.

``FaultSite`` serves a small site whose home page links to ~20 normal
pages, to one URL per fault (slow trickle, reset, 500, 503 and 429 that
succeed on the next try, 404, redirect loop, redirect to another host, a
20 MB body, a gzip bomb, binary garbage labelled text/html, a body cut off
mid-way) and to three spider traps (an infinite calendar, a path that
repeats /a/b/ forever, endless query variants of /search). It knows its own
ground truth: the normal paths, the error kind a crawler should record
for each fault, and which trap limit should cut which trap.

A second, empty server on another port is "another host" for the
cross-host redirect; it answers 200 to anything and records every
request, so a test can assert that nothing reached it.

Every request is recorded with its arrival time. Threaded, HTTP/1.1 with
keep-alive, quiet; ephemeral ports. ``gzip_bomb`` builds the bomb.

    with FaultSite() as site:
        ...crawl site.url...
        assert site.count("/fault/503-once") == 2
"""
from __future__ import annotations

import functools
import random
import socket
import struct
import sys
import threading
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MIB = 1024 * 1024
BLOCK = 64 * 1024
# Seconds between two bytes of the slow trickle.
TRICKLE_INTERVAL = 0.2


@dataclass(frozen=True)
class Fault:
    path: str
    kind: str   # error kind a crawler records ("kind: detail"); "" = fetched fine after a retry
    what: str   # what the server does


FAULTS = (
    Fault("/fault/slow", "timeout", f"trickles one byte every {TRICKLE_INTERVAL} s"),
    Fault("/fault/reset", "connection", "resets the connection instead of answering"),
    Fault("/fault/500", "http", "always 500 Internal Server Error"),
    Fault("/fault/404", "http", "404 Not Found, which must not be retried"),
    Fault("/fault/503-once", "", "503 with Retry-After: 1, then the page"),
    Fault("/fault/429-once", "", "429 without Retry-After, then the page"),
    Fault("/fault/loop-a", "redirect", "redirects to /fault/loop-b, which redirects back"),
    Fault("/fault/cross-host", "redirect", "redirects to another host (another port)"),
    Fault("/fault/huge", "too-large", "a 20 MB text/html body"),
    Fault("/fault/bomb", "too-large", "a gzip bomb: ~1 MB that inflates to 1 GiB"),
    Fault("/fault/garbage", "garbage", "random bytes labelled text/html"),
    Fault("/fault/short", "connection", "closes the connection a tenth into the body"),
)
# Trap entry paths, and the stats.json "skipped_links" reason that cuts each.
TRAPS = {
    "/calendar/2024/01": "host-pages",
    "/trap/a/b/": "repeats",
    "/search?q=1": "query-variants",
}
NORMAL_PAGES = 20


@functools.cache
def gzip_bomb(size: int) -> bytes:
    """A gzip stream that inflates to ``size`` zero bytes (a multiple of 1 MiB).

    One MiB of zeros is deflated once and ended with a full flush, which
    leaves the stream byte-aligned with no back-references to earlier
    data, so the piece decodes the same wherever it stands and is simply
    repeated: building a 1 GiB bomb takes a fraction of a second (the CRC
    of the zeros is most of it). Cached: tests build each size once.
    """
    if size % MIB:
        raise ValueError("size must be a multiple of 1 MiB")
    packer = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)  # raw deflate
    zeros = bytes(MIB)
    piece = packer.compress(zeros) + packer.flush(zlib.Z_FULL_FLUSH)
    end = packer.flush(zlib.Z_FINISH)  # an empty final block
    crc = 0
    for _ in range(size // MIB):
        crc = zlib.crc32(zeros, crc)
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"  # gzip, deflate, no name, no time
    return header + piece * (size // MIB) + end + struct.pack("<II", crc, size & 0xFFFFFFFF)


def random_garbage(size: int, seed: int = 4) -> bytes:
    """``size`` reproducible random bytes."""
    return random.Random(seed).randbytes(size)


@dataclass(frozen=True)
class Request:
    path: str
    at: float   # time.monotonic() when the request line and headers were in
    reused: bool   # an earlier request came over the same connection


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        # A crawler hanging up on a fault is the point of the fault.
        if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            super().handle_error(request, client_address)


class _Recorder:
    """A threaded server on 127.0.0.1 that records requests and asks
    ``answer(handler)`` for each response."""

    def __init__(self, answer: Callable[[BaseHTTPRequestHandler], None]) -> None:
        self.received: list[Request] = []
        self.lock = threading.Lock()
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                # One handler object serves one connection, request after request.
                reused, self.carried_one = getattr(self, "carried_one", False), True
                with recorder.lock:
                    recorder.received.append(Request(self.path, time.monotonic(), reused))
                answer(self)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.httpd = _Server(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/"

    def paths(self) -> list[str]:
        with self.lock:
            return [request.path for request in self.received]


class FaultSite:
    """The site. ``url`` is the home page; ``start``/``stop`` or ``with``."""

    def __init__(self, bomb_size: int = 1024 * MIB, huge_size: int = 20 * MIB) -> None:
        self.bomb = gzip_bomb(bomb_size)
        self.huge_size = huge_size
        self.garbage = random_garbage(256 * 1024)
        self.faults = FAULTS
        self.traps = dict(TRAPS)
        self.normal_paths = ("/",) + tuple(f"/page/{n}.html" for n in range(NORMAL_PAGES))
        self._main = _Recorder(self._answer)
        self._other = _Recorder(lambda handler: _send(handler, 200, _html("elsewhere", "")))
        self._stopping = threading.Event()

    # -- running ----------------------------------------------------------
    @property
    def url(self) -> str:
        return self._main.url

    @property
    def other_url(self) -> str:
        """The base URL of the other host, the target of the cross-host redirect."""
        return self._other.url

    def start(self) -> FaultSite:
        self._main.thread.start()
        self._other.thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # ends trickles still running
        for server in (self._main, self._other):
            server.httpd.shutdown()
            server.httpd.server_close()

    def __enter__(self) -> FaultSite:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # -- what was asked ---------------------------------------------------
    def requests(self) -> list[Request]:
        with self._main.lock:
            return list(self._main.received)

    def count(self, path: str) -> int:
        return self._main.paths().count(path)

    def other_paths(self) -> list[str]:
        return self._other.paths()

    # -- the site ---------------------------------------------------------
    def _answer(self, handler: BaseHTTPRequestHandler) -> None:
        path = handler.path
        route = self._routes().get(path)
        if route:
            route(handler)
        elif path.startswith("/page/"):
            self._normal(handler)
        elif path.startswith("/calendar/"):
            self._calendar(handler)
        elif path.startswith("/trap/"):
            _send(handler, 200, _html("trap " + path, '<a href="a/b/">deeper</a>'))
        elif path.startswith("/search?q="):
            self._search(handler)
        else:
            _send(handler, 404, b"not found", "text/plain")

    def _routes(self) -> dict[str, Callable[[BaseHTTPRequestHandler], None]]:
        return {
            "/": self._home,
            "/robots.txt": lambda h: _send(h, 200, b"User-agent: *\nDisallow:\n", "text/plain"),
            "/fault/slow": self._trickle,
            "/fault/reset": _reset,
            "/fault/500": lambda h: _send(h, 500, b"<html>broken</html>"),
            "/fault/404": lambda h: _send(h, 404, b"<html>gone</html>"),
            "/fault/503-once": self._once(503, {"Retry-After": "1"}),
            "/fault/429-once": self._once(429, {}),
            "/fault/loop-a": lambda h: _redirect(h, "/fault/loop-b"),
            "/fault/loop-b": lambda h: _redirect(h, "/fault/loop-a"),
            "/fault/cross-host": lambda h: _redirect(h, self.other_url + "landing.html"),
            "/fault/huge": self._huge,
            "/fault/bomb": lambda h: _send(h, 200, self.bomb, "text/html", {"Content-Encoding": "gzip"}),
            "/fault/garbage": lambda h: _send(h, 200, self.garbage, "text/html"),
            "/fault/short": _short,
        }

    def _home(self, handler: BaseHTTPRequestHandler) -> None:
        targets = [*self.normal_paths[1:], *(fault.path for fault in self.faults), *self.traps]
        links = "\n".join(f'<li><a href="{target}">{target}</a></li>' for target in targets)
        _send(handler, 200, _html("Fault site", f"<ul>{links}</ul>"))

    def _normal(self, handler: BaseHTTPRequestHandler) -> None:
        if handler.path not in self.normal_paths:
            _send(handler, 404, b"not found", "text/plain")
            return
        _send(handler, 200, _html(f"Normal page {handler.path}", '<a href="/">home</a>'))

    def _once(self, status: int, headers: dict[str, str]) -> Callable[[BaseHTTPRequestHandler], None]:
        """The first request gets ``status``; every later one the page."""
        def answer(handler: BaseHTTPRequestHandler) -> None:
            if self.count(handler.path) == 1:
                _send(handler, status, b"<html>come back later</html>", "text/html", headers)
            else:
                _send(handler, 200, _html(f"Recovered {handler.path}", '<a href="/">home</a>'))
        return answer

    def _trickle(self, handler: BaseHTTPRequestHandler) -> None:
        _head(handler, 200, {"Content-Type": "text/html", "Content-Length": "100"})
        for _ in range(100):
            handler.wfile.write(b"x")
            if self._stopping.wait(TRICKLE_INTERVAL):  # slow on purpose: the fault
                break
        handler.close_connection = True

    def _huge(self, handler: BaseHTTPRequestHandler) -> None:
        _head(handler, 200, {"Content-Type": "text/html", "Content-Length": str(self.huge_size)})
        block = b"<p>" + b"x" * (BLOCK - 3)
        for _ in range(self.huge_size // BLOCK):
            handler.wfile.write(block)
        handler.wfile.write(block[: self.huge_size % BLOCK])

    def _calendar(self, handler: BaseHTTPRequestHandler) -> None:
        try:
            year, month = (int(part) for part in handler.path.split("/")[2:4])
        except ValueError:
            _send(handler, 404, b"not found", "text/plain")
            return
        before = (year, month - 1) if month > 1 else (year - 1, 12)
        after = (year, month + 1) if month < 12 else (year + 1, 1)
        links = " ".join(f'<a href="/calendar/{y:04d}/{m:02d}">{y}-{m:02d}</a>' for y, m in (before, after))
        _send(handler, 200, _html(f"Calendar {year}-{month:02d}", links))

    def _search(self, handler: BaseHTTPRequestHandler) -> None:
        n = int(handler.path.partition("=")[2] or 0)
        links = " ".join(f'<a href="/search?q={k}">{k}</a>' for k in range(n + 1, n + 4))
        _send(handler, 200, _html(f"Search {n}", links))


def _html(title: str, body: str) -> bytes:
    return (f"<!DOCTYPE html><html><head><meta charset=utf-8><title>{title}</title></head>"
            f"<body><h1>{title}</h1><p>Some words on this page.</p>{body}</body></html>").encode()


def _head(handler: BaseHTTPRequestHandler, status: int, headers: dict[str, str]) -> None:
    handler.send_response(status)
    for name, value in headers.items():
        handler.send_header(name, value)
    handler.end_headers()


def _send(handler: BaseHTTPRequestHandler, status: int, body: bytes,
          content_type: str = "text/html; charset=utf-8", headers: dict[str, str] | None = None) -> None:
    _head(handler, status, {"Content-Type": content_type, "Content-Length": str(len(body)),
                            **(headers or {})})
    handler.wfile.write(body)


def _redirect(handler: BaseHTTPRequestHandler, location: str) -> None:
    _send(handler, 302, b"moved", "text/plain", {"Location": location})


def _reset(handler: BaseHTTPRequestHandler) -> None:
    """Close with SO_LINGER 0: the kernel answers with RST, not FIN."""
    handler.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    handler.connection.close()
    handler.close_connection = True


def _short(handler: BaseHTTPRequestHandler) -> None:
    _head(handler, 200, {"Content-Type": "text/html", "Content-Length": "10000"})
    handler.wfile.write(b"<html><body>" + b"x" * 988)
    handler.close_connection = True

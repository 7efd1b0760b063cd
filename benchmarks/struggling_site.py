"""A struggling web server on loopback: the slower the more it is asked at
once, and 503 when overloaded.

It models a server with one busy core: a request that finds ``n`` requests
being served (itself included) takes ``base x n`` seconds (processor
sharing: asking more at once buys no throughput, only longer answers), and
one that would make more than ``capacity`` at once is refused at once with
503, every ``retry_after_every``-th of them with ``Retry-After: 1``. With
``shared_core=False`` it models a healthy server instead: ``capacity``
cores, every answer ``base`` seconds however many are served. A
crawler that sends one request at a time gets an answer in ``base``
seconds, ``1 / base`` pages a second; one that sends four at once gets
slower answers and 503s.

The site: ``pages`` HTML pages in a tree (``/p/0.html`` the root, page i
links to its ``branching`` children, its parent and the root), about 1.5
KB each, and a robots.txt that allows everything (with ``Crawl-delay`` if
given). Every request is recorded (path, arrival, status, how many were
being served), so tests and benchmarks count 503s and gaps from the
server's side. A Python threaded server on purpose: it is the model, not
the speed (one page costs it well under a millisecond of its own).

    with StrugglingSite(pages=400) as site:
        ...crawl site.url...
        site.count_status(503)
"""
from __future__ import annotations

import threading
import time
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass(frozen=True)
class Served:
    path: str
    at: float        # time.monotonic() when its headers were in
    status: int
    load: int        # requests being served when it came, itself included


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 64

    def handle_error(self, request: object, client_address: object) -> None:
        pass   # a crawler hanging up (stopped, timed out) is not the server's failure


class StrugglingSite:
    def __init__(self, pages: int = 400, branching: int = 4, base: float = 0.02,
                 capacity: int = 2, retry_after_every: int = 3, crawl_delay: float | None = None,
                 host: str = "127.0.0.1", shared_core: bool = True) -> None:
        self.pages, self.branching, self.base, self.capacity = pages, branching, base, capacity
        self.shared_core = shared_core   # False: as many cores as capacity, answers never slower
        self.retry_after_every = retry_after_every
        self.crawl_delay = crawl_delay
        self.served: deque[Served] = deque()
        self._lock = threading.Lock()
        self._load = 0
        self._refused = 0
        site = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                site._answer(self)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self._httpd = _Server((host, 0), Handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True)

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/p/0.html"

    def __enter__(self) -> StrugglingSite:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    # -- what it was asked ------------------------------------------------
    def log(self) -> list[Served]:
        with self._lock:
            return list(self.served)

    def count_status(self, status: int) -> int:
        return sum(1 for served in self.log() if served.status == status)

    def page_paths(self) -> set[str]:
        """Every page path of the site, the root's included."""
        return {f"/p/{i}.html" for i in range(self.pages)}

    # -- the server ---------------------------------------------------------
    def _answer(self, handler: BaseHTTPRequestHandler) -> None:
        arrived = time.monotonic()
        with self._lock:
            load = self._load + 1
            refused = load > self.capacity
            if refused:
                self._refused += 1
                retry_after = self._refused % self.retry_after_every == 0
            else:
                self._load = load
        if refused:
            self._record(handler.path, arrived, 503, load)
            _send(handler, 503, b"overloaded", "text/plain", {"Retry-After": "1"} if retry_after else {})
            return
        try:
            time.sleep(self.base * (load if self.shared_core else 1))
            status, body, kind = self._page(handler.path)
            self._record(handler.path, arrived, status, load)
            _send(handler, status, body, kind)
        finally:
            with self._lock:
                self._load -= 1

    def _record(self, path: str, arrived: float, status: int, load: int) -> None:
        with self._lock:
            self.served.append(Served(path, arrived, status, load))

    def _page(self, path: str) -> tuple[int, bytes, str]:
        if path == "/robots.txt":
            delay = "" if self.crawl_delay is None else f"Crawl-delay: {self.crawl_delay:g}\n"
            return 200, f"User-agent: *\n{delay}Disallow: /private/\n".encode(), "text/plain"
        number = path.removeprefix("/p/").removesuffix(".html")
        if not (path.startswith("/p/") and number.isdigit() and int(number) < self.pages):
            return 404, b"not found", "text/plain"
        i = int(number)
        kids = range(self.branching * i + 1, min(self.branching * (i + 1) + 1, self.pages))
        links = [f"/p/{k}.html" for k in kids] + [f"/p/{max(0, i - 1) // self.branching}.html",
                                                   "/p/0.html"]
        text = f"Page {i} of a server that struggles. " * 30
        body = (f"<html><head><title>page {i}</title></head><body><h1>page {i}</h1><p>{text}</p>"
                + "".join(f'<a href="{href}">link</a> ' for href in links) + "</body></html>")
        return 200, body.encode(), "text/html; charset=utf-8"


def _send(handler: BaseHTTPRequestHandler, status: int, body: bytes, kind: str,
          headers: dict[str, str] | None = None) -> None:
    handler.send_response(status)
    handler.send_header("Content-Type", kind)
    handler.send_header("Content-Length", str(len(body)))
    for name, value in (headers or {}).items():
        handler.send_header(name, value)
    handler.end_headers()
    handler.wfile.write(body)

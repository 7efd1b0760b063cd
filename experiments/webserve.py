"""A generated web (experiments/webgen.py) served on loopback: one address per host, ephemeral ports.

    with serve_web(web) as served:
        crawl served.seed_url ...; served.page_id(url) maps an index.csv URL back to its page

Each host is an HttpServer (demosite/server.py) on its own address
127.0.0.<first_address + k>, bound first so that every base URL is known
before the pages are rendered, since links cross hosts. Every host answers
/robots.txt with a file that allows everything, a page path with exactly
the bytes `webgen.render` made for it, and anything else with 404.
"""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass

from demosite import Response
from demosite.server import HttpServer, RequestLog
from webgen import Web, render

ROBOTS = b"User-agent: *\nAllow: /\n"
FIRST_ADDRESS = 60        # 127.0.0.60, ...: clear of the other test sites' addresses
HTML = {"Content-Type": "text/html; charset=utf-8"}
TEXT = {"Content-Type": "text/plain; charset=utf-8"}


@dataclass(frozen=True)
class ServedWeb:
    web: Web
    bases: tuple[str, ...]              # by host index, e.g. "http://127.0.0.60:41234/"
    pages: dict[str, bytes]             # URL -> the bytes served
    ids: dict[str, int]                 # URL -> page id
    logs: tuple[RequestLog, ...]        # by host index: every request received

    @property
    def seed_url(self) -> str:
        return self.url(self.web.seed)

    def url(self, page: int) -> str:
        page_ = self.web.pages[page]
        return self.bases[page_.host] + page_.path[1:]


@contextmanager
def serve_web(web: Web, first_address: int = FIRST_ADDRESS) -> Iterator[ServedWeb]:
    """Serve every host of web until the with-block ends."""
    hosts = max(page.host for page in web.pages) + 1
    with ExitStack() as stack:
        paths: list[dict[str, bytes]] = [{} for _ in range(hosts)]      # filled once the ports are known
        servers = [HttpServer(_handler(paths[k]), host=f"127.0.0.{first_address + k}") for k in range(hosts)]
        for server in servers:
            stack.enter_context(server)
        bases = tuple(server.url for server in servers)
        pages = render(web, bases)
        for page in web.pages:
            paths[page.host][page.path] = pages[bases[page.host] + page.path[1:]]
        served = ServedWeb(web, bases, pages, {}, tuple(server.request_log for server in servers))
        served.ids.update({served.url(page.id): page.id for page in web.pages})
        yield served


def _handler(paths: dict[str, bytes]):
    """One host's answers: its pages by path."""
    def answer(request) -> Response:
        if request.path == "/robots.txt":
            return Response(200, TEXT, ROBOTS)
        body = paths.get(request.path)
        return Response(200, HTML, body) if body is not None else Response(404, TEXT, b"not found\n")
    return answer

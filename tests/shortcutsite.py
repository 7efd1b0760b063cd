"""A test site with shortcuts, for the orders' shared crawl
(tests/test_distributed_orders.py): HOSTS hosts on loopback addresses, each
a binary tree of PAGES pages, and every page also linking to a page deep in
the next host's tree. A crawl that goes deep first (an order) finds many
pages by a long path before a shorter one, so levels must be corrected."""
from collections import deque
from contextlib import ExitStack, contextmanager

from demosite import Response
from demosite.server import serve

HOSTS, PAGES = 4, 15


def links_of(host: int, page: int) -> list[tuple[int, int]]:
    kids = [(host, c) for c in (2 * page + 1, 2 * page + 2) if c < PAGES]
    return kids + [((host + 1) % HOSTS, (page * 7 + 3) % PAGES)]


@contextmanager
def shortcut_site(first_address: int = 140):
    """(the seed: host 0's root, URL -> its level, the servers' logs)."""
    with ExitStack() as stack:
        bases, logs, handlers = [], [], {}
        for k in range(HOSTS):
            base, log = stack.enter_context(serve(lambda request, k=k: handlers[k](request),
                                                  host=f"127.0.0.{first_address + k}"))
            bases.append(base)
            logs.append(log)
        url = lambda host, page: f"{bases[host]}p/{page}.html"
        for k in range(HOSTS):
            handlers[k] = _host(k, url)
        yield url(0, 0), _levels(url), logs


def _host(k, url):
    def answer(request):
        if request.path.startswith("/p/") and request.path.endswith(".html"):
            page = int(request.path[3:-5])
            if page < PAGES:
                body = "".join(f'<a href="{url(*link)}">x</a>' for link in links_of(k, page))
                title = f"host {k} page {page}"
                return Response(200, {"Content-Type": "text/html; charset=utf-8"},
                                f"<html><title>{title}</title><body>{title}{body}</body></html>"
                                .encode())
        return Response(404, {"Content-Type": "text/plain"}, b"")
    return answer


def _levels(url) -> dict[str, int]:
    levels, todo = {(0, 0): 0}, deque([(0, 0)])
    while todo:
        node = todo.popleft()
        for link in links_of(*node):
            if link not in levels:
                levels[link] = levels[node] + 1
                todo.append(link)
    return {url(*node): level for node, level in levels.items()}

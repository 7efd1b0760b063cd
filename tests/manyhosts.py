"""The many-host test site: six small sites, each on its own loopback address
(127.0.0.x), every page linking to its children, its home and the other
sites' roots. tests/test_many_hosts.py and tests/test_distributed.py crawl it."""
import time
from collections import deque
from contextlib import ExitStack, contextmanager

from demosite import Response
from demosite.server import serve

# The crawler's clock counts a request from when it is sent, the server's
# from when its headers arrive: the first request to a host also opens the
# connection (address check, connect) first, so the first gap as the server
# sees it can be that much shorter. The bar: 0.9 x delay. The
# crawler's own clock is held to the exact delay in test_host_frontier.py.
SERVER_SIDE = 0.9
SITES = [(12, 2), (20, 3), (7, 6), (15, 4), (9, 2), (5, 3)]   # (pages, branching)


def site(pages, branching, others, slow=None):
    """A tree of `pages` pages; every page links to its children, home, and
    the other sites' roots. `slow`: path -> seconds the answer takes."""
    slow = slow or {}

    def answer(request):
        time.sleep(slow.get(request.path, 0))   # a slow server, not a wait for a race
        if request.path == "/robots.txt":
            return Response(404, {"Content-Type": "text/plain"}, b"")
        if request.path.startswith("/p/") and request.path.endswith(".html"):
            i = int(request.path[3:-5])
            if i < pages:
                kids = range(branching * i + 1, min(branching * i + branching + 1, pages))
                links = [f"/p/{c}.html" for c in kids] + ["/p/0.html"] + list(others)
                body = "".join(f'<a href="{href}">x</a>' for href in links)
                title = f"site of {pages} pages, page {i}"   # distinct text: no content duplicates
                return Response(200, {"Content-Type": "text/html; charset=utf-8"},
                                f"<html><title>{title}</title><body><h1>{title}</h1>{body}</body></html>".encode())
        return Response(404, {"Content-Type": "text/plain"}, b"")
    return answer


@contextmanager
def many_hosts(first_address: int = 20, slow=None):
    """`slow`: site index -> {path: seconds its answer takes}."""
    slow = slow or {}
    addresses = [f"127.0.0.{first_address + k}" for k in range(len(SITES))]
    with ExitStack() as stack:
        # Bind each site first with a placeholder to learn its port, then serve.
        roots, logs = [], []
        handlers = {}

        def dispatch(address):
            return lambda request: handlers[address](request)

        for address in addresses:
            base, log = stack.enter_context(serve(dispatch(address), host=address))
            roots.append(base + "p/0.html")
            logs.append(log)
        for k, (address, (pages, branching)) in enumerate(zip(addresses, SITES)):
            others = [root for j, root in enumerate(roots) if j != k]
            handlers[address] = site(pages, branching, others, slow.get(k))
        yield roots, logs


def truth(roots):
    """URL -> BFS level, walking the same link rules the sites serve."""
    levels = {root: 0 for root in roots}
    todo = deque(roots)
    while todo:
        url = todo.popleft()
        base, number = url.rsplit("/p/", 1)
        k = roots.index(base + "/p/0.html")
        pages, branching = SITES[k]
        i = int(number[:-5])
        kids = range(branching * i + 1, min(branching * i + branching + 1, pages))
        for link in [f"{base}/p/{c}.html" for c in kids] + [roots[k]] + roots:
            if link not in levels:
                levels[link] = levels[url] + 1
                todo.append(link)
    return levels


def gaps_per_host(logs):
    found = []
    for log in logs:
        times = sorted(r.time for r in log.snapshot())
        found.append([b - a for a, b in zip(times, times[1:])])
    return found



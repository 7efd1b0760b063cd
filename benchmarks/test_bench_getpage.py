"""Micro-benchmarks of GetPage: the CPU one GET of a 16 KB page costs the client.

Three clients fetch the pages of a small generated benchmark site
(benchmarks/site.py) one after another over one kept-alive connection:
``Fetcher.fetch`` (robots check, politeness gate, address guard, body read
within its limits, binary check, charset decoding: everything a crawl pays
per page), a plain ``requests.Session.get`` (``trust_env`` off, as the
Fetcher's session), and a urllib3 connection pool, the floor under both.
Each call is checked: the body is byte-identical to the file served.

The timer is ``time.process_time``: CPU of this process, not wall time, so
the numbers hold on a machine busy with other work, and the server runs in
another process (nginx when installed, else Python's http.server, which is
slow but only costs wall time here).

Run:  .venv/bin/python -m pytest benchmarks/test_bench_getpage.py --benchmark-enable \\
          --benchmark-columns=min,median,iqr,rounds
Without --benchmark-enable (the project's default) each runs once, as a test.
"""
from __future__ import annotations

import itertools
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import requests
import urllib3

from benchmarks.nginx import Nginx, find_nginx
from benchmarks.site import SiteSpec, generate
from getpage import FetchConfig, Fetcher

cpu_time = pytest.mark.benchmark(group="GET one 16 KB page", timer=time.process_time)

# A static file server speaking HTTP/1.1 (keep-alive), for machines without nginx.
_PYTHON_SERVER = """
import functools, http.server, sys
class Handler(http.server.SimpleHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *args):
        pass
handler = functools.partial(Handler, directory=sys.argv[1])
httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
print(httpd.server_address[1], flush=True)
httpd.serve_forever()
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> tuple[Path, list[str]]:
    """The site's directory and the paths of its HTML pages."""
    root = tmp_path_factory.mktemp("getpage-site")
    truth = generate(SiteSpec(pages=60), root)
    return root, [path for level in truth.paths_by_level for path in level]


@pytest.fixture(scope="module")
def base_url(site) -> Iterator[str]:
    root, _ = site
    if find_nginx():
        with Nginx(root) as server:
            yield server.url.rstrip("/")
        return
    server = subprocess.Popen([sys.executable, "-c", _PYTHON_SERVER, str(root)],
                              stdout=subprocess.PIPE, text=True)
    try:
        yield f"http://127.0.0.1:{server.stdout.readline().strip()}"
    finally:
        server.terminate()
        server.wait(10)


def one_page_at_a_time(site, base_url: str, get: Callable[[str], bytes]) -> Callable[[], bool]:
    """A call that GETs the next page of the site (round robin) and says
    whether the body was the file's bytes."""
    root, paths = site
    pages = itertools.cycle([(base_url + path, (root / path.lstrip("/")).read_bytes())
                             for path in paths])

    def call() -> bool:
        url, expected = next(pages)
        return get(url) == expected
    return call


@cpu_time
def test_fetcher_fetch(benchmark, site, base_url):
    config = FetchConfig(user_agent="BenchBot/1", delay=0,
                         allowed_addresses=frozenset({"public", "loopback"}))
    with Fetcher(config) as fetcher:
        def get(url: str) -> bytes:
            result = fetcher.fetch(url)
            assert result.ok and result.text is not None, result.error
            return result.body

        assert get(base_url + "/index.html")  # robots.txt is fetched once, outside the timing
        assert benchmark(one_page_at_a_time(site, base_url, get))


@cpu_time
def test_requests_session_get(benchmark, site, base_url):
    with requests.Session() as session:
        session.trust_env = False
        assert benchmark(one_page_at_a_time(site, base_url, lambda url: session.get(url).content))


@cpu_time
def test_urllib3_pool_floor(benchmark, site, base_url):
    with urllib3.PoolManager(maxsize=1) as pool:
        assert benchmark(one_page_at_a_time(site, base_url, lambda url: pool.request("GET", url).data))

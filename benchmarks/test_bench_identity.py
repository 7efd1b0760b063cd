"""Micro-benchmark: what the cookie jar and the request options cost one GET.

The GET of benchmarks/test_bench_getpage.py (``Fetcher.fetch`` of a 16 KB
page over one kept-alive connection, CPU time of this process), with:
no cookies (``--no-cookies``: no request option at all, nothing added to a
request), the default jar on a site that sets no cookie, a jar holding a
cookie for the host (a Cookie header made for every request), and a jar
plus a --header and a login (Basic after the first challenge's answer is
known: ``--auth-no-challenge``).

Run:  .venv/bin/python -m pytest benchmarks/test_bench_identity.py --benchmark-enable \\
          --benchmark-columns=min,median,iqr,rounds
"""
from __future__ import annotations

import time
from urllib.parse import urlsplit

import pytest

from benchmarks.test_bench_getpage import base_url, one_page_at_a_time, site  # noqa: F401 (fixtures)
from getpage import FetchConfig, Fetcher

OPTIONS = {
    "no-cookies": {"cookies": False},
    "jar, no cookie set": {},
    "jar, a cookie for the host": {"cookie_file": "COOKIES"},
    "jar, header and Basic login": {"headers": (("X-Course", "ir-101"),), "http_user": "u",
                                    "http_password": "p", "auth_no_challenge": True},
}


@pytest.mark.benchmark(group="GET one 16 KB page: request options", timer=time.process_time)
@pytest.mark.parametrize("name", list(OPTIONS))
def test_fetcher_fetch_with(benchmark, site, base_url, tmp_path, name):  # noqa: F811
    options = dict(OPTIONS[name])
    if options.get("cookie_file"):
        host = urlsplit(base_url).hostname
        path = tmp_path / "cookies.txt"
        path.write_text(f"# Netscape HTTP Cookie File\n{host}\tFALSE\t/\tFALSE\t0\tsid\tabc123\n")
        options["cookie_file"] = str(path)
    origin = base_url.rstrip("/")
    config = FetchConfig(user_agent="BenchBot/1", delay=0, credential_origins={origin},
                         allowed_addresses=frozenset({"public", "loopback"}), **options)
    with Fetcher(config) as fetcher:
        def get(url: str) -> bytes:
            result = fetcher.fetch(url)
            assert result.ok and result.text is not None, result.error
            return result.body

        assert get(base_url + "/index.html")  # robots.txt is fetched once, outside the timing
        assert benchmark(one_page_at_a_time(site, base_url, get))

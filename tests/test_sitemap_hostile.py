"""Every hostile sitemap is refused with one line, and the peak resident set
of the process reading it grows by less than 50 MB (issue 16's bar).

Each file is served by a real server on 127.0.0.1 and read through a real
Fetcher by controller.sitemaps.gather in a child process of its own
(tests/sitemap_child.py), which measures its own peak, so that nothing in
this process blurs it. The bombs are built without holding what they
expand to, and the large plain files are generated while they are sent.

    python tests/test_sitemap_hostile.py    prints the table of every case
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from faultsite import gzip_bomb
from getpage_stub import StubServer, page, send
from sitemap_files import (
    MIB,
    NS,
    billion_laughs,
    external_dtd,
    external_entity,
    index,
    inflating,
    nested,
    repeated,
    urlset,
)

CHILD = Path(__file__).resolve().parent / "sitemap_child.py"
BAR_KB = 50 * 1024
HEAD = f'<?xml version="1.0"?>\n<urlset xmlns="{NS}">'.encode()
DTD = "refused: a DTD (<!DOCTYPE>) at line 2 (entity bombs and external entities need one)"
TOO_MANY = "refused: over 50,000 entries (the sitemaps.org limit)"


def spaces_bomb() -> bytes:
    """A sitemap of 1 GiB of spaces, gzip-compressed to about 1 MB."""
    return inflating(HEAD, b" " * MIB, 1024, b"</urlset>")


def install(server: StubServer, case: str) -> tuple[list[str], str, dict[str, int]]:
    """Serve ``case``; the sitemaps to gather, and the problem line and the
    dropped counts expected (``{url}`` stands for the sitemap's own URL)."""
    u = server.url
    route, expected, dropped = CASES[case]
    if callable(route):
        server.routes["/s"] = route(server)
    else:
        server.routes["/s"] = page(route, "application/xml")
    return [u("/s")], expected.replace("{url}", u("/s")), dropped


CASES = {
    "billion laughs": (billion_laughs(), "{url}: " + DTD, {}),
    "external entity": (lambda s: page(external_entity(s.url("/secret")), "application/xml"),
                        "{url}: " + DTD, {}),
    "external DTD": (lambda s: page(external_dtd(s.url("/evil.dtd")), "application/xml"),
                     "{url}: " + DTD, {}),
    "gzip bomb, 1 GiB of zeros": (
        lambda s: page(gzip_bomb(1024 * MIB), "application/x-gzip"),
        "{url}: refused: binary data (a NUL byte) where a text sitemap was expected", {}),
    "gzip bomb, 1 GiB of XML spaces": (
        lambda s: page(spaces_bomb(), "application/x-gzip"),
        "{url}: refused: over 52,428,800 bytes when uncompressed (the sitemaps.org limit; "
        "a gzip bomb?): stopped reading", {}),
    "HTTP gzip bomb (Content-Encoding), 1 GiB": (
        lambda s: _encoded(spaces_bomb()),
        "{url}: refused: over 52,428,800 bytes (the sitemaps.org limit): stopped reading", {}),
    "nesting 100,000 deep": (nested(100_000), "{url}: refused: elements nested over 16 deep at line 1", {}),
    "plain file of 60 MB": (
        lambda s: repeated(HEAD, b"<!--" + b"c" * 1017 + b"-->", 60 * 1024, b"</urlset>"),
        "{url}: refused: over 52,428,800 bytes (the sitemaps.org limit): stopped reading", {}),
    "one attribute of 40 MB": (
        lambda s: repeated(b"<urlset a='", b"x" * MIB, 40, b"'/>"),
        "{url}: refused: a tag, comment or declaration over 1,048,576 bytes at line 1", {}),
    "50,001 URLs": (lambda s: page(urlset(s.url(f"/p/{i}") for i in range(50_001)), "application/xml"),
                    "{url}: " + TOO_MANY, {}),
    "self-referencing index": (
        lambda s: page(index([s.url("/s")]), "application/xml"),
        "{url}: listed again by {url}, which was read already: read once", {}),
    "index in an index": (
        lambda s: _index_in_index(s),
        "http://127.0.0.1:PORT/inner: refused: a sitemap index listed by a sitemap index "
        "(sitemaps.org: an index lists sitemaps, not indexes)", {}),
    "50,000 locs out of scope or on other hosts": (
        lambda s: page(urlset([s.url(f"/private/{i}") for i in range(25_000)]
                              + [f"http://127.0.0.9/{i}" for i in range(25_000)]), "application/xml"),
        "", {"exclude": 25_000, "on another origin than its sitemap": 25_000}),
}


def _encoded(body: bytes):
    return lambda handler: send(handler, 200, body, {"Content-Type": "application/xml",
                                                    "Content-Encoding": "gzip"})


def _index_in_index(server: StubServer):
    server.routes["/inner"] = page(index([server.url("/leaf")]), "application/xml")
    return page(index([server.url("/inner")]), "application/xml")


def run_child(server: StubServer, sitemaps: list[str], ballast_mb: int = 0, record: bool = False) -> dict:
    server.routes["/warmup.xml"] = page(urlset([server.url("/w")]), "application/xml")
    job = {"sitemaps": sitemaps, "warmup": server.url("/warmup.xml"), "scope_seed": server.url("/"),
           "ballast_mb": ballast_mb, "record": record}
    done = subprocess.run([sys.executable, str(CHILD), json.dumps(job)], capture_output=True,
                          text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.fixture
def server():
    stub = StubServer()
    yield stub
    stub.close()


@pytest.mark.parametrize("case", list(CASES))
def test_a_hostile_sitemap_is_refused_with_one_line_in_bounded_memory(server, case):
    sitemaps, expected, dropped = install(server, case)
    outcome = run_child(server, sitemaps)
    expected = expected.replace("PORT", str(server.port))
    assert outcome["problems"] == ([expected] if expected else [])
    assert outcome["dropped"] == dropped
    assert outcome["urls"] == 0
    assert outcome["growth_kb"] < BAR_KB, f"peak RSS grew {outcome['growth_kb'] / 1024:.1f} MB"
    asked = [path for path in server.paths() if path not in ("/robots.txt", "/warmup.xml")]
    assert asked.count("/s") == 1                           # each sitemap fetched once
    assert not {"/secret", "/evil.dtd", "/leaf"} & set(asked)   # no entity, DTD or grandchild followed


def test_a_full_sitemap_at_the_limit_is_read_in_bounded_memory(server):
    server.routes["/s"] = page(urlset(server.url(f"/p/{i}") for i in range(50_000)), "application/xml")
    outcome = run_child(server, [server.url("/s")])
    assert (outcome["urls"], outcome["problems"], outcome["dropped"]) == (50_000, [], {})
    assert outcome["growth_kb"] < BAR_KB


def test_a_crawl_that_records_a_warc_keeps_no_sitemap_body_either(server):
    """--warc records every exchange's body; a sitemap's is streamed, not recorded."""
    sitemaps, expected, _ = install(server, "plain file of 60 MB")
    outcome = run_child(server, sitemaps, record=True)
    assert outcome["problems"] == [expected]
    assert outcome["growth_kb"] < BAR_KB, f"peak RSS grew {outcome['growth_kb'] / 1024:.1f} MB"


def test_the_measurement_sees_memory_held_while_gathering(server):
    outcome = run_child(server, [server.url("/warmup.xml")], ballast_mb=64)
    assert outcome["growth_kb"] >= 64 * 1024


def table() -> None:
    """Every case's line and peak growth, as the report shows them."""
    print("| file | the one line | peak RSS growth |\n|---|---|---|")
    for case in CASES:
        server = StubServer()
        try:
            sitemaps, _, _ = install(server, case)
            outcome = run_child(server, sitemaps)
        finally:
            server.close()
        line = outcome["problems"][0] if outcome["problems"] else f"dropped {outcome['dropped']}"
        print(f"| {case} | {line.replace(server.url(''), '')} | {outcome['growth_kb'] / 1024:.1f} MB |")


if __name__ == "__main__":
    table()

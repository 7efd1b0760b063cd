"""GetPage's part in sitemaps: a body handed to a sink as it arrives (Ask.sink),
redirects of a document that is not a page (Ask.check_redirects), and the
Sitemap: lines of robots.txt (RobotsRules.sitemaps, Fetcher.sitemaps).
Every test talks to a real server on 127.0.0.1."""
from __future__ import annotations

import gzip

import pytest
from getpage_stub import StubServer, local_config, page, redirect, send
from sitemap_files import Streamed, whole

from getpage import Ask, Fetcher, parse_robots
from getpage.robots import RobotsRules

UA = "BfsBot/0.1 (+http://example.org/bot)"
XML = frozenset({"application/xml"})
BIG = 64 * 1024 * 1024   # far more than loopback's socket buffers hold


@pytest.fixture
def server():
    stub = StubServer()
    yield stub
    stub.close()


def make_fetcher(**settings):
    injected = {name: settings.pop(name) for name in ("redirect_check",) if name in settings}
    return Fetcher(local_config(UA, **{"delay": 0, "timeout": 5, **settings}), **injected)


class Collect:
    """A sink that keeps what it is given, and refuses past ``refuse_after`` bytes."""

    def __init__(self, refuse_after: int | None = None) -> None:
        self.chunks: list[bytes] = []
        self.refuse_after = refuse_after

    def __call__(self, chunk: bytes) -> None:
        self.chunks.append(chunk)
        if self.refuse_after is not None and sum(map(len, self.chunks)) > self.refuse_after:
            raise ValueError("enough of this")


# -- Ask.sink -----------------------------------------------------------------------

def test_a_sink_gets_the_body_in_chunks_and_the_result_keeps_none(server):
    body = bytes(range(256)) * 4096   # 1 MiB
    server.routes["/s.xml"] = whole(body)
    sink = Collect()
    with make_fetcher() as fetcher:
        result = fetcher.fetch(server.url("/s.xml"), ask=Ask(document_types=XML, sink=sink))
    assert (result.ok, result.error, result.body, result.text) == (True, "", b"", None)
    assert b"".join(sink.chunks) == body
    assert len(sink.chunks) > 1 and max(map(len, sink.chunks)) <= 64 * 1024


def test_a_sink_gets_the_body_decoded_from_its_content_encoding(server):
    body = b"<urlset>" + b" " * 500_000 + b"</urlset>"
    server.routes["/s.xml"] = page(gzip.compress(body, mtime=0), "application/xml")
    server.routes["/z.xml"] = lambda handler: send(handler, 200, gzip.compress(body, mtime=0), {
        "Content-Type": "application/xml", "Content-Encoding": "gzip"})
    raw, decoded = Collect(), Collect()
    with make_fetcher() as fetcher:
        fetcher.fetch(server.url("/s.xml"), ask=Ask(document_types=XML, sink=raw))
        fetcher.fetch(server.url("/z.xml"), ask=Ask(document_types=XML, sink=decoded))
    assert b"".join(raw.chunks) == gzip.compress(body, mtime=0)    # a .gz file stays as it is
    assert b"".join(decoded.chunks) == body
    assert max(map(len, decoded.chunks)) <= 64 * 1024


def test_a_sink_that_refuses_stops_the_download_at_once(server):
    streamer = Streamed(lambda: (b"x" * 65536 for _ in range(BIG // 65536)), "application/xml", BIG)
    server.routes["/huge.xml"] = streamer
    sink = Collect(refuse_after=100_000)
    with make_fetcher(max_bytes=2 * BIG) as fetcher:
        result = fetcher.fetch(server.url("/huge.xml"), ask=Ask(document_types=XML, sink=sink))
        assert (result.status, result.error, result.body) == (200, "refused: enough of this", b"")
        assert fetcher.fetch(server.url("/huge.xml"), ask=Ask(document_types=XML, sink=Collect(0))).error \
            == "refused: enough of this"   # the Fetcher goes on after a refusal
    assert sum(map(len, sink.chunks)) <= 100_000 + 64 * 1024
    assert server.paths() == ["/robots.txt", "/huge.xml", "/huge.xml"]
    assert streamer.written < BIG // 2


def test_a_sink_still_has_the_size_cap(server):
    server.routes["/big.xml"] = whole(b"y" * 300_000)
    sink = Collect()
    with make_fetcher() as fetcher:
        result = fetcher.fetch(server.url("/big.xml"), ask=Ask(document_types=XML, max_bytes=100_000, sink=sink))
    assert result.error == "too-large: body over 100000 bytes"
    assert sum(map(len, sink.chunks)) <= 100_000


def test_a_sink_exception_that_is_no_refusal_is_a_bug_and_propagates(server):
    server.routes["/s.xml"] = page(b"<urlset/>", "application/xml")

    def broken(chunk):
        raise KeyError("a bug in the consumer")
    with make_fetcher() as fetcher:
        with pytest.raises(KeyError):
            fetcher.fetch(server.url("/s.xml"), ask=Ask(document_types=XML, sink=broken))
        assert fetcher.fetch(server.url("/s.xml")).error == ""   # nothing held: the next fetch runs


def cut_short(handler):
    """Promises 100,000 bytes, sends 50,000, hangs up."""
    handler.send_response(200)
    handler.send_header("Content-Type", "application/xml")
    handler.send_header("Content-Length", "100000")
    handler.end_headers()
    handler.wfile.write(b"z" * 50_000)
    handler.close_connection = True


def test_once_a_sink_had_a_chunk_a_failure_is_not_retried(server):
    server.routes["/cut.xml"] = cut_short
    with make_fetcher(retries=2, retry_backoff=0) as fetcher:
        poured = fetcher.fetch(server.url("/cut.xml"), ask=Ask(document_types=XML, sink=Collect()))
        assert poured.error == "connection: closed before the body was complete"
        assert server.paths() == ["/robots.txt", "/cut.xml"]
        # A body kept whole is tried again (1 + 2 retries), in the same thread
        # right after the sink's fetch.
        kept = fetcher.fetch(server.url("/cut.xml"), ask=Ask(document_types=XML))
    assert kept.error == poured.error
    assert server.paths() == ["/robots.txt"] + ["/cut.xml"] * 4


def test_a_sink_fetch_is_retried_while_no_chunk_came(server):
    answers = iter([503, 200])

    def flaky(handler):
        status = next(answers)
        send(handler, status, b"<urlset/>" if status == 200 else b"busy", {"Content-Type": "application/xml"})
    server.routes["/s.xml"] = flaky
    sink = Collect()
    with make_fetcher(retries=1, retry_backoff=0) as fetcher:
        result = fetcher.fetch(server.url("/s.xml"), ask=Ask(document_types=XML, sink=sink))
    assert (result.status, result.error, result.attempts) == (200, "", 2)
    assert b"".join(sink.chunks) == b"<urlset/>"   # the 503's body never reached the sink


# -- Ask.check_redirects ----------------------------------------------------------------

def test_a_document_that_is_no_page_follows_redirects_without_the_crawls_check(server):
    server.routes["/sitemap.xml"] = redirect(server.url("/sitemaps/main.xml"))
    server.routes["/sitemaps/main.xml"] = page(b"<urlset/>", "application/xml")
    asked = []

    def crawl_check(url):
        asked.append(url)
        return "out of scope rules"
    with make_fetcher(redirect_check=crawl_check) as fetcher:
        as_page = fetcher.fetch(server.url("/sitemap.xml"), ask=Ask(document_types=XML))
        sink = Collect()
        as_document = fetcher.fetch(server.url("/sitemap.xml"),
                                    ask=Ask(document_types=XML, sink=sink, check_redirects=False))
    assert as_page.error == f"redirect: out of scope rules {server.url('/sitemaps/main.xml')}"
    assert asked == [server.url("/sitemaps/main.xml")]
    assert (as_document.error, as_document.final_url) == ("", server.url("/sitemaps/main.xml"))
    assert b"".join(sink.chunks) == b"<urlset/>"


# -- robots.txt Sitemap: lines --------------------------------------------------------------

ROBOTS = """User-agent: *
Disallow: /private/
Sitemap: http://other.test/sitemap.xml
sitemap: /sitemap_index.xml
User-agent: otherbot
Disallow: /
Sitemap: http://other.test/sitemap.xml
SITEMAP:   /news.xml.gz   # a comment
"""


def test_robots_rules_keep_the_sitemap_lines_across_a_shared_crawl():
    rules = parse_robots(ROBOTS, "bfsbot")
    assert rules.sitemaps == ("http://other.test/sitemap.xml", "/sitemap_index.xml", "/news.xml.gz")
    again = RobotsRules.from_record(rules.record(), "bfsbot")
    assert again.sitemaps == rules.sitemaps
    assert RobotsRules.unavailable().sitemaps == ()


def test_fetcher_sitemaps_are_the_robots_lines_resolved_against_robots_txt(server):
    server.routes["/robots.txt"] = page(ROBOTS, "text/plain")
    with make_fetcher() as fetcher:
        found = fetcher.sitemaps(server.url("/some/page.html"))
        assert fetcher.sitemaps(server.url("/")) == found
        assert fetcher.fetch(server.url("/private/x")).error == "robots: disallowed by robots.txt"
    assert found == ["http://other.test/sitemap.xml", server.url("/sitemap_index.xml"),
                     server.url("/news.xml.gz")]
    assert server.paths() == ["/robots.txt"]   # loaded once, for the sitemaps and the rules alike


def test_fetcher_sitemaps_are_none_without_robots_txt(server):
    with make_fetcher() as fetcher:
        assert fetcher.sitemaps(server.url("/")) == []          # 404: everything allowed, no sitemaps
        assert fetcher.sitemaps("mailto:someone@example.org") == []
    with make_fetcher(obey_robots=False) as fetcher:
        server.routes["/robots.txt"] = page(ROBOTS, "text/plain")
        assert fetcher.sitemaps(server.url("/")) == []
    assert server.paths() == ["/robots.txt"]   # the first Fetcher's; the second asks nothing

"""Fetcher.fetch against real servers on 127.0.0.1: what comes back, and what
the server saw (which requests, which headers, how much it managed to send)."""
import gzip
import socket
import threading
import time
import tracemalloc
import zlib

import pytest
from getpage_stub import StubServer, page, redirect, send

from getpage import FetchConfig, Fetcher, FetchResult

UA = "BfsBot/0.1 (+http://example.org/bot)"
HTML = "<!DOCTYPE html><html><head><title>Tëst</title></head><body><p>北京 ✓</p></body></html>"
BIG = 64 * 1024 * 1024  # far more than any socket buffers can hold


@pytest.fixture
def server():
    stub = StubServer()
    yield stub
    stub.close()


@pytest.fixture
def fetcher():
    with Fetcher(FetchConfig(user_agent=UA, delay=0, timeout=3)) as instance:
        yield instance


def make_fetcher(**settings):
    return Fetcher(FetchConfig(user_agent=UA, **{"delay": 0, "timeout": 3, **settings}))


class Streamer:
    """Streams ``total`` bytes in 64 KiB writes and counts how many got out."""

    def __init__(self, total, headers, encoded_chunks=None):
        self.total = total
        self.headers = headers
        self.encoded_chunks = encoded_chunks
        self.written = 0
        self.finished = threading.Event()

    def __call__(self, handler):
        chunks = self.encoded_chunks or self._plain_chunks()
        handler.send_response(200)
        for name, value in self.headers.items():
            handler.send_header(name, value)
        handler.end_headers()
        try:
            for chunk in chunks:
                handler.wfile.write(chunk)
                self.written += len(chunk)
        except OSError:
            handler.close_connection = True  # the client hung up: what this test is about
        finally:
            self.finished.set()

    def _plain_chunks(self):
        block = b"<p>" + b"x" * (64 * 1024 - 3)
        for _ in range(self.total // len(block)):
            yield block


def test_html_body_is_byte_identical_and_decoded(server, fetcher):
    body = HTML.encode("utf-8")
    server.routes["/p"] = page(body, "Text/HTML; charset=UTF-8")
    result = fetcher.fetch(server.url("/p"))
    assert result.body == body
    assert (result.text, result.encoding) == (HTML, "utf-8")
    assert (result.status, result.error, result.content_type) == (200, "", "text/html")
    assert (result.url, result.final_url, result.redirects) == (server.url("/p"), server.url("/p"), ())
    assert result.ok and result.is_html
    assert result.headers["content-type"] == "Text/HTML; charset=UTF-8"
    assert result.headers["content-length"] == str(len(body))
    assert all(name == name.lower() for name in result.headers)
    assert result.elapsed_ms > 0


def test_legacy_charset_page_is_decoded_from_its_header(server, fetcher):
    text = "<html><body>中文网页，编码是GBK。</body></html>"
    server.routes["/gbk"] = page(text.encode("gbk"), "text/html; charset=gb2312")
    result = fetcher.fetch(server.url("/gbk"))
    assert result.body == text.encode("gbk")
    assert (result.text, result.encoding) == (text, "gb18030")


def test_user_agent_header_is_the_configured_one(server, fetcher):
    server.routes["/p"] = page(HTML)
    fetcher.fetch(server.url("/p"))
    assert [r.headers["user-agent"] for r in server.received] == [UA, UA]


def test_gzip_content_encoding_is_decoded(server, fetcher):
    body = (HTML * 50).encode()
    server.routes["/z"] = lambda h: send(h, 200, gzip.compress(body),
                                         {"Content-Type": "text/html", "Content-Encoding": "gzip"})
    result = fetcher.fetch(server.url("/z"))
    assert "gzip" in server.received[-1].headers["accept-encoding"]
    assert result.body == body
    assert result.text == HTML * 50


def test_chunked_transfer_encoding_is_decoded(server, fetcher):
    parts = [b"<html><body>", "中文".encode() * 1000, b"</body></html>"]

    def chunked(handler):
        handler.send_response(200)
        handler.send_header("Content-Type", "text/html; charset=utf-8")
        handler.send_header("Transfer-Encoding", "chunked")
        handler.end_headers()
        for part in parts:
            handler.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
        handler.wfile.write(b"0\r\n\r\n")

    server.routes["/c"] = chunked
    assert fetcher.fetch(server.url("/c")).body == b"".join(parts)


def test_body_over_max_bytes_is_dropped_and_reading_stops_early(server):
    streamer = Streamer(BIG, {"Content-Type": "text/html", "Content-Length": str(BIG)})
    server.routes["/huge"] = streamer
    with make_fetcher(max_bytes=1_000_000) as fetcher:
        result = fetcher.fetch(server.url("/huge"))
    assert result.error == "too-large: body over 1000000 bytes"
    assert (result.status, result.body, result.text) == (200, b"", None)
    assert streamer.finished.wait(5)
    assert streamer.written < 16 * 1024 * 1024, streamer.written


def test_max_bytes_boundary(server):
    server.routes["/exact"] = page(b"<html>" + b"x" * 994)
    server.routes["/over"] = page(b"<html>" + b"x" * 995)
    with make_fetcher(max_bytes=1000) as fetcher:
        assert len(fetcher.fetch(server.url("/exact")).body) == 1000
        assert fetcher.fetch(server.url("/over")).error == "too-large: body over 1000 bytes"


def gzip_bomb(size):
    """A gzip stream that inflates to ``size`` zero bytes, built without holding them."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = bytes(1024 * 1024)
    data = b"".join(packer.compress(block) for _ in range(size // len(block)))
    return data + packer.flush()


def test_gzip_bomb_is_cut_at_max_bytes_with_bounded_memory(server):
    bomb = gzip_bomb(BIG)
    server.routes["/bomb"] = lambda h: send(h, 200, bomb, {"Content-Type": "text/html",
                                                           "Content-Encoding": "gzip"})
    with make_fetcher(max_bytes=1_000_000) as fetcher:
        tracemalloc.start()
        try:
            result = fetcher.fetch(server.url("/bomb"))
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert result.error == "too-large: body over 1000000 bytes"
    assert peak < 8 * 1024 * 1024, peak


def test_trickling_server_times_out_at_the_deadline(server):
    stop = threading.Event()

    def trickle(handler):
        handler.send_response(200)
        handler.send_header("Content-Type", "text/html")
        handler.send_header("Content-Length", "100")
        handler.end_headers()
        try:
            for _ in range(100):
                handler.wfile.write(b"x")
                if stop.wait(0.2):  # the server under test is slow on purpose
                    break
        except OSError:
            pass
        handler.close_connection = True

    server.routes["/slow"] = trickle
    with make_fetcher(timeout=1) as fetcher:
        started = time.monotonic()
        result = fetcher.fetch(server.url("/slow"))
        took = time.monotonic() - started
    stop.set()
    assert result.error == "timeout: read 1s"
    assert (result.status, result.body) == (200, b"")
    assert 0.9 < took < 1.5, took


def test_server_silent_before_headers_times_out(server):
    release = threading.Event()

    def silent(handler):
        release.wait(5)
        send(handler, 200, b"<html>late</html>", {"Content-Type": "text/html"})

    server.routes["/silent"] = silent
    with make_fetcher(timeout=0.5, obey_robots=False) as fetcher:
        result = fetcher.fetch(server.url("/silent"))
    release.set()
    assert result.error == "timeout: read 0.5s"
    assert result.status == 0
    assert result.elapsed_ms < 1500


def test_server_closing_mid_body_is_a_connection_error(server, fetcher):
    def short(handler):
        handler.send_response(200)
        handler.send_header("Content-Type", "text/html")
        handler.send_header("Content-Length", "1000")
        handler.end_headers()
        handler.wfile.write(b"<html>" + b"x" * 94)
        handler.close_connection = True

    server.routes["/short"] = short
    result = fetcher.fetch(server.url("/short"))
    assert result.error == "connection: closed before the body was complete"
    assert (result.status, result.body) == (200, b"")


def test_connection_refused():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with make_fetcher(obey_robots=False) as fetcher:
        result = fetcher.fetch(f"http://127.0.0.1:{port}/page")
    assert result.error == "connection: refused"
    assert (result.status, result.final_url) == (0, f"http://127.0.0.1:{port}/page")


@pytest.mark.parametrize("status, error", [
    (404, "http: 404 Not Found"),
    (410, "http: 410 Gone"),
    (500, "http: 500 Internal Server Error"),
    (503, "http: 503 Service Unavailable"),
])
def test_http_error_status_is_an_error_value(server, fetcher, status, error):
    server.routes["/e"] = page("<html>error page</html>", status=status)
    result = fetcher.fetch(server.url("/e"))
    assert (result.error, result.status, result.text) == (error, status, None)
    assert result.final_url == server.url("/e")
    assert not result.ok


def test_non_html_body_is_not_downloaded(server, fetcher):
    streamer = Streamer(BIG, {"Content-Type": "image/png", "Content-Length": str(BIG)})
    server.routes["/img.png"] = streamer
    result = fetcher.fetch(server.url("/img.png"))
    assert (result.status, result.error, result.content_type) == (200, "", "image/png")
    assert (result.body, result.text, result.encoding) == (b"", None, "")
    assert result.ok and not result.is_html
    assert streamer.finished.wait(5)
    assert streamer.written < 16 * 1024 * 1024, streamer.written


def test_xhtml_counts_as_html(server, fetcher):
    server.routes["/x"] = page(HTML, "application/xhtml+xml; charset=utf-8")
    assert fetcher.fetch(server.url("/x")).text == HTML


@pytest.mark.parametrize("body, is_html", [
    (b"  <!doctype HTML><html><body>hi</body></html>", True),
    (b"\xef\xbb\xbf<html lang=en><body>hi</body></html>", True),
    (b"<!-- comment --><p>hi</p>", True),
    (b"\x89PNG\r\n\x1a\n" + bytes(2000), False),
    (b"just some text, not a page", False),
])
def test_missing_content_type_is_sniffed(server, fetcher, body, is_html):
    server.routes["/u"] = lambda h: send(h, 200, body)
    result = fetcher.fetch(server.url("/u"))
    assert result.error == ""
    assert result.is_html is is_html
    assert result.body == (body if is_html else b"")
    assert result.content_type == ("text/html" if is_html else "")


def test_connections_are_reused(server, fetcher):
    server.routes["/a"] = page(HTML)
    server.routes["/b"] = page(HTML)
    assert fetcher.fetch(server.url("/a")).ok and fetcher.fetch(server.url("/b")).ok
    assert server.paths() == ["/robots.txt", "/a", "/b"]
    assert len({request.client_port for request in server.received}) == 1


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_redirect_chain_is_followed_and_recorded(server, fetcher, status):
    server.routes["/a"] = redirect(server.url("/b"), status)
    server.routes["/b"] = redirect("dir/c#frag", status)  # relative, with a fragment
    server.routes["/dir/c"] = redirect("../d", status)
    server.routes["/d"] = page(HTML)
    result = fetcher.fetch(server.url("/a"))
    assert (result.status, result.error, result.text) == (200, "", HTML)
    assert result.url == server.url("/a")
    assert result.final_url == server.url("/d")
    assert result.redirects == (server.url("/a"), server.url("/b"), server.url("/dir/c"))
    assert server.paths() == ["/robots.txt", "/a", "/b", "/dir/c", "/d"]


def test_redirect_loop_is_detected(server, fetcher):
    server.routes["/x"] = redirect("/y")
    server.routes["/y"] = redirect("/x")
    result = fetcher.fetch(server.url("/x"))
    assert result.error == "redirect: loop"
    assert (result.status, result.final_url, result.redirects) == (302, server.url("/y"), (server.url("/x"),))
    assert server.paths() == ["/robots.txt", "/x", "/y"]


def test_redirect_to_itself_is_a_loop(server, fetcher):
    server.routes["/self"] = redirect("/self", 301)
    assert fetcher.fetch(server.url("/self")).error == "redirect: loop"
    assert server.paths().count("/self") == 1


def test_too_many_redirects(server):
    for n in range(5):
        server.routes[f"/r{n}"] = redirect(f"/r{n + 1}")
    server.routes["/r5"] = page(HTML)
    with make_fetcher(max_redirects=2) as fetcher:
        result = fetcher.fetch(server.url("/r0"))
        assert result.error == "redirect: too many redirects (>2)"
        assert result.final_url == server.url("/r2")
        assert result.redirects == (server.url("/r0"), server.url("/r1"))
        assert "/r3" not in server.paths()
    with make_fetcher(max_redirects=5) as fetcher:
        assert fetcher.fetch(server.url("/r0")).ok


def test_redirect_check_can_stop_a_hop(server):
    server.routes["/a"] = redirect("/b")
    server.routes["/b"] = redirect("/outside")
    server.routes["/outside"] = page(HTML)
    asked = []

    def check(url):
        asked.append(url)
        return "out-of-scope" if url.endswith("/outside") else None

    with Fetcher(FetchConfig(user_agent=UA, delay=0), redirect_check=check) as fetcher:
        result = fetcher.fetch(server.url("/a"))
    assert result.error == f"redirect: out-of-scope {server.url('/outside')}"
    assert (result.status, result.final_url) == (302, server.url("/b"))
    assert asked == [server.url("/b"), server.url("/outside")]
    assert "/outside" not in server.paths()


def test_redirect_into_a_disallowed_path_is_not_followed(server, fetcher):
    server.routes["/robots.txt"] = page("User-agent: *\nDisallow: /private\n", "text/plain")
    server.routes["/a"] = redirect("/private/b")
    result = fetcher.fetch(server.url("/a"))
    assert result.error == f"robots: disallowed by robots.txt {server.url('/private/b')}"
    assert result.status == 302
    assert server.paths() == ["/robots.txt", "/a"]


def test_redirect_to_another_host_checks_that_hosts_robots(server, fetcher):
    other = StubServer()
    try:
        other.routes["/robots.txt"] = page("User-agent: bfsbot\nDisallow: /\n", "text/plain")
        server.routes["/a"] = redirect(other.url("/page"))
        result = fetcher.fetch(server.url("/a"))
        assert result.error.startswith("robots: disallowed by robots.txt")
        assert other.paths() == ["/robots.txt"]
    finally:
        other.close()


def test_every_redirect_hop_waits_for_the_politeness_gate(server):
    server.routes["/a"] = redirect("/b")
    server.routes["/b"] = page(HTML)
    with make_fetcher(delay=0.15, obey_robots=False) as fetcher:
        assert fetcher.fetch(server.url("/a")).ok
    first, second = (request.at for request in server.received)
    assert second - first >= 0.15 - 0.01  # slack: send latency, not the gate


def test_redirect_to_a_non_http_location(server, fetcher):
    server.routes["/a"] = redirect("mailto:someone@example.org")
    result = fetcher.fetch(server.url("/a"))
    assert result.error == "redirect: invalid location mailto:someone@example.org"
    assert result.status == 302


@pytest.mark.parametrize("url", ["ftp://example.org/x", "not a url", "http://", "http://host:99999/",
                                 "", "mailto:a@b.c"])
def test_invalid_urls_are_error_values(url, fetcher):
    result = fetcher.fetch(url)
    assert result.error.startswith("invalid: ")
    assert (result.url, result.final_url, result.status) == (url, "", 0)


def test_fetch_result_is_a_frozen_value(server, fetcher):
    server.routes["/p"] = page(HTML)
    result = fetcher.fetch(server.url("/p"))
    assert isinstance(result, FetchResult)
    with pytest.raises(AttributeError):
        result.status = 500

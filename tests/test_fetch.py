"""Fetcher.fetch against real servers on 127.0.0.1: what comes back, and what
the server saw (which requests, which headers, how much it managed to send).

Hostile servers (retries, bombs, garbage, bodies cut off), the address
rule (made-up host names mapped by a resolver stub onto 127.0.0.1, called
"public", and 127.0.0.2, called "private") and the request on the wire
(the same bytes requests would send, by either way of sending) have their
own sections."""
import gzip
import random
import shutil
import socket
import ssl
import struct
import subprocess
import threading
import time
import tracemalloc
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from urllib.parse import urlsplit

import pytest
import requests
from faultsite import gzip_bomb
from getpage_stub import FakeTime, StubServer, local_config, page, redirect, send

from getpage import (
    ADDRESS_CATEGORIES,
    Ask,
    FetchConfig,
    Fetcher,
    FetchResult,
    address_categories,
    address_category,
)
from getpage.addresses import AddressGuard
from getpage.transport import MAX_POOL_KEYS, Transport, wire_target

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
    with Fetcher(local_config(UA, delay=0, timeout=3)) as instance:
        yield instance


def make_fetcher(**settings):
    """A Fetcher for the stub servers; clock, sleep, rng, resolve, classify
    and redirect_check go to the Fetcher, the rest to its config."""
    injected = {name: settings.pop(name) for name in ("clock", "sleep", "rng", "resolve", "classify",
                                                       "redirect_check") if name in settings}
    return Fetcher(local_config(UA, **{"delay": 0, "timeout": 3, **settings}), **injected)


class Streamer:
    """Streams ``total`` bytes in 64 KiB writes and counts how many got out."""

    def __init__(self, total, headers, encoded_chunks=None, status=200):
        self.total = total
        self.headers = headers
        self.encoded_chunks = encoded_chunks
        self.status = status
        self.written = 0
        self.finished = threading.Event()

    def __call__(self, handler):
        chunks = self.encoded_chunks or self._plain_chunks()
        handler.send_response(self.status)
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
    server.routes["/z"] = lambda h: send(h, 200, gzip.compress(body, mtime=0),
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


@pytest.fixture(scope="module")
def bomb():
    """1 GiB of zeros, gzip-compressed to about 1 MB."""
    return gzip_bomb(1024 * 1024 * 1024)


def test_gzip_bomb_builder_inflates_to_the_size_it_claims():
    assert gzip.decompress(gzip_bomb(8 * 1024 * 1024)) == bytes(8 * 1024 * 1024)


def test_gzip_bomb_is_cut_at_max_bytes_with_bounded_memory(server, bomb):
    assert len(bomb) < 2 * 1024 * 1024
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
    assert (result.status, result.body, result.text) == (200, b"", None)
    # Inflating all of it would take 1 GiB; the cap bounds what is inflated.
    assert peak < 8 * 1024 * 1024, peak


def test_gzip_bomb_inside_a_gzip_bomb_is_cut_too(server, bomb):
    twice = gzip.compress(bomb, mtime=0)
    server.routes["/bomb2"] = lambda h: send(h, 200, twice, {"Content-Type": "text/html",
                                                             "Content-Encoding": "gzip, gzip"})
    with make_fetcher(max_bytes=1_000_000) as fetcher:
        tracemalloc.start()
        try:
            result = fetcher.fetch(server.url("/bomb2"))
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert result.error == "too-large: body over 1000000 bytes"
    assert peak < 16 * 1024 * 1024, peak


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

    with Fetcher(local_config(UA, delay=0), redirect_check=check) as fetcher:
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
                                 "http://127.0.0.1:0/",
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


# -- bodies cut off -----------------------------------------------------------


def test_chunked_body_cut_off_is_a_connection_error_not_a_hang(server, fetcher):
    def cut(handler):
        handler.send_response(200)
        handler.send_header("Content-Type", "text/html")
        handler.send_header("Transfer-Encoding", "chunked")
        handler.end_headers()
        handler.wfile.write(b"400\r\n" + b"x" * 1024 + b"\r\n400\r\n" + b"y" * 100)
        handler.close_connection = True

    server.routes["/cut"] = cut
    started = time.monotonic()
    result = fetcher.fetch(server.url("/cut"))
    assert result.error == "connection: closed before the body was complete"
    assert time.monotonic() - started < 1.5  # the fetcher's timeout is 3 s


def _hang_up(handler):
    handler.close_connection = True   # nothing written: the client reads EOF, not RST


def _not_http(handler):
    handler.wfile.write(b"SSH-2.0-OpenSSH_9.2\r\n")
    handler.close_connection = True


@pytest.mark.parametrize("answer, error", [
    (_hang_up, "connection: closed without a response"),
    (_not_http, "connection: not an HTTP response (status line 'SSH-2.0-OpenSSH_9.2')"),
])
def test_a_connection_without_an_http_answer_is_named_for_what_happened(server, answer, error):
    server.routes["/x"] = answer
    with make_fetcher(retries=0) as fetcher:
        result = fetcher.fetch(server.url("/x"))
    assert result.error == error


def test_server_closing_mid_body_is_retried_and_then_recorded(server):
    def short(handler):
        handler.send_response(200)
        handler.send_header("Content-Type", "text/html")
        handler.send_header("Content-Length", "1000")
        handler.end_headers()
        handler.wfile.write(b"<html>" + b"x" * 94)
        handler.close_connection = True

    server.routes["/short"] = short
    clock = FakeTime()
    with make_fetcher(retries=2, clock=clock.clock, sleep=clock.sleep) as fetcher:
        result = fetcher.fetch(server.url("/short"))
    assert result.error == "connection: closed before the body was complete"
    assert (result.attempts, server.paths().count("/short")) == (3, 3)


# -- binary garbage served as HTML ----------------------------------------------


@pytest.mark.parametrize("name, body", [
    ("random bytes", random.Random(7).randbytes(100_000)),
    ("png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + random.Random(8).randbytes(5000)),
    ("gzip data without Content-Encoding", gzip.compress(b"<html>" + bytes(range(256)) * 400, mtime=0)),
    ("random bytes without a NUL", bytes(b for b in random.Random(9).randbytes(20_000) if b)),
])
def test_binary_garbage_labelled_html_is_not_decoded(server, fetcher, name, body):
    server.routes["/g"] = page(body, "text/html")
    result = fetcher.fetch(server.url("/g"))
    assert result.error == "garbage: binary content served as text/html"
    assert (result.status, result.content_type) == (200, "text/html")
    assert (result.text, result.body, result.encoding) == (None, b"", "")
    assert not result.is_html


def test_binary_garbage_check_leaves_real_pages_alone(server, fetcher):
    pages = {
        "/utf16": (codecs_bom_utf16("<html><body>UTF-16 页面</body></html>"), "text/html"),
        "/gbk": ("<html><body>中文网页，编码是GBK。</body></html>".encode("gbk"),
                 "text/html; charset=gbk"),
        "/big5": ("<html><body>臺灣的夜市文化非常有名。</body></html>".encode("big5"),
                  "text/html; charset=big5"),
        "/escape": (b"<html><body><pre>\x1b[31mred\x1b[0m log line</pre></body></html>", "text/html"),
    }
    for path, (body, content_type) in pages.items():
        server.routes[path] = page(body, content_type)
        result = fetcher.fetch(server.url(path))
        assert result.error == "" and result.is_html, path
        assert result.body == body


def codecs_bom_utf16(text):
    return "\ufeff".encode("utf-16-le") + text.encode("utf-16-le")


# -- retries --------------------------------------------------------------------




def failing(statuses, headers=None):
    """A route answering with ``statuses`` in turn, then a page."""
    answers = iter(statuses)

    def route(handler):
        status = next(answers, 200)
        body = HTML.encode() if status == 200 else b"<html>not now</html>"
        send(handler, status, body, {"Content-Type": "text/html", **(headers or {})})
    return route


def retrying_fetcher(clock, **settings):
    return make_fetcher(**{"retries": 2, "clock": clock.clock, "sleep": clock.sleep,
                           "rng": random.Random(1), **settings})


@pytest.mark.parametrize("status, error", [
    (500, "http: 500 Internal Server Error"),
    (502, "http: 502 Bad Gateway"),
    (503, "http: 503 Service Unavailable"),
    (429, "http: 429 Too Many Requests"),
])
def test_5xx_and_429_are_tried_three_times_with_jittered_backoff(server, status, error):
    server.routes["/e"] = failing([status] * 10)
    clock = FakeTime()
    with retrying_fetcher(clock, retry_backoff=0.5) as fetcher:
        result = fetcher.fetch(server.url("/e"))
    assert (result.error, result.status, result.attempts) == (error, status, 3)
    assert server.paths().count("/e") == 3
    expected = random.Random(1)
    assert clock.sleeps == [expected.uniform(0, 0.5), expected.uniform(0, 1.0)]


@pytest.mark.parametrize("status", [400, 403, 404, 410])
def test_other_4xx_are_never_retried(server, status):
    server.routes["/e"] = failing([status] * 10)
    clock = FakeTime()
    with retrying_fetcher(clock) as fetcher:
        result = fetcher.fetch(server.url("/e"))
    assert (result.status, result.attempts) == (status, 1)
    assert server.paths().count("/e") == 1
    assert clock.sleeps == []


def test_a_transient_failure_that_clears_gives_the_page(server):
    server.routes["/p"] = failing([503, 500])
    clock = FakeTime()
    with retrying_fetcher(clock) as fetcher:
        result = fetcher.fetch(server.url("/p"))
    assert (result.ok, result.text, result.attempts) == (True, HTML, 3)


def test_retry_after_is_honoured_host_wide_instead_of_the_backoff(server):
    server.routes["/p"] = failing([503], {"Retry-After": "7"})
    clock = FakeTime()
    with retrying_fetcher(clock) as fetcher:
        result = fetcher.fetch(server.url("/p"))
        assert clock.sleeps == [7.0]
        # The server spoke for the host: the next URL there waited too, not
        # after it (the clock has passed the hold-off by now).
        other = fetcher.fetch(server.url("/p"))
    assert (result.ok, result.attempts) == (True, 2)
    assert other.ok and clock.sleeps == [7.0]


def test_429_retry_after_as_an_http_date(server):
    when = time.time() + 5
    server.routes["/p"] = failing([429], {"Retry-After": email_date(when)})
    clock = FakeTime()
    with retrying_fetcher(clock) as fetcher:
        assert fetcher.fetch(server.url("/p")).ok
    assert len(clock.sleeps) == 1 and 3 <= clock.sleeps[0] <= 5


def email_date(timestamp):
    from email.utils import formatdate
    return formatdate(timestamp, usegmt=True)


def test_retry_after_over_the_cap_gives_up_at_once(server):
    server.routes["/p"] = failing([503] * 5, {"Retry-After": "3600"})
    clock = FakeTime()
    with retrying_fetcher(clock, max_retry_after=30) as fetcher:
        result = fetcher.fetch(server.url("/p"))
    assert result.error == "http: 503 Service Unavailable (Retry-After 3600 s over the 30 s cap)"
    assert (result.attempts, server.paths().count("/p"), clock.sleeps) == (1, 1, [])


def test_retry_after_really_waits_on_a_real_clock(server):
    server.routes["/p"] = failing([503], {"Retry-After": "1"})
    with make_fetcher(retries=1) as fetcher:
        result = fetcher.fetch(server.url("/p"))
    assert (result.ok, result.attempts) == (True, 2)
    first, second = (r.at for r in server.received if r.path == "/p")
    assert second - first >= 1.0 - 0.01


def test_every_retry_waits_for_the_politeness_gate(server):
    server.routes["/e"] = failing([500] * 5)
    with make_fetcher(retries=2, retry_backoff=0, delay=0.15, obey_robots=False) as fetcher:
        assert fetcher.fetch(server.url("/e")).attempts == 3
    times = [r.at for r in server.received]
    assert len(times) == 3
    assert all(b - a >= 0.15 - 0.01 for a, b in zip(times, times[1:]))


def test_reset_connection_is_retried(server):
    def reset_once(handler):
        if server.paths().count("/r") == 1:
            handler.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            handler.connection.close()
            handler.close_connection = True
        else:
            send(handler, 200, HTML.encode(), {"Content-Type": "text/html"})

    server.routes["/r"] = reset_once
    clock = FakeTime()
    # No robots.txt first: /r opens the connection, and a reset on a new
    # connection is for --retries (on a reused one the transport sends the
    # request again itself, tests/test_proxy_crawl.py).
    with retrying_fetcher(clock, obey_robots=False) as fetcher:
        result = fetcher.fetch(server.url("/r"))
    assert (result.ok, result.attempts) == (True, 2)


def test_read_timeout_is_retried(server):
    release = threading.Event()

    def silent(handler):
        release.wait(2)

    server.routes["/silent"] = silent
    with make_fetcher(timeout=0.3, retries=1, retry_backoff=0, obey_robots=False) as fetcher:
        result = fetcher.fetch(server.url("/silent"))
    release.set()
    assert (result.error, result.attempts) == ("timeout: read 0.3s", 2)
    assert server.paths() == ["/silent", "/silent"]


def test_unresolvable_host_is_not_retried():
    asked = []

    def resolve(host, port):
        asked.append(host)
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    clock = FakeTime()
    with retrying_fetcher(clock, resolve=resolve) as fetcher:
        result = fetcher.fetch("http://nowhere.test/page")
    assert result.error == "connection: host name not resolved"
    assert (asked, clock.sleeps) == (["nowhere.test"], [])


def test_redirect_hops_are_retried_each(server):
    server.routes["/a"] = redirect("/b")
    server.routes["/b"] = failing([502])
    clock = FakeTime()
    with retrying_fetcher(clock) as fetcher:
        result = fetcher.fetch(server.url("/a"))
    assert (result.ok, result.final_url, result.attempts) == (True, server.url("/b"), 2)


# -- addresses: never into a private network from a public seed ------------------

PUBLIC_IP, PRIVATE_IP = "127.0.0.1", "127.0.0.2"


class Names:
    """A resolver stub (site.test is the "public" 127.0.0.1, intranet.test the
    "private" 127.0.0.2) and a classifier stub; it records what was asked."""

    def __init__(self, **extra):
        self.table = {"site.test": [PUBLIC_IP], "intranet.test": [PRIVATE_IP], **extra}
        self.asked = []

    def resolve(self, host, port):
        self.asked.append(host)
        if host not in self.table:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return list(self.table[host])

    @staticmethod
    def classify(ip):
        return {PUBLIC_IP: "public", PRIVATE_IP: "private"}[ip]


@pytest.fixture
def intranet():
    stub = StubServer(host=PRIVATE_IP)
    stub.routes["/secret"] = page("<html>the router's admin page</html>")
    yield stub
    stub.close()


def public_fetcher(names, **settings):
    """A Fetcher with the crawler's default rule: public addresses only."""
    return make_fetcher(**{"allowed_addresses": frozenset({"public"}), "resolve": names.resolve,
                           "classify": names.classify, **settings})


@pytest.mark.parametrize("obey_robots", [True, False])
def test_redirect_into_a_private_address_is_blocked_and_never_sent(server, intranet, obey_robots):
    names = Names()
    target = intranet.url("/secret", host="intranet.test")
    server.routes["/go"] = redirect(target)
    with public_fetcher(names, obey_robots=obey_robots) as fetcher:
        result = fetcher.fetch(server.url("/go", host="site.test"))
    assert result.error.startswith(f"blocked: intranet.test resolves to private address {PRIVATE_IP}")
    assert result.redirects == ((server.url("/go", host="site.test"),) if not obey_robots else ())
    assert intranet.received == []
    assert "intranet.test" in names.asked
    # The public site got the request under its own name, at the checked address.
    assert server.received[-1].headers["host"] == f"site.test:{server.port}"


def test_link_to_a_private_address_is_blocked_without_a_packet(intranet):
    names = Names()
    with public_fetcher(names) as fetcher:
        result = fetcher.fetch(intranet.url("/secret", host="intranet.test"))
    assert result.error == f"blocked: intranet.test resolves to private address {PRIVATE_IP}"
    assert (result.status, result.body) == (0, b"")
    assert intranet.received == []  # not even robots.txt


def test_private_addresses_are_fetched_when_allowed(intranet):
    names = Names()
    with public_fetcher(names, allowed_addresses=frozenset({"public", "private"})) as fetcher:
        result = fetcher.fetch(intranet.url("/secret", host="intranet.test"))
    assert result.ok
    assert intranet.paths() == ["/robots.txt", "/secret"]


def test_a_host_is_blocked_if_any_of_its_addresses_is(server, intranet):
    names = Names(**{"mixed.test": [PUBLIC_IP, PRIVATE_IP]})
    server.routes["/p"] = page(HTML)
    with public_fetcher(names, obey_robots=False) as fetcher:
        result = fetcher.fetch(server.url("/p", host="mixed.test"))
    assert result.error == f"blocked: mixed.test resolves to private address {PRIVATE_IP}"
    assert server.received == [] and intranet.received == []


def test_the_connection_goes_to_the_checked_address(server):
    """site.test exists only in the stub: the fetch can work only if the
    connection uses the address the guard checked, not a second lookup."""
    names = Names()
    server.routes["/p"] = page(HTML)
    with public_fetcher(names) as fetcher:
        result = fetcher.fetch(server.url("/p", host="site.test"))
    assert result.ok and result.text == HTML
    assert names.asked == ["site.test"]  # one connection, one lookup, kept alive
    assert server.paths() == ["/robots.txt", "/p"]


def test_dns_rebinding_cannot_slip_a_private_address_past_the_check(server, intranet):
    """A name that answers public first and private later: every new
    connection is checked with the answer it then connects to."""
    answers = iter([[PUBLIC_IP], [PRIVATE_IP], [PRIVATE_IP]])
    names = Names()
    names.resolve = lambda host, port: next(answers)

    def page_then_close(handler):
        send(handler, 200, HTML.encode(), {"Content-Type": "text/html", "Connection": "close"})
        handler.close_connection = True

    server.routes["/secret"] = page_then_close  # same path on both: only the address differs
    with public_fetcher(names, obey_robots=False) as fetcher:
        first = fetcher.fetch(server.url("/secret", host="rebind.test"))
        second = fetcher.fetch(server.url("/secret", host="rebind.test"))
    assert first.ok
    assert second.error == f"blocked: rebind.test resolves to private address {PRIVATE_IP}"
    assert server.paths() == ["/secret"]
    assert intranet.received == []


def test_loopback_is_blocked_by_default(server):
    server.routes["/p"] = page(HTML)
    with Fetcher(FetchConfig(user_agent=UA, retries=0)) as fetcher:
        result = fetcher.fetch(server.url("/p"))
    assert result.error == "blocked: 127.0.0.1 resolves to loopback address 127.0.0.1"
    assert server.received == []


def test_unknown_address_category_is_a_config_error():
    with pytest.raises(ValueError, match="intranet"):
        FetchConfig(user_agent=UA, allowed_addresses=frozenset({"public", "intranet"}))
    assert FetchConfig(user_agent=UA, allowed_addresses={"public"}).allowed_addresses == {"public"}


@pytest.mark.parametrize("ip, category", [
    ("8.8.8.8", "public"), ("93.184.216.34", "public"), ("2606:4700:4700::1111", "public"),
    ("127.0.0.1", "loopback"), ("127.9.9.9", "loopback"), ("::1", "loopback"),
    ("::ffff:127.0.0.1", "loopback"),
    ("10.1.2.3", "private"), ("172.16.0.1", "private"), ("192.168.1.1", "private"),
    ("fc00::1", "private"), ("fd12:3456::1", "private"), ("::ffff:10.0.0.1", "private"),
    ("100.64.0.1", "private"), ("100.100.100.200", "private"),
    ("169.254.169.254", "link-local"), ("fe80::1", "link-local"),
    ("224.0.0.1", "multicast"), ("239.255.255.250", "multicast"), ("ff02::1", "multicast"),
    ("0.0.0.0", "reserved"), ("::", "reserved"), ("240.0.0.1", "reserved"),
    ("255.255.255.255", "reserved"),
])
def test_address_categories(ip, category):
    assert address_category(ip) == category
    assert category in ADDRESS_CATEGORIES


def test_address_categories_of_seeds():
    names = Names()
    assert address_categories(["http://127.0.0.1:8000/", "http://[::1]/x"]) == {"loopback"}
    assert address_categories(["http://site.test/", "https://intranet.test:8443/a",
                               "http://nowhere.test/", "not a url", "http://bad:port/"],
                              resolve=names.resolve, classify=names.classify) == {"public", "private"}
    assert address_categories([]) == frozenset()


# -- TLS: the checked address, but the host's name for SNI and the certificate --


@pytest.fixture(scope="module")
def certificate(tmp_path_factory):
    if shutil.which("openssl") is None:
        pytest.skip("openssl is needed to make a test certificate")
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                    "-subj", "/CN=site.test", "-addext", "subjectAltName=DNS:site.test",
                    "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True)
    return cert, key


@pytest.fixture
def tls_server(certificate):
    cert, key = certificate
    names_seen = []
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    context.sni_callback = lambda sock, name, ctx: names_seen.append(name)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive: a reused connection needs no new handshake

        def do_GET(self):
            send(self, 200, HTML.encode(), {"Content-Type": "text/html"})

        def log_message(self, *args):
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
    threading.Thread(target=httpd.serve_forever, args=(0.01,), daemon=True).start()
    yield httpd.server_address[1], names_seen, cert
    httpd.shutdown()
    httpd.server_close()


@pytest.mark.parametrize("path", ["/", "/café"])  # sent straight to the pool, and prepared by requests
@pytest.mark.parametrize("host, ok", [("site.test", True), ("wrong.test", False)])
def test_tls_checks_the_host_name_while_connecting_to_the_checked_address(tls_server, host, ok, path):
    port, names_seen, cert = tls_server
    names = Names(**{"wrong.test": [PUBLIC_IP]})
    with public_fetcher(names, obey_robots=False) as fetcher:
        fetcher._session.verify = str(cert)  # trust the test's own CA; no other way in
        result = fetcher.fetch(f"https://{host}:{port}{path}")
    assert names_seen == [host]
    if ok:
        assert result.ok and result.text == HTML
    else:
        assert result.error == ("connection: certificate verify failed: Hostname mismatch, "
                                "certificate is not valid for 'wrong.test'.")


def test_tls_connections_are_shared_by_both_ways_of_sending(tls_server):
    port, names_seen, cert = tls_server
    with public_fetcher(Names(), obey_robots=False) as fetcher:
        fetcher._session.verify = str(cert)
        results = [fetcher.fetch(f"https://site.test:{port}{path}") for path in ("/", "/café", "/")]
    assert [result.text for result in results] == [HTML] * 3
    assert names_seen == ["site.test"]  # one handshake: one kept-alive connection


# -- the request on the wire: what requests would send ----------------------------
#
# A URL already in wire form goes straight to the session's connection pool;
# any other is prepared by requests first. Either way the server must get
# the request Session.get would have sent.

WIRE_CASES = [  # (path, sent without requests' preparation)
    ("/plain/page.html", True),
    ("/q?a=1&b=two", True),
    ("/sub-delims!$&'()*+,;=:@~", True),
    ("/escaped%2Fslash%C3%A9", True),
    ("/.well-known/x", True),
    ("/empty-query?", True),
    ("/lower-case%2fescape", False),
    ("/unreserved%7Eescape%41", False),
    ("/space here", False),
    ("/café?q=北京", False),
    ("/a/./b/../c", False),
    ("/brackets[1]|pipe", False),
    ("/bad%zzescape", False),
    ("/100%", False),
]


@pytest.mark.parametrize("path, direct", WIRE_CASES)
def test_the_server_receives_exactly_what_requests_would_send(server, path, direct):
    url = f"http://Site.TEST:{server.port}{path}"
    assert (wire_target(url) is not None) is direct
    with public_fetcher(Names(), obey_robots=False) as fetcher:
        fetcher.fetch(url)
        fetcher._session.get(url, allow_redirects=False).close()
    ours, theirs = server.received
    assert ours.path == theirs.path
    assert list(ours.headers.items()) == list(theirs.headers.items())


def test_credentials_in_a_url_are_sent_as_requests_sends_them(server):
    url = f"http://user:p%40ss@site.test:{server.port}/private"
    assert wire_target(url) is None
    with public_fetcher(Names(), obey_robots=False) as fetcher:
        fetcher.fetch(url)
        fetcher._session.get(url, allow_redirects=False).close()
    ours, theirs = server.received
    assert ours.headers == theirs.headers
    assert ours.headers["authorization"] == "Basic dXNlcjpwQHNz"  # user:p@ss


def test_a_url_in_wire_form_is_one_requests_would_not_change():
    """Property over random URLs: whenever ``wire_target`` sends a URL as it
    is, requests' own preparation gives the same target, host and port, and
    adds no credentials."""
    rng = random.Random(5)
    pieces = [*"aZ09-._~!$&'()*+,;=:@/?%", "%41", "%2f", "%2F", "%7E", "%C3%A9", "%zz", " ", "é",
              "/./", "/../", "/.", "[", "]", "|", "\\", '"', "{", "^"]
    hosts = ["example.org", "EXAMPLE.org", "ex_am-ple.org", "127.0.0.1", "[::1]", "xn--caf-dma.fr",
             "café.fr", "u:p@example.org", ".example.org", "example.org:8080", "example.org:80"]
    direct = 0
    for _ in range(5000):
        path = "/" + "".join(rng.choice(pieces) for _ in range(rng.randint(0, 10)))
        url = f"http://{rng.choice(hosts)}{path}"
        parts = urlsplit(url)
        target = wire_target(url)
        if target is None:
            continue
        direct += 1
        prepared = requests.Request("GET", url).prepare()
        sent = urlsplit(prepared.url)
        assert (prepared.path_url, sent.hostname, sent.port) == (target, parts.hostname, parts.port), url
        assert "Authorization" not in prepared.headers, url
    assert direct > 500  # the property held for many URLs, not for a handful


def test_both_ways_of_sending_share_one_kept_alive_connection(server, fetcher):
    for path in ("/a", "/caf%C3%A9", "/b"):
        server.routes[path] = page(HTML)
    for path in ("/a", "/café", "/b"):
        assert fetcher.fetch(server.url(path)).ok
    assert server.paths() == ["/robots.txt", "/a", "/caf%C3%A9", "/b"]
    assert len({request.client_port for request in server.received}) == 1


def test_remembered_connection_pool_keys_stay_bounded():
    with Transport(UA, 1, AddressGuard(frozenset({"public"})), 3) as transport:
        for n in range(MAX_POOL_KEYS + 100):
            transport._pool(f"http://host{n}.test/")  # a pool is made, nothing is sent
        assert 0 < len(transport._pool_keys) <= MAX_POOL_KEYS


@pytest.mark.parametrize("path, received", [("/a", "/a"), ("/à", "/%C3%A0")])
def test_a_large_redirect_body_is_not_read(server, fetcher, path, received):
    streamer = Streamer(BIG, {"Location": "/d", "Content-Type": "text/html",
                              "Content-Length": str(BIG)}, status=302)
    server.routes[received] = streamer
    server.routes["/d"] = page(HTML)
    result = fetcher.fetch(server.url(path))
    assert (result.ok, result.final_url, result.text) == (True, server.url("/d"), HTML)
    assert streamer.finished.wait(5)
    assert streamer.written < 16 * 1024 * 1024, streamer.written


@pytest.fixture
def full_backlog():
    """A port on 127.0.0.1 whose listen queue is full: Linux drops further
    connection attempts, so connecting to it times out."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    port = listener.getsockname()[1]
    queued = []
    for _ in range(3):
        client = socket.socket()
        client.setblocking(False)
        client.connect_ex(("127.0.0.1", port))
        queued.append(client)
    with socket.socket() as probe:
        probe.settimeout(0.3)
        try:
            probe.connect(("127.0.0.1", port))
        except TimeoutError:
            pass
        else:
            pytest.skip("this kernel accepts connections past a full listen queue")
    yield port
    for sock in [*queued, listener]:
        sock.close()


@pytest.mark.parametrize("path", ["/page", "/pàge"])
def test_connect_timeout_is_an_error_value(full_backlog, path):
    with make_fetcher(timeout=0.5, obey_robots=False) as fetcher:
        started = time.monotonic()
        result = fetcher.fetch(f"http://127.0.0.1:{full_backlog}{path}")
        took = time.monotonic() - started
    assert (result.error, result.status) == ("timeout: connect 0.5s", 0)
    assert took < 1.5, took


# -- what a fetch asks for beyond a page (getpage.Ask) --------------------------

def test_a_conditional_get_sends_the_validators_and_a_304_comes_back_plain(server):
    def not_modified(handler):
        handler.send_response(304)
        handler.send_header("ETag", '"v1"')
        handler.end_headers()
    server.routes["/a"] = not_modified
    url = server.url("/a")
    with make_fetcher() as fetcher:
        result = fetcher.fetch(url, ask=Ask(url=url, etag='"v1"',
                                            last_modified="Tue, 01 Dec 2026 10:00:00 GMT"))
    sent = server.received[-1].headers
    assert sent["if-none-match"] == '"v1"'
    assert sent["if-modified-since"] == "Tue, 01 Dec 2026 10:00:00 GMT"
    assert (result.status, result.error, result.body, result.is_html) == (304, "", b"", False)
    assert result.headers["etag"] == '"v1"'


def test_validators_go_only_to_the_url_they_belong_to(server):
    server.routes["/old"] = redirect(server.url("/new"))
    server.routes["/new"] = page(HTML.encode())
    with make_fetcher() as fetcher:
        result = fetcher.fetch(server.url("/old"), ask=Ask(url=server.url("/new"), etag='"x"'))
    first, second = [r for r in server.received if r.path in ("/old", "/new")]
    assert "if-none-match" not in first.headers and second.headers["if-none-match"] == '"x"'
    assert result.is_html
    with make_fetcher() as fetcher:   # and no ask, no conditional header
        fetcher.fetch(server.url("/new"))
    assert "if-none-match" not in server.received[-1].headers


def test_a_document_type_is_kept_as_bytes_within_its_own_cap(server):
    xml = b"<?xml version='1.0'?><urlset><url><loc>http://x/</loc></url></urlset>"
    server.routes["/s.xml"] = page(xml, "application/xml")
    server.routes["/big.xml"] = page(b"x" * 5000, "application/xml")
    types = frozenset({"application/xml"})
    with make_fetcher(max_bytes=100) as fetcher:
        plain = fetcher.fetch(server.url("/s.xml"))
        asked = fetcher.fetch(server.url("/s.xml"), ask=Ask(document_types=types, max_bytes=1000))
        big = fetcher.fetch(server.url("/big.xml"), ask=Ask(document_types=types, max_bytes=1000))
    assert plain.body == b"" and asked.body == xml and asked.text is None and asked.ok
    assert big.error == "too-large: body over 1000 bytes" and big.body == b""

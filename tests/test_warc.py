"""WARC output, end to end over real sockets: GetPage records each HTTP
exchange as it was on the wire (record_exchanges), controller.warc writes
them as WARC records (controller.readers.cdx indexes them), and warcio's
own reader (and its command line, as an independent reader) reads them
back with every digest checked.

What is checked against what: the request record against the headers the
server received, the raw response payload against the bytes the server
sent (gzip stays gzip), the decoded payload against FetchResult.body.
"""
import gzip
import subprocess
import sys
import zlib
from pathlib import Path

import pytest
from faultsite import gzip_bomb
from getpage_stub import FakeTime, StubServer, local_config, page, redirect, send
from warcio.archiveiterator import ArchiveIterator

from controller.readers.cdx import CDX_HEADER, WarcError, cdx_lines
from controller.warc import (
    PAGE_ID,
    REVISIT_PROFILE,
    RevisitTarget,
    WarcArchive,
    payload_digest,
    trim,
)
from getpage import Fetcher

UA = "WarcBot/0.1 (+http://example.org/bot)"
HTML = "<!DOCTYPE html><html><head><title>Tëst</title></head><body><p>北京 ✓</p></body></html>".encode()
OTHER = b"<html><body><p>" + b"another page " * 500 + b"</p></body></html>"
GZIPPED = gzip.compress(OTHER, mtime=0)
PIECES = [b"<html><body>", b"<p>first piece</p>", b"<p>second piece</p>", b"</body></html>"]
WARCIO = Path(sys.executable).with_name("warcio")


def gzip_page(handler):
    send(handler, 200, GZIPPED, {"Content-Type": "text/html", "Content-Encoding": "gzip"})


def chunked_page(handler):
    handler.send_response(200)
    handler.send_header("Content-Type", "text/html")
    handler.send_header("Transfer-Encoding", "chunked")
    handler.end_headers()
    for piece in PIECES:
        handler.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
    handler.wfile.write(b"0\r\n\r\n")


def repeated_headers(handler):
    handler.send_response(200)
    handler.send_header("Set-Cookie", "a=1")
    handler.send_header("X-Between", "yes")
    handler.send_header("set-cookie", "b=2")
    handler.send_header("Content-Type", "text/html")
    handler.send_header("Content-Length", str(len(HTML)))
    handler.end_headers()
    handler.wfile.write(HTML)


@pytest.fixture
def server():
    stub = StubServer()
    stub.routes.update({
        "/robots.txt": page("User-agent: *\nAllow: /\n", "text/plain"),
        "/plain.html": page(HTML),
        "/copy.html": page(HTML),
        "/gzip.html": gzip_page,
        "/chunked.html": chunked_page,
        "/moved": redirect("/plain.html", 301),
        "/headers.html": repeated_headers,
        "/image.png": page(b"\x89PNG\r\n\x1a\n" + bytes(5000), "image/png"),
    })
    yield stub
    stub.close()


def recording_fetcher(**settings):
    injected = {name: settings.pop(name) for name in ("clock", "sleep") if name in settings}
    config = local_config(UA, **{"delay": 0, "timeout": 3, "record_exchanges": True, **settings})
    return Fetcher(config, **injected)


@pytest.fixture
def fetcher():
    with recording_fetcher() as instance:
        yield instance


def received(server, path):
    return [request for request in server.received if request.path == path]


# -- GetPage: capture ----------------------------------------------------------

def test_nothing_is_recorded_unless_asked(server):
    with Fetcher(local_config(UA, delay=0, timeout=3)) as plain:
        result = plain.fetch(server.url("/gzip.html"))
    assert result.ok and result.body == OTHER
    assert result.exchanges == ()


def test_exchange_holds_the_request_the_server_received(server, fetcher):
    result = fetcher.fetch(server.url("/plain.html"))
    (exchange,) = result.exchanges
    sent = exchange.request
    assert (sent.method, sent.target, sent.version) == ("GET", "/plain.html", "HTTP/1.1")
    (got,) = received(server, "/plain.html")
    assert {name.lower(): value for name, value in sent.headers} == got.headers
    assert sent.headers[0] == ("Host", f"127.0.0.1:{server.port}")
    assert dict(sent.headers)["User-Agent"] == UA
    assert sent.ip_address == "127.0.0.1"
    assert sent.sent_at.endswith("Z") and len(sent.sent_at) == len("2024-05-01T12:00:00.000000Z")
    assert exchange.url == server.url("/plain.html")
    assert (exchange.version, exchange.status, exchange.reason) == ("HTTP/1.1", 200, "OK")


def test_url_prepared_by_requests_is_recorded_as_sent(server, fetcher):
    server.routes["/%C3%A4.html"] = page(HTML)
    result = fetcher.fetch(server.url("/ä.html"))
    assert result.ok and received(server, "/%C3%A4.html")
    assert result.exchanges[0].request.target == "/%C3%A4.html"
    assert result.exchanges[0].payload is result.body


def test_plain_body_is_the_payload_itself(server, fetcher):
    result = fetcher.fetch(server.url("/plain.html"))
    assert result.body == HTML
    assert result.exchanges[0].payload is result.body
    assert result.exchanges[0].truncated == ""


def test_gzip_payload_stays_compressed_and_body_is_decoded(server, fetcher):
    result = fetcher.fetch(server.url("/gzip.html"))
    assert result.body == OTHER
    assert result.exchanges[0].payload == GZIPPED
    assert ("Content-Encoding", "gzip") in result.exchanges[0].headers


def test_chunked_payload_is_dechunked(server, fetcher):
    result = fetcher.fetch(server.url("/chunked.html"))
    assert result.body == b"".join(PIECES)
    assert result.exchanges[0].payload == b"".join(PIECES)
    assert ("Transfer-Encoding", "chunked") in result.exchanges[0].headers


def test_redirect_hops_are_exchanges_in_order(server, fetcher):
    result = fetcher.fetch(server.url("/moved"))
    assert result.final_url == server.url("/plain.html")
    first, last = result.exchanges
    assert (first.url, first.status, first.payload) == (server.url("/moved"), 301, b"moved")
    assert dict(first.headers)["Location"] == "/plain.html"
    assert (last.url, last.payload) == (server.url("/plain.html"), HTML)


def test_response_headers_keep_names_order_and_repeats(server, fetcher):
    result = fetcher.fetch(server.url("/headers.html"))
    names = [name for name, _ in result.exchanges[0].headers]
    cookies = [value for name, value in result.exchanges[0].headers if name.lower() == "set-cookie"]
    assert names.index("Set-Cookie") < names.index("X-Between") < names.index("set-cookie")
    assert cookies == ["a=1", "b=2"]


def test_only_the_answering_attempt_is_recorded(server):
    answers = iter([503, 200])
    server.routes["/flaky.html"] = lambda handler: send(handler, next(answers), HTML,
                                                        {"Content-Type": "text/html"})
    clock = FakeTime()
    with recording_fetcher(retries=1, clock=clock.clock, sleep=clock.sleep) as fetcher:
        result = fetcher.fetch(server.url("/flaky.html"))
    assert len(received(server, "/flaky.html")) == 2
    assert [exchange.status for exchange in result.exchanges] == [200]


def test_body_over_max_bytes_is_recorded_truncated(server):
    big = b"<html><body>" + b"x" * 300_000 + b"</body></html>"
    server.routes["/big.html"] = page(big)
    with recording_fetcher(max_bytes=100_000) as fetcher:
        result = fetcher.fetch(server.url("/big.html"))
    assert result.error.startswith("too-large") and result.body == b""
    (exchange,) = result.exchanges
    assert exchange.truncated == "length"
    assert 100_000 < len(exchange.payload) < len(big) and big.startswith(exchange.payload)


def test_gzip_bomb_is_stopped_on_the_decoded_size(server):
    bomb = gzip_bomb(64 * 1024 * 1024)
    server.routes["/bomb.html"] = lambda handler: send(
        handler, 200, bomb, {"Content-Type": "text/html", "Content-Encoding": "gzip"})
    with recording_fetcher(max_bytes=1_000_000) as fetcher:
        result = fetcher.fetch(server.url("/bomb.html"))
    assert result.error.startswith("too-large")
    (exchange,) = result.exchanges
    assert exchange.truncated == "length"
    assert 0 < len(exchange.payload) < 200_000 and bomb.startswith(exchange.payload)


@pytest.mark.parametrize("coding, encoded", [
    ("deflate", zlib.compress(OTHER)),
    ("deflate", zlib.compress(OTHER)[2:-4]),  # raw deflate, as some servers send it
    ("gzip", gzip.compress(OTHER[:4000], mtime=0) + gzip.compress(OTHER[4000:], mtime=0)),  # two members
    ("gzip", GZIPPED[:40] + b"broken" + GZIPPED[46:]),
])
def test_recording_decodes_as_urllib3_does(server, coding, encoded):
    server.routes["/coded.html"] = lambda handler: send(
        handler, 200, encoded, {"Content-Type": "text/html", "Content-Encoding": coding})
    with Fetcher(local_config(UA, delay=0, timeout=3)) as plain, recording_fetcher() as recording:
        expected, result = plain.fetch(server.url("/coded.html")), recording.fetch(server.url("/coded.html"))
    assert (result.status, result.body, result.error) == (expected.status, expected.body, expected.error)
    assert result.exchanges[0].payload.startswith(encoded[:40])
    if expected.error:
        assert expected.error == "connection: bad content encoding"
        assert result.exchanges[0].truncated == "unspecified"
    else:
        assert result.body == OTHER and result.exchanges[0].payload == encoded


def test_a_content_encoding_urllib3_refuses_is_an_error_value_when_recording(server):
    """Six codings in a chain: urllib3 refuses to build the decoder. Recording
    must fail the way a plain fetch does, not raise out of the crawl."""
    body = HTML
    for _ in range(6):
        body = gzip.compress(body, mtime=0)
    server.routes["/six.html"] = lambda handler: send(
        handler, 200, body, {"Content-Type": "text/html", "Content-Encoding": ", ".join(["gzip"] * 6)})
    with Fetcher(local_config(UA, delay=0, timeout=3)) as plain, recording_fetcher() as recording:
        expected, result = plain.fetch(server.url("/six.html")), recording.fetch(server.url("/six.html"))
    assert expected.error and (result.status, result.body, result.error) == \
        (expected.status, expected.body, expected.error)
    (exchange,) = result.exchanges
    assert exchange.status == 200 and exchange.truncated == "unspecified"


def test_unwanted_body_is_not_read(server, fetcher):
    result = fetcher.fetch(server.url("/image.png"))
    (exchange,) = result.exchanges
    assert (exchange.status, exchange.payload, exchange.truncated) == (200, b"", "unspecified")


def test_robots_fetch_is_not_an_exchange(server, fetcher):
    result = fetcher.fetch(server.url("/plain.html"))
    assert received(server, "/robots.txt")
    assert [exchange.url for exchange in result.exchanges] == [server.url("/plain.html")]


# -- the archive -------------------------------------------------------------

def fetch_all(server, fetcher, paths):
    return {path: fetcher.fetch(server.url(path)) for path in paths}


def records(path):
    """Every record of the WARC at ``path``: (type, WARC headers, http headers,
    raw payload, decoded payload, digest check), with digests checked."""
    out = []
    with open(path, "rb") as f:
        for record in ArchiveIterator(f, check_digests=True):
            if record.rec_type == "response":
                raw = record.raw_stream.read()
                decoded = record.content_stream().read()  # after raw: nothing left to decode
            else:
                raw, decoded = record.raw_stream.read(), None
            out.append((record.rec_type, record.rec_headers, record.http_headers, raw, decoded,
                        record.digest_checker.passed, record.digest_checker.problems))
    return out


def decoded_payloads(path):
    with open(path, "rb") as f:
        return [record.content_stream().read() for record in ArchiveIterator(f)
                if record.rec_type == "response"]


def write(path, results, *, info=None):
    with WarcArchive(path, append=False, info=info or {"seeds": ["x"], "max_depth": 0}) as archive:
        for page_id, result in enumerate(results, 1):
            archive.write_page(result.exchanges, page_id=page_id)
        return archive


def test_round_trip_every_record_valid(server, fetcher, tmp_path):
    paths = ["/plain.html", "/gzip.html", "/chunked.html", "/moved", "/headers.html"]
    results = fetch_all(server, fetcher, paths)
    warc = tmp_path / "crawl.warc.gz"
    write(warc, results.values(), info={"seeds": ["a", "b"], "obey_robots": False, "out": "o"})

    got = records(warc)
    assert [kind for kind, *_ in got] == ["warcinfo"] + ["request", "response"] * 6
    for kind, _, _, _, _, passed, problems in got:
        assert passed is not False, (kind, problems)
    assert all(passed is True for kind, _, _, _, _, passed, _ in got if kind == "response")

    exchanges = [exchange for result in results.values() for exchange in result.exchanges]
    responses = [entry for entry in got if entry[0] == "response"]
    for exchange, (_, fields, http, raw, _, _, _) in zip(exchanges, responses):
        assert fields.get_header("WARC-Target-URI") == exchange.url
        assert fields.get_header("WARC-Date") == exchange.request.sent_at
        assert fields.get_header("WARC-IP-Address") == "127.0.0.1"
        assert fields.get_header("WARC-Payload-Digest") == payload_digest(exchange.payload)
        assert http.get_statuscode() == str(exchange.status)
        assert raw == exchange.payload
    # Decoded by warcio: a page's body as the Controller saves it; a
    # redirect's body as it was sent (it had no content coding).
    expected = []
    for result in results.values():
        expected += [exchange.payload for exchange in result.exchanges[:-1]] + [result.body]
    assert decoded_payloads(warc) == expected


def test_gzip_response_record_holds_the_bytes_sent(server, fetcher, tmp_path):
    result = fetcher.fetch(server.url("/gzip.html"))
    warc = tmp_path / "crawl.warc.gz"
    write(warc, [result])
    (response,) = [entry for entry in records(warc) if entry[0] == "response"]
    _, _, http, raw, _, _, _ = response
    assert raw == GZIPPED
    assert http.get_header("Content-Encoding") == "gzip"
    assert decoded_payloads(warc) == [OTHER] == [result.body]


def test_chunked_response_record_drops_transfer_encoding(server, fetcher, tmp_path):
    result = fetcher.fetch(server.url("/chunked.html"))
    warc = tmp_path / "crawl.warc.gz"
    write(warc, [result])
    (response,) = [entry for entry in records(warc) if entry[0] == "response"]
    assert response[2].get_header("Transfer-Encoding") is None
    assert response[3] == result.body


def test_request_record_is_the_request_sent(server, fetcher, tmp_path):
    result = fetcher.fetch(server.url("/plain.html"))
    warc = tmp_path / "crawl.warc.gz"
    write(warc, [result])
    got = records(warc)
    (_, request_fields, request_http, *_), (_, response_fields, *_) = got[1], got[2]
    assert request_http.protocol == "GET" and request_http.statusline == "/plain.html HTTP/1.1"
    assert request_http.get_header("User-Agent") == UA
    assert request_http.get_header("Host") == f"127.0.0.1:{server.port}"
    assert request_fields.get_header("WARC-Concurrent-To") == \
        response_fields.get_header("WARC-Record-ID")
    assert request_fields.get_header(PAGE_ID) == response_fields.get_header(PAGE_ID) == "1"


def test_warcinfo_names_software_and_settings(server, tmp_path):
    warc = tmp_path / "crawl.warc.gz"
    write(warc, [], info={"seeds": ["http://a/"], "obey_robots": False, "max_depth": 0})
    ((kind, fields, _, raw, *_),) = records(warc)
    assert kind == "warcinfo" and fields.get_header("WARC-Filename") == "crawl.warc.gz"
    text = raw.decode()
    assert "software: bfs-crawler/" in text
    assert 'seeds: ["http://a/"]' in text and "obey_robots: false" in text and "max_depth: 0" in text


def test_truncated_body_is_marked(server, tmp_path):
    server.routes["/big.html"] = page(b"<html>" + b"y" * 200_000)
    with recording_fetcher(max_bytes=50_000) as fetcher:
        result = fetcher.fetch(server.url("/big.html"))
    warc = tmp_path / "crawl.warc.gz"
    write(warc, [result])
    (response,) = [entry for entry in records(warc) if entry[0] == "response"]
    assert response[1].get_header("WARC-Truncated") == "length"
    assert response[3] == result.exchanges[0].payload and response[5] is True


def test_exact_duplicate_is_a_revisit(server, fetcher, tmp_path):
    original, copy = fetcher.fetch(server.url("/plain.html")), fetcher.fetch(server.url("/copy.html"))
    warc = tmp_path / "crawl.warc.gz"
    with WarcArchive(warc, append=False, info={}) as archive:
        archive.write_page(original.exchanges, page_id=1)
        target = archive.response_of(1)
        archive.write_page(copy.exchanges, page_id=2, revisit_of=target)
        assert archive.response_of(2) is None  # a revisit is no original
    got = records(warc)
    assert [kind for kind, *_ in got] == ["warcinfo", "request", "response", "request", "revisit"]
    _, response_fields, *_ = got[2]
    _, fields, http, raw, _, passed, _ = got[4]
    assert target == RevisitTarget(server.url("/plain.html"), response_fields.get_header("WARC-Date"),
                                   response_fields.get_header("WARC-Record-ID"),
                                   payload_digest(HTML))
    assert fields.get_header("WARC-Profile") == REVISIT_PROFILE
    assert fields.get_header("WARC-Refers-To-Target-URI") == server.url("/plain.html")
    assert fields.get_header("WARC-Refers-To-Date") == target.date
    assert fields.get_header("WARC-Refers-To") == target.record_id
    assert fields.get_header("WARC-Payload-Digest") == target.payload_digest
    assert fields.get_header("WARC-Target-URI") == server.url("/copy.html")
    assert http.get_statuscode() == "200" and raw == b"" and passed is not False


def test_revisit_needs_the_same_payload_digest(server, fetcher, tmp_path):
    plain, gzipped = fetcher.fetch(server.url("/plain.html")), fetcher.fetch(server.url("/gzip.html"))
    warc = tmp_path / "crawl.warc.gz"
    with WarcArchive(warc, append=False, info={}) as archive:
        archive.write_page(plain.exchanges, page_id=1)
        archive.write_page(gzipped.exchanges, page_id=2, revisit_of=archive.response_of(1))
    assert [kind for kind, *_ in records(warc)] == ["warcinfo", "request", "response",
                                                    "request", "response"]


def test_only_complete_2xx_responses_are_remembered(server, fetcher, tmp_path):
    moved, missing = fetcher.fetch(server.url("/moved")), fetcher.fetch(server.url("/nowhere"))
    with WarcArchive(tmp_path / "w.warc.gz", append=False, info={}) as archive:
        archive.write_page(moved.exchanges, page_id=1)
        archive.write_page(missing.exchanges, page_id=2)
        assert archive.response_of(1).uri == server.url("/plain.html")
        assert archive.response_of(2) is None and archive.response_of(3) is None


# -- resume: trim --------------------------------------------------------------

def test_trim_drops_uncommitted_pages_and_a_torn_member(server, fetcher, tmp_path):
    results = fetch_all(server, fetcher, ["/plain.html", "/gzip.html", "/chunked.html"]).values()
    warc = tmp_path / "crawl.warc.gz"
    write(warc, results)
    whole = warc.read_bytes()
    with open(warc, "ab") as f:
        f.write(gzip.compress(b"WARC/1.1\r\nWARC-Type: request\r\n" + bytes(5000), mtime=0)[:-30])

    assert trim(warc, {1, 2}) == 1 + 2 + 2
    assert [fields.get_header(PAGE_ID) for _, fields, *_ in records(warc)] == [None, "1", "1", "2", "2"]
    assert whole.startswith(warc.read_bytes())

    with WarcArchive(warc, append=True, info={"resumed": True}) as archive:
        archive.write_page(list(results)[2].exchanges, page_id=3)
    got = records(warc)
    assert [kind for kind, *_ in got] == ["warcinfo"] + ["request", "response"] * 2 + \
        ["warcinfo", "request", "response"]
    assert all(passed is not False for *_, passed, _ in got)


def test_trim_keeps_everything_committed_and_cuts_garbage(server, fetcher, tmp_path):
    warc = tmp_path / "crawl.warc.gz"
    write(warc, [fetcher.fetch(server.url("/plain.html"))])
    size = warc.stat().st_size
    with open(warc, "ab") as f:
        f.write(b"not gzip at all")
    assert trim(warc, {1}) == 3
    assert warc.stat().st_size == size


def test_trim_of_a_file_torn_inside_warcinfo_leaves_it_empty(tmp_path):
    warc = tmp_path / "crawl.warc.gz"
    write(warc, [])
    warc.write_bytes(warc.read_bytes()[:40])
    assert trim(warc, set()) == 0
    assert warc.read_bytes() == b""


# -- index ----------------------------------------------------------------

def test_cdx_lines_point_at_their_records(server, fetcher, tmp_path):
    results = list(fetch_all(server, fetcher, ["/plain.html", "/gzip.html", "/moved"]).values())
    warc = tmp_path / "crawl.warc.gz"
    with WarcArchive(warc, append=False, info={}) as archive:
        for page_id, result in enumerate(results, 1):
            archive.write_page(result.exchanges, page_id=page_id)
        archive.write_page(fetcher.fetch(server.url("/copy.html")).exchanges, page_id=4,
                           revisit_of=archive.response_of(1))

    header, *lines = list(cdx_lines(warc))
    assert header == CDX_HEADER
    rows = [line.split(" ") for line in lines]
    assert all(len(row) == 11 for row in rows)
    host = f"1,0,0,127:{server.port})"   # the SURT key of the loopback host, as pywb has it
    assert [(row[0], row[2], row[3], row[4]) for row in rows] == [
        (f"{host}/plain.html", server.url("/plain.html"), "text/html", "200"),
        (f"{host}/gzip.html", server.url("/gzip.html"), "text/html", "200"),
        (f"{host}/moved", server.url("/moved"), "text/plain", "301"),
        (f"{host}/plain.html", server.url("/plain.html"), "text/html", "200"),
        (f"{host}/copy.html", server.url("/copy.html"), "warc/revisit", "-"),
    ]
    assert rows[0][5] == rows[-1][5] == payload_digest(HTML).removeprefix("sha1:")
    data = warc.read_bytes()
    for row in rows:
        assert len(row[1]) == 14 and row[1].isdigit()
        assert row[6:8] == ["-", "-"] and row[10] == "crawl.warc.gz"
        length, offset = int(row[8]), int(row[9])
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        record = inflater.decompress(data[offset:offset + length])
        assert inflater.eof and not inflater.unused_data  # exactly one whole member
        assert record.startswith(b"WARC/1.1\r\n")
        assert f"WARC-Target-URI: {row[2]}\r\n".encode() in record


def test_cdx_lines_of_a_file_that_is_not_warc(tmp_path):
    bad = tmp_path / "bad.warc.gz"
    bad.write_bytes(gzip.compress(b"hello, not a warc\r\n\r\n", mtime=0))
    with pytest.raises(WarcError):
        list(cdx_lines(bad))


# -- independent reader: warcio's command line --------------------------------

@pytest.mark.skipif(not WARCIO.exists(), reason="warcio command not installed")
def test_warcio_command_checks_and_indexes_the_archive(server, fetcher, tmp_path):
    results = fetch_all(server, fetcher, ["/plain.html", "/gzip.html", "/chunked.html", "/moved"])
    warc = tmp_path / "crawl.warc.gz"
    write(warc, results.values())
    check = subprocess.run([str(WARCIO), "check", "-v", str(warc)], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    assert check.stdout.count("digest pass") == 11  # warcinfo, 5 requests, 5 responses
    index = subprocess.run([str(WARCIO), "index", "-f", "warc-type,warc-target-uri,length,offset",
                            str(warc)], capture_output=True, text=True, check=True)
    lines = index.stdout.splitlines()
    assert len(lines) == 11
    assert sum('"warc-type": "response"' in line for line in lines) == 5

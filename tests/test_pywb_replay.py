"""pywb replays the crawler's archive through the crawler's own CDX index.

The demo crawl runs with --warc, ``crawler warc-index`` writes its index,
and a pywb collection is made of that WARC and that index (copied into the
collection's indexes/ folder; pywb's own indexer plays no part in it).
pywb's ``wayback`` server, on 127.0.0.1, then replays every response and
revisit record of the archive in raw mode (``/<coll>/<timestamp>id_/<url>``),
checked for status, capture time and body, byte for byte (the body of a
record marked WARC-Truncated, a non-HTML body the crawler did not read, is
not there to compare: its capture is found, and pywb then announces the
original Content-Length and sends what was kept). The same archive
indexed under the keys the crawler wrote before (IP hosts not reversed)
replays nothing: the keys are what makes an index work.

pywb runs from an environment of its own (tests/pywb_env.py); the first
run makes it.
"""
from __future__ import annotations

import csv
import http.client
import shutil
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from email.utils import format_datetime
from pathlib import Path

import pytest
from pywb_env import command
from warcio.archiveiterator import ArchiveIterator

COLLECTION = "crawl"
UNREVERSED = "unreversed"   # the same archive under the old keys
_START_SECONDS = 60


@dataclass(frozen=True)
class Capture:
    """One response or revisit record, as a replay of it must look."""

    url: str
    timestamp: str   # 14 digits, as in the CDX line and the replay URL
    status: int
    body: bytes      # the payload, content coding removed (a revisit: its original's)
    truncated: bool  # WARC-Truncated: the body is not all the server sent


@pytest.fixture(scope="module")
def crawl(tmp_path_factory) -> Path:
    """A demo crawl with --warc, and its index as ``crawler warc-index`` prints it."""
    out = tmp_path_factory.mktemp("replay") / "demo"
    subprocess.run([sys.executable, "-m", "controller", "demo", "--out", str(out), "--warc",
                    "--quiet"], check=True, capture_output=True)
    index = subprocess.run([sys.executable, "-m", "controller", "warc-index", str(out)],
                           check=True, capture_output=True, text=True).stdout
    (out.parent / "index.cdx").write_text(index)
    return out


@pytest.fixture(scope="module")
def captures(crawl) -> list[Capture]:
    found, bodies = [], {}
    with open(crawl / "crawl.warc.gz", "rb") as f:
        for record in ArchiveIterator(f):
            if record.rec_type not in ("response", "revisit"):
                continue
            fields = record.rec_headers
            body = record.content_stream().read()
            if record.rec_type == "response":
                bodies[fields.get_header("WARC-Record-ID")] = body
            else:
                body = bodies[fields.get_header("WARC-Refers-To")]
            found.append(Capture(fields.get_header("WARC-Target-URI"),
                                 _timestamp(fields.get_header("WARC-Date")),
                                 int(record.http_headers.get_statuscode()), body,
                                 bool(fields.get_header("WARC-Truncated"))))
    assert len(found) > 480 and len({c.url for c in found}) == len(found)
    return found


@pytest.fixture(scope="module")
def wayback(crawl, tmp_path_factory):
    """The port of a running ``wayback`` with the two collections."""
    root = tmp_path_factory.mktemp("pywb")
    index = (crawl.parent / "index.cdx").read_text()
    _collection(root, COLLECTION, crawl / "crawl.warc.gz", index)
    _collection(root, UNREVERSED, crawl / "crawl.warc.gz", _unreversed(index))
    process, port = _start_wayback(root)
    try:
        yield port
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def test_pywb_replays_every_capture_through_the_crawlers_index(captures, wayback):
    wrong = []
    for capture in captures:
        status, headers, body = _replay(wayback, COLLECTION, capture)
        replayed = (status, headers.get("Memento-Datetime"), body)
        expected = (capture.status, _http_date(capture.timestamp),
                    None if capture.truncated else capture.body)
        if replayed != expected:
            wrong.append((capture.url, expected[:2], replayed[:2], "same body" if
                          expected[2] == replayed[2] else "other body"))
    assert wrong == []
    assert {c.status for c in captures} >= {200, 301, 404, 500}   # errors and redirects too
    assert 0 < sum(c.truncated for c in captures) < 5


def test_the_replayed_pages_are_the_crawls_saved_files(crawl, captures, wayback):
    by_url = {capture.url: capture for capture in captures}
    with open(crawl / "index.csv", newline="", encoding="utf-8") as f:
        saved = [row for row in csv.DictReader(f) if row["html_path"]]
    assert len(saved) > 470
    for row in saved:
        _, _, body = _replay(wayback, COLLECTION, by_url[row["final_url"]])
        assert body == (crawl / row["html_path"]).read_bytes(), row["final_url"]


def test_an_index_with_ip_hosts_unreversed_replays_nothing(captures, wayback):
    for capture in captures:
        status, headers, _ = _replay(wayback, UNREVERSED, capture)
        assert (status, headers.get("Memento-Datetime")) == (404, None), capture.url


def test_the_index_is_the_one_pywb_writes(crawl, tmp_path):
    """pywb's own indexer, on the same file, writes the same lines."""
    theirs = tmp_path / "pywb.cdx"
    subprocess.run([str(command("cdx-indexer")), "--sort", "-o", str(theirs),
                    str(crawl / "crawl.warc.gz")], check=True, capture_output=True)
    ours = (crawl.parent / "index.cdx").read_text().splitlines()
    assert ours == theirs.read_text().splitlines()


# -- helpers -------------------------------------------------------------------

def _collection(root: Path, name: str, warc: Path, index: str) -> None:
    folder = root / "collections" / name
    (folder / "archive").mkdir(parents=True)
    (folder / "indexes").mkdir()
    shutil.copy(warc, folder / "archive" / warc.name)
    (folder / "indexes" / "index.cdx").write_text(index)


def _unreversed(index: str) -> str:
    """``index`` with its keys as the crawler wrote them before: the IP host
    as it is (``127.0.0.1:P)/``), not reversed (``1,0,0,127:P)/``)."""
    header, *lines = index.splitlines()
    old = [line.replace("1,0,0,127:", "127.0.0.1:", 1) for line in lines]
    assert all(line.startswith("127.0.0.1:") for line in old)
    return "\n".join([header, *sorted(old)]) + "\n"


def _start_wayback(root: Path) -> tuple[subprocess.Popen, int]:
    """``wayback`` serving ``root`` on a free loopback port; a port taken
    meanwhile by another program is given up for a new one."""
    for _ in range(3):
        port = _free_port()
        log = open(root / f"wayback-{port}.log", "wb")
        process = subprocess.Popen([str(command("wayback")), "-b", "127.0.0.1", "-p", str(port),
                                    "-d", str(root)], stdout=log, stderr=subprocess.STDOUT)
        log.close()
        if _serves(process, port):
            return process, port
        process.kill()
        process.wait()
    raise AssertionError(f"wayback did not start; its log: {(root / f'wayback-{port}.log').read_text()}")


def _serves(process: subprocess.Popen, port: int) -> bool:
    """Whether ``process`` answers on ``port`` with our collection (and not
    some other program that holds the port): polled until it does, exits,
    or a minute has passed."""
    deadline = time.monotonic() + _START_SECONDS
    while process.poll() is None and time.monotonic() < deadline:
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            connection.request("GET", f"/{COLLECTION}/")
            answer = connection.getresponse()
            answer.read()
            return answer.status == 200 and process.poll() is None
        except OSError:
            time.sleep(0.1)  # not listening yet
    return False


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _replay(port: int, collection: str, capture: Capture) -> tuple[int, dict, bytes | None]:
    """Status, headers and body of the raw replay of ``capture`` (None for
    the body of a truncated capture, which never ends; see the docstring)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request("GET", f"/{collection}/{capture.timestamp}id_/{capture.url}")
        answer = connection.getresponse()
        body = None if capture.truncated and answer.status != 404 else answer.read()
        return answer.status, dict(answer.getheaders()), body
    finally:
        connection.close()


def _timestamp(warc_date: str) -> str:
    return "".join(ch for ch in warc_date if ch.isdigit())[:14]


def _http_date(timestamp: str) -> str:
    moment = datetime.strptime(timestamp, "%Y%m%d%H%M%S").replace(tzinfo=timezone.utc)
    return format_datetime(moment, usegmt=True)

"""WARC output: the crawl as a web archive (crawl.warc.gz), and the repair
that --resume needs (its CDX index is a reader: controller/readers/cdx.py).

Owns the layout of the archive: one warcinfo record per run (software,
format, the crawl settings), then for every page, in commit order, a
request and a response record per HTTP exchange (redirect hops included),
written with warcio. Each record is its own gzip member and the file is
flushed after every page, so a killed crawl leaves whole records plus at
most one torn member; ``trim`` cuts that and the records of pages that were
never committed.

Records hold what came over the wire (``getpage.Exchange``): the request
head as sent, the response headers as received and the body before content
decoding (a gzip body stays gzip). One exception: http.client removes the
chunked transfer coding before the crawler sees a body, so a response sent
with ``Transfer-Encoding: chunked`` is recorded de-chunked and without that
header, the practice of tools that cannot keep the chunk framing (a record
that kept the header would lie about its block). Another: secrets are never
written, so the value of a secret request header (Authorization, Cookie,
``getpage.headers.is_secret_header``) and of a response's Set-Cookie is
recorded as ``[redacted]``: the record then differs from the bytes sent
in those values, and a replay sets no cookie. A body that was not read
to its end carries ``WARC-Truncated``.

Every record of a page carries the extension field ``WARC-Crawler-Page-Id``
(the page's id in index.csv): ``trim`` keeps records by it.

Exact duplicates: a page whose final response has the same payload digest
as the original's is written as a ``revisit`` record (profile
identical-payload-digest, headers only) that refers to the original.
"""
from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import uuid
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from getpage import Exchange
from urllist.journal import WholeWrites
from getpage.headers import redacted_request, redacted_response

PAGE_ID = "WARC-Crawler-Page-Id"
REVISIT_PROFILE = "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"
NOT_MODIFIED_PROFILE = "http://netpreserve.org/warc/1.1/revisit/server-not-modified"
# Headers that describe the transfer, not the message: the payload is
# stored with the transfer coding removed (see the module docstring).
_TRANSFER_HEADERS = frozenset({"transfer-encoding"})
_READ_BLOCK = 64 * 1024
_HEAD_BYTES = 16 * 1024  # a WARC record's own header block fits in this


@dataclass(frozen=True)
class RevisitTarget:
    """What a revisit record needs to know about the response it repeats."""

    uri: str             # WARC-Target-URI of the original response
    date: str            # its WARC-Date
    record_id: str       # its WARC-Record-ID, "<urn:uuid:...>"
    payload_digest: str  # its WARC-Payload-Digest, "sha1:" + base32


class WarcArchive:
    """An open crawl.warc.gz. Not thread-safe: the Controller writes pages
    from one thread, in commit order.

    ``append``: keep the records already there (after ``trim``) and add a
    new warcinfo record for this run; otherwise start a new file. ``info``:
    the crawl settings, written into the warcinfo record (non-string values
    as JSON).

    Memory: for every page whose final response is complete and 2xx (the
    pages a duplicate can repeat) the archive remembers its URL and about
    120 characters (date, record id, digest): about 280 bytes plus the
    URL per page (tracemalloc, 20,000 pages), until ``close``.
    """

    def __init__(self, path: Path, *, append: bool, info: dict,
                 responses: dict[int, tuple[str, str]] | None = None) -> None:
        """``responses``: what ``trim`` found of the earlier runs' pages, so a
        duplicate of one of those still gets a revisit record after --resume."""
        self.path = path
        # A page's records are put together in memory and go to the file in
        # one write, nothing buffered (WholeWrites): records the disk has no
        # room for are not on disk at all, and none is completed later.
        self._file = WholeWrites(path, "a" if append else "w")
        self._pending = io.BytesIO()
        self._writer = WARCWriter(self._pending, gzip=True, warc_version="1.1")
        self._responses: dict[int, tuple[str, str]] = dict(responses or {})
        self._write_info(info)

    def write_page(self, exchanges: Iterable[Exchange], *, page_id: int,
                   revisit_of: RevisitTarget | None = None) -> None:
        """Write a request and a response record for each exchange of page
        ``page_id``, then flush.

        With ``revisit_of`` (the original of an exact duplicate, or the
        stored version of a page asked again), the last exchange's response
        becomes a revisit record if it is a 304 (``server-not-modified``) or
        its payload is complete and has that same digest
        (``identical-payload-digest``); otherwise it is written in full.
        """
        exchanges = tuple(exchanges)
        final_response = None
        for number, exchange in enumerate(exchanges, 1):
            last = number == len(exchanges)
            digest = payload_digest(exchange.payload)
            response_id = _record_id()
            self._writer.write_record(self._request_record(exchange, page_id, response_id))
            if last and revisit_of and exchange.status == 304:   # a conditional GET's answer
                self._writer.write_record(self._revisit_record(
                    exchange, page_id, response_id, revisit_of, NOT_MODIFIED_PROFILE))
                continue
            if last and revisit_of and not exchange.truncated and digest == revisit_of.payload_digest:
                self._writer.write_record(
                    self._revisit_record(exchange, page_id, response_id, revisit_of))
                continue
            self._writer.write_record(
                self._response_record(exchange, page_id, response_id, digest))
            if last and not exchange.truncated and 200 <= exchange.status < 300:
                date = exchange.request.sent_at
                final_response = (exchange.url, f"{date} {response_id} {digest}")
        self._write_pending()
        if final_response is not None:
            self._responses[page_id] = final_response

    def response_of(self, page_id: int) -> RevisitTarget | None:
        """The final response written for page ``page_id`` (None if there is
        none, or it was no complete 2xx)."""
        known = self._responses.get(page_id)
        if known is None:
            return None
        date, record_id, digest = known[1].split(" ")
        return RevisitTarget(uri=known[0], date=date, record_id=record_id, payload_digest=digest)

    def close(self) -> None:
        try:
            self._file.sync()
        finally:
            self._file.close()

    def _write_pending(self) -> None:
        data = self._pending.getvalue()
        self._pending.seek(0)
        self._pending.truncate()
        self._file.write(data)

    def __enter__(self) -> WarcArchive:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- records -----------------------------------------------------------

    def _write_info(self, info: dict) -> None:
        fields = {"software": f"bfs-crawler/{_version()}", "format": "WARC File Format 1.1",
                  "conformsTo": "https://iipc.github.io/warc-specifications/specifications/"
                                "warc-format/warc-1.1/"}
        fields.update({name: value if isinstance(value, str) else json.dumps(value, default=str)
                       for name, value in info.items()})
        body = "".join(f"{name}: {_one_line(value)}\r\n" for name, value in fields.items())
        payload = body.encode("utf-8")
        record = self._writer.create_warc_record(
            "", "warcinfo", payload=io.BytesIO(payload), length=len(payload),
            warc_content_type="application/warc-fields",
            warc_headers_dict={"WARC-Filename": self.path.name, "WARC-Date": _now()})
        self._writer.write_record(record)
        self._write_pending()

    def _request_record(self, exchange: Exchange, page_id: int, response_id: str):
        sent = exchange.request
        head = StatusAndHeaders(f"{sent.method} {sent.target} {sent.version}",
                                redacted_request(sent.headers), is_http_request=True)
        fields = self._fields(exchange, page_id)
        fields["WARC-Concurrent-To"] = response_id
        return self._writer.create_warc_record(exchange.url, "request", http_headers=head,
                                               warc_headers_dict=fields)

    def _response_record(self, exchange: Exchange, page_id: int, response_id: str, digest: str):
        fields = self._fields(exchange, page_id)
        fields["WARC-Record-ID"] = response_id
        fields["WARC-Payload-Digest"] = digest  # computed once, here; warcio then skips it
        if exchange.truncated:
            fields["WARC-Truncated"] = exchange.truncated
        return self._writer.create_warc_record(
            exchange.url, "response", payload=io.BytesIO(exchange.payload),
            length=len(exchange.payload), http_headers=_response_head(exchange),
            warc_headers_dict=fields)

    def _revisit_record(self, exchange: Exchange, page_id: int, response_id: str,
                        original: RevisitTarget, profile: str = REVISIT_PROFILE):
        fields = self._fields(exchange, page_id)
        fields["WARC-Record-ID"] = response_id
        fields["WARC-Refers-To"] = original.record_id
        record = self._writer.create_revisit_record(
            exchange.url, original.payload_digest, original.uri, original.date,
            http_headers=_response_head(exchange), warc_headers_dict=fields)
        # warcio names the profile after the writer's version; say it exactly.
        record.rec_headers.replace_header("WARC-Profile", profile)
        return record

    @staticmethod
    def _fields(exchange: Exchange, page_id: int) -> dict[str, str]:
        fields = {"WARC-Date": exchange.request.sent_at or _now(), PAGE_ID: str(page_id)}
        if exchange.request.ip_address:
            fields["WARC-IP-Address"] = exchange.request.ip_address
        return fields


def payload_digest(payload: bytes) -> str:
    """WARC-Payload-Digest of ``payload`` as warcio writes it: "sha1:" + base32."""
    return "sha1:" + base64.b32encode(hashlib.sha1(payload).digest()).decode("ascii")


def _response_head(exchange: Exchange) -> StatusAndHeaders:
    status = f"{exchange.status} {exchange.reason}" if exchange.reason else str(exchange.status)
    headers = [(name, value) for name, value in exchange.headers
               if name.lower() not in _TRANSFER_HEADERS]
    return StatusAndHeaders(status, redacted_response(headers), protocol=exchange.version)


def _record_id() -> str:
    return f"<urn:uuid:{uuid.uuid4()}>"


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _one_line(value: str) -> str:
    """A warc-fields value must not break its line."""
    return value.replace("\r", " ").replace("\n", " ")


def _version() -> str:
    try:
        return version("bfs-crawler")
    except PackageNotFoundError:
        return "unknown"


# -- resume: trim ------------------------------------------------------------

def trim(path: Path, committed: set[int],
         responses: dict[int, tuple[str, str]] | None = None) -> int:
    """Cut ``path`` after the longest prefix of whole records that are
    warcinfo records or belong to committed pages (by ``WARC-Crawler-Page-Id``);
    return how many records are kept.

    Drops a torn last gzip member and the records of pages whose index row
    was never written (a resumed crawl fetches those pages again). With
    ``responses``, also collects what WarcArchive(responses=...) needs to
    write revisits of the kept pages (in the same single pass).
    """
    kept, end = 0, 0
    with open(path, "rb") as f:
        for offset, length, head in whole_members(f):
            page = _field(head, PAGE_ID)
            if page is not None and (not page.isdigit() or int(page) not in committed):
                break
            kept, end = kept + 1, offset + length
            if responses is not None and page is not None:
                _note_response(head, int(page), responses)
    os.truncate(path, end)
    return kept


def _note_response(head: bytes, page_id: int, responses: dict[int, tuple[str, str]]) -> None:
    """Remember (or forget) page_id's response as write_page does: the page's
    last response record counts, if it is complete and 2xx."""
    if _field(head, "WARC-Type") != "response":
        return
    status_line = head.partition(b"\r\n\r\n")[2].partition(b"\r\n")[0].split(b" ")
    status = int(status_line[1]) if len(status_line) > 1 and status_line[1].isdigit() else 0
    if _field(head, "WARC-Truncated") is None and 200 <= status < 300:
        fields = [_field(head, name) for name in ("WARC-Date", "WARC-Record-ID", "WARC-Payload-Digest")]
        responses[page_id] = (_field(head, "WARC-Target-URI") or "", " ".join(map(str, fields)))
    else:
        responses.pop(page_id, None)


def whole_members(f: io.BufferedReader) -> Iterator[tuple[int, int, bytes]]:
    """(offset, compressed length, first bytes decompressed) of each gzip
    member of ``f``, in order, stopping at the first one that is torn or
    broken. A member counts as whole when zlib reaches its end (which
    checks the gzip trailer's CRC and length)."""
    offset, pending = 0, b""
    while True:
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        head, fed = b"", 0
        data = pending or f.read(_READ_BLOCK)
        if not data:
            return
        while True:
            try:
                out = inflater.decompress(data)
            except zlib.error:
                return
            if len(head) < _HEAD_BYTES:
                head += out[:_HEAD_BYTES - len(head)]
            fed += len(data)
            if inflater.eof:
                break
            data = f.read(_READ_BLOCK)
            if not data:
                return  # torn: the file ends inside this member
        pending = inflater.unused_data
        length = fed - len(pending)
        yield offset, length, head
        offset += length


def _field(head: bytes, name: str) -> str | None:
    """The value of WARC header field ``name`` in a record's first bytes."""
    block = head.partition(b"\r\n\r\n")[0].decode("utf-8", "replace")
    wanted = name.lower()
    for line in block.split("\r\n")[1:]:
        key, _, value = line.partition(":")
        if key.strip().lower() == wanted:
            return value.strip()
    return None

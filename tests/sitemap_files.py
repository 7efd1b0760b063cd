"""Sitemap files for the tests, good and hostile, built without holding what
they expand to: a gzip bomb of 1 GiB is about 1 MB here, and a plain file
over 50 MB is streamed by the server as it is generated.

    urlset(locs, lastmods) / index(locs) -> bytes
    inflating(prefix, filler, repeats, suffix) -> gzip bytes of prefix + filler * repeats + suffix
    Streamed(chunks, content_type, length, ...) -> a StubServer route
"""
from __future__ import annotations

import struct
import zlib
from collections.abc import Callable, Iterable, Iterator

NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
MIB = 1 << 20


def urlset(locs: Iterable[str], lastmods: Iterable[str] | None = None) -> bytes:
    stamps = list(lastmods) if lastmods is not None else None
    rows = []
    for i, loc in enumerate(locs):
        lastmod = f"<lastmod>{stamps[i]}</lastmod>" if stamps is not None else ""
        rows.append(f"<url><loc>{loc}</loc>{lastmod}</url>")
    return (f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="{NS}">\n'
            + "\n".join(rows) + "\n</urlset>\n").encode()


def index(locs: Iterable[str]) -> bytes:
    rows = "\n".join(f"<sitemap><loc>{loc}</loc></sitemap>" for loc in locs)
    return f'<?xml version="1.0"?>\n<sitemapindex xmlns="{NS}">\n{rows}\n</sitemapindex>\n'.encode()


def _flushed(data: bytes) -> bytes:
    """``data`` as raw deflate blocks ending byte-aligned with no references
    before it: such pieces concatenate into one valid deflate stream."""
    packer = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    return packer.compress(data) + packer.flush(zlib.Z_FULL_FLUSH)


def inflating(prefix: bytes, filler: bytes, repeats: int, suffix: bytes = b"") -> bytes:
    """A gzip file whose content is prefix + filler * repeats + suffix,
    compressed piece by piece so that only ``filler`` is ever held whole."""
    piece = _flushed(filler)
    end = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS).flush(zlib.Z_FINISH)
    crc = zlib.crc32(prefix)
    for _ in range(repeats):
        crc = zlib.crc32(filler, crc)
    crc = zlib.crc32(suffix, crc)
    size = len(prefix) + len(filler) * repeats + len(suffix)
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"
    return (header + _flushed(prefix) + piece * repeats + _flushed(suffix) + end
            + struct.pack("<II", crc, size & 0xFFFFFFFF))


class Streamed:
    """A route that writes ``chunks()`` as they are made (Content-Length
    ``length``), and counts what got out before the client hung up."""

    def __init__(self, chunks: Callable[[], Iterator[bytes]], content_type: str, length: int,
                 headers: dict[str, str] | None = None) -> None:
        self.chunks = chunks
        self.headers = {"Content-Type": content_type, "Content-Length": str(length), **(headers or {})}
        self.written = 0

    def __call__(self, handler) -> None:
        handler.send_response(200)
        for name, value in self.headers.items():
            handler.send_header(name, value)
        handler.end_headers()
        try:
            for chunk in self.chunks():
                handler.wfile.write(chunk)
                self.written += len(chunk)
        except OSError:
            handler.close_connection = True   # the client stopped reading: what these tests provoke


def repeated(prefix: bytes, filler: bytes, repeats: int, suffix: bytes = b"") -> Streamed:
    """prefix + filler * repeats + suffix as XML, generated while it is sent."""
    def chunks() -> Iterator[bytes]:
        yield prefix
        for _ in range(repeats):
            yield filler
        yield suffix
    return Streamed(chunks, "application/xml", len(prefix) + len(filler) * repeats + len(suffix))


def whole(body: bytes, content_type: str = "application/xml",
          headers: dict[str, str] | None = None) -> Streamed:
    """``body`` in 64 KiB writes."""
    def chunks() -> Iterator[bytes]:
        for start in range(0, len(body), 64 * 1024):
            yield body[start:start + 64 * 1024]
    return Streamed(chunks, content_type, len(body), headers)


def billion_laughs() -> bytes:
    """The classic entity bomb: ten levels of ten, 10**9 'lol's when expanded."""
    entities = ['<!ENTITY lol0 "lol">'] + [
        f'<!ENTITY lol{k} "{f"&lol{k - 1};" * 10}">' for k in range(1, 10)]
    return ('<?xml version="1.0"?>\n<!DOCTYPE urlset [\n' + "\n".join(entities) + "\n]>\n"
            f'<urlset xmlns="{NS}"><url><loc>&lol9;</loc></url></urlset>\n').encode()


def external_entity(target: str) -> bytes:
    return (f'<?xml version="1.0"?>\n<!DOCTYPE urlset [<!ENTITY leak SYSTEM "{target}">]>\n'
            f'<urlset xmlns="{NS}"><url><loc>&leak;</loc></url></urlset>\n').encode()


def external_dtd(target: str) -> bytes:
    return (f'<?xml version="1.0"?>\n<!DOCTYPE urlset SYSTEM "{target}">\n'
            f'<urlset xmlns="{NS}"><url><loc>http://x/</loc></url></urlset>\n').encode()


def nested(depth: int) -> bytes:
    return (f'<urlset xmlns="{NS}">' + "<a>" * (depth - 1) + "</a>" * (depth - 1)
            + "</urlset>").encode()

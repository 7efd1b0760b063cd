"""Sitemaps (sitemaps.org): the URLs a site lists, read from a stream of bytes.

Pure: bytes in, entries out; no network, no files.

    SitemapParser(allow_index=True).feed(chunk) -> [SitemapEntry]   as they complete
    SitemapParser.close() -> [SitemapEntry]                         the last ones
    parse_sitemap(chunks) -> Sitemap                                 all at once
    w3c_datetime(text) -> epoch seconds, or None                     a <lastmod>

The parser is fed the body as it arrives (a Fetcher's ``Ask.sink``), so its
memory stays bounded whatever the file: it keeps the entry being read, the
one incomplete piece of markup expat holds, and the entries of one call.

Formats: an XML ``<urlset>`` (its ``<url>``s' ``<loc>`` and ``<lastmod>``),
an XML ``<sitemapindex>`` (its ``<sitemap>``s', the child sitemaps), either
one gzip-compressed (told by its magic bytes, not by a name or a header:
servers label ``.xml.gz`` every way), and a text sitemap (one URL a line,
UTF-8). A document whose first character, after a byte order mark and white
space, is "<" is XML; anything else is text. Elements are known by their
local names at their depth, in a sitemap namespace: sitemaps.org's (0.9),
Google's older one (0.84), none, or the root's own; each element may be in
any of them, as Google's and Scrapy's readers take them (Scrapy drops every
namespace). ``<image:loc>`` inside an image extension is not a page's
``<loc>``. A sitemap with no entry is refused with a line that says what
it held instead (``<image:url>``, say), or that it was empty.

Everything hostile is refused with ``SitemapError``, whose message is one
line saying what is wrong, and the parser stops at once (a sink that raises
stops the download):

* a DTD, which every entity bomb ("billion laughs") and external entity
  needs: refused when its declaration starts, before any entity in it;
* more than 50 MB (52,428,800 bytes) uncompressed, the sitemaps.org limit:
  a gzip bomb is stopped after 50 MB of output, never inflated whole;
* more than 50,000 entries, the other sitemaps.org limit;
* elements nested deeper than 16 (a sitemap is 3 deep; an image or news
  extension 5);
* one tag, comment or declaration longer than 1 MiB: expat keeps an
  incomplete piece of markup whole until it ends, so 50 MB of attribute
  would be 50 MB held (and re-scanned on each chunk);
* malformed XML (expat's message, with its line and column), a root that
  is neither ``<urlset>`` nor ``<sitemapindex>``, a sitemap index where an
  index may not be (``allow_index=False``: sitemaps.org lets an index list
  sitemaps, not indexes), binary data in a text sitemap, broken or
  truncated gzip, an empty document.

An entry without a ``<loc>``, or whose ``<loc>`` has 2,048 characters or
more (sitemaps.org: "less than 2,048"), is skipped and counted in
``skipped``; a ``<lastmod>`` that is not a W3C datetime is ignored (None),
never fatal. Judging the URL itself (scheme, host, scope) is the caller's.

Why defusedxml over expat, and not lxml (already a dependency) with
``resolve_entities=False, no_network=True, load_dtd=False``: expat is a
streaming parser that builds nothing, so one entry at a time is all it
holds, while lxml's pull parser builds a tree that must be pruned as it
goes; and defusedxml's ``forbid_dtd`` refuses the DOCTYPE as it starts,
where lxml reads the internal subset and its entity declarations and only
leaves the entities unexpanded (refusing a DTD would need a check of our
own after the fact). Neither bounds a single huge token (lxml holds tens of
megabytes before its own limits trip), hence the 1 MiB check above, which
expat's byte index makes exact.
"""
from __future__ import annotations

import re
import zlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import DefusedXMLParser, ParseError

MAX_ENTRIES = 50_000          # sitemaps.org: URLs (or sitemaps) per file
MAX_BYTES = 52_428_800        # sitemaps.org: 50 MB per file, uncompressed
MAX_DEPTH = 16                # elements nested at most this deep
MAX_LOC_CHARS = 2047          # sitemaps.org: a URL of "less than 2,048 characters"
MAX_MARKUP_BYTES = 1 << 20    # one tag, comment or declaration at most this long
# Decompressed output per zlib call: how far past a limit inflating can run.
INFLATE_CHUNK = 64 * 1024

_GZIP_MAGIC = b"\x1f\x8b"
_UTF8_BOM = b"\xef\xbb\xbf"
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
_SPACE = b" \t\r\n"
ROOTS = {"urlset": "url", "sitemapindex": "sitemap"}   # root element -> its entries' element
SITEMAP_NAMESPACE = "http://www.sitemaps.org/schemas/sitemap/0.9"
# Where a sitemap's elements are read from (with the root's own namespace).
SITEMAP_NAMESPACES = frozenset({SITEMAP_NAMESPACE, "http://www.google.com/schemas/sitemap/0.84", ""})


class SitemapError(ValueError):
    """A sitemap refused: the message is one line saying what is wrong."""


@dataclass(frozen=True, slots=True)
class SitemapEntry:
    loc: str                     # as written, white space stripped (a page, or a child sitemap)
    lastmod: float | None = None  # epoch seconds; None when absent or not a W3C datetime


@dataclass(frozen=True)
class Sitemap:
    kind: str                            # "urlset", "sitemapindex" or "text"
    entries: tuple[SitemapEntry, ...]
    skipped: dict[str, int] = field(default_factory=dict)   # reason -> entries left out


class SitemapParser:
    """Reads one sitemap fed in chunks of bytes; see the module docstring.

    ``feed(chunk)`` and ``close()`` return the entries completed since the
    last call, in document order, and raise SitemapError when the file is
    refused (the parser is finished then). ``kind`` is "" until the first
    markup or line tells it. ``allow_index=False``: a sitemap index is
    refused (a child of an index). The limits are sitemaps.org's unless
    given.
    """

    def __init__(self, *, allow_index: bool = True, max_entries: int = MAX_ENTRIES,
                 max_bytes: int = MAX_BYTES) -> None:
        self.allow_index = allow_index
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self.kind = ""
        self.size = 0                       # bytes read, uncompressed
        self.count = 0                      # entries seen (skipped ones too)
        self.skipped: dict[str, int] = {}
        self._out: list[SitemapEntry] = []
        self._head = b""                    # the first bytes, until gzip's magic can be told
        self._sniffed = False
        self._gunzip: _Gunzip | None = None
        self._start: bytes | None = b""     # the first uncompressed bytes, until a BOM can be told
        self._reader: _XmlReader | _TextReader | None = None
        self._lines_skipped = 0             # leading blank lines, for expat's line numbers

    def feed(self, chunk: bytes) -> list[SitemapEntry]:
        if self._gunzip is not None:
            self._inflate(chunk)
        elif self._sniffed:
            self._plain(chunk)
        else:
            self._sniff(chunk)
        return self._take()

    def close(self) -> list[SitemapEntry]:
        if not self._sniffed:
            self._sniff(b"", final=True)
        if self._gunzip is not None:
            self._gunzip.close()
        self._plain(b"", final=True)
        if self._reader is None:
            raise SitemapError("empty: no sitemap in it")
        self._reader.finish()
        return self._take()

    # -- what the parts call back --------------------------------------------

    def entry(self, loc: str, lastmod: float | None) -> None:
        if not loc:
            self.skip("no <loc>")
        elif len(loc) > MAX_LOC_CHARS:
            self.skip(f"<loc> of {MAX_LOC_CHARS + 1:,} characters or more")
        else:
            self._out.append(SitemapEntry(loc, lastmod))

    def skip(self, reason: str) -> None:
        self.skipped[reason] = self.skipped.get(reason, 0) + 1

    def counted(self) -> None:
        """One more entry (kept or not): past max_entries the file is refused."""
        self.count += 1
        if self.count > self.max_entries:
            raise SitemapError(f"over {self.max_entries:,} entries (the sitemaps.org limit)")

    def root(self, name: str) -> None:
        if name not in ROOTS:
            raise SitemapError(f"not a sitemap: the root element is <{name}>, "
                               "not <urlset> or <sitemapindex>")
        if name == "sitemapindex" and not self.allow_index:
            raise SitemapError("a sitemap index listed by a sitemap index "
                               "(sitemaps.org: an index lists sitemaps, not indexes)")
        self.kind = name

    # -- layers -----------------------------------------------------------------

    def _take(self) -> list[SitemapEntry]:
        out, self._out = self._out, []
        return out

    def _sniff(self, chunk: bytes, final: bool = False) -> None:
        """Wait for two bytes, then inflate if they are gzip's magic."""
        self._head += chunk
        if len(self._head) < len(_GZIP_MAGIC) and not final:
            return
        data, self._head, self._sniffed = self._head, b"", True
        if data.startswith(_GZIP_MAGIC):
            self._gunzip = _Gunzip()
            self._inflate(data)
        else:
            self._plain(data)

    def _inflate(self, data: bytes) -> None:
        for piece in self._gunzip.feed(data):
            self._plain(piece)

    def _plain(self, data: bytes, final: bool = False) -> None:
        """Uncompressed bytes: counted against max_bytes before they are read."""
        self.size += len(data)
        if self.size > self.max_bytes:
            raise SitemapError(self._too_large())
        if self._reader is None:
            data = self._choose_reader(data, final)
        if data:
            self._reader.read(data)

    def _too_large(self) -> str:
        if self._gunzip is not None:
            return (f"over {self.max_bytes:,} bytes when uncompressed (the sitemaps.org limit; "
                    "a gzip bomb?): stopped reading")
        return f"over {self.max_bytes:,} bytes (the sitemaps.org limit): stopped reading"

    def _choose_reader(self, data: bytes, final: bool) -> bytes:
        """XML or text, from the first character after a byte order mark and
        white space; returns what of ``data`` the reader is to read (b"":
        not known yet)."""
        if self._start is not None:   # the first bytes, held until a BOM can be told
            self._start += data
            if len(self._start) < len(_UTF8_BOM) + 1 and not final:
                return b""
            data, self._start = self._start, None
            if data.startswith(_UTF16_BOMS):
                self._reader = _XmlReader(self, 0)
                return data
            data = data.removeprefix(_UTF8_BOM)
        start = data.lstrip(_SPACE)
        self._lines_skipped += data.count(b"\n", 0, len(data) - len(start))
        if not start:
            return b""
        if start.startswith(b"<"):
            self._reader = _XmlReader(self, self._lines_skipped)
        else:
            self._reader = _TextReader(self)
            self.kind = "text"
        return start


class _Gunzip:
    """Incremental gzip (several members allowed, RFC 1952), at most
    INFLATE_CHUNK bytes out per call, so a bomb is cut off by the caller's
    size check after at most that much past its limit."""

    def __init__(self) -> None:
        self._inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)

    def feed(self, data: bytes) -> Iterable[bytes]:
        try:
            yield from self._inflated(data)
        except zlib.error as exc:
            raise SitemapError(f"broken gzip data ({exc})") from None

    def _inflated(self, data: bytes) -> Iterable[bytes]:
        out = b""
        while data or len(out) == INFLATE_CHUNK:
            if self._inflate.eof:
                data = data.lstrip(b"\0")   # padding after the last member, as gzip allows
                if not data:
                    return
                self._inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)
            out = self._inflate.decompress(data, INFLATE_CHUNK)
            if out:
                yield out
            data = self._inflate.unused_data if self._inflate.eof else self._inflate.unconsumed_tail

    def close(self) -> None:
        if not self._inflate.eof:
            raise SitemapError("gzip data ends early (a truncated file)")


class _XmlReader:
    """An XML sitemap through defusedxml's expat parser, this object its target."""

    def __init__(self, owner: SitemapParser, line_offset: int) -> None:
        self._owner = owner
        self._line_offset = line_offset
        self._xml = DefusedXMLParser(target=self, forbid_dtd=True, forbid_entities=True,
                                     forbid_external=True)
        self._expat = self._xml.parser
        self._fed = 0
        self._depth = 0
        self._namespaces = SITEMAP_NAMESPACES
        self._root = ""
        self._entry_name = ""
        self._other = ""                    # the first child of the root that is not an entry
        self._in_entry = False
        self._field = ""                    # "loc" or "lastmod" while inside one
        self._text: list[str] = []
        self._text_length = 0
        self._loc = ""
        self._lastmod: str | None = None

    def read(self, data: bytes) -> None:
        self._fed += len(data)
        self._parse(self._xml.feed, data)
        # Bytes expat holds without having reported them: one unfinished token.
        if self._fed - max(self._expat.CurrentByteIndex, 0) > MAX_MARKUP_BYTES:
            raise SitemapError(f"a tag, comment or declaration over {MAX_MARKUP_BYTES:,} bytes "
                               f"at line {self._line()}")

    def finish(self) -> None:
        self._parse(lambda _: self._xml.close(), b"")
        if not self._owner.count:
            if self._other:
                raise SitemapError(f"nothing recognizable: no <{self._entry_name}> in the <{self._root}>, "
                                   f"only elements such as {self._other} (sitemaps.org's namespace is "
                                   f"{SITEMAP_NAMESPACE})")
            raise SitemapError(f"empty: the <{self._root}> lists nothing")

    def _parse(self, step, data: bytes) -> None:
        try:
            step(data)
        except ParseError as exc:
            line, column = exc.position
            message = str(exc).partition(":")[0]
            raise SitemapError(f"malformed XML: {message} at line {line + self._line_offset}, "
                               f"column {column}") from None
        except DefusedXmlException:
            # forbid_dtd stops the document at its DOCTYPE, before any entity
            # declaration or external reference in it could be read.
            raise SitemapError(f"a DTD (<!DOCTYPE>) at line {self._line()} "
                               "(entity bombs and external entities need one)") from None

    def _line(self) -> int:
        return self._expat.CurrentLineNumber + self._line_offset

    # -- the target's callbacks (expat calls them inside feed) ----------------

    def start(self, tag: str, attrib: dict[str, str]) -> None:
        self._depth += 1
        if self._depth > MAX_DEPTH:
            raise SitemapError(f"elements nested over {MAX_DEPTH} deep at line {self._line()}")
        namespace, _, name = tag[1:].rpartition("}") if tag.startswith("{") else ("", "", tag)
        if self._depth == 1:
            self._owner.root(name)
            self._root, self._entry_name = name, ROOTS[name]
            self._namespaces = SITEMAP_NAMESPACES | {namespace}
        elif self._depth == 2 and not (namespace in self._namespaces and name == self._entry_name):
            self._other = self._other or f"<{name}> in {f'namespace {namespace}' if namespace else 'no namespace'}"
        elif namespace not in self._namespaces:
            return
        elif self._depth == 2:
            self._owner.counted()
            self._in_entry, self._loc, self._lastmod = True, "", None
        elif self._depth == 3 and self._in_entry and name in ("loc", "lastmod"):
            self._field, self._text, self._text_length = name, [], 0

    def data(self, text: str) -> None:
        if self._field and self._text_length <= MAX_LOC_CHARS + 1:
            self._text.append(text)
            self._text_length += len(text)

    def end(self, tag: str) -> None:
        if self._field and self._depth == 3:
            self._end_field()
        elif self._in_entry and self._depth == 2:
            self._in_entry = False
            lastmod = w3c_datetime(self._lastmod) if self._lastmod else None
            self._owner.entry(self._loc, lastmod)
        self._depth -= 1

    def _end_field(self) -> None:
        value = "".join(self._text).strip()
        if self._field == "loc" and not self._loc:
            self._loc = value
        elif self._field == "lastmod":
            self._lastmod = value
        self._field = ""

    def close(self) -> None:
        """The end of the document (expat's parser tells its target so)."""


class _TextReader:
    """A text sitemap: one URL a line, UTF-8; a line too long to be a URL is
    skipped without being held."""

    def __init__(self, owner: SitemapParser) -> None:
        self._owner = owner
        self._partial = b""
        self._overlong = False      # inside a line already too long to keep

    def read(self, data: bytes) -> None:
        if b"\0" in data:
            raise SitemapError("binary data (a NUL byte) where a text sitemap was expected")
        lines = data.split(b"\n")
        self._partial += lines[0]
        for line in lines[1:]:
            self._line(self._partial)
            self._partial, self._overlong = line, False
        if len(self._partial) > 4 * MAX_LOC_CHARS:   # UTF-8: at most 4 bytes a character
            self._partial, self._overlong = b"", True

    def finish(self) -> None:
        self._line(self._partial)
        self._partial = b""
        if not self._owner.count:
            raise SitemapError("empty: no URL in this text sitemap")

    def _line(self, line: bytes) -> None:
        if self._overlong:
            self._owner.counted()
            self._owner.skip(f"<loc> of {MAX_LOC_CHARS + 1:,} characters or more")
            return
        url = line.decode("utf-8", errors="replace").strip()
        if url:
            self._owner.counted()
            self._owner.entry(url, None)


def parse_sitemap(chunks: bytes | Iterable[bytes], *, allow_index: bool = True) -> Sitemap:
    """A whole sitemap at once (bytes, or chunks of it); raises SitemapError."""
    parser = SitemapParser(allow_index=allow_index)
    entries: list[SitemapEntry] = []
    for chunk in [chunks] if isinstance(chunks, bytes) else chunks:
        entries += parser.feed(chunk)
    entries += parser.close()
    return Sitemap(parser.kind, tuple(entries), dict(parser.skipped))


# W3C Datetime (https://www.w3.org/TR/NOTE-datetime), the <lastmod> format:
# YYYY, YYYY-MM, YYYY-MM-DD, and with a time hh:mm, hh:mm:ss or hh:mm:ss.s
# (any number of decimals), which then needs a zone: Z or +hh:mm / -hh:mm.
_W3C_DATETIME = re.compile(
    r"(\d{4})(?:-(\d\d)(?:-(\d\d)(?:T(\d\d):(\d\d)(?::(\d\d)(\.\d+)?)?"
    r"(Z|[+-]\d\d:\d\d))?)?)?")


def w3c_datetime(text: str) -> float | None:
    """``text`` as epoch seconds (a date alone: its midnight UTC), or None
    when it is not one of the W3C Datetime forms sitemaps.org allows."""
    match = _W3C_DATETIME.fullmatch(text.strip())
    if match is None:
        return None
    year, month, day, hour, minute, second, fraction, zone = match.groups()
    try:
        moment = datetime(int(year), int(month or 1), int(day or 1), int(hour or 0),
                          int(minute or 0), int(second or 0), tzinfo=_zone(zone))
    except ValueError:
        return None   # no such day, hour or zone
    return moment.timestamp() + (float(fraction) if fraction else 0.0)


def _zone(zone: str | None) -> timezone:
    if zone is None or zone == "Z":
        return timezone.utc
    sign = -1 if zone[0] == "-" else 1
    hours, minutes = int(zone[1:3]), int(zone[4:6])
    if minutes >= 60:
        raise ValueError(zone)
    return timezone(sign * timedelta(hours=hours, minutes=minutes))

"""A CDX index of a crawl's WARC file, for replay tools (``crawler warc-index``).

Reads crawl.warc.gz (controller/warc.py writes it) and writes nothing: one
line per response or revisit record, in the 11-field CDX layout that pywb's
own indexer (``cdx-indexer``) and OpenWayback write, keyed by the SURT key
pywb looks a URL up by (urlfilter/surt.py). A pywb collection whose
indexes/ folder holds this index replays every page of the archive.
"""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from warcio.archiveiterator import ArchiveIterator
from warcio.exceptions import ArchiveLoadFailed

from controller.warc import whole_members
from urlfilter.surt import surt

CDX_HEADER = " CDX N b a m s k r M S V g"


class WarcError(Exception):
    """The file is not a readable WARC (message says why)."""


def torn_tail(path: Path) -> int:
    """Bytes at the end of ``path`` that are not whole gzip members (a record
    cut off by a kill; ``trim`` removes them on --resume); 0 for a whole file."""
    return path.stat().st_size - _whole_end(path)


def _whole_end(path: Path) -> int:
    """Where the whole gzip members at the start of ``path`` end (the file's
    size for an uncompressed WARC, whose records are not gzip members)."""
    end = 0
    with open(path, "rb") as f:
        if f.read(2) != b"\x1f\x8b":
            return path.stat().st_size
        f.seek(0)
        for offset, length, _ in whole_members(f):
            end = offset + length
    return end


def cdx_lines(path: Path, whole_end: int | None = None) -> Iterator[str]:
    """A CDX index of ``path``: the header line " CDX N b a m s k r M S V g",
    then one line per response or revisit record, in file order, with the
    eleven space-separated fields of the classic wayback/pywb layout:

    N  SURT key of the URL, as pywb computes it (urlfilter/surt.py; e.g.
       ``org,example)/a?b=1&c=2``, ``1,0,0,127:8000)/``)
    b  14-digit timestamp from WARC-Date (YYYYMMDDhhmmss, UTC)
    a  original URL (WARC-Target-URI)
    m  media type of the HTTP response ("warc/revisit" for a revisit,
       "unk" when there is none)
    s  HTTP status ("-" for a revisit)
    k  payload digest, base32 without the "sha1:" prefix
    r  redirect, M meta tags: always "-"
    S  length of the record's gzip member in bytes, V its offset in the file
    g  the file name

    A record cut off at the end of the file (a killed crawl) is left out;
    ``whole_end``, where the whole records end, is found unless given (see
    torn_tail). Raises WarcError if the file cannot be read as WARC.
    """
    yield CDX_HEADER
    if whole_end is None:
        whole_end = _whole_end(path)
    with open(path, "rb") as f:
        records = ArchiveIterator(f)
        try:
            for record in records:
                if records.get_record_offset() >= whole_end:
                    break
                if record.rec_type not in ("response", "revisit"):
                    continue
                records.read_to_end(record)
                yield _cdx_line(record, records.get_record_length(),
                                records.get_record_offset(), path.name)
        except ArchiveLoadFailed as exc:
            raise WarcError(str(exc).strip()) from exc


def _cdx_line(record, length: int, offset: int, filename: str) -> str:
    fields = record.rec_headers
    url = fields.get_header("WARC-Target-URI") or "-"
    digest = (fields.get_header("WARC-Payload-Digest") or "-").removeprefix("sha1:")
    if record.rec_type == "revisit":
        mime, status = "warc/revisit", "-"
    else:
        http = record.http_headers
        content_type = http.get_header("Content-Type") if http else None
        mime = (content_type or "").partition(";")[0].strip().lower() or "unk"
        status = http.get_statuscode() if http else "-"
    return " ".join([surt(url), _timestamp(fields.get_header("WARC-Date") or ""), url, mime,
                     status, digest, "-", "-", str(length), str(offset), filename])


def _timestamp(warc_date: str) -> str:
    digits = "".join(ch for ch in warc_date if ch.isdigit())
    return digits[:14].ljust(14, "0")

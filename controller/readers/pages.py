"""The saved pages of a crawl, one record at a time: what exports and notebooks read.

``page_records(dir)`` yields one dict per saved page (an index.csv row with
an html_path), in index.csv order: the order the crawl committed them,
level by level. It streams: index.csv is read row by row, each page's text
(and, if asked, its html) is read when its record is made, so memory does
not grow with the crawl. Like the other readers (controller/readers/files.py)
it never writes and reads a finished, a running or a killed crawl alike:
a cut last line is left out (and said so in ``notes``), only a directory
that holds no crawl is a ReportError.

The text and html come from the row's text_path and html_path: an exact
duplicate shares its first copy's text file (and its html file when the
bytes are equal), so text/<id>.txt of a duplicate does not exist.

Extracted fields (--extract): a crawl writes a page's extracted.csv row
just before its index.csv row, in the same thread (controller/commit.py,
the commit's ``archive`` step then its ``row``), so extracted.csv holds its pages in index
order, as a subsequence. The two files are merge-joined: one extracted row
is held at a time, and taken by the index row with its id. A page's
fields go under ``extracted`` (a dict NAME -> the matches joined by " | ",
None when the pattern matched nothing; ``extracted`` itself is None for a
page extraction did not apply to), not beside the page's own keys: names
like ``title`` are common patterns and would collide.
"""
from __future__ import annotations

import csv
from collections.abc import Iterator
from pathlib import Path

from controller.readers.files import FIRST_COLUMNS, ReportError, check_is_crawl, complete_lines

EXTRACTED_FILE = "extracted.csv"   # controller/extracted.py's CSV_FILE
TEXT_FIELDS = ("url", "final_url", "content_type", "encoding", "title", "fetched_at",
               "content_md5", "body_md5")
INT_FIELDS = ("id", "level", "bytes")
OPTIONAL_INT_FIELDS = ("status", "duplicate_of", "near_duplicate_of")
# The keys of a record, in this order; then "html" (html=True) and "extracted" (--extract).
RECORD_KEYS = ("id", "url", "final_url", "level", "status", "content_type", "encoding",
               "title", "text", "fetched_at", "content_md5", "body_md5", "duplicate_of",
               "near_duplicate_of", "bytes")


def page_records(crawl_dir: Path, *, html: bool = False,
                 notes: list[str] | None = None) -> Iterator[dict]:
    """One record per saved page of the crawl in ``crawl_dir``, in index order.

    The directory is checked now (ReportError if it holds no crawl), the
    records are read as they are asked for. ``notes`` collects one sentence
    per thing left out (a cut last line, malformed rows).
    """
    crawl_dir = Path(crawl_dir)
    check_is_crawl(crawl_dir)
    rows = _index_rows(crawl_dir / "index.csv", [] if notes is None else notes)
    first = next(rows, None)   # reads the header: a foreign index.csv fails here, not later
    if first is None:
        return iter(())
    return _records(crawl_dir, _chain(first, rows), html)


def extracted_names(crawl_dir: Path) -> tuple[str, ...] | None:
    """The --extract pattern names of the crawl (extracted.csv's columns), None without --extract."""
    path = Path(crawl_dir) / EXTRACTED_FILE
    try:
        with open(path, newline="", encoding="utf-8", errors="replace") as f:
            header = next(csv.reader(complete_lines(f, path.name, [])), None)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise _unreadable(path, exc) from None
    return tuple(header[2:]) if header else ()


def _records(crawl_dir: Path, rows: Iterator[dict[str, str]], html: bool) -> Iterator[dict]:
    names = extracted_names(crawl_dir)
    extracted = None if names is None else _ExtractedRows(crawl_dir / EXTRACTED_FILE)
    try:
        for cells in rows:
            fields = extracted.take(cells["id"]) if extracted is not None else None
            if not cells["html_path"]:
                continue
            record = _record(crawl_dir, cells, html)
            if names is not None:
                record["extracted"] = fields
            yield record
    finally:
        if extracted is not None:
            extracted.close()


def _record(crawl_dir: Path, cells: dict[str, str], html: bool) -> dict:
    record: dict = {key: None for key in RECORD_KEYS}
    record.update({name: cells.get(name) or None for name in TEXT_FIELDS})
    record.update({name: int(cells[name] or 0) for name in INT_FIELDS})
    record.update({name: _optional_int(cells.get(name)) for name in OPTIONAL_INT_FIELDS})
    record["text"] = _read(crawl_dir, cells["text_path"]).decode("utf-8", errors="replace")
    if html:
        record["html"] = _read(crawl_dir, cells["html_path"])
    return record


def _read(crawl_dir: Path, relative: str) -> bytes:
    path = crawl_dir / relative
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise ReportError(f"{path} is missing, but index.csv lists it for a saved page "
                          f"(was the crawl directory pruned?)") from None
    except OSError as exc:
        raise _unreadable(path, exc) from None


# -- index.csv, row by row ---------------------------------------------------
def _index_rows(path: Path, notes: list[str]) -> Iterator[dict[str, str]]:
    """The complete rows of index.csv as dicts of cells; a generator, so the
    file is opened at the first next() (which page_records makes at once)."""
    try:
        f = open(path, newline="", encoding="utf-8", errors="replace")
    except OSError as exc:
        raise _unreadable(path, exc) from None
    with f:
        reader = csv.reader(complete_lines(f, path.name, notes))
        header = next(reader, None)
        if header is None:
            notes.append("index.csv has no rows yet: the crawl has not recorded a page")
            return
        _check_header(path, header)
        yield from _whole_rows(reader, header, notes)


def _whole_rows(reader, header: list[str], notes: list[str]) -> Iterator[dict[str, str]]:
    bad = 0
    for cells in reader:
        row = dict(zip(header, cells))
        if len(cells) < len(header) or not _well_formed(row):
            bad += 1
            continue
        yield row
    if bad:
        notes.append(f"index.csv: {bad} malformed row(s) left out")


def _well_formed(row: dict[str, str]) -> bool:
    try:
        for name in INT_FIELDS + OPTIONAL_INT_FIELDS:
            _optional_int(row.get(name))
    except ValueError:
        return False
    return row["id"] != "" and row["level"] != ""


def _check_header(path: Path, header: list[str]) -> None:
    if tuple(header[:len(FIRST_COLUMNS)]) != FIRST_COLUMNS:
        raise ReportError(f"{path} is not a crawler index: its header is not "
                          f"{','.join(FIRST_COLUMNS[:4])},... (is this a crawl directory?)")


def _chain(first: dict[str, str], rest: Iterator[dict[str, str]]) -> Iterator[dict[str, str]]:
    yield first
    yield from rest


# -- extracted.csv, merge-joined ---------------------------------------------
class _ExtractedRows:
    """extracted.csv read alongside index.csv: one row held until its index row comes."""

    def __init__(self, path: Path) -> None:
        self._file = open(path, newline="", encoding="utf-8", errors="replace")
        self._rows = csv.reader(complete_lines(self._file, path.name, []))
        self._names = tuple(next(self._rows, ())[2:])
        self._held = next(self._rows, None)

    def take(self, page_id: str) -> dict[str, str | None] | None:
        """The fields of the page with this id if its row is next, else None."""
        if self._held is None or self._held[0] != page_id:
            return None
        cells, self._held = self._held, next(self._rows, None)
        return {name: cell or None for name, cell in zip(self._names, cells[2:])}

    def close(self) -> None:
        self._file.close()


def _optional_int(cell: str | None) -> int | None:
    return int(cell) if cell else None


def _unreadable(path: Path, exc: OSError) -> ReportError:
    return ReportError(f"cannot read {path}: {exc.strerror or exc}")

"""extracted.csv and extracted.jsonl: what the extraction patterns found, per page.

extracted.csv    id,url (the page's URL after redirects), then one column per
                 pattern NAME, in --extract order.
                 A cell holds the pattern's matches joined by " | " (MATCH_SEPARATOR),
                 white space collapsed so that every row is one line; an empty
                 cell means the pattern matched nothing on that page.
extracted.jsonl  (optional) one JSON object a line, {"id": 7, "url": "...",
                 "NAME": ["match", ...], ...}: the exact lists, for when a
                 match may itself contain " | " or line breaks.

One row per page extraction applied to (--extract-from), whether or not
anything matched, so the rows also count the pages. Each row reaches the
kernel in one write (WholeWrites), so a killed crawl, or one whose disk
filled, leaves readable files. Write a page's
row before its index.csv row (the commit mark, see controller/resume.py):
then a resumed crawl drops rows of uncommitted pages (keep_rows_of) and
refetching them does not list them twice.

Records: a *record* is a (page, NAME) pair; it is extracted when the
pattern matched at least once on the page. ExtractionTally counts them so
the Controller can say "extracted 1,600 of 1,600 records (100.0%)".
"""
from __future__ import annotations

import csv
import json
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from controller.store import OutputError, csv_lines
from urllist.journal import WholeWrites, cut_torn_line

CSV_FILE = "extracted.csv"
JSONL_FILE = "extracted.jsonl"
MATCH_SEPARATOR = " | "
FIXED_COLUMNS = ("id", "url")


class ExtractedWriter:
    """Appends one row per page to extracted.csv (and extracted.jsonl if asked).

    append=False starts the files afresh; append=True continues a resumed
    crawl's files, which must have the same columns (OutputError if not).
    """

    def __init__(self, out: Path, names: tuple[str, ...], jsonl: bool, append: bool) -> None:
        self.names = tuple(names)
        columns = FIXED_COLUMNS + self.names
        csv_path = Path(out) / CSV_FILE
        continuing = append and csv_path.exists() and csv_path.stat().st_size > 0
        if continuing:
            _check_columns(csv_path, columns)
        # One write per row, nothing buffered (WholeWrites): see controller/store.py.
        self._csv_file = WholeWrites(csv_path, "a" if continuing else "w")
        if not continuing:
            self._csv_file.write(csv_lines([columns]))
        self._jsonl_file = None
        if jsonl:
            self._jsonl_file = WholeWrites(Path(out) / JSONL_FILE, "a" if append else "w")

    def add(self, page_id: int, url: str, values: dict[str, list[str]]) -> None:
        """Write the page's row; values maps each name to its matches (missing = none)."""
        matches = [values.get(name, []) for name in self.names]
        self._csv_file.write(csv_lines([[page_id, _one_line(url)]
                                        + [csv_cell(found) for found in matches]]))
        if self._jsonl_file is not None:
            record = {"id": page_id, "url": url, **dict(zip(self.names, matches))}
            self._jsonl_file.write(json.dumps(record, ensure_ascii=False) + "\n")

    def sync(self) -> None:
        for f in self._files():
            f.sync()

    def close(self) -> None:
        try:
            self.sync()
        finally:
            for f in self._files():
                f.close()

    def _files(self) -> list:
        return [f for f in (self._csv_file, self._jsonl_file) if f is not None]


def csv_cell(matches: list[str]) -> str:
    """The matches as one CSV cell: each on one line, joined by MATCH_SEPARATOR."""
    return MATCH_SEPARATOR.join(_one_line(match) for match in matches)


@dataclass
class ExtractionTally:
    """Pages extracted from, and per name the pages where the pattern matched nothing."""

    names: tuple[str, ...]
    pages: int = 0
    missed: Counter = field(default_factory=Counter)   # name -> pages without a match

    def count(self, values: dict[str, list[str]]) -> None:
        self.pages += 1
        for name in self.names:
            if not values.get(name):
                self.missed[name] += 1

    @property
    def records(self) -> int:
        """(page, name) pairs looked for."""
        return self.pages * len(self.names)

    @property
    def extracted(self) -> int:
        """(page, name) pairs whose pattern matched at least once."""
        return self.records - sum(self.missed[name] for name in self.names)

    def rate(self) -> float:
        """extracted / records; 1.0 when there was nothing to extract."""
        return self.extracted / self.records if self.records else 1.0

    def summary(self) -> str:
        return (f"extracted {self.extracted:,} of {self.records:,} records "
                f"({100 * self.rate():.1f}%) from {self.pages:,} pages")

    def as_dict(self) -> dict:
        """For stats.json."""
        return {"pages": self.pages, "records": self.records, "extracted": self.extracted,
                "rate": round(self.rate(), 6),
                "missed_by_name": {name: self.missed[name] for name in self.names}}

    @classmethod
    def read(cls, out: Path, names: tuple[str, ...]) -> "ExtractionTally":
        """The tally of the rows already in extracted.csv (for a resumed crawl)."""
        tally = cls(tuple(names))
        path = Path(out) / CSV_FILE
        if not path.exists():
            return tally
        with open(path, newline="", encoding="utf-8") as f:
            for row in csv.DictReader(f):
                # An empty cell is a pattern that matched nothing: matches are never empty.
                tally.count({name: [row[name]] if row.get(name) else [] for name in tally.names})
        return tally


def keep_rows_of(out: Path, done_ids: set[int]) -> None:
    """Drop rows of pages not in done_ids (not committed), and a torn last line.

    For --resume, before an ExtractedWriter appends: pages without an index
    row are fetched again and get their row again.
    """
    csv_path, jsonl_path = Path(out) / CSV_FILE, Path(out) / JSONL_FILE
    if csv_path.exists():
        cut_torn_line(csv_path)
        _rewrite(csv_path, lambda lines: _csv_lines_of(lines, done_ids))
    if jsonl_path.exists():
        cut_torn_line(jsonl_path)
        _rewrite(jsonl_path, lambda lines: (line for line in lines if _jsonl_id(line) in done_ids))


def _csv_lines_of(lines, done_ids: set[int]):
    # Rows are one line each (cells never hold line breaks), so lines are rows.
    header = next(lines, None)
    if header is not None:
        yield header
    for line in lines:
        page_id = line.partition(",")[0]
        if page_id.isdigit() and int(page_id) in done_ids:
            yield line


def _jsonl_id(line: str) -> int | None:
    try:
        record = json.loads(line)
    except ValueError:
        return None
    return record.get("id") if isinstance(record, dict) else None


def _rewrite(path: Path, keep) -> None:
    # Write-then-rename: a crash here leaves the old file or the new one.
    tmp = path.with_name(path.name + ".tmp")
    try:
        with open(path, encoding="utf-8", newline="") as src, \
                open(tmp, "w", encoding="utf-8", newline="") as dst:
            dst.writelines(keep(iter(src)))
    except OSError:
        tmp.unlink(missing_ok=True)   # a full disk: the old file stays, the space is free
        raise
    os.replace(tmp, path)


def _check_columns(path: Path, columns: tuple[str, ...]) -> None:
    with open(path, newline="", encoding="utf-8") as f:
        header = tuple(next(csv.reader(f), ()))
    if header != columns:
        raise OutputError(f"{path} has the columns {','.join(header)}, but this crawl extracts "
                          f"{','.join(columns)}; resume with the crawl's own --extract patterns")


def _one_line(text: str) -> str:
    return " ".join(text.split())

"""``read_crawl(DIR)``: a crawl directory as Python objects, for notebooks.

The index and the edges come back as pandas DataFrames when pandas is
installed (the ``notebook`` extra) and as lists of dicts otherwise, with
typed cells: ids, levels, statuses and counts as ints (None when the
cell is empty), ``fetched_at`` as a datetime. Like ``crawler report`` it
reads a finished, a running and a killed crawl, never writes, and keeps
only what is committed: the index's complete rows, and the edges of the
pages that have one (a running crawl writes a page's links just before
its row). Each part is read when it is first asked for, so a running
crawl's ``index`` and ``edges`` are two moments' snapshots.
"""
from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from datetime import datetime
from functools import cached_property
from pathlib import Path

from controller.readers.files import (ReportError, check_is_crawl, complete_lines, read_index_cells,
                                      read_stats)
from controller.readers.pages import page_records
from controller.readers.report import crawl_process
from controller.resume import SETTINGS_FILE, STATE_DIR

INT_COLUMNS = frozenset({"id", "level", "parent_id", "status", "bytes", "text_chars", "out_links",
                         "new_links", "duplicate_of", "near_duplicate_of",
                         "hamming", "in_links", "level_at_fetch", "visits", "changes", "pass"})
FLOAT_COLUMNS = frozenset({"filtered_ratio", "elapsed_ms", "relevance"})
TIME_COLUMNS = frozenset({"fetched_at", "visited_at"})
PANDAS_HINT = "pip install pandas (or, from the repository: .venv/bin/pip install -e '.[notebook]')"


def read_crawl(path: str | Path, *, pandas: bool | None = None) -> CrawlData:
    """The crawl in ``path``; ``pandas``: DataFrames (True), lists of dicts
    (False), or DataFrames if pandas is installed (None). ReportError if
    ``path`` holds no crawl, or pandas=True without pandas."""
    path = Path(path)
    check_is_crawl(path)
    return CrawlData(path, pandas is not False and _pandas_importable(required=bool(pandas)))


def _pandas_importable(required: bool) -> bool:
    try:
        import pandas  # noqa: F401
    except ImportError:
        if required:
            raise ReportError(f"read_crawl(pandas=True) needs pandas: {PANDAS_HINT}") from None
        return False
    return True


class CrawlData:
    """One crawl directory: ``index``, ``edges``, ``visits``, ``stats``,
    ``settings``, ``state``, ``notes`` and ``pages()``."""

    def __init__(self, path: Path, frames: bool):
        self.path = path
        self._frames = frames
        self.notes: list[str] = []   # what was cut off or missing, one sentence each

    def __repr__(self) -> str:
        return f"<crawl {self.path} ({self.state})>"

    @property
    def state(self) -> str:
        """running (a process holds its lock), ended (stats.json is written:
        see stats['stop_reason']), or killed (neither: stopped without a word)."""
        running, _ = crawl_process(self.path)
        if running:
            return "running"
        return "ended" if (self.path / "stats.json").is_file() else "killed"

    @cached_property
    def stats(self) -> dict | None:
        """stats.json, or None while the crawl runs or after a kill."""
        return read_stats(self.path / "stats.json", self.notes)

    @cached_property
    def settings(self) -> dict | None:
        """The settings the crawl runs with (state/settings.json)."""
        try:
            return json.loads((self.path / STATE_DIR / SETTINGS_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None

    @cached_property
    def index(self):
        """One row per fetched URL (index.csv's columns, typed)."""
        header, rows = read_index_cells(self.path / "index.csv", self.notes, typed_row)
        return self._table(rows, header)

    @cached_property
    def edges(self):
        """One row per link found: from_id, from_url, to_url."""
        committed = set(self._ids())
        rows = []
        try:
            with open(self.path / "edges.csv", newline="", encoding="utf-8",
                      errors="replace") as f:
                for cells in csv.reader(complete_lines(f, "edges.csv", self.notes)):
                    if len(cells) == 3 and cells[0].isdigit() and int(cells[0]) in committed:
                        rows.append({"from_id": int(cells[0]), "from_url": cells[1],
                                     "to_url": cells[2]})
        except FileNotFoundError:
            self.notes.append("edges.csv is missing: no links")
        return self._table(rows, ["from_id", "from_url", "to_url"])

    @cached_property
    def visits(self):
        """One row per revisit (visits.csv, after crawler recrawl), typed; empty without one."""
        from controller.visits import VISIT_COLUMNS, VISITS_FILE
        rows = []
        if (self.path / VISITS_FILE).exists():
            with open(self.path / VISITS_FILE, newline="", encoding="utf-8", errors="replace") as f:
                rows = [typed_row(row) for row in csv.DictReader(complete_lines(f, VISITS_FILE, self.notes))
                        if None not in row.values()]
        return self._table(rows, list(VISIT_COLUMNS))

    def pages(self, *, html: bool = True) -> Iterator[dict]:
        """The saved pages one at a time: url, level, status, title, text,
        html bytes (unless html=False) and the index's other fields."""
        return page_records(self.path, html=html)

    def _ids(self) -> list[int]:
        index = self.index
        return [int(i) for i in (index["id"] if self._frames else (r["id"] for r in index))]

    def _table(self, rows: list[dict], columns: list[str]):
        if not self._frames:
            return rows
        import pandas
        frame = pandas.DataFrame.from_records(rows, columns=columns)
        for name in columns:
            if name in INT_COLUMNS or name == "from_id":
                frame[name] = frame[name].astype("Int64")   # nullable: an empty cell stays NA
            elif name in TIME_COLUMNS:
                frame[name] = pandas.to_datetime(frame[name], utc=True)
        return frame


def typed_row(cells: dict[str, str]) -> dict:
    """An index.csv row with its numbers as numbers and empty numbers as None."""
    return {name: _typed(name, value) for name, value in cells.items()}


def _typed(name: str, value: str):
    if name in INT_COLUMNS:
        return int(value) if value else None
    if name in FLOAT_COLUMNS:
        return float(value) if value else None
    if name in TIME_COLUMNS:
        return datetime.fromisoformat(value) if value else None
    return value

"""Reading a crawl directory back: tolerant, read-only, offline.

Owns the readers of the files a crawl leaves (index.csv, trace.log,
stats.json, edges.csv; the layout is in controller/store.py). A crawl
that is still running, or was killed, leaves files whose last line may
be cut in half and no stats.json; the readers keep every complete line,
leave the cut one out, and say so in ``CrawlFiles.notes`` instead of
failing. They never write, so reading a running crawl cannot disturb it
(compare controller/resume.py, which tidies the files before resuming).

Only a directory that holds no crawl at all is an error (``ReportError``,
one line that says what is wrong). Nothing here touches the network.
"""
from __future__ import annotations

import csv
import json
from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from controller.resume import SETTINGS_FILE, STATE_DIR
from controller.store import INDEX_COLUMNS
from controller.tally import ROBOTS_DENIAL

# Columns are only ever added at the end: an index written by 0.1.0 before
# the content columns existed starts with these and is still read.
FIRST_COLUMNS = INDEX_COLUMNS[:INDEX_COLUMNS.index("title") + 1]


class ReportError(Exception):
    """The directory cannot be read as a crawl; the one-line message says why."""


@dataclass(frozen=True)
class PageRow:
    """One index.csv row, with the fields a report needs, typed."""
    id: int
    url: str
    level: int
    status: int | None            # None: no HTTP response (robots, connection, timeout ...)
    content_type: str
    bytes: int
    filtered_ratio: float | None  # None unless the page was saved
    out_links: int
    new_links: int
    page: bool                    # an HTML page (exact duplicates too, as stats.json counts pages)
    saved: bool                   # its own HTML file is in pages/ (see _saved)
    error: str                    # "" or "kind: detail"
    duplicate_of: int | None = None       # id of the page with the same text
    near_duplicate_of: int | None = None  # id of a page within the SimHash distance
    title: str = ""

    @property
    def denied(self) -> bool:
        """robots.txt disallowed it: the site's wish, counted apart from errors."""
        return self.error.startswith(ROBOTS_DENIAL)

    @property
    def failed(self) -> bool:
        return bool(self.error) and not self.denied


@dataclass(frozen=True)
class TraceEvent:
    """One trace.log line: time, event name, and its fields (see controller/trace.py)."""
    time: datetime
    event: str                    # START RESUME FETCH LEVEL END
    fields: tuple[str, ...]


@dataclass(frozen=True)
class Run:
    """One run of the crawler: START (or RESUME) to END, or to its last line if killed."""
    start: datetime
    end: datetime                 # END's time, else the run's last line
    ended: bool                   # an END line closes the run
    stop_reason: str | None       # END's reason: queue-empty, max-pages, interrupted ...
    fetches: tuple[tuple[datetime, int, int], ...]   # (time, body bytes, id) of each FETCH line
    level_ends: tuple[tuple[int, datetime], ...]  # (level, time) of each LEVEL line

    @property
    def seconds(self) -> float:
        return (self.end - self.start).total_seconds()


@dataclass(frozen=True)
class LinkCounts:
    """Link counts from edges.csv, for pages with an index row only."""
    in_links: dict[str, int]      # URL -> pages other than itself that link to it
    out_links: dict[str, int]     # URL -> links listed on that page


@dataclass(frozen=True)
class CrawlFiles:
    path: Path
    rows: tuple[PageRow, ...]     # complete index.csv rows, in file order
    events: tuple[TraceEvent, ...]
    runs: tuple[Run, ...]         # trace.log cut into runs (more than one after --resume)
    stats: dict | None            # None while the crawl runs, or after a kill
    links: LinkCounts
    notes: tuple[str, ...]        # what was missing or cut off, one sentence each
    settings: dict | None = None  # state/settings.json; None in crawls made before it existed


def read_files(path: Path) -> CrawlFiles:
    """Read every file of the crawl in ``path``; ReportError if it holds none."""
    path = Path(path)
    check_is_crawl(path)
    notes: list[str] = []
    rows = _read_index(path / "index.csv", notes)
    events = _read_trace(path / "trace.log", notes)
    stats = read_stats(path / "stats.json", notes)
    links = _read_edges(path / "edges.csv", {row.id for row in rows}, notes)
    settings = _read_settings(path / STATE_DIR / SETTINGS_FILE, notes)
    return CrawlFiles(path, rows, events, runs_of(events), stats, links, tuple(notes), settings)


def check_is_crawl(path: Path) -> None:
    if not path.exists():
        raise ReportError(f"{path} does not exist; give the --out directory of a crawl")
    if not path.is_dir():
        raise ReportError(f"{path} is not a directory; give the --out directory of a crawl")
    try:
        empty = not any(path.iterdir())
    except OSError as exc:
        raise ReportError(f"cannot read {path}: {exc.strerror or exc}") from None
    if empty:
        raise ReportError(f"{path} is empty: no crawl to report on "
                          f"(crawl into it first: crawler crawl SEED --out {path})")
    if not (path / "index.csv").is_file():
        raise ReportError(f"{path} is not a crawl directory: it has no index.csv "
                          f"(give the --out directory of a crawl)")


def _read_lines(path: Path, notes: list[str]) -> list[str] | None:
    """The complete lines of a text file, without newlines; None if the file is absent."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ReportError(f"cannot read {path}: {exc.strerror or exc}") from None
    # A cut can split a UTF-8 sequence; that only ever hits the dropped line.
    text = data.decode("utf-8", errors="replace")
    lines = text.split("\n")
    if lines[-1]:
        notes.append(_cut_off(path.name))
    return lines[:-1]


# -- index.csv ------------------------------------------------------------
def _read_index(path: Path, notes: list[str]) -> tuple[PageRow, ...]:
    return tuple(read_index_cells(path, notes, _page_row)[1])


def read_index_cells(path: Path, notes: list[str], convert=dict) -> tuple[list[str], list]:
    """index.csv's header and its complete rows, each ``convert``-ed from a
    column -> cell dict; a row that is short or that ``convert`` refuses
    (None or ValueError) is left out and counted in ``notes``."""
    lines = _read_lines(path, notes)
    if not lines:
        notes.append("index.csv has no rows yet: the crawl has not recorded a page")
        return list(INDEX_COLUMNS), []
    header, *body = list(csv.reader(lines))
    if tuple(header[:len(FIRST_COLUMNS)]) != FIRST_COLUMNS:
        raise ReportError(f"{path} is not a crawler index: its header is not "
                          f"{','.join(INDEX_COLUMNS[:4])},... (is this a crawl directory?)")
    def row(cells: list[str]):
        try:
            return convert(dict(zip(header, cells))) if len(cells) >= len(header) else None
        except ValueError:
            return None
    return header, _parsed(body, row, notes, "index.csv: {} malformed row(s) left out")


def _parsed(items, parse, notes: list[str], note: str) -> list:
    """What ``parse`` makes of each item; the items it refuses (None) are
    counted into ``notes`` with ``note`` (a format with one {})."""
    kept = [parsed for parsed in map(parse, items) if parsed is not None]
    if len(kept) < len(items):
        notes.append(note.format(len(items) - len(kept)))
    return kept


def _page_row(cells: dict[str, str]) -> PageRow:
    duplicate_of = _optional_int(cells.get("duplicate_of"))
    return PageRow(
        id=int(cells["id"]), url=cells["url"], level=int(cells["level"]),
        status=int(cells["status"]) if cells["status"] else None,
        content_type=cells["content_type"], bytes=int(cells["bytes"] or 0),
        filtered_ratio=float(cells["filtered_ratio"]) if cells["filtered_ratio"] else None,
        out_links=int(cells["out_links"] or 0), new_links=int(cells["new_links"] or 0),
        page=bool(cells["html_path"]), saved=_saved(cells["html_path"], duplicate_of),
        error=cells["error"], duplicate_of=duplicate_of,
        near_duplicate_of=_optional_int(cells.get("near_duplicate_of")), title=cells["title"])


def _saved(html_path: str, duplicate_of: int | None) -> bool:
    """Whether the row's page has an HTML file of its own. A duplicate whose
    bytes equal its original's names the original's file (controller/commit.py,
    as_duplicate): an HTML page, but nothing was saved for it."""
    return bool(html_path) and (duplicate_of is None or html_path != f"pages/{duplicate_of}.html")


def _optional_int(cell: str | None) -> int | None:
    return int(cell) if cell else None


# -- trace.log ------------------------------------------------------------
def _read_trace(path: Path, notes: list[str]) -> tuple[TraceEvent, ...]:
    lines = _read_lines(path, notes)
    if lines is None:
        notes.append("trace.log is missing: no speed over time and no level flags from it")
        return ()
    lines = [line for line in lines if line and not line.startswith("#")]
    return tuple(_parsed(lines, _trace_event, notes, "trace.log: {} malformed line(s) left out"))


def _trace_event(line: str) -> TraceEvent | None:
    parts = line.split(" ")
    if len(parts) < 2:
        return None
    try:
        time = datetime.fromisoformat(parts[0])
    except ValueError:
        return None
    return TraceEvent(time, parts[1], tuple(parts[2:]))


def runs_of(events: tuple[TraceEvent, ...]) -> tuple[Run, ...]:
    """Cut the trace into runs: each START or RESUME begins one, END closes it.
    A recrawl pass's lines (RECRAWL, VISIT) belong to no crawl run: the
    report shows the passes apart (state/recrawl.json)."""
    runs: list[Run] = []
    current: list[TraceEvent] = []
    for event in events:
        if event.event in ("RECRAWL", "VISIT"):
            continue
        if event.event in ("START", "RESUME") and current:
            runs.append(_run(current))   # the run before was killed: no END line
            current = []
        current.append(event)
        if event.event == "END":
            runs.append(_run(current))
            current = []
    if current:
        runs.append(_run(current))
    return tuple(runs)


def _run(events: list[TraceEvent]) -> Run:
    last = events[-1]
    ended = last.event == "END"
    fetches = tuple((e.time, int(e.fields[3]), int(e.fields[1])) for e in events
                    if e.event == "FETCH" and len(e.fields) >= 6 and e.fields[3].isdigit()
                    and e.fields[1].isdigit())
    level_ends = tuple((int(e.fields[0]), e.time) for e in events
                       if e.event == "LEVEL" and e.fields and e.fields[0].isdigit())
    return Run(events[0].time, max(e.time for e in events), ended,
               last.fields[0] if ended and last.fields else None, fetches, level_ends)


# -- stats.json -----------------------------------------------------------
def read_stats(path: Path, notes: list[str]) -> dict | None:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        notes.append("stats.json is missing: the crawl is still running, or was stopped "
                     "before it could finish (killed)")
        return None
    except OSError as exc:
        raise ReportError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        stats = json.loads(text)
    except json.JSONDecodeError:
        notes.append("stats.json is not valid JSON: its totals are left out")
        return None
    return stats if isinstance(stats, dict) else None


# -- state/settings.json ------------------------------------------------------
def _read_settings(path: Path, notes: list[str]) -> dict | None:
    """Written once, as the crawl starts (controller/resume.py, save_settings)."""
    try:
        settings = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, UnicodeError, json.JSONDecodeError) as exc:
        notes.append(f"{STATE_DIR}/{SETTINGS_FILE} cannot be read ({exc}): the settings are left out")
        return None
    return settings if isinstance(settings, dict) else None


# -- edges.csv ------------------------------------------------------------
def _read_edges(path: Path, committed: set[int], notes: list[str]) -> LinkCounts:
    """Counted while streaming: edges.csv is the largest file of a crawl."""
    in_links: Counter[str] = Counter()
    out_links: Counter[str] = Counter()
    try:
        with open(path, newline="", encoding="utf-8", errors="replace") as f:
            for cells in csv.reader(complete_lines(f, path.name, notes)):
                if len(cells) != 3 or not cells[0].isdigit() or int(cells[0]) not in committed:
                    continue   # the header, or a page whose index row is not written yet
                _, source, target = cells
                out_links[source] += 1
                if target != source:
                    in_links[target] += 1
    except FileNotFoundError:
        notes.append("edges.csv is missing: no in-link and out-link counts")
    except OSError as exc:
        raise ReportError(f"cannot read {path}: {exc.strerror or exc}") from None
    return LinkCounts(dict(in_links), dict(out_links))


def complete_lines(f, name: str, notes: list[str]):
    for line in f:
        if line.endswith("\n"):
            yield line
        else:
            notes.append(_cut_off(name))


def _cut_off(name: str) -> str:
    return f"{name}: the last line is cut off (the crawl was writing it, or was killed); it is left out"

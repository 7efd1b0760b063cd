"""QueueJournal: the total queue on disk, so a killed crawl can resume.

Why an append-only text log and not SQLite: the total queue only ever
grows at its end, which is exactly what an append-only file does best;
one ``write`` per batch reaches the kernel before the Controller records
the page that produced the batch, so a ``kill -9`` at any instant leaves
a log whose complete lines are all true (the OS keeps written data when
a process dies). A batch the disk has no room for raises OSError and is
cut off again (``WholeWrites``): the page that produced it is then not
recorded, and --resume fetches it again, as after a kill. ``sync()`` adds fsync for power loss at a few points
(level ends, every few seconds, exit), not per line, because fsync costs
milliseconds. A torn last line (power loss) is ignored on replay.

Lines, tab-separated (URLs are normalized, so they hold no tabs):
  Q <id> <level> <parent_id or -> <url>    a URL appended to the total queue
  S <source_id> <url>                        a redirect target marked seen while
                                             fetching source_id (valid only if
                                             that page's row was committed)
  K <source_id or -> <JSON object>           links not queued, by reason, while
                                             processing source_id (valid only if
                                             its row was committed; - : the seeds);
                                             "patterns": the trap guard's, by pattern
  P <id> <dup> <relevance or -> <targets> <anchors or ->
                                             under an --order other than bfs: what the
                                             order heard of page id (valid only if its
                                             row was committed): dup 1 = a duplicate
                                             (its links lower levels, score nothing);
                                             targets, the known ids it links to, and
                                             anchors, their anchor texts' relevance,
                                             comma-separated (- : all 0.0)

A crawl under another order rebuilds the order's state by replaying its
committed pages' P lines, in the order they were written (the commit
order), through the same calls (urllist/ordered.py, ``resume``); journals
without P lines (bfs) read as before.
"""
from __future__ import annotations

import json
import os
import threading
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator

from urllist.queued import QueuedUrl

SYNC_SECONDS = 5.0
PATTERNS_KEY = "patterns"   # in a K line: the trap guard's refusals by URL pattern


@dataclass(frozen=True)
class ScoredPage:
    """What an order heard of one committed page (a P line)."""
    id: int
    duplicate: bool
    relevance: float | None
    targets: list[int]
    anchors: list[float]


@dataclass(frozen=True)
class SeenMark:
    """An S line: a redirect target marked seen while fetching source_id."""
    source_id: int
    url: str


@dataclass(frozen=True)
class Skipped:
    """A K line: links not queued, by reason, while processing source_id (None: the seeds)."""
    source_id: int | None
    counts: dict


class WholeWrites:
    """An append-only file written one record at a time, each with nothing
    held back in a buffer: a record that cannot be written (disk full, an
    I/O error) raises OSError and is cut off again, so the file ends where
    the last whole record ended, and no later flush or close can complete a
    record the caller was told had failed. Used for every line file a
    crawl appends to (the journal, index.csv, edges.csv, trace.log ...)."""

    def __init__(self, path: Path, mode: str = "a") -> None:
        self.path = Path(path)
        self._file = open(self.path, mode + "b", buffering=0)   # raw: one write() per chunk

    def write(self, data: bytes | str) -> None:
        if isinstance(data, str):
            data = data.encode("utf-8")
        start = self._file.seek(0, os.SEEK_END)
        view = memoryview(data)
        try:
            while view:
                view = view[self._file.write(view):]   # a short write on a filling disk: go on
        except OSError as exc:
            try:
                os.ftruncate(self._file.fileno(), start)
            except OSError:
                pass   # the torn record stays; readers cut it (cut_torn_line)
            raise OSError(exc.errno, exc.strerror, str(self.path)) from None

    def tell(self) -> int:
        return self._file.seek(0, os.SEEK_END)

    def sync(self) -> None:
        """fsync: where a failed write-back (EIO, a full thin disk) shows."""
        try:
            os.fsync(self._file.fileno())
        except OSError as exc:
            raise OSError(exc.errno, exc.strerror, str(self.path)) from None

    def close(self) -> None:
        self._file.close()

    @property
    def closed(self) -> bool:
        return self._file.closed


class QueueJournal:
    def __init__(self, path: Path, *, clock=time.monotonic) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._clock = clock
        self.path.parent.mkdir(parents=True, exist_ok=True)
        cut_torn_line(self.path)
        self._file = WholeWrites(self.path)
        self._last_sync = clock()

    def queued(self, items: Iterable[QueuedUrl]) -> None:
        lines = "".join(f"Q\t{i.id}\t{i.level}\t{'-' if i.parent_id is None else i.parent_id}\t{i.url}\n"
                        for i in items)
        self._write(lines)

    def seen(self, source_id: int, url: str) -> None:
        self._write(f"S\t{source_id}\t{url}\n")

    def skipped(self, source_id: int | None, counts: dict[str, int],
                patterns: dict[str, int] | None = None) -> None:
        """What processing source_id (None: the seeds) did not queue, so that
        a resumed crawl's counts are the uninterrupted crawl's; ``patterns``:
        the trap guard's refusals among them, by URL pattern."""
        if counts:
            source = "-" if source_id is None else source_id
            record = {**counts, PATTERNS_KEY: patterns} if patterns else counts
            self._write(f"K\t{source}\t{json.dumps(record, separators=(',', ':'))}\n")

    def scored(self, page: ScoredPage) -> None:
        """What an order heard of a page: written before the page's row, so
        that --resume can replay it (floats as repr: they read back exact)."""
        relevance = "-" if page.relevance is None else repr(page.relevance)
        anchors = ",".join(map(repr, page.anchors)) if any(page.anchors) else "-"
        self._write(f"P\t{page.id}\t{int(page.duplicate)}\t{relevance}\t"
                    f"{','.join(map(str, page.targets))}\t{anchors}\n")

    def sync(self) -> None:
        with self._lock:
            self._file.sync()
            self._last_sync = self._clock()

    def close(self) -> None:
        try:
            self.sync()
        finally:
            self._file.close()

    def _write(self, lines: str) -> None:
        if not lines:
            return
        with self._lock:
            self._file.write(lines)
        if self._clock() - self._last_sync >= SYNC_SECONDS:
            self.sync()


def replay(path: Path) -> Iterator[QueuedUrl | SeenMark | Skipped | ScoredPage]:
    """The journal's records in file order, read as they are used: a resumed
    crawl of millions of URLs never holds the journal whole. A missing file
    is an empty queue."""
    if not Path(path).exists():
        return
    with open(path, encoding="utf-8") as f:
        for line in f:
            if not line.endswith("\n"):
                return   # torn by power loss: never acknowledged, so never relied on
            fields = line.rstrip("\n").split("\t")
            if fields[0] == "Q":
                parent = None if fields[3] == "-" else int(fields[3])
                yield QueuedUrl(int(fields[1]), fields[4], int(fields[2]), parent)
            elif fields[0] == "S":
                yield SeenMark(int(fields[1]), fields[2])
            elif fields[0] == "K":
                yield Skipped(None if fields[1] == "-" else int(fields[1]), json.loads(fields[2]))
            elif fields[0] == "P":
                yield _scored_page(fields)


def queued(path: Path) -> Iterator[QueuedUrl]:
    """The total queue, in id order, read as it is used."""
    return (record for record in replay(path) if isinstance(record, QueuedUrl))


def queue_and_scores(path: Path) -> tuple[list[QueuedUrl], list[tuple[int, ScoredPage]]]:
    """The total queue, and the P lines in file order, each with the queue's
    length when it was written: what an order replays (urllist/ordered.py),
    which holds its queue in RAM anyway."""
    items: list[QueuedUrl] = []
    scored: list[tuple[int, ScoredPage]] = []
    for record in replay(path):
        if isinstance(record, QueuedUrl):
            items.append(record)
        elif isinstance(record, ScoredPage):
            scored.append((len(items), record))
    return items, scored


def in_level_order(path: Path, marks: list[tuple[int, str]],
                   levels: Iterable[int] | None = None) -> Iterator[tuple[int, str]]:
    """(level, url) of every queued URL and of the redirect ``marks`` (level,
    url), sorted by level and otherwise as journaled, the marks after the
    queue's URLs of their level: the order they were first admitted in.
    Streamed: one pass over the journal when its levels ascend in id order
    (breadth-first), else one pass per level of ``levels``."""
    pending = deque(sorted(marks, key=lambda mark: mark[0]))   # stable: journal order within a level
    passes = [None] if levels is None else sorted(levels)
    for only in passes:
        for item in queued(path):
            if only is None or item.level == only:
                while pending and pending[0][0] < item.level:
                    yield pending.popleft()
                yield item.level, item.url
    yield from pending


def _scored_page(fields: list[str]) -> ScoredPage:
    targets = [int(t) for t in fields[4].split(",") if t]
    anchors = [0.0] * len(targets) if fields[5] == "-" else [float(a) for a in fields[5].split(",")]
    return ScoredPage(int(fields[1]), fields[2] == "1", None if fields[3] == "-" else float(fields[3]),
                      targets, anchors)


def cut_uncommitted_tail(path: Path, done_ids: set[int]) -> None:
    """Cut the journal where the lines of a page that was being committed
    when the crawl stopped begin (its children, its P line; its row never
    written). Only that page can have such lines, and it is the last: pages
    are committed one at a time, so the lines after them belong to pages
    not committed either. Under an order the cut matters: the children,
    queued again when the page is, get their ids and scores at the same
    point as in an uninterrupted crawl, instead of waiting (and being
    fetched) before their page is; and each committed page keeps one P line."""
    if not Path(path).exists():
        return
    offset = 0
    with open(path, "rb") as f:
        for raw in f:
            fields = raw.split(b"\t", 4)
            page = (fields[3] if fields[0] == b"Q" else fields[1] if fields[0] == b"P" else b"-")
            if page != b"-" and int(page) not in done_ids:
                os.truncate(path, offset)
                return
            offset += len(raw)


def cut_torn_line(path: Path) -> None:
    """Cut an incomplete last line of a text file, so appends start on a line
    of their own (also used for index.csv and edges.csv on resume)."""
    if not path.exists():
        return
    with open(path, "rb+") as f:
        size = f.seek(0, os.SEEK_END)
        start = max(0, size - (1 << 20))   # a line is a few KB at most: read only the tail
        f.seek(start)
        tail = f.read()
        end = start + tail.rfind(b"\n") + 1
        if end != size:
            f.truncate(end)

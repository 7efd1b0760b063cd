"""The trace log: the crawl trajectory, one line per event, for people and awk.

Fields are separated by single spaces and never move; later versions only
add fields at the end of a line. URLs are normalized, so they hold no spaces.

  <utc time> START <seed> [<seed> ...]
  <utc time> RESUME <urls done> <queue total>
  <utc time> FETCH <level> <id> <status> <bytes> <ms> <url> [<error ...>]
  <utc time> LEVEL <level> <urls> <new_urls> <m>
  <utc time> END <reason> <urls> <seconds>
  <utc time> TRAP <level> <pattern>
  <utc time> RECRAWL <pass> <pages to revisit>
  <utc time> VISIT <pass> <id> <status> <outcome> <ms> <url> [<error ...>]

status 0 means no HTTP response (see the error); LEVEL is written when a
level is completely processed: urls fetched at that level, new URLs its
pages added to the queue, and m, the queue total at that moment (the
design paper's level flag). TRAP is written once per URL pattern the trap
guard stops following (--max-pattern-depth), when it refuses the first URL
of it, at the level that URL would have had; stats.json counts them all.
"""
from __future__ import annotations

import threading
from datetime import datetime, timezone
from pathlib import Path

from urllist.journal import WholeWrites, cut_torn_line

HEADER = "# time event fields... (see the README, section 'trace.log')\n"


def utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class TraceLog:
    def __init__(self, path: Path, *, append: bool = False) -> None:
        # One write per line, nothing buffered: a line the disk has no room
        # for is not half there (WholeWrites).
        if append:
            cut_torn_line(path)   # a line cut by a kill or a full disk: the next starts on its own
        self._file = WholeWrites(path, "a" if append else "w")
        self._lock = threading.Lock()
        if not append:
            self._file.write(HEADER)

    def start(self, seeds: tuple[str, ...]) -> None:
        self._line("START", *seeds)

    def resume(self, urls_done: int, queue_total: int) -> None:
        self._line("RESUME", urls_done, queue_total)

    def fetch(self, level: int, page_id: int, status: int, size: int, ms: float,
              url: str, error: str = "") -> None:
        self._line("FETCH", *_with_error([level, page_id, status, size, round(ms), url], error))

    def recrawl(self, pass_no: int, pages: int) -> None:
        self._line("RECRAWL", pass_no, pages)

    def visit(self, pass_no: int, page_id: int, status: int, outcome: str, ms: float,
              url: str, error: str = "") -> None:
        self._line("VISIT", *_with_error([pass_no, page_id, status, outcome, round(ms), url], error))

    def level(self, level: int, urls: int, new_urls: int, m: int) -> None:
        self._line("LEVEL", level, urls, new_urls, m)

    def trap(self, level: int, pattern: str) -> None:
        self._line("TRAP", level, pattern)

    def end(self, reason: str, urls: int, seconds: float) -> None:
        self._line("END", reason, urls, f"{seconds:.2f}")

    def close(self) -> None:
        self._file.close()

    def _line(self, event: str, *fields) -> None:
        with self._lock:
            self._file.write(" ".join([utc_now(), event, *map(str, fields)]) + "\n")


def _with_error(fields: list, error: str) -> list:
    """A line's fields, and its error last (on one line) if there is one."""
    return fields + [" ".join(error.split())] if error else fields

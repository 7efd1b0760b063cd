"""Reading a crawl directory in tests, also while a crawler process writes it."""
from __future__ import annotations

import csv
import time
from pathlib import Path


def rows_of(out: Path) -> list[dict]:
    """index.csv rows that are whole (a row being written has no last column yet)."""
    path = out / "index.csv"
    if not path.exists():
        return []
    with open(path, newline="", encoding="utf-8") as f:
        return [row for row in csv.DictReader(f) if row.get("in_links") is not None]


def committed(out: Path) -> int:
    """Rows in index.csv so far, by counting lines: cheap enough to poll."""
    path = out / "index.csv"
    return path.read_bytes().count(b"\n") - 1 if path.exists() else 0


def wait_for_rows(out: Path, proc, target: int, seconds: float = 60) -> None:
    """Until index.csv has ``target`` rows, the process ends, or ``seconds`` pass."""
    deadline = time.monotonic() + seconds
    while committed(out) < target and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)   # polling an observable condition, bounded by the deadline

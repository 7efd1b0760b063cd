"""Reading a crawl directory in tests, also while a crawler process writes it."""
from __future__ import annotations

import csv
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

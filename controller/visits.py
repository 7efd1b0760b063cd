"""visits.csv: one row per revisit of a page (``crawler recrawl``).

index.csv holds one row per URL, describing its latest version; visits.csv
holds the history a revisit schedule learns from: when each page was asked
again, what came back (``outcome``), and, for a changed page, the new
version's fields. A visit's row is its commit mark: the new version's files
are in place before it is written, so a pass killed before the row simply
visits that page again.

Outcomes: ``not-modified`` (the server answered 304 to the conditional
GET), ``unchanged`` (200, and the very bytes stored already), ``changed``
(200 with other bytes: a new version), ``failed`` (no usable answer: an
error, a non-HTML answer, a 4xx/5xx; the stored version stays).
"""
from __future__ import annotations

import csv
import json
import os
from pathlib import Path

from controller.resume import STATE_DIR
from controller.store import cell
from urllist.journal import cut_torn_line

VISITS_FILE = "visits.csv"
RECRAWL_FILE = "recrawl.json"   # under state/: the recrawl passes, the open one's pages
VISIT_COLUMNS = (
    "pass", "id", "url", "visited_at", "outcome", "status", "etag", "last_modified",
    "final_url", "content_type", "encoding", "bytes", "text_chars", "filtered_ratio",
    "out_links", "elapsed_ms", "error", "title", "content_md5", "body_md5", "simhash",
    "duplicate_of", "near_duplicate_of", "hamming", "relevance",
)
ANSWERED = frozenset({"not-modified", "unchanged", "changed"})
# What a changed page's visit sets in its index row (the rest of the row is
# the URL's, not the version's: id, url, level, parent, links counted, paths).
VERSION_FIELDS = ("final_url", "status", "content_type", "encoding", "bytes", "text_chars",
                  "filtered_ratio", "out_links", "elapsed_ms", "error", "title", "content_md5",
                  "body_md5", "simhash", "duplicate_of", "near_duplicate_of", "hamming",
                  "relevance", "etag", "last_modified")


class VisitLog:
    """Appends visit rows, flushed one by one (a kill loses at most the
    rows of visits that then happen again)."""

    def __init__(self, out: Path) -> None:
        path = Path(out) / VISITS_FILE
        cut_torn_line(path)
        self._file = open(path, "a", newline="", encoding="utf-8")
        self._writer = csv.DictWriter(self._file, VISIT_COLUMNS, extrasaction="ignore")
        if self._file.tell() == 0:
            self._writer.writeheader()
            self._file.flush()

    def add(self, row: dict) -> None:
        self._writer.writerow({name: cell(row.get(name)) for name in VISIT_COLUMNS})
        self._file.flush()

    def close(self) -> None:
        self._file.flush()
        os.fsync(self._file.fileno())
        self._file.close()


def read_visits(out: Path) -> list[dict]:
    """Every complete visit row, in the order they happened."""
    path = Path(out) / VISITS_FILE
    if not path.exists():
        return []
    with open(path, newline="", encoding="utf-8") as f:
        return [row for row in csv.DictReader(f) if None not in row.values()
                and len(row) == len(VISIT_COLUMNS)]


def apply_visits(row: dict, visits: list[dict]) -> dict:
    """An index row brought up to date by its visits (in order): the latest
    version's fields, validators, and the counts of visits and changes
    (``fetched_at`` stays the crawl's first fetch; visits.csv has the rest)."""
    row = dict(row)
    answered = [visit for visit in visits if visit["outcome"] in ANSWERED]
    for visit in answered:
        if visit["outcome"] == "changed":
            row.update({name: visit[name] for name in VERSION_FIELDS})
            row["html_path"], row["text_path"] = f"pages/{row['id']}.html", f"text/{row['id']}.txt"
        else:   # a 304 may carry fresher validators, a redirect may end elsewhere now
            row["etag"] = visit["etag"] or row["etag"]
            row["last_modified"] = visit["last_modified"] or row["last_modified"]
            row["final_url"] = visit["final_url"] or row["final_url"]
    row["visits"] = str(1 + len(answered))
    row["changes"] = str(sum(visit["outcome"] == "changed" for visit in answered))
    return row


def recrawl_state(out: Path) -> dict:
    path = Path(out) / STATE_DIR / RECRAWL_FILE
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {"passes": []}


def save_state(out: Path, state: dict) -> None:
    path = Path(out) / STATE_DIR / RECRAWL_FILE
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(state, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)

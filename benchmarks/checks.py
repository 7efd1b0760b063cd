"""Did a run do the work? What the server answered and what the peer saved, against the ground truth.

Two pure checks (files are only read):
- `count_server(entries, truth)`: from one run's access-log entries, how many
  site pages were fetched, how many more than once, how many never;
- `check_saved(saved, truth, site_dir)`: how many site pages the peer saved
  byte-identical to the site's files, and, for a peer that records
  breadth-first levels, how many pages it put on another level than the truth.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from benchmarks.nginx import LogEntry
from benchmarks.peers import SavedPage
from benchmarks.site import GroundTruth


@dataclass(frozen=True)
class ServerCount:
    requests: int          # every request of the run
    connections: int       # distinct TCP connections they came on
    html_fetched: int      # distinct site pages answered with 200
    html_duplicates: int   # requests for site pages beyond the first
    html_missed: int       # site pages never requested
    other: int             # robots.txt, .pdf/.png, 404 links, anything not a site page


@dataclass(frozen=True)
class SavedCheck:
    identical: int              # distinct site pages saved byte-identical to the site's file
    differ: int                 # distinct site pages saved with other bytes
    duplicates: int             # saves of a site page beyond the first
    missing: int                # site pages not saved at all
    other: int                  # saved files that are not site pages (assets, 404 bodies)
    wrong_level: int | None     # pages saved on another level than the truth; None = not checked
    levels: tuple[int, ...] | None   # saved site pages per level, as the peer recorded them


def count_server(entries: list[LogEntry], truth: GroundTruth) -> ServerCount:
    pages = set(truth.html_paths())
    counts = Counter(e.path for e in entries if e.path in pages)
    answered = {e.path for e in entries if e.path in pages and e.status == 200}
    return ServerCount(
        requests=len(entries),
        connections=len({e.connection for e in entries}),
        html_fetched=len(answered),
        html_duplicates=sum(n - 1 for n in counts.values()),
        html_missed=len(pages - set(counts)),
        other=sum(1 for e in entries if e.path not in pages),
    )


def check_saved(saved: list[SavedPage], truth: GroundTruth, site_dir: Path,
                check_levels: bool = False) -> SavedCheck:
    level_of = truth.level_of_path()
    seen: set[str] = set()
    identical = differ = duplicates = other = wrong = 0
    per_level: Counter[int] = Counter()
    for page in saved:
        if page.path not in level_of:
            other += 1
            continue
        if page.path in seen:
            duplicates += 1
            continue
        seen.add(page.path)
        if _same_bytes(page.file, Path(site_dir) / page.path.lstrip("/")):
            identical += 1
        else:
            differ += 1
        if page.level is not None:
            per_level[page.level] += 1
            wrong += page.level != level_of[page.path]
    levels = tuple(per_level[k] for k in range(max(per_level) + 1)) if per_level else ()
    return SavedCheck(identical, differ, duplicates, len(level_of) - len(seen), other,
                      wrong if check_levels else None, levels if check_levels else None)


def _same_bytes(a: Path, b: Path) -> bool:
    try:
        return a.stat().st_size == b.stat().st_size and a.read_bytes() == b.read_bytes()
    except OSError:
        return False

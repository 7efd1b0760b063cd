"""Counters of one crawl: per level, per skip reason, and totals for stats.json."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field


# A robots.txt rule said no: the site's wish, not a failure. (A robots.txt
# answered with 429 or 5xx also stops the fetch, "robots: robots.txt
# unreachable (http 503)", but that is a failing host, so it counts as an
# error; one that got no answer at all files the page under the
# connection's own error.)
ROBOTS_DENIAL = "robots: disallowed"


@dataclass
class LevelTally:
    urls: int = 0        # URLs fetched (rows in index.csv), errors included
    pages: int = 0       # HTML pages (exact duplicates too: their rows point at the first copy's files)
    errors: int = 0      # rows with an error (robots.txt denials are not errors: see robots)
    new_urls: int = 0    # URLs this level's pages added to the queue
    m: int | None = None  # queue total when the level was finished (the level flag)
    duplicates: int = 0  # pages whose text an earlier page already had (duplicate_of)
    near_duplicates: int = 0  # pages within --simhash-distance of an earlier page
    robots: int = 0      # rows disallowed by robots.txt


@dataclass(frozen=True)
class Snapshot:
    """Where the crawl stands, for a progress display."""
    elapsed: float       # seconds since this run started
    level: int           # the level being crawled
    level_done: int      # URLs of that level processed
    level_size: int      # URLs of that level known so far
    urls: int            # URLs processed in total (index rows)
    pages: int           # HTML pages saved
    errors: int
    bytes: int           # body bytes received
    queue_total: int     # URLs ever queued (the total queue's length)
    ahead: int = 0       # pages fetched ahead of their level, waiting (parked or speculative)
    notes: tuple[str, ...] = ()   # lines to say once (what set a host's pace: controller/pace.py)


@dataclass
class Tally:
    levels: list[LevelTally] = field(default_factory=list)
    skipped: Counter = field(default_factory=Counter)   # links not queued, by reason
    errors_by_kind: Counter = field(default_factory=Counter)
    bytes: int = 0
    source_chars: int = 0
    text_chars: int = 0
    ratio_sum: float = 0.0

    def level(self, k: int) -> LevelTally:
        while len(self.levels) <= k:
            self.levels.append(LevelTally())
        return self.levels[k]

    def count_fetch(self, level: int, error: str, saved: bool, new_urls: int, size: int) -> None:
        row = self.level(level)
        row.urls += 1
        row.pages += saved
        row.new_urls += new_urls
        self.bytes += size
        kind = error.split(":", 1)[0]
        if error.startswith(ROBOTS_DENIAL):
            row.robots += 1
        elif error:
            row.errors += 1
            self.errors_by_kind[kind] += 1

    def count_page(self, level: int, error: str, digest, new_urls: int, size: int) -> None:
        saved = bool(digest.html_path)
        self.count_fetch(level, error, saved, new_urls, size)
        self.skipped.update(digest.skipped)
        if saved:
            self.count_text(digest.source_chars, digest.text_chars, digest.filtered_ratio)

    def count_content(self, level: int, duplicate: bool, near: bool) -> None:
        row = self.level(level)
        row.duplicates += duplicate
        row.near_duplicates += near

    def count_row(self, row: dict) -> None:
        """Count an index.csv row of an earlier run (resume)."""
        saved = self._count_level_of_row(row)
        if saved:
            text_chars, ratio = int(row["text_chars"]), float(row["filtered_ratio"])
            # index.csv keeps the ratio, not the source length; this recovers it.
            source = round(text_chars / (1 - ratio)) if ratio < 1 else text_chars
            self.count_text(source, text_chars, ratio)

    def recount_levels(self, rows) -> None:
        """The per-level table again, from index.csv rows whose levels were
        corrected after their fetch (a crawl order other than bfs)."""
        fresh = Tally()
        for row in rows:
            fresh._count_level_of_row(row)
        self.levels = fresh.levels

    def _count_level_of_row(self, row: dict) -> bool:
        saved = bool(row["html_path"])
        self.count_fetch(int(row["level"]), row["error"], saved, int(row["new_links"] or 0),
                         int(row["bytes"] or 0))
        self.count_content(int(row["level"]), bool(row["duplicate_of"]), bool(row["near_duplicate_of"]))
        return saved

    def count_text(self, source_chars: int, text_chars: int, ratio: float) -> None:
        self.source_chars += source_chars
        self.text_chars += text_chars
        self.ratio_sum += ratio

    @property
    def urls(self) -> int:
        return sum(level.urls for level in self.levels)

    @property
    def pages(self) -> int:
        return sum(level.pages for level in self.levels)

    @property
    def errors(self) -> int:
        return sum(level.errors for level in self.levels)

    @property
    def robots_denied(self) -> int:
        return sum(level.robots for level in self.levels)

    def filtered_ratio(self) -> dict:
        overall = 1 - self.text_chars / self.source_chars if self.source_chars else 0.0
        mean = self.ratio_sum / self.pages if self.pages else 0.0
        return {"overall": round(overall, 4), "mean_per_page": round(mean, 4)}

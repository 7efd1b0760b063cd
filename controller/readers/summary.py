"""What a crawl prints when it ends: the per-level table and the summary lines.

Read from the crawl's stats alone, so ``crawler crawl`` loads neither
report.py (``crawler report``: ~10 ms of dataclasses and readers) nor the
files it reads; report.py and plot.py share its level ranges.
"""
from __future__ import annotations

from itertools import count
from pathlib import Path

from controller.pace import text as pace_text

# Levels tables and plots: a crawl with up to LEVELS_ALONE levels shows each;
# a deeper one (a trap followed far, a site of long chains) shows levels
# 0..LEVELS_SHOWN-1 each and the rest in at most MAX_LEVEL_RANGES ranges of
# one round width (10, 20, 50, 100, ...), "30–99", "100–199", ...
LEVELS_ALONE = 40
LEVELS_SHOWN = 30
MAX_LEVEL_RANGES = 10


# -- levels, one by one or in ranges ---------------------------------------
def level_ranges(deepest: int) -> list[tuple[int, int]]:
    """(first, last) level of each row of a levels table or plot over the
    levels 0..deepest: one level a row, or past LEVELS_SHOWN ranges of a
    round width aligned to it (see LEVELS_ALONE)."""
    if deepest < LEVELS_ALONE:
        return [(k, k) for k in range(deepest + 1)]
    width = next(w for w in _round_widths()
                 if deepest // w - LEVELS_SHOWN // w + 1 <= MAX_LEVEL_RANGES)
    ranges = [(k, k) for k in range(LEVELS_SHOWN)]
    while (start := ranges[-1][1] + 1) <= deepest:
        ranges.append((start, min((start // width + 1) * width - 1, deepest)))
    return ranges


def _round_widths():
    for power in count(1):
        for digit in (1, 2, 5):
            yield digit * 10 ** power


def range_label(first: int, last: int) -> str:
    return str(first) if first == last else f"{first}–{last}"


# -- the terminal summary after a crawl -----------------------------------
def level_table(stats: dict, expected: list[tuple[int, int]] | None = None) -> str:
    """The per-level table; with ``expected`` (urls, pages) per level, a check column.
    Past a few dozen levels, ranges of levels share a row (level_ranges)."""
    groups = _stats_level_groups(stats["levels"])
    w = max([5] + [len(label) for label, _ in groups])
    head = (f"{'level':>{w}} {'urls':>7} {'pages':>7} {'errors':>7} {'dups':>5} {'near':>5} "
            f"{'new urls':>9} {'queue m':>8}")
    if expected is not None:
        head += f"  {'expected':>15}"
    lines = [head]
    for label, group in groups:
        m = "" if group["m"] is None else group["m"]
        line = (f"{label:>{w}} {group['urls']:>7} {group['pages']:>7} {group['errors']:>7} "
                f"{group['duplicates']:>5} {group['near_duplicates']:>5} "
                f"{group['new_urls']:>9} {m:>8}")
        if expected is not None:
            line += "  " + _expected_cell(group, expected)
        lines.append(line)
    levels = stats["levels"]
    lines.append(f"{'total':>{w}} {stats['urls']:>7} {stats['pages']:>7} {stats['errors']:>7} "
                 f"{sum(row.get('duplicates', 0) for row in levels):>5} "
                 f"{sum(row.get('near_duplicates', 0) for row in levels):>5}")
    return "\n".join(lines)


def _stats_level_groups(levels: list[dict]) -> list[tuple[str, dict]]:
    """stats.json's level rows in the rows of level_ranges: (label, sums)."""
    if not levels:
        return []
    groups = []
    for first, last in level_ranges(max(row["level"] for row in levels)):
        members = [row for row in levels if first <= row["level"] <= last]
        if members:
            sums = {name: sum(row.get(name, 0) for row in members)
                    for name in ("urls", "pages", "errors", "duplicates", "near_duplicates",
                                 "new_urls")}
            last_m = members[-1]["m"] if members[-1]["level"] == last else None
            groups.append((range_label(first, last), dict(sums, level=first, last=last, m=last_m)))
    return groups


def _expected_cell(row: dict, expected: list[tuple[int, int]]) -> str:
    k, last = row["level"], row["last"]
    if last >= len(expected):
        return f"{'(none) MISMATCH':>15}"
    urls = sum(level[0] for level in expected[k:last + 1])
    pages = sum(level[1] for level in expected[k:last + 1])
    verdict = "ok" if (row["urls"], row["pages"]) == (urls, pages) else "MISMATCH"
    return f"{urls:>4} / {pages:>4} {verdict}"


def summary_lines(stats: dict, out: Path) -> list[str]:
    this_run = stats.get("urls_this_run", stats["urls"])
    resumed = f", {this_run} of them in this run" if this_run != stats["urls"] else ""
    pages = pages_text(stats["pages"], (stats.get("content") or {}).get("duplicates", 0))
    robots = stats.get("robots_denied", 0)
    denied = f", {robots} denied by robots.txt" if robots else ""
    share = "this worker's share: " if stats.get("shared") else ""   # a shared crawl's worker
    return [
        f"stopped: {stats.get('stop_detail') or stats['stop_reason']} after "
        f"{stats['elapsed_seconds']:.1f} s — {share}{stats['urls']} URLs{resumed}, {pages}, "
        f"{stats['errors']} errors{denied} ({_rates(stats)}, {stats['kb_per_second']:.0f} KB/s)",
        f"output:  {out}/  pages/ text/ index.csv edges.csv trace.log stats.json"
        + _extra_files(stats),
    ] + _content_lines(stats) + _sitemap_lines(stats.get("sitemaps")) + _pace_lines(stats.get("pace"))


def _pace_lines(pace: dict | None) -> list[str]:
    said = pace_text(pace) if pace else ""
    return [said] if said else []


def _sitemap_lines(found: dict | None) -> list[str]:
    """What --sitemaps / --sitemap read, and each sitemap refused (its one line)."""
    if found is None:
        return []
    dropped = sum(found["dropped"].values())
    lines = [f"sitemaps: {found['files']} files read, {found['listed']} URLs listed, "
             f"{found['queued']} queued" + (f", {dropped} left out (out of scope or of its site, "
                                            f"or over a limit)" if dropped else "")]
    return lines + [f"sitemap refused: {problem}" for problem in found["problems"]]


def pages_text(pages: int, duplicates: int) -> str:
    """HTML pages, of which exact duplicates keep no text of their own."""
    if not duplicates:
        return f"{pages} pages saved"
    return f"{pages} HTML pages ({duplicates} duplicates of earlier pages)"


def _rates(stats: dict) -> str:
    """URLs/s counts every fetch, pages/s the HTML pages (as in stats.json)."""
    return f"{stats['urls_per_second']:.1f} URLs/s, {stats['pages_per_second']:.1f} pages/s"


def _extra_files(stats: dict) -> str:
    settings = stats.get("settings", {})
    names = [name for name, on in (("extracted.csv", settings.get("extract")),
                                   ("extracted.jsonl", settings.get("extract_jsonl")),
                                   ("crawl.warc.gz", settings.get("warc")),
                                   ("sitemaps.csv", "sitemaps" in stats)) if on]
    return "".join(f" {name}" for name in names)


def order_text(order: dict) -> str:
    """A crawl order's line: its name, the levels it corrected, what ordering cost."""
    return (f"{order['order']}: {order['level_corrections']} level corrections (a shorter path "
            f"found after the URL), {order['deferred_beyond_depth']} URLs only beyond --max-depth, "
            f"ordering CPU {order['cpu_seconds']:.3f} s")


def _content_lines(stats: dict) -> list[str]:
    content = stats.get("content") or {}
    lines = [f"order:   {order_text(stats['order'])}"] if stats.get("order") else []
    if content.get("mode", "off") != "off":
        near = (f", {content['near_duplicates']} near duplicates"
                if content["mode"] == "near" else "")
        lines.append(f"content: {content['duplicates']} exact duplicates (text not saved "
                     f"again, links not followed){near}")
    extraction = content.get("extraction")
    if extraction:
        lines.append(f"extract: {extraction['extracted']:,} of {extraction['records']:,} records "
                     f"({100 * extraction['rate']:.1f}%) from {extraction['pages']:,} pages")
    return lines

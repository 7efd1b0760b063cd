"""Reports on a crawl: `crawler report DIR`.

Owns ``build_report`` / ``render_report``, which read a crawl directory
afterwards, or while it runs, or after it was killed (through
controller/readers/files.py, so partial files are fine and said to be partial)
and render it as text, Markdown or JSON (and, from the same ``sections``,
as HTML: controller/readers/html.py). Reading a report never needs the
network or the crawl's seeds. What a crawl prints when it ends (the
levels table, the summary lines) is controller/readers/summary.py's.

Definitions used throughout, as in stats.json: "URLs/s" counts every
fetched URL (an index.csv row, errors included), "pages/s" only the HTML
pages among them; KB = 1024 bytes of response body; crawl time is the sum of the
runs' lengths (START or RESUME to END), so the pause before a
``--resume`` is not counted.
"""
from __future__ import annotations

import json
from collections import Counter
from dataclasses import asdict, dataclass, fields
from datetime import datetime
from pathlib import Path

from controller.lock import holder
from controller.readers import REPORT_FORMATS, TOP_LINKS
from controller.readers.files import CrawlFiles, PageRow, ReportError, Run, read_files
from controller.readers.summary import (LEVELS_ALONE, LEVELS_SHOWN, level_ranges, order_text, pages_text,
                                        range_label)
from controller.resume import lock_path
from controller.pace import text as pace_text
from controller.stats import TRAP_NOTE, trap_note
from controller.visits import recrawl_state
from controller.readers.tables import Table

__all__ = ["Report", "ReportError", "build_report", "render_report", "sections",
           "settings_section"]

PEAK_WINDOW_SECONDS = 1.0     # the peak rate is the busiest span of this length
EXAMPLES_PER_ERROR_KIND = 3
PARTIAL_TITLE = "Partial or incomplete files"   # the section of Report.notes
TITLE_CHARS = 60              # longer titles are cut, so the top-pages tables stay readable
QUANTILES = ((0.0, "min"), (0.1, "p10"), (0.25, "p25"), (0.5, "median"), (0.75, "p75"),
             (0.9, "p90"), (1.0, "max"))
HISTOGRAM_BUCKETS = 10        # equal widths over 0..1
# Timeline bucket widths in seconds; the smallest giving at most
# MAX_TIMELINE_BUCKETS buckets is used, so a plot has a readable number of points.
TIMELINE_WIDTHS = (0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 1800, 3600)
MAX_TIMELINE_BUCKETS = 120


# -- levels, one by one or in ranges ---------------------------------------
def grouped_levels(rows: tuple[LevelRow, ...]) -> list[tuple[str, LevelRow]]:
    """(label, the rows' sums) per row of level_ranges; a range's level is
    its first, its m its last level's (None if that one is not finished)."""
    if not rows:
        return []
    groups = []
    for first, last in level_ranges(max(row.level for row in rows)):
        members = [row for row in rows if first <= row.level <= last]
        if not members:
            continue
        sums = {f.name: sum(getattr(row, f.name) for row in members)
                for f in fields(LevelRow) if f.name not in ("level", "m")}
        groups.append((range_label(first, last),
                       LevelRow(level=first, m=members[-1].m if members[-1].level == last else None,
                                **sums)))
    return groups


# -- the report's values ----------------------------------------------------
@dataclass(frozen=True)
class LevelRow:
    level: int
    urls: int          # URLs fetched at this level (index rows), errors included
    pages: int         # HTML pages (exact duplicates too, as stats.json counts them)
    errors: int
    new_urls: int      # URLs this level's pages added to the queue
    m: int | None      # queue total when the level was finished; None: not finished
    duplicates: int = 0       # rows with duplicate_of (exact: same text as an earlier page)
    near_duplicates: int = 0  # rows with near_duplicate_of
    saved: int = 0            # pages with an HTML file of their own (PageRow.saved)


@dataclass(frozen=True)
class Count:
    value: str         # a status code ("none" = no HTTP response) or a media type
    count: int


@dataclass(frozen=True)
class ErrorExample:
    url: str
    detail: str        # the error after its "kind:"


@dataclass(frozen=True)
class ErrorGroup:
    kind: str          # robots, timeout, connection, redirect, too-large, http, ...
    count: int
    examples: tuple[ErrorExample, ...]   # the first few, in crawl order


@dataclass(frozen=True)
class Speed:
    crawl_seconds: float                 # summed over the runs, from trace.log
    fetches: int                         # FETCH lines
    bytes: int
    average_urls_per_second: float | None
    average_pages_per_second: float | None   # HTML pages only
    average_kb_per_second: float | None
    peak_urls_per_second: float | None   # busiest PEAK_WINDOW_SECONDS; None if the crawl was shorter
    peak_pages_per_second: float | None
    peak_kb_per_second: float | None
    peak_window_seconds: float


@dataclass(frozen=True)
class Quantile:
    name: str          # "min", "p10", ..., "max"
    value: float


@dataclass(frozen=True)
class Bucket:
    low: float
    high: float
    pages: int


@dataclass(frozen=True)
class RatioSummary:
    """TextFilter's filtered ratio (share of a page's HTML removed), over saved pages."""
    pages: int
    mean: float | None
    overall: float | None             # 1 - all text / all HTML, from stats.json
    quantiles: tuple[Quantile, ...]
    histogram: tuple[Bucket, ...]


@dataclass(frozen=True)
class LinkCount:
    url: str
    links: int
    title: str = ""    # the page's <title>, if it was fetched


@dataclass(frozen=True)
class Timeline:
    """Fetches over crawl time in equal buckets: what the plot draws."""
    bucket_seconds: float
    fetches: tuple[int, ...]          # FETCH lines per bucket
    bytes: tuple[int, ...]            # body bytes per bucket
    resumed_at: tuple[float, ...]     # crawl seconds where a --resume run began
    level_ends: tuple[tuple[int, float], ...]  # (level, crawl seconds) when each level finished


@dataclass(frozen=True)
class Report:
    crawl_dir: str
    finished: bool                    # stats.json and an END line for the last run
    stop_reason: str | None           # from the last END line (or stats.json); None if unknown
    notes: tuple[str, ...]            # why the report is partial, what was left out
    seeds: tuple[str, ...]
    started_at: str | None            # UTC, ISO 8601, from the first trace line
    runs: int                         # crawler runs in trace.log: 1 + number of --resume
    urls: int
    pages: int                        # HTML pages, exact duplicates included (as stats.json)
    saved: int                        # of them, with an HTML file of their own in pages/
    errors: int                       # robots.txt denials not included
    robots_denied: int
    bytes: int
    levels: tuple[LevelRow, ...]
    status_codes: tuple[Count, ...]
    content_types: tuple[Count, ...]
    errors_by_kind: tuple[ErrorGroup, ...]
    speed: Speed
    filtered_ratio: RatioSummary
    top_in_links: tuple[LinkCount, ...]   # links from other pages; self-links not counted
    top_out_links: tuple[LinkCount, ...]  # links listed on the page (as index.csv's out_links)
    dedup: dict | None                # stats.json "dedup": the URL-seen algorithm's counters
    skipped_links: dict | None        # stats.json "skipped_links": links not queued, by reason
    timeline: Timeline
    content: dict | None = None       # stats.json "content": duplicates and extraction, flattened
    running: bool | None = None       # a crawl holds the directory's lock now; None: it has no lock file
    pid: int | None = None            # the process of that crawl
    settings: dict | None = None      # state/settings.json: the crawl's settings, as CrawlConfig's fields
    order: dict | None = None         # stats.json "order": a crawl order other than bfs, its corrections
    sitemaps: dict | None = None      # stats.json "sitemaps": what --sitemaps / --sitemap read
    recrawls: tuple[dict, ...] = ()   # state/recrawl.json: each crawler recrawl pass and its summary
    trap_patterns: dict | None = None  # stats.json "trap_patterns": pattern -> links not followed
    pace: dict | None = None          # stats.json "pace": what set each host's interval


# -- building it --------------------------------------------------------------
def build_report(crawl_dir: Path, *, top: int = TOP_LINKS) -> Report:
    """Read the crawl in ``crawl_dir`` (finished, running or killed) into a Report.

    Raises ReportError (one-line message) when the directory is missing,
    empty, unreadable or holds no crawl (no index.csv).
    """
    files = read_files(Path(crawl_dir))
    runs = files.runs
    # Without a trace, stats.json alone says a run reached its end.
    ended = runs[-1].ended if runs else files.stats is not None
    notes = list(files.notes)
    running, pid = crawl_process(Path(crawl_dir))
    if runs and not ended:
        notes.append(f"trace.log has no END line for the last run: {_liveness(running, pid)}")
    rows = files.rows
    return Report(
        crawl_dir=str(files.path), finished=files.stats is not None and ended,
        stop_reason=_stop_reason(runs, files.stats), notes=tuple(notes),
        seeds=_seeds(files), started_at=_iso(runs[0].start) if runs else None,
        runs=len(runs), urls=len(rows), pages=sum(r.page for r in rows),
        saved=sum(r.saved for r in rows),
        errors=sum(r.failed for r in rows), robots_denied=sum(r.denied for r in rows),
        bytes=sum(r.bytes for r in rows),
        levels=_levels(rows, files.events, files.stats),
        status_codes=_status_codes(rows), content_types=_content_types(rows),
        errors_by_kind=_errors_by_kind(rows), speed=_speed(runs, {row.id for row in rows if row.page}),
        filtered_ratio=_ratio_summary(rows, files.stats),
        top_in_links=_top(files.links.in_links, top, rows),
        top_out_links=_top(files.links.out_links, top, rows),
        dedup=(files.stats or {}).get("dedup"), skipped_links=(files.stats or {}).get("skipped_links"),
        trap_patterns=(files.stats or {}).get("trap_patterns"),
        content=_content(files.stats),
        timeline=_timeline(runs), running=running, pid=pid, settings=files.settings,
        order=(files.stats or {}).get("order"), sitemaps=(files.stats or {}).get("sitemaps"),
        recrawls=_recrawls(Path(crawl_dir)), pace=(files.stats or {}).get("pace"))


def _recrawls(crawl_dir: Path) -> tuple[dict, ...]:
    """The passes of crawler recrawl (controller/revisits.py writes them), without the page lists."""
    try:
        passes = recrawl_state(crawl_dir)["passes"]
        return tuple({k: v for k, v in p.items() if k != "chosen"} for p in passes)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return ()


def recrawl_text(passes: tuple[dict, ...]) -> str:
    last = passes[-1]
    summary = last.get("summary")
    said = (f"pass {last['pass']}, {last['state']}" if summary is None else
            f"last: {summary['asked']} pages asked, " + ", ".join(
                f"{summary.get(k, 0)} {k}" for k in ("not-modified", "unchanged", "changed", "failed")))
    return f"{len(passes)} pass" + ("" if len(passes) == 1 else "es") + f" ({said})"


def crawl_process(crawl_dir: Path) -> tuple[bool | None, int | None]:
    """Whether a crawl holds the directory's lock (None: there is no lock file,
    as in crawls made before it existed), and that crawl's pid."""
    path = lock_path(crawl_dir)
    held = holder(path)
    if held is not None:
        return True, held.pid
    return (False if path.exists() else None), None


def _liveness(running: bool | None, pid: int | None) -> str:
    if running:
        return f"the crawl is running (pid {pid})" if pid else "the crawl is running"
    if running is False:
        return "the crawl was killed, or crashed (no process holds its lock)"
    return "the crawl is still running, or was killed"


def _iso(moment: datetime) -> str:
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _stop_reason(runs: tuple[Run, ...], stats: dict | None) -> str | None:
    if runs:
        return runs[-1].stop_reason
    return (stats or {}).get("stop_reason")


def _seeds(files: CrawlFiles) -> tuple[str, ...]:
    for event in files.events:
        if event.event == "START":
            return event.fields
    return tuple((files.stats or {}).get("seeds", ()))


def _levels(rows: tuple[PageRow, ...], events, stats: dict | None) -> tuple[LevelRow, ...]:
    """Counts from index.csv; m from trace.log LEVEL lines, else from stats.json."""
    flags = {int(e.fields[0]): int(e.fields[3]) for e in events
             if e.event == "LEVEL" and len(e.fields) >= 4 and e.fields[0].isdigit()}
    for row in (stats or {}).get("levels", []):
        if row.get("m") is not None:
            flags.setdefault(row["level"], row["m"])
    by_level: dict[int, list[PageRow]] = {}
    for row in rows:
        by_level.setdefault(row.level, []).append(row)
    return tuple(
        LevelRow(k, len(group), sum(r.page for r in group), sum(r.failed for r in group),
                 sum(r.new_links for r in group), flags.get(k),
                 sum(r.duplicate_of is not None for r in group),
                 sum(r.near_duplicate_of is not None for r in group),
                 saved=sum(r.saved for r in group))
        for k, group in sorted(by_level.items()))


def _status_codes(rows: tuple[PageRow, ...]) -> tuple[Count, ...]:
    counts = Counter(row.status for row in rows)
    ordered = sorted(counts, key=lambda code: (code is None, code or 0))
    return tuple(Count("none" if code is None else str(code), counts[code]) for code in ordered)


def _content_types(rows: tuple[PageRow, ...]) -> tuple[Count, ...]:
    counts = Counter(row.content_type.split(";")[0].strip().lower() or "none" for row in rows)
    return tuple(Count(kind, n) for kind, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def _errors_by_kind(rows: tuple[PageRow, ...]) -> tuple[ErrorGroup, ...]:
    groups: dict[str, list[ErrorExample]] = {}
    for row in rows:
        if row.error:   # denials too: the table shows which URLs robots.txt kept out
            kind, _, detail = row.error.partition(":")
            groups.setdefault(kind.strip(), []).append(ErrorExample(row.url, detail.strip()))
    ordered = sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    return tuple(ErrorGroup(kind, len(found), tuple(found[:EXAMPLES_PER_ERROR_KIND]))
                 for kind, found in ordered)


def _run_offsets(runs: tuple[Run, ...]) -> list[float]:
    """The crawl second at which each run begins: the pauses between runs cut out."""
    offsets, total = [], 0.0
    for run in runs:
        offsets.append(total)
        total += run.seconds
    return offsets


def _crawl_times(runs: tuple[Run, ...]) -> list[tuple[float, int]]:
    """(crawl seconds, body bytes, id) of every fetch, in time order."""
    return sorted((offset + (t - run.start).total_seconds(), size, page_id)
                  for run, offset in zip(runs, _run_offsets(runs))
                  for t, size, page_id in run.fetches)


def _speed(runs: tuple[Run, ...], page_ids: set[int]) -> Speed:
    fetches = _crawl_times(runs)
    seconds = sum(run.seconds for run in runs)
    total = sum(size for _, size, _ in fetches)
    pages = sum(page_id in page_ids for _, _, page_id in fetches)
    peak = (_busiest_window(fetches, page_ids, PEAK_WINDOW_SECONDS)
            if seconds >= PEAK_WINDOW_SECONDS else None)

    def rate(count: float, span: float) -> float | None:
        return round(count / span, 2) if span > 0 else None

    return Speed(
        crawl_seconds=round(seconds, 3), fetches=len(fetches), bytes=total,
        average_urls_per_second=rate(len(fetches), seconds),
        average_pages_per_second=rate(pages, seconds),
        average_kb_per_second=rate(total / 1024, seconds),
        peak_urls_per_second=rate(peak[0], PEAK_WINDOW_SECONDS) if peak else None,
        peak_pages_per_second=rate(peak[1], PEAK_WINDOW_SECONDS) if peak else None,
        peak_kb_per_second=rate(peak[2] / 1024, PEAK_WINDOW_SECONDS) if peak else None,
        peak_window_seconds=PEAK_WINDOW_SECONDS)


def _busiest_window(fetches: list[tuple[float, int, int]], page_ids: set[int],
                    width: float) -> tuple[int, int, int]:
    """Most fetches, most HTML pages and most bytes, each in any span
    [t, t + width) (two pointers, O(n)).

    A span can always be slid right until it starts at a fetch without
    losing one, so spans starting at each fetch are the only ones to try.
    """
    best_count = best_pages = best_bytes = 0
    end = in_pages = in_bytes = 0
    for start, (t0, _, _) in enumerate(fetches):
        while end < len(fetches) and fetches[end][0] < t0 + width:
            in_bytes += fetches[end][1]
            in_pages += fetches[end][2] in page_ids
            end += 1
        best_count = max(best_count, end - start)
        best_pages = max(best_pages, in_pages)
        best_bytes = max(best_bytes, in_bytes)
        in_bytes -= fetches[start][1]
        in_pages -= fetches[start][2] in page_ids
    return best_count, best_pages, best_bytes


def _timeline(runs: tuple[Run, ...]) -> Timeline:
    fetches = _crawl_times(runs)
    seconds = sum(run.seconds for run in runs)
    width = next((w for w in TIMELINE_WIDTHS if seconds / w <= MAX_TIMELINE_BUCKETS),
                 TIMELINE_WIDTHS[-1])
    n = int(seconds // width) + 1 if fetches else 0
    counts, sizes = [0] * n, [0] * n
    for t, size, _ in fetches:
        k = min(int(t // width), n - 1)
        counts[k] += 1
        sizes[k] += size
    offsets = _run_offsets(runs)
    level_ends = tuple((level, round(offset + (t - run.start).total_seconds(), 3))
                       for run, offset in zip(runs, offsets) for level, t in run.level_ends)
    resumed = tuple(round(offset, 3) for offset in offsets[1:])
    return Timeline(float(width), tuple(counts), tuple(sizes), resumed, level_ends)


def _ratio_summary(rows: tuple[PageRow, ...], stats: dict | None) -> RatioSummary:
    values = sorted(r.filtered_ratio for r in rows if r.page and r.filtered_ratio is not None)
    overall = ((stats or {}).get("filtered_ratio") or {}).get("overall")
    if not values:
        return RatioSummary(0, None, overall, (), ())
    quantiles = tuple(Quantile(name, round(_quantile(values, q), 4)) for q, name in QUANTILES)
    return RatioSummary(len(values), round(sum(values) / len(values), 4), overall, quantiles,
                        _histogram(values))


def _quantile(ordered: list[float], q: float) -> float:
    """Linear interpolation between the two nearest ranks (numpy's default)."""
    position = q * (len(ordered) - 1)
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def _histogram(ordered: list[float]) -> tuple[Bucket, ...]:
    """Equal buckets over 0..1, each [low, high); the last one includes 1.0."""
    counts = [0] * HISTOGRAM_BUCKETS
    for value in ordered:
        # The tiny nudge keeps 0.3 (stored as 0.29999...) out of the bucket below it.
        k = int(min(max(value, 0.0), 1.0) * HISTOGRAM_BUCKETS + 1e-9)
        counts[min(k, HISTOGRAM_BUCKETS - 1)] += 1
    return tuple(Bucket(k / HISTOGRAM_BUCKETS, (k + 1) / HISTOGRAM_BUCKETS, counts[k])
                 for k in range(HISTOGRAM_BUCKETS))


def _top(counts: dict[str, int], n: int, rows: tuple[PageRow, ...]) -> tuple[LinkCount, ...]:
    ordered = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:n]
    wanted = {url for url, _ in ordered}
    titles = {row.url: row.title for row in rows if row.url in wanted}
    return tuple(LinkCount(url, links, titles.get(url, "")) for url, links in ordered)


# -- rendering ----------------------------------------------------------------
def duration_text(seconds: float) -> str:
    """A duration a person reads at once: 3.2 s, 18.5 min, 2.3 h."""
    if seconds < 120:
        return f"{seconds:.1f} s"
    return f"{seconds / 60:.1f} min" if seconds < 7200 else f"{seconds / 3600:.1f} h"


def render_report(report: Report, fmt: str = "text") -> str:
    """The report as ``text`` (aligned columns), ``markdown`` (pipe tables) or ``json``."""
    if fmt == "json":
        return json.dumps(asdict(report), indent=2, ensure_ascii=False) + "\n"
    if fmt not in REPORT_FORMATS:
        raise ValueError(f"unknown report format {fmt!r}; use one of {', '.join(REPORT_FORMATS)}")
    tables = sections(report)
    if fmt == "markdown":
        blocks = [f"# Crawl report: `{report.crawl_dir}`"] + [t.to_markdown() for t in tables]
    else:
        blocks = [f"Crawl report: {report.crawl_dir}"] + [t.to_text() for t in tables]
    return "\n\n".join(blocks) + "\n"


def sections(report: Report) -> list[Table]:
    """The report's sections, in order: what every format renders."""
    sections = [_overview(report)]
    if report.notes:
        sections.append(Table(PARTIAL_TITLE, (), (), report.notes))
    sections += [_level_section(report), _speed_section(report.speed),
                 _count_section("Status codes", "status", report.status_codes, report.urls,
                                "none = no HTTP response (robots.txt denial, connection error, "
                                "timeout); after redirects, the final status"),
                 _count_section("Content types", "media type", report.content_types, report.urls,
                                "only HTML bodies are downloaded and saved"),
                 _error_section(report.errors_by_kind), *_ratio_sections(report.filtered_ratio),
                 _link_section("Top pages by in-links", "in-links", report.top_in_links,
                               "pages other than itself that link to the URL (edges.csv)"),
                 _link_section("Top pages by out-links", "out-links", report.top_out_links,
                               "distinct in-scope links on the page (edges.csv)"),
                 _dict_section("Dedup counters", "counter", report.dedup,
                               "the URL-seen algorithm's counters, from stats.json"),
                 _dict_section("Skipped links", "reason", report.skipped_links,
                               "links not queued, by reason, from stats.json"),
                 _dict_section("Content", "counter", report.content, _content_note(report.content))]
    return sections


def _content_note(content: dict | None) -> str:
    note = "pages marked duplicate_of / near_duplicate_of in index.csv, from stats.json"
    if content and "extraction records" in content:
        note += "; extraction records: (page, NAME) pairs whose pattern matched"
    return note


def _content(stats: dict | None) -> dict | None:
    content = (stats or {}).get("content")
    if content is None:
        return None
    flat = {key: value for key, value in content.items() if key != "extraction"}
    extraction = content.get("extraction")
    if extraction:
        flat["extraction pages"] = extraction["pages"]
        flat["extraction records"] = f"{extraction['extracted']} of {extraction['records']}"
        flat["extraction rate"] = f"{100 * extraction['rate']:.1f}%"
        for name, missed in extraction["missed_by_name"].items():
            flat[f"pages where {name} matched nothing"] = missed
    return flat


def _overview(report: Report) -> Table:
    if report.finished:
        state = f"finished: {report.stop_reason}"
    elif report.running:
        state = f"PARTIAL: running (pid {report.pid})" if report.pid else "PARTIAL: running"
    elif report.stop_reason:
        state = f"PARTIAL: stopped ({report.stop_reason}) but the files are incomplete"
    elif report.running is False:
        state = "PARTIAL: killed before it finished"
    else:
        state = "PARTIAL: still running, or killed before it finished"
    runs = f"{report.runs} run" + ("" if report.runs == 1 else "s")
    pages = _saved_pages(report)
    rows = [("state", state), ("seeds", " ".join(report.seeds) or "unknown"),
            ("started", report.started_at or "unknown"),
            ("crawl time", f"{duration_text(report.speed.crawl_seconds)} in {runs}"),
            ("totals", f"{report.urls} URLs fetched, {pages}, {report.errors} errors"
                       + (f", {report.robots_denied} denied by robots.txt" if report.robots_denied else "")
                       + f", {report.bytes / 1024:.0f} KB of bodies")]
    if report.order:
        rows.append(("order", order_text(report.order)))
    if report.sitemaps:
        rows.append(("sitemaps", f"{report.sitemaps['files']} files read, {report.sitemaps['listed']} "
                                 f"URLs listed, {report.sitemaps['queued']} queued, "
                                 f"{len(report.sitemaps['problems'])} refused"))
    if report.recrawls:
        rows.append(("recrawls", recrawl_text(report.recrawls)))
    if report.trap_patterns:
        rows.append(("trap guard", trap_note(report.trap_patterns).removeprefix(TRAP_NOTE)))
    if report.pace and pace_text(report.pace):
        rows.append(("pace", pace_text(report.pace).removeprefix("pace ")))
    return Table("Overview", ("", ""), tuple(rows))


def _saved_pages(report: Report) -> str:
    duplicates = sum(level.duplicates for level in report.levels)
    if not duplicates:
        return pages_text(report.pages, 0)
    return (f"{report.pages} HTML pages, {report.saved} saved ({duplicates} duplicates of earlier "
            f"pages, {report.pages - report.saved} of them byte-equal: not saved again)")


def _level_section(report: Report) -> Table:
    rows = [(label, str(r.urls), str(r.pages), str(r.errors), str(r.duplicates),
             str(r.near_duplicates), str(r.new_urls), "…" if r.m is None else str(r.m))
            for label, r in grouped_levels(report.levels)]
    rows.append(("total", str(report.urls), str(report.pages), str(report.errors),
                 str(sum(r.duplicates for r in report.levels)),
                 str(sum(r.near_duplicates for r in report.levels)),
                 str(sum(r.new_urls for r in report.levels)), ""))
    notes = ["m = the queue total when the level was finished (the design paper's level flag); "
             "… = the level is not finished",
             f"past {LEVELS_ALONE} levels, levels from {LEVELS_SHOWN} on share rows: a range's "
             f"numbers are its levels' sums, its m its last level's (every level: --format json)",
             "pages = HTML pages, duplicates included; dups = pages whose text an earlier page had "
             "(duplicate_of: text not saved again, nor the HTML when the bytes are equal too; links "
             "not followed); near = within the SimHash distance of an earlier page "
             "(near_duplicate_of, with --content-dedup near)"]
    return Table("Levels", ("level", "urls", "pages", "errors", "dups", "near", "new urls",
                            "queue m"), tuple(rows), tuple(notes), align="rrrrrrrr", totals=1)


def _speed_section(speed: Speed) -> Table:
    def cell(value: float | None) -> str:
        return "—" if value is None else f"{value:.1f}"
    window = f"peak (busiest {speed.peak_window_seconds:g} s)"
    rows = (("average", cell(speed.average_urls_per_second), cell(speed.average_pages_per_second),
             cell(speed.average_kb_per_second)),
            (window, cell(speed.peak_urls_per_second), cell(speed.peak_pages_per_second),
             cell(speed.peak_kb_per_second)))
    notes = (f"from trace.log: {speed.fetches} fetches over {speed.crawl_seconds:.1f} s of crawling; "
             f"URLs/s counts every fetched URL, errors included; pages/s only the HTML pages; "
             f"KB = 1024 bytes of body",)
    return Table("Speed", ("", "URLs/s", "pages/s", "KB/s"), rows, notes)


def _count_section(title: str, name: str, counts: tuple[Count, ...], total: int,
                   note: str) -> Table:
    rows = tuple((c.value, str(c.count), f"{100 * c.count / total:.1f} %") for c in counts)
    return Table(title, (name, "urls", "share"), rows, (note,))


def _error_section(groups: tuple[ErrorGroup, ...]) -> Table:
    rows = []
    for group in groups:
        for i, example in enumerate(group.examples):
            head = (group.kind, str(group.count)) if i == 0 else ("", "")
            rows.append((*head, example.url, example.detail))
    note = ("kind = the error's first word in index.csv; the first few URLs of each kind; "
            "robots rows that say 'disallowed' are robots.txt denials, not counted as errors")
    return Table("Errors by kind", ("kind", "urls", "example url", "detail"), tuple(rows),
                 (note,) if rows else ("no errors",), sortable=False)


def _ratio_sections(ratio: RatioSummary) -> list[Table]:
    if not ratio.pages:
        return [Table("Filtered ratio", (), (), ("no HTML pages",))]
    quantiles = Table("Filtered ratio", tuple(q.name for q in ratio.quantiles),
                      (tuple(f"{q.value:.3f}" for q in ratio.quantiles),),
                      (f"share of each page's HTML that TextFilter removed, over {ratio.pages} "
                          f"HTML pages; mean {ratio.mean:.3f}"
                          + ("" if ratio.overall is None else
                             f", overall {ratio.overall:.3f} (all text / all HTML)"),))
    widest = max(b.pages for b in ratio.histogram) or 1
    rows = tuple((f"{b.low:.1f}–{b.high:.1f}", str(b.pages), "#" * round(40 * b.pages / widest))
                 for b in ratio.histogram)
    return [quantiles, Table("Filtered ratio histogram", ("ratio", "pages", ""), rows)]


def _link_section(title: str, name: str, links: tuple[LinkCount, ...], note: str) -> Table:
    rows = tuple((str(rank), str(link.links), link.url, _clip(link.title))
                 for rank, link in enumerate(links, 1))
    return Table(title, ("rank", name, "url", "title"), rows,
                 (note,) if rows else ("no edges.csv lines",))


def _clip(text: str, width: int = TITLE_CHARS) -> str:
    return text if len(text) <= width else text[:width - 1] + "…"


def _dict_section(title: str, name: str, values: dict | None, note: str) -> Table:
    if values is None:
        return Table(title, (), (), ("not available: stats.json is written when a crawl ends",))
    rows = tuple((str(key), _number(value)) for key, value in values.items())
    return Table(title, (name, "value"), rows, (note,))


def _number(value) -> str:
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def settings_section(report: Report) -> Table:
    """The crawl's settings, as its state/settings.json keeps them."""
    if report.settings is None:
        return Table("Settings", (), (), ("not available: the crawl has no state/settings.json",))
    rows = tuple((key, value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))
                 for key, value in report.settings.items())
    note = ("from state/settings.json; crawler config DIR > crawl.toml turns them into a config "
            "file that crawler crawl --config runs again")
    return Table("Settings", ("setting", "value"), rows, (note,))

"""stats.json: the totals of one crawl, built from the Controller's counters."""
from __future__ import annotations

import platform
from dataclasses import asdict

from controller.config import VERSION, public_settings
from controller.trace import utc_now


def build_stats(crawl, stop_reason: str, elapsed: float) -> dict:
    tally, config = crawl.tally, crawl.config
    seconds = max(elapsed, 1e-9)
    return {
        "crawler_version": VERSION,
        "finished_at": utc_now(),
        "stop_reason": stop_reason,
        "seeds": list(config.seeds),
        "elapsed_seconds": round(elapsed, 3),
        "urls": tally.urls,
        "pages": tally.pages,
        "errors": tally.errors,                    # robots.txt denials not included
        "errors_by_kind": dict(tally.errors_by_kind),
        "robots_denied": tally.robots_denied,
        "bytes": tally.bytes,
        # The rates and elapsed_seconds cover this run. URLs/s counts every
        # fetch (an index.csv row, errors too); pages/s only the HTML pages.
        "urls_per_second": round((tally.urls - crawl.restored.urls) / seconds, 2),
        "pages_per_second": round((tally.pages - crawl.restored.pages) / seconds, 2),
        "kb_per_second": round((tally.bytes - crawl.restored.bytes) / 1024 / seconds, 2),
        "urls_this_run": tally.urls - crawl.restored.urls,
        "stop_detail": crawl.stop_detail(stop_reason),
        "seeds_failed": list(crawl.seeds_failed),   # [{url, error}] of seeds with an error
        "speculative": crawl.speculation_stats(),    # fetches before queuing (controller/speculation.py)
        "pace": crawl.pace(),                        # what set each host's interval (controller/pace.py)
        "levels": [dict(level=k, **asdict(row)) for k, row in enumerate(tally.levels)],
        "level_flags": list(crawl.frontier.level_flags),
        "queue_total": len(crawl.frontier),
        "skipped_links": dict(tally.skipped),
        "trap_patterns": crawl.trap_patterns(),    # pattern -> links --max-pattern-depth skipped
        "filtered_ratio": tally.filtered_ratio(),
        # A shared crawl's seen-set names its own algorithm (controller.shared.RedisSeen).
        "dedup": {"algorithm": config.dedup, **crawl.seen.stats()},
        "content": _content(crawl),
        "settings": _settings(config),
        "python": platform.python_version(),
    }


def _content(crawl) -> dict:
    levels = crawl.tally.levels
    content = {"mode": crawl.config.content_dedup,
               "duplicates": sum(level.duplicates for level in levels),
               "near_duplicates": sum(level.near_duplicates for level in levels)}
    if crawl.extraction_tally is not None:
        content["extraction"] = crawl.extraction_tally.as_dict()
    return content


def _settings(config) -> dict:
    settings = asdict(config)
    settings["out"] = str(config.out)
    settings["seeds"] = list(config.seeds)
    return public_settings(settings)


TRAP_PATTERNS_KEPT = 100   # in stats.json; the stop detail names the first few
TRAP_PATTERNS_NAMED = 3
TRAP_NOTE = "; trap guard: "


def trap_note(patterns: dict[str, int]) -> str:
    """'; trap guard: h/calendar/<n>/<n>/ 2,468 URLs not followed' ('' for none)."""
    if not patterns:
        return ""
    named = [f"{pattern} {count:,} URLs not followed"
             for pattern, count in list(patterns.items())[:TRAP_PATTERNS_NAMED]]
    more = len(patterns) - len(named)
    return TRAP_NOTE + ", ".join(named) + (f" (and {more} more patterns)" if more else "")

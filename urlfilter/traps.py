"""TrapGuard: limits that need memory of earlier URLs (spider traps).

``UrlRules`` judges one URL on its own; some traps only show in numbers:
a host that yields endless pages, one path with endless query strings
(faceted search, session ids), or an endless chain of pages of one shape,
each linking the next (a calendar's "next month", /calendar/2026/12/ after
/calendar/2026/11/). The guard counts URLs that were *new* (call it after
the URL-seen check), so each URL is counted once.

The chain rule works on URL patterns: host and path with every run of
digits generalized (``pattern_of``). Breadth-first, the first URL of a
pattern is queued at its lowest level; a finite site's pages of one shape
(articles, month archives, numbered list pages) are found within a few
levels of each other, because lists and menus link many of them at once,
while a trap's pattern reaches one level deeper with every page. So a URL
is refused when its level is more than ``max_pattern_depth`` levels below
the level its pattern first appeared at (Heritrix's
TooManyPathSegmentsDecideRule and PathologicalPathDecideRule judge the
path's shape; this judges how far one shape has been followed).

O(1) per URL; memory is one counter per host, per path that had a query,
and one level per pattern of a URL whose path holds digits. Pure: no
sockets, no files.
"""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable

_DIGITS = re.compile(r"[0-9]+")
NUMBER = "<n>"   # what a run of digits becomes in a pattern


def netloc_of(url: str) -> str:
    """host[:port] of a normalized URL, userinfo and all (the default host key)."""
    return url.partition("://")[2].partition("/")[0]


def pattern_of(url: str) -> str | None:
    """host[:port] + the normalized URL's path with each run of digits made
    ``<n>``, the query and fragment left out; None if the path holds no digit
    (a path without numbers names one page, not a family). Example:
    http://h/calendar/2026/11/?x=1 -> h/calendar/<n>/<n>/"""
    rest = url.partition("://")[2]
    slash = rest.find("/")
    if slash < 0:
        return None
    path = rest[slash:].partition("#")[0].partition("?")[0]
    generalized = _DIGITS.sub(NUMBER, path)
    if generalized == path:
        return None
    return rest[:slash] + generalized


class TrapGuard:
    """``host_of`` names a URL's host; the Controller passes the politeness
    key (getpage.host_key), so that "a host" means the same thing to the
    trap limits, the politeness gate and the scheduler."""

    def __init__(self, max_pages_per_host: int = 0, max_query_variants: int = 100,
                 host_of: Callable[[str], str] = netloc_of, max_pattern_depth: int = 0) -> None:
        self.max_pages_per_host = max_pages_per_host    # URLs queued per host; 0 = no limit
        self.max_query_variants = max_query_variants    # distinct queries per path; 0 = no limit
        self.max_pattern_depth = max_pattern_depth      # levels below a pattern's first; 0 = no limit
        self._host_of = host_of
        self._per_host: Counter[str] = Counter()
        self._per_path: Counter[str] = Counter()
        self._first_level: dict[str, int] = {}          # pattern -> level it was first queued at

    def would_admit(self, url: str, level: int) -> bool:
        """Whether admit(url, level) would let it in now; counts nothing."""
        return self._refusal(url, level)[0] is None

    def admit(self, url: str, level: int) -> str | None:
        """Count a new normalized URL to be queued at ``level``; None if it may
        be queued, else the reason: "host-pages" (its host is full),
        "pattern-depth" (its pattern is followed too deep, see the module
        docstring) or "query-variants" (its path has too many queries)."""
        reason, host, pattern = self._refusal(url, level)
        if reason:
            return reason
        path, has_query, _ = url.partition("?")
        if has_query and self.max_query_variants:
            self._per_path[path] += 1
        if self.max_pages_per_host:
            self._per_host[host] += 1
        if pattern is not None:
            self._first_level.setdefault(pattern, level)
        return None

    def _refusal(self, url: str, level: int) -> tuple[str | None, str, str | None]:
        """(reason or None, host key, pattern or None) for a URL at ``level``."""
        host = self._host_of(url) if self.max_pages_per_host else ""
        if self.max_pages_per_host and self._per_host[host] >= self.max_pages_per_host:
            return "host-pages", host, None
        pattern = pattern_of(url) if self.max_pattern_depth else None
        if pattern is not None:
            first = self._first_level.get(pattern, level)
            if level - first > self.max_pattern_depth:
                return "pattern-depth", host, pattern
        path, has_query, _ = url.partition("?")
        if has_query and self.max_query_variants and self._per_path[path] >= self.max_query_variants:
            return "query-variants", host, pattern
        return None, host, pattern

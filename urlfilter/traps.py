"""TrapGuard: limits that need memory of earlier URLs (spider traps).

``UrlRules`` judges one URL on its own; some traps only show in numbers:
a host that yields endless pages, or one path with endless query strings
(calendars, faceted search, session ids). The guard counts URLs that were
*new* (call it after the URL-seen check), so each URL is counted once.
O(1) per URL; memory is one counter per host and per path that had a query.
Pure: no sockets, no files.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Callable


def netloc_of(url: str) -> str:
    """host[:port] of a normalized URL, userinfo and all (the default host key)."""
    return url.partition("://")[2].partition("/")[0]


class TrapGuard:
    """``host_of`` names a URL's host; the Controller passes the politeness
    key (getpage.host_key), so that "a host" means the same thing to the
    trap limits, the politeness gate and the scheduler."""

    def __init__(self, max_pages_per_host: int = 0, max_query_variants: int = 100,
                 host_of: Callable[[str], str] = netloc_of) -> None:
        self.max_pages_per_host = max_pages_per_host    # URLs queued per host; 0 = no limit
        self.max_query_variants = max_query_variants    # distinct queries per path; 0 = no limit
        self._host_of = host_of
        self._per_host: Counter[str] = Counter()
        self._per_path: Counter[str] = Counter()

    def would_admit(self, url: str) -> bool:
        """Whether admit(url) would let it in now; counts nothing."""
        host = self._host_of(url) if self.max_pages_per_host else ""
        if self.max_pages_per_host and self._per_host[host] >= self.max_pages_per_host:
            return False
        path, has_query, _ = url.partition("?")
        return not (has_query and self.max_query_variants
                    and self._per_path[path] >= self.max_query_variants)

    def admit(self, url: str) -> str | None:
        """Count a new normalized URL; None if it may be queued, else the reason:
        "host-pages" (its host is full) or "query-variants" (its path is)."""
        host = self._host_of(url) if self.max_pages_per_host else ""
        if self.max_pages_per_host and self._per_host[host] >= self.max_pages_per_host:
            return "host-pages"
        path, has_query, _ = url.partition("?")
        if has_query and self.max_query_variants:
            if self._per_path[path] >= self.max_query_variants:
                return "query-variants"
            self._per_path[path] += 1
        if self.max_pages_per_host:
            self._per_host[host] += 1
        return None

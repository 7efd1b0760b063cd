"""The demo site's ground truth: what a correct breadth-first crawl finds.

Computed from the content model's links (each knows its canonical target),
never by parsing the served HTML, so it can check a crawler's HTML handling.

The rules a crawler is expected to follow:

- BFS from "/" (level 0). A URL is identified by its normalized form: scheme
  and host lower-cased, default port dropped, dot segments removed, fragment
  dropped, percent-escapes of unreserved characters decoded. Equivalent
  links are one URL, whose level is its shortest distance from "/".
- Links are <a href>, <area href> and <iframe src>, resolved against the
  page's URL or its <base href>. Only links from pages answered 200
  text/html are followed; error pages' links are not.
- Excluded before fetching, and not rows of the crawl: other hosts,
  non-HTTP schemes (javascript:, mailto:, tel:), and paths whose last
  segment has a deny-listed extension (.png .css .js .pdf on this site).
- With obey_robots, a URL robots.txt disallows is recorded at its level
  but neither fetched nor expanded.
- A redirect is followed; its target belongs to the redirecting URL's row
  (same level, not a row of its own, and from then on known), and the
  final page's links are queued at that level + 1.
- URLs at level max_depth are fetched, but their links are not queued.
"""
from __future__ import annotations

from dataclasses import dataclass

from demosite.model import Page, Redirect, SiteModel, is_denied, is_disallowed

MAX_REDIRECTS = 5


@dataclass(frozen=True)
class LevelTruth:
    """What one BFS level holds."""

    urls: int  # distinct URLs at this level: fetched, failed and robots-blocked alike
    pages: int  # of those, answered 200 text/html (a redirect ending on a page counts)
    disallowed: int  # of those, blocked by robots.txt (0 unless obey_robots)


@dataclass(frozen=True)
class GroundTruth:
    levels: tuple[LevelTruth, ...]  # index = level, 0..max_depth, shorter if BFS runs out
    url_levels: dict[str, int]  # every row of a correct crawl (path?query) -> its level
    requested: frozenset[str]  # every path?query the server is asked for (robots.txt aside)

    @property
    def total_urls(self) -> int:
        return sum(level.urls for level in self.levels)

    @property
    def total_pages(self) -> int:
        return sum(level.pages for level in self.levels)

    @property
    def total_disallowed(self) -> int:
        return sum(level.disallowed for level in self.levels)

    def urls_at(self, level: int) -> set[str]:
        """The rows (path?query) at one level."""
        return {url for url, found in self.url_levels.items() if found == level}


def ground_truth(model: SiteModel, max_depth: int, obey_robots: bool = True) -> GroundTruth:
    """Breadth-first walk of the link model; see the module docstring for the rules."""
    if max_depth < 0:
        raise ValueError("max_depth must be >= 0")
    url_levels: dict[str, int] = {}
    requested: set[str] = set()
    known = {"/"}
    levels = []
    frontier = ["/"]
    for level in range(max_depth + 1):
        if not frontier:
            break
        pages = disallowed = 0
        queued: list[str] = []
        for url in frontier:
            url_levels[url] = level
            if obey_robots and is_disallowed(url):
                disallowed += 1
                continue
            page, asked = _fetch(model, url)
            requested.update(asked)
            known.update(asked)
            if page is None:
                continue
            pages += 1
            if level < max_depth:
                queued.extend(_new_targets(page, known))
        levels.append(LevelTruth(len(frontier), pages, disallowed))
        frontier = queued
    return GroundTruth(tuple(levels), url_levels, frozenset(requested))


def _fetch(model: SiteModel, url: str) -> tuple[Page | None, list[str]]:
    """The 200 HTML page url ends on (None if it does not) and every path asked for."""
    asked = [url]
    entry = model.lookup(url)
    while isinstance(entry, Redirect) and len(asked) <= MAX_REDIRECTS:
        asked.append(entry.location)
        entry = model.lookup(entry.location)
    if isinstance(entry, Page) and entry.status == 200:
        return entry, asked
    return None, asked


def _new_targets(page: Page, known: set[str]) -> list[str]:
    """Targets of page's links not known yet, in link order; marks them known."""
    fresh = []
    for link in page.links:
        target = link.target
        if target is None or is_denied(target) or target in known:
            continue
        known.add(target)
        fresh.append(target)
    return fresh

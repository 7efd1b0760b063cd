"""Sitemaps: the page URLs a site lists, which links may never reach.

    gather(fetcher, seeds, sitemaps=(), scope=None) -> Gathered

Where the sitemaps come from: the ``Sitemap:`` lines of the robots.txt of
each seed's origin (``Fetcher.sitemaps``), then the sitemaps named on the
command line (``--sitemap URL``). Each is fetched through the Fetcher, so
robots.txt and the politeness gate apply to it as to a page, and parsed as
it arrives (``textfilter.sitemap``: the body is never held whole).

The rules, sitemaps.org's unless said:

* a sitemap index lists sitemaps, which are read right after it, in its
  order; an index listed by an index is refused (one level only), and a
  sitemap listed again (an index that lists itself, or one read before) is
  read once, the repeat a problem line;
* a ``<loc>`` must be on its sitemap's origin (scheme, host and port);
  a sitemap named by a robots.txt may also list the URLs of that
  robots.txt's origin, wherever the sitemap itself is (sitemaps.org's
  cross-submission: the site vouches for it), and so may the sitemaps of
  an index it names; a child sitemap must be on an origin its index may
  list. sitemaps.org's narrower path rule (a sitemap at /a/ lists only
  /a/...) is not applied: sites keep sitemaps in a folder of their own,
  and the origin rule already keeps one site from speaking for another;
* a URL must pass ``scope`` too (the crawl's URL_Filter), and a URL listed
  twice is kept once, with its first lastmod;
* at most ``max_files`` sitemap files are read per crawl (MAX_FILES, 100:
  each is a request at the host's --delay, and an index may name 50,000),
  and with ``max_urls`` no more files once that many URLs are kept.

A refused file contributes nothing (not the URLs read before the fault);
its URL and reason are one line in ``problems``. A URL left out is counted
by reason in ``dropped``.
"""
from __future__ import annotations

from collections import Counter, deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from urllib.parse import urldefrag, urlsplit

from getpage import Ask, Fetcher, FetchResult
from getpage.robots import origin_of
from textfilter.sitemap import MAX_BYTES, SitemapEntry, SitemapError, SitemapParser

MAX_FILES = 100
# Media types a sitemap is read under; an unlabelled body is read too.
SITEMAP_TYPES = frozenset({
    "application/xml", "text/xml", "application/x-xml", "text/plain",
    "application/gzip", "application/x-gzip", "application/octet-stream",
})
# The parser stops a file at MAX_BYTES uncompressed; the fetch's own cap,
# on the bytes as they come, only backs it up (a little higher, so that
# the parser's message is the one given).
FETCH_BYTES = MAX_BYTES + (1 << 20)

Scope = Callable[[str], "str | None"]   # URL -> why it is out of the crawl, or None


@dataclass(frozen=True, slots=True)
class SitemapURL:
    url: str                  # the <loc> (or text line) as written
    lastmod: float | None     # epoch seconds; None when not given or not a W3C datetime
    sitemap: str              # the sitemap file that listed it


@dataclass(frozen=True)
class Gathered:
    urls: tuple[SitemapURL, ...]     # in document order, sitemap after sitemap
    problems: tuple[str, ...]        # one line each: a sitemap's URL and why it gave nothing
    dropped: dict[str, int]          # reason -> URLs (or child sitemaps) left out
    files: int                       # sitemap files requested


@dataclass(frozen=True)
class _Source:
    url: str
    origins: frozenset[str]   # the origins its <loc>s may be on
    listed_by: str            # "robots.txt of ORIGIN", "--sitemap" or the index's URL
    child: bool = False       # listed by an index (so it may not be one)


def gather(fetcher: Fetcher, seeds: Iterable[str], sitemaps: Iterable[str] = (),
           scope: Scope | None = None, *, max_files: int = MAX_FILES,
           max_urls: int = 0) -> Gathered:
    """The page URLs of the seeds' origins' robots.txt sitemaps and of
    ``sitemaps``, read and judged as the module docstring says.
    ``max_urls``: 0 = no cap but max_files'."""
    gathering = _Gathering(fetcher, scope or (lambda url: None), max_files, max_urls)
    return gathering.run(_sources(fetcher, seeds, sitemaps, gathering.problems))


def _sources(fetcher: Fetcher, seeds: Iterable[str], sitemaps: Iterable[str],
             problems: list[str]) -> list[_Source]:
    sources = []
    for origin in dict.fromkeys(filter(None, map(_origin, seeds))):
        for url in fetcher.sitemaps(origin + "/"):
            if (own := _origin(url)) is None:
                problems.append(f"{url}: not an http(s) URL (robots.txt of {origin})")
            else:
                sources.append(_Source(url, frozenset({own, origin}), f"robots.txt of {origin}"))
    for url in sitemaps:
        if (own := _origin(url)) is None:
            problems.append(f"{url}: not an http(s) URL (--sitemap)")
        else:
            sources.append(_Source(url, frozenset({own}), "--sitemap"))
    return sources


def _origin(url: str) -> str | None:
    """The origin of an absolute http(s) URL, or None."""
    if urlsplit(url).scheme.lower() not in ("http", "https"):
        return None
    try:
        return origin_of(url)
    except ValueError:
        return None


class _Gathering:
    """One gathering's state: the sitemaps still to read (a stack, so an
    index's children come right after it), those read, what was kept."""

    def __init__(self, fetcher: Fetcher, scope: Scope, max_files: int, max_urls: int) -> None:
        self._fetcher = fetcher
        self._scope = scope
        self._max_files = max_files
        self._max_urls = max_urls
        self._todo: deque[_Source] = deque()
        self._read: set[str] = set()
        self._kept: set[str] = set()
        self._unread: Counter[str] = Counter()
        self.urls: list[SitemapURL] = []
        self.problems: list[str] = []
        self.dropped: Counter[str] = Counter()

    def run(self, sources: list[_Source]) -> Gathered:
        self._todo.extend(sources)
        while self._todo:
            self._visit(self._todo.popleft())
        for cap, count in self._unread.items():
            self.problems.append(f"{count} sitemap(s) not read: {cap}")
        return Gathered(tuple(self.urls), tuple(self.problems), dict(self.dropped), len(self._read))

    def _visit(self, source: _Source) -> None:
        key = urldefrag(source.url).url
        if key in self._read:
            if source.child:
                self.problems.append(f"{source.url}: listed again by {source.listed_by}, "
                                     "which was read already: read once")
            return
        if cap := self._cap_reached():
            self._unread[cap] += 1
            return
        self._read.add(key)
        outcome = self._fetch(source)
        if isinstance(outcome, str):
            self.problems.append(f"{source.url}: {outcome}")
        else:
            self._take(source, *outcome)

    def _cap_reached(self) -> str:
        if len(self._read) >= self._max_files:
            return f"the cap is {self._max_files} sitemap files per crawl"
        if self._max_urls and len(self.urls) >= self._max_urls:
            return f"{self._max_urls} URLs were gathered already (the cap)"
        return ""

    def _fetch(self, source: _Source) -> tuple[str, list[SitemapEntry], dict[str, int]] | str:
        """The file's kind, entries and skipped counts, or why it gave none."""
        parser = SitemapParser(allow_index=not source.child)
        entries: list[SitemapEntry] = []

        def sink(chunk: bytes) -> None:
            entries.extend(parser.feed(chunk))

        result = self._fetcher.fetch(source.url, ask=Ask(
            document_types=SITEMAP_TYPES, max_bytes=FETCH_BYTES, sink=sink, check_redirects=False))
        if failure := _failure(result):
            return failure
        try:
            entries.extend(parser.close())
        except SitemapError as exc:
            return f"refused: {exc}"
        return parser.kind, entries, parser.skipped

    def _take(self, source: _Source, kind: str, entries: list[SitemapEntry],
              skipped: dict[str, int]) -> None:
        self.dropped.update(skipped)
        if kind == "sitemapindex":
            children = [child for entry in entries if (child := self._child(source, entry))]
            self._todo.extendleft(reversed(children))
            return
        for entry in entries:
            self._keep(source, entry)

    def _child(self, index: _Source, entry: SitemapEntry) -> _Source | None:
        origin = _origin(entry.loc)
        if origin is None:
            self.dropped["not an http(s) URL"] += 1
        elif origin not in index.origins:
            self.dropped["sitemap on another origin than its index"] += 1
        else:
            return _Source(entry.loc, index.origins, index.url, child=True)
        return None

    def _keep(self, source: _Source, entry: SitemapEntry) -> None:
        origin = _origin(entry.loc)
        if origin is None:
            reason = "not an http(s) URL"
        elif origin not in source.origins:
            reason = "on another origin than its sitemap"
        elif entry.loc in self._kept:
            reason = "listed twice"
        elif self._max_urls and len(self.urls) >= self._max_urls:
            reason = f"over the cap of {self._max_urls} URLs"
        else:
            reason = self._scope(entry.loc)
        if reason:
            self.dropped[reason] += 1
            return
        self._kept.add(entry.loc)
        self.urls.append(SitemapURL(entry.loc, entry.lastmod, source.url))


def _failure(result: FetchResult) -> str:
    """Why a sitemap fetch gave no sitemap ("" when it did)."""
    if result.error:
        return result.error
    if result.text is not None or (result.content_type and result.content_type not in SITEMAP_TYPES):
        return f"not a sitemap: served as {result.content_type}"
    if not result.ok:
        return f"http: {result.status} (no sitemap in the answer)"
    return ""

"""parse(): one page's HTML in, its text, title, links and base URL out (TextFilter + GetURLs).

Two ways to read a page, with the same answers on ordinary pages:
- "bs4" (the default, and the readable reference): the page is parsed once,
  into a BeautifulSoup tree on lxml, and the text, the title, the <base href>
  and the links are all read from that tree;
- "lxml" (the fast path): one tree built by lxml alone, five to ten times
  faster (see fast.py). On the rare page where lxml's tree may differ from
  BeautifulSoup's (nesting deeper than 255, no root element ...) it reads the
  page the reference way instead, so its answers stay the reference's.
"regex" reads the text as "bs4" does and swaps only how the links are found.
Every reader reads the <meta> elements (robots directives, a refresh: see
robotsmeta.py) from the tree its text comes from, like the title: they are
what the page says about itself, not links found in its source.
Pure: no network, no files, and no URL is resolved except the base.
"""
from __future__ import annotations

from collections.abc import Callable, Collection

from textfilter.fast import Reading, read_page
from textfilter.links import Links, bs4_links, effective_base, extractor_named, lxml_links, soup_links
from textfilter.parsed import Parsed
from textfilter.robotsmeta import meta_of


def parse(html: str, base_url: str, extractor: str = "bs4",
          robots_names: Collection[str] = ("robots",)) -> Parsed:
    """Parse one page fetched from base_url.

    html: the decoded page; base_url: the URL it was fetched from (after
    redirects); extractor: a name in EXTRACTORS; robots_names: the lower-case
    <meta name>s whose directives Parsed.robots gathers. Never raises for
    malformed HTML; raises ValueError for an unknown extractor name.
    """
    find_links = extractor_named(extractor)  # fails before any work on an unknown name
    reading = read_page(html, robots_names) if find_links is lxml_links else None
    if reading is None:
        reading = _soup_reading(html, find_links, robots_names)
    return Parsed(
        text=reading.text,
        title=reading.title,
        base_url=effective_base(base_url, reading.base_href),
        links=reading.links,
        source_chars=len(html),
        filtered_ratio=filtered_ratio(len(reading.text), len(html)),
        base_href=reading.base_href,
        robots=reading.robots,
        refresh=reading.refresh,
    )


def filtered_ratio(text_chars: int, source_chars: int) -> float:
    """Share of the source filtered away, in [0, 1]; 0.0 for an empty source."""
    if source_chars == 0:
        return 0.0
    return min(1.0, max(0.0, 1 - text_chars / source_chars))


def _soup_reading(html: str, find_links: Callable[[str], Links],
                  robots_names: Collection[str]) -> Reading:
    # BeautifulSoup is loaded by the first page read this way: a crawl whose
    # pages all take the lxml path never needs it.
    from textfilter.text import page_text, page_title
    from textfilter.tree import build_tree
    tree = build_tree(html)
    # Links from the tree the text comes from (one parse per page), unless the
    # regex scan was asked for; lxml's links are the tree's (tests/test_links.py).
    if find_links in (bs4_links, lxml_links):
        base_href, links = soup_links(tree)
    else:
        base_href, links = find_links(html)
    robots, refresh = meta_of((meta.attrs for meta in tree.find_all("meta")), robots_names)
    return Reading(text=page_text(tree), title=page_title(tree), base_href=base_href, links=links,
                   robots=robots, refresh=refresh)

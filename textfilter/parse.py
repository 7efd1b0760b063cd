"""parse(): one page's HTML in, its text, title, links and base URL out (TextFilter + GetURLs).

The page is parsed once, into a BeautifulSoup tree on lxml; the text, the
title, the <base href> and the links are all read from that tree. Choosing
another link extractor ("lxml", "regex") swaps only how the links are found.
Pure: no network, no files, and no URL is resolved except the base.
"""
from __future__ import annotations

from textfilter.links import bs4_links, effective_base, extractor_named, soup_links
from textfilter.parsed import Parsed
from textfilter.text import page_text, page_title
from textfilter.tree import build_tree


def parse(html: str, base_url: str, extractor: str = "bs4") -> Parsed:
    """Parse one page fetched from base_url.

    html: the decoded page; base_url: the URL it was fetched from (after
    redirects); extractor: a name in EXTRACTORS. Never raises for malformed
    HTML; raises ValueError for an unknown extractor name.
    """
    find_links = extractor_named(extractor)  # fails before any work on an unknown name
    tree = build_tree(html)
    # The default reads the links from the tree the text comes from: one parse per page.
    base_href, links = soup_links(tree) if find_links is bs4_links else find_links(html)
    text = page_text(tree)
    return Parsed(
        text=text,
        title=page_title(tree),
        base_url=effective_base(base_url, base_href),
        links=links,
        source_chars=len(html),
        filtered_ratio=filtered_ratio(len(text), len(html)),
    )


def filtered_ratio(text_chars: int, source_chars: int) -> float:
    """Share of the source filtered away, in [0, 1]; 0.0 for an empty source."""
    if source_chars == 0:
        return 0.0
    return min(1.0, max(0.0, 1 - text_chars / source_chars))

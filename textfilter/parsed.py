"""Parsed: what one parse of an HTML page yields (TextFilter + GetURLs)."""
from __future__ import annotations

from dataclasses import dataclass

from textfilter.robotsmeta import Refresh


@dataclass(frozen=True)
class Parsed:
    text: str                 # readable text, block structure kept as line breaks
    title: str                # <title> text, whitespace collapsed ("" if none)
    base_url: str             # URL to resolve links against (<base href> honoured)
    links: tuple[str, ...]    # raw href/src values in document order, stripped, not resolved
    source_chars: int         # length of the decoded HTML source
    filtered_ratio: float     # share of the source filtered away: 1 - len(text) / source_chars
    # The first <base href>, stripped, unresolved (None: none). URL_Filter
    # resolves it by the URL Standard (urlfilter.normalize.document_base);
    # base_url is the simpler urljoin reading, for callers without URL_Filter.
    base_href: str | None = None
    # The directives of the <meta name> elements parse() was asked about
    # ("robots" and a crawler's token), lower case: {"noindex", "nofollow"} ...
    robots: frozenset[str] = frozenset()
    # The page's declarative refresh (<meta http-equiv="refresh">), if any.
    refresh: Refresh | None = None

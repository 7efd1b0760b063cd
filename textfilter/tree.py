"""The one parse of a page: HTML text -> BeautifulSoup tree built by lxml.

TextFilter (text, title) and GetURLs (links, <base href>) both read this same
tree, so the CPU-heavy step, building the tree, happens once per page.
"""
from __future__ import annotations

import warnings

from bs4 import BeautifulSoup, MarkupResemblesLocatorWarning, XMLParsedAsHTMLWarning

from textfilter.markup import without_surrogates


def build_tree(html: str) -> BeautifulSoup:
    """Parse html leniently; never raises for malformed or binary-looking input."""
    if not _bs4_would_warn(html):
        return _soup(html)
    # bs4's hints ("this looks like a URL / like XML") are for someone typing at
    # a prompt; a crawler parses whatever a server sent. catch_warnings is not
    # thread-safe, which is why only these rare pages pay for it: a race can at
    # worst show or hide one of those hints.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MarkupResemblesLocatorWarning)
        warnings.simplefilter("ignore", XMLParsedAsHTMLWarning)
        return _soup(html)


def _soup(html: str) -> BeautifulSoup:
    try:
        return BeautifulSoup(html, "lxml")
    except UnicodeEncodeError:
        return BeautifulSoup(without_surrogates(html), "lxml")


def _bs4_would_warn(html: str) -> bool:
    # The tests bs4 runs before it warns, or a little wider.
    return html.startswith("<?xml") or (len(html) <= 256 and "<" not in html)

"""GetURLs: the links of a page and its <base href>, by three interchangeable extractors.

An extractor takes HTML text and returns (base, links):
- base: the href of the first <base> element that has one (stripped), or None;
- links: the href of every <a> and <area> and the src of every <frame> and
  <iframe>, in document order, character references decoded, surrounding C0
  controls and spaces stripped (as URL parsing strips them). javascript:,
  mailto:, tel: and data: links are skipped; an empty value is kept (it
  names the base URL, which a <base href> makes another page); duplicates are kept,
  since deduplication belongs to URL_Filter. Nothing is resolved or normalised.

Extractors, by name in EXTRACTORS:
- "bs4": reads the BeautifulSoup tree that parse() also reads the text from
  (the reference implementation);
- "lxml": listens to lxml's parser events without building any tree, about
  twenty times faster; it is the same libxml2 parser fed the same way, so its
  answers equal bs4's (parse() with "lxml" reads the links from its lxml tree
  instead, see fast.py, with the same answers again);
- "regex": the design paper's regular-expression scan of the raw source
  (see regex_links for what it cannot see).
"""
from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING
from urllib.parse import urljoin, urlsplit

from lxml import etree

from textfilter.markup import without_surrogates

if TYPE_CHECKING:
    from bs4 import BeautifulSoup

Links = tuple[str | None, tuple[str, ...]]

# Which attribute of which element holds a URL to follow (plus <base href>).
URL_ATTRIBUTE = {"a": "href", "area": "href", "frame": "src", "iframe": "src", "base": "href"}
# The C0 controls and space: what URL parsing strips from both ends of a URL.
_URL_EDGE = "".join(map(chr, range(0x21)))
# ASCII-only case folding, as URL schemes have: "ſ" (long s) is not an "s".
_SKIPPED_SCHEME = re.compile(r"(?:javascript|mailto|tel|data):", re.IGNORECASE | re.ASCII)
# URL parsing deletes tabs and newlines anywhere, so "java\nscript:" is javascript:.
_TAB_OR_NEWLINE = re.compile(r"[\t\n\r]")


def extract_links(html: str, extractor: str = "bs4") -> Links:
    """(base, links) of html by the named extractor; ValueError for an unknown name."""
    return extractor_named(extractor)(html)


def extractor_named(name: str) -> Callable[[str], Links]:
    try:
        return EXTRACTORS[name]
    except KeyError:
        raise ValueError(f"unknown link extractor {name!r}; known: {', '.join(EXTRACTORS)}") from None


def soup_links(tree: BeautifulSoup) -> Links:
    """(base, links) read from an already built BeautifulSoup tree."""
    pairs = []
    for element in tree.find_all(list(URL_ATTRIBUTE)):
        value = element.get(URL_ATTRIBUTE[element.name])
        if value is not None:
            pairs.append((element.name, value))
    return base_and_links(pairs)


def bs4_links(html: str) -> Links:
    from textfilter.tree import build_tree   # BeautifulSoup: loaded by the readers that use it
    return soup_links(build_tree(html))


def lxml_links(html: str) -> Links:
    try:
        pairs = _lxml_pairs(html)
    except UnicodeEncodeError:  # lone surrogates have no UTF-8 form for libxml2
        pairs = _lxml_pairs(without_surrogates(html))
    return base_and_links(pairs)


def regex_links(html: str) -> Links:
    from textfilter.regex_links import scan   # loaded only by the extractor that uses it
    return base_and_links(scan(html, URL_ATTRIBUTE))


EXTRACTORS: dict[str, Callable[[str], Links]] = {
    "bs4": bs4_links,
    "lxml": lxml_links,
    "regex": regex_links,
}


def effective_base(page_url: str, base_href: str | None) -> str:
    """The URL the page's links are relative to: <base href> resolved against the
    page URL, or the page URL itself when there is no usable <base href>."""
    if base_href is None:
        return page_url
    try:
        base = urljoin(page_url, base_href)
        scheme = urlsplit(base).scheme.lower()
    except ValueError:  # e.g. an unbalanced "[" in the host
        return page_url
    # HTML ignores a data: or javascript: base, falling back to the document's URL.
    return page_url if scheme in ("data", "javascript") else base


def _lxml_pairs(html: str) -> list[tuple[str, str]]:
    # The parser calls the collector at each start tag instead of building a
    # tree: no tree means no tree-depth limit (libxml2 drops elements nested
    # deeper than 255), so the events are exactly those BeautifulSoup's lxml
    # builder receives, with the same parser options and the same dropped BOM.
    parser = etree.HTMLParser(recover=True, target=_UrlAttributes())
    parser.feed(html.removeprefix("\ufeff"))
    return parser.close()


class _UrlAttributes:
    """lxml parser target: (tag, value) of each URL attribute, in document order."""

    def __init__(self) -> None:
        self._pairs: list[tuple[str, str]] = []

    def start(self, tag: str, attributes: dict[str, str]) -> None:
        name = URL_ATTRIBUTE.get(tag)
        if name is not None and (value := attributes.get(name)) is not None:
            self._pairs.append((tag, value))

    def close(self) -> list[tuple[str, str]]:
        return self._pairs


def base_and_links(pairs: Iterable[tuple[str, str]]) -> Links:
    """Apply the package's link rules to (tag, raw attribute value) pairs."""
    base = None
    links = []
    for tag, value in pairs:
        if tag == "base":
            if base is None:
                base = value.strip(_URL_EDGE)
        elif _followable(value := value.strip(_URL_EDGE)):
            links.append(value)
    return base, tuple(links)


def _followable(value: str) -> bool:
    # An empty href is a link to the document's base URL (the URL Standard
    # parses "" against the base), which with a <base href> is another page.
    return not _SKIPPED_SCHEME.match(_TAB_OR_NEWLINE.sub("", value))

"""What a page says to robots in its markup: robots directives and a refresh.

Pure text rules, applied to the attributes of a page's <meta> elements
(``meta_of``) by every reader of parse(), so that all of them answer alike,
and to an X-Robots-Tag header's values (``header_directives``). What the
crawler does with them is the Controller's decision, not this module's.

- ``<meta name="robots" content="noindex, nofollow">``, and the same with
  the name of one crawler (a product token) instead of "robots": the
  directives are a comma list, matched case-insensitively (Google's and
  Bing's reading; white space between words is taken as a comma too, as
  "noindex nofollow" is meant).
- ``X-Robots-Tag: noindex`` applies to every crawler; ``X-Robots-Tag:
  bfs-crawler: nofollow`` only to the crawler of that token, and the items
  after it up to the next such prefix too ("otherbot: noindex, nofollow").
  Each header line starts anew with every crawler.
- ``<meta http-equiv="refresh" content="5; url=/next">`` is read by the
  HTML Standard's "shared declarative refresh steps": the first one whose
  content parses is the page's refresh (``Refresh``); the URL is reported
  as written, to be resolved against the document's base URL.
"""
from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass

# Directives that carry a value after a colon, which is not a crawler's name
# (Google's list): "unavailable_after: 25 Jun 2010 15:00:00 PST".
_VALUED = frozenset({"unavailable_after", "max-snippet", "max-image-preview", "max-video-preview"})
# A crawler's name is a product token: RFC 9110 token characters.
_AGENT_PREFIX = re.compile(r"\s*([!#$%&'*+.^_`|~0-9A-Za-z-]+)\s*:\s*(.*)", re.DOTALL)
_ASCII_WHITESPACE = "\t\n\f\r "
_DIGITS = "0123456789"


@dataclass(frozen=True, slots=True)
class Refresh:
    """A declarative refresh: after ``delay`` seconds, go to ``url`` (as
    written, not resolved; None: reload the page itself)."""
    delay: int
    url: str | None


def directives(content: str) -> frozenset[str]:
    """The directives of a robots meta content (or of header items), lower
    case; of a directive with a value ("max-snippet: 50") only its name."""
    found: set[str] = set()
    for item in content.lower().split(","):
        name, colon, _ = item.partition(":")
        found.update([name.strip()] if colon else item.split())
    return frozenset(found - {""})


def header_directives(values: Iterable[str], agent: str) -> frozenset[str]:
    """The directives of X-Robots-Tag header ``values`` (one per header line)
    that apply to the crawler whose product token is ``agent`` (lower case)."""
    found: set[str] = set()
    for value in values:
        scope = None   # None: every crawler
        for item in value.split(","):
            prefix = _AGENT_PREFIX.fullmatch(item)
            if prefix and prefix[1].lower() not in _VALUED:
                scope, item = prefix[1].lower(), prefix[2]
            if scope is None or scope == agent:
                found |= directives(item)
    return frozenset(found)


def meta_of(elements: Iterable[Mapping[str, str]],
            robots_names: Collection[str]) -> tuple[frozenset[str], Refresh | None]:
    """(robots directives, refresh) of a page's <meta> elements' attributes,
    in document order. ``robots_names``: the lower-case meta names whose
    directives count ("robots" and the crawler's product token)."""
    found: set[str] = set()
    refresh = None
    for attributes in elements:
        content = attributes.get("content")
        if content is None:
            continue
        name = attributes.get("name")
        if name is not None and name.strip(_ASCII_WHITESPACE).lower() in robots_names:
            found |= directives(content)
        if refresh is None and (attributes.get("http-equiv") or "").lower() == "refresh":
            refresh = parse_refresh(content)
    return frozenset(found), refresh


def parse_refresh(content: str) -> Refresh | None:
    """A refresh's content by the HTML Standard's shared declarative refresh
    steps; None where they return without refreshing."""
    end = len(content)
    position = _skip(content, 0, _ASCII_WHITESPACE)
    digits_end = _skip(content, position, _DIGITS)
    if digits_end == position and content[position:position + 1] != ".":
        return None
    delay = int(content[position:digits_end]) if digits_end > position else 0
    position = _skip(content, digits_end, _DIGITS + ".")   # a fraction is ignored
    if position < end:
        if content[position] not in ";," + _ASCII_WHITESPACE:
            return None
        position = _skip(content, position, _ASCII_WHITESPACE)
        if content[position:position + 1] in (";", ","):
            position += 1
        position = _skip(content, position, _ASCII_WHITESPACE)
    if position >= end:
        return Refresh(delay, None)
    return Refresh(delay, _url_string(content, position))


def _url_string(content: str, position: int) -> str:
    """Steps 11.1-11.10: the URL after an optional "url =", quotes removed."""
    remainder = content[position:]
    if content[position] in "Uu":
        if content[position + 1:position + 2] not in ("R", "r") \
                or content[position + 2:position + 3] not in ("L", "l"):
            return remainder
        position = _skip(content, position + 3, _ASCII_WHITESPACE)
        if content[position:position + 1] != "=":
            return remainder
        position = _skip(content, position + 1, _ASCII_WHITESPACE)
    quote = content[position:position + 1]
    if quote in ("'", '"'):
        url = content[position + 1:]
        return url.split(quote, 1)[0]
    return content[position:]


def _skip(text: str, position: int, characters: str) -> int:
    while position < len(text) and text[position] in characters:
        position += 1
    return position

"""The demo site's links: where each one leads, and how it is spelled.

A link is made from its canonical target (a path?query on this site) and a
spelling; the href written into the HTML is derived from the target, never
the other way round. That is what lets the site state its own ground truth
without parsing its pages, and lets a test check the two against each other
(resolving every href must give back its target).

Spellings (every one resolves, per RFC 3986, to the same target):

    absolute       /news/world/story-3.html
    relative       ../world/story-3.html, story-3/comments.html, ./ (same dir)
    dot-relative   ./story-3.html (relative, forced to start with a dot)
    query          ?page=2 (only for a target on the reference path itself)
    full-url       HTTP://HOST:PORT/about.html, scheme and host upper-cased,
                   filled from the request's Host header at render time
    dot-segments   /news/./detour/../world/story-3.html
    escaped        /people/%7Eeditor.html, /%61bout.html (an unreserved
                   character percent-encoded; equivalent after normalization)
    escaped-lower  the same with lower-case hex digits (%7e)
    spaced         the absolute form wrapped in a newline and spaces
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

# Stands for "HTTP://HOST:PORT" in an href; the renderer fills it in from
# the Host header, because only the request knows the server's address.
ORIGIN = "{ORIGIN}"


@dataclass(frozen=True)
class Link:
    """One link on one page."""

    href: str  # the attribute value as written, ORIGIN still unfilled
    target: str | None  # canonical path?query on this site; None: it leaves the site
    label: str  # the anchor text (or alt/title for area and iframe)
    role: str = "body"  # where the page shows it: menu crumb body related footer area iframe

    def href_for(self, host: str) -> str:
        """The href as served to a client that sent this Host header."""
        return self.href.replace(ORIGIN, "HTTP://" + host.upper())


def split_target(target: str) -> tuple[str, str]:
    """(path, query) of a path?query; the query is "" when there is none."""
    path, _, query = target.partition("?")
    return path, query


def _directory_parts(path: str) -> list[str]:
    """Segments of the directory a path lives in: /a/b/c.html -> [a, b]."""
    directory = path[: path.rindex("/")]
    return [part for part in directory.split("/") if part]


def relative(ref: str, target: str) -> str:
    """The shortest relative href from the document at ref to target."""
    target_path, query = split_target(target)
    here = _directory_parts(split_target(ref)[0])
    there = _directory_parts(target_path)
    name = target_path[target_path.rindex("/") + 1 :]
    common = 0
    while common < min(len(here), len(there)) and here[common] == there[common]:
        common += 1
    href = "../" * (len(here) - common) + "".join(part + "/" for part in there[common:]) + name
    # An empty href means the document itself, not its directory.
    href = href or "./"
    return href + ("?" + query if query else "")


def dot_relative(ref: str, target: str) -> str:
    href = relative(ref, target)
    return href if href.startswith(".") else "./" + href


def query_only(ref: str, target: str) -> str:
    target_path, query = split_target(target)
    if target_path != split_target(ref)[0] or not query:
        raise ValueError(f"a query-only href cannot lead from {ref} to {target}")
    return "?" + query


def absolute(ref: str, target: str) -> str:
    return target


def full_url(ref: str, target: str) -> str:
    return ORIGIN + target


def dot_segments(ref: str, target: str) -> str:
    first, slash, rest = target[1:].partition("/")
    if not slash:
        return "/./detour/../" + first
    return f"/{first}/./detour/../{rest}"


def _escape_one(target: str, hex_format: str) -> str:
    """Percent-encode the first '~', or else the first letter of the last name."""
    path, query = split_target(target)
    if "~" in path:
        index = path.index("~")
    else:
        start = path.rstrip("/").rindex("/") + 1
        index = next(i for i in range(start, len(path)) if path[i].isalpha())
    escaped = path[:index] + "%" + format(ord(path[index]), hex_format) + path[index + 1 :]
    return escaped + ("?" + query if query else "")


def escaped(ref: str, target: str) -> str:
    return _escape_one(target, "02X")


def escaped_lower(ref: str, target: str) -> str:
    return _escape_one(target, "02x")


def spaced(ref: str, target: str) -> str:
    return "\n    " + target + "  "


SPELLINGS: dict[str, Callable[[str, str], str]] = {
    "absolute": absolute,
    "relative": relative,
    "dot-relative": dot_relative,
    "query": query_only,
    "full-url": full_url,
    "dot-segments": dot_segments,
    "escaped": escaped,
    "escaped-lower": escaped_lower,
    "spaced": spaced,
}


class LinkList:
    """Collects one page's links; relative spellings resolve against ref.

    ref is the page's own path?query, or its <base href> when it has one.
    """

    def __init__(self, ref: str):
        self.ref = ref
        self.links: list[Link] = []

    def add(self, target: str, label: str, spelling: str = "absolute",
            role: str = "body", fragment: str = "") -> None:
        """Link to an in-site target, spelled one of the SPELLINGS ways."""
        href = SPELLINGS[spelling](self.ref, target)
        if fragment:
            href += "#" + fragment
        self.links.append(Link(href, target, label, role))

    def same_document(self, fragment: str, label: str, role: str = "body") -> None:
        """A "#fragment" link: it resolves to ref, which with a <base> is not the page."""
        self.links.append(Link("#" + fragment, self.ref, label, role))

    def leaving(self, href: str, label: str, role: str = "body") -> None:
        """A link that leaves the site: another host, mailto:, tel:, javascript:."""
        self.links.append(Link(href, None, label, role))

    def done(self) -> tuple[Link, ...]:
        return tuple(self.links)

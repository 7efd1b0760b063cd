"""DemoSite: the demo website as a function from request to response.

The site is generated from a seed (see demosite.model for its shape) and
knows its own ground truth (demosite.truth). What it offers a crawler:

- ≥ 200 HTML pages over levels 0..6, menus and footers repeated on every
  page, breadcrumbs, and featured/related links that make shortest
  distances matter;
- every kind of href: ../x.html, ./x.html, x.html, /abs.html, ?page=2,
  #fragment, page.html#part, HTTP://HOST:PORT/... in upper case,
  /a/./b/../c.html, a <base href> (on /travel/), %7E-style escapes,
  surrounding whitespace, single-quoted attributes, <area href>,
  <iframe src>, javascript:/mailto:/tel:, links to example.invalid;
- /robots.txt disallowing /private/ (whose pages lead to /archive/, reachable
  no other way) and /search;
- charsets: /intl/gbk.html (charset only in the HTTP header),
  /intl/big5.html (only in <meta charset>), /intl/shift_jis.html (only in
  <meta http-equiv>), /intl/ in UTF-8; see EXPECTED_TEXTS;
- /old/news.html -> 301 -> /news/moved-here.html (linked from nowhere);
- /missing.html (404), /broken.html (500; its link must not be followed),
  /feed (JSON) and /download?file=report (octet-stream), which have no
  telling extension, and /images/logo.png, which a deny-list skips;
- /calendar/2026/11/, linked from /events/: months link to months forever;
- planted duplicates (demosite.planted): exact copies, whose text equals
  their original's (a mirrored section under /mirror/, print views
  ?print=1, ?utm_source=...&utm_medium=... and ?sessionid=... variants);
  near copies (a later date line: story-N-updated.html; an added
  advertisement: ?ref=partner), whose originals are long reads of 32
  paragraphs; and look-alikes (story-N-analysis.html: another article in
  the same template, with the same links), which are distinct pages.
  Every copy lies deeper than its original, and its links resolve to its
  original's links, so the ground truth holds whether or not a crawler
  expands exact duplicates.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from demosite.links import Link
from demosite.model import (
    EXPECTED_TEXTS, Blob, Page, Redirect, build_site, robots_txt,
)
from demosite.render import render
from demosite.truth import GroundTruth, ground_truth

_HTML_UTF8 = "text/html; charset=utf-8"
_NOT_FOUND = (
    b"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Not found</title></head>\n"
    b"<body><h1>Not found</h1><p><a href=\"/\">Home</a></p></body></html>\n"
)


@dataclass(frozen=True)
class Response:
    status: int
    headers: dict[str, str]  # without Content-Length, which the server adds; a tuple: one line each
    body: bytes  # never compressed; the server compresses on request


class DemoSite:
    """One generated site. Deterministic: a seed always gives the same bytes."""

    # path -> a sentence the page's text holds once decoded with the right codec.
    EXPECTED_TEXTS = EXPECTED_TEXTS

    def __init__(self, seed: int = 2026):
        self.seed = seed
        self._model = build_site(seed)

    def respond(self, path_and_query: str, host: str) -> Response:
        """Answer a GET for a request target; host is the Host header ("127.0.0.1:8000").

        Equivalent spellings of a path (%7E for ~, dot segments) get the same
        answer, as from a real server. Unknown paths get a 404 page.
        """
        target = canonical_target(path_and_query)
        if target == "/robots.txt":
            return Response(200, {"Content-Type": "text/plain; charset=utf-8"},
                            robots_txt().encode())
        entry = self._model.lookup(target)
        if isinstance(entry, Page):
            return Response(entry.status, {"Content-Type": _content_type(entry)},
                            render(entry, host, self.seed))
        if isinstance(entry, Redirect):
            location = f"http://{host}{entry.location}"
            body = f"<!DOCTYPE html>\n<p>Moved to <a href=\"{location}\">{location}</a></p>\n"
            return Response(entry.status, {"Location": location, "Content-Type": _HTML_UTF8},
                            body.encode())
        if isinstance(entry, Blob):
            return Response(200, {"Content-Type": entry.content_type}, entry.body)
        return Response(404, {"Content-Type": _HTML_UTF8}, _NOT_FOUND)

    def paths(self) -> list[str]:
        """Every path?query answered 200 text/html, trap excluded.

        Includes pages a crawl reaches only without robots (/private/,
        /archive/...) and one it must never reach (/errors/report.html,
        linked only from the 500 page).
        """
        return self._model.html_paths()

    def links(self, path: str) -> tuple[Link, ...]:
        """The link model of one HTML page: every link with its canonical target."""
        entry = self._model.lookup(canonical_target(path))
        return entry.links if isinstance(entry, Page) else ()

    def base_href(self, path: str) -> str:
        """The page's <base href>, "" when it has none."""
        entry = self._model.lookup(canonical_target(path))
        return entry.base if isinstance(entry, Page) else ""

    def ground_truth(self, max_depth: int, obey_robots: bool = True) -> GroundTruth:
        """What a correct BFS crawl to max_depth finds; rules in demosite.truth."""
        return ground_truth(self._model, max_depth, obey_robots)

    def robots_txt(self) -> str:
        return robots_txt()

    def planted_duplicates(self) -> dict[str, str]:
        """Exact duplicates: copy's path?query -> its original's path (same page text)."""
        return dict(self._model.duplicates)

    def planted_near_duplicates(self) -> dict[str, str]:
        """Near duplicates: copy's path?query -> its original's path (one line or block differs)."""
        return dict(self._model.near_duplicates)

    def planted_look_alikes(self) -> dict[str, str]:
        """Distinct pages that resemble another: path -> the article whose template
        and links it shares (a crawler must not flag them)."""
        return dict(self._model.look_alikes)


def _content_type(page: Page) -> str:
    return f"text/html; charset={page.charset}" if page.charset_in_header else "text/html"


_UNRESERVED_ESCAPE = re.compile(r"%(2[dDeE]|3[0-9]|[46][1-9a-fA-F]|[57][0-9aA]|5[fF]|7[eE])")


def canonical_target(raw: str) -> str:
    """The canonical path?query of a request target, as the site stores it.

    Accepts origin-form ("/a?b") and absolute-form ("http://h/a?b"); drops
    any fragment, decodes escapes of unreserved characters, removes dot
    segments (RFC 3986, 5.2.4).
    """
    if not raw.startswith("/"):
        parts = urlsplit(raw)
        raw = (parts.path or "/") + ("?" + parts.query if parts.query else "")
    raw = raw.partition("#")[0]
    path, mark, query = raw.partition("?")
    path = _UNRESERVED_ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), path)
    return _remove_dot_segments(path) + mark + query


def _remove_dot_segments(path: str) -> str:
    segments = path.split("/")
    kept: list[str] = []
    for index, segment in enumerate(segments[1:], start=1):
        last = index == len(segments) - 1
        if segment == ".":
            if last:
                kept.append("")
        elif segment == "..":
            if kept:
                kept.pop()
            if last:
                kept.append("")
        else:
            kept.append(segment)
    return "/" + "/".join(kept)

"""What a page says to robots (textfilter/robotsmeta.py), as tables.

The refresh table follows the HTML Standard's "shared declarative refresh
steps" (https://html.spec.whatwg.org/multipage/semantics.html#shared-declarative-refresh-steps)
step by step; the X-Robots-Tag table follows Google's description of the
header (a "name:" prefix scopes the directives after it to one crawler).
Every reader of parse() must give the same answer: META_PAGES go through
all three, and tests/test_fast_parse.py compares lxml with bs4 on them too.
"""
from __future__ import annotations

import pytest

from textfilter import EXTRACTORS, parse
from textfilter.fast import read_page
from textfilter.robotsmeta import Refresh, directives, header_directives, parse_refresh

R = Refresh
REFRESH_CASES = [
    # (content, expected): step numbers of the standard's algorithm in the comments
    ("0; url=/next", R(0, "/next")),
    ("5", R(5, None)),                                   # 10: end of input: refresh the page itself
    ("  3  ", R(3, None)),                               # 3: leading white space skipped
    ("0;", R(0, None)),
    ("00012; url=/x", R(12, "/x")),                      # 7: non-negative integer
    ("3.5; url=/x", R(3, "/x")),                         # 8: a fraction is ignored
    ("3..9.; url=/x", R(3, "/x")),
    (".5; url=/x", R(0, "/x")),                          # 6: no digits, but a "."
    ("; url=/x", None),                                  # 6.1: no digits and no "."
    ("url=/x", None),
    ("", None),
    ("0x", None),                                        # 10.1: not ; , or white space
    ("1\u00a0; url=/x", None),                           # no-break space is not ASCII white space
    ("0,url=/x", R(0, "/x")),                            # 10.3: a comma separates too
    ("0 /x", R(0, "/x")),                                # 10.1: white space alone separates
    ("0; /x", R(0, "/x")),                               # 11.2: no "url=": the rest is the URL
    ("\t1\n;\furl=\r/x", R(1, "/x")),                    # ASCII white space everywhere it may be
    ("0; URL = '/a b' c", R(0, "/a b")),                 # 11.8-11.10: quotes, cut at the closing one
    ('0; url="/x"y', R(0, "/x")),
    ("0; url='/x", R(0, "/x")),                          # an unclosed quote: no cut
    ("0; 'x'", R(0, "x")),                               # 11.2 -> skip quotes
    ("0; urlx", R(0, "urlx")),                           # 11.6: no "=": the remainder from "u"
    ("0; ur", R(0, "ur")),                               # 11.4
    ("0; uxyz", R(0, "uxyz")),                           # 11.3
    ("0; url=", R(0, "")),                               # the empty URL: the document's base
    ("0 ; ; url=x", R(0, "; url=x")),                    # only one separator is skipped
    ("0; url=/x y ", R(0, "/x y ")),                     # the URL parser trims, not this
    ("7;URL=http://other.test/", R(7, "http://other.test/")),
]


@pytest.mark.parametrize(("content", "expected"), REFRESH_CASES, ids=[c for c, _ in REFRESH_CASES])
def test_refresh_content_is_read_as_the_html_standard_says(content: str, expected) -> None:
    assert parse_refresh(content) == expected


DIRECTIVE_CASES = [
    ("noindex, nofollow", {"noindex", "nofollow"}),
    ("NOINDEX,NOFOLLOW", {"noindex", "nofollow"}),
    ("noindex nofollow", {"noindex", "nofollow"}),   # white space between words, as meant
    (" None ", {"none"}),
    ("index, follow", {"index", "follow"}),
    ("max-snippet: 50, noarchive", {"max-snippet", "noarchive"}),
    ("", set()),
    (" , ,", set()),
]


@pytest.mark.parametrize(("content", "expected"), DIRECTIVE_CASES, ids=[c for c, _ in DIRECTIVE_CASES])
def test_robots_directives_are_a_case_insensitive_list(content: str, expected: set[str]) -> None:
    assert directives(content) == expected


HEADER_CASES = [
    # (header lines, directives for the crawler "bfs-crawler")
    (["noindex"], {"noindex"}),
    (["noindex, nofollow"], {"noindex", "nofollow"}),
    (["bfs-crawler: nofollow"], {"nofollow"}),
    (["BFS-Crawler: NoIndex"], {"noindex"}),
    (["otherbot: nofollow"], set()),
    (["otherbot: noindex, nofollow"], set()),                  # the scope runs to the line's end
    (["otherbot: nofollow", "noindex"], {"noindex"}),          # each line starts for everyone
    (["otherbot: nofollow, bfs-crawler: noindex"], {"noindex"}),
    (["bfs-crawler: noindex", "otherbot: nofollow"], {"noindex"}),
    (["unavailable_after: 25 Jun 2010 15:00:00 PST, nofollow"], {"unavailable_after", "nofollow"}),
    (["max-snippet: 20", "bfs-crawler: max-image-preview: none"], {"max-snippet", "max-image-preview"}),
    ([], set()),
]


@pytest.mark.parametrize(("lines", "expected"), HEADER_CASES, ids=[" | ".join(c) for c, _ in HEADER_CASES])
def test_x_robots_tag_lines_apply_to_every_crawler_or_to_the_one_named(lines, expected) -> None:
    assert header_directives(lines, "bfs-crawler") == expected


def test_a_crawler_name_is_any_product_token() -> None:
    assert header_directives(["my+bot~2: nofollow"], "my+bot~2") == {"nofollow"}
    assert header_directives(["my+bot~2: nofollow"], "bfs-crawler") == set()


NAMES = ("robots", "bfs-crawler")
META_PAGES = {
    # name: (html, robots directives, refresh)
    "robots meta": ('<head><meta name="robots" content="noindex, nofollow"></head><p>x',
                    {"noindex", "nofollow"}, None),
    "names and values in any case": ('<META NAME=" Robots " CONTENT="NoFollow">', {"nofollow"}, None),
    "the crawler's own name": ('<meta name="bfs-crawler" content="none">', {"none"}, None),
    "another crawler's name": ('<meta name="otherbot" content="noindex">', set(), None),
    "several metas add up": ('<meta name=robots content=noindex><meta name=bfs-crawler content=nofollow>',
                             {"noindex", "nofollow"}, None),
    "a meta in the body counts": ("<p>x</p><meta name=robots content=nofollow>", {"nofollow"}, None),
    "a meta without content": ("<meta name=robots><p>x", set(), None),
    "a meta inside a comment does not": ("<!-- <meta name=robots content=nofollow> --><p>x", set(), None),
    "a refresh": ("<meta http-equiv=refresh content='0; url=/next'>", set(), R(0, "/next")),
    "http-equiv in any case": ('<meta HTTP-EQUIV="Refresh" content="2">', set(), R(2, None)),
    "the first refresh that parses wins": (
        "<meta http-equiv=refresh content='x'><meta http-equiv=refresh content='1;url=/a'>"
        "<meta http-equiv=refresh content='0;url=/b'>", set(), R(1, "/a")),
    "a refresh with entities": ("<meta http-equiv=refresh content='0;url=/a?b=1&amp;c=2'>", set(),
                                R(0, "/a?b=1&c=2")),
    "content-type is not a refresh": ('<meta http-equiv="content-type" content="0; url=/x">', set(), None),
    "a refresh in noscript (a crawler runs no script)": (
        "<noscript><meta http-equiv=refresh content='0;url=/nojs'></noscript><p>x", set(), R(0, "/nojs")),
}


@pytest.mark.parametrize("extractor", list(EXTRACTORS))
@pytest.mark.parametrize("name", list(META_PAGES))
def test_every_reader_reads_the_meta_elements_alike(name: str, extractor: str) -> None:
    html, robots, refresh = META_PAGES[name]
    parsed = parse(html, "http://site.test/", extractor, NAMES)
    assert (parsed.robots, parsed.refresh) == (robots, refresh)


def test_the_fast_reader_reads_them_from_its_own_tree() -> None:
    for html, robots, refresh in META_PAGES.values():
        reading = read_page(html, NAMES)
        assert reading is not None and (reading.robots, reading.refresh) == (robots, refresh)


def test_only_the_names_asked_for_count() -> None:
    html = META_PAGES["the crawler's own name"][0]
    assert parse(html, "http://site.test/", "lxml").robots == frozenset()   # default: "robots" only
    assert parse(html, "http://site.test/", "lxml", ()).robots == frozenset()

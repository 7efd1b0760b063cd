"""The lxml fast path of parse() gives exactly what the BeautifulSoup reference gives.

parse(html, url, "lxml") reads text, title, <base href> and links from one
lxml tree (textfilter/fast.py); parse(html, url, "bs4") reads them from a
BeautifulSoup tree. Every Parsed field must be equal, on the demo site, on
generated pages shaped like the benchmark site's, on every table case of
test_textfilter and test_links, and on garbage. Tests also check that the
fast path really ran (read_page is not None), so a fallback to the reference
cannot make them pass by itself.
"""
from __future__ import annotations

import importlib
import random
from collections.abc import Iterator

import pytest
from test_links import BASE_CASES, FRAGMENTS, KNOWN_DISAGREEMENTS, LINK_CASES, ORDINARY_PAGES
from test_robotsmeta import META_PAGES
from test_textfilter import GARBAGE, TEXT_CASES, TITLE_CASES

from demosite import DemoSite
from getpage import decode_html
from textfilter import parse
from textfilter.fast import read_page

PAGE_URL = "http://site.test/dir/page.html"
ROBOTS_NAMES = ("robots", "bfs-crawler")   # so the <meta> readings are compared too
TREE_MODULE = importlib.import_module("textfilter.tree")


def assert_same_as_reference(html: str, url: str = PAGE_URL) -> None:
    reference = parse(html, url, "bs4", ROBOTS_NAMES)
    assert parse(html, url, "lxml", ROBOTS_NAMES) == reference
    regex = parse(html, url, "regex", ROBOTS_NAMES)
    assert (regex.robots, regex.refresh) == (reference.robots, reference.refresh)


# -- (a) the demo site ---------------------------------------------------------------

def demo_pages() -> list[tuple[str, str, str]]:
    """(path, content type, decoded body) of every path the demo site answers."""
    site = DemoSite()
    pages = []
    for path in site.paths():
        response = site.respond(path, "127.0.0.1:8000")
        content_type = response.headers.get("Content-Type", "")
        pages.append((path, content_type, decode_html(response.body, content_type)[0]))
    return pages


DEMO_PAGES = demo_pages()


def test_the_demo_site_has_html_pages_to_compare() -> None:
    assert sum("html" in content_type for _, content_type, _ in DEMO_PAGES) > 400


@pytest.mark.parametrize(("path", "content_type", "html"), DEMO_PAGES, ids=[p[0] for p in DEMO_PAGES])
def test_every_demo_page_parses_alike(path: str, content_type: str, html: str) -> None:
    url = f"http://127.0.0.1:8000{path}"
    assert_same_as_reference(html, url)
    if "html" in content_type:
        assert read_page(html) is not None


# -- (b) pages shaped like the benchmark site's, with everything a page can hold -------

WORDS = ("crawler breadth first level queue frontier page link robots delay text filter "
         "seen hash server request response header status content anchor index archive").split()
CJK = "网络爬虫的设计与实现广度优先搜索队列页面链接过滤器文本新闻中心首页国内国际经济观察两会召开"


def benchmark_like_page(seed: int, size: int = 16_000, links: int = 27) -> str:
    """A deterministic page of about size characters with exactly `links` links
    in <a href>, mixing every construct TextFilter treats specially."""
    rng = random.Random(seed)
    hrefs = iter(_href(rng, k) for k in range(links))
    newline = "\r\n" if seed % 3 == 0 else "\n"
    parts = [_head(rng, seed), "<body class=page>\n<!-- header -->\n<header><nav><ul>\n"]
    parts += [f"<li><a href=\"{next(hrefs)}\">{rng.choice(WORDS)}</a></li>\n" for _ in range(6)]
    parts.append(f"</ul></nav></header>\n<main>\n<h1>{_sentence(rng, 5)}</h1>\n")
    blocks = [_paragraph, _list, _table, _preformatted, _chinese, _noise, _definitions, _heading]
    while sum(map(len, parts)) < size - 600:
        parts.append(rng.choice(blocks)(rng, hrefs))
    parts.append("</main>\n<footer><p>&copy; 2026 <a href=/about>About</a> &middot; "
                 "<a href='/contact?x=1&amp;y=2'>Contact</a></p></footer>\n</body>\n</html>\n")
    return "".join(parts).replace("\n", newline)


# What a page's head may say to robots, one per seed in turn.
ROBOTS_HEADS = ("", '<meta name="robots" content="noindex, follow">\n',
                '<META NAME="BFS-Crawler" CONTENT="NoFollow">\n'
                "<meta http-equiv=refresh content=\"30; URL='/next?a=1&amp;b=2'\">\n",
                '<meta http-equiv="Refresh" content=" 5 , url = /x ">\n<meta name=robots content=none>\n')


def _head(rng: random.Random, seed: int) -> str:
    return ("<!DOCTYPE html>\n<html lang=en>\n<head>\n<meta charset=utf-8>\n"
            + ROBOTS_HEADS[seed % len(ROBOTS_HEADS)] +
            f"<title>Page {seed} &mdash; {rng.choice(WORDS)} &amp; {CJK[:4]}</title>\n"
            "<style>\nbody { font: 14px sans-serif } /* <a href=/css> */\n</style>\n"
            "<script>var t = '<p>not text</p>'; if (a < b && c > d) { go('/js'); }</script>\n"
            "<link rel=stylesheet href=/site.css>\n</head>\n")


def _href(rng: random.Random, k: int) -> str:
    forms = [f"/p/{k}/{rng.randrange(5000)}.html", f"../{k}/{rng.randrange(5000)}.html",
             f"./{rng.randrange(5000)}.html", f"/p/{k}.html#s{k}", f"/search?q={k}&amp;page=2"]
    return forms[k % len(forms)]


def _sentence(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words)).capitalize() + "."


def _link(rng: random.Random, hrefs: Iterator[str]) -> str:
    href = next(hrefs, None)
    return "" if href is None else f' <a href="{href}">{_sentence(rng, 3)}</a>'


def _paragraph(rng: random.Random, hrefs: Iterator[str]) -> str:
    return (f"<p>{_sentence(rng, 20)} <b>{rng.choice(WORDS)}</b>{_link(rng, hrefs)} "
            f"<em>{_sentence(rng, 4)}</em><span class=x>Hel</span>lo,\t<code>x&lt;y</code>\n"
            f"{_sentence(rng, 15)}<br>{_sentence(rng, 6)} <img src=/i.png alt=i> "
            f"<i>{rng.choice(WORDS)}</i></p>\n")


def _list(rng: random.Random, hrefs: Iterator[str]) -> str:
    items = "".join(f"<li>{_sentence(rng, 6)}{_link(rng, hrefs)}</li>\n" for _ in range(3))
    return f"<ul>\n{items}</ul>\n<ol><li>one<li>two <b>2</b></ol>\n"


def _table(rng: random.Random, hrefs: Iterator[str]) -> str:
    rows = "".join(f"<tr><td>{rng.choice(WORDS)}</td><td> {rng.randrange(1000)} </td>"
                   f"<td>{CJK[rng.randrange(20):][:5]}</td><td></td></tr>\n" for _ in range(4))
    return (f"<table>\n<caption>{_sentence(rng, 3)}</caption>\n"
            f"<tr><th>name</th><th>count</th><th>中文</th></tr>\n{rows}</table>\n")


def _preformatted(rng: random.Random, hrefs: Iterator[str]) -> str:
    return (f"<pre>\ndef f(x):\n    return x &lt; {rng.randrange(9)}   \n\n\t<b>bold</b> <i>x</i>\n"
            f"<div>block in pre</div>  indented\n</pre>\n")


def _chinese(rng: random.Random, hrefs: Iterator[str]) -> str:
    start = rng.randrange(20)
    return (f"<p>{CJK[start:start + 15]}<b>{CJK[:3]}</b>（BFS）&nbsp;&copy; &#20013;&#x6587;"
            f"\u3000{CJK[start:start + 6]}{_link(rng, hrefs)}</p>\n")


def _noise(rng: random.Random, hrefs: Iterator[str]) -> str:
    return (f"<!-- comment {rng.randrange(99)} <a href=/hidden> -->\n"
            "<script>document.write('<a href=/written>x</a>')</script>\n"
            "<noscript><p>enable <a href=/nojs>scripts</a></p></noscript>\n"
            "<svg width=10><title>icon</title><text>drawn</text></svg>\n"
            "<iframe src=/frame.html>fallback</iframe>\n")


def _definitions(rng: random.Random, hrefs: Iterator[str]) -> str:
    return (f"<dl><dt>{rng.choice(WORDS)}</dt><dd>{_sentence(rng, 8)}</dd></dl>\n"
            f"<blockquote><p>{_sentence(rng, 10)}</p></blockquote>\n<hr>\n")


def _heading(rng: random.Random, hrefs: Iterator[str]) -> str:
    # Heading levels picked independently: mismatched end tags are common.
    return (f"<h{rng.randrange(2, 5)}>{_sentence(rng, 4)}</h{rng.randrange(2, 5)}>\n"
            f"<div><div>{_sentence(rng, 5)}</div></div>\n")


GENERATED = [benchmark_like_page(seed) for seed in range(24)]


def test_generated_pages_are_shaped_like_the_benchmark_site() -> None:
    for html in GENERATED:
        parsed = parse(html, PAGE_URL, "lxml")
        assert 15_000 <= len(html) <= 17_500
        assert len(parsed.links) >= 27 + 6   # 27 generated, plus footer, iframe and noscript links
        assert "\t" in parsed.text and "网络" in parsed.text and "    return x < " in parsed.text
    readings = {(parsed.robots, parsed.refresh) for parsed in
                (parse(html, PAGE_URL, "lxml", ROBOTS_NAMES) for html in GENERATED)}
    assert len(readings) == len(ROBOTS_HEADS)   # each head's <meta> elements are read


@pytest.mark.parametrize("html", GENERATED, ids=[f"seed {i}" for i in range(len(GENERATED))])
def test_generated_pages_parse_alike(html: str) -> None:
    assert read_page(html) is not None
    assert_same_as_reference(html)


# -- (c) the table cases of the other test files ------------------------------------------

TABLE_CASES = {
    **{f"text: {c[0]}": c[1] for c in TEXT_CASES},
    **{f"title: {c[0]}": c[1] for c in TITLE_CASES},
    **{f"links: {c[0]}": c[1] for c in LINK_CASES},
    **{f"base: {c[0]}": c[1] for c in BASE_CASES},
    **{f"disagreement: {c[0][:50]}": c[1] for c in KNOWN_DISAGREEMENTS},
    **{f"page: {name}": page[0] for name, page in ORDINARY_PAGES.items()},
    **{f"meta: {name}": page[0] for name, page in META_PAGES.items()},
}
# Pages without a root element: libxml2 builds no tree, so the reference reads them.
NO_TREE = {"text: an empty page has no text", "links: empty page",
           "base: a base inside a comment does not count"}


@pytest.mark.parametrize("html", TABLE_CASES.values(), ids=TABLE_CASES.keys())
def test_table_cases_parse_alike(html: str) -> None:
    assert_same_as_reference(html)


def test_table_cases_take_the_fast_path_when_there_is_a_tree() -> None:
    assert NO_TREE <= set(TABLE_CASES)
    assert {name for name, html in TABLE_CASES.items() if read_page(html) is None} == NO_TREE


def test_the_fast_path_builds_no_beautifulsoup_tree(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(html: str):
        raise AssertionError("the reference tree was built")

    monkeypatch.setattr(TREE_MODULE, "build_tree", refuse)
    parsed = parse(GENERATED[0], PAGE_URL, "lxml")
    assert parsed.title.startswith("Page 0")
    with pytest.raises(AssertionError, match="reference tree"):
        parse(GENERATED[0], PAGE_URL, "bs4")


def test_the_fast_path_reads_strings_as_the_reference_tree_builder_does() -> None:
    """fast.py writes out how BeautifulSoup's tree builder treats strings (so
    that it loads without bs4): they must be bs4's own values."""
    from bs4 import BeautifulSoup
    from bs4.builder import HTMLTreeBuilder

    from textfilter import fast
    assert fast._KEEPS_SPACES == HTMLTreeBuilder.DEFAULT_PRESERVE_WHITESPACE_TAGS
    assert set(fast._STRING_CONTAINERS) == set(HTMLTreeBuilder.DEFAULT_STRING_CONTAINERS)
    assert fast._ASCII_SPACES == BeautifulSoup.ASCII_SPACES


# -- (d) pathological pages: the fast path hands them to the reference ------------------

def nested(depth: int) -> str:
    return "<div>" * depth + "deep <a href='/deep'>link</a>" + "</div>" * depth


PATHOLOGICAL = {
    # libxml2 stops building a tree nested deeper than 255; BeautifulSoup goes on.
    "nesting just past libxml2's limit": nested(256),
    "nesting far past it": nested(5000),
    "nesting left open": "<span>" * 3000 + "open <a href=/x>x</a>",
    # libxml2 reports only the first 100 errors, but a fatal one always.
    "thousands of errors, then too deep": "<p>a</b>" * 5000 + nested(300),
    # ... and stops at a text node over 10 MB.
    "a text of 11 MB": "<title>big</title><p>" + "word " * 2_200_000 + "</p><a href=/after>a</a>",
    # A doctype splits BeautifulSoup's strings; inside <listing> that shows.
    "a doctype inside listing": "<listing>a<b>b</b>\t<!DOCTYPE x>\x0c<b>c</b>\n  d</listing>",
    "a page of comments only": "<!-- <a href=/x> --><!-- <p>y -->",
    "white space only": " \r\n\t ",
}


@pytest.mark.parametrize("html", PATHOLOGICAL.values(), ids=PATHOLOGICAL.keys())
def test_pathological_pages_go_to_the_reference(html: str) -> None:
    assert read_page(html) is None
    assert_same_as_reference(html)


def test_nesting_within_libxml2s_limit_stays_on_the_fast_path() -> None:
    html = nested(250)
    assert read_page(html) is not None
    assert parse(html, PAGE_URL, "lxml").text == "deep link"
    assert_same_as_reference(html)


ROBUSTNESS = {
    **GARBAGE,
    "byte order mark": "\ufeff<title>bom</title><p>x</p>",
    "characters beyond the BMP and noncharacters":
        "<p>\U0001f600 \uffff\ufffe \ue000</p><a href='/\U0001f600'>",
    "every kind of white space":
        "<p>a\u00a0b\u2028c\u3000d\x1ce\x85f\u200ag\fh\vi</p><pre>x\u2028y\x0bz \x85</pre>",
    "listing without a doctype": "<listing>a<b>b</b>\n   <b>c</b>\n\n  d<p>e</listing>",
    "textarea and xmp": "<textarea>\n  a <b>x</b>\n</textarea><xmp> <p>raw</p> </xmp>x",
    "ruby and template":
        "<ruby>漢<rp>(</rp><rt>kan</rt><rp>)</rp></ruby><template><title>t</title></template>",
    "title inside a template": "<template><title>hidden</title></template><p>x</p>",
    "frameset": ORDINARY_PAGES["frameset"][0],
    "a base and areas": "<base href=' /b/ '><map><area href=x><area nohref></map>",
    "markup after </html>":
        "<html><body>in</body></html><title>late</title>after<a href=/after>a</a><!-- c -->",
}


@pytest.mark.parametrize("html", ROBUSTNESS.values(), ids=ROBUSTNESS.keys())
def test_robustness_inputs_parse_alike(html: str) -> None:
    parsed = parse(html, PAGE_URL, "lxml")
    assert parsed.source_chars == len(html)
    assert 0.0 <= parsed.filtered_ratio <= 1.0
    assert_same_as_reference(html)


TEXT_FRAGMENTS = FRAGMENTS + [
    "<b>", "</b>", "<img src=x>", "<li>", "<span> </span>", "<h2>", "</h2>", "<br>", "<pre>\n  x\n",
    "</pre>", "<listing>\n a \n", "</listing>", "<ruby><rt>", "<select><option>a", "<dl><dt>",
    "<caption>", "<th>", "</td><td>", "<o:p>", "</o:p>", "&nbsp;", "\u3000", "\x1c", "\f",
    "<head>", "</head>", "</body>", "<svg><title>t</title>", "<template><title>tt</title></template>",
    "<meta name=robots content=nofollow>", "<meta name='bfs-crawler' content='noindex'>",
    "<meta http-equiv=refresh content='0;url=/r'>", "<meta http-equiv=refresh content=x>",
    "<svg><meta name=robots content=noindex></svg>",
]


def test_random_awkward_pages_parse_alike() -> None:
    rng = random.Random(20261129)
    fast = 0
    for _ in range(1500):
        html = "".join(rng.choice(TEXT_FRAGMENTS) for _ in range(rng.randrange(1, 30)))
        assert parse(html, PAGE_URL, "lxml", ROBOTS_NAMES) == parse(html, PAGE_URL, "bs4", ROBOTS_NAMES), html
        fast += read_page(html) is not None
    assert fast > 1300   # the comparisons really did exercise the fast path


def test_mangled_demo_pages_parse_alike() -> None:
    rng = random.Random(5)
    pages = [html for _, content_type, html in DEMO_PAGES if "html" in content_type]
    for _ in range(300):
        html = rng.choice(pages)
        for _ in range(rng.randrange(1, 6)):
            cut = rng.randrange(len(html) + 1)
            html = html[:cut] + rng.choice(TEXT_FRAGMENTS) + html[cut:]
        if rng.random() < 0.3:
            html = html[:rng.randrange(len(html) + 1)]
        assert parse(html, PAGE_URL, "lxml", ROBOTS_NAMES) == parse(html, PAGE_URL, "bs4", ROBOTS_NAMES), html

"""TextFilter: parse() turns a page into readable text, a title and a filtered ratio."""
from __future__ import annotations

import ast
import random
import warnings
from pathlib import Path

import pytest

from textfilter import EXTRACTORS, Parsed, parse

PAGE_URL = "http://site.test/dir/page.html"


def text_of(html: str, extractor: str = "bs4") -> str:
    return parse(html, PAGE_URL, extractor).text


TEXT_CASES = [
    ("script, style and noscript vanish with their content",
     "<p>before<script>var s = '<p>no</p>';</script><style>p {color: red}</style>"
     "<noscript>enable js</noscript>after</p>",
     "beforeafter"),
    ("template and svg content vanish",
     "<p>a</p><template><p>hidden</p></template><svg><title>icon</title><text>drawn</text></svg><p>b</p>",
     "a\nb"),
    ("comments, doctype, CDATA and processing instructions vanish",
     "<!DOCTYPE html><p>one<!-- secret --></p><?php echo 1 ?><![CDATA[ raw ]]><p>two</p>",
     "one\ntwo"),
    ("head content other than the title is not text",
     "<html><head><title>T</title><meta name=description content=desc><style>x{}</style></head>"
     "<body>body</body></html>",
     "body"),
    ("block elements become lines",
     "<h1>Head</h1><p>para</p><div>div</div><ul><li>one</li><li>two</li></ul>"
     "<blockquote>quote</blockquote><dl><dt>term</dt><dd>def</dd></dl>",
     "Head\npara\ndiv\none\ntwo\nquote\nterm\ndef"),
    ("br and hr break lines but never leave an empty line",
     "<p>a<br>b<br><br><br>c<hr>d</p>",
     "a\nb\nc\nd"),
    ("inline elements join their text into one line",
     "<p>Hel<b>lo</b>, <a href=/x>wor</a><em>ld</em>!</p>",
     "Hello, world!"),
    ("white space inside a line collapses to one space, lines are stripped",
     "<p>\n   many \t\t spaces\r\n  and\nnewlines   </p>",
     "many spaces and newlines"),
    ("no-break and ideographic spaces count as white space",
     "<p>&nbsp;a&nbsp;&nbsp;b\u3000c&nbsp;</p><p>&nbsp;</p>",
     "a b c"),
    ("table cells of a row are separated by a tab, rows are lines, empty cells are skipped",
     "<table><tr><th>name</th><th>count</th></tr><tr><td>pages</td><td> 5 </td></tr>"
     "<tr><td></td><td>x</td></tr></table>",
     "name\tcount\npages\t5\nx"),
    ("pre keeps its line breaks and indentation, drops blank lines and trailing space",
     "<p>intro</p><pre>\ndef f():\n    return 1   \n\nx = <b>2</b></pre><p>outro</p>",
     "intro\ndef f():\n    return 1\nx = 2\noutro"),
    ("the title is not part of the text",
     "<title>Only title</title><p>text</p>",
     "text"),
    ("Chinese text is kept intact, with no spaces added between inline elements",
     "<p>网络<b>爬虫</b>的设计与实现。</p><p>广度优先（BFS）</p>",
     "网络爬虫的设计与实现。\n广度优先（BFS）"),
    ("character references are decoded",
     "<p>a &amp; b &lt;tag&gt; &#20013;&#x6587; &eacute;t&eacute; &copy;</p>",
     "a & b <tag> 中文 été ©"),
    ("text outside any element and after </html> is kept",
     "loose <p>para</p></html> trailing",
     "loose\npara\ntrailing"),
    ("an empty page has no text", "", ""),
]


# Every table runs over every extractor: "bs4" and "regex" read the text from
# the BeautifulSoup tree, "lxml" from its own tree (textfilter/fast.py).
@pytest.mark.parametrize("extractor", EXTRACTORS)
@pytest.mark.parametrize(("html", "expected"), [c[1:] for c in TEXT_CASES],
                         ids=[c[0] for c in TEXT_CASES])
def test_text(html: str, expected: str, extractor: str) -> None:
    assert text_of(html, extractor) == expected


TITLE_CASES = [
    ("whitespace collapsed", "<title>\n  Hello \t  World\n</title>", "Hello World"),
    ("references decoded", "<title>Fish &amp; Chips &#8212; Menu</title>", "Fish & Chips \u2014 Menu"),
    ("no title", "<p>nothing</p>", ""),
    ("first title wins", "<title>one</title><title>two</title>", "one"),
    ("an SVG title labels a drawing, not the page", "<svg><title>icon</title></svg><p>x</p>", ""),
    ("a title misplaced in the body still counts", "<body><p>x</p><title>late</title></body>", "late"),
    ("Chinese title", "<title>新闻 — 首页</title>", "新闻 — 首页"),
]


@pytest.mark.parametrize("extractor", EXTRACTORS)
@pytest.mark.parametrize(("html", "expected"), [c[1:] for c in TITLE_CASES],
                         ids=[c[0] for c in TITLE_CASES])
def test_title(html: str, expected: str, extractor: str) -> None:
    assert parse(html, PAGE_URL, extractor).title == expected


@pytest.mark.parametrize("extractor", EXTRACTORS)
def test_parse_of_a_known_page(extractor: str) -> None:
    html = (
        "<html><head><title>Known</title><script>track()</script></head>"
        "<body><p>Hello <b>world</b></p><a href='/next'>Next</a></body></html>"
    )
    parsed = parse(html, PAGE_URL, extractor)
    assert parsed == Parsed(
        text="Hello world\nNext",
        title="Known",
        base_url=PAGE_URL,
        links=("/next",),
        source_chars=len(html),
        filtered_ratio=1 - len("Hello world\nNext") / len(html),
    )
    assert parsed.source_chars == 132
    assert parsed.filtered_ratio == pytest.approx(1 - 16 / 132)


@pytest.mark.parametrize("extractor", EXTRACTORS)
@pytest.mark.parametrize(("html", "ratio"), [
    ("", 0.0),
    ("<p>abcd</p>", 1 - 4 / 11),
    ("abcd", 0.0),
    ("<script>x</script>", 1.0),
])
def test_filtered_ratio(html: str, ratio: float, extractor: str) -> None:
    parsed = parse(html, PAGE_URL, extractor)
    assert parsed.source_chars == len(html)
    assert parsed.filtered_ratio == pytest.approx(ratio)
    assert 0.0 <= parsed.filtered_ratio <= 1.0


def test_text_and_title_do_not_depend_on_the_link_extractor() -> None:
    html = "<title>T</title><p>one <a href=a>two</a></p><!-- <a href=c> --><iframe src=f></iframe>"
    results = {name: parse(html, PAGE_URL, extractor=name) for name in EXTRACTORS}
    assert {(p.text, p.title, p.links) for p in results.values()} == {("one two", "T", ("a", "f"))}


def test_unknown_extractor_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="no-such"):
        parse("<p>x</p>", PAGE_URL, extractor="no-such")


GARBAGE = {
    "random bytes as latin-1": random.Random(7).randbytes(200_000).decode("latin-1"),
    "unclosed tags": "<html><body><div><p><b><i><a href='/open'>open" + "<span>" * 100 + "<table><tr><td>",
    "unclosed comment": "<p>seen</p><!-- never closed <a href=x> <p>hidden",
    "unclosed quote": "<p>seen</p><a href='/never closed>text</a><p>more",
    "NUL and control characters": "<p>a\x00b\x01c\x1b</p><a href='x\x00y'>",
    "lone surrogates": "<title>\ud800t</title><p>a\udc80b</p><a href='\udfffx'>",
    "only markup noise": "<<<>>></></ ><!><?><!---->&&&;&#;&#x;" * 50,
    "xml declaration": '<?xml version="1.0" encoding="utf-8"?><rss><item>x</item></rss>',
}


@pytest.mark.parametrize("html", GARBAGE.values(), ids=GARBAGE.keys())
def test_garbage_never_raises(html: str) -> None:
    for name in EXTRACTORS:
        parsed = parse(html, PAGE_URL, extractor=name)
        assert parsed.source_chars == len(html)
        assert 0.0 <= parsed.filtered_ratio <= 1.0
        assert "\n\n" not in parsed.text


@pytest.mark.parametrize("extractor", EXTRACTORS)
def test_garbage_keeps_what_can_be_got(extractor: str) -> None:
    assert parse(GARBAGE["unclosed comment"], PAGE_URL, extractor).text == "seen"
    assert parse(GARBAGE["lone surrogates"], PAGE_URL, extractor).text == "a\ufffdb"
    assert parse(GARBAGE["lone surrogates"], PAGE_URL, extractor).title == "\ufffdt"
    assert parse(GARBAGE["NUL and control characters"], PAGE_URL, extractor).links == ("x\ufffdy",)
    assert parse(GARBAGE["unclosed tags"], PAGE_URL, extractor).text == "open"


def test_deeply_nested_page_keeps_its_deepest_text_and_link() -> None:
    depth = 5000
    html = "<div>" * depth + "deep <a href='/deep'>link</a>" + "</div>" * depth
    for name in EXTRACTORS:
        parsed = parse(html, PAGE_URL, extractor=name)
        assert parsed.text == "deep link"
        assert parsed.links == ("/deep",)


def test_huge_attribute_value_is_kept_whole() -> None:
    href = "/" + "x" * 3_000_000
    html = f'<p>before</p><a href="{href}">big</a><a href="/after">after</a>'
    for name in EXTRACTORS:
        parsed = parse(html, PAGE_URL, extractor=name)
        assert parsed.links == (href, "/after")
        assert parsed.text == "before\nbigafter"


@pytest.mark.parametrize("extractor", EXTRACTORS)
@pytest.mark.parametrize("html", [
    "http://example.com/looks-like-a-url",
    "index.html",
    '<?xml version="1.0"?><feed><entry>x</entry></feed>',
])
def test_markup_that_looks_like_a_locator_or_xml_gives_no_warning(html: str, extractor: str) -> None:
    with warnings.catch_warnings(record=True) as caught:
        parse(html, PAGE_URL, extractor)
    assert [str(w.message) for w in caught] == []


PROJECT = Path(__file__).resolve().parents[1]
FORBIDDEN_IMPORTS = {
    # other crawler packages: textfilter is a leaf
    "controller", "getpage", "urlfilter", "urllist", "demosite",
    # anything that reaches the network or the disk
    "socket", "requests", "urllib3", "http", "urllib.request", "ssl", "shutil", "pathlib",
}


def test_textfilter_is_pure() -> None:
    sources = sorted((PROJECT / "textfilter").glob("*.py"))
    assert {p.name for p in sources} >= {"__init__.py", "parse.py", "links.py", "parsed.py"}
    for source in sources:
        tree = ast.parse(source.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "open":
                pytest.fail(f"{source.name} calls open()")
            else:
                continue
            for name in names:
                assert not any(name == bad or name.startswith(bad + ".") for bad in FORBIDDEN_IMPORTS), (
                    f"{source.name} imports {name}"
                )

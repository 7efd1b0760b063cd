"""GetURLs: every link extractor finds the same raw links; parse() resolves only <base href>."""
from __future__ import annotations

import random

import pytest

from textfilter import EXTRACTORS, extract_links, parse

PAGE_URL = "http://site.test/dir/page.html"

# (what it shows, html, expected links) -- every extractor must give exactly these.
LINK_CASES = [
    ("all four tags, in document order",
     "<a href=a>x</a><map><area href=b></map><frame src=c><iframe src=d></iframe>",
     ("a", "b", "c", "d")),
    ("frames inside a frameset",
     "<frameset cols='50%,50%'><frame src=left.html><frame src=right.html></frameset>",
     ("left.html", "right.html")),
    ("only the URL attribute of each tag counts",
     "<a name=top>t</a><a src=no data-href=no>x</a><frame href=no><img src=no.png><link href=no.css>",
     ()),
    ("duplicates are kept",
     "<a href=/x>1</a><a href=/y>2</a><a href=/x>3</a><a href=/x>4</a>",
     ("/x", "/y", "/x", "/x")),
    ("surrounding white space is stripped, empty values are kept (they name the base URL)",
     "<a href=' \n\t/spaced \r\n'>1</a><a href=''>2</a><a href='   '>3</a><a href>4</a>",
     ("/spaced", "", "", "")),
    ("javascript:, mailto:, tel: and data: are skipped whatever their case",
     "<a href='javascript:void(0)'>1</a><a href=' JavaScript:go()'>2</a>"
     "<a href='java\tscript:x()'>3</a><a href='MAILTO:me@site.test'>4</a>"
     "<a href='tel:+15550100'>5</a><a href='data:text/html,hi'>6</a><iframe src='data:,x'></iframe>",
     ()),
    ("names that merely start like those schemes are links",
     "<a href='javascripts/app.html'>1</a><a href='mailto.html'>2</a><a href='/tel:x'>3</a>"
     "<a href='https://site.test/?to=mailto:x'>4</a>",
     ("javascripts/app.html", "mailto.html", "/tel:x", "https://site.test/?to=mailto:x")),
    ("character references are decoded",
     "<a href='/a?x=1&amp;y=2'>1</a><a href='/b&#38;c&#x26;d'>2</a><a href='/caf&eacute;'>3</a>",
     ("/a?x=1&y=2", "/b&c&d", "/café")),
    ("a legacy reference followed by '=' stays literal in an attribute",
     "<a href='/q?a=1&copy=2&reg;&not'>1</a>",
     ("/q?a=1&copy=2®¬",)),
    ("double, single and unquoted values",
     "<a href=\"/dq?q='x'\">1</a><a href='/sq?q=\"x\"'>2</a><a href=/uq?x=1>3</a><a href=/slash/>4</a>",
     ("/dq?q='x'", '/sq?q="x"', "/uq?x=1", "/slash/")),
    ("tag and attribute names are case-insensitive",
     "<A HREF='/upper'>1</A><Area Href=/mixed><IFRAME SRC=/frame></IFRAME>",
     ("/upper", "/mixed", "/frame")),
    ("white space around '=' and newlines inside the tag",
     "<a\n  class='c'\n  href\n=\n  \"/nl\"\n>1</a>",
     ("/nl",)),
    ("the first of two href attributes wins",
     "<a href=/first href=/second>1</a>",
     ("/first",)),
    ("a '>' inside a quoted value does not end the tag",
     "<a title='a > b' href='/after-gt'>1</a><img alt=\">\"><a href=/next>2</a>",
     ("/after-gt", "/next")),
    ("a tag written inside another tag's attribute is not a tag",
     "<div title=\"<a href='/in-attribute'>\">x</div><a href=/real>y</a>",
     ("/real",)),
    ("links inside comments are not links",
     "<!-- <a href=/commented>x</a> --><a href=/live>y</a><!-- a -- > <a href=/still-comment> -->",
     ("/live",)),
    ("links inside script, style, title and textarea are not links",
     "<script>document.write('<a href=/scripted>x</a>')</script><style>/* <a href=/styled> */</style>"
     "<title><a href=/titled></title><textarea><a href=/typed></textarea><a href=/live>y</a>",
     ("/live",)),
    ("iframe content is fallback text, not markup",
     "<iframe src=/frame><a href=/fallback>x</a></iframe><a href=/live>y</a>",
     ("/frame", "/live")),
    ("links in noscript and template are links",
     "<noscript><a href=/no-js>x</a></noscript><template><a href=/tpl>y</a></template>",
     ("/no-js", "/tpl")),
    ("CDATA and processing instructions are bogus comments ending at the first '>'",
     "<![CDATA[ <a href=/cdata> ]]><?php echo '<a href=/php>' ?><a href=/live>y</a>",
     ("/live",)),
    ("markup after </html> is still read",
     "<html><body><a href=/in>x</a></body></html><a href=/after-html>y</a>",
     ("/in", "/after-html")),
    ("a tag cut off by the end of the file is not reported",
     "<a href=/whole>x</a><a href='/cut-off",
     ("/whole",)),
    ("a quote left open swallows the markup up to the next quote",
     "<a href=\"/open>x</a> <a href=\"/next\">y</a>",
     ("/open>x</a> <a href=",)),
    ("no links", "<p>plain</p>", ()),
    ("empty page", "", ()),
]


@pytest.mark.parametrize("extractor", EXTRACTORS)
@pytest.mark.parametrize(("html", "expected"), [c[1:] for c in LINK_CASES],
                         ids=[c[0] for c in LINK_CASES])
def test_links(extractor: str, html: str, expected: tuple[str, ...]) -> None:
    base, links = extract_links(html, extractor)
    assert links == expected
    assert base is None


BASE_CASES = [
    ("no base: the page URL", "<a href=x>", PAGE_URL),
    ("relative base", "<head><base href='/sub/'></head>", "http://site.test/sub/"),
    ("base relative to the page's directory", "<base href='other/'>", "http://site.test/dir/other/"),
    ("absolute base", "<base href='https://cdn.site.test/v2/'>", "https://cdn.site.test/v2/"),
    ("base with references and spaces", "<base href='  /a?b=1&amp;c=2 '>", "http://site.test/a?b=1&c=2"),
    ("the first base with an href wins", "<base target=_top><base href=/one/><base href=/two/>",
     "http://site.test/one/"),
    ("a base in the body still counts", "<body><p>x</p><base href=/late/></body>", "http://site.test/late/"),
    ("an empty base href means the page URL", "<base href=''>", PAGE_URL),
    ("a javascript: base is ignored", "<base href='javascript:alert(1)'>", PAGE_URL),
    ("a data: base is ignored", "<base href='DATA:text/html,x'>", PAGE_URL),
    ("an unparsable base is ignored", "<base href='http://[::1/'>", PAGE_URL),
    ("a base inside a comment does not count", "<!-- <base href=/commented/> -->", PAGE_URL),
]


@pytest.mark.parametrize("extractor", EXTRACTORS)
@pytest.mark.parametrize(("html", "expected"), [c[1:] for c in BASE_CASES],
                         ids=[c[0] for c in BASE_CASES])
def test_base_url(extractor: str, html: str, expected: str) -> None:
    assert parse(html, PAGE_URL, extractor=extractor).base_url == expected


def test_base_href_is_returned_raw_and_links_stay_unresolved() -> None:
    html = "<base href=' ../up/ '><a href='../x.html'>x</a><a href='#frag'>y</a>"
    for name in EXTRACTORS:
        assert extract_links(html, name) == ("../up/", ("../x.html", "#frag"))
        parsed = parse(html, PAGE_URL, name)
        assert parsed.base_url == "http://site.test/up/"
        assert parsed.links == ("../x.html", "#frag")


def test_unknown_extractor_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="bs4"):
        extract_links("<a href=x>", "nope")


# Ordinary pages, written the way sites write them, with the links a reader
# would count. All extractors must agree with each other and with the reader.
BLOG = """<!DOCTYPE html>\r
<html lang="en">\r
<head>\r
  <meta charset="utf-8">\r
  <title>Notes &mdash; A Blog</title>\r
  <link rel="stylesheet" href="/static/site.css">\r
  <script async src="https://stats.example/js"></script>\r
  <script>window.dataLayer = []; var tpl = '<a href="/not-a-link">';</script>\r
</head>\r
<body class="post">\r
  <header><nav>\r
    <a href="/" class="brand">Home</a>\r
    <a href="/archive/">Archive</a>\r
    <a href="/tags/crawling/" rel="tag">crawling</a>\r
  </nav></header>\r
  <main><article>\r
    <h1>Breadth-first crawling</h1>\r
    <p>See <a href="https://en.example.org/wiki/Breadth-first_search">BFS</a>\r
       and <a href='/2023/05/frontier.html#queues'>the frontier post</a>.</p>\r
    <!-- <a href="/draft">draft link</a> -->\r
    <p><img src="/img/graph.png" alt="graph"> <a href="/search?q=bfs&amp;page=2">more</a></p>\r
    <p>Contact: <a href="mailto:author@example.org">mail</a></p>\r
  </article></main>\r
  <footer><a href="/" >Home</a> &middot; <a href="/feed.xml" type="application/rss+xml">RSS</a></footer>\r
</body>\r
</html>\r
"""
BLOG_LINKS = (
    "/", "/archive/", "/tags/crawling/", "https://en.example.org/wiki/Breadth-first_search",
    "/2023/05/frontier.html#queues", "/search?q=bfs&page=2", "/", "/feed.xml",
)

NEWS_ZH = """<html>
<head><meta http-equiv="Content-Type" content="text/html; charset=gb2312">
<title>新闻中心_首页</title>
<style type="text/css">a { color: #333 } /* <a href="/css"> */</style>
<SCRIPT language=javascript>
<!--
function go(u) { window.location = "/jump?u=" + u; }
document.write("<a href=/written-by-js>广告</a>");
//-->
</SCRIPT>
</head>
<body>
<TABLE width=960 align=center><TR>
<TD><A href=/index.html target=_blank>首页</A></TD>
<TD><A HREF="/news/guonei.shtml">国内</A></TD>
<TD><a href='/news/guoji.shtml'>国际</a></TD>
<TD><a href="javascript:go('x')">跳转</a></TD>
</TR></TABLE>
<div class=list><ul>
<li><a href="/2024/0301/12345.html" title="标题&quot;引号&quot;">两会召开</a><span>03-01</span></li>
<li><a href="/2024/0301/12346.html">经济&nbsp;观察</a></li>
<li><a href=" /2024/0301/12347.html ">空格</a></li>
</ul></div>
<iframe src="/ad/banner.html" width=468 height=60 frameborder=0 scrolling=no></iframe>
<map name=m><area shape=rect coords="0,0,10,10" href="/map/north.html"><area shape=default nohref></map>
<p>版权所有 &copy; 2024</p>
</body>
</html>
"""
NEWS_ZH_LINKS = (
    "/index.html", "/news/guonei.shtml", "/news/guoji.shtml", "/2024/0301/12345.html",
    "/2024/0301/12346.html", "/2024/0301/12347.html", "/ad/banner.html", "/map/north.html",
)

XHTML = """<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Strict//EN" "http://www.w3.org/TR/xhtml1/DTD/xhtml1-strict.dtd">
<html xmlns="http://www.w3.org/1999/xhtml" xml:lang="en">
<head><title>Docs</title><base href="http://docs.site.test/v1/" />
<script type="text/javascript">//<![CDATA[
var s = '<a href="/in-cdata-script">';
//]]></script></head>
<body>
<ul>
  <li><a href="intro.html">Intro</a></li>
  <li><a href="api/index.html#top">API</a></li>
  <li><a href="../v0/">Old version</a></li>
</ul>
<p><a href="tel:+15550100">call</a> <a href="">empty</a> <a href="faq.html?a=1&amp;b=2">FAQ</a></p>
</body>
</html>
"""
XHTML_LINKS = ("intro.html", "api/index.html#top", "../v0/", "", "faq.html?a=1&b=2")

FRAMESET = """<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 4.01 Frameset//EN">
<html><head><title>Frames</title></head>
<frameset rows="80,*">
  <frame name="top" src="top.html" scrolling="no">
  <frameset cols="200,*">
    <frame name="nav" src="nav.html">
    <frame name="main" src="main.html?page=1&amp;lang=en">
  </frameset>
  <noframes><body><a href="noframes.html">No frames</a></body></noframes>
</frameset>
</html>
"""
FRAMESET_LINKS = ("top.html", "nav.html", "main.html?page=1&lang=en")

ORDINARY_PAGES = {
    "blog": (BLOG, None, BLOG_LINKS),
    "chinese news portal": (NEWS_ZH, None, NEWS_ZH_LINKS),
    "xhtml with base": (XHTML, "http://docs.site.test/v1/", XHTML_LINKS),
    "frameset": (FRAMESET, None, FRAMESET_LINKS),
}


@pytest.mark.parametrize("extractor", EXTRACTORS)
@pytest.mark.parametrize(("html", "base", "links"), ORDINARY_PAGES.values(), ids=ORDINARY_PAGES.keys())
def test_every_extractor_reads_ordinary_pages_alike(
    extractor: str, html: str, base: str | None, links: tuple[str, ...]
) -> None:
    assert extract_links(html, extractor) == (base, links)


@pytest.mark.parametrize("extractor", EXTRACTORS)
def test_parse_of_an_ordinary_page(extractor: str) -> None:
    parsed = parse(NEWS_ZH, "http://news.site.test/", extractor)
    assert parsed.title == "新闻中心_首页"
    assert parsed.links == NEWS_ZH_LINKS
    assert parsed.base_url == "http://news.site.test/"
    assert parsed.text == (
        "首页\t国内\t国际\t跳转\n两会召开03-01\n经济 观察\n空格\n版权所有 © 2024"
    )


# Random pages stitched from awkward fragments: the three extractors must agree.
FRAGMENTS = [
    '<a href="d1">', "<a href='s1'>", "<a href=u1>", "</a>", "<A HREF=UP>", "<a\nhref\n=\n'nl'>",
    '<a href=" sp ">', '<a href="javascript:x()">', "<a href>", '<a href="">', "<a href=1 href=2>",
    '<a href="a&amp;b&#65;&lt">', "<a href='?x=1&copy=2&reg;&ampy'>", '<a href="x\x00y">',
    "<a title='x>y' href=t1>", "<a title=a=b href=t2>", '<a href=">">', "<a/href=slash>",
    '<a href="unclosed', "<a href='unclosed", "<a", "<a ", "<a href=",
    "<area href=ar>", '<frame src="fr">', "<iframe src=if>", "</iframe>", "</IFRAME >",
    "<base href=/b1/>", "<base>", "<p>", "</p>", "<div title=\"<a href='ia'>\">", "</div>",
    "<!--", "-->", "--!>", "<!-->", "<!--->", "<!DOCTYPE html>", "<![CDATA[", "]]>", "<?pi ?>",
    "<script>", "</script>", "<SCRIPT type=x>", "</script >", "<style>", "</style>",
    "<title>", "</title>", "<textarea>", "</textarea>", "<xmp>", "</xmp>",
    "<noscript>", "</noscript>", "<template>", "</template>", "<noembed>", "</noembed>",
    "<noframes>", "</noframes>", "<plaintext>", "<svg>", "</svg>", "<table>", "<tr>", "<td>",
    "</html>", "<html>", "<body>", "text", "文字", " ", "\n", "\r\n", "\t", "&", "&amp;", "&#",
    "<", ">", "/", "=", '"', "'", "</", "</>", "<!", "<?",
]


def test_extractors_agree_on_random_awkward_pages() -> None:
    rng = random.Random(20240229)
    checked_links = 0
    for _ in range(600):
        html = "".join(rng.choice(FRAGMENTS) for _ in range(rng.randrange(1, 14)))
        reference = extract_links(html, "bs4")
        for name in EXTRACTORS:
            assert extract_links(html, name) == reference, (name, html)
        checked_links += len(reference[1])
    assert checked_links > 300  # the pages really did contain links to compare


# Where the extractors are known to disagree, each with what each one says.
KNOWN_DISAGREEMENTS = [
    ("'<!--' then '<script>' inside a script hides the next '</script>' from an HTML "
     "parser (the script data escaped states); the regex stops at that '</script>'",
     "<script><!--<script>document.write('</script><a href=/inner>')</script>--></script>"
     "<a href=/outer>x</a>",
     {"bs4": ("/outer",), "lxml": ("/outer",), "regex": ("/inner", "/outer")}),
    ("lone surrogates (text decoded with errors='surrogateescape') cannot reach libxml2 "
     "and become U+FFFD; the regex passes them through",
     "<a href='/x\udc80'>x</a>",
     {"bs4": ("/x\ufffd",), "lxml": ("/x\ufffd",), "regex": ("/x\udc80",)}),
]


@pytest.mark.parametrize(("html", "expected"), [c[1:] for c in KNOWN_DISAGREEMENTS],
                         ids=[c[0][:60] for c in KNOWN_DISAGREEMENTS])
def test_known_disagreements(html: str, expected: dict[str, tuple[str, ...]]) -> None:
    assert set(expected) == set(EXTRACTORS)
    for name, links in expected.items():
        assert extract_links(html, name)[1] == links


def test_parse_takes_its_links_from_the_chosen_extractor() -> None:
    html = KNOWN_DISAGREEMENTS[0][1]
    assert parse(html, PAGE_URL, extractor="bs4").links == ("/outer",)
    assert parse(html, PAGE_URL, extractor="lxml").links == ("/outer",)
    assert parse(html, PAGE_URL, extractor="regex").links == ("/inner", "/outer")
    # The text comes from a tree either way; the script ends at its second
    # "</script>", so the "-->" after it is text, in a browser too.
    assert {parse(html, PAGE_URL, extractor=name).text for name in EXTRACTORS} == {"-->x"}


def test_links_written_by_javascript_are_invisible_to_every_extractor() -> None:
    html = "<script>document.body.innerHTML = '<a href=\"/js\">x</a>';</script><a href=/html>y</a>"
    for name in EXTRACTORS:
        assert extract_links(html, name)[1] == ("/html",)

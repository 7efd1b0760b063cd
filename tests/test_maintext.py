"""main_text (--text main): the page's main block, laid out like the plain text,
chrome dropped; the plain text when there is no main block to find."""
from __future__ import annotations

import pytest
from lxml import etree

from demosite import DemoSite
from getpage.charset import decode_html
from textfilter.maintext import main_text
from textfilter.parse import parse

PROSE = ("The harbour opened a new ferry line this morning, and the first boat left on time "
         "with forty passengers aboard.")
MORE_PROSE = ("Officials said the line would run every hour in summer and every two hours in "
              "winter, weather permitting.")


def plain(html: str) -> str:
    return parse(html, "http://127.0.0.1/", "lxml").text


def test_semantic_page_keeps_the_article_and_drops_the_chrome():
    html = f"""<!DOCTYPE html><html><head><title>Ferry</title></head><body>
    <header><a href="/">Harbour Times</a><p>Your daily harbour news</p></header>
    <nav><ul><li><a href="/news">News</a></li><li><a href="/sport">Sport</a></li></ul></nav>
    <main><article>
      <h1>New ferry line opens</h1>
      <p>{PROSE}</p>
      <div class="share-bar">Share on Mastodon</div>
      <p>{MORE_PROSE}</p>
    </article>
    <aside><h2>Most read</h2><p>A sidebar paragraph with enough words to look like prose.</p></aside>
    <section id="comments"><h2>Comments</h2><p>First! This comment is long enough to count.</p></section>
    </main>
    <footer><p>Contact us</p><p>&copy; Harbour Times</p></footer>
    </body></html>"""
    assert main_text(html) == f"New ferry line opens\n{PROSE}\n{MORE_PROSE}"


def test_div_soup_page_named_by_class_and_id():
    html = f"""<html><body>
    <div id="header"><span>Harbour Times</span> <span>Since 1901</span></div>
    <div class="sidebar"><p>Weather today: sunny spells and a light breeze from the west.</p></div>
    <div id="content"><h2>New ferry line opens</h2><p>{PROSE}</p><p>{MORE_PROSE}</p></div>
    <div class="ad-slot">Buy one ticket, get one free on every route this weekend only.</div>
    <div id="footer">Harbour Times, 1 Quay Street</div>
    </body></html>"""
    assert main_text(html) == f"New ferry line opens\n{PROSE}\n{MORE_PROSE}"


def test_an_unlabelled_column_beside_the_story_is_left_out():
    html = f"""<html><body><div class="wrap">
    <div class="col-a"><p>{PROSE}</p><p>{MORE_PROSE}</p><p>{PROSE}</p><p>{MORE_PROSE}</p></div>
    <div class="col-b"><p>Weather: sunny spells.</p></div>
    </div></body></html>"""
    assert main_text(html).split("\n") == [PROSE, MORE_PROSE] * 2


def test_an_article_with_half_the_text_wins_over_what_surrounds_it():
    html = f"""<html><body><div class="page">
    <article><h1>Ferry</h1><p>{PROSE}</p><p>{MORE_PROSE}</p></article>
    <div class="reader-notes"><p>{MORE_PROSE}</p></div>
    </div></body></html>"""
    assert main_text(html) == f"Ferry\n{PROSE}\n{MORE_PROSE}"


def test_link_lists_inside_the_article_are_cut_but_inline_links_stay():
    html = f"""<html><body><article>
    <h1>Ferry</h1>
    <p>{PROSE} See the <a href="/timetable">timetable</a> for details.</p>
    <ul><li><a href="/a">Older ferry story</a></li><li><a href="/b">Another story</a></li></ul>
    <p><a href="/next">Next story</a> | <a href="/prev">Previous story</a></p>
    <p>{MORE_PROSE}</p>
    </article></body></html>"""
    assert main_text(html) == (f"Ferry\n{PROSE} See the timetable for details.\n{MORE_PROSE}")


def test_text_after_a_removed_element_stays_in_its_line():
    html = (f"<html><body><article><p>{PROSE}</p>"
            "<p>Tickets cost <span class=\"social-icons\">Like Tweet</span>four euros.</p>"
            "</article></body></html>")
    assert main_text(html) == f"{PROSE}\nTickets cost four euros."


def test_heading_just_above_the_story_column_is_its_first_line():
    story = "".join(f"<p>{PROSE}</p>" for _ in range(4))
    html = f"""<html><body>
    <h1>New ferry line opens</h1>
    <p>By A. Reporter, 3 May</p>
    <div class="story">{story}</div>
    </body></html>"""
    assert main_text(html).split("\n") == ["New ferry line opens", *[PROSE] * 4]


def test_heading_far_above_the_story_is_not_taken():
    story = "".join(f"<p>{PROSE}</p>" for _ in range(12))
    snippets = "".join(f"<li>Weather in region {n}: sunny spells, light breeze.</li>" for n in range(6))
    html = f"""<html><body>
    <h1>Harbour Times</h1>
    <div class="today"><ul>{snippets}</ul></div>
    <div class="story">{story}</div>
    </body></html>"""
    assert main_text(html).split("\n") == [PROSE] * 12


def test_an_intro_before_a_long_section_stays():
    sections = "".join(f"<p>{MORE_PROSE}</p>" for _ in range(10))
    html = f"""<html><body><div class="doc">
    <h2>Ferries</h2><p>{PROSE}</p>
    <div class="sect"><h3>Timetable</h3>{sections}</div>
    </div></body></html>"""
    assert main_text(html).split("\n") == ["Ferries", PROSE, "Timetable", *[MORE_PROSE] * 10]


def test_header_inside_the_article_keeps_the_title():
    html = (f"<html><body><header><a href='/'>Site</a> Tagline of the site</header><article>"
            f"<header><h1>New ferry line opens</h1><p>3 May</p></header><p>{PROSE}</p>"
            "</article></body></html>")
    assert main_text(html) == f"New ferry line opens\n3 May\n{PROSE}"


def test_tables_keep_their_cell_layout():
    html = (f"<html><body><article><p>{PROSE}</p><table><caption>Fares</caption>"
            "<tr><th>Route</th><th>Price</th></tr><tr><td>North</td><td>4 euros</td></tr>"
            "</table></article></body></html>")
    assert main_text(html) == f"{PROSE}\nFares\nRoute\tPrice\nNorth\t4 euros"


def test_cjk_page():
    sentence = "这是一个用于测试网页爬虫的简体中文页面，正文比导航长得多，所以它是主要内容。"
    html = f"""<html lang="zh"><head><meta charset="utf-8"><title>测试</title></head><body>
    <nav><a href="/">首页</a> <a href="/news">新闻</a> <a href="/about">关于我们</a></nav>
    <div class="main-column"><h1>网页爬虫</h1><p>{sentence}</p><p>{sentence}</p></div>
    <div class="footer">版权所有</div>
    </body></html>"""
    assert main_text(html) == f"网页爬虫\n{sentence}\n{sentence}"


@pytest.mark.parametrize("html", [
    "",
    "hello",
    "<p>Moved to <a href='/new'>the new page</a>.</p>",
    "<html><body><nav><a href='/'>Home</a> <a href='/b'>Blog</a></nav></body></html>",
    "<html><frameset><frame src='a.html'></frameset></html>",
    "<html><body><p>Short.</p><ul><li><a href='/a'>A</a></li><li><a href='/b'>B</a></li></ul>"
    "</body></html>",
])
def test_no_main_block_falls_back_to_the_plain_text(html):
    assert main_text(html) == plain(html)


def test_fallback_keeps_a_link_hub_readable():
    html = "<html><body><nav><a href='/'>Home</a> <a href='/b'>Blog</a></nav></body></html>"
    assert main_text(html) == "Home Blog"


def test_a_tree_libxml2_stopped_building_falls_back_to_the_plain_text():
    html = f"<p>{PROSE}</p>" + "<div>" * 400 + "deep text" + "</div>" * 400
    assert main_text(html) == plain(html)
    assert main_text(html).endswith("deep text")


def test_lone_surrogates_do_not_raise():
    html = f"<html><body><article><p>{PROSE} \udcff</p></article></body></html>"
    assert main_text(html) == f"{PROSE} \ufffd"


def test_title_is_not_part_of_the_text():
    html = f"<html><head><title>Window title</title></head><body><article><p>{PROSE}</p></article></body></html>"
    assert main_text(html) == PROSE


# -- the demo site ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def site() -> DemoSite:
    return DemoSite(seed=2026)


def demo_html(site: DemoSite, path: str) -> str:
    response = site.respond(path, "127.0.0.1:8000")
    return decode_html(response.body, response.headers["Content-Type"])[0]


def article_paragraphs(html: str) -> list[str]:
    """The prose of the demo template: every <p> directly inside <article>."""
    tree = etree.fromstring(html, etree.HTMLParser())
    return [" ".join("".join(p.itertext()).split()) for p in tree.iterfind(".//article/p")]


def test_demo_article_keeps_its_prose_and_drops_its_menus(site):
    path = "/news/world/story-2.html"
    html = demo_html(site, path)
    lines = main_text(html).split("\n")
    paragraphs = article_paragraphs(html)
    assert len(paragraphs) >= 7
    assert lines[0] == parse(html, "http://127.0.0.1:8000" + path).title == "World story 2"
    assert lines[1:1 + 3] == paragraphs[:3]
    assert set(paragraphs) <= set(lines)
    assert "Figures" in lines   # the table's caption: the table is content
    chrome = {link.label for link in site.links(path)} | {"Read on", "Related articles", "© Demo Daily"}
    assert not chrome & set(lines)
    assert "News" in plain(html).split("\n")  # the menu is there to drop


def test_demo_intl_page_keeps_its_cjk_sentence(site):
    path = "/intl/gbk.html"
    html = demo_html(site, path)
    lines = main_text(html).split("\n")
    assert site.EXPECTED_TEXTS[path] in lines
    assert "International editions" not in lines   # the breadcrumb


def test_every_demo_line_is_a_line_of_the_plain_text(site):
    """Main text only removes: same layout, no line invented or merged."""
    for path in site.paths():
        html = demo_html(site, path)
        kept, whole = main_text(html).split("\n"), plain(html).split("\n")
        assert set(kept) <= set(whole), path
        assert len(kept) < len(whole), path

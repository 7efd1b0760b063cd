"""Extraction patterns (textfilter.extract) and their output files (controller.extracted)."""
from __future__ import annotations

import csv
import json
import pickle

import pytest

from controller.extracted import (
    CSV_FILE, JSONL_FILE, ExtractedWriter, ExtractionTally, csv_cell, keep_rows_of,
)
from controller.store import OutputError
from textfilter.extract import (
    ExtractPattern, Extraction, Selector, element_text, parse_pattern, parse_selector,
)

PAGE = """<!DOCTYPE html>
<html><head><title>Page title</title><style>h1 { color: red }</style></head>
<body>
<h1 class="site">Site</h1>
<h1 class="post-title big">Caf&eacute; &amp; <em>Cr&egrave;me</em>&nbsp;br&ucirc;l&eacute;e<!-- draft --></h1>
<div class="post">
  <p>First <b>Hel</b>lo <a href="/next.html">link</a>.</p>
  <div class="ad">BUY NOW<script>track()</script></div>after ad
  <p>Second&#8217;s   para<br>line two</p>
  <script>var hidden = 1;</script><style>p {}</style>
  <ul><li>one</li><li>two</li></ul>
  <p>   </p>
</div>
<ul class="tags"><li><a href="/t/a" rel="tag">alpha</a></li><li><a href="/t/b">beta</a></li><li><a href="/t/c"> </a></li></ul>
<div class="ad">sidebar ad</div>
</body></html>"""


def extraction(*patterns: str, excludes: tuple[str, ...] = (), url_regex: str | None = None) -> Extraction:
    return Extraction.from_specs(patterns, excludes, url_regex)


@pytest.mark.parametrize("spec, expected", [
    ("title=css:h1.post-title", ExtractPattern("title", "css", "h1.post-title")),
    ("title=h1.post-title", ExtractPattern("title", "css", "h1.post-title")),
    ("Title_2=CSS: h1 ", ExtractPattern("Title_2", "css", "h1")),
    ("post=xpath://div[@class='post']", ExtractPattern("post", "xpath", "//div[@class='post']")),
    ("href=xpath://a/@href", ExtractPattern("href", "xpath", "//a/@href")),
    ("sel=css:a[href='x=y']", ExtractPattern("sel", "css", "a[href='x=y']")),
    ("a-b=css:p", ExtractPattern("a-b", "css", "p")),
])
def test_parse_pattern(spec, expected):
    assert parse_pattern(spec) == expected


@pytest.mark.parametrize("spec, message", [
    ("title", "has no '='"),
    ("=css:h1", "not a valid column name"),
    ("1st=css:h1", "not a valid column name"),
    ("my title=css:h1", "not a valid column name"),
    ("id=css:h1", "taken by the id and url columns"),
    ("URL=css:h1", "taken by the id and url columns"),
    ("title=", "is empty"),
    ("title=css:", "is empty"),
    ("title=css:h1[", "CSS selector 'h1[' does not compile"),
    ("title=css:p::text", "CSS selector 'p::text' does not compile"),
    ("title=//h1", "needs the xpath: prefix"),
    ("title=xpth://h1", "the only prefixes are css: and xpath:"),
    ("title=xpath://h1[", "XPath '//h1[' does not compile"),
    ("title=xpath:nosuch(//h1)", "XPath 'nosuch(//h1)' does not compile"),
    ("title=xpath:$var", "XPath '$var' does not compile"),
])
def test_bad_patterns_are_refused_in_one_line(spec, message):
    with pytest.raises(ValueError) as caught:
        parse_pattern(spec)
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


def test_names_must_be_unique_ignoring_case():
    with pytest.raises(ValueError, match="given twice"):
        extraction("title=css:h1", "Title=css:h2")


def test_bad_url_regex_and_no_patterns_are_refused():
    with pytest.raises(ValueError, match="URL regular expression"):
        extraction("title=css:h1", url_regex="(unclosed")
    with pytest.raises(ValueError, match="no extraction pattern"):
        extraction()


def test_parse_selector_for_excludes():
    assert parse_selector("css:div.ad") == Selector("css", "div.ad")
    assert parse_selector("div.ad") == Selector("css", "div.ad")
    assert parse_selector("xpath://aside") == Selector("xpath", "//aside")
    with pytest.raises(ValueError, match="does not compile"):
        parse_selector("xpath://aside[")


def test_css_element_text_keeps_inline_joins_and_entities_and_drops_comments():
    found = extraction("title=css:h1.post-title").extract(PAGE, "http://h/")
    assert found == {"title": ["Café & Crème brûlée"]}


def test_element_text_separates_blocks_and_skips_scripts_and_styles():
    found = extraction("post=css:div.post").extract(PAGE, "http://h/")
    assert found["post"] == ["First Hello link. BUY NOW after ad Second’s para line two one two"]


def test_exclude_removes_subnodes_but_keeps_their_tail_text():
    found = extraction("post=css:div.post", "ads=css:.ad", excludes=("css:div.ad",)).extract(PAGE, "u")
    assert found == {"post": ["First Hello link. after ad Second’s para line two one two"], "ads": []}


def test_xpath_exclude_and_several_excludes():
    found = extraction("post=xpath://div[@class='post']",
                       excludes=("xpath://div[@class='post']//div", "css:li")).extract(PAGE, "u")
    assert found == {"post": ["First Hello link. after ad Second’s para line two"]}


def test_several_matches_in_document_order_and_empty_matches_dropped():
    found = extraction("tags=css:ul.tags a", "heads=xpath://h1").extract(PAGE, "u")
    assert found == {"tags": ["alpha", "beta"], "heads": ["Site", "Café & Crème brûlée"]}


def test_xpath_attribute_text_and_scalar_results():
    found = extraction("hrefs=xpath://ul[@class='tags']//a/@href", "rel=xpath://a/@rel",
                       "texts=xpath://div[@class='post']/p/text()",
                       "count=xpath:count(//li)", "ratio=xpath:count(//li) div 2",
                       "any=xpath:boolean(//h1)", "name=xpath:string(//title)").extract(PAGE, "u")
    assert found == {
        "hrefs": ["/t/a", "/t/b", "/t/c"], "rel": ["tag"],
        "texts": ["First", "lo", ".", "Second’s   para", "line two"],  # strings: stripped only
        "count": ["5"], "ratio": ["2.5"], "any": ["true"], "name": ["Page title"],
    }


def test_no_match_gives_an_empty_list_for_every_name():
    assert extraction("x=css:table", "y=xpath://nav/@id").extract(PAGE, "u") == {"x": [], "y": []}


@pytest.mark.parametrize("html", ["", "   ", "<!-- only a comment -->", "\ufeff",
                                  "<?xml version='1.0' encoding='utf-8'?><p>xml</p>",
                                  "<p>lone \udcff surrogate</p>", "<div>" * 3000 + "deep"])
def test_odd_pages_never_raise(html):
    found = extraction("p=css:p", "d=css:div").extract(html, "u")
    assert set(found) == {"p", "d"}
    assert all(isinstance(value, list) for value in found.values())


def test_deeply_nested_element_text_needs_no_recursion():
    html = "<div id='top'>" + "<div>x" * 5000 + "</div>" * 5000 + "</div>"
    found = extraction("top=css:div#top").extract(html, "u")
    assert found["top"] == [" ".join(["x"] * len(found["top"][0].split()))]
    assert len(found["top"][0].split()) > 200


def test_exclusion_does_not_leak_between_pages():
    ex = extraction("post=css:div.post", excludes=("css:p",))
    assert ex.extract(PAGE, "u") == ex.extract(PAGE, "u")


def test_applies_to_searches_the_url():
    ex = extraction("t=css:h1", url_regex=r"/\d{4}/\d{2}/[^/]+\.html$")
    assert ex.applies_to("http://h/2026/05/post.html")
    assert not ex.applies_to("http://h/archive/2026/05/")
    assert extraction("t=css:h1").applies_to("http://anything/")
    assert extraction("t=css:h1", url_regex="").applies_to("http://anything/")


def test_extraction_pickles_and_works_after_unpickling():
    ex = extraction("title=css:h1.post-title", "hrefs=xpath://a/@href", excludes=("css:.ad",),
                    url_regex="/posts/")
    ex.extract(PAGE, "u")  # compiled selectors in this process must not stop pickling
    copy = pickle.loads(pickle.dumps(ex))
    assert copy == ex
    assert copy.extract(PAGE, "u") == ex.extract(PAGE, "u")
    assert copy.names == ("title", "hrefs")


def test_element_text_of_a_fragment():
    from lxml import html as lxml_html
    element = lxml_html.fragment_fromstring("<td>a<b>b</b><br>c<template>t</template>\u3000d</td>")
    assert element_text(element) == "ab c d"


# --- controller.extracted ---------------------------------------------------------

def read_csv(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.reader(f))


def test_writer_rows_cells_and_jsonl(tmp_path):
    writer = ExtractedWriter(tmp_path, ("title", "tags"), jsonl=True, append=False)
    writer.add(1, "http://h/a", {"title": ["A, \"quoted\""], "tags": ["x", "y\nz"]})
    writer.add(2, "http://h/b", {"title": [], "tags": ["only"]})
    writer.add(3, "http://h/c", {})
    writer.close()
    assert read_csv(tmp_path / CSV_FILE) == [
        ["id", "url", "title", "tags"],
        ["1", "http://h/a", "A, \"quoted\"", "x | y z"],
        ["2", "http://h/b", "", "only"],
        ["3", "http://h/c", "", ""],
    ]
    lines = (tmp_path / JSONL_FILE).read_text(encoding="utf-8").splitlines()
    assert [json.loads(line) for line in lines] == [
        {"id": 1, "url": "http://h/a", "title": ["A, \"quoted\""], "tags": ["x", "y\nz"]},
        {"id": 2, "url": "http://h/b", "title": [], "tags": ["only"]},
        {"id": 3, "url": "http://h/c", "title": [], "tags": []},
    ]


def test_rows_are_readable_before_close(tmp_path):
    writer = ExtractedWriter(tmp_path, ("t",), jsonl=True, append=False)
    writer.add(7, "http://h/", {"t": ["é"]})
    assert read_csv(tmp_path / CSV_FILE)[-1] == ["7", "http://h/", "é"]
    assert json.loads((tmp_path / JSONL_FILE).read_text(encoding="utf-8")) == \
        {"id": 7, "url": "http://h/", "t": ["é"]}
    writer.close()


def test_no_jsonl_unless_asked(tmp_path):
    ExtractedWriter(tmp_path, ("t",), jsonl=False, append=False).close()
    assert not (tmp_path / JSONL_FILE).exists()


def test_resume_keeps_committed_rows_cuts_torn_lines_and_appends(tmp_path):
    writer = ExtractedWriter(tmp_path, ("t",), jsonl=True, append=False)
    for page_id in (1, 2, 3):
        writer.add(page_id, f"http://h/{page_id}", {"t": [f"v{page_id}"]})
    writer.close()
    with open(tmp_path / CSV_FILE, "a", encoding="utf-8") as f:
        f.write("4,http://h/4,torn")          # killed mid-row
    with open(tmp_path / JSONL_FILE, "a", encoding="utf-8") as f:
        f.write('{"id": 4, "url": "http')

    keep_rows_of(tmp_path, {1, 3})
    writer = ExtractedWriter(tmp_path, ("t",), jsonl=True, append=True)
    writer.add(2, "http://h/2", {"t": ["again"]})
    writer.close()

    assert read_csv(tmp_path / CSV_FILE) == [
        ["id", "url", "t"], ["1", "http://h/1", "v1"], ["3", "http://h/3", "v3"],
        ["2", "http://h/2", "again"]]
    ids = [json.loads(line)["id"] for line in (tmp_path / JSONL_FILE).read_text().splitlines()]
    assert ids == [1, 3, 2]


def test_keep_rows_of_without_files_does_nothing(tmp_path):
    keep_rows_of(tmp_path, {1})
    assert list(tmp_path.iterdir()) == []


def test_append_refuses_other_columns(tmp_path):
    ExtractedWriter(tmp_path, ("title",), jsonl=False, append=False).close()
    with pytest.raises(OutputError, match="resume with the crawl's own --extract"):
        ExtractedWriter(tmp_path, ("title", "post"), jsonl=False, append=True)


def test_append_to_a_missing_file_writes_the_header(tmp_path):
    writer = ExtractedWriter(tmp_path, ("t",), jsonl=False, append=True)
    writer.add(1, "u", {"t": ["x"]})
    writer.close()
    assert read_csv(tmp_path / CSV_FILE) == [["id", "url", "t"], ["1", "u", "x"]]


def test_csv_cell_joins_matches_on_one_line():
    assert csv_cell(["a", "b  c", "d\ne"]) == "a | b c | d e"
    assert csv_cell([]) == ""


def test_tally_counts_records_and_misses():
    tally = ExtractionTally(("title", "post"))
    tally.count({"title": ["T"], "post": ["P"]})
    tally.count({"title": ["T"], "post": []})
    tally.count({"title": [], "post": ["P", "Q"]})
    tally.count({"title": ["T"], "post": ["P"]})
    assert (tally.pages, tally.records, tally.extracted) == (4, 8, 6)
    assert tally.summary() == "extracted 6 of 8 records (75.0%) from 4 pages"
    assert tally.as_dict() == {"pages": 4, "records": 8, "extracted": 6, "rate": 0.75,
                               "missed_by_name": {"title": 1, "post": 1}}
    assert ExtractionTally(("t",)).rate() == 1.0


def test_tally_read_back_from_extracted_csv(tmp_path):
    writer = ExtractedWriter(tmp_path, ("title", "post"), jsonl=False, append=False)
    writer.add(1, "u1", {"title": ["T"], "post": []})
    writer.add(2, "u2", {"title": ["T"], "post": ["P"]})
    writer.close()
    tally = ExtractionTally.read(tmp_path, ("title", "post"))
    assert (tally.pages, tally.extracted, dict(tally.missed)) == (2, 3, {"post": 1})
    assert ExtractionTally.read(tmp_path / "none", ("t",)).pages == 0

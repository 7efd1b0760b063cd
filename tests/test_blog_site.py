"""The 1,000-page blog (demosite.blog) and extraction over it, served on loopback."""
from __future__ import annotations

import collections
import csv
import gzip
import http.client
import json
import re
from urllib.parse import urldefrag, urljoin, urlsplit

import pytest

from controller.extracted import CSV_FILE, JSONL_FILE, ExtractedWriter, ExtractionTally
from demosite.blog import EXTRACT_OPTIONS, POST_URL_REGEX, BlogSite
from demosite.server import DemoServer
from textfilter.extract import Extraction

HOST = "127.0.0.1:8000"
LINKS = Extraction.from_specs(["href=xpath://a/@href"])
PATTERNS = ("title=css:h1.post-title", "post=css:div.post-body")


@pytest.fixture(scope="module")
def blog() -> BlogSite:
    return BlogSite()


def blog_extraction(excludes=("css:div.ad",), url_regex=POST_URL_REGEX) -> Extraction:
    return Extraction.from_specs(PATTERNS, excludes, url_regex)


def page_html(site: BlogSite, path: str) -> str:
    response = site.respond(path, HOST)
    assert response.status == 200, path
    return response.body.decode("utf-8")


def in_site_links(html: str, page_url: str) -> list[str]:
    """Canonical in-site paths of a page's <a href>s, read from the HTML itself."""
    paths = []
    for href in LINKS.extract(html, page_url)["href"]:
        url = urldefrag(urljoin(page_url, href)).url
        parts = urlsplit(url)
        if parts.netloc == urlsplit(page_url).netloc:
            paths.append(parts.path + ("?" + parts.query if parts.query else ""))
    return list(dict.fromkeys(paths))


def test_the_default_blog_has_800_posts_and_200_menu_pages(blog):
    assert len(blog.post_paths()) == 800
    assert len(blog.menu_paths()) == 200
    assert len(set(blog.paths())) == 1000
    assert all(re.search(POST_URL_REGEX, "http://h" + path) for path in blog.post_paths())
    assert not any(re.search(POST_URL_REGEX, "http://h" + path) for path in blog.menu_paths())


def test_a_crawl_from_home_reaches_everything_by_depth_3(blog):
    levels = blog.levels()
    assert set(levels) == set(blog.paths())
    assert blog.max_level() == 3
    assert all(levels[path] <= 2 for path in blog.post_paths())


def test_rendered_links_are_the_model_links_and_all_exist(blog):
    known = set(blog.paths())
    for path in blog.paths():
        found = in_site_links(page_html(blog, path), f"http://{HOST}{path}")
        assert set(found) == set(blog.links(path)), path
        assert set(found) <= known, path


def test_the_same_seed_gives_the_same_bytes_and_another_seed_another_site(blog):
    again = BlogSite(seed=2026)
    for path in blog.paths()[::97]:
        assert again.respond(path, HOST) == blog.respond(path, HOST)
    other = BlogSite(seed=7)
    assert other.posts() != blog.posts()


def test_robots_allows_everything_and_unknown_paths_are_404(blog):
    robots = blog.respond("/robots.txt", HOST)
    assert robots.status == 200
    assert [line for line in robots.body.decode().splitlines() if not line.startswith("#")] == \
        ["User-agent: *", "Disallow:"]
    assert blog.respond("/nope.html", HOST).status == 404
    assert blog.respond("/2020/01/01/nothing-1.html", HOST).status == 404


def test_posts_have_the_hard_parts_extraction_must_survive(blog):
    bodies = [page_html(blog, path) for path in blog.post_paths()]
    ads = sum('<div class="ad" data-slot' in body for body in bodies)
    assert 200 < ads < 600
    for needle in ("<em>", "&amp;", "&#", "&rsquo;", "&nbsp;", "<script>window.embeds", "<!-- more -->",
                   '<div class="section">', "<table", "<figcaption>", "<pre>", "<blockquote>",
                   'class="post-title entry-title"', 'class="post-body e-content"', "東京", "🙂",
                   '<div class="comment-body">', '<section class="related">'):
        assert any(needle in body for body in bodies), needle


@pytest.mark.parametrize("content, menus", [(0, 1), (1, 1), (7, 3), (30, 10), (95, 23)])
def test_other_sizes_keep_their_counts_and_stay_reachable(content, menus):
    site = BlogSite(seed=3, content_pages=content, menu_pages=menus)
    assert (len(site.post_paths()), len(site.menu_paths())) == (content, menus)
    assert set(site.levels()) == set(site.paths())
    for path in site.paths():
        assert set(in_site_links(page_html(site, path), f"http://{HOST}{path}")) <= set(site.paths())


def test_bad_sizes_are_refused():
    with pytest.raises(ValueError):
        BlogSite(menu_pages=0)


def test_selectors_that_miss_the_hard_parts_do_not_reach_100_percent(blog):
    """The site tells good patterns from bad ones: each shortcut loses records."""
    truth = blog.posts()
    sloppy = {
        "no exclude": Extraction.from_specs(PATTERNS, (), POST_URL_REGEX),
        "exact class": Extraction.from_specs(
            ["title=xpath://h1[@class='post-title']", "post=xpath://div[@class='post-body']"],
            ["css:div.ad"], POST_URL_REGEX),
    }
    for name, extraction in sloppy.items():
        right = sum(extraction.extract(page_html(blog, path), path) ==
                    {"title": [truth[path][0]], "post": [truth[path][1]]}
                    for path in blog.post_paths())
        assert right < 800, name
    menu_title = Extraction.from_specs(["title=css:.post-title"]).extract(page_html(blog, "/"), "/")
    assert len(menu_title["title"]) == 10  # why --extract-from matters


def test_extract_options_name_the_patterns_of_this_module():
    options = dict(zip(EXTRACT_OPTIONS[::2], EXTRACT_OPTIONS[1::2]))
    assert options["--extract-from"] == POST_URL_REGEX
    assert Extraction.from_specs([v for k, v in zip(EXTRACT_OPTIONS[::2], EXTRACT_OPTIONS[1::2])
                                  if k == "--extract"]).names == ("title", "post")


class Client:
    """One keep-alive HTTP/1.1 connection that asks for gzip, as the crawler does."""

    def __init__(self, address: str):
        self.connection = http.client.HTTPConnection(address, timeout=10)

    def get(self, path: str) -> tuple[int, str]:
        self.connection.request("GET", path, headers={"Accept-Encoding": "gzip"})
        response = self.connection.getresponse()
        body = response.read()
        if response.getheader("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        return response.status, body.decode("utf-8")

    def close(self) -> None:
        self.connection.close()


def crawl_and_extract(server: DemoServer, extraction: Extraction, writer: ExtractedWriter,
                      tally: ExtractionTally, max_depth: int) -> dict[str, int]:
    """Breadth-first from "/" over links read from the served HTML; extract where it applies."""
    client = Client(server.address)
    levels = {"/": 0}
    queue = collections.deque(["/"])
    fetched = 0
    try:
        while queue:
            path = queue.popleft()
            status, html = client.get(path)
            assert status == 200, path
            fetched += 1
            url = server.url.rstrip("/") + path
            if extraction.applies_to(url):
                values = extraction.extract(html, url)
                writer.add(fetched, url, values)
                tally.count(values)
            if levels[path] < max_depth:
                for target in in_site_links(html, url):
                    if target not in levels:
                        levels[target] = levels[path] + 1
                        queue.append(target)
    finally:
        client.close()
    return levels


def test_end_to_end_1600_of_1600_records_over_http(blog, tmp_path):
    extraction = blog_extraction()
    writer = ExtractedWriter(tmp_path, extraction.names, jsonl=True, append=False)
    tally = ExtractionTally(extraction.names)
    with DemoServer(blog) as server:
        levels = crawl_and_extract(server, extraction, writer, tally, blog.max_level())
    writer.close()
    assert not server.errors

    assert levels == blog.levels()
    assert sorted(record.path for record in server.requests) == sorted(blog.paths())
    assert tally.summary() == "extracted 1,600 of 1,600 records (100.0%) from 800 pages"

    truth = blog.posts()
    base = server.url.rstrip("/")
    with open(tmp_path / CSV_FILE, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 800
    assert {row["url"][len(base):]: (row["title"], row["post"]) for row in rows} == dict(truth)
    records = [json.loads(line) for line in (tmp_path / JSONL_FILE).read_text(encoding="utf-8").splitlines()]
    assert {r["url"][len(base):]: (r["title"], r["post"]) for r in records} == \
        {path: ([title], [post]) for path, (title, post) in truth.items()}
    assert len({row["id"] for row in rows}) == 800

"""Pages that speak to robots: meta robots, X-Robots-Tag and meta refresh, end to end.

A small site on loopback (conftest's ``serve``) whose pages say nofollow,
noindex or none in every way a crawler can be told (the robots meta, a meta
for the crawler's own product token, an X-Robots-Tag header for every
crawler or for one, in several lines), refresh to other pages, and link
to a page of their own (``/from/<page>``). The server's log shows which
links were followed; index.csv, pages/ and stats.json what was kept.
"""
from __future__ import annotations

import csv
import time
from pathlib import Path

import pytest

from controller.api import crawl
from demosite import Response
from getpage import Fetcher
from getpage_stub import local_config


def page(body: str, head: str = "") -> bytes:
    return f"<!DOCTYPE html><html><head><title>t</title>{head}</head><body>{body}</body></html>".encode()


def meta(name: str, content: str) -> str:
    return f'<meta name="{name}" content="{content}">'


def refresh(content: str) -> str:
    return f'<meta http-equiv="refresh" content="{content}">'


# path -> (extra <head>, X-Robots-Tag header lines). Each page links to /from<path>.
PAGES: dict[str, tuple[str, tuple[str, ...]]] = {
    "/nofollow": (meta("robots", "nofollow"), ()),
    "/noindex": (meta("robots", "noindex"), ()),
    "/none": (meta("ROBOTS", " None "), ()),
    "/both": (meta("robots", "noindex") + meta("robots", "nofollow"), ()),
    "/for-us": (meta("bfs-crawler", "nofollow"), ()),
    "/for-otherbot": (meta("otherbot", "noindex, nofollow"), ()),
    "/header-nofollow": ("", ("nofollow",)),
    "/header-noindex-nofollow": ("", ("noindex, nofollow",)),
    "/header-for-us": ("", ("bfs-crawler: nofollow",)),
    # The noindex line is for every crawler: joined into one value it would be otherbot's.
    "/header-lines": ("", ("otherbot: nofollow", "noindex")),
    "/header-for-otherbot": ("", ("otherbot: noindex, nofollow",)),
    "/refresh": (refresh("0; url='/refresh-target'"), ()),
    "/refresh-self": (refresh("0; URL=/refresh-self"), ()),
    "/refresh-late": (refresh("600; url=/late-target"), ()),
    "/refresh-99": (refresh("99; url=/target-99"), ()),        # Scrapy's limit: sooner than 100 s
    "/refresh-100": (refresh("100; url=/target-100"), ()),
    "/refresh-nofollow": (refresh("0;url=/refresh-target-nofollow") + meta("robots", "nofollow"), ()),
}
HOME = page("".join(f'<a href="{path}">{path}</a>' for path in PAGES)
            + '<a rel="nofollow" href="/rel-nofollow">rel</a><a href="/refresh-header">h</a>')
SLOW_SECONDS = 1.5
# What the crawler obeys: path -> robots_directives (pages not listed: "").
OBEYED = {"/nofollow": "nofollow", "/noindex": "noindex", "/none": "noindex,nofollow",
          "/both": "noindex,nofollow", "/for-us": "nofollow", "/header-nofollow": "nofollow",
          "/header-noindex-nofollow": "noindex,nofollow", "/header-for-us": "nofollow",
          "/header-lines": "noindex", "/refresh-nofollow": "nofollow"}


def answer(request) -> Response:
    path = request.path
    if path == "/robots.txt":
        return Response(404, {"Content-Type": "text/plain"}, b"none")
    if path == "/":
        return Response(200, {"Content-Type": "text/html"}, HOME)
    if path in ("/deep", "/deeper"):   # /hub at level 1, or 2 (through /hub1)
        hub = "/hub" if path == "/deep" else "/hub1"
        return Response(200, {"Content-Type": "text/html"},
                        page(f'<a href="/slow">slow</a><a href="{hub}">hub</a>'))
    if path == "/hub1":
        return Response(200, {"Content-Type": "text/html"}, page('<a href="/hub">hub</a>'))
    if path == "/hub":
        return Response(200, {"Content-Type": "text/html"}, HOME)
    if path == "/slow":
        time.sleep(SLOW_SECONDS)   # the fault under test: level 1 stays open meanwhile
        return Response(200, {"Content-Type": "text/html"}, page("slow"))
    if path == "/refresh-header":   # a Refresh header comes before the page's own meta
        return Response(200, {"Content-Type": "text/html", "Refresh": "0; url=/header-target"},
                        page("", refresh("0; url=/meta-target")))
    if path in PAGES:
        head, tags = PAGES[path]
        headers = {"Content-Type": "text/html", **({"X-Robots-Tag": tags} if tags else {})}
        return Response(200, headers, page(f'<p>{path}</p><a href="/from{path}">next</a>', head))
    return Response(200, {"Content-Type": "text/html"}, page(f"<p>{path}</p>"))


def by_path(out: Path) -> dict[str, dict[str, str]]:
    with open(out / "index.csv", newline="", encoding="utf-8") as f:
        return {"/" + row["url"].split("/", 3)[3]: row for row in csv.DictReader(f)}


def requested(log) -> list[str]:
    return [record.path for record in log if record.path != "/robots.txt"]


def followed_from(log) -> set[str]:
    return {path.removeprefix("/from") for path in requested(log) if path.startswith("/from/")}


FOLLOWED = {path for path in PAGES if path not in OBEYED or "nofollow" not in OBEYED[path]}


@pytest.mark.parametrize("options", [{}, {"max_pages": 0}, {"processes": 0}, {"extractor": "bs4"},
                                     {"extractor": "regex"}, {"order": "opic", "max_pages": 0}],
                         ids=["default", "speculative", "no-parser-processes", "bs4", "regex",
                              "opic"])
def test_pages_that_say_nofollow_or_noindex_are_obeyed(serve, tmp_path, options) -> None:
    out = tmp_path / "crawl"
    with serve(answer) as (url, log):
        result = crawl(url, out=out, max_depth=3, delay=0, quiet=True, **options)
    paths = requested(log)
    assert sorted(paths) == sorted(set(paths)), "a page was requested twice"
    assert followed_from(log) == FOLLOWED
    assert "/rel-nofollow" in paths          # rel="nofollow" on one link is followed
    assert "/refresh-target" in paths and "/late-target" not in paths
    assert "/target-99" in paths and "/target-100" not in paths
    assert "/header-target" in paths and "/meta-target" not in paths
    assert "/refresh-target-nofollow" not in paths
    rows = by_path(out)
    for path in PAGES:
        row = rows[path]
        directives = OBEYED.get(path, "")
        assert row["robots_directives"] == directives, path
        if "noindex" in directives:
            assert (row["html_path"], row["text_path"], row["title"], row["content_md5"]) == ("",) * 4
            assert row["status"] == "200" and not row["error"]
            assert not (out / "pages" / f"{row['id']}.html").exists()
            assert not (out / "text" / f"{row['id']}.txt").exists()
        else:
            assert (out / row["html_path"]).read_bytes() == page(
                f'<p>{path}</p><a href="/from{path}">next</a>', PAGES[path][0])
    nofollow_pages = [path for path in OBEYED if "nofollow" in OBEYED[path]]
    # Each nofollow page has one link (two with its refresh), none queued.
    assert result.stats["skipped_links"]["nofollow"] == len(nofollow_pages) + 1
    assert result.stats["pages"] == len(rows) - sum("noindex" in d for d in OBEYED.values())
    # The refresh target is a link of the page, one level down.
    assert rows["/refresh-target"]["level"] == "2"
    assert rows["/refresh-target"]["parent_id"] == rows["/refresh"]["id"]


@pytest.mark.parametrize("seed", ["deep", "deeper"])
def test_pages_fetched_ahead_of_their_level_speculate_no_nofollow_link(serve, tmp_path,
                                                                       seed) -> None:
    """/slow holds level 1 open while later pages are fetched ahead of their
    level (no page budget): from /deep the pages are parked at level 2 and
    their links fetched speculatively; from /deeper the pages themselves are
    fetched speculatively, before they are queued, and then their links. A
    nofollow page's links must be in neither."""
    out = tmp_path / "crawl"
    with serve(answer) as (url, log):
        result = crawl(url + seed, out=out, max_depth=5, max_pages=0, delay=0, per_host=4,
                       quiet=True)
    assert followed_from(log) == FOLLOWED
    assert result.stats["speculative"]["fetches"] > 0
    level = 2 if seed == "deep" else 3
    assert by_path(out)["/nofollow"]["level"] == str(level)


def test_getpage_reports_each_x_robots_tag_line(serve) -> None:
    """Joined into one value, the lines would read as one line for otherbot;
    getpage hands them over one by one, in order."""
    with serve(answer) as (url, _), Fetcher(local_config("bfs-crawler/1", delay=0)) as fetcher:
        result = fetcher.fetch(url + "header-lines")
    assert result.robots_tags == ("otherbot: nofollow", "noindex")


def test_ignore_robots_follows_and_keeps_every_page(serve, tmp_path) -> None:
    out = tmp_path / "crawl"
    with serve(answer) as (url, log):
        result = crawl(url, out=out, max_depth=3, delay=0, quiet=True, ignore_robots=True)
    assert followed_from(log) == set(PAGES)
    assert "/refresh-target-nofollow" in requested(log)   # the refresh is followed as before
    rows = by_path(out)
    assert all(row["robots_directives"] == "" and row["html_path"] for row in rows.values())
    assert "nofollow" not in result.stats["skipped_links"]


def test_the_product_token_of_the_user_agent_names_the_crawler(serve, tmp_path) -> None:
    out = tmp_path / "crawl"
    with serve(answer) as (url, log):
        crawl(url, out=out, max_depth=3, delay=0, quiet=True,
              user_agent="OtherBot/2.0 (+http://example.test/bot)")
    followed = followed_from(log)
    assert "/for-otherbot" not in followed and "/header-for-otherbot" not in followed
    assert "/header-lines" not in followed       # its first line is for otherbot
    assert "/for-us" in followed and "/header-for-us" in followed
    rows = by_path(out)
    assert rows["/for-otherbot"]["robots_directives"] == "noindex,nofollow"
    assert rows["/header-for-otherbot"]["robots_directives"] == "noindex,nofollow"
    assert rows["/header-lines"]["robots_directives"] == "noindex,nofollow"
    assert rows["/for-us"]["robots_directives"] == ""


def test_a_start_page_that_refreshes_is_not_a_one_page_crawl(serve, tmp_path) -> None:
    site = {"/": page("", refresh("0; url=/home/")),
            "/home/": page('<a href="/home/a">a</a><a href="/home/b">b</a>'),
            "/home/a": page('<a href="/home/c">c</a>'),
            "/home/b": page(""), "/home/c": page("")}

    def answer_site(request) -> Response:
        return Response(200, {"Content-Type": "text/html"}, site[request.path]) \
            if request.path in site else Response(404, {"Content-Type": "text/plain"}, b"no")
    out = tmp_path / "crawl"
    with serve(answer_site) as (url, log):
        crawl(url, out=out, max_depth=3, delay=0, quiet=True)
    assert requested(log) == ["/", "/home/", "/home/a", "/home/b", "/home/c"]
    levels = {path: row["level"] for path, row in by_path(out).items()}
    assert levels == {"/": "0", "/home/": "1", "/home/a": "2", "/home/b": "2", "/home/c": "3"}


def test_a_noindex_page_is_still_archived_in_the_warc(serve, tmp_path) -> None:
    """--warc records what went over the wire, as Heritrix and wget do;
    noindex is about the crawl's copies (pages/, text/, export)."""
    from warcio.archiveiterator import ArchiveIterator
    out = tmp_path / "crawl"
    with serve(answer) as (url, _):
        crawl(url, out=out, max_depth=1, delay=0, quiet=True, warc=True)
    with open(out / "crawl.warc.gz", "rb") as f:
        archived = {record.rec_headers.get_header("WARC-Target-URI")
                    for record in ArchiveIterator(f) if record.rec_type == "response"}
    assert url + "noindex" in archived and url + "none" in archived


@pytest.mark.parametrize("ignore_robots", [False, True], ids=["obeyed", "ignored"])
def test_a_crawl_shared_through_redis_decides_alike(serve, tmp_path, redis_server,
                                                     ignore_robots) -> None:
    """SharedCommit queues a page's children in Redis: nofollow holds there too."""
    out = tmp_path / "worker"
    with serve(answer) as (url, log):
        result = crawl(url, out=out, max_depth=3, delay=0, quiet=True, redis=redis_server.url,
                       crawl_id="robotsmeta", ignore_robots=ignore_robots)
    assert followed_from(log) == (set(PAGES) if ignore_robots else FOLLOWED)
    rows = by_path(out)
    expected = {} if ignore_robots else OBEYED
    assert {path: row["robots_directives"] for path, row in rows.items() if path in PAGES} == \
        {path: expected.get(path, "") for path in PAGES}
    assert all(bool(row["html_path"]) != ("noindex" in row["robots_directives"])
               for row in rows.values())
    nofollow_links = 0 if ignore_robots else sum("nofollow" in d for d in OBEYED.values()) + 1
    assert result.stats["skipped_links"].get("nofollow", 0) == nofollow_links

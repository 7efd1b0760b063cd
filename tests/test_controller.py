"""Controller: the loop, level tracking, stop conditions and the output files,
driven by a fake fetcher (a dict of pages) so no sockets are needed."""
import csv
import json
import threading

import pytest

from controller.config import CrawlConfig
from controller.engine import Crawl
from getpage import FetchResult

ROOT = "http://site.test/"


def html(*links):
    anchors = "".join(f'<p><a href="{href}">link {href}</a></p>' for href in links)
    return f"<html><head><title>t</title></head><body><h1>Page</h1>{anchors}</body></html>"


class FakeFetcher:
    """Serves a dict path -> html; records the order in which fetches start and end."""

    def __init__(self, pages, slow=(), wait_for=None):
        self.pages = pages
        self.slow = set(slow)
        self.events = []
        self.lock = threading.Lock()
        self.started_deeper = threading.Event()
        self.wait_for = wait_for

    def fetch(self, url):
        path = url[len(ROOT) - 1:]
        self._event("start", path)
        if path in self.slow:
            # Give a broken scheduler every chance to start a deeper level meanwhile.
            self.started_deeper.wait(0.3)
        body = self.pages.get(path)
        self._event("end", path)
        if body is None:
            return FetchResult(url=url, final_url=url, status=404, error="http: 404 Not Found")
        data = body.encode()
        return FetchResult(url=url, final_url=url, status=200, body=data, content_type="text/html",
                           encoding="utf-8", text=body, elapsed_ms=1.0)

    def _event(self, kind, path):
        with self.lock:
            self.events.append((kind, path))

    def close(self):
        pass


class DenyingFetcher(FakeFetcher):
    """As FakeFetcher, but robots.txt disallows one path."""

    def __init__(self, pages, denied):
        super().__init__(pages)
        self.denied = denied

    def fetch(self, url):
        if url.endswith(self.denied):
            return FetchResult(url=url, final_url="", error="robots: disallowed by robots.txt")
        return super().fetch(url)


def run(tmp_path, pages, **overrides):
    settings = dict(seeds=(ROOT,), out=tmp_path / "out", workers=4, delay=0, progress=False)
    settings.update(overrides)
    fetcher = settings.pop("fetcher", None) or FakeFetcher(pages, slow=settings.pop("slow", ()))
    crawl = Crawl(CrawlConfig(**settings), fetcher=fetcher)
    stats = crawl.run()
    return stats, fetcher, read_index(tmp_path / "out")


def read_index(out):
    with open(out / "index.csv", newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


# A graph where /x is 2 links from the seed via the slow page /a, but 3 via the fast /c.
GRAPH = {
    "/": html("/a", "/c"),
    "/a": html("/x", "/"),
    "/c": html("/d"),
    "/d": html("/x", "/e"),
    "/x": html("/y"),
    "/e": html(),
    "/y": html(),
}


def test_levels_are_shortest_distances_even_when_the_short_path_is_slow(tmp_path):
    stats, fetcher, rows = run(tmp_path, GRAPH, slow={"/a"}, max_depth=0)
    levels = {row["url"]: int(row["level"]) for row in rows}
    assert levels == {ROOT: 0, ROOT + "a": 1, ROOT + "c": 1, ROOT + "x": 2, ROOT + "d": 2,
                      ROOT + "e": 3, ROOT + "y": 3}
    assert [lvl["urls"] for lvl in stats["levels"]] == [1, 2, 2, 2]


def test_no_url_of_level_k_plus_1_starts_before_level_k_is_finished(tmp_path):
    stats, fetcher, rows = run(tmp_path, GRAPH, slow={"/a"}, max_depth=0)
    level_of = {row["url"][len(ROOT) - 1:]: int(row["level"]) for row in rows}
    last_end = {}
    for i, (kind, path) in enumerate(fetcher.events):
        if kind == "end":
            last_end[level_of[path]] = i
    for i, (kind, path) in enumerate(fetcher.events):
        if kind == "start" and level_of[path] > 0:
            assert i > last_end[level_of[path] - 1], f"{path} started before its level's parents ended"


def test_each_url_is_fetched_once_and_edges_list_distinct_links(tmp_path):
    stats, fetcher, rows = run(tmp_path, GRAPH, max_depth=0)
    starts = [path for kind, path in fetcher.events if kind == "start"]
    assert sorted(starts) == sorted(set(starts)) and len(starts) == 7
    with open(tmp_path / "out" / "edges.csv", newline="") as f:
        edges = list(csv.DictReader(f))
    from_root = [e["to_url"] for e in edges if e["from_url"] == ROOT]
    assert from_root == [ROOT + "a", ROOT + "c"]


def test_max_depth_stops_following_links_beyond_the_level(tmp_path):
    stats, fetcher, rows = run(tmp_path, GRAPH, max_depth=1)
    assert sorted(int(r["level"]) for r in rows) == [0, 1, 1]
    # /a links to /x and back to /, /c to /d: two URLs the limit kept out.
    assert stats["stop_reason"] == "max-depth" and stats["skipped_links"]["depth"] == 2
    assert stats["stop_detail"] == "max-depth: 2 URLs beyond depth 1"


def test_a_crawl_that_reaches_every_page_within_the_depth_ends_queue_empty(tmp_path):
    stats, fetcher, rows = run(tmp_path, GRAPH, max_depth=4)
    assert len(rows) == 7 and stats["stop_reason"] == "queue-empty"
    assert "depth" not in stats["skipped_links"]


def test_robots_denials_are_counted_apart_from_errors(tmp_path):
    pages = {"/": html("/a", "/private", "/missing")}
    stats, fetcher, rows = run(tmp_path, pages, fetcher=DenyingFetcher(pages, "/private"))
    assert stats["robots_denied"] == 1 and stats["errors"] == 2   # /a and /missing: 404
    assert stats["errors_by_kind"] == {"http": 2}
    assert stats["levels"][1]["robots"] == 1 and stats["levels"][1]["errors"] == 2


def test_urls_per_second_counts_every_fetch_and_pages_per_second_html_pages(tmp_path):
    pages = {"/": html("/a", "/b", "/missing"), "/a": html(), "/b": html()}
    stats, fetcher, rows = run(tmp_path, pages)
    assert stats["urls"] == 4 and stats["pages"] == 3   # /missing is a 404: a URL, not a page
    assert stats["urls_per_second"] / stats["pages_per_second"] == pytest.approx(4 / 3, rel=0.01)


def test_max_pages_bounds_the_fetches(tmp_path):
    stats, fetcher, rows = run(tmp_path, GRAPH, max_depth=0, max_pages=4)
    assert len(rows) == 4 and stats["stop_reason"] == "max-pages"


def test_output_files_are_written_by_id(tmp_path):
    # /e and /y are the same page: without content dedup each keeps its own files.
    stats, fetcher, rows = run(tmp_path, GRAPH, max_depth=0, content_dedup="off")
    out = tmp_path / "out"
    for row in rows:
        assert (out / row["html_path"]).read_bytes() == GRAPH[row["url"][len(ROOT) - 1:]].encode()
        assert row["html_path"] == f"pages/{row['id']}.html"
        assert "Page" in (out / row["text_path"]).read_text(encoding="utf-8")
    saved = json.loads((out / "stats.json").read_text())
    assert saved["urls"] == 7 and saved["pages"] == 7 and saved["levels"][0]["m"] == 3


def test_failed_pages_are_recorded_and_the_crawl_goes_on(tmp_path):
    pages = {"/": html("/missing", "/ok"), "/ok": html()}
    stats, fetcher, rows = run(tmp_path, pages)
    by_url = {r["url"]: r for r in rows}
    assert by_url[ROOT + "missing"]["error"].startswith("http: 404")
    assert by_url[ROOT + "missing"]["html_path"] == ""
    assert by_url[ROOT + "ok"]["status"] == "200"
    assert stats["errors"] == 1


def test_trace_has_one_fetch_line_per_url_and_one_line_per_level(tmp_path):
    stats, fetcher, rows = run(tmp_path, GRAPH, max_depth=0)
    lines = (tmp_path / "out" / "trace.log").read_text().splitlines()
    fetches = [line.split() for line in lines if line.split()[1:2] == ["FETCH"]]
    levels = [line.split() for line in lines if line.split()[1:2] == ["LEVEL"]]
    assert len(fetches) == 7
    assert {f[7] for f in fetches} == {r["url"] for r in rows}
    assert [lv[2:] for lv in levels] == [["0", "1", "2", "3"], ["1", "2", "2", "5"],
                                         ["2", "2", "2", "7"], ["3", "2", "0", "7"]]
    assert lines[-1].split()[1:4] == ["END", "queue-empty", "7"]

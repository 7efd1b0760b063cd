"""End to end over real sockets: crawl the demo site and check it against the
site's own ground truth (computed from its link model, not by the crawler)."""
import csv
import json
import subprocess
import sys
from collections import Counter
from urllib.parse import urlsplit

import pytest

from controller.config import CrawlConfig
from controller.engine import Crawl

DEPTH = 6


def crawl_demo(server, out, **overrides):
    settings = dict(seeds=(server.url,), out=out, max_depth=DEPTH, max_pages=0, workers=4,
                    per_host=4, delay=0, retry_backoff=0.05, progress=False)
    settings.update(overrides)
    stats = Crawl(CrawlConfig(**settings)).run()
    with open(out / "index.csv", newline="", encoding="utf-8") as f:
        return stats, list(csv.DictReader(f))


def path_of(url):
    parts = urlsplit(url)
    return parts.path + (f"?{parts.query}" if parts.query else "")


@pytest.fixture(scope="module")
def demo_crawl(tmp_path_factory, demo_site):
    from demosite import DemoServer
    out = tmp_path_factory.mktemp("demo") / "out"
    with DemoServer(demo_site) as server:
        stats, rows = crawl_demo(server, out)
        requests = server.requests
    return server, out, stats, rows, requests


def test_every_level_matches_the_ground_truth(demo_crawl, demo_site):
    server, out, stats, rows, requests = demo_crawl
    truth = demo_site.ground_truth(DEPTH)
    assert [(lv["urls"], lv["pages"]) for lv in stats["levels"]] == \
        [(lv.urls, lv.pages) for lv in truth.levels]
    assert {path_of(r["url"]): int(r["level"]) for r in rows} == dict(truth.url_levels)


def test_each_url_is_requested_once_and_robots_is_obeyed(demo_crawl):
    server, out, stats, rows, requests = demo_crawl
    paths = Counter(r.path for r in requests)
    assert paths["/robots.txt"] == 1
    # Only the 500 page is asked again: once plus --retries (2) times.
    assert {p: n for p, n in paths.items() if n > 1} == {"/broken.html": 3}
    assert not [p for p in paths if p.startswith("/private/")]
    disallowed = [r for r in rows if r["error"].startswith("robots:")]
    assert disallowed and all(r["status"] == "" for r in disallowed)


def test_saved_pages_are_byte_identical_to_what_the_server_sent(demo_crawl, demo_site):
    server, out, stats, rows, requests = demo_crawl
    host = urlsplit(server.url).netloc
    saved = [r for r in rows if r["html_path"]]
    assert len(saved) == stats["pages"] > 200
    shared = 0
    for row in saved:
        expected = demo_site.respond(path_of(row["final_url"]), host).body
        assert (out / row["html_path"]).read_bytes() == expected, row["url"]
        if row["duplicate_of"] and row["html_path"] == f"pages/{row['duplicate_of']}.html":
            shared += 1   # byte-equal to its first copy: one file for both
        else:
            assert row["html_path"] == f"pages/{row['id']}.html"
    duplicates = [r for r in saved if r["duplicate_of"]]
    assert 0 < shared < len(duplicates), "the demo plants byte-equal and byte-different copies"


def test_gbk_and_big5_pages_are_decoded_right(demo_crawl, demo_site):
    server, out, stats, rows, requests = demo_crawl
    by_path = {path_of(r["url"]): r for r in rows}
    for path, sentence in demo_site.EXPECTED_TEXTS.items():
        row = by_path[path]
        assert sentence in (out / row["text_path"]).read_text(encoding="utf-8"), (path, row["encoding"])
    assert by_path["/intl/gbk.html"]["encoding"] in ("gb18030", "gbk")
    assert by_path["/intl/big5.html"]["encoding"] in ("big5hkscs", "big5", "cp950")


def test_the_calendar_trap_is_bounded_by_the_depth(demo_crawl):
    server, out, stats, rows, requests = demo_crawl
    calendar = [r for r in rows if "/calendar/" in r["url"]]
    assert calendar and max(int(r["level"]) for r in calendar) == DEPTH
    # What the limit kept out: the links of the deepest pages that no page had before.
    known = {r["url"] for r in rows} | {r["final_url"] for r in rows}
    deepest = {r["id"] for r in rows if int(r["level"]) == DEPTH and not r["duplicate_of"]}
    with open(out / "edges.csv", newline="", encoding="utf-8") as f:
        beyond = {e["to_url"] for e in csv.DictReader(f) if e["from_id"] in deepest} - known
    assert any("/calendar/" in url for url in beyond)
    assert stats["stop_reason"] == "max-depth" and stats["skipped_links"]["depth"] == len(beyond)
    assert stats["stop_detail"] == f"max-depth: {len(beyond)} URLs beyond depth {DEPTH}"


def test_failures_are_recorded_and_the_crawl_completes(demo_crawl):
    server, out, stats, rows, requests = demo_crawl
    errors = {path_of(r["url"]): r["error"] for r in rows if r["error"]}
    assert errors["/missing.html"].startswith("http: 404")
    assert errors["/broken.html"].startswith("http: 500")
    redirected = [r for r in rows if r["final_url"] not in ("", r["url"])]
    assert [path_of(r["final_url"]) for r in redirected] == ["/news/moved-here.html"]


def test_trace_and_stats_agree_with_the_index(demo_crawl):
    server, out, stats, rows, requests = demo_crawl
    lines = (out / "trace.log").read_text(encoding="utf-8").splitlines()
    fetch_urls = [line.split()[7] for line in lines if line.split()[1:2] == ["FETCH"]]
    assert sorted(fetch_urls) == sorted(r["url"] for r in rows)
    level_lines = [line.split() for line in lines if line.split()[1:2] == ["LEVEL"]]
    assert [int(f[2]) for f in level_lines] == list(range(DEPTH + 1))
    assert json.loads((out / "stats.json").read_text())["urls"] == len(rows)


def test_ignore_robots_fetches_the_disallowed_section(tmp_path, demo_site, demo_server):
    stats, rows = crawl_demo(demo_server, tmp_path / "out", obey_robots=False)
    truth = demo_site.ground_truth(DEPTH, obey_robots=False)
    assert [(lv["urls"], lv["pages"]) for lv in stats["levels"]] == \
        [(lv.urls, lv.pages) for lv in truth.levels]
    assert any(r.path.startswith("/private/") for r in demo_server.requests)


@pytest.mark.parametrize("extractor", ["regex", "lxml"])
def test_every_extractor_finds_the_same_site(tmp_path, demo_site, demo_server, extractor):
    stats, rows = crawl_demo(demo_server, tmp_path / "out", max_depth=4, extractor=extractor)
    assert {path_of(r["url"]) for r in rows} == set(demo_site.ground_truth(4).url_levels)


def test_the_crawler_command_crawls_the_demo_site(tmp_path, demo_site, demo_server):
    out = tmp_path / "cli"
    done = subprocess.run([sys.executable, "-m", "controller", "crawl", demo_server.url,
                           "--out", str(out), "--max-depth", "2", "--delay", "0", "--quiet"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    truth = demo_site.ground_truth(2)
    table = [line.split() for line in done.stdout.splitlines() if line.split()[:1] in (["0"], ["1"], ["2"])]
    assert [(int(f[1]), int(f[2])) for f in table] == [(lv.urls, lv.pages) for lv in truth.levels]
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("dedup", ["set", "ascii", "intstring", "stringhash", "md5", "bloom", "sieve"])
def test_every_dedup_algorithm_crawls_the_same_urls(tmp_path, demo_site, demo_server, dedup):
    stats, rows = crawl_demo(demo_server, tmp_path / "out", max_depth=4, dedup=dedup)
    assert {path_of(r["url"]): int(r["level"]) for r in rows} == dict(demo_site.ground_truth(4).url_levels)
    redirect_targets = sum(1 for r in rows if r["final_url"] not in ("", r["url"]))
    assert stats["dedup"]["algorithm"] == dedup
    # Redirect targets are marked seen too, and so are the URLs found beyond --max-depth
    # (they are counted, and none could be queued later).
    assert stats["dedup"]["new"] == len(rows) + redirect_targets + stats["skipped_links"]["depth"]

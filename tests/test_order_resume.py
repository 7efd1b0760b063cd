"""Every --order resumes, and one worker is reproducible: a crawl killed
(kill -9 at once, tests/killpoint.py) in the middle of a page's commit at
three points and resumed gets the uninterrupted crawl's pages at the same
final levels; with --workers 1, in the same order, with the same ids,
parents and counts, and two uninterrupted runs agree."""
import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

from controller.config import CrawlConfig
from controller.engine import Crawl
from urllist.orders import NAMES

ROOT = Path(__file__).resolve().parent.parent
TOPIC = "football travel story news"   # words the demo site's pages use
FOCUSED = {"best-first", "best-n-first", "shark", "aco"}
KILLED = 137
BUDGET = 70                # pages of the one-worker crawls: the order decides which
KILLS = (8, 20, 25)        # pages each killed run commits, the last one half-way
ROW = ("id", "url", "level", "parent_id", "new_links", "out_links", "status")


def settings(order: str) -> dict:
    return {"topic": TOPIC} if order in FOCUSED else {}


def crawl_args(url, out, order, workers, budget, depth):
    topic = ["--topic", TOPIC] if order in FOCUSED else []
    return ["crawl", url, "--out", str(out), "--order", order, "--workers", str(workers),
            "--per-host", str(workers), "--delay", "0", "--max-pages", str(budget),
            "--max-depth", str(depth), "--quiet", *topic]


def rows_of(out):
    with open(out / "index.csv", newline="", encoding="utf-8") as f:
        return [{key: row[key] for key in ROW} for row in csv.DictReader(f)]


def uninterrupted(url, out, order, workers, budget, depth=0):
    Crawl(CrawlConfig(seeds=(url,), out=out, order=order, workers=workers, per_host=workers,
                      delay=0, max_pages=budget, max_depth=depth, progress=False,
                      **settings(order))).run()
    return rows_of(out)


def killed_and_resumed(url, out, order, workers, budget, depth=0):
    """The crawl killed in the commit of its KILLS[i]-th page of each run,
    each run but the first a --resume of the one before; then finished.
    The rows committed at each kill."""
    committed = []
    for i, pages in enumerate(KILLS):
        resume = ["--resume"] if i else []
        run = subprocess.run([sys.executable, str(ROOT / "tests" / "killpoint.py"), f"commit:children:{pages}",
                              *crawl_args(url, out, order, workers, budget, depth), *resume],
                             capture_output=True, text=True, timeout=120, cwd=ROOT)
        assert run.returncode == KILLED, run.stderr
        committed.append(len(rows_of(out)))
    done = subprocess.run([sys.executable, "-m", "controller",
                           *crawl_args(url, out, order, workers, budget, depth), "--resume"],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    return committed


@pytest.fixture(scope="module")
def site():
    from demosite import DemoServer, DemoSite
    with DemoServer(DemoSite()) as server:
        yield server.url


@pytest.mark.parametrize("order", NAMES)
def test_one_worker_fetches_in_one_order_and_a_resumed_crawl_in_the_same(order, site, tmp_path):
    first = uninterrupted(site, tmp_path / "first", order, 1, BUDGET)
    second = uninterrupted(site, tmp_path / "second", order, 1, BUDGET)
    assert len(first) == BUDGET
    assert [r["url"] for r in second] == [r["url"] for r in first]
    assert second == first

    out = tmp_path / "resumed"
    committed = killed_and_resumed(site, out, order, 1, BUDGET)
    # each kill struck in the middle of a commit: the page in it has no row
    assert committed == [KILLS[0] - 1, sum(KILLS[:2]) - 2, sum(KILLS) - 3]
    assert rows_of(out) == first   # fetched and recorded in the same order, same ids and levels
    stats = json.loads((out / "stats.json").read_text(encoding="utf-8"))
    assert stats["stop_reason"] == "max-pages" and stats["urls"] == BUDGET


@pytest.mark.parametrize("order", NAMES)
def test_several_workers_resume_to_the_same_pages_at_the_same_levels(order, site, tmp_path):
    # --max-depth: some URLs wait, found too deep, for a shorter path
    reference = uninterrupted(site, tmp_path / "reference", order, 4, 0, depth=3)
    out = tmp_path / "resumed"
    killed_and_resumed(site, out, order, 4, 0, depth=3)
    rows = rows_of(out)
    assert len({r["url"] for r in rows}) == len(rows), "a URL was recorded twice"
    assert {r["url"]: r["level"] for r in rows} == {r["url"]: r["level"] for r in reference}


@pytest.mark.parametrize("order", ["importance", "shark"])
def test_a_crawl_in_another_order_is_recrawled_and_goes_on_with_the_new_links(order, tmp_path):
    from changingsite import ChangingSite, page_html
    from test_recrawl import build, by_path, crawler, rows
    out = tmp_path / "crawl"
    topic = ["--topic", TOPIC] if order in FOCUSED else []
    with ChangingSite() as site:
        build(site)
        crawler("crawl", site.url + "/", "--out", str(out), "--delay", "0", "--quiet",
                "--ignore-robots", "--order", order, *topic)
        site.set("/a", page_html("a", ["/", "/e"], extra="New."), etag='"a2"')
        site.set("/e", page_html("e", ["/f"]), etag='"e1"')
        site.set("/f", page_html("f"))
        result = crawler("recrawl", str(out), "--quiet")
        assert "5 pages asked again: " in result.stdout and "1 changed" in result.stdout
        assert len(site.requests("/e")) == len(site.requests("/f")) == 1   # crawled on, once
    index = by_path(rows(out / "index.csv"), site)
    assert set(index) == {"/", "/a", "/b", "/c", "/d", "/e", "/f"}
    assert (index["/e"]["level"], index["/f"]["level"]) == ("2", "3")
    assert index["/e"]["parent_id"] == index["/a"]["id"]

"""Crawl orders (--order): every order crawls the demo site and a many-host
site with final levels equal to a BFS over its own edges.csv, with the same
politeness (the servers' logs); the frontier's and the orders' own rules."""
import csv
import json
import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from controller.config import CrawlConfig
from controller.engine import Crawl
from manyhosts import SERVER_SIDE, many_hosts
from test_host_frontier import bfs_levels
from urllist.ordered import OrderedFrontier
from urllist.orders import NAMES, SEED_PRIORITY, Opic, make_order
from urllist.journal import ScoredPage
from urllist.queued import QueuedUrl

ROOT = Path(__file__).resolve().parent.parent
TOPIC = "football travel story news"   # words the demo site's pages use
FOCUSED = {"best-first", "best-n-first", "shark", "aco"}


def crawl(seeds, out, order, **options):
    extra = {"topic": TOPIC} if order in FOCUSED else {}
    Crawl(CrawlConfig(seeds=tuple(seeds), out=out, order=order, progress=False,
                      **extra, **options)).run()
    return list(csv.DictReader(open(out / "index.csv", encoding="utf-8")))


def bfs_over_edges(out, seeds):
    """url -> shortest link distance from the seeds over edges.csv."""
    links = defaultdict(list)
    with open(out / "edges.csv", encoding="utf-8") as f:
        for edge in csv.DictReader(f):
            links[edge["from_url"]].append(edge["to_url"])
    return bfs_levels(links, seeds)


@pytest.fixture(scope="module")
def demo_bfs(tmp_path_factory, demo_site):
    from demosite import DemoServer
    with DemoServer(demo_site) as server:
        out = tmp_path_factory.mktemp("bfs")
        rows = crawl([server.url], out, "bfs", delay=0, max_depth=6, max_pages=0)
    return {r["url"][len(server.url):]: int(r["level"]) for r in rows}


@pytest.mark.parametrize("order, params", [(name, ()) for name in NAMES if name != "bfs"]
                         + [("importance", ("pagerank_every=25", "a=2")), ("aco", ("q0=0.5", "seed=3")),
                            ("best-first", ("window=4",)), ("opic", ("window=1",))])
def test_every_order_gives_the_demo_sites_bfs_levels(order, params, demo_server, demo_bfs, tmp_path):
    rows = crawl([demo_server.url], tmp_path, order, delay=0, max_depth=6, max_pages=0,
                 order_params=params)
    levels = {r["url"][len(demo_server.url):]: int(r["level"]) for r in rows}
    assert levels == demo_bfs   # the same pages, at the same final levels, --max-depth 6 included
    over_edges = bfs_over_edges(tmp_path, [demo_server.url])
    assert all(int(r["level"]) == over_edges[r["url"]] for r in rows)
    assert all(int(r["level_at_fetch"]) >= int(r["level"]) for r in rows)
    stats = json.loads((tmp_path / "stats.json").read_text(encoding="utf-8"))
    by_level = [(row["urls"], row["pages"]) for row in stats["levels"]]
    assert by_level == [(sum(int(r["level"]) == k for r in rows),
                         sum(int(r["level"]) == k and bool(r["html_path"]) for r in rows))
                        for k in range(max(levels.values()) + 1)]


@pytest.fixture(scope="module")
def hosts():
    with many_hosts(first_address=140) as sites:
        yield sites


@pytest.mark.parametrize("order", NAMES)
def test_politeness_and_levels_are_the_same_under_every_order(order, hosts, tmp_path):
    roots, logs = hosts
    for log in logs:
        log.clear()
    delay = 0.2
    # A process of its own, as a user runs it: in this one, the servers'
    # threads would wait for the interpreter lock behind the crawler's and
    # stamp requests late, which makes gaps look shorter than they were.
    topic = ("--topic", TOPIC) if order in FOCUSED else ()
    done = subprocess.run([sys.executable, "-m", "controller", "crawl", roots[0], "--out",
                           str(tmp_path), "--order", order, *topic, "--delay", str(delay),
                           "--max-depth", "0", "--max-pages", "0", "--scope", "any", "--quiet"],
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    rows = list(csv.DictReader(open(tmp_path / "index.csv", encoding="utf-8")))
    over_edges = bfs_over_edges(tmp_path, roots[:1])
    assert {r["url"]: int(r["level"]) for r in rows} == \
        {url: level for url, level in over_edges.items() if url in {r["url"] for r in rows}}
    assert len(rows) == len(over_edges) == 68   # every page of the six sites
    for log in logs:
        times = sorted(r.time for r in log.snapshot())
        assert min(b - a for a, b in zip(times, times[1:])) >= SERVER_SIDE * delay


class Readiness:
    """Hosts ready at fixed times, one slot each: the frontier's only view of politeness."""

    def __init__(self, at=None):
        self.at = dict(at or {})
        self.busy = set()

    def ready_at(self, host):
        return float("inf") if host in self.busy else self.at.get(host, 0.0)

    def try_start(self, host, now):
        if host in self.busy or self.at.get(host, 0.0) > now:
            return False
        self.busy.add(host)
        return True


def host_of(url):
    return url.split("/")[2]


class Fixed:
    """An order whose priorities the test sets."""
    def __init__(self):
        self.value = {}

    def added(self, item):
        pass

    def priority(self, item_id):
        return self.value.get(item_id, 0.0)

    explores = False


def test_the_best_ready_url_goes_first_and_politeness_says_when():
    order = Fixed()
    ready = Readiness({"b": 5.0})
    frontier = OrderedFrontier(host_of, ready, order)
    order.value = {0: 1.0, 1: 3.0, 2: 2.0}
    frontier.push([QueuedUrl(0, "http://a/0", 0, None), QueuedUrl(1, "http://b/1", 0, None),
                   QueuedUrl(2, "http://a/2", 0, None)])
    assert [i.id for i in frontier.pop(3, now=0.0)] == [2]   # b, the best, may not start yet
    assert frontier.pop(3, now=0.0) == []   # a's one slot is busy
    assert frontier.next_ready(0.0) == 5.0   # b's time
    ready.busy.clear()
    frontier.fetched(QueuedUrl(2, "http://a/2", 0, None))
    assert frontier.next_ready(0.0) == 0.0
    order.value[0] = 9.0
    frontier.rescore([0])
    assert [i.id for i in frontier.pop(3, now=6.0)] == [0, 1]   # by priority, both ready


def test_a_url_found_beyond_max_depth_is_queued_when_a_shorter_path_appears():
    order = Fixed()
    frontier = OrderedFrontier(host_of, Readiness(), order, max_depth=2)
    frontier.push([QueuedUrl(0, "http://a/", 0, None), QueuedUrl(1, "http://a/1", 1, 0),
                   QueuedUrl(2, "http://a/2", 2, 1), QueuedUrl(3, "http://a/3", 3, 2)])
    assert frontier.deferred == 1 and frontier.levels[3] == 3
    frontier.linked(2, [3])   # page 2, fetched, links to 3: no shorter path yet
    assert frontier.deferred == 1 and frontier.levels[3] == 3
    frontier.linked(0, [2])   # the seed links to 2: 2 is lowered, and 3 along 2's links
    assert list(frontier.levels) == [0, 1, 1, 2] and frontier.deferred == 0
    assert frontier.corrections == 2


def test_opic_moves_cash_and_keeps_the_total():
    order = Opic()
    frontier = OrderedFrontier(host_of, Readiness(), order)
    order.bind(frontier)
    frontier.push([QueuedUrl(0, "http://a/", 0, None), QueuedUrl(1, "http://a/1", 1, 0),
                   QueuedUrl(2, "http://b/2", 1, 0)])
    order.page(frontier._queue[0], [1, 2], [0.0, 0.0], None)
    assert order.history[0] == 1.0 and order.cash_of(0) == pytest.approx(1 / 9)   # virtual page's
    assert order.cash_of(1) == pytest.approx(1 / 3 + 1 / 9)
    frontier.push([QueuedUrl(3, "http://a/3", 2, 1)])
    order.page(frontier._queue[1], [3, 0], [0.0, 0.0], None)
    assert order.total_cash() == pytest.approx(1.0)
    # 2 holds a third of the seed's cash, 3 a third of what 1 had (a third of the seed's)
    assert order.priority(2) > order.priority(3) > 0


@pytest.mark.parametrize("name, params, problem", [
    ("opic", {"a": "1"}, "opic has no parameter 'a'"),
    ("importance", {"a": "x"}, "is not a number"),
])
def test_an_orders_parameters_are_checked(name, params, problem):
    with pytest.raises(ValueError, match=problem):
        make_order(name, params)


def test_pagerank_of_a_small_graph():
    from urllist.orders import pagerank
    ranks = pagerank(4, {0: [1, 2], 1: [2], 2: [0]})   # 3 is known, not fetched: no links
    assert sum(ranks) == pytest.approx(1.0)
    assert ranks[2] > ranks[1] > ranks[3] and ranks[0] > ranks[1]


def test_the_focused_orders_find_the_topic_sooner_than_bfs(demo_server, tmp_path):
    """On the demo site, 60 pages with the sports section as topic."""
    found = {}
    for order in ("bfs", "best-first", "shark"):
        # one fetch thread, parsed in it: the same choices every run
        Crawl(CrawlConfig(seeds=(demo_server.url,), out=tmp_path / order, delay=0, max_depth=6,
                          max_pages=60, progress=False, order=order, workers=1, processes=0,
                          topic="football sports match goal")).run()
        rows = list(csv.DictReader(open(tmp_path / order / "index.csv", encoding="utf-8")))
        assert all(r["relevance"] != "" for r in rows if r["html_path"])
        found[order] = sum("/sports/" in r["url"] for r in rows)
    print(found)
    assert found["best-first"] > found["bfs"] and found["shark"] > found["bfs"]


def test_the_report_counts_an_orders_level_corrections(demo_server, tmp_path):
    from controller.readers.report import build_report, render_report
    from controller.readers.summary import summary_lines
    crawl([demo_server.url], tmp_path, "importance", delay=0, max_depth=3, max_pages=0)
    stats = json.loads((tmp_path / "stats.json").read_text(encoding="utf-8"))
    corrections = stats["order"]["level_corrections"]
    assert corrections > 0   # the demo site has shorter paths found late under this order
    report = build_report(tmp_path)
    assert report.order == stats["order"]
    line = f"importance: {corrections} level corrections"
    assert line in render_report(report, "text")
    assert any(line in text for text in summary_lines(stats, tmp_path))


def run_crawler(*args):
    return subprocess.run([sys.executable, "-m", "controller", "crawl", *args], capture_output=True,
                          text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})


def test_a_crawl_in_another_order_stopped_by_its_budget_goes_on_with_a_larger_one(demo_server, tmp_path):
    out = tmp_path / "out"
    first = run_crawler(demo_server.url, "--out", str(out), "--order", "opic", "--max-pages", "5",
                        "--delay", "0", "--quiet")
    assert first.returncode == 0 and f"crawler crawl --out {out} --resume --max-pages N" in first.stderr
    before = [row["url"] for row in csv.DictReader(open(out / "index.csv", encoding="utf-8"))]
    again = run_crawler("--out", str(out), "--resume", "--max-pages", "9")
    assert again.returncode == 0, again.stderr
    after = [row["url"] for row in csv.DictReader(open(out / "index.csv", encoding="utf-8"))]
    assert len(after) == 9 and after[:5] == before and len(set(after)) == 9


@pytest.mark.parametrize("option, said", [
    (("--redis", "redis://127.0.0.1:9/0", "--order", "aco", "--order-param", "rho=0.1"),
     "--order aco does not go with --redis: rho (evaporation)"),
    (("--frontier-ram", "64"), "--order opic does not go with --frontier-ram: an order other than bfs keeps"),
])
def test_an_order_with_what_it_cannot_use_is_refused_with_one_line_that_says_why(tmp_path, option, said):
    result = run_crawler("http://127.0.0.1:9/", "--out", str(tmp_path / "x"), "--order", "opic", *option)
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1
    assert said in result.stderr
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize("name", [name for name in NAMES if name != "bfs"])
def test_a_sitemaps_url_ranks_as_a_link_not_as_a_seed(name):
    order = make_order(name, {})
    frontier = OrderedFrontier(host_of, Readiness(), order)
    order.bind(frontier)
    frontier.push([QueuedUrl(0, "http://a/", 0, None), QueuedUrl(1, "http://a/listed", 1, None),
                   QueuedUrl(2, "http://a/linked", 1, 0)])
    assert order.priority(0) == SEED_PRIORITY
    assert order.priority(1) == order.priority(2) < SEED_PRIORITY
    if isinstance(order, Opic):
        assert order.total_cash() == 1.0   # the seed's alone


def test_with_a_window_a_free_host_waits_rather_than_spend_the_budget_on_a_poor_url():
    def frontier_with(window, default=1):
        order = Fixed()
        order.p = {"window": window}
        ready = Readiness()
        frontier = OrderedFrontier(host_of, ready, order, default_window=default)
        order.value = {0: 9.0, 1: 8.0, 2: 1.0}
        frontier.push([QueuedUrl(0, "http://a/0", 0, None), QueuedUrl(1, "http://a/1", 0, None),
                       QueuedUrl(2, "http://b/2", 0, None)])
        return frontier, ready
    frontier, ready = frontier_with(window=2)
    assert [i.id for i in frontier.pop(3, now=0.0)] == [0]   # 1 waits for a, and b's poor URL
    assert frontier.next_ready(0.0) is None                   # until a's fetch ends
    ready.busy.clear()
    frontier.fetched(QueuedUrl(0, "http://a/0", 0, None))
    frontier.done(QueuedUrl(0, "http://a/0", 0, None))
    assert [i.id for i in frontier.pop(3, now=0.0)] == [1, 2]   # 2 is among the two best now
    frontier, _ = frontier_with(window=0)
    assert [i.id for i in frontier.pop(3, now=0.0)] == [0, 2]   # work-conserving
    frontier, _ = frontier_with(window=-1, default=2)            # the crawl's default
    assert [i.id for i in frontier.pop(3, now=0.0)] == [0]
    assert frontier.order.p["window"] == 2.0                     # what stats.json shows


def test_every_order_but_bfs_hands_out_only_the_workers_best_under_a_page_budget(demo_server, tmp_path):
    assert all(make_order(name, {}).p["window"] == -1 for name in NAMES if name != "bfs")
    for budget, window in ((5, 3.0), (0, 0.0)):   # without a budget every page is fetched anyway
        out = tmp_path / str(budget)
        crawl([demo_server.url], out, "opic", delay=0, max_pages=budget, workers=3)
        stats = json.loads((out / "stats.json").read_text(encoding="utf-8"))
        assert stats["order"]["params"]["window"] == window


def test_aco_pheromone_evaporates_for_as_long_as_the_crawl_goes_on():
    from urllist.orders import Aco
    order = Aco({"rho": "0.5"})
    frontier = OrderedFrontier(host_of, Readiness(), order)
    order.bind(frontier)
    frontier.push([QueuedUrl(0, "http://a/", 0, None), QueuedUrl(1, "http://a/1", 1, 0),
                   QueuedUrl(2, "http://b/2", 1, 0)])
    order.page(frontier._queue[0], [1, 2], [0.9, 0.1], 0.5)
    before = order.priority(1) > order.priority(2)
    for _ in range(2000):   # 0.5 ** 2000 underflows a float many times over
        order.page(frontier._queue[0], [1, 2], [0.9, 0.1], 0.5)
    weights = [order.weight(1), order.weight(2)]
    assert all(0 < w < float("inf") for w in weights)
    assert before and order.priority(1) > order.priority(2)
    assert order.choose([1, 2]) in (0, 1)


@pytest.mark.parametrize("name", ["best-first", "best-n-first"])
def test_best_first_takes_scores_in_one_resolution_step_in_the_order_found(name):
    def second_pop(params):
        order = make_order(name, {**params, "window": "0"})   # all three handed out at once
        frontier = OrderedFrontier(host_of, Readiness(), order)
        order.bind(frontier)
        frontier.push([QueuedUrl(0, "http://a/", 0, None), QueuedUrl(1, "http://b/1", 1, 0),
                       QueuedUrl(2, "http://c/2", 1, 0), QueuedUrl(3, "http://d/3", 1, 0)])
        assert [i.id for i in frontier.pop(1, now=0.0)] == [0]
        # anchors of an off-topic page: scores 0.001, 0.004 (noise) and 0.2
        order.page(frontier._queue[0], [1, 2, 3], [0.002, 0.008, 0.4], 0.0)
        frontier.done(frontier._queue[0])
        return [i.id for i in frontier.pop(3, now=0.0)]
    assert second_pop({}) == [3, 1, 2]                    # the noise is a tie: found first, first
    assert second_pop({"resolution": "0"}) == [3, 2, 1]   # every difference ranks


def graph_links(i):
    """A small web of pages 0..59 on two hosts: children, a cross link, home."""
    return [j for j in (2 * i + 1, 2 * i + 2, (i * 7 + 3) % 60, 0) if j < 60]


class Simulated:
    """A one-worker crawl of graph_links in an OrderedFrontier, with the
    calls the engine makes; ``events``: what the journal's P lines hold.
    With ``replay`` (items, committed ids, events): a resumed one."""

    def __init__(self, name, params, replay=None):
        self.order = make_order(name, dict(params))
        self.ready = Readiness()
        self.frontier = OrderedFrontier(host_of, self.ready, self.order, max_depth=5)
        self.order.bind(self.frontier)
        if replay:
            self.items, committed, self.events = list(replay[0]), replay[1], list(replay[2])
            self.frontier.restore(self.items, committed, self.events)
        else:
            self.items, self.events = [QueuedUrl(0, self.url(0), 0, None)], []
            self.frontier.push(self.items)

    @staticmethod
    def url(page):
        return f"http://{'ab'[page % 2]}/{page}"

    def step(self):
        [item] = self.frontier.pop(1, now=0.0)
        page = int(item.url.rsplit("/", 1)[1])
        links = list(dict.fromkeys(self.url(j) for j in graph_links(page)))
        new = [QueuedUrl(len(self.items) + k, url, self.frontier.levels[item.id] + 1, item.id)
               for k, url in enumerate(u for u in links if self.frontier.id_of(u) is None)]
        self.items += new
        self.frontier.push(new)
        targets = [self.frontier.id_of(url) for url in links]
        anchors = [((t * 13) % 7) / 7 for t in targets]
        relevance = (page % 5) / 5
        self.frontier.linked(item.id, targets)
        self.order.page(item, targets, anchors, relevance)
        self.events.append((len(self.items), ScoredPage(item.id, False, relevance, targets, anchors)))
        self.ready.busy.clear()
        self.frontier.fetched(item)
        self.frontier.done(item)
        return item.id


@pytest.mark.parametrize("name, params", [(name, ()) for name in NAMES if name != "bfs"]
                         + [("importance", (("pagerank_every", "4"),)), ("aco", (("q0", "0.5"),)),
                            ("best-n-first", (("n", "5"),))])
def test_an_order_replayed_from_its_journal_events_goes_on_as_the_live_one(name, params):
    live = Simulated(name, params)
    committed = {live.step() for _ in range(17)}
    resumed = Simulated(name, params, replay=(live.items, committed, live.events))
    assert list(resumed.frontier.levels) == list(live.frontier.levels)
    assert ([resumed.order.priority(i) for i in range(len(live.items))]
            == [live.order.priority(i) for i in range(len(live.items))])
    assert [resumed.step() for _ in range(25)] == [live.step() for _ in range(25)]

"""The crawl-order experiment's generated webs (experiments/webgen.py), their loopback server
(experiments/webserve.py) and compare_orders.py's crawls and measures, on tiny webs."""
from __future__ import annotations

import csv
import sys
import urllib.error
import urllib.request
from collections import Counter, deque
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "experiments"))   # the scripts import their siblings by plain name

import compare_orders  # noqa: E402
from webgen import DAMPING, WebSpec, generate, pagerank, render  # noqa: E402
from webserve import ROBOTS, serve_web  # noqa: E402

SMALL = WebSpec(pages=400, hosts=3, topics=4, clusters=3, seed=7)


def distances(web, start) -> dict[int, int]:
    """Breadth-first link distance from start, over the web's links."""
    seen, todo = {start: 0}, deque([start])
    while todo:
        page = todo.popleft()
        for target, _ in web.pages[page].links:
            if target not in seen:
                seen[target] = seen[page] + 1
                todo.append(target)
    return seen


def in_links(web) -> dict[int, list[int]]:
    found: dict[int, list[int]] = {page.id: [] for page in web.pages}
    for source, target in web.edges():
        found[target].append(source)
    return found


# -- the generator ---------------------------------------------------------------------

def test_the_same_spec_gives_the_same_web_and_bytes_another_seed_another():
    bases = ["http://127.0.0.60:1/", "http://127.0.0.61:2/", "http://127.0.0.62:3/"]
    first, second = generate(SMALL), generate(SMALL)
    assert first == second
    assert render(first, bases) == render(second, bases)
    other = generate(WebSpec(**{**SMALL.__dict__, "seed": 8}))
    assert other.edges() != first.edges()


def test_labels_follow_topics_and_every_page_is_reachable_from_the_seed():
    web = generate(SMALL)
    assert all(page.relevant == (page.topic == 0) == (page.cluster < SMALL.clusters) for page in web.pages)
    assert len(web.relevant) == SMALL.pages // SMALL.topics
    assert web.pages[web.seed].relevant and web.pages[web.seed].cluster == 0
    assert len(distances(web, web.seed)) == SMALL.pages
    assert {page.host for page in web.pages} == set(range(SMALL.hosts))
    assert all(target != page.id for page in web.pages for target, _ in page.links)
    assert all(len({t for t, _ in page.links}) == len(page.links) for page in web.pages)


def test_tunnels_are_the_only_way_into_a_later_cluster():
    spec = WebSpec(pages=600, topics=5, clusters=3, tunnel_length=4, p_local=0.6, seed=3)
    web = generate(spec)
    links_in = in_links(web)
    tunnel_pages = [page for page in web.pages if page.id >= spec.pages - 2 * spec.tunnel_length]
    assert not any(page.relevant for page in tunnel_pages)
    for k in (1, 2):
        chain = [page.id for page in tunnel_pages[(k - 1) * 4:k * 4]]
        assert [links_in[page] for page in chain[1:]] == [[previous] for previous in chain[:-1]]
        assert web.pages[links_in[chain[0]][0]].cluster == k - 1
        outside = {source for page in web.pages if page.cluster == k and page.id not in chain
                   for source in links_in[page.id] if web.pages[source].cluster != k}
        assert outside == {chain[-1]}
        # The shortest way from the seed into cluster k passes the whole chain.
        near = min(d for page, d in distances(web, web.seed).items() if web.pages[page].cluster == k)
        assert near > spec.tunnel_length


@pytest.mark.parametrize("p_local, low, high", [(0.9, 0.8, 0.9), (0.1, 0.05, 0.2)])
def test_p_local_is_the_share_of_links_within_a_cluster(p_local, low, high):
    # Somewhat below p_local at the top: repeated draws of one target collapse into one link,
    # and draws within a cluster repeat more often.
    web = generate(WebSpec(pages=2000, p_local=p_local, seed=4))
    local = Counter(web.pages[s].cluster == web.pages[t].cluster for s, t in web.edges())
    assert low <= local[True] / sum(local.values()) <= high


@pytest.mark.parametrize("quality", [1.0, 0.0])
def test_anchor_quality_decides_whether_anchors_hold_the_targets_topic_words(quality):
    web = generate(WebSpec(pages=300, anchor_quality=quality, ambiguity=0.0, seed=5))
    noise = set(web.vocabularies[0])
    for page in web.pages:
        for target, anchor in page.links:
            topical = set(web.vocabularies[1 + web.pages[target].topic])
            assert set(anchor.split()) <= (topical if quality else noise)


def test_in_degree_is_heavy_tailed():
    web = generate(WebSpec(pages=3000, seed=6))
    degrees = np.array([len(sources) for sources in in_links(web).values()])
    assert degrees.max() > 30 * degrees.mean()
    assert np.median(degrees) <= degrees.mean()


def test_pagerank_by_hand():
    # A cycle: every page alike. 0 -> 1 with 1 dangling: x0 = 0.075 + 0.425 x1, x1 = 0.075 + 0.85 x0 + 0.425 x1.
    assert pagerank(3, [(0, 1), (1, 2), (2, 0)]) == pytest.approx([1 / 3] * 3, abs=1e-12)
    x1 = (0.075 + 0.85 * 0.075) / (1 - 0.425 - 0.85 * 0.425)
    assert pagerank(2, [(0, 1)]) == pytest.approx([0.075 + 0.425 * x1, x1], abs=1e-12)


def test_pagerank_of_a_web_sums_to_one_and_solves_the_linear_system():
    web = generate(WebSpec(pages=300, links_min=1, links_max=3, seed=9))
    n = len(web.pages)
    matrix = np.zeros((n, n))         # matrix[t, s]: share of s's rank that goes to t
    for page in web.pages:
        for target, _ in page.links:
            matrix[target, page.id] = 1 / len(page.links)
    rank = np.linalg.solve(np.eye(n) - DAMPING * matrix, np.full(n, (1 - DAMPING) / n))
    assert sum(web.pagerank) == pytest.approx(1, abs=1e-12)
    assert web.pagerank == pytest.approx(list(rank / rank.sum()), abs=1e-12)


# -- the server ------------------------------------------------------------------------

def test_the_server_serves_exactly_the_generated_bytes_and_allows_everything():
    web = generate(WebSpec(pages=60, hosts=3, topics=3, clusters=2, seed=2))
    with serve_web(web) as served:
        assert len(set(served.bases)) == 3 and all(base.startswith("http://127.0.0.") for base in served.bases)
        assert served.pages == render(web, served.bases)
        for url, body in served.pages.items():
            with urllib.request.urlopen(url) as response:
                assert response.read() == body
                assert response.headers["Content-Type"] == "text/html; charset=utf-8"
        for base in served.bases:
            with urllib.request.urlopen(base + "robots.txt") as response:
                assert response.read() == ROBOTS
        with pytest.raises(urllib.error.HTTPError) as missing:
            urllib.request.urlopen(served.bases[0] + "p/9999.html")
        assert missing.value.code == 404
        assert {served.ids[url] for url in served.pages} == set(range(60))


# -- compare_orders --------------------------------------------------------------------

def test_a_bfs_crawl_fetches_every_page_once_on_its_true_level(tmp_path):
    web = generate(WebSpec(pages=150, hosts=3, topics=3, clusters=2, seed=11))
    with serve_web(web) as served:
        run = compare_orders.crawl(served, "bfs", (), 1000, tmp_path)
        requested = Counter(record.path for log in served.logs for record in log if record.path != "/robots.txt")
    assert sorted(run.fetched) == list(range(150))
    assert set(requested.values()) == {1}
    assert run.level_mismatches == 0
    truth = distances(web, web.seed)
    assert list(run.levels) == [truth[page] for page in run.fetched]


def test_measures_count_the_prefix_of_the_fetch_order():
    web = generate(WebSpec(pages=100, topics=4, clusters=1, seed=1))
    truth = compare_orders.Truth.of(web)
    top = int(np.argmax(web.pagerank))
    relevant = sorted(web.relevant)
    order = [top] + [page for page in relevant if page != top][:9] + [p for p in range(100) if p not in relevant][:5]
    run = compare_orders.Run(web, "bfs", (), tuple(order), (0,) * len(order), {}, 0.0, 0.0, 0)
    at_one, at_ten, beyond = compare_orders.measures(run, truth, [1, 10, 500])
    assert at_one["top1"] == 1.0 and at_one["pagerank_mass"] == pytest.approx(max(web.pagerank))
    relevant_in_ten = sum(web.pages[p].relevant for p in order[:10])
    assert at_ten["harvest"] == relevant_in_ten / 10
    assert at_ten["recall"] == relevant_in_ten / len(relevant)
    assert beyond["fetched"] == len(order)              # the crawl stopped before 500 pages
    assert beyond["pagerank_mass"] == pytest.approx(sum(web.pagerank[p] for p in order))


def test_level_mismatches_finds_a_level_that_is_not_the_distance_over_the_edges():
    rows = [{"url": "a", "level": "0"}, {"url": "b", "level": "1"}, {"url": "c", "level": "2"}]
    edges = [{"from_url": "a", "to_url": "b"}, {"from_url": "b", "to_url": "c"}]
    assert compare_orders.level_mismatches(rows, edges) == 0
    assert compare_orders.level_mismatches(rows, edges + [{"from_url": "a", "to_url": "c"}]) == 1


def test_compare_orders_quick_writes_its_tables(tmp_path):
    result = CliRunner().invoke(compare_orders.main, ["--quick", "--orders", "bfs", "--part", "importance",
                                                      "--part", "focused", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    with (tmp_path / "results.csv").open(newline="") as file:
        rows = list(csv.DictReader(file))
    assert {row["part"] for row in rows} == {"importance", "focused"}
    assert {row["order"] for row in rows} == {"bfs"}
    assert all(row["level_mismatches"] == "0" for row in rows)
    for part in ("importance", "focused"):
        recall = [float(row["recall"]) for row in rows
                  if row["part"] == part and row["web_seed"] == "1" and row["tunnel_length"] == "0"]
        assert recall == sorted(recall) and recall[-1] > 0
    assert all(row["crossed_at"] == "" for row in rows if row["tunnel_length"] == "0")
    with (tmp_path / "tunnels.csv").open(newline="") as file:
        (tunnels,) = list(csv.DictReader(file))
    bfs = next(row for row in rows if row["tunnel_length"] == "2" and float(row["fraction"]) == 0.1)
    assert float(tunnels["two_bfs"]) == pytest.approx(2 * float(bfs["harvest"]))
    text = (tmp_path / "results.md").read_text()
    assert "### Importance: after 10 % of the site" in text and "### Focused" in text
    assert "### Tunnel arithmetic" in text and "### The bar" not in text     # no best-first crawled
    assert (tmp_path / "importance.png").stat().st_size > 1000


# -- the tunnel arithmetic --------------------------------------------------------------

TUNNELLED = WebSpec(pages=600, topics=5, clusters=3, tunnel_length=3, p_local=0.8, seed=3)


def irrelevant_distances(web, sources) -> dict[int, int]:
    """Distance from the nearest source over irrelevant pages: a search from a virtual page linking to every source."""
    seen, todo = {page: 0 for page in sources}, deque(sources)
    while todo:
        page = todo.popleft()
        for target, _ in web.pages[page].links:
            if target not in seen and not web.pages[target].relevant:
                seen[target] = seen[page] + 1
                todo.append(target)
    return seen


def test_the_tunnel_arithmetic_counts_the_pages_around_the_first_tunnel():
    web = generate(TUNNELLED)
    budget = 60
    found = compare_orders.tunnel_arithmetic(web, budget, 0.2)
    seed_cluster = {page.id for page in web.pages if page.relevant and page.cluster == 0}
    assert compare_orders.beyond_tunnels(web) == web.relevant - seed_cluster
    assert found["relevant_reachable"] == len(seed_cluster)
    assert found["ceiling"] == len(seed_cluster) / budget and found["two_bfs"] == 0.4
    distance = irrelevant_distances(web, seed_cluster)
    layers = [sum(d == j for d in distance.values()) for j in (1, 2, 3)]
    assert found["layers"] == " ".join(map(str, layers)) and found["h1"] == layers[0]
    # The tunnel's j-th page is one of the H_j: a distance-ordered search meets its end in the last layer.
    assert [distance[page] for page in web.tunnels[0]] == [1, 2, 3]
    assert found["distance_first"] == layers[0] + layers[1] + 1
    assert found["distance_expected"] == layers[0] + layers[1] + (layers[2] + 1) / 2
    assert found["budget_left"] == budget - len(seed_cluster)
    assert found["exchangeable_expected"] == (layers[0] + 1) / 2 + 2
    assert found["crossing_chance"] == min(1, max(0, (budget - len(seed_cluster) - 3) / layers[0]))


def test_tunnel_pages_look_like_the_other_pages_of_their_topic():
    web = generate(WebSpec(**{**TUNNELLED.__dict__, "anchor_quality": 1.0, "ambiguity": 0.0}))
    tunnel = {page for chain in web.tunnels for page in chain}
    for page in web.pages:
        words = set(web.vocabularies[1 + page.topic]) | set(web.vocabularies[0])
        assert set(page.text.split()) <= words
        for target, anchor in page.links:
            if target in tunnel:
                assert set(anchor.split()) <= set(web.vocabularies[1 + web.pages[target].topic])
    assert all(not web.pages[page].relevant for page in tunnel)


def test_crossed_at_is_where_a_crawl_first_fetched_a_page_beyond_a_tunnel():
    web = generate(TUNNELLED)
    beyond = sorted(compare_orders.beyond_tunnels(web))
    ahead = [page for page in range(20) if page not in beyond]
    run = compare_orders.Run(web, "bfs", (), tuple(ahead[:5] + beyond[:1] + ahead[5:]), (), {}, 0.0, 0.0, 0)
    assert compare_orders.crossed_at(run) == 6
    assert compare_orders.crossed_at(compare_orders.Run(web, "bfs", (), tuple(ahead), (), {}, 0.0, 0.0, 0)) is None

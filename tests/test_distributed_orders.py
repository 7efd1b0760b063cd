"""Every --order that can be shared, shared: three workers over one Redis
(and one order over two Redis servers) crawl a site of several hosts with
shortcuts, and the merged result has the URLs and the levels of the crawl of
one machine in the same order (with no page budget both fetch everything;
the levels are the shortest link distance, which `crawler merge`
recomputes from the edges). What cannot be shared is refused in one line."""
import subprocess
import sys

import pytest

from crawldir import rows_of
from redisserver import RedisServer
from shortcutsite import shortcut_site
from test_distributed import ROOT, cli, finish, kill_9, start, union_rows, wait_for, wait_rows
from urllist.redisqueue import fingerprint, parse_entry, shared_over

SHARED = ("importance", "opic", "best-first", "best-n-first", "shark", "aco")
FOCUSED = ("best-first", "best-n-first", "shark", "aco")
DELAY = 0.2   # the workers that join after the first still find work


@pytest.fixture(scope="module")
def site():
    with shortcut_site() as made:
        yield made


def options(order, depth=0):
    topic = ["--topic", "host page"] if order in FOCUSED else []
    return ["--order", order, "--scope", "any", "--max-depth", str(depth), "--max-pages", "0",
            "--delay", str(DELAY), "--quiet", *topic]


def levels(rows):
    return {row["url"]: int(row["level"]) for row in rows}


def shared_crawl(seed, urls, tmp_path, order, victim=False, depth=0):
    """Three workers (the first makes the crawl); the merged directory."""
    on = [arg for url in urls for arg in ("--redis", url)]
    dirs = [tmp_path / f"w{k}" for k in range(3)]
    first = start(["crawl", seed, *on, "--crawl-id", "t", "--out", str(dirs[0]),
                   *options(order, depth)],
                  tmp_path)
    wait_for(shared_over(urls, "t").exists, [first])
    procs = [first] + [start(["worker", *on, "--crawl-id", "t", "--out", str(d), "--quiet",
                              "--processes", "1"], tmp_path) for d in dirs[1:]]
    if victim:   # the crawl's maker, killed once it has committed pages: a worker started again
        wait_rows(dirs[0], 3, procs)
        kill_9(procs.pop(0))
        procs.append(start(["worker", *on, "--crawl-id", "t", "--out", str(dirs[0]), "--quiet",
                            "--processes", "1"], tmp_path))
    finish(procs)
    union_rows(dirs)   # no page committed twice
    merged = tmp_path / "merged"
    done = cli("merge", "--out", str(merged), *map(str, dirs))
    assert done.returncode == 0, done.stderr
    return merged


def single_crawl(seed, tmp_path, order, depth=0):
    out = tmp_path / "single"
    done = subprocess.run([sys.executable, "-m", "controller", "crawl", seed, "--out", str(out),
                           "--workers", "1", *options(order, depth)], capture_output=True, text=True,
                          timeout=120, env={"PYTHONPATH": str(ROOT), "PATH": ""})
    assert done.returncode == 0, done.stderr
    return out


@pytest.mark.parametrize("order", SHARED)
def test_three_workers_in_an_order_give_the_one_machine_urls_and_levels(order, site, tmp_path,
                                                                         redis_server):
    seed, truth, logs = site
    merged = shared_crawl(seed, [redis_server.url], tmp_path, order)
    single = levels(rows_of(single_crawl(seed, tmp_path, order)))
    assert levels(rows_of(merged)) == single == truth
    report = cli("report", str(merged), "--format", "json")
    assert report.returncode == 0, report.stderr


@pytest.mark.parametrize("order", ("importance", "aco"))
def test_an_order_over_two_redis_servers_with_a_killed_worker_loses_nothing(order, site, tmp_path):
    seed, truth, logs = site
    with RedisServer(tmp_path / "redis-a") as a, RedisServer(tmp_path / "redis-b") as b:
        merged = shared_crawl(seed, [a.url, b.url], tmp_path, order, victim=True)
        status = cli("status", "--redis", a.url, "--redis", b.url, "--crawl-id", "t")
        assert status.returncode == 0 and "finished" in status.stdout
    assert levels(rows_of(merged)) == truth


@pytest.mark.parametrize("order", ("importance", "best-first"))
def test_max_depth_in_an_order_fetches_the_one_machine_pages(order, site, tmp_path, redis_server):
    """A URL found first beyond --max-depth, by a long path, is fetched once a
    shorter one turns up (also through a page fetched before the shortcut was
    found: the closure at the end), and none beyond is."""
    seed, truth, logs = site
    merged = levels(rows_of(shared_crawl(seed, [redis_server.url], tmp_path, order, depth=2)))
    single = levels(rows_of(single_crawl(seed, tmp_path, order, depth=2)))
    assert merged == single == {url: level for url, level in truth.items() if level <= 2}


@pytest.mark.parametrize("order, extra, said", [
    ("aco", ("--order-param", "rho=0.1"), "--order aco does not go with --redis: rho (evaporation)"),
    ("importance", ("--order-param", "pagerank_every=10"),
     "--order importance does not go with --redis: pagerank_every"),
])
def test_what_an_order_cannot_share_is_refused_in_one_line(order, extra, said, tmp_path):
    done = cli("crawl", "http://127.0.0.1:9/", "--redis", "redis://127.0.0.1:9/0", "--crawl-id",
               "t", "--out", str(tmp_path / "x"), "--order", order, "--topic", "x",
               "--max-depth", "0", *extra)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert said in done.stderr
    assert not (tmp_path / "x").exists()


def test_a_shortcut_found_after_a_page_was_fetched_brings_its_links_within_max_depth(
        redis_server):
    """S links to A and X; A to A2, A2 to B, X to B, B to C; --max-depth 3.
    The order takes A's branch first, so B is fetched at level 3 and C is
    kept aside beyond the limit; X's link then lowers B to level 2, which is
    done already: only the closure over the kept links finds C at level 3."""
    crawl = shared_over([redis_server.url], "t")
    url = lambda name: f"http://{name.lower()}.test/"
    assert crawl.create({"max_depth": 3}, [(url("S"), "s.test", "", "")], delay=0, per_host=1,
                        max_pages=0, host_cap=0, query_cap=0, order=(2, 0.0, 0.0, 0))
    epoch = crawl.run("join", "w")[2]
    links = {"S": [("A", 100), ("X", 0)], "A": [("A2", 100)], "A2": [("B", 100)],
             "X": [("B", 0)], "B": [("C", 100)], "C": []}
    order, acks, seq = [], [], 0
    while True:
        seq += 1
        reply = crawl.run("sync", "w", epoch, seq, 1, 0, 0, *acks)
        if not reply[1]:
            break
        item, host = parse_entry(reply[1][0])
        name = host.split(".")[0].upper()
        order.append((name, item.level))
        sent = [field for target, best in links[name] for field in (
            fingerprint(url(target)), f"{target.lower()}.test", "", "", f"{url(target)}\t0\t{best}\t0")]
        acks = [item.id, "", "", "", int(item.level < 3), len(links[name]), *sent]
    assert order == [("S", 0), ("A", 1), ("A2", 2), ("B", 3), ("X", 1)]
    assert crawl.advance() == ((), False)   # the closure queued C
    reply = crawl.run("sync", "w", epoch, seq + 1, 1, 0, 0)
    assert [(parse_entry(e)[0].url, parse_entry(e)[0].level) for e in reply[1]] == [(url("C"), 3)]


@pytest.mark.parametrize("batch, first", [(0, "a"), (3, "b")])
def test_best_n_first_applies_a_better_score_with_its_partitions_next_batch(batch, first,
                                                                             redis_server):
    """S links to a (0.1) and b (0.2), T to a (0.9), a and b on one host: as
    best-first (batch 0) a goes first; with n = 3, a's better score waits for
    the third page acknowledged here, so b (placed higher) goes first."""
    crawl = shared_over([redis_server.url], "t")
    url = lambda name: f"http://{name}.test/"
    seeds = [(url(name), f"{name}.test", "", "") for name in ("s", "t")]
    assert crawl.create({}, seeds, delay=0, per_host=1, max_pages=0, host_cap=0, query_cap=0,
                        order=(1, 0.0, 0.0, batch))
    epoch = crawl.run("join", "w")[2]
    held = {parse_entry(e)[0].url: parse_entry(e)[0] for e in crawl.run("sync", "w", epoch, 1, 2,
                                                                         0, 0)[1]}
    target = lambda name: f"http://x.test/{name}"
    link = lambda name, best: [fingerprint(target(name)), "x.test", "", "",
                               f"{target(name)}\t0\t{best}\t0"]
    for seq, (seed, links) in enumerate([("s", [("a", 0.1), ("b", 0.2)]), ("t", [("a", 0.9)])], 2):
        sent = [field for name, best in links for field in link(name, best)]
        crawl.run("sync", "w", epoch, seq, 0, 0, 0, held[url(seed)].id, "", "", "", 1, len(links),
                  *sent)
    leased = crawl.run("sync", "w", epoch, 4, 1, 0, 0)[1]
    assert [parse_entry(e)[0].url for e in leased] == [target(first)]


def minstd(x):
    """The shared crawl's exploring draws (the Lua odraw), modelled: the next
    state and its uniform in [0, 1)."""
    x = 48271 * x % 2147483647
    return x, (x - 1) / 2147483646


@pytest.mark.parametrize("q0, seed", [(1.0, 0), (0.5, 3), (0.0, 8)])
def test_aco_leases_draw_from_their_partitions_generator(q0, seed, redis_server):
    """S links to six hosts' URLs of falling weights, leased one a call: with
    q0 = 1 best first; else each lease takes the best with probability q0,
    or one drawn in proportion to the weights, as the partition's generator
    (seeded from --order-param seed) draws: the lease order is the model's."""
    crawl = shared_over([redis_server.url], "t")
    assert crawl.create({}, [("http://s.test/", "s.test", "", "")], delay=0, per_host=1,
                        max_pages=0, host_cap=0, query_cap=0, order=(1, 0.0, 0.0, 0, q0, seed))
    epoch = crawl.run("join", "w")[2]
    (entry,) = crawl.run("sync", "w", epoch, 1, 1, 0, 0)[1]
    weights = {f"http://x{k}.test/": -0.5 * k for k in range(6)}
    sent = [field for url, best in weights.items()
            for field in (fingerprint(url), url[7:-1], "", "", f"{url}\t0\t{best!r}\t0")]
    acked, leased = parse_entry(entry)[0].id, []
    for seq in range(2, 8):
        reply = crawl.run("sync", "w", epoch, seq, 1, 0, 0, acked, "", "", "", 1,
                          len(sent) // 5 if seq == 2 else 0, *(sent if seq == 2 else ()))
        item = parse_entry(reply[1][0])[0]
        leased.append(item.url)
        acked = item.id

    from urllist.orders import proportional_pick
    from urllist.redisqueue import draw_start
    state, waiting, expected = draw_start(seed, 0), list(weights), []
    while waiting:
        pick = 0
        if q0 < 1 and len(waiting) > 1:
            state, u = minstd(state)
            if u >= q0:
                state, u = minstd(state)
                pick = proportional_pick([weights[url] for url in waiting], u)
        expected.append(waiting.pop(pick))
    assert leased == expected
    assert (leased == list(weights)) == (q0 == 1.0)
    assert int(redis_server.client().hget(crawl.prefix + "state", "draw")) == state

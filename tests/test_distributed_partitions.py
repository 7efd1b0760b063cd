"""A shared crawl partitioned by host over two Redis servers, and over a
Redis Cluster of three masters, all started by the tests: three workers
give the one-machine crawl (URLs, levels, bytes), politeness holds per host
in the servers' logs, and a worker or one Redis server killed -9 (started
again from its append-only file) loses nothing."""
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from controller.config import CrawlConfig
from controller.engine import Crawl
from crawldir import rows_of
from manyhosts import SERVER_SIDE, many_hosts, truth
from redisserver import RedisServer
from test_distributed import (PAGES, assert_merge_is_the_single_crawl, finish, kill_9,
                              page_requests, start, union_rows, wait_for, wait_rows)
from urllist.redisqueue import partition_of, shared_over

KILLPOINT = Path(__file__).resolve().parent / "killpoint.py"
KILLED = 137
DELAY = 0.3   # the workers that join after the first still find work


@pytest.fixture(scope="module")
def hosts():
    with many_hosts(first_address=100) as sites:
        yield sites


def cleared(hosts):
    """The sites, their logs emptied: the test's requests only."""
    for log in hosts[1]:
        log.clear()
    return hosts


@pytest.fixture(scope="module")
def single(hosts, tmp_path_factory):
    """The crawl of one machine, once for the module's tests."""
    roots, logs = hosts
    out = tmp_path_factory.mktemp("single") / "out"
    Crawl(CrawlConfig(seeds=tuple(roots), out=out, delay=0.05, max_depth=0, max_pages=0,
                      warc=True, progress=False)).run()
    return out


@pytest.fixture
def two_servers(tmp_path):
    with RedisServer(tmp_path / "redis-a") as a, RedisServer(tmp_path / "redis-b") as b:
        yield a, b


def on(urls):
    return [arg for url in urls for arg in ("--redis", url)]


def first_worker(roots, urls, out, *extra):
    return ["crawl", *roots, *on(urls), "--crawl-id", "t", "--out", str(out), "--delay", str(DELAY),
            "--max-depth", "0", "--max-pages", "0", "--quiet", *extra]


def worker(urls, out, *extra):
    return ["worker", *on(urls), "--crawl-id", "t", "--out", str(out), "--quiet",
            "--processes", "1", *extra]


def wait_made(urls, procs):
    """Until the first worker has made the crawl (its partition 0 last)."""
    crawl = shared_over(urls, "t")
    wait_for(crawl.exists, procs)


def cli_json(*args):
    from test_distributed import cli
    done = cli(*args)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout) if done.stdout.startswith("{") else done.stdout


def three_workers(roots, logs, urls, tmp_path, single):
    """Three workers over ``urls``; the one-machine crawl's URLs, levels and
    bytes, each page fetched once, and every host's requests DELAY apart;
    merged, the one-machine crawl's index, report, WARC and export."""
    dirs = [tmp_path / f"w{k}" for k in range(3)]
    procs = [start(first_worker(roots, urls, dirs[0], "--warc"), tmp_path)]
    wait_made(urls, procs)
    procs += [start(worker(urls, d), tmp_path) for d in dirs[1:]]
    finish(procs)
    rows = union_rows(dirs)
    assert {r["url"]: int(r["level"]) for r in rows} == truth(roots)
    by_url = {r["url"]: r for r in rows_of(single)}
    for d in dirs:
        for row in rows_of(d):
            assert (d / row["html_path"]).read_bytes() == \
                (single / by_url[row["url"]]["html_path"]).read_bytes()
    assert max(page_requests(logs).values()) == 1 and len(page_requests(logs)) == PAGES
    for log in logs:   # every worker's requests to one host, robots.txt too
        times = sorted(r.time for r in log.snapshot())
        short = [b - a for a, b in zip(times, times[1:]) if b - a < SERVER_SIDE * DELAY]
        assert not short, short
    status = cli_json("status", *on(urls), "--crawl-id", "t", "--format", "json")
    assert status["finished"] and status["processed"] == PAGES and status["leased"] == 0
    assert status["partitions"] == (2 if len(urls) == 2 else 6)   # on the cluster: two a master
    assert status["flags"][-1] == PAGES and status["workers"] == []
    assert_merge_is_the_single_crawl(tmp_path, dirs, single)
    return dirs


def test_three_workers_over_two_redis_servers_give_the_one_machine_crawl(
        hosts, tmp_path, two_servers, single):
    roots, logs = cleared(hosts)
    urls = [server.url for server in two_servers]
    three_workers(roots, logs, urls, tmp_path, single)
    # Each server holds the seen-set of its hosts' URLs, and only those.
    hosts = {root.split("/")[2] for root in roots}
    for part, server in enumerate(two_servers):
        client = server.client()
        keys = [key.decode() for key in client.scan_iter(match="crawl:*seen:*")]
        mine = {h for h in hosts if partition_of(h, 2) == part}
        assert bool(keys) == bool(mine)
        assert all(key.startswith("crawl:{t}:" if part == 0 else "crawl:{t:1}:") for key in keys)
    shown = cli_json("status", *on(urls), "--crawl-id", "t")
    assert shown.startswith("crawl t: finished (partitioned by host over 2 partitions)")
    forgot = cli_json("forget", *on(urls), "--crawl-id", "t")
    assert "forgot crawl t" in forgot
    assert [server.client().dbsize() for server in two_servers] == [0, 0]


def test_a_killed_worker_and_a_killed_redis_server_lose_nothing(hosts, tmp_path,
                                                                 two_servers):
    roots, logs = cleared(hosts)
    urls = [server.url for server in two_servers]
    dirs = [tmp_path / f"w{k}" for k in range(3)]
    procs = [start(first_worker(roots, urls, dirs[0], "--lease-seconds", "3"), tmp_path)]
    wait_made(urls, procs)
    victim = start(worker(urls, dirs[1], "--worker-id", "victim"), tmp_path)
    procs.append(start(worker(urls, dirs[2]), tmp_path))
    wait_rows(dirs[1], 4, procs + [victim])
    kill_9(victim)
    two_servers[1].kill()    # kill -9: only its append-only file survives
    two_servers[1].start()   # same port, same data directory
    finish(procs)            # the victim's URLs went to the others when its lease ran out
    # rows the victim committed but had not written: written when it comes back
    finish([start(worker(urls, dirs[1], "--worker-id", "victim"), tmp_path)])
    rows = union_rows(dirs)
    assert {r["url"]: int(r["level"]) for r in rows} == truth(roots)


def test_three_workers_over_a_redis_cluster_give_the_one_machine_crawl(
        hosts, tmp_path, redis_cluster, single):
    roots, logs = cleared(hosts)
    three_workers(roots, logs, [redis_cluster.url], tmp_path, single)
    holding = [node.client().dbsize() > 0 for node in redis_cluster.nodes]
    assert sum(holding) >= 2, "the partitions' tags all landed on one master"


def test_a_worker_with_other_servers_is_refused(tmp_path, two_servers, hosts):
    from test_distributed import cli
    urls = [server.url for server in two_servers]
    crawl = shared_over(urls, "t")
    crawl.create({}, [], delay=0, per_host=1, max_pages=0, host_cap=0, query_cap=0)
    done = cli("worker", "--redis", urls[0], "--crawl-id", "t", "--out", str(tmp_path / "w"))
    assert done.returncode != 0 and "partitioned over 2 partition(s), this worker over 1" \
        in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


BUDGET = 40   # levels 0 and 1 whole (6 + 20 pages), 14 of level 2's 28


@pytest.fixture(scope="module")
def single_budget(hosts, tmp_path_factory):
    """The one-machine crawl under the same page budget."""
    roots, _ = hosts
    out = tmp_path_factory.mktemp("single-budget") / "out"
    Crawl(CrawlConfig(seeds=tuple(roots), out=out, delay=0.05, max_depth=0, max_pages=BUDGET,
                      progress=False)).run()
    return out


def assert_budget_crawl(roots, rows, single_budget, urls):
    """BUDGET pages, each at its one-machine level, as many a level as the
    one-machine crawl's; the levels before the last whole; Redis agrees."""
    assert len(rows) == BUDGET
    levels = truth(roots)
    assert all(levels[r["url"]] == int(r["level"]) for r in rows)
    per_level = Counter(int(r["level"]) for r in rows)
    assert per_level == Counter(int(r["level"]) for r in rows_of(single_budget))
    last = max(per_level)
    assert all(per_level[k] == list(levels.values()).count(k) for k in range(last))
    status = cli_json("status", *on(urls), "--crawl-id", "t", "--format", "json")
    assert status["finished"] and status["processed"] == BUDGET and status["leased"] == 0


def test_a_page_budget_over_two_servers_is_exact(hosts, tmp_path, two_servers, single_budget):
    roots, logs = cleared(hosts)
    urls = [server.url for server in two_servers]
    dirs = [tmp_path / f"w{k}" for k in range(3)]
    procs = [start(first_worker(roots, urls, dirs[0], "--max-pages", str(BUDGET)), tmp_path)]
    wait_made(urls, procs)
    procs += [start(worker(urls, d), tmp_path) for d in dirs[1:]]
    finish(procs)
    assert_budget_crawl(roots, union_rows(dirs), single_budget, urls)
    assert sum(page_requests(logs).values()) == BUDGET
    reasons = {json.loads((d / "stats.json").read_text())["stop_reason"] for d in dirs}
    assert reasons == {"max-pages"}


def test_a_page_budget_survives_a_killed_worker(hosts, tmp_path, two_servers, single_budget):
    roots, _ = cleared(hosts)
    urls = [server.url for server in two_servers]
    dirs = [tmp_path / f"w{k}" for k in range(3)]
    # a longer delay: the victim, starting up, still finds URLs to lease
    procs = [start(first_worker(roots, urls, dirs[0], "--max-pages", str(BUDGET),
                                "--lease-seconds", "3", "--delay", "0.8"), tmp_path)]
    wait_made(urls, procs)
    # killed at once (as by kill -9) after its first sync that left it holding URLs
    victim = subprocess.Popen([sys.executable, str(KILLPOINT), "leased:1",
                               *worker(urls, dirs[1], "--worker-id", "victim")], cwd=tmp_path,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    procs.append(start(worker(urls, dirs[2]), tmp_path))
    assert victim.wait(timeout=60) == KILLED, victim.communicate()
    victim.stdout.close()
    victim.stderr.close()
    crawl = shared_over(urls, "t")
    assert sum(part.client.hlen(part.prefix + "lease:victim") for part in crawl.parts) > 0
    finish(procs)   # the victim's leases, and the budget they used, went to the others
    # rows the victim committed but had not written: written when it comes back
    finish([start(worker(urls, dirs[1], "--worker-id", "victim"), tmp_path)])
    assert_budget_crawl(roots, union_rows(dirs), single_budget, urls)


def named(prefix: str, part: int, parts: int = 2) -> str:
    """The first of prefix0, prefix1 ... in partition ``part``."""
    return next(f"{prefix}{k}" for k in range(100) if partition_of(f"{prefix}{k}", parts) == part)


def test_a_duplicate_queues_no_links_whichever_partition_judges_it(redis_server):
    """A page's content verdict is asked in its sync (digest and links all in
    its own partition), in the offer of its links (all in the digest's
    partition) or in a call of its own first: in each, the first page with a
    text is no duplicate and its links are queued in their hosts' partitions,
    a copy is a duplicate of it and its links are queued nowhere."""
    from getpage.politeness import Cancelled
    from urllist.redisqueue import RedisFrontier, RedisGate, SharedCrawl, connect

    shared = SharedCrawl(connect(redis_server.url), "dup", partitions=2)
    home = [named("127.0.0.1:80", part) for part in (0, 1)]   # a host in each partition
    text_a, text_b, text_c = named("a-", 0), named("b-", 0), named("c-", 1)   # digests' partitions
    pages = {   # name: (its host's partition, its text's md5, its link's host's partition)
        "first": (0, text_a, 1), "copy": (0, text_a, 1),                # a call of its own
        "offered": (1, text_b, 0), "offered-copy": (1, text_b, 0),      # in the offer
        "alone": (0, text_c, 0),                                        # a call of its own
        "here": (1, text_c, 1)}                                         # in its sync
    seeds = [(f"http://{home[h]}/{name}", home[h], "", "") for name, (h, _, _) in pages.items()]
    assert shared.create({}, seeds, delay=0, per_host=8, max_pages=0, host_cap=0, query_cap=0)
    gate = RedisGate(shared, "w", Cancelled)
    frontier = RedisFrontier(shared, gate, threads=8)
    frontier.join()
    held = {item.url.rsplit("/", 1)[1]: item for item in frontier.pop(8, gate.clock())}
    assert sorted(held) == sorted(pages)
    verdicts = {}
    for name, (h, md5, target) in pages.items():
        link = (f"http://{home[target]}/from-{name}", home[target], "", "")
        commit = frontier.commit(held[name], md5, [link], True, {})
        gate.release(home[h])
        verdicts[name] = (commit.duplicate_of, commit.new_count)
    ids = {name: item.id for name, item in held.items()}
    assert verdicts == {"first": (None, 1), "copy": (ids["first"], 0),
                        "offered": (None, 1), "offered-copy": (ids["offered"], 0),
                        "alone": (None, 1), "here": (ids["alone"], 0)}
    level1 = frontier.pop(8, gate.clock())
    assert sorted(item.url.rsplit("/", 1)[1] for item in level1) == \
        ["from-alone", "from-first", "from-offered"]
    assert {item.level for item in level1} == {1}
    frontier.leave()


def budget_crawl(redis_server, crawl_id: str, max_pages: int):
    """A crawl over two partitions of one server, six seeds in each, and its
    partitions' quotas and the pool's free budget as functions."""
    from urllist.redisqueue import SharedCrawl, connect
    shared = SharedCrawl(connect(redis_server.url), crawl_id, partitions=2)
    home = [named("127.0.0.1:80", part) for part in (0, 1)]
    seeds = [(f"http://{home[part]}/{k}", home[part], "", "") for part in (0, 1) for k in range(6)]
    assert shared.create({}, seeds, delay=0, per_host=8, max_pages=max_pages, host_cap=0,
                         query_cap=0)
    client = redis_server.client()
    return (shared,
            lambda: [int(client.hget(part.prefix + "state", "quota") or 0) for part in shared.parts],
            lambda: int(client.hget(shared.prefix + "budget", "free")))


def half_a_move(shared) -> list[int]:
    """A worker's share_budget up to the pool (budget taken, none handed on): what was sent."""
    asked = [shared.run("quota", -1, part=part) for part in (0, 1)]
    assert [int(lacks) for _, lacks, _ in asked] == [6, 6]
    return [int(total) for total in
            shared.run("pool", *[int(v) for returned, lacks, _ in asked for v in (returned, lacks)])]


def test_a_budget_move_cut_short_is_finished_by_the_next_worker_and_leases_stay_exact(
        redis_server):
    """The budget's shares: a worker that dies between taking budget from the
    pool and handing it to the partitions loses none of it (the next one's
    share_budget finishes the move, once), and the leases over both
    partitions together stop at the budget."""
    from getpage.politeness import Cancelled
    from urllist.redisqueue import RedisFrontier, RedisGate

    shared, quotas, free = budget_crawl(redis_server, "budget", 10)
    assert half_a_move(shared) == [6, 4] and free() == 0
    assert quotas() == [0, 0]   # the mover died here: the budget is in flight, in no quota
    shared.share_budget()
    assert quotas() == [6, 4] and free() == 0
    shared.share_budget()       # told twice: nothing moves twice
    assert quotas() == [6, 4] and free() == 0
    gate = RedisGate(shared, "w", Cancelled)
    frontier = RedisFrontier(shared, gate, threads=16)
    frontier.join()
    leased = frontier.pop(16, gate.clock()) + frontier.pop(16, gate.clock())
    assert len(leased) == 10
    assert sorted(shared.part_of_id(item.id) for item in leased) == [0] * 6 + [1] * 4
    frontier.leave()   # its leases back to their queues, and the quota with them
    shared.share_budget()
    assert quotas() == [6, 4] and free() == 0
    assert [int(shared.client.hget(part.prefix + "state", "leased")) for part in shared.parts] \
        == [0, 0]


def test_budget_sent_twice_by_racing_workers_comes_back_to_the_pool(redis_server):
    """Two workers share with the same asks at once: a partition is sent
    more than its URLs need, never more than the budget, and gives the rest
    back on the next share."""
    shared, quotas, free = budget_crawl(redis_server, "race", 20)
    assert half_a_move(shared) == [6, 6] and free() == 8
    assert half_a_move(shared) == [12, 8] and free() == 0   # the second, with the first's asks
    shared.share_budget()   # handed on, each keeps what its open level's URLs need
    assert quotas() == [6, 6] and free() == 0   # the rest on its way back, in no quota
    shared.share_budget()
    assert quotas() == [6, 6] and free() == 8


def test_a_redis_cluster_master_killed_and_restarted_loses_nothing(hosts, tmp_path, redis_cluster):
    roots, _ = cleared(hosts)
    urls = [redis_cluster.url]
    dirs = [tmp_path / f"w{k}" for k in range(2)]
    procs = [start(first_worker(roots, urls, dirs[0]), tmp_path)]
    wait_made(urls, procs)
    procs.append(start(worker(urls, dirs[1]), tmp_path))
    wait_rows(dirs[1], 4, procs)
    victim = redis_cluster.nodes[1]
    victim.kill()    # kill -9: only its append-only file survives
    victim.start()   # same port, same data directory: it rejoins with its slots
    finish(procs)
    rows = union_rows(dirs)
    assert {r["url"]: int(r["level"]) for r in rows} == truth(roots)


def test_a_late_offer_of_a_page_whose_level_closed_is_refused(redis_server):
    """A worker fenced in its page's partition but not yet in another (that
    one excused an outage of its own, say) offers its reclaimed page's links
    there after the page was done again and its level closed: nothing is
    queued, or the open level would hold more URLs than its flag says."""
    from urllist.redisqueue import SharedCrawl, connect, fingerprint

    shared = SharedCrawl(connect(redis_server.url), "late", partitions=2)
    home, there = named("127.0.0.1:80", 0), named("127.0.0.1:80", 1)
    assert shared.create({}, [(f"http://{home}/", home, "", "")], delay=0, per_host=1,
                         max_pages=0, host_cap=0, query_cap=0)
    epochs = {w: [shared.run("join", w, part=p)[2] for p in (0, 1)] for w in ("slow", "other")}

    def run(w, name, part, *args):
        return shared.run(name, w, epochs[w][part], *args, part=part)

    def link(path):
        url = f"http://{there}/{path}"
        return [fingerprint(url), there, "", "", url]

    (page,) = run("slow", "sync", 0, 1, 1, 0, 0)[1]
    page_id = int(page.split(b"\t")[0])
    # slow's deadline passes in partition 0 only: there its page goes back to the queue
    shared.client.zadd(shared.parts[0].prefix + "workers", {"slow": 0})
    epochs["other"][0] = shared.run("join", "other", part=0)[2]
    assert run("other", "sync", 0, 2, 1, 0, 0)[1] == [page]   # done again, by other
    assert run("other", "offer", 1, page_id, 0, 1, "", 1, *link("a"))[0][0] != []
    run("other", "sync", 0, 3, 0, 0, 0, page_id, "", "", "", 1, 0)
    assert shared.advance() == ((1, 2), False)   # level 0 closed: level 1 holds one URL

    assert run("slow", "offer", 1, page_id, 0, 1, "", 1, *link("b")) == [[-1]]
    levels = shared.parts[1].prefix + "levels"
    assert shared.client.hget(levels, "q:1") == b"1"
    assert shared.client.llen(shared.parts[1].prefix + f"q:1:{there}") == 1


def test_a_level_closing_while_its_last_page_offers_a_link_elsewhere(redis_server):
    """SharedCrawl.advance reads the partitions one after another. Between
    its read of partition 0 (done with level 0) and of partition 1, the last
    page of level 0 (partition 1's) offers a link to partition 0 and is
    acknowledged: level 0 is closed, and level 1 holds that link (counted
    after the read of partition 0), so the crawl is not finished."""
    import redis

    from urllist.redisqueue import SharedCrawl, connect, fingerprint

    class Interleaved(redis.Redis):
        """A client that runs ``before`` (once) ahead of its first read of a
        partition's level counts."""
        before = None

        def hmget(self, name, *args, **kwargs):
            if self.before and name.endswith("levels"):
                step, self.before = self.before, None
                step()
            return super().hmget(name, *args, **kwargs)

    connect(redis_server.url)
    clients = [redis.Redis.from_url(redis_server.url), Interleaved.from_url(redis_server.url)]
    shared = SharedCrawl(clients, "race")
    hosts = [named("127.0.0.1:80", part) for part in (0, 1)]
    assert shared.create({}, [(f"http://{h}/", h, "", "") for h in hosts], delay=0, per_host=1,
                         max_pages=0, host_cap=0, query_cap=0)
    epochs = [shared.run("join", "w", part=part)[2] for part in (0, 1)]

    def run(name, part, *args):
        return shared.run(name, "w", epochs[part], *args, part=part)

    ids = [int(run("sync", part, 1, 1, 0, 0)[1][0].split(b"\t")[0]) for part in (0, 1)]
    run("sync", 0, 2, 0, 0, 0, ids[0], "", "", "", 1, 0)   # partition 0 done with level 0
    url = f"http://{hosts[0]}/child"

    def last_page():
        run("offer", 0, ids[1], 0, 1, "", 1, fingerprint(url), hosts[0], "", "", url)
        run("sync", 1, 2, 0, 0, 0, ids[1], "", "", "1", 1, 0)

    clients[1].before = last_page
    assert shared.advance() == ((2, 3), False)
    assert not shared.finished()


def test_a_crawl_on_a_cluster_keeps_its_partitions_when_the_masters_change(redis_cluster):
    """A crawl's partitions on a Redis Cluster are fixed when it is made (two
    a master then): a worker joining after a master was added (or removed)
    works over the partitions the crawl has, not over two a master now."""
    from urllist.redisqueue import SharedCrawl, connect

    made = SharedCrawl(connect(redis_cluster.url), "grown", partitions=4)   # two masters, then
    assert made.create({}, [("http://127.0.0.1:80/", "127.0.0.1:80", "", "")], delay=0,
                       per_host=1, max_pages=0, host_cap=0, query_cap=0)
    joined = shared_over([redis_cluster.url], "grown")
    assert joined.count == 4
    joined.check_partitions()
    assert shared_over([redis_cluster.url], "new").count == 6


def test_a_worker_giving_the_servers_in_another_order_is_refused(tmp_path):
    """Partition p of a crawl is on its p-th server: a worker whose list puts
    two of them the other way round would make a partition of its own on
    the wrong server (ids colliding with partition 0's) instead of joining."""
    from test_distributed import cli

    with RedisServer(tmp_path / "a") as a, RedisServer(tmp_path / "b") as b, \
            RedisServer(tmp_path / "c") as c:
        from controller.shared import create
        config = CrawlConfig(seeds=("http://127.0.0.1:1/",), out=tmp_path / "w0", max_pages=0)
        assert create(shared_over([a.url, b.url, c.url], "t"), config)
        done = cli("worker", *on([a.url, c.url, b.url]), "--crawl-id", "t",
                   "--out", str(tmp_path / "w"))
        assert done.returncode == 2, done.stderr
        assert "partition 1 of crawl t is not on" in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1
        assert not c.client().exists("crawl:{t:1}:epoch") and not (tmp_path / "w").exists()


def test_level_0_opens_if_the_crawls_maker_died_before_opening_it(redis_server):
    """With several partitions the maker opens level 0 once every partition
    has its seeds (partition 0, the crawl's mark, made last). Dead in
    between, it leaves a crawl no worker could finish: the next advance
    opens level 0 with every partition's seeds."""
    from urllist.redisqueue import SharedCrawl, connect, fingerprint

    shared = SharedCrawl(connect(redis_server.url), "half", partitions=2)
    hosts = [named("127.0.0.1:80", part) for part in (0, 1)]
    for part in (1, 0):   # as SharedCrawl.create makes them, without the open that follows
        url = f"http://{hosts[part]}/"
        shared.run("create", "{}", 0, 1, 0, 60_000, 0, 0, 0, 2, part, 0, 0, 0, 0, 1, 1,
                   fingerprint(url), hosts[part], "", "", url, part=part)
    assert shared.advance() == ((2,), False)
    assert [shared.client.lrange(part.prefix + "flags", 0, -1) for part in shared.parts] == \
        [[b"2"], [b"2"]]


def test_a_worker_fenced_in_one_partition_still_gives_back_what_it_holds_in_the_others(
        redis_server):
    """A worker leaving that was taken for dead in one partition (its URLs
    there went to others) is told so, and still gives back at once what it
    holds in the others, rather than holding them until its lease ends."""
    from getpage.politeness import Cancelled
    from urllist.redisqueue import RedisFrontier, RedisGate, SharedCrawl, WorkerFenced, connect

    shared = SharedCrawl(connect(redis_server.url), "fenced", partitions=2)
    home = [named("127.0.0.1:80", part) for part in (0, 1)]
    assert shared.create({}, [(f"http://{home[p]}/", home[p], "", "") for p in (0, 1)], delay=0,
                         per_host=1, max_pages=0, host_cap=0, query_cap=0)
    gate = RedisGate(shared, "w", Cancelled)
    frontier = RedisFrontier(shared, gate, threads=8)
    frontier.join()
    assert len(frontier.pop(8, gate.clock())) == 2   # one URL of each partition
    client = redis_server.client()
    client.hincrby(shared.parts[0].prefix + "epoch", "w", 1)   # taken for dead in partition 0
    with pytest.raises(WorkerFenced):
        frontier.leave()
    there = shared.parts[1].prefix
    assert client.hlen(there + "lease:w") == 0
    assert client.hget(there + "state", "leased") == b"0"
    assert client.llen(there + f"q:0:{home[1]}") == 1   # back in its queue for another worker


def test_a_crawl_left_half_made_is_named_with_the_command_that_removes_it(tmp_path, two_servers):
    """A crawler crawl that died while making its partitions (partition 0,
    made last, missing) leaves part of a crawl: the next one under that name
    is refused in one line that says how to remove it, and that command does."""
    from test_distributed import cli
    urls = [server.url for server in two_servers]
    made = shared_over(urls, "t")
    two_servers[1].client().hset(made.parts[1].prefix + "state", "next_id", 0)
    done = cli("crawl", "http://127.0.0.1:9/", *on(urls), "--crawl-id", "t", "--out",
               str(tmp_path / "w"), "--max-pages", "0")
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1
    hint = done.stderr.split("crawler forget ", 1)[1].split(" removes it")[0]
    assert cli("forget", *hint.split()).returncode == 0
    assert made.leftover() == 0

"""Speculation in a shared crawl (controller/speculation.py, the speculate
script of urllist/redisqueue.py): a worker fetches the links of a page it
holds ahead of its level before they are queued, each claimed in Redis, and
the offer that queues such a URL leases it to its claimer. Shown on a real
redis-server and real sites: each URL requested once (the servers' logs),
the one-machine crawl's levels, politeness kept, and nothing lost when the
worker holding speculated URLs is killed -9."""
import json
from contextlib import ExitStack, contextmanager

import pytest
import redis

from controller.resume import STATE_DIR
from controller.shared import WORKER_ID_FILE
from demosite import Response
from demosite.server import serve
from redisserver import RedisServer
from test_distributed import finish, kill_9, page_requests, start, union_rows, wait_for

DELAY = 0.15
WIDE = 16      # level 1 of the wide site: what holds the level barrier (WIDE x DELAY)
CHAIN = 9      # the chain site's pages: page k at level k, linking to page k + 1


def wide(request):
    if request.path == "/w/0.html":
        body = "".join(f'<a href="/w/{k}.html">w</a>' for k in range(1, WIDE + 1))
    elif request.path.startswith("/w/"):
        body = f"leaf {request.path}"
    else:
        return Response(404, {"Content-Type": "text/plain"}, b"")
    return Response(200, {"Content-Type": "text/html"},
                    f"<html><title>{request.path}</title><body>{body}</body></html>".encode())


def chain(request):
    if not request.path.startswith("/c/"):
        return Response(404, {"Content-Type": "text/plain"}, b"")
    k = int(request.path[3:-5])
    link = f'<a href="/c/{k + 1}.html">next</a>' if k + 1 < CHAIN else ""
    return Response(200, {"Content-Type": "text/html"},
                    f"<html><title>chain {k}</title><body>page {k} {link}</body></html>".encode())


@contextmanager
def barrier_sites():
    """A wide site whose level 1 takes WIDE delays, and a chain site whose
    next pages are known only from pages fetched ahead: its level-3 page
    onwards exist while level 1 is open only as links of parked pages."""
    with ExitStack() as stack:
        wide_base, wide_log = stack.enter_context(serve(wide, host="127.0.0.91"))
        chain_base, chain_log = stack.enter_context(serve(chain, host="127.0.0.92"))
        truth = {wide_base + "w/0.html": 0, **{f"{wide_base}w/{k}.html": 1 for k in range(1, WIDE + 1)},
                 **{f"{chain_base}c/{k}.html": k for k in range(CHAIN)}}
        yield [wide_base + "w/0.html", chain_base + "c/0.html"], [wide_log, chain_log], truth


@pytest.fixture(scope="module")
def sites():
    with barrier_sites() as found:
        yield found


@pytest.fixture
def clean(sites):
    for log in sites[1]:
        log.clear()
    return sites


def on(urls):
    return [arg for url in ([urls] if isinstance(urls, str) else urls) for arg in ("--redis", url)]


def maker(roots, redis_urls, out):
    return ["crawl", *roots, *on(redis_urls), "--crawl-id", "t", "--out", str(out),
            "--delay", str(DELAY), "--max-depth", "0", "--max-pages", "0", "--quiet",
            "--processes", "0"]


def joiner(redis_urls, out):
    return ["worker", *on(redis_urls), "--crawl-id", "t", "--out", str(out), "--quiet",
            "--processes", "0", "--wait-for-crawl", "60"]


def three(roots, redis_urls, dirs, cwd):
    return [start(maker(roots, redis_urls, dirs[0]), cwd)] + \
        [start(joiner(redis_urls, d), cwd) for d in dirs[1:]]


def speculated(dirs) -> int:
    """Speculative fetches the workers handed to queued URLs (stats.json)."""
    return sum(json.loads((d / "stats.json").read_text())["speculative"]["used"] for d in dirs)


@pytest.mark.parametrize("servers", [1, 2])
def test_speculated_urls_are_fetched_once_at_their_one_machine_level(clean, tmp_path, servers):
    roots, logs, truth = clean
    dirs = [tmp_path / f"w{k}" for k in range(3)]
    with ExitStack() as stack:
        urls = [stack.enter_context(RedisServer(tmp_path / f"redis{k}")).url for k in range(servers)]
        finish(three(roots, urls, dirs, tmp_path))
        # every claim given to its claimer
        assert not any(redis.Redis.from_url(url).keys("*claims*") for url in urls)
    assert {row["url"]: int(row["level"]) for row in union_rows(dirs)} == truth
    requests = page_requests(logs)
    assert sum(requests.values()) == len(truth) and set(requests.values()) == {1}
    assert speculated(dirs) >= 3   # the chain's pages beyond the level fetched ahead
    times = sorted(r.time for r in logs[1].snapshot())
    assert min(b - a for a, b in zip(times, times[1:])) >= 0.9 * DELAY


def test_a_worker_killed_holding_speculated_urls_loses_nothing(clean, tmp_path, redis_server):
    roots, logs, truth = clean
    dirs = [tmp_path / f"w{k}" for k in range(3)]
    procs = three(roots, redis_server.url, dirs, tmp_path)
    ids = [d / STATE_DIR / WORKER_ID_FILE for d in dirs]
    client = redis.Redis.from_url(redis_server.url)

    def claimer():   # the worker that claims a URL not queued yet (fetched speculatively)
        for k, id_file in enumerate(ids):
            if id_file.exists() and client.scard(f"crawl:{{t}}:claims:{id_file.read_text().strip()}"):
                return k
        return None

    wait_for(lambda: claimer() is not None, procs)
    victim = claimer()
    worker_id = ids[victim].read_text().strip()
    claimed = {m.decode() for m in client.smembers(f"crawl:{{t}}:claims:{worker_id}")}
    held = {v.decode().split("\t", 4)[4] for v in client.hvals(f"crawl:{{t}}:lease:{worker_id}")}
    kill_9(procs[victim])
    assert claimed
    again = start(joiner(redis_server.url, dirs[victim]), tmp_path)   # its id is in its --out
    finish([p for k, p in enumerate(procs) if k != victim] + [again])
    assert {row["url"]: int(row["level"]) for row in union_rows(dirs)} == truth
    twice = {path for path, n in page_requests(logs).items() if n > 1}
    # what the victim had fetched speculatively (claimed) or held may be fetched again; nothing else
    assert len(twice) <= len(claimed) + len(held)
    assert all(path[0] == 1 or f"{roots[0][:-len('w/0.html')]}{path[1][1:]}" in held
               for path in twice)
    assert not client.exists("crawl:{t}:claims")

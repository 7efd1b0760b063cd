"""One table for each rule written twice: once in Python (the crawl of one
machine) and once in the Lua of urllist/redisqueue.py (the shared crawl).

Each case of a table runs through both: (a) the Python function, and (b)
the Lua function of the same rule, taken from the module's own script
prelude (the real code, not a copy), run by EVAL in a real redis-server
with the keys it reads set up from the case. Both must give the table's
answer, so the two implementations cannot drift apart unseen.

The rules: a host's readiness (getpage.politeness.slot_ready_at / Lua
ready_at), its raised interval, hold-off and request sent
(PolitenessGate.raise_interval, hold_off, started / the gate script's
'raise', 'hold_off', 'started'), the trap limits
(urlfilter.TrapGuard.admit / trap_admit, on links and on seeds), level
closing (urllist.levels.Levels / close_levels, and SharedCrawl.advance over
several partitions), when a shared crawl is finished
(SharedCrawl.finished / summary), the exact-content verdict
(textfilter.ContentSeen / content_first), the URL fingerprint's seen-set
layout (redisqueue.fingerprint / seen_key), and aco's priority of a link
(urllist.orders.Aco.priority / Aco.shared_terms and opriority) and its
exploring draw in proportion to the weights (proportional_pick / opick). The host -> partition hash is
Python's alone (partition_of): its table pins it, as every worker must
compute it alike for the crawl's life.
"""
from __future__ import annotations

import math

import pytest

from controller.admission import trap_keys
from controller.config import CrawlConfig
from controller.shared import create
from controller.wiring import trap_guard
from getpage import host_key
from getpage.politeness import PolitenessGate, slot_ready_at
from textfilter.duplicates import ContentSeen, exact_key
from textfilter.fingerprint import text_md5
from urlfilter.traps import TrapGuard
from urllist.levels import Levels
from urllist.redisqueue import (_GATE, _PRELUDE, SharedCrawl, Summary, connect, fingerprint,
                                partition_of)

PREFIX = "crawl:{rules}:"
LUA_INF = 1e15   # the prelude's INF: "not until a slot is given back"


@pytest.fixture(scope="module")
def one_redis_server(tmp_path_factory):
    from redisserver import RedisServer
    with RedisServer(tmp_path_factory.mktemp("redis-data")) as server:
        yield server


@pytest.fixture
def redis_server(one_redis_server):
    """The module's one redis-server, emptied (FLUSHALL) for each case: a case
    sets only keys, never the server's settings, and a new process per case
    cost more than the case."""
    one_redis_server.client().flushall()
    return one_redis_server


@pytest.fixture
def client(redis_server):
    return redis_server.client()


def lua(client, call: str, *args):
    """``call`` (Lua ending in a return) run after the real prelude, KEYS[1]
    the crawl's prefix as every script has it."""
    return client.eval(_PRELUDE + call, 1, PREFIX, *args)


def set_cfg(client, **values) -> None:
    client.hset(PREFIX + "cfg", mapping={"lease": 60_000, "max_pages": 0, **values})


# -- host readiness ----------------------------------------------------------
# (per_host, delay, in flight, last request, raised interval, hold-off until,
#  now) -> ms to wait, then the window if any; None: not set; math.inf: not
#  until a slot comes back.
READINESS = {
    "a host never asked":          (1, 500, 0, None, None, None, 1000, 0),
    "within the delay":            (1, 500, 0, 1000, None, None, 1200, 300),
    "the delay has passed":        (1, 500, 0, 1000, None, None, 1600, 0),
    "exactly the delay":           (1, 500, 0, 1000, None, None, 1500, 0),
    "its one slot in flight":      (1, 500, 1, 1000, None, None, 9000, math.inf),
    "one of two slots in flight":  (2, 500, 1, 1000, None, None, 1200, 300),
    "both slots in flight":        (2, 500, 2, 1000, None, None, 9000, math.inf),
    "a raised interval":           (1, 500, 0, 1000, 2000, None, 1500, 1500),
    "a hold-off past the interval": (1, 500, 0, 1000, None, 5000, 1200, 3800),
    "an interval past the hold-off": (1, 500, 0, 1000, None, 1100, 1200, 300),
    "a hold-off, no request yet":  (1, 500, 0, None, None, 3000, 1000, 2000),
    "no delay":                    (1, 0, 0, 1000, None, None, 1000, 0),
    # --delay auto's window (getpage/pacing.py): fewer slots than --per-host open
    "a window of one, in flight":  (4, 0, 1, 1000, None, None, 9000, math.inf, 1),
    "a window of two, one in flight": (4, 0, 1, 1000, None, None, 1000, 0, 2),
}


@pytest.mark.parametrize("case", READINESS.values(), ids=READINESS.keys())
def test_host_readiness(client, case):
    per_host, delay, in_flight, last, interval, not_before, now, wait, *window = case
    window = window[0] if window else None
    ready = slot_ready_at(in_flight, per_host if window is None else window, last,
                          delay if interval is None else interval,
                          -math.inf if not_before is None else not_before)
    assert max(ready - now, 0) == wait

    set_cfg(client, delay=delay, per_host=per_host)
    fields = {"fl": in_flight, "last": last, "iv": interval, "nb": not_before, "win": window}
    client.hset(PREFIX + "h:H", mapping={k: v for k, v in fields.items() if v is not None})
    ready = float(lua(client, "return tostring(ready_at(ARGV[1]))", "H"))
    assert (math.inf if ready >= LUA_INF else max(ready - now, 0)) == wait


# -- a host's raised interval, hold-off and request sent -------------------------
# A server's answer (a Retry-After, a slow response) raises a host's interval
# or holds it off, and a request sent late counts from its send:
# getpage.PolitenessGate.raise_interval / hold_off / started, and the gate
# script's 'raise' / 'hold_off' / 'started'. The host's last request ended
# at 1000 ms; (delay, [(ms, op, seconds)], asked at ms) -> ms to wait.
ANSWERS = {
    "a raised interval": (500, [(1100, "raise", 2.0)], 1500, 1500),
    "raised, never lowered": (500, [(1100, "raise", 2.0), (1200, "raise", 1.0)], 1500, 1500),
    "the delay is the floor": (500, [(1100, "raise", 0.2)], 1200, 300),
    "a hold-off": (500, [(1200, "hold_off", 3.0)], 1500, 2700),
    "the longer hold-off wins": (500, [(1200, "hold_off", 3.0), (2000, "hold_off", 1.0)], 2500,
                                 1700),
    "a later hold-off ends later": (500, [(1200, "hold_off", 1.0), (2000, "hold_off", 1.0)],
                                    2500, 500),
    "a hold-off within the interval": (500, [(1100, "hold_off", 0.1)], 1100, 400),
    "both": (500, [(1100, "raise", 1.0), (1200, "hold_off", 0.5)], 1300, 700),
    "a request sent late": (500, [(1300, "started", 0)], 1400, 400),
    "a send never moves the last request back": (500, [(900, "started", 0)], 1200, 300),
}
GATE_OPS = {"raise": PolitenessGate.raise_interval, "hold_off": PolitenessGate.hold_off,
            "started": lambda gate, host, _: gate.started(host)}


@pytest.mark.parametrize("case", ANSWERS.values(), ids=ANSWERS.keys())
def test_raised_interval_hold_off_and_request_sent(client, case):
    delay, steps, asked, wait = case
    clock = [1.0]
    gate = PolitenessGate(delay / 1000, 1, clock=lambda: clock[0])
    assert gate.try_start("H")
    gate.release("H")
    for at, op, seconds in steps:
        clock[0] = at / 1000
        GATE_OPS[op](gate, "H", seconds)
    assert round(max(gate.ready_at("H") - asked / 1000, 0) * 1000) == wait

    set_cfg(client, delay=delay, per_host=1)
    client.hset(PREFIX + "h:H", "last", 1000)
    # the gate script itself, Redis's TIME replaced by the step's
    gate_at = _PRELUDE + "now = tonumber(ARGV[7])\n" + _GATE[len(_PRELUDE):]
    for seq, (at, op, seconds) in enumerate(steps):
        client.eval(gate_at, 1, PREFIX, op, "w", "0", seq, "H", round(seconds * 1000), at)
    ready = float(lua(client, "return tostring(ready_at(ARGV[1]))", "H"))
    assert max(ready - asked, 0) == wait


# -- the trap limits -----------------------------------------------------------
# (pages a host, query variants a path, pattern depth), [(url, level, verdict)]:
# None = admitted (and counted), else the limit that refused it.
H = "http://h.test"
TRAPS = {
    "a host's pages": ((2, 0, 0), [
        (f"{H}/a", 0, None), (f"{H}/b", 1, None), (f"{H}/c", 1, "host-pages"),
        ("http://other.test/a", 1, None)]),
    "hosts are host:port": ((1, 0, 0), [
        ("http://h.test:8080/", 0, None), ("http://h.test:8081/", 0, None),
        ("http://h.test:8080/x", 1, "host-pages")]),
    "a path's queries": ((0, 2, 0), [
        (f"{H}/s?q=1", 0, None), (f"{H}/s?q=2", 1, None), (f"{H}/s?q=3", 1, "query-variants"),
        (f"{H}/t?q=1", 1, None), (f"{H}/s", 1, None)]),
    "a pattern followed too deep": ((0, 0, 1), [
        (f"{H}/c/1/", 0, None), (f"{H}/c/2/", 1, None), (f"{H}/c/3/", 2, "pattern-depth"),
        (f"{H}/x/", 5, None), (f"{H}/c/4/", 1, None)]),
    "a pattern first seen deep": ((0, 0, 1), [
        (f"{H}/p/7", 2, None), (f"{H}/p/8", 1, None), (f"{H}/p/9", 3, None),
        (f"{H}/p/10", 4, "pattern-depth")]),
    "the host limit is asked first": ((1, 1, 0), [
        (f"{H}/s?q=1", 0, None), (f"{H}/s?q=2", 1, "host-pages")]),
    "the pattern before the query": ((0, 1, 1), [
        (f"{H}/c/1?x=1", 0, None), (f"{H}/c/1?x=2", 2, "pattern-depth")]),
    "a refused URL is not counted": ((2, 0, 1), [
        (f"{H}/c/1/", 0, None), (f"{H}/c/2/", 3, "pattern-depth"), (f"{H}/x", 1, None),
        (f"{H}/y", 1, "host-pages")]),
    "no limits": ((0, 0, 0), [
        (f"{H}/c/{n}/?q={n}", n, None) for n in range(5)]),
}


@pytest.mark.parametrize("case", TRAPS.values(), ids=TRAPS.keys())
def test_trap_limits(client, case):
    (host_cap, query_cap, pattern_cap), steps = case
    # as the single node's wiring makes it (controller.wiring.trap_guard)
    guard = TrapGuard(host_cap, query_cap, host_of=host_key, max_pattern_depth=pattern_cap)
    assert [guard.admit(url, level) for url, level, _ in steps] == [v for *_, v in steps]

    set_cfg(client, delay=0, per_host=1, host_cap=host_cap, query_cap=query_cap,
            pattern_cap=pattern_cap)
    verdicts = [lua(client, "return trap_admit(ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])) or ''",
                    *trap_keys(url), level)
                for url, level, _ in steps]
    assert [v.decode() or None for v in verdicts] == [v for *_, v in steps]


# Seeds pass the trap limits too: a crawl of one machine queues them through
# TrapGuard at level 0, a shared crawl through its create script.
# (pages a host, query variants a path, pattern depth), seeds -> seeds queued.
SEEDS = {
    "a host's pages": ((1, 0, 0), [f"{H}/a", f"{H}/b", "http://o.test/"], [f"{H}/a", "http://o.test/"]),
    "a path's queries": ((0, 1, 0), [f"{H}/s?q=1", f"{H}/s?q=2"], [f"{H}/s?q=1"]),
    "no limits": ((0, 0, 1), [f"{H}/c/1/", f"{H}/c/2/"], [f"{H}/c/1/", f"{H}/c/2/"]),
}


@pytest.mark.parametrize("case", SEEDS.values(), ids=SEEDS.keys())
def test_seeds_pass_the_trap_limits(redis_server, tmp_path, case):
    (host_cap, query_cap, pattern_cap), seeds, queued = case
    config = CrawlConfig(seeds=tuple(seeds), out=tmp_path / "out", max_pages_per_host=host_cap,
                         max_query_variants=query_cap, max_pattern_depth=pattern_cap)
    guard = trap_guard(config)
    assert [seed for seed in config.seeds if guard.admit(seed, 0) is None] == queued

    crawl = SharedCrawl(connect(redis_server.url), "rules")
    assert create(crawl, config)
    client = crawl.client
    entries = [entry.decode().split("\t")
               for key in sorted(client.scan_iter(match=crawl.prefix + "q:0:*"))
               for entry in client.lrange(key, 0, -1)]
    assert sorted(url for *_, url in entries) == sorted(queued)
    assert sorted(int(item_id) for item_id, *_ in entries) == list(range(len(queued)))
    assert client.lrange(crawl.prefix + "flags", 0, -1) == [str(len(queued)).encode()]


# -- level closing -------------------------------------------------------------
# seeds, then pages acknowledged in order as (level, links queued at level + 1)
# -> the design paper's level flags (URLs of levels 0..k, for each open level k).
LEVELS = {
    "one level's seeds done": (1, [(0, 0)], (1,)),
    "a level open while a page is out": (2, [(0, 5)], (2,)),
    "the last page opens the next level": (2, [(0, 3), (0, 0)], (2, 5)),
    "its own links open it": (2, [(0, 0), (0, 1)], (2, 3)),
    "three levels": (1, [(0, 2), (1, 1), (1, 0), (2, 0)], (1, 3, 4)),
    "a finished crawl opens nothing": (1, [(0, 1), (1, 0)], (1, 2)),
    "links to the next level while it waits": (2, [(0, 2), (0, 2), (1, 1), (1, 0), (1, 0)],
                                                 (2, 6)),
}


@pytest.mark.parametrize("case", LEVELS.values(), ids=LEVELS.keys())
def test_level_closing(client, case):
    seeds, pages, flags = case
    levels = Levels()
    for _ in range(seeds):
        levels.add(0)
    for level, links in pages:
        for _ in range(links):
            levels.add(level + 1)
        levels.done(level)
        while levels.open_next():
            pass
    assert levels.flags == flags

    set_cfg(client, delay=0, per_host=1)
    client.hset(PREFIX + "levels", "q:0", seeds)
    client.rpush(PREFIX + "flags", seeds)
    for level, links in pages:
        count_page(client, PREFIX, level, links)
        got = lua(client, "close_levels(); return redis.call('LRANGE', p .. 'flags', 0, -1)")
    assert tuple(int(m) for m in got) == flags


def count_page(client, prefix: str, level: int, links: int) -> None:
    """What a page's acknowledgement counts: its new links at the level below, itself done."""
    client.hincrby(prefix + "levels", f"q:{level + 1}", links)
    client.hincrby(prefix + "levels", f"d:{level}", 1)


@pytest.mark.parametrize("case", LEVELS.values(), ids=LEVELS.keys())
def test_level_closing_over_two_partitions(client, case):
    """The same table, the crawl in two partitions (each holding one copy of
    the case, the second a page behind): SharedCrawl.advance closes a level
    only once both have done it, so the flags are the table's, doubled."""
    seeds, pages, flags = case
    crawl = SharedCrawl(client, "rules", partitions=2)
    for part in crawl.parts:
        client.hset(part.prefix + "cfg", mapping={"lease": 60_000, "max_pages": 0, "parts": 2})
        client.hset(part.prefix + "levels", "q:0", seeds)
        client.rpush(part.prefix + "flags", 2 * seeds)
    for level, links in pages:
        for part in crawl.parts:
            count_page(client, part.prefix, level, links)
            got, finished = crawl.advance()
    assert got == tuple(2 * m for m in flags)
    assert [int(m) for m in client.lrange(crawl.parts[1].prefix + "flags", 0, -1)] == list(got)
    assert finished == (sum(links for _, links in pages) + seeds == len(pages))


# When a shared crawl is finished: its workers read it from every script's
# summary (Lua summary(), Summary.finished), `crawler status` from the keys
# (SharedCrawl.finished). (URLs queued, processed, leased, --max-pages) -> finished.
FINISHED = {
    "every URL acknowledged": (5, 5, 0, 0, True),
    "URLs left": (5, 3, 1, 0, False),
    "the budget spent and acknowledged": (10, 4, 0, 4, True),
    "the budget spent, pages still out": (10, 3, 1, 4, False),
    "under the budget": (10, 3, 0, 4, False),
}


@pytest.mark.parametrize("case", FINISHED.values(), ids=FINISHED.keys())
def test_crawl_finished(client, case):
    queued, processed, leased, max_pages, finished = case
    set_cfg(client, delay=0, per_host=1, max_pages=max_pages)
    client.hset(PREFIX + "state", mapping={"next_id": queued, "processed": processed,
                                           "leased": leased})
    client.rpush(PREFIX + "flags", queued)
    assert SharedCrawl(client, "rules").finished() == finished
    assert Summary.of(lua(client, "return summary()")).finished == finished


# -- the exact-content verdict ---------------------------------------------------
# pages judged in order as (id, text) -> the id each is a duplicate of (first id wins).
CONTENTS = {
    "a copy of the first": ([(0, "a"), (1, "b"), (2, "a")], [None, None, 0]),
    "the first judged wins, not the smallest id": ([(5, "x"), (3, "x"), (4, "x")], [None, 5, 5]),
    "white space as compared": ([(0, "a  b\n"), (1, " a b")], [None, 0]),
    "pages without text are no copies": ([(0, ""), (1, "  "), (2, "t"), (3, "")],
                                         [None, None, None, None]),
}


@pytest.mark.parametrize("case", CONTENTS.values(), ids=CONTENTS.keys())
def test_exact_content(client, case):
    pages, duplicates = case
    seen = ContentSeen(near=False)
    assert [seen.check(page_id, text_md5(text), None).duplicate_of
            for page_id, text in pages] == duplicates

    # What a worker sends with its acknowledgement (controller/commit.py).
    # (the verdicts a call gives are written at its end: offers_written)
    ask = "local first = content_first(ARGV[1], ARGV[2]); offers_written(); return first"
    firsts = [lua(client, ask, exact_key(text_md5(text)), page_id) for page_id, text in pages]
    assert [None if first < 0 else first for first in firsts] == duplicates


# -- the URL fingerprint's seen-set layout ----------------------------------------
# normalized URL -> "BUCKET:INTEGER": the 64-bit integer kept in set seen:BUCKET
# (fixed: a crawl's seen-set in Redis outlives the workers that filled it).
FINGERPRINTS = {
    "a root": ("http://a.test/", "40977:392543177127010321"),
    "a negative integer": ("http://a.test/1", "29688:-2261794975859051528"),
    "a port and a query": ("http://b.test:8080/x?q=1", "19764:125358485646495028"),
    "not ASCII": ("https://\u00e9x.test/caf\u00e9", "16333:-8609993353368027187"),
}


@pytest.mark.parametrize("case", FINGERPRINTS.values(), ids=FINGERPRINTS.keys())
def test_url_fingerprint(client, case):
    url, expected = case
    assert fingerprint(url) == expected
    bucket, member = expected.split(":")

    key, kept = lua(client, "return {seen_key(ARGV[1])}", fingerprint(url))
    assert (key.decode(), int(kept)) == (f"{PREFIX}seen:{bucket}", int(member))
    assert lua(client, "return {seen_add(ARGV[1]), seen_add(ARGV[1])}", fingerprint(url)) == [1, 0]
    assert client.smembers(f"{PREFIX}seen:{bucket}") == {member.encode()}
    assert client.object("encoding", f"{PREFIX}seen:{bucket}") == b"intset"


# -- the host -> partition hash ---------------------------------------------------
# Computed by Python alone (each script is given one partition's keys), by
# every worker alike, and fixed: a crawl's partitions outlive the workers
# that filled them. host -> its partition among 1, 2, 3 and 6.
PARTITIONS = {
    "a loopback host": ("127.0.0.1:80", [0, 0, 2, 2]),
    "a name": ("a.test:80", [0, 1, 0, 3]),
    "another name": ("c.test:80", [0, 1, 2, 5]),
    "an IDN, as its host key has it": ("xn--x-9ea.test:443", [0, 1, 1, 1]),
}


@pytest.mark.parametrize("case", PARTITIONS.values(), ids=PARTITIONS.keys())
def test_host_partition(case):
    host, parts = case
    assert [partition_of(host, count) for count in (1, 2, 3, 6)] == parts


# -- aco's priority of a link, shared --------------------------------------------
# A page of level L and relevance C (--order aco, --order-param as given) links
# to a new URL by an anchor of relevance A -> the URL's priority (the log of
# tau^alpha * eta^beta), as the crawl of one machine ranks it
# (urllist.orders.Aco.priority) and as the shared crawl's Lua does from the
# terms the worker sends with the link (Aco.shared_terms, Lua opriority).
ACO_PRIORITIES = {
    "a relevant page at level 1": ({}, 1, 0.5, 0.5, -0.98083),
    "deeper, a smaller deposit": ({}, 3, 0.6, 0.0, -2.22562),
    "nothing relevant: eta's floor": ({}, 2, 0.0, 0.0, -27.63102),
    "a seed's page deposits as level 1's": ({}, 0, 0.4, 0.2, -2.07147),
    "alpha, beta, tau0 and the link weights": ({"alpha": "2", "beta": "1", "tau0": "0.5",
                                                "h1": "1", "h2": "0"}, 1, 0.5, 0.8, -0.22314),
}


class Ready:
    """Every host ready now: the one machine's frontier's view of politeness."""
    def ready_at(self, host):
        return 0.0

    def try_start(self, host, now):
        return True


@pytest.mark.parametrize("case", ACO_PRIORITIES.values(), ids=ACO_PRIORITIES.keys())
def test_aco_priority_of_a_link(client, case):
    from urllist.ordered import OrderedFrontier
    from urllist.orders import Aco
    from urllist.queued import QueuedUrl
    params, level, relevance, anchor, priority = case
    order = Aco(params)
    frontier = OrderedFrontier(lambda url: url.split("/")[2], Ready(), order)
    order.bind(frontier)
    seed = [QueuedUrl(0, "http://a/", 0, None)] if level else []   # the page's parent
    page = QueuedUrl(len(seed), "http://a/p", level, 0 if level else None)
    link = QueuedUrl(page.id + 1, "http://b/l", level + 1, page.id)
    frontier.push([*seed, page, link])
    order.page(page, [link.id], [anchor], relevance)
    assert order.priority(link.id) == pytest.approx(priority, abs=1e-5)

    (add, best, aux), = order.shared_terms([link.url], [anchor], relevance, (0.0, 0.0, 0.0), level)
    set_cfg(client, delay=0, per_host=1, order=1, order_c=0)
    entry = f"{link.id}\t{link.level}\t{page.id}\tb\t{link.url}"
    got = lua(client, "return tostring(opriority(split(ARGV[1]), ARGV[2]))", entry,
              f"{add!r}\t{best!r}\t{aux!r}")
    assert float(got) == pytest.approx(priority, abs=1e-5)


# -- aco's exploring draw --------------------------------------------------------
# The candidates' log weights and a uniform u in [0, 1) -> the index drawn in
# proportion to the weights: urllist.orders.proportional_pick (the crawl of one
# machine, as random.choices draws) and the Lua opick (the shared crawl's lease).
PICKS = {
    "u within the first share": ([0.0, 0.0], 0.3, 0),
    "u past the first share": ([0.0, 0.0], 0.7, 1),
    "u on a boundary goes past it": ([0.0, 0.0], 0.5, 1),
    "a heavier second": ([0.0, math.log(3)], 0.3, 1),
    "three": ([0.0, math.log(2), 0.0], 0.5, 1),
    "the last share": ([0.0, math.log(2), 0.0], 0.9, 2),
    "a seed's priority leaves the others nothing": ([1e9, 0.0], 0.999, 0),
}


@pytest.mark.parametrize("case", PICKS.values(), ids=PICKS.keys())
def test_aco_exploring_draw(client, case):
    import random

    from urllist.orders import proportional_pick
    logs, u, index = case

    class Fixed(random.Random):
        def random(self):
            return u

    top = max(logs)
    assert Fixed().choices(range(len(logs)), weights=[math.exp(x - top) for x in logs])[0] == index
    assert proportional_pick(logs, u) == index
    script = "local logs = {} for i = 2, #ARGV do logs[i - 1] = tonumber(ARGV[i]) end " \
             "return opick(logs, tonumber(ARGV[1])) - 1"
    assert lua(client, script, repr(u), *map(repr, logs)) == index

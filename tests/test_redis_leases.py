"""The shared crawl's leases in a real redis-server, one script call at a
time (no HTTP: host keys are only names here): a worker taken for dead
changes nothing afterwards, a retried call after a lost reply is answered
as the first one was, and a reclaimed lease takes back what its redirect
marks counted."""
import time

import pytest

from getpage.politeness import Cancelled
from urllist.redisqueue import (CHAIN_URLS, RedisFrontier, RedisGate, SharedCrawl, WorkerFenced,
                                connect, fingerprint)

A, B = "127.0.0.1:8001", "127.0.0.1:8002"   # two hosts' keys


def crawl_of(redis_server, *, per_host=1, host_cap=0, seeds=((A, "/1"), (B, "/1")), delay=0.0):
    shared = SharedCrawl(connect(redis_server.url), "leases")
    assert shared.create({}, [(f"http://{h}{path}", h, "", "") for h, path in seeds], delay=delay,
                         per_host=per_host, max_pages=0, host_cap=host_cap, query_cap=0)
    return shared


def joined(shared, worker, delay=0.0):
    gate = RedisGate(shared, worker, Cancelled)
    frontier = RedisFrontier(shared, gate, threads=4, delay=delay)
    frontier.join()
    frontier._beat.set()     # no renewals in the background: the test says who falls silent
    frontier._heart.join()
    return gate, frontier


def fl(shared, host):
    """The host's requests in flight, as every worker's gate sees it."""
    return int(shared.client.hget(shared.prefix + f"h:{host}", "fl") or 0)


def taken_for_dead(shared, worker):
    """As if the worker's renewals had stopped long ago: its deadline is past."""
    shared.client.zadd(shared.prefix + "workers", {worker: 0})


def test_a_worker_taken_for_dead_changes_nothing_afterwards(redis_server):
    shared = crawl_of(redis_server)
    gate_w, slow = joined(shared, "slow")
    held = slow.pop(2, gate_w.clock())
    assert sorted(i.url for i in held) == [f"http://{A}/1", f"http://{B}/1"]
    assert slow.mark_seen(held[0].id, f"http://{A}/moved", A, "", "") == 1
    taken_for_dead(shared, "slow")
    gate_o, other = joined(shared, "other")
    again = other.pop(2, gate_o.clock())   # its join reclaimed the slow worker's
    assert sorted(i.id for i in again) == sorted(i.id for i in held)
    assert (fl(shared, A), fl(shared, B)) == (1, 1)   # the other worker's slots now

    # A page's slot goes back with the worker's next call: refused there.
    for late in (lambda: (gate_w.release(A), slow.pop(0, gate_w.clock())),
                 lambda: slow.commit(held[0], "", [(f"http://{A}/2", A, "", "")], True, {}),
                 lambda: slow.mark_seen(held[1].id, f"http://{B}/moved", B, "", ""),
                 lambda: slow.pop(1, gate_w.clock()),
                 slow.leave):
        with pytest.raises(WorkerFenced, match="taken for dead"):
            late()
    assert (fl(shared, A), fl(shared, B)) == (1, 1)   # its release did not free the other's slot
    status = shared.status()
    assert (status["processed"], status["queue_total"], status["leased"]) == (0, 2, 2)
    assert [w["worker"] for w in status["workers"]] == ["other"]
    # The slow worker's redirect mark left with its lease: the target is new again.
    assert other.mark_seen(held[0].id, f"http://{A}/moved", A, "", "") == 1
    assert other.commit(again[0], "", [], True, {}).accepted


def test_a_process_joining_under_a_running_workers_id_fences_the_first(redis_server):
    shared = crawl_of(redis_server)
    gate_1, first = joined(shared, "same-id")
    first.pop(1, gate_1.clock())
    gate_2, second = joined(shared, "same-id")   # what it held went back at once
    assert len(second.pop(2, gate_2.clock())) == 2
    with pytest.raises(WorkerFenced):
        first.pop(1, gate_1.clock())


def test_a_retried_gate_call_takes_or_gives_one_slot(redis_server):
    shared = crawl_of(redis_server, per_host=2, seeds=((A, "/1"), (A, "/2")))
    gate, frontier = joined(shared, "w")
    frontier.pop(2, gate.clock())
    assert fl(shared, A) == 2
    member = gate.member
    # The same call sent twice is what SharedCrawl.call does when the reply was lost.
    assert [member.gate("release", 1000, A, 0) for _ in range(2)] == [1, 1]
    assert fl(shared, A) == 1
    assert [member.gate("start", 1001, A, 0) for _ in range(2)] == [0, 0]
    assert fl(shared, A) == 2
    assert member.gate("release", 1002, A, 0) == 1 and fl(shared, A) == 1


def trap_count(shared, host):
    return int(shared.client.hget(shared.prefix + "trap:host", host) or 0)


def test_redirect_marks_answer_retries_alike_and_a_reclaim_takes_their_counts_back(redis_server):
    shared = crawl_of(redis_server, host_cap=2, seeds=((A, "/1"),))
    gate, slow = joined(shared, "slow")
    (item,) = slow.pop(1, gate.clock())
    first, second = f"http://{B}/x", f"http://{B}/y"
    answers = [slow.mark_seen(item.id, url, B, "", "") for url in (first, second, second, first)]
    assert answers == [1, 1, 1, 1] and trap_count(shared, B) == 2
    third = f"http://{B}/z"
    assert [slow.mark_seen(item.id, third, B, "", "") for _ in range(2)] == [2, 2]   # B is full
    assert trap_count(shared, B) == 2
    taken_for_dead(shared, "slow")
    gate_o, other = joined(shared, "other")
    (again,) = other.pop(1, gate_o.clock())
    assert again.id == item.id
    assert trap_count(shared, B) == 0   # as if the slow worker's fetch had never happened
    for url in (first, second, third):
        seen_key, member = fingerprint(url).split(":")
        assert not shared.client.sismember(shared.prefix + f"seen:{seen_key}", member)
    assert [other.mark_seen(again.id, url, B, "", "") for url in (first, second, third)] == [1, 1, 2]


def test_robots_is_loaded_by_one_worker_while_it_lives(redis_server):
    from urllist.redisqueue import RobotsStore
    shared = crawl_of(redis_server)
    joined(shared, "loader")
    joined(shared, "waiter")
    loader, waiter = RobotsStore(shared, "loader"), RobotsStore(shared, "waiter")
    origin = f"http://{A}"
    assert loader.claim(origin) and loader.claim(origin)
    assert not waiter.claim(origin)   # however long the load takes, while the loader lives
    taken_for_dead(shared, "loader")
    assert waiter.claim(origin) and not loader.claim(origin)
    waiter.put(origin, {"status": 404})
    assert loader.get(origin) == {"status": 404}


def test_redis_forgets_a_committed_row_only_after_the_worker_synced_it(redis_server):
    shared = crawl_of(redis_server, seeds=((A, "/1"),))
    rows_key = shared.prefix + "rows:w"
    kept_at_sync = []
    gate = RedisGate(shared, "w", Cancelled)
    frontier = RedisFrontier(shared, gate, threads=4,
                             sync_rows=lambda: kept_at_sync.append(shared.client.hkeys(rows_key)))
    frontier.join()
    frontier._beat.set()     # the test makes the ticks
    frontier._heart.join()
    (item,) = frontier.pop(1, gate.clock())
    assert frontier.commit(item, "", [], True, {"id": item.id}).accepted
    frontier.written(item.id)
    assert shared.client.hkeys(rows_key) == [str(item.id).encode()]
    frontier.tick()   # the next tick carries the confirmation
    assert kept_at_sync == [[str(item.id).encode()]]   # synced while Redis still had it
    assert shared.client.hkeys(rows_key) == []
    frontier.leave()


def test_a_worker_back_from_a_long_silence_asks_before_sending(redis_server):
    """A slot reserved before the worker was taken for dead is not used."""
    shared = crawl_of(redis_server)
    gate, slow = joined(shared, "slow")
    slow.pop(1, gate.clock())
    gate.started(A)   # just heard from Redis: no question asked
    taken_for_dead(shared, "slow")
    gate_o, other = joined(shared, "other")
    other.pop(2, gate_o.clock())
    gate.member.last_reply -= gate.member.lease_seconds   # as if stopped that long
    with pytest.raises(WorkerFenced):
        gate.started(A)


def test_the_pattern_rule_counts_levels_in_redis_as_the_local_guard_does(redis_server):
    """Under --max-pattern-depth 1, a pattern first queued at level 0 (the seed
    /c/1/) may reach level 1, not level 2: the shared crawl refuses as
    urlfilter.TrapGuard does, says which pattern it cut, and judges a
    redirect target at its source's level."""
    shared = SharedCrawl(connect(redis_server.url), "patterns")
    pattern = f"{A}/c/<n>/"
    assert shared.create({}, [(f"http://{A}/c/1/", A, "", pattern), (f"http://{A}/x/", A, "", "")],
                         delay=0, per_host=2, max_pages=0, host_cap=0, query_cap=0, pattern_cap=1)
    gate, frontier = joined(shared, "w")

    def page(links, expected_level):
        (item,) = frontier.pop(1, gate.clock())
        assert item.level == expected_level
        commit = frontier.commit(item, "", [(url, A, "", pat) for url, pat in links], True, {})
        gate.release(A)
        return item, commit

    page([(f"http://{A}/c/2/", pattern)], 0)                # /c/1/
    page([(f"http://{A}/y/", "")], 0)                        # /x/
    (item,) = frontier.pop(1, gate.clock())                  # /c/2/ at level 1
    assert item.url == f"http://{A}/c/2/"
    assert frontier.mark_seen(item.id, f"http://{A}/c/20/", A, "", pattern) == 1
    commit = frontier.commit(item, "", [(f"http://{A}/c/3/", A, "", pattern)], True, {})
    gate.release(A)
    assert (commit.new_count, commit.skipped["pattern-depth"], commit.cut) == (0, 1, (pattern,))
    item, commit = page([(f"http://{A}/z/", "")], 1)        # /y/
    assert (commit.new_count, commit.cut) == (1, ())
    (item,) = frontier.pop(1, gate.clock())                  # /z/ at level 2
    assert (item.url, item.level) == (f"http://{A}/z/", 2)
    assert frontier.mark_seen(item.id, f"http://{A}/c/30/", A, "", pattern) == 2
    assert frontier.mark_seen(item.id, f"http://{A}/d/30/", A, "", f"{A}/d/<n>/") == 1
    frontier.leave()


def script_calls(shared):
    stats = shared.client.info("commandstats")
    return sum(stats.get(f"cmdstat_{name}", {}).get("calls", 0) for name in ("evalsha", "eval"))


def test_a_chain_of_one_hosts_urls_shares_one_slot_and_one_acknowledgement(redis_server):
    """A host with one slot and no interval leases several URLs to one worker
    under its one slot: fetched one after another, passed on locally, no
    other worker's request between, and acknowledged in one call."""
    shared = crawl_of(redis_server, seeds=[(A, f"/{i}") for i in range(1, 5)])
    gate, worker = joined(shared, "w")
    gate_o, other = joined(shared, "other")
    (first,) = worker.pop(4, gate.clock())   # one at a time: the others wait behind it
    assert first.url == f"http://{A}/1"
    assert (fl(shared, A), shared.status()["leased"]) == (1, 4)
    assert other.pop(4, gate_o.clock()) == []
    heard, fetched = [], [first]
    for n in range(2, 5):
        calls = script_calls(shared)
        gate.release(A)   # its request ended: the slot passes to the chain's next URL
        (item,) = worker.pop(4, gate.clock())
        assert item.url == f"http://{A}/{n}" and fl(shared, A) == 1
        assert worker.commit(fetched[-1], "", [], True, {}, then=heard.append) is None
        assert worker.pop(4, gate.clock()) == []   # the chain goes on: held back still
        assert heard == [] and script_calls(shared) == calls
        fetched.append(item)
    assert other.pop(4, gate_o.clock()) == []
    gate.release(A)   # the chain's last request ended
    calls = script_calls(shared)
    worker.commit(fetched[-1], "", [], True, {}, then=heard.append)
    assert heard == []   # until the loop's next turn: pages ending in this one go with it
    assert worker.pop(4, gate.clock()) == []
    assert script_calls(shared) == calls + 1   # four pages, one call (the slot back with them)
    assert [c.accepted for c in heard] == [True] * 4
    assert (fl(shared, A), shared.status()["processed"], shared.status()["leased"]) == (0, 4, 0)


def test_a_dead_workers_chain_goes_back_whole(redis_server):
    shared = crawl_of(redis_server, seeds=[(A, f"/{i}") for i in range(1, 4)])
    gate, worker = joined(shared, "w")
    worker.pop(4, gate.clock())
    taken_for_dead(shared, "w")
    gate_o, other = joined(shared, "other")
    (item,) = other.pop(4, gate_o.clock())   # back at the head of A's queue, in no set order
    assert fl(shared, A) == 1 and shared.status()["leased"] == 3   # the other worker's chain now
    gate_o.release(A)
    assert len(other.pop(4, gate_o.clock())) == 1
    assert shared.client.llen(shared.prefix + f"q:0:{A}") == 0


def test_a_chain_runs_past_the_free_threads_and_a_dead_workers_goes_back_whole(redis_server):
    """A host of one slot and no interval leases a worker of 4 threads a
    chain of CHAIN_URLS of its URLs in one call (they go one after another
    whoever holds the slot); a dead worker's chain is leased again whole."""
    shared = crawl_of(redis_server, seeds=[(A, f"/{i}") for i in range(1, 21)])
    queued = shared.prefix + f"q:0:{A}"
    gate, worker = joined(shared, "w")
    (first,) = worker.pop(4, gate.clock())
    assert (shared.status()["leased"], shared.client.llen(queued)) == (CHAIN_URLS, 20 - CHAIN_URLS)
    assert fl(shared, A) == 1
    taken_for_dead(shared, "w")
    gate_o, other = joined(shared, "other")
    assert len(other.pop(4, gate_o.clock())) == 1
    assert (shared.status()["leased"], shared.client.llen(queued)) == (CHAIN_URLS, 20 - CHAIN_URLS)
    assert fl(shared, A) == 1


def test_an_idle_worker_does_not_poll_for_a_host_whose_open_level_goes_first(redis_server):
    """A host's URL of the next level waits behind its URLs of the open
    level: a worker that may not fetch ahead, finding nothing to lease, is
    not told to ask again at once (it would ask on every turn of its loop)."""
    shared = crawl_of(redis_server, seeds=[(A, f"/{i}") for i in range(1, 21)])
    gate, worker = joined(shared, "w")
    (first,) = worker.pop(4, gate.clock())   # a chain; A's other level-0 URLs stay queued
    worker.commit(first, "", [(f"http://{A}/next", A, "", "")], True, {})   # level 1, behind them
    gate_o, other = joined(shared, "other")
    assert other.pop(4, gate_o.clock()) == []   # A's one slot is the chain's
    calls = script_calls(shared)
    for _ in range(3):
        assert other.pop(4, gate_o.clock()) == []
    assert script_calls(shared) == calls


def test_pages_of_different_hosts_done_in_one_turn_are_acknowledged_in_one_call(redis_server):
    shared = crawl_of(redis_server)
    gate, worker = joined(shared, "w")
    items = worker.pop(2, gate.clock())
    heard = []
    for item, host in zip(sorted(items, key=lambda i: i.url), (A, B)):
        gate.release(host)
        worker.commit(item, "", [(f"http://{host}/2", host, "", "")], True, {}, then=heard.append)
    calls = script_calls(shared)
    assert heard == [] and len(worker.pop(2, gate.clock())) == 2   # the children, leased in the same call
    assert script_calls(shared) == calls + 1
    assert [c.new_count for c in heard] == [1, 1]
    assert (fl(shared, A), fl(shared, B), shared.status()["processed"]) == (1, 1, 2)


def test_a_slot_given_back_late_counts_the_hosts_interval_from_its_request_end(redis_server):
    shared = crawl_of(redis_server, seeds=((A, "/1"), (A, "/2")), delay=1.0)
    gate, frontier = joined(shared, "w", delay=1.0)
    (item,) = frontier.pop(1, gate.clock())
    gate.release(A)   # its request ended: the slot waits for the page's acknowledgement
    assert frontier.pop(0, gate.clock()) == [] and fl(shared, A) == 1   # no call for it alone yet
    time.sleep(0.4)   # the acknowledgement is late (a slow parse): the slot may wait no longer
    frontier.pop(0, gate.clock())
    assert fl(shared, A) == 0
    seconds, micro = shared.client.time()
    now_ms = seconds * 1000 + micro // 1000
    last = int(shared.client.hget(shared.prefix + f"h:{A}", "last"))
    # from the request's end (plus the call's transit), not from the give-back
    assert now_ms - 2000 < last <= now_ms - 390


def test_a_slot_waiting_to_go_back_when_a_reply_is_lost_counts_the_hosts_interval(redis_server):
    """Redis goes away while a page's slot waits to go back with its
    acknowledgement; the tick that finds it gone is tried again (a lost
    reply), so the next sync first puts right what Redis holds for the
    worker (resync). The waiting slot still goes back from its request's
    end: the host's next URL waits out the delay."""
    import threading

    shared = crawl_of(redis_server, seeds=((A, "/1"), (A, "/2")), delay=5.0)
    gate, frontier = joined(shared, "w", delay=5.0)
    (item,) = frontier.pop(2, gate.clock())
    gate.release(A)   # its request ended: the slot waits for the page's acknowledgement
    redis_server.kill()
    ticking = threading.Thread(target=frontier.tick)
    ticking.start()
    deadline = time.monotonic() + 30
    while shared.lost_replies == 0 and time.monotonic() < deadline:
        time.sleep(0.01)   # until the tick has found Redis gone
    redis_server.start()
    ticking.join()
    assert shared.lost_replies > 0
    assert frontier.commit(item, "", [], True, {}).accepted
    assert frontier.pop(2, gate.clock()) == []   # /2 waits for the delay after /1's end
    assert fl(shared, A) == 0
    last = shared.client.hget(shared.prefix + f"h:{A}", "last")
    seconds, micro = shared.client.time()
    assert last is not None and int(last) > seconds * 1000 + micro // 1000 - 5000


def test_the_hosts_one_pace_is_decided_by_whichever_worker_saw_the_answer(redis_server):
    from getpage.pacing import AdaptivePolicy, Observation
    shared = crawl_of(redis_server, per_host=4, seeds=((A, "/1"),))
    gates = []
    for worker in ("w1", "w2"):
        gate, _ = joined(shared, worker)
        gate.policy = AdaptivePolicy(0, 60, per_host=4)
        gates.append(gate)
    record = lambda: shared.client.hmget(shared.prefix + f"h:{A}", "iv", "win", "pv")  # noqa: E731
    gates[0].acquire(A)   # one slot, all of its window of one, in flight
    for _ in range(2):   # calm answers on a full window: it grows, one write (a version)
        gates[0].answered(A, Observation(0.02, 200))
    assert record() == [b"0", b"2", b"1"]
    calls = script_calls(shared)
    gates[0].answered(A, Observation(0.02, 200))   # nothing moved: no call
    assert script_calls(shared) == calls
    # w2, which knew nothing of it, sees a 503: decided from the record as w1 left it
    gates[1].answered(A, Observation(0.01, 503))
    assert record() == [b"100", b"1", b"2"]
    assert gates[1].paces()[A]["window"] == 1 and gates[1].paces()[A]["errors"] == 1
    # the robots.txt floor holds whoever decides
    gates[0].raise_interval(A, 2.0)
    gates[1].answered(A, Observation(0.02, 200))
    assert record()[0] == b"2000"

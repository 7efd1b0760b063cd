"""The per-host politeness gate: unit tests on a fake clock, and real servers
that record when requests arrive and how many are in flight at once."""
import threading
import time as real_time

import pytest
from getpage_stub import FakeTime, StubServer, local_config, page, send

from controller import wiring
from controller.config import CrawlConfig
from controller.engine import Crawl
from getpage import Fetcher
from getpage.politeness import Cancelled, PolitenessGate, host_key

UA = "BfsBot/0.1"
# Arrival times at the server carry the client's send latency, which differs
# between a request that opens a connection and one that reuses it by well
# under a millisecond on loopback; the gate itself is exact on its clock.
LATENCY_SLACK = 0.01




def test_second_request_to_a_host_waits_the_delay():
    time = FakeTime(100.0)
    gate = PolitenessGate(1.5, 1, clock=time.clock, sleep=time.sleep)
    gate.acquire("a:80")
    gate.release("a:80")
    time.now += 0.5  # the first response took half a second
    gate.acquire("a:80")
    assert time.sleeps == [pytest.approx(1.0)]
    gate.release("a:80")


def test_no_wait_once_the_delay_has_passed():
    time = FakeTime(100.0)
    gate = PolitenessGate(1.0, 1, clock=time.clock, sleep=time.sleep)
    with gate.hold("a:80"):
        pass
    time.now += 2.0
    with gate.hold("a:80"):
        pass
    assert time.sleeps == []


def test_different_hosts_do_not_wait_for_each_other():
    time = FakeTime(100.0)
    gate = PolitenessGate(5.0, 1, clock=time.clock, sleep=time.sleep)
    for host in ("a:80", "b:80", "c:443"):
        gate.acquire(host)  # all held at once
    assert time.sleeps == []


def test_interval_can_be_raised_but_not_lowered():
    time = FakeTime(100.0)
    gate = PolitenessGate(1.0, 1, clock=time.clock, sleep=time.sleep)
    gate.raise_interval("a:80", 3.0)
    gate.raise_interval("a:80", 0.5)
    assert gate.interval("a:80") == 3.0
    assert gate.interval("b:80") == 1.0
    with gate.hold("a:80"):
        pass
    with gate.hold("a:80"):
        pass
    with gate.hold("b:80"):
        pass
    with gate.hold("b:80"):
        pass
    assert time.sleeps == [pytest.approx(3.0), pytest.approx(1.0)]


def test_per_host_limit_blocks_the_next_caller_until_a_release():
    time = FakeTime(100.0)
    gate = PolitenessGate(0.0, 2, clock=time.clock, sleep=time.sleep)
    gate.acquire("a:80")
    gate.acquire("a:80")
    third_in = threading.Event()

    def third():
        gate.acquire("a:80")
        third_in.set()

    thread = threading.Thread(target=third)
    thread.start()
    assert not third_in.wait(0.2)  # blocked while two are in flight
    gate.acquire("b:80")  # another host is not blocked meanwhile
    gate.release("a:80")
    assert third_in.wait(5)
    thread.join(5)


def test_release_without_acquire_is_a_bug():
    gate = PolitenessGate(0.0, 1)
    with pytest.raises(RuntimeError):
        gate.release("a:80")
    with gate.hold("a:80"):
        pass
    with pytest.raises(RuntimeError):
        gate.release("a:80")


def test_bad_settings_are_rejected():
    with pytest.raises(ValueError):
        PolitenessGate(-1, 1)
    with pytest.raises(ValueError):
        PolitenessGate(0, 0)


@pytest.mark.parametrize("url, key", [
    ("http://Example.com/a", "example.com:80"),
    ("https://example.com/a", "example.com:443"),
    ("http://example.com:8080/a", "example.com:8080"),
    ("http://user:pw@example.com/", "example.com:80"),
    ("http://example.com:0/", "example.com:0"),   # not the default port's slot
])
def test_host_key(url, key):
    assert host_key(url) == key


# -- against a real server ---------------------------------------------------


@pytest.fixture
def server():
    stub = StubServer()
    for n in range(6):
        stub.routes[f"/p{n}"] = page(f"<html>{n}</html>")
    yield stub
    stub.close()


def gaps(server):
    times = [request.at for request in server.received]
    return [later - earlier for earlier, later in zip(times, times[1:])]


def test_requests_to_one_host_start_at_least_delay_apart(server):
    with Fetcher(local_config(UA, delay=0.2)) as fetcher:
        results = [fetcher.fetch(server.url(f"/p{n}")) for n in range(3)]
    assert all(result.ok for result in results)
    assert server.paths() == ["/robots.txt", "/p0", "/p1", "/p2"]
    assert all(gap >= 0.2 - LATENCY_SLACK for gap in gaps(server)), gaps(server)


def test_concurrent_workers_are_spaced_too(server):
    with Fetcher(local_config(UA, delay=0.15, per_host=3)) as fetcher:
        threads = [threading.Thread(target=fetcher.fetch, args=(server.url(f"/p{n}"),))
                   for n in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(10)
    assert len(server.received) == 5
    assert all(gap >= 0.15 - LATENCY_SLACK for gap in gaps(server)), gaps(server)


def test_crawl_delay_raises_the_interval(server):
    server.routes["/robots.txt"] = page("User-agent: *\nCrawl-delay: 0.3\n", "text/plain")
    with Fetcher(local_config(UA, delay=0.05)) as fetcher:
        for n in range(2):
            assert fetcher.fetch(server.url(f"/p{n}")).ok
        assert fetcher.robots_delay(server.url("/")) == 0.3
    assert all(gap >= 0.3 - LATENCY_SLACK for gap in gaps(server)), gaps(server)


class HeldRequests:
    """A route that holds every request until released, counting those inside."""

    def __init__(self, expect_inside):
        self.lock = threading.Lock()
        self.inside = 0
        self.most_inside = 0
        self.arrivals = 0
        self.reached = threading.Event()
        self.more = threading.Event()
        self.release = threading.Event()
        self.expect_inside = expect_inside

    def __call__(self, handler):
        with self.lock:
            self.inside += 1
            self.arrivals += 1
            self.most_inside = max(self.most_inside, self.inside)
            if self.inside == self.expect_inside:
                self.reached.set()
            if self.inside > self.expect_inside:
                self.more.set()
        self.release.wait(10)
        with self.lock:
            self.inside -= 1
        send(handler, 200, b"<html>held</html>", {"Content-Type": "text/html"})


def test_per_host_2_allows_two_requests_in_flight_but_not_three(server):
    held = HeldRequests(expect_inside=2)
    for n in range(3):
        server.routes[f"/h{n}"] = held
    config = local_config(UA, delay=0, per_host=2, obey_robots=False, timeout=15)
    with Fetcher(config) as fetcher:
        threads = [threading.Thread(target=fetcher.fetch, args=(server.url(f"/h{n}"),))
                   for n in range(3)]
        for thread in threads:
            thread.start()
        assert held.reached.wait(5), "two requests should be in flight together"
        assert not held.more.wait(0.3), "a third request got past the gate"
        held.release.set()
        for thread in threads:
            thread.join(10)
    assert held.arrivals == 3
    assert held.most_inside == 2


def test_a_held_host_does_not_block_another_host(server):
    held = HeldRequests(expect_inside=1)
    server.routes["/held"] = held
    other = StubServer()
    other.routes["/fast"] = page("<html>fast</html>")
    config = local_config(UA, delay=0, per_host=1, obey_robots=False, timeout=15)
    try:
        with Fetcher(config) as fetcher:
            thread = threading.Thread(target=fetcher.fetch, args=(server.url("/held"),))
            thread.start()
            assert held.reached.wait(5)
            assert fetcher.fetch(other.url("/fast")).ok  # completes while /held is in flight
            assert held.inside == 1
            held.release.set()
            thread.join(10)
    finally:
        other.close()


def test_hold_off_delays_the_next_request_to_that_host_only():
    time = FakeTime(100.0)
    gate = PolitenessGate(0.0, 1, clock=time.clock, sleep=time.sleep)
    gate.hold_off("a:80", 5.0)
    with gate.hold("b:80"):
        pass
    assert time.sleeps == []
    with gate.hold("a:80"):
        pass
    assert time.sleeps == [pytest.approx(5.0)]


def test_a_host_may_be_handed_out_a_lead_early_and_its_request_is_held_until_its_time():
    time = FakeTime(100.0)
    gate = PolitenessGate(1.0, 1, clock=time.clock, sleep=time.sleep, lead=0.01)
    assert gate.try_start("a:80") and gate.started("a:80") == 0.0   # the first: no wait
    gate.release("a:80")
    assert gate.ready_at("a:80") == pytest.approx(100.99)   # its time, 101.0, less the lead
    time.now = 100.985
    assert not gate.try_start("a:80", time.now)              # earlier than the lead
    time.now = 100.992
    assert not gate.try_start("a:80")   # a fetch that sends at once gets no lead
    assert gate.try_start("a:80", time.now)
    time.now = 100.995                                       # the request is built meanwhile
    assert gate.started("a:80") == pytest.approx(0.005)      # held until 101.0
    gate.release("a:80")
    assert gate.ready_at("a:80") == pytest.approx(101.99)    # a delay from its time
    time.now = 103.0                                         # handed out late: no hold
    assert gate.try_start("a:80", time.now) and gate.started("a:80") == 0.0


def test_a_host_of_two_slots_gets_no_lead():
    """Its second slot could be taken before the first request is held:
    both would then be held until the same, later, time."""
    time = FakeTime(100.0)
    gate = PolitenessGate(1.0, 2, clock=time.clock, sleep=time.sleep, lead=0.01)
    assert gate.try_start("a:80", time.now)
    assert gate.ready_at("a:80") == pytest.approx(101.0)
    time.now = 100.995
    assert not gate.try_start("a:80", time.now)


def test_the_interval_counts_from_the_first_byte_of_the_answer():
    time = FakeTime(100.0)
    gate = PolitenessGate(1.0, 1, clock=time.clock, sleep=time.sleep)
    gate.acquire("a:80")
    time.now = 100.5                   # its head parsed, half a second after the first byte
    gate.answered("a:80", at=100.2)
    gate.release("a:80")
    assert gate.ready_at("a:80") == pytest.approx(101.2)
    gate.acquire("a:80")
    time.now = 101.5
    gate.answered("a:80", at=102.0)    # never later than now
    gate.release("a:80")
    assert gate.ready_at("a:80") == pytest.approx(102.5)


def test_hold_off_only_ever_gets_longer():
    time = FakeTime(100.0)
    gate = PolitenessGate(0.0, 1, clock=time.clock, sleep=time.sleep)
    gate.hold_off("a:80", 5.0)
    gate.hold_off("a:80", 1.0)
    gate.acquire("a:80")
    assert time.sleeps == [pytest.approx(5.0)]


def test_hold_off_and_interval_the_later_wins():
    time = FakeTime(100.0)
    gate = PolitenessGate(3.0, 1, clock=time.clock, sleep=time.sleep)
    with gate.hold("a:80"):
        pass
    gate.hold_off("a:80", 1.0)  # ends before the interval does
    with gate.hold("a:80"):
        pass
    gate.hold_off("a:80", 10.0)  # ends after it
    with gate.hold("a:80"):
        pass
    assert time.sleeps == [pytest.approx(3.0), pytest.approx(10.0)]


def test_cancel_refuses_waiting_and_later_callers():
    time = FakeTime(100.0)
    gate = PolitenessGate(5.0, 1, clock=time.clock, sleep=time.sleep)
    with gate.hold("a:80"):
        pass
    gate.cancel()
    with pytest.raises(Cancelled):
        gate.acquire("a:80")   # its interval has not passed: it would have slept
    with pytest.raises(Cancelled):
        gate.acquire("b:80")   # nothing to wait for, but the crawl is stopping
    with pytest.raises(Cancelled):
        gate.wait(1.0)         # a retry's backoff


def test_cancel_wakes_a_caller_blocked_on_a_full_host():
    gate = PolitenessGate(0.0, 1)
    gate.acquire("a:80")
    outcome = []
    thread = threading.Thread(target=lambda: outcome.append(_try_acquire(gate, "a:80")))
    thread.start()
    thread.join(0.2)
    assert thread.is_alive() and outcome == []   # blocked while one is in flight
    gate.cancel()
    thread.join(5)
    assert outcome == ["cancelled"]


def _try_acquire(gate, host):
    try:
        gate.acquire(host)
    except Cancelled:
        return "cancelled"
    return "acquired"


def test_a_fetch_waiting_for_its_host_comes_back_cancelled_unsent(server):
    """The real wait (no injected sleep) is cut short by cancel_waiting: the
    URL comes back cancelled and the server never sees it."""
    config = local_config(UA, delay=30, per_host=1, obey_robots=False)
    with Fetcher(config) as fetcher:
        assert fetcher.fetch(server.url("/p0")).ok
        results = []
        thread = threading.Thread(target=lambda: results.append(fetcher.fetch(server.url("/p1"))))
        thread.start()
        thread.join(0.3)
        assert thread.is_alive()   # waiting out the 30 s delay
        fetcher.cancel_waiting()
        thread.join(5)
    assert not thread.is_alive()
    assert results[0].cancelled and results[0].error.startswith("cancelled:")
    assert server.paths() == ["/p0"]


def test_hosts_handed_out_early_still_reach_the_server_a_delay_apart(server, tmp_path, monkeypatch):
    """The loop hands a host out HAND_OUT_LEAD before its time and GetPage
    holds the request at the socket until then: with a lead of 0.15 s, a
    request sent when it is handed out would arrive 0.15 s early."""
    monkeypatch.setattr(wiring, "HAND_OUT_LEAD", 0.15)
    server.routes["/"] = page("".join(f'<a href="/p{n}">{n}</a>' for n in range(6)))
    Crawl(CrawlConfig(seeds=(server.url("/"),), out=tmp_path / "out", delay=0.25, max_depth=1,
                      max_pages=0, progress=False)).run()
    assert server.paths() == ["/robots.txt", "/", *(f"/p{n}" for n in range(6))]
    assert all(gap >= 0.25 - LATENCY_SLACK for gap in gaps(server)), gaps(server)


def slow_head(stall):
    """A route whose answer's first line comes at once and the rest of its
    head ``stall`` seconds later: the server answered, then took its time."""
    def route(handler):
        handler.wfile.write(b"HTTP/1.1 200 OK\r\n")
        handler.wfile.flush()
        real_time.sleep(stall)
        body = b"<html>slow head</html>"
        handler.wfile.write(b"Content-Type: text/html\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
    return route


def test_a_slow_head_is_not_added_to_the_interval(server):
    """The next request may start a delay after the answer's first byte: by
    then the server had the request. Counting from the end of the head (0.3 s
    later) would add the stall to the interval."""
    server.routes["/p0"] = slow_head(0.3)
    with Fetcher(local_config(UA, delay=0.2, obey_robots=False)) as fetcher:
        assert fetcher.fetch(server.url("/p0")).ok
        assert fetcher.fetch(server.url("/p1")).ok
    (gap,) = gaps(server)
    assert 0.3 <= gap < 0.45, gap   # sent once the slow answer was read, not 0.2 s after it

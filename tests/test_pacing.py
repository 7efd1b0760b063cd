"""The politeness policy (getpage/pacing.py) on a fake clock: the real
PolitenessGate and policy, a simulated server answering after a time that
depends on how many requests it is serving, no real waiting."""
import heapq
import itertools
import random

import pytest

from getpage.pacing import BACKOFF_FLOOR, PROBE_AFTER, AdaptivePolicy, FixedPolicy, Observation, Pace
from getpage.politeness import PolitenessGate

HOST = "h:80"


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def steady(latency):
    """A healthy server: every answer in ``latency`` seconds, however many at once."""
    return lambda load: (latency, 200)


def struggling(base=0.02, capacity=2):
    """benchmarks/struggling_site.py's model: base x load, 503 past capacity."""
    return lambda load: (0.0005, 503) if load > capacity else (base * load, 200)


class Simulation:
    """Requests to one host as fast as the gate lets them start; the server's
    answers come back on the fake clock (a heap of answer times)."""

    def __init__(self, policy, per_host=4):
        self.clock = Clock()
        self.gate = PolitenessGate(0, per_host, clock=self.clock, sleep=lambda s: None,
                                   policy=policy)
        self.pending = []   # (answer at, tie, latency, status)
        self.tie = itertools.count()
        self.log = []       # (start, load, status) as the server saw them
        self.intervals = []

    def run(self, server, requests):
        started = 0
        while started < requests or self.pending:
            if started < requests and self.gate.try_start(HOST):
                load = len(self.pending) + 1
                latency, status = server(load)
                heapq.heappush(self.pending, (self.clock.now + latency, next(self.tie), latency, status))
                self.log.append((self.clock.now, load, status))
                started += 1
                continue
            ready = self.gate.ready_at(HOST) if started < requests else float("inf")
            self.clock.now = max(self.clock.now, min(self.pending[0][0] if self.pending else ready, ready))
            while self.pending and self.pending[0][0] <= self.clock.now:
                _, _, latency, status = heapq.heappop(self.pending)
                self.gate.answered(HOST, Observation(latency, status))
                self.gate.release(HOST)
                self.intervals.append(self.gate.interval(HOST))
        return self

    def refused(self):
        return sum(1 for _, _, status in self.log if status == 503)


def test_a_steady_server_brings_the_interval_to_its_floor_and_the_window_to_per_host():
    sim = Simulation(AdaptivePolicy(0.01, 60, per_host=4)).run(steady(0.05), 200)
    assert sim.intervals[-50:] == [0.01] * 50
    assert sim.gate.paces()[HOST]["window"] == 4
    # starts 0.01 s after the last start or answer: 2 or 3 of 0.05 s at once
    assert max(load for _, load, _ in sim.log[-50:]) >= 2


def test_on_a_struggling_server_it_finds_the_window_the_server_can_take():
    sim = Simulation(AdaptivePolicy(0, 60, per_host=4)).run(struggling(), 400)
    fixed = Simulation(FixedPolicy(0, 4)).run(struggling(), 400)
    assert fixed.refused() > 100
    assert sim.refused() * 5 <= fixed.refused()
    assert sim.refused() <= 2 + 400 // PROBE_AFTER   # finding it, then a probe now and then
    loads = [load for _, load, status in sim.log[100:] if status == 200]
    assert max(loads) <= 2 and loads.count(2) > 0   # uses what it has, no more


@pytest.mark.parametrize("seen", [Observation(0.01, 503), Observation(0.01, 429),
                                  Observation(10.0, 0, "timeout"), Observation(0.001, 0, "connection")],
                         ids=["503", "429", "timeout", "connection"])
def test_an_overload_answer_doubles_the_interval_and_halves_the_window(seen):
    policy = AdaptivePolicy(0, 60, per_host=8)
    pace = Pace(0.2, window=8, latency=0.3)
    after = policy.observe(pace, seen)
    assert after.interval == pytest.approx(0.6) and after.window == 4 and after.errors == 1
    assert policy.governor(after) == "backoff"
    again = policy.observe(after, seen)
    assert again.interval == pytest.approx(1.2) and again.window == 2 and again.errors == 2


def test_an_overload_from_no_interval_still_backs_off():
    policy = AdaptivePolicy(0, 60, per_host=1)
    after = policy.observe(policy.start(), Observation(0.001, 503))
    assert after.interval == 2 * BACKOFF_FLOOR


def test_after_recovery_the_interval_falls_back_and_the_window_grows_again():
    sim = Simulation(AdaptivePolicy(0.01, 60, per_host=4))
    sim.run(steady(0.05), 50)
    sim.run(lambda load: (0.05, 503), 6)
    backed_off = sim.gate.paces()[HOST]
    assert backed_off["interval"] >= 0.05 * 2 ** 5 and backed_off["window"] == 1
    assert backed_off["errors"] == 6
    sim.run(steady(0.05), 20)
    recovering = sim.gate.paces()[HOST]
    assert recovering["interval"] == 0.01 and recovering["errors"] == 0
    # the window goes back to where the server refused only after a probe's calm answers
    assert recovering["window"] < 4
    sim.run(steady(0.05), PROBE_AFTER + 20)
    assert sim.gate.paces()[HOST]["window"] == 4


def test_retry_after_holds_the_host_off_whatever_the_interval():
    clock = Clock()
    gate = PolitenessGate(0, 1, clock=clock, policy=AdaptivePolicy(0, 60))
    assert gate.try_start(HOST)
    gate.answered(HOST, Observation(0.01, 503))
    gate.hold_off(HOST, 7)   # what GetPage does with a Retry-After: 7
    gate.release(HOST)
    assert gate.ready_at(HOST) == 7
    assert gate.paces()[HOST]["held_off"] == 1


def test_the_interval_never_goes_below_the_crawl_delay_or_min_delay():
    rng = random.Random(5)
    policy = AdaptivePolicy(0.3, 1.0, per_host=3)
    pace = policy.crawl_delay(policy.start(), 0.5)
    kinds = [Observation(0.001, 200), Observation(0.2, 200), Observation(0.01, 503),
             Observation(0.01, 404), Observation(3, 0, "timeout"), Observation(0.002, 301)]
    for _ in range(2000):
        pace = policy.observe(pace, rng.choice(kinds))
        assert 0.5 <= pace.interval <= 1.0 and 1 <= pace.window <= 3
    assert policy.governor(policy.observe(pace, Observation(0.001, 200))) == "crawl-delay"
    # robots.txt's word wins over --max-delay
    assert policy.crawl_delay(pace, 2.0).interval == 2.0


def test_a_fixed_delay_is_not_moved_by_the_server():
    sim = Simulation(FixedPolicy(0.25, 2)).run(struggling(), 60)
    assert set(sim.intervals) == {0.25}
    record = sim.gate.paces()[HOST]
    assert record["window"] == 2 and record["paced"] == {"delay": 60}


def test_error_pages_do_not_lower_the_interval():
    policy = AdaptivePolicy(0, 60, per_host=2)
    pace = Pace(0.4, window=2, latency=0.01, fastest=0.01)
    after = policy.observe(pace, Observation(0.001, 404))
    assert after.interval == 0.4 and after.window == 2 and after.latency == 0.01

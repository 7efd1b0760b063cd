"""The per-host politeness gate: how often, and how many at once.

Owns the rule that keeps the crawler polite to each server: at most
``per_host`` requests to one host in flight, and at least ``interval``
seconds between the starts of two requests to one host. The interval
is the policy's (getpage/pacing.py: the fixed delay, or ``--delay auto``'s
from the host's answers), never below robots.txt's Crawl-delay, and a host
can be held off for a while (a server's
Retry-After applies to every request to that host, not only to the one
that got it). Different hosts never wait for each other: the shared lock is
held only for bookkeeping, never while waiting.

The clock and the sleep are injected so that tests can run the timing
rules without waiting for real.

``cancel()`` is how a crawl stops fast: every caller still waiting (and
every later one) gets ``Cancelled`` instead of a slot, so a URL whose
request was never sent can go back uncommitted instead of holding the stop
for workers x delay.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace

from .addresses import DEFAULT_PORTS, url_authority
from .pacing import FixedPolicy, Observation, Pace



def host_key(url: str) -> str:
    """The politeness key of an absolute URL: "host:port", lower case.

    The port is part of the key so that servers on one machine but on
    different ports (as test sites and demo sites are) count as different
    hosts. Raises ValueError for a URL without a host or with a bad port.
    """
    scheme, host, port = url_authority(url)
    if not host:
        raise ValueError(f"no host in {url!r}")
    # Port 0 is its own key (a URL GetPage refuses), not the default port's:
    # it must not take a real server's slot and delay.
    return f"{host}:{DEFAULT_PORTS.get(scheme, 0) if port is None else port}"


def slot_ready_at(in_flight: int, per_host: int, last: float | None, interval: float,
                  not_before: float) -> float:
    """When a host may start its next request: ``inf`` while all its
    ``per_host`` slots are in flight, else the later of its hold-off
    (``not_before``) and ``interval`` after its last request (None: none
    yet). The shared crawl's Lua ``ready_at`` (urllist/redisqueue.py) is
    the same rule; tests/test_rules_differential.py runs both on one table."""
    if in_flight >= per_host:
        return float("inf")
    return not_before if last is None else max(not_before, last + interval)


def pace_record(pace: Pace, paced: dict[str, int], held_off: int) -> dict:
    """One host's line of ``paces()`` (the shared crawl's RedisGate.paces
    gives the same fields: controller/pace.py reads either)."""
    return {"interval": round(pace.interval, 4), "window": pace.window,
            "latency": round(pace.latency, 4),
            "errors": pace.errors, "crawl_delay": pace.robots, "paced": dict(paced),
            "held_off": held_off}


class Cancelled(Exception):
    """The gate was cancelled before this caller's request could start."""


@dataclass
class _Host:
    """Bookkeeping for one host: a few numbers and a condition, O(1)."""

    slot_freed: threading.Condition
    pace: Pace
    in_flight: int = 0
    last_start: float | None = None
    not_before: float = float("-inf")  # clock time before which nothing starts
    # requests started under each governor of the interval (pacing.GOVERNORS)
    paced: dict[str, int] = field(default_factory=dict)
    held_off: int = 0                  # times a Retry-After held it off


class PolitenessGate:
    """Blocks callers until a host may be sent one more request.

    Thread-safe. Every ``acquire(host)`` must be paired with one
    ``release(host)`` once the response is finished; ``hold(host)`` does
    both around a ``with`` block.
    """

    def __init__(
        self,
        delay: float,
        per_host: int,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] | None = None,
        policy: FixedPolicy | None = None,
        lead: float = 0.0,
    ) -> None:
        if delay < 0 or per_host < 1 or lead < 0:
            raise ValueError(f"need delay >= 0, per_host >= 1 and lead >= 0, got {delay}, {per_host}, {lead}")
        self.policy = policy or FixedPolicy(delay, per_host)
        self._clock = clock
        # A scheduler may hand a host out this much before its time (ready_at,
        # try_start); the request is then held until the time (``started``), so
        # that waking the loop, handing the URL to a thread and building the
        # request happen before it instead of being added to every interval.
        self._lead = lead
        self._cancelled = threading.Event()
        # The real wait is the cancel event's, so cancel() cuts it short.
        self._sleep = sleep or self._cancelled.wait
        self._lock = threading.Lock()
        self._hosts: dict[str, _Host] = {}

    def acquire(self, host: str) -> None:
        """Block until ``host`` has a free slot and its interval has passed.

        On return the caller holds one of the host's slots and its request
        counts as started now. Raises ``Cancelled`` once ``cancel()`` was
        called, whether it came before or during the wait.
        """
        while True:
            wait = self._try_start(host)
            if wait <= 0:
                return
            # Sleep without the lock so other hosts, and this host's
            # bookkeeping, go on; then compete for the slot again.
            self.wait(wait)

    def ready_at(self, host: str) -> float:
        """When ``host`` may be handed out for its next request, on this
        gate's clock: the later of its interval and any hold-off, less the
        lead; ``inf`` while its slots are all in flight (the time is known
        only once one is released). Never blocks: this is what a scheduler asks."""
        with self._lock:
            state = self._hosts.get(host)
            if state is None:
                return float("-inf")
            return self._ready_at(state) - self._lead_of(state)

    def try_start(self, host: str, now: float | None = None) -> bool:
        """Take one of ``host``'s slots if it may start now (its request then
        counts as started, and must be ``release``d); False, taking
        nothing, if not. Never blocks. A scheduler passes ``now`` and may
        take the slot up to the lead early: the request counts as started
        at its time and is held until then (``started``)."""
        with self._lock:
            state = self._state(host)
            clock = self._clock()
            lead = 0.0 if now is None else self._lead_of(state)
            now = clock if now is None else now
            ready = self._ready_at(state)
            if self._cancelled.is_set() or ready - lead > now:
                return False
            self._start(state, max(ready, min(now, clock)))
            return True

    def started(self, host: str) -> float:
        """The request on a slot taken earlier (``try_start``) is about to
        be sent: the seconds to hold it until its time (0.0: none). The
        interval counts from the send too, so the time between the
        reservation and the send (a thread waking, a connection opening) is
        not taken off the next request's wait."""
        with self._lock:
            state = self._state(host)
            now = self._clock()
            state.last_start = max(state.last_start or float("-inf"), now)
            return state.last_start - now

    def answered(self, host: str, seen: Observation | None = None, at: float | None = None) -> None:
        """The server answered the request on one of host's slots (or it
        failed): the interval counts from the answer too. A request stamped
        at ``started`` can leave the machine later (a thread held up, a
        connection opening), unseen by this clock; the answer never comes
        before the server had the request, so the server sees the interval.
        ``at``: when the answer's first byte came (this clock's time; None:
        now), so that parsing its head is not added to every interval.
        ``seen``: how the answer went, for the policy to set the interval."""
        with self._lock:
            state = self._state(host)
            now = self._clock()
            state.last_start = max(state.last_start or float("-inf"), now if at is None else min(at, now))
            if seen is not None:
                window = state.pace.window
                seen = replace(seen, full=state.in_flight >= window)
                state.pace = self.policy.observe(state.pace, seen)
                if state.pace.window > window:
                    state.slot_freed.notify(state.pace.window - window)

    def clock(self) -> float:
        return self._clock()

    def _lead_of(self, state: _Host) -> float:
        """The lead, for a host of one slot: ``started`` holds a request
        until the host's last start, which is that request's own only while
        no second slot can be taken meanwhile."""
        return self._lead if state.pace.window == 1 else 0.0

    def _ready_at(self, state: _Host) -> float:
        return slot_ready_at(state.in_flight, state.pace.window, state.last_start,
                             state.pace.interval, state.not_before)

    def _start(self, state: _Host, now: float) -> None:
        state.in_flight += 1
        state.last_start = now
        governor = self.policy.governor(state.pace)
        state.paced[governor] = state.paced.get(governor, 0) + 1

    def wait(self, seconds: float) -> None:
        """Sleep ``seconds`` (a retry's backoff too); ``Cancelled`` if the
        gate is, or gets, cancelled."""
        self._sleep(seconds)
        if self._cancelled.is_set():
            raise Cancelled()

    def cancel(self) -> None:
        """Refuse every waiting and later ``acquire``: the crawl is stopping."""
        self._cancelled.set()
        with self._lock:
            for state in self._hosts.values():
                state.slot_freed.notify_all()

    def release(self, host: str) -> None:
        """Give back the slot taken by ``acquire(host)``."""
        with self._lock:
            state = self._hosts.get(host)
            if state is None or state.in_flight <= 0:
                raise RuntimeError(f"release({host!r}) without acquire")
            state.in_flight -= 1
            # Wake ONE waiter: waking all of them (say 8 fetch threads parked
            # on one host) cost a third of the crawler's CPU in GIL handoffs.
            # One is enough: if it finds the interval not yet passed, it sleeps
            # and then takes the slot itself, and no second request could have
            # started before the interval anyway.
            state.slot_freed.notify()

    @contextmanager
    def hold(self, host: str) -> Iterator[None]:
        """``with gate.hold(host):`` = acquire, then release however the block ends."""
        self.acquire(host)
        try:
            yield
        finally:
            self.release(host)

    def raise_interval(self, host: str, seconds: float) -> None:
        """Make requests to ``host`` start at least ``seconds`` apart, for
        good (robots.txt's Crawl-delay): the policy never goes below it."""
        with self._lock:
            state = self._state(host)
            state.pace = self.policy.crawl_delay(state.pace, seconds)

    def hold_off(self, host: str, seconds: float) -> None:
        """Start no request to ``host`` for ``seconds`` from now.

        Only ever pushes the time later: of two hold-offs the longer wins.
        """
        with self._lock:
            state = self._state(host)
            state.not_before = max(state.not_before, self._clock() + seconds)
            state.held_off += 1

    def interval(self, host: str) -> float:
        """The current minimum interval for ``host``, in seconds."""
        with self._lock:
            state = self._hosts.get(host)
            return state.pace.interval if state else self.policy.start().interval

    def paces(self) -> dict[str, dict]:
        """Per host: its interval, what set it (requests started under each
        governor), its latency estimate, its overload answers in a row and
        the Retry-After hold-offs it had (controller/pace.py sums them up)."""
        with self._lock:
            return {host: pace_record(state.pace, state.paced, state.held_off)
                    for host, state in self._hosts.items()}

    def _try_start(self, host: str) -> float:
        """Take a slot and return 0, or return how long to wait before retrying."""
        with self._lock:
            state = self._state(host)
            while state.in_flight >= state.pace.window and not self._cancelled.is_set():
                state.slot_freed.wait()
            if self._cancelled.is_set():
                raise Cancelled()
            now = self._clock()
            ready = self._ready_at(state)
            if ready > now:
                return ready - now
            self._start(state, now)
            return 0.0

    def _state(self, host: str) -> _Host:
        state = self._hosts.get(host)
        if state is None:
            state = _Host(threading.Condition(self._lock), self.policy.start())
            self._hosts[host] = state
        return state

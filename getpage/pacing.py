"""The politeness policy: how long to wait between two requests to one host,
and how many may be in flight to it, decided from what its answers showed.

Pure: no clock, no lock, no storage. A host's record (``Pace``) goes in
with one observation (how long the answer took, its status, the kind of
failure) and a new record comes out. The single node's gate
(getpage/politeness.py) keeps the records in memory; the shared crawl's
gate keeps them in Redis (urllist/redisqueue.py), the worker that saw the
answer deciding with this code. Who stores the record never decides.

Two policies:
- ``FixedPolicy(delay, per_host)``: ``--delay S``, the interval is S (or
  robots.txt's Crawl-delay if larger) and ``per_host`` may be in flight,
  whatever the server does, as it always was; overload answers are
  counted, not acted on (their Retry-After still holds the host off, at the
  gate).
- ``AdaptivePolicy(min, max, per_host)``: ``--delay auto``. The number in
  flight (the window, 1 to ``per_host``) is found per host as TCP finds its
  window: it grows by one after two windows' worth of healthy answers that
  came no slower than CALM x the fastest seen, shrinks by one when answers
  slow down past INFLATION x (the server is queueing our requests: more at
  once buys nothing), holds in between, and halves on an overload answer (429, 503, a
  timeout, a failed connection), which also doubles the interval (from at
  least the response time) at once; it grows back to the window that drew
  the overload only after PROBE_AFTER calm answers (a probe). Healthy
  answers halve the interval
  back toward its floor. The interval stays within
  ``[max(min, Crawl-delay), max]``: robots.txt's Crawl-delay wins even over
  ``max``, since it is the site's own word. Why this and not Heritrix's
  ``factor x fetch time`` or AutoThrottle's fixed target concurrency: both
  measured on the same servers (README, "Adaptive politeness").

The interval is counted as the gate counts it: from the later of the last
request's start and its answer.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

OVERLOAD_STATUSES = frozenset({429, 503})
OVERLOAD_KINDS = frozenset({"timeout", "connection"})
# Answers this much slower than the fastest seen mean the server is queueing
# (the window shrinks); a window grows only while answers stay within
# CALM x the fastest (more at once costs the server nothing yet). Between
# the two it holds: a one-core server answering two at once in 1.5 x the
# time is kept at two, never pushed to the third that it would refuse.
INFLATION = 2.0
CALM = 1.25
# Calm answers a window needs before it grows back to where an overload came.
PROBE_AFTER = 200
# A backoff from an interval of 0 must still grow: it doubles from here;
# and an interval falling back under half of it is at its floor.
BACKOFF_FLOOR = 0.05
DEFAULT_MIN_DELAY = 0.0
DEFAULT_MAX_DELAY = 60.0

# What set a host's interval (stats.json's "pace", the report).
GOVERNORS = ("delay", "crawl-delay", "backoff", "min-delay", "max-delay", "adaptive")


@dataclass(frozen=True)
class Pace:
    """What the policy knows of one host."""

    interval: float            # seconds between two requests to it, now
    window: int = 1            # requests that may be in flight to it, now
    latency: float = 0.0       # smoothed seconds to a healthy answer's headers; 0: none yet
    fastest: float = 0.0       # the fastest healthy answer seen; 0: none yet
    errors: int = 0            # overload answers in a row (0 after a healthy one)
    calm: int = 0              # healthy, unhurried answers since the window last moved
    ceiling: int = 0           # the window an overload answer last came at; 0: none
    robots: float = 0.0        # robots.txt's Crawl-delay; 0: none


@dataclass(frozen=True)
class Observation:
    """One request's outcome, as the gate is told it when the answer (or the
    failure) comes: ``status`` 0 for none, ``error_kind`` the part of the
    error before ':' ("timeout", "connection", "http", ...; "" for none)."""

    latency: float
    status: int = 0
    error_kind: str = ""
    full: bool = True          # the host's window was all in flight: a calm answer then says it may grow

    @property
    def overload(self) -> bool:
        return self.status in OVERLOAD_STATUSES or (not self.status and self.error_kind in OVERLOAD_KINDS)

    @property
    def healthy(self) -> bool:
        return 200 <= self.status < 400


class FixedPolicy:
    """``--delay S``: the interval is S, or Crawl-delay if larger; ``per_host`` in flight."""

    adaptive = False

    def __init__(self, delay: float, per_host: int = 1) -> None:
        if delay < 0 or per_host < 1:
            raise ValueError(f"need delay >= 0 and per_host >= 1, got {delay}, {per_host}")
        self.delay, self.per_host = delay, per_host

    def start(self) -> Pace:
        return Pace(self.delay, self.per_host)

    def observe(self, pace: Pace, seen: Observation) -> Pace:
        return replace(pace, errors=pace.errors + 1 if seen.overload else 0)

    def crawl_delay(self, pace: Pace, seconds: float) -> Pace:
        robots = max(pace.robots, seconds)
        return replace(pace, robots=robots, interval=max(pace.interval, robots))

    def governor(self, pace: Pace) -> str:
        return "crawl-delay" if pace.robots > self.delay else "delay"

    def describe(self) -> str:
        return f"--delay {self.delay:g}"


class AdaptivePolicy(FixedPolicy):
    """``--delay auto``: the interval and the window follow the server (module docstring)."""

    adaptive = True

    def __init__(self, min_delay: float = DEFAULT_MIN_DELAY, max_delay: float = DEFAULT_MAX_DELAY,
                 per_host: int = 1) -> None:
        if not 0 <= min_delay <= max_delay:
            raise ValueError(f"need 0 <= min_delay <= max_delay, got {min_delay}, {max_delay}")
        super().__init__(min_delay, per_host)
        self.min_delay, self.max_delay = min_delay, max_delay

    def start(self) -> Pace:
        return Pace(self.min_delay, 1)

    def observe(self, pace: Pace, seen: Observation) -> Pace:
        if seen.overload:
            grown = max(pace.interval, pace.latency, BACKOFF_FLOOR) * 2
            return self._bounded(replace(pace, errors=pace.errors + 1, interval=grown,
                                         window=max(1, pace.window // 2), calm=0,
                                         ceiling=pace.window if pace.window > 1 else pace.ceiling))
        if not seen.healthy:   # an error page says little of the server's load
            return replace(pace, errors=0)
        eased = pace.interval / 2 if pace.interval > BACKOFF_FLOOR / 2 else 0.0
        return self._bounded(self._paced(replace(pace, errors=0, interval=eased), seen.latency,
                                         seen.full))

    def _paced(self, pace: Pace, latency: float, full: bool) -> Pace:
        """The window after a healthy answer that took ``latency`` seconds."""
        fastest = min(pace.fastest or latency, latency)
        smoothed = (pace.latency + latency) / 2 if pace.latency else latency
        pace = replace(pace, fastest=fastest, latency=smoothed)
        if smoothed > INFLATION * fastest:
            return replace(pace, window=max(1, pace.window - 1), calm=0)
        if max(smoothed, latency) > CALM * fastest:   # this answer, too, must be calm
            return replace(pace, calm=0)
        # Back to where the server refused only after many calm answers (a
        # probe: the server may have recovered), elsewhere after a window's worth.
        probe = pace.window + 1 >= pace.ceiling > 0
        if not full:   # calm at a window not all used says nothing of a larger one
            return pace
        if pace.calm + 1 >= (PROBE_AFTER if probe else 2 * pace.window) and pace.window < self.per_host:
            # a probe that grew the window lifts the ceiling: the server took it
            return replace(pace, window=pace.window + 1, calm=0, ceiling=0 if probe else pace.ceiling)
        return replace(pace, calm=pace.calm + 1)

    def crawl_delay(self, pace: Pace, seconds: float) -> Pace:
        return self._bounded(replace(pace, robots=max(pace.robots, seconds)))

    def _bounded(self, pace: Pace) -> Pace:
        floor = max(self.min_delay, pace.robots)
        return replace(pace, interval=max(floor, min(pace.interval, max(self.max_delay, floor))))

    def governor(self, pace: Pace) -> str:
        if pace.robots and pace.interval <= pace.robots:
            return "crawl-delay"
        if pace.errors:
            return "backoff"
        if pace.interval <= self.min_delay:
            return "min-delay"
        return "max-delay" if pace.interval >= self.max_delay else "adaptive"

    def describe(self) -> str:
        return f"--delay auto, {self.min_delay:g}-{self.max_delay:g} s, --per-host {self.per_host}"

"""Where a polite crawl's seconds above the politeness bound go, from the server's access log.

A crawl polite at `delay` needs at least (n - 1) x delay on a host it asks n
times, so the host that needs the most requests bounds the whole crawl: the
bound (benchmarks/polite.py's `lower_bound_s`). Every second of the wall
time above it is spent somewhere along that host's timeline, and
`excess(...)` splits it, so the parts add up to wall - bound exactly:

- start-up: the command's start to the crawl's (trace.log's START line:
  the interpreter, imports, settings, the output directory), then from
  there to the first request to any host;
- first request elsewhere: from there to the bounding host's first request;
- requests beyond the bound: one delay for each request the bound does not
  count (robots.txt, a URL asked twice);
- each gap between two of its request starts beyond the delay, by cause:
  after its robots.txt (the first page waited for the rules), a level
  closed in the gap (the crawler's LEVEL line falls inside it: the level
  barrier), the response before it took longer than the delay (the server),
  or other waits (the scheduler: speculation limits, hand-out order);
- its last response: the last request's own time;
- other hosts after it: its last response to the last response of any host;
- the end: the last response to the command's exit.

Times are nginx's (request start and end, ms) and the harness's (launch,
wall time), on the same clock; trace.log's LEVEL lines give level closes.
Pure functions: they only read what they are given.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from benchmarks.nginx import LogEntry

ROBOTS = "/robots.txt"
PARTS = ("start-up: the process", "start-up: the crawl", "first request elsewhere", "requests beyond the bound", "after robots.txt",
         "level barrier", "slow response", "other waits", "its last response",
         "other hosts after it", "the end")
IDLE_FACTOR = 1.5   # a gap above this many delays counts as idle (the per-host summary)


@dataclass(frozen=True)
class Excess:
    host: str                   # the bounding host's address
    requests: int               # its requests in the log, robots.txt included
    parts: dict[str, float]     # PARTS -> seconds; they add up to wall - bound
    idle_gaps: int              # gaps above IDLE_FACTOR x delay, over every host
    idle_s: float               # their seconds beyond one delay each
    idle_at_level_close: int    # of them, those in which a level closed

    def total(self) -> float:
        return sum(self.parts.values())


def trace_times(trace: Path, event: str) -> list[int]:
    """When each `event` line (START, LEVEL) of a trace.log was written, ms since the epoch;
    none when there is no trace (a peer that writes none)."""
    try:
        lines = trace.read_text(encoding="utf-8").splitlines()
    except OSError:
        return []
    return [_epoch_ms(fields[0]) for fields in map(str.split, lines)
            if len(fields) > 1 and fields[1] == event]


def _epoch_ms(stamp: str) -> int:
    return round(datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp() * 1000)


def by_host(entries: list[LogEntry]) -> dict[str, list[LogEntry]]:
    hosts: dict[str, list[LogEntry]] = defaultdict(list)
    for entry in sorted(entries, key=lambda e: e.start_ms):
        hosts[entry.address].append(entry)
    return hosts


def excess(entries: list[LogEntry], host: str, needed: int, delay_s: float, launch_ms: int,
           wall_s: float, trace: Path) -> Excess:
    """wall - (needed - 1) x delay, split along `host`'s requests (it needs `needed`)."""
    closes = trace_times(trace, "LEVEL")
    first = min(e.start_ms for e in entries)
    crawl_start = min(trace_times(trace, "START") or [first])
    delay = delay_s * 1000
    hosts = by_host(entries)
    mine = hosts[host]
    exit_ms = launch_ms + wall_s * 1000
    last_end = max(e.end_ms for e in entries)
    parts = dict.fromkeys(PARTS, 0.0)
    parts["start-up: the process"] = crawl_start - launch_ms
    parts["start-up: the crawl"] = first - crawl_start
    parts["first request elsewhere"] = mine[0].start_ms - first
    parts["requests beyond the bound"] = (len(mine) - needed) * delay
    for before, after in zip(mine, mine[1:]):
        parts[_cause(before, after, delay, closes)] += after.start_ms - before.start_ms - delay
    parts["its last response"] = mine[-1].end_ms - mine[-1].start_ms
    parts["other hosts after it"] = last_end - mine[-1].end_ms
    parts["the end"] = exit_ms - last_end
    idle = [(b, a) for gaps in hosts.values() for b, a in zip(gaps, gaps[1:])
            if a.start_ms - b.start_ms > IDLE_FACTOR * delay]
    return Excess(host, len(mine), {k: v / 1000 for k, v in parts.items()}, len(idle),
                  sum(a.start_ms - b.start_ms - delay for b, a in idle) / 1000,
                  sum(1 for b, a in idle if _closes_between(b, a, closes)))


def _cause(before: LogEntry, after: LogEntry, delay: float, closes: list[int]) -> str:
    if before.path == ROBOTS:
        return "after robots.txt"
    if _closes_between(before, after, closes):
        return "level barrier"
    if before.duration_ms > delay:
        return "slow response"
    return "other waits"


def _closes_between(before: LogEntry, after: LogEntry, closes: list[int]) -> bool:
    return any(before.start_ms <= t <= after.start_ms for t in closes)

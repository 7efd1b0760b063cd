"""URL_List's scheduler: the total queue, split into one queue per host
(the Frontier protocol of frontier.py).

The total queue and its level flags are the design paper's: every accepted URL is appended once, its position is its id,
and flags[k] is the queue length when level k was complete. What this adds
is *which URL goes next*, so that a polite crawl is also a fast one
(Mercator's back queues):

- Each host has its own FIFO of the URLs not yet handed out, in id order
  (which is level order). The FIFOs are chains threaded through one array
  of "next id in the same host", so a host costs two dict entries and a
  heap entry, not a deque.
- Hosts with work wait in a heap by the time they may next start a request.
  That time is not this module's to decide: ``Readiness`` (the politeness
  state, built by the Controller and shared with GetPage) answers it
  without blocking. ``pop(n, now)`` takes hosts whose time has come, and
  *reserves* a request slot on each (``try_start``) before handing out its
  URL, so the fetch thread never waits for the host. ``next_ready(now)``
  says how long the loop may sleep.
- A host whose slots are all in flight is in no heap; ``fetched(item)``
  (the fetch ended, its slot was released) puts it back.
- ``requeue(item, host, not_before)`` puts an item back at the head of a
  host's queue: a retry after a backoff, a fetch that had to load the
  host's robots.txt first, a redirect that continues on another host.

Why levels stay exact while hosts go at their own pace: a URL of level
k+1 is only ever queued by a page of level k, after every page of levels
<= k-1 was processed, so its level is final the moment it is queued. Such
a URL may therefore be handed out (fetched) while level k is still open;
only its *processing* (its links queued, its row committed) has to wait
for level k to close, and that is the Controller's part (it parks the
page). Level k+2 URLs cannot exist before level k closes, so two levels
are in the window at most. The window's second level is bounded
(``max_ahead`` handed out and not yet done), so parked pages stay few.
Within the window, hosts whose next URL is of the open level go first:
they are what closes the level.
"""
from __future__ import annotations

import heapq
from array import array
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Protocol

from urllist.queued import QueuedUrl, TotalQueue

NONE = -1   # end of a host's chain
SPECULATIVE = -1   # the level of a speculative item, and the lane it waits in


class Readiness(Protocol):
    """The politeness state, asked without blocking (getpage.PolitenessGate)."""

    def ready_at(self, host: str) -> float:
        """When host may start its next request; inf while all its slots are busy."""

    def try_start(self, host: str, now: float) -> bool:
        """Take one of host's request slots if it may start at now; False takes nothing."""


def ready_time(readiness: Readiness, not_before: dict[str, float], stalled: set[str],
               host: str) -> float | None:
    """When host may start (politeness, and a requeued URL's not-before);
    None, and host in ``stalled``, while its slots are all busy: a fetch of
    ours, or a request GetPage made without our reservation (a robots.txt
    redirect). Asked again whenever a fetch ends, so neither can leave it
    out for good."""
    ready = max(readiness.ready_at(host), not_before.get(host, float("-inf")))
    if ready == float("inf"):
        stalled.add(host)
        return None
    stalled.discard(host)
    return ready


class HostFrontier(TotalQueue):
    """The total queue with level flags, handed out host by host when each host
    is ready. Not thread-safe: the Controller's loop alone calls it."""

    def __init__(self, host_of: Callable[[str], str], readiness: Readiness,
                 max_ahead: int = 0) -> None:
        self._host_of = host_of
        self._readiness = readiness
        self._max_ahead = max_ahead
        self._queue: list[QueuedUrl] = []
        self._next = array("q")                    # _next[id]: next id of the same host's chain
        self._head: dict[str, int] = {}            # host -> first id waiting
        self._tail: dict[str, int] = {}            # host -> last id waiting
        self._not_before: dict[str, float] = {}    # host -> earliest start of its requeued head
        self._heaps: dict[int, list[tuple[float, int, str]]] = {}   # level of head -> (time, seq, host)
        self._scheduled: dict[str, tuple[float, int]] = {}           # host -> its live heap entry
        self._seq = 0
        self._reserved: dict[int, str] = {}        # id handed out -> host whose slot it holds
        self._ahead = 0                            # handed out, of the level after the open one, not done
        self._flags: list[int] = []
        self._processed = 0
        self._done_before: set[int] = set()
        self._speculative: dict[str, list[QueuedUrl]] = {}   # host -> speculative items, FIFO
        self._withdrawn: set[int] = set()                   # speculative ids no longer wanted
        self._stalled: set[str] = set()                     # hosts with work whose slots were busy
        self._spec_seq = 0
        self._waiting_by_level: Counter[int] = Counter()   # URLs in the chains, per level
        # URLs the crawl may still hand out (--max-pages); None: no limit.
        # The open level's go first: fetching ahead spends only what they
        # leave, so no page is fetched for a level that the budget keeps
        # from ever closing (it could never be recorded).
        self.budget: int | None = None

    # -- the total queue ------------------------------------------------------
    @property
    def level_flags(self) -> tuple[int, ...]:
        return tuple(self._flags)

    @property
    def current_level(self) -> int:
        """The open level: the one being processed now."""
        return max(len(self._flags) - 1, 0)

    @property
    def finished_levels(self) -> int:
        return sum(1 for m in self._flags if m <= self._processed) if self._flags else 0

    def push(self, items: Iterable[QueuedUrl], taken: frozenset[int] = frozenset()) -> None:
        """Append new URLs; those in ``taken`` count as handed out already
        (their page was fetched before it was queued, see ``speculate``)."""
        for item in items:
            if item.id != len(self._queue):
                raise ValueError(f"id {item.id} does not continue the queue at {len(self._queue)}")
            if not self._flags and self._queue and item.level > 0:
                self._flags.append(len(self._queue))   # the seeds end where a deeper URL begins
            self._queue.append(item)
            self._next.append(NONE)
            if item.id in taken:
                self._ahead += item.level > self.current_level
            else:
                self._wait(item, self._host_of(item.url))

    def speculate(self, url: str, host: str) -> QueuedUrl:
        """Fetch url when host has nothing else to do: a URL not queued yet,
        found on a page fetched ahead, so its level is not known; its bytes
        do not depend on it. The item handed out for it has a negative id
        and level SPECULATIVE; ``unspeculate`` withdraws one not handed out."""
        self._spec_seq += 1
        item = QueuedUrl(-self._spec_seq, url, SPECULATIVE, None)
        self._speculative.setdefault(host, []).append(item)
        self._schedule(host)
        return item

    def unspeculate(self, item: QueuedUrl) -> None:
        self._withdrawn.add(item.id)

    def restore(self, items: Iterable[QueuedUrl], done_ids: set[int]) -> None:
        """Rebuild after a restart: the whole total queue and the ids processed
        (levels 0..c-1 and part of c, since commits go in level order)."""
        if self._queue:
            raise ValueError("restore() needs an empty frontier")
        self._done_before = set(done_ids)
        ends: dict[int, int] = {}
        for item in items:
            self._queue.append(item)
            self._next.append(NONE)
            ends[item.level] = item.id + 1
            if item.id not in self._done_before:
                self._wait(item, self._host_of(item.url))
        self._processed = len(self._done_before)
        for level in sorted(ends):
            self._flags.append(ends[level])
            if self._processed < ends[level]:
                break

    # -- handing out ------------------------------------------------------------
    def pop(self, n: int, now: float) -> list[QueuedUrl]:
        """Up to n URLs whose host may start now, each with a slot reserved on
        its host; open-level hosts first, then (within max_ahead and what the
        budget leaves) the next level's, then speculative ones."""
        self._close_levels()
        items: list[QueuedUrl] = []
        level = self.current_level
        ahead_room = (float("inf") if self.budget is None
                      else self.budget - self._waiting_by_level[level])
        for k in (level, level + 1, SPECULATIVE):
            heap = self._heaps.get(k)
            while len(items) < n and (k != level + 1 or (self._ahead < self._max_ahead
                                                         and ahead_room > 0)):
                first = self._first_live(heap)
                if first is None or first > now:
                    break
                item = self._take(heapq.heappop(heap), now)
                if item is not None:
                    items.append(item)
                    self._ahead += item.level > level
                    ahead_room -= k == level + 1
        return items

    def next_ready(self, now: float) -> float | None:
        """The earliest time a host in the window may start; None when none
        will without an event (a fetch ending, a level closing)."""
        self._close_levels()
        level = self.current_level
        times = [self._first_live(self._heaps.get(level)),
                 self._first_live(self._heaps.get(SPECULATIVE))]
        if self._ahead < self._max_ahead:
            times.append(self._first_live(self._heaps.get(level + 1)))
        times = [t for t in times if t is not None]
        return min(times) if times else None

    def fetched(self, item: QueuedUrl) -> None:
        """The fetch of item ended and its slot was released: its host may be
        scheduled again."""
        host = self._reserved.pop(item.id, None)
        if host is not None:
            self._schedule(host)
        self._wake_stalled()

    def requeue(self, item: QueuedUrl, host: str, not_before: float | None = None) -> None:
        """Hand item out again later, first of host's queue, not before not_before
        (its slot, if it held one, was released)."""
        if item.id < 0:
            raise ValueError("a speculative fetch is not handed out again: keep what it got")
        previous = self._reserved.pop(item.id, None)
        if item.level > self.current_level:
            self._ahead -= 1
        self._insert(item.id, host)
        if not_before is not None:
            self._not_before[host] = max(not_before, self._not_before.get(host, not_before))
        self._scheduled.pop(host, None)   # its head changed: schedule it anew
        self._schedule(host)
        if previous is not None and previous != host:
            self._schedule(previous)
        self._wake_stalled()

    def _wake_stalled(self) -> None:
        for host in list(self._stalled):
            self._schedule(host)

    def done(self, item: QueuedUrl) -> None:
        """item is fully processed: its children were pushed before this call."""
        self._processed += 1   # (items of a level are done only once it is open)
        self._close_levels()

    def exhausted(self) -> bool:
        """Every queued URL handed out and processed."""
        return self._processed == len(self._queue)

    # -- inside -------------------------------------------------------------------
    def _wait(self, item: QueuedUrl, host: str) -> None:
        """Append item to host's chain (and schedule the host if it was idle)."""
        self._waiting_by_level[item.level] += 1
        tail = self._tail.get(host, NONE)
        if tail == NONE:
            self._head[host] = item.id
        else:
            self._next[tail] = item.id
        self._tail[host] = item.id
        if tail == NONE:
            self._scheduled.pop(host, None)   # it may wait in the speculative lane
            self._schedule(host)

    def _insert(self, item_id: int, host: str) -> None:
        """Put an item handed out before back into host's chain in id order, so a
        level's URLs never wait behind the next level's (a requeue is rare: a
        retry, a redirect, a host's first robots.txt; the walk is short)."""
        self._waiting_by_level[self._queue[item_id].level] += 1
        previous, current = NONE, self._head.get(host, NONE)
        while current != NONE and current < item_id:
            previous, current = current, self._next[current]
        self._next[item_id] = current
        if previous == NONE:
            self._head[host] = item_id
        else:
            self._next[previous] = item_id
        if current == NONE:
            self._tail[host] = item_id

    def _schedule(self, host: str) -> None:
        """Put host in the heap of its head's level at the time it may start;
        nowhere when it has nothing waiting or all its slots are busy."""
        head = self._head.get(host, NONE)
        if host in self._scheduled or (head == NONE and not self._speculative.get(host)):
            return
        ready = ready_time(self._readiness, self._not_before, self._stalled, host)
        if ready is None:
            return
        self._seq += 1
        self._scheduled[host] = (ready, self._seq)
        lane = self._queue[head].level if head != NONE else SPECULATIVE
        heapq.heappush(self._heaps.setdefault(lane, []), (ready, self._seq, host))

    def _take(self, entry: tuple[float, int, str], now: float) -> QueuedUrl | None:
        """The head URL of the entry's host, with a slot reserved; None if the
        entry is stale or the host turns out not to be ready."""
        ready, seq, host = entry
        if self._scheduled.get(host) != (ready, seq):
            return None
        del self._scheduled[host]
        if self._head.get(host, NONE) == NONE:
            return self._take_speculative(host, now)
        if not self._readiness.try_start(host, now):
            self._schedule(host)   # its state moved on (a hold-off): ask again
            return None
        head = self._head[host]
        following = self._next[head]
        if following == NONE:
            del self._head[host], self._tail[host]
        else:
            self._head[host] = following
        self._not_before.pop(host, None)
        self._waiting_by_level[self._queue[head].level] -= 1
        self._reserved[head] = host
        self._schedule(host)   # per-host > 1: it may have another slot
        return self._queue[head]

    def _take_speculative(self, host: str, now: float) -> QueuedUrl | None:
        waiting = self._speculative.get(host, [])
        while waiting and waiting[0].id in self._withdrawn:
            self._withdrawn.discard(waiting.pop(0).id)
        if not waiting:
            self._speculative.pop(host, None)
            return None
        if not self._readiness.try_start(host, now):
            self._schedule(host)
            return None
        item = waiting.pop(0)
        self._reserved[item.id] = host
        self._schedule(host)
        return item

    def _first_live(self, heap: list | None) -> float | None:
        """The time of the heap's first live entry (stale ones are dropped)."""
        while heap and self._scheduled.get(heap[0][2]) != heap[0][:2]:
            heapq.heappop(heap)
        return heap[0][0] if heap else None

    def _close_levels(self) -> None:
        # The design paper's rule: the first flag once seeds exist, each later one
        # when the level before it is completely processed.
        if not self._flags:
            if self._queue:
                self._flags.append(len(self._queue))
            return
        while self._processed == self._flags[-1] and len(self._queue) > self._flags[-1]:
            self._flags.append(len(self._queue))
            self._ahead = 0   # what was fetched ahead belongs to the open level now

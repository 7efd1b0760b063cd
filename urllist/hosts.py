"""URL_List's scheduler: breadth-first order over per-host queues (the
Frontier protocol of frontier.py).

Where URLs wait is a *storage* (urllist/storage.py: RAM; diskqueues.py:
RAM up to a budget, then disk): one FIFO queue per host, nothing kept per
URL besides the URL itself. This module is the *order* over it: BFS's
key is (level, discovery), and since a host's queue is FIFO and URLs are
discovered level by level, the host's head is always its next URL. Ids
come from a counter (the design paper's queue position), levels are
counters too (urllist/levels.py), and a processed URL is forgotten.

What the order adds is *which host goes next*, so that a polite crawl is
also a fast one (Mercator's back queues):

- Hosts with work wait in a heap by the time they may next start a request.
  That time is not this module's to decide: ``Readiness`` (the politeness
  state, built by the Controller and shared with GetPage) answers it
  without blocking. ``pop(n, now)`` moves the hosts whose time has come to
  a heap by their head's id (the BFS key), takes the smallest, and
  *reserves* a request slot on it (``try_start``) before handing out its
  URL, so the fetch thread never waits for the host. Which ready host goes
  first thus depends on what is queued, not on the history of the heaps:
  a frontier restored from the journal hands out what the one it replaces
  would have. ``next_ready(now)`` says how long the loop may sleep.
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
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Protocol

from urllist.journal import queued
from urllist.levels import Levels
from urllist.queued import QueuedUrl
from urllist.storage import HostQueues, MemoryQueues

SPECULATIVE = -1   # the level of a speculative item, and the lane it waits in
NOT_SCHEDULED = (0.0, 0)   # a host in no heap: matches no entry's seq (seqs start at 1)


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


class HostFrontier:
    """Breadth-first order over per-host queues, handed out host by host when
    each host is ready. Not thread-safe: the Controller's loop alone calls it."""

    def __init__(self, host_of: Callable[[str], str], readiness: Readiness,
                 max_ahead: int = 0, storage: HostQueues | None = None) -> None:
        self._host_of = host_of
        self._readiness = readiness
        self._max_ahead = max_ahead
        self._waiting = storage if storage is not None else MemoryQueues()
        self._levels = Levels()
        self._not_before: dict[str, float] = {}    # host -> earliest start of its requeued head
        # Hosts by lane (their head's level, or SPECULATIVE): waiting for their
        # time, and ready (by their head's id). An entry is live while its seq
        # is the host's in _scheduled; a stale one is dropped when it surfaces.
        self._later: dict[int, list[tuple[float, int, str]]] = {}   # lane -> (time, seq, host)
        self._ready: dict[int, list[tuple[int, int, str]]] = {}     # lane -> (head id, seq, host)
        self._scheduled: dict[str, tuple[float, int]] = {}          # host -> (time, seq) of its entry
        self._seq = 0
        self._reserved: dict[int, str] = {}        # id handed out -> host whose slot it holds
        self._ahead = 0                            # handed out, of the level after the open one, not done
        self._speculative: dict[str, list[QueuedUrl]] = {}   # host -> speculative items, FIFO
        self._withdrawn: set[int] = set()                   # speculative ids no longer wanted
        self._stalled: set[str] = set()                     # hosts with work whose slots were busy
        self._spec_seq = 0
        self._waiting_by_level: Counter[int] = Counter()   # URLs in the storage, per level
        # URLs the crawl may still hand out (--max-pages); None: no limit.
        # The open level's go first: fetching ahead spends only what they
        # leave, so no page is fetched for a level that the budget keeps
        # from ever closing (it could never be recorded).
        self.budget: int | None = None

    # -- the total queue, as counters ------------------------------------------
    @property
    def level_flags(self) -> tuple[int, ...]:
        return self._levels.flags

    @property
    def current_level(self) -> int:
        """The open level: the one being processed now."""
        return self._levels.current

    @property
    def finished_levels(self) -> int:
        return self._levels.finished

    @property
    def next_id(self) -> int:
        """The id the next pushed URL must carry: URLs queued so far."""
        return self._levels.total

    def __len__(self) -> int:
        """The total queue's length: every URL ever queued."""
        return self._levels.total

    def storage_stats(self) -> dict[str, int]:
        """What the storage holds: RAM and disk bytes, hosts, URLs spilled."""
        return {**self._waiting.stats(), "waiting": len(self._waiting)}

    def close(self) -> None:
        """Give back the storage's files (a crawl's end; they vanish with the
        process anyway)."""
        self._waiting.close()

    def push(self, items: Iterable[QueuedUrl], taken: frozenset[int] = frozenset()) -> None:
        """Append new URLs; those in ``taken`` count as handed out already
        (their page was fetched before it was queued, see ``speculate``)."""
        for item in items:
            if item.id != self._levels.total:
                raise ValueError(f"id {item.id} does not continue the queue at {self._levels.total}")
            self._levels.add(item.level)
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

    def resume(self, journal_path, done_ids: set[int]) -> None:
        """Rebuild after a restart from the crawl's journal (urllist/journal.py),
        streamed: the URLs done are counted, not held."""
        self.restore(queued(journal_path), done_ids)

    def restore(self, items: Iterable[QueuedUrl], done_ids: set[int]) -> None:
        """Rebuild after a restart from the whole total queue, streamed in id
        order, and the ids processed (levels 0..c-1 and part of c, since
        commits go in level order). Only URLs not processed are kept."""
        if self._levels.total:
            raise ValueError("restore() needs an empty frontier")
        for item in items:
            self._levels.add(item.level)
            if item.id in done_ids:
                self._levels.done(item.level)
            else:
                self._wait(item, self._host_of(item.url))
        while self._levels.open_next():
            pass

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
            self._promote(k, now)
            heap = self._ready.get(k)
            while len(items) < n and (k != level + 1 or (self._ahead < self._max_ahead
                                                         and ahead_room > 0)):
                if self._first_live(heap) is None:
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
        lanes = [level, SPECULATIVE] + ([level + 1] if self._ahead < self._max_ahead else [])
        times = [t for t in map(self._lane_time, lanes) if t is not None]
        return min(times) if times else None

    def _lane_time(self, lane: int) -> float | None:
        """When the lane's first host may start (one ready already: its time)."""
        entry = self._first_live(self._ready.get(lane))
        if entry is not None:
            return self._scheduled[entry[2]][0]
        entry = self._first_live(self._later.get(lane))
        return entry[0] if entry is not None else None

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
        self._waiting_by_level[item.level] += 1
        self._waiting.put_back(host, item)
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
        """item is fully processed (its children were pushed before this
        call): counted, and forgotten."""
        self._levels.done(item.level)   # (items of a level are done only once it is open)
        self._close_levels()

    def exhausted(self) -> bool:
        """Every queued URL handed out and processed."""
        return self._levels.exhausted()

    # -- inside -------------------------------------------------------------------
    def _wait(self, item: QueuedUrl, host: str) -> None:
        """Append item to host's queue (and schedule the host if it was idle)."""
        self._waiting_by_level[item.level] += 1
        self._waiting.append(host, item)
        if self._waiting.waiting(host) == 1:
            self._scheduled.pop(host, None)   # it may wait in the speculative lane
            self._schedule(host)

    def _schedule(self, host: str) -> None:
        """Put host in the heap of its head's level at the time it may start;
        nowhere when it has nothing waiting or all its slots are busy."""
        if host in self._scheduled:
            return
        head = self._waiting.head(host)
        if head is None and not self._speculative.get(host):
            return
        ready = ready_time(self._readiness, self._not_before, self._stalled, host)
        if ready is None:
            return
        self._seq += 1
        self._scheduled[host] = (ready, self._seq)
        lane = head[0] if head is not None else SPECULATIVE
        heapq.heappush(self._later.setdefault(lane, []), (ready, self._seq, host))

    def _promote(self, lane: int, now: float) -> None:
        """The lane's hosts whose time has come move to its ready heap, by
        their head's id (speculative ones in the order they were scheduled)."""
        later = self._later.get(lane)
        while later and later[0][0] <= now:
            _, seq, host = heapq.heappop(later)
            if self._scheduled.get(host, NOT_SCHEDULED)[1] == seq:
                head = self._waiting.head(host)
                key = head[1] if head is not None else seq
                heapq.heappush(self._ready.setdefault(lane, []), (key, seq, host))

    def _take(self, entry: tuple[float, int, str], now: float) -> QueuedUrl | None:
        """The head URL of the entry's host, with a slot reserved; None if the
        entry is stale or the host turns out not to be ready."""
        _, seq, host = entry
        if self._scheduled.get(host, NOT_SCHEDULED)[1] != seq:
            return None
        del self._scheduled[host]
        if not self._waiting.waiting(host):
            return self._take_speculative(host, now)
        if not self._readiness.try_start(host, now):
            self._schedule(host)   # its state moved on (a hold-off): ask again
            return None
        item = self._waiting.take(host)
        self._not_before.pop(host, None)
        self._waiting_by_level[item.level] -= 1
        self._reserved[item.id] = host
        self._schedule(host)   # per-host > 1: it may have another slot
        return item

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

    def _first_live(self, heap: list | None) -> tuple | None:
        """The heap's first live entry (stale ones are dropped)."""
        while heap and self._scheduled.get(heap[0][2], NOT_SCHEDULED)[1] != heap[0][1]:
            heapq.heappop(heap)
        return heap[0] if heap else None

    def _close_levels(self) -> None:
        while self._levels.open_next():
            self._ahead = 0   # what was fetched ahead belongs to the open level now

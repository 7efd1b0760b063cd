"""URL_List for crawl orders other than breadth-first (``--order``): the
same per-host queues and politeness as urllist.hosts, but *which* URL goes
next is an order's score (urllist.orders), and levels are corrected as the
graph is discovered.

Which URL: every host keeps a heap of its waiting URLs by priority; hosts
whose politeness lets them start now are in one heap by their best URL's
priority, the others in a heap by the time they may start. ``pop`` moves
the hosts whose time has come, then takes the best ready host's best URL
(a slot reserved on the host first, as HostFrontier does), so the order
decides *which*, politeness *when*, and no fetch thread waits for a host.
An order may re-score URLs at any time (``rescore``); heap entries are
stamped, and a stale one is dropped when it surfaces.

Levels: without a level barrier a URL can be found first by a long path
and later by a shorter one. ``level`` here is always the shortest link
distance from a seed in the graph discovered so far: a link from a page at
level L to a URL known at a deeper level lowers it to L + 1 and, if that
page was fetched, the lowering goes on along its recorded out-links (a
breadth-first relaxation, each URL lowered at most once per level). With
``max_depth``, a URL first found beyond it is known but deferred, and
queued once a shorter path brings it within the limit.
"""
from __future__ import annotations

import heapq
from array import array
from collections import deque
from collections.abc import Callable, Iterable

from urllist.hosts import Readiness, ready_time
from urllist.journal import ScoredPage, cut_uncommitted_tail, queue_and_scores
from urllist.queued import QueuedUrl, TotalQueue

DEFERRED, WAITING, TAKEN, DONE = 0, 1, 2, 3


class OrderedFrontier(TotalQueue):
    """The total queue handed out best-first by an order's priorities,
    host by host when each host is ready. Not thread-safe: the Controller's
    loop alone calls it."""

    def __init__(self, host_of: Callable[[str], str], readiness: Readiness, order,
                 max_depth: int = 0, default_window: int = 1) -> None:
        self._host_of = host_of
        self._readiness = readiness
        self.order = order
        self._max_depth = max_depth
        self._queue: list[QueuedUrl] = []
        self._ids: dict[str, int] = {}             # url -> id, for links to known URLs
        self.levels = array("i")                   # id -> shortest level known now
        self._state = bytearray()                  # id -> DEFERRED / WAITING / TAKEN / DONE
        self._stamp = array("i")                   # id -> its live heap entry's stamp
        self._out: dict[int, array] = {}           # fetched id -> ids it links to
        self._urls: dict[str, list] = {}           # host -> heap of (-priority, id, stamp): ties by id
        self._all: list = []                       # the same entries, every host's (for window=K)
        # (-best priority, its id: ties by id, seq, host) and (time it may start, 0, seq, host)
        self._ready: list[tuple[float, int, int, str]] = []
        self._later: list[tuple[float, int, int, str]] = []
        self._entry: dict[str, tuple] = {}         # host -> (seq, key) of its live heap entry
        self._stalled: set[str] = set()            # hosts with work, all slots busy
        self._reserved: dict[int, str] = {}        # id handed out -> host whose slot it holds
        self._not_before: dict[str, float] = {}
        self._moved: dict[int, str] = {}           # id -> host its fetch goes on at (a redirect)
        self._seq = 0
        self._open = 0                             # queued (not deferred) and not done
        self.corrections = 0                       # levels lowered after a URL was found
        self._window = window_of(order, default_window)

    # -- the total queue ----------------------------------------------------
    @property
    def level_flags(self) -> tuple[int, ...]:
        return ()   # no level is ever closed early: a shorter path may still appear

    @property
    def current_level(self) -> int:
        return 1 << 30   # pages are processed as they come: none is parked

    @property
    def finished_levels(self) -> int:
        return 0

    @property
    def deferred(self) -> int:
        """URLs known but beyond --max-depth by every path found."""
        return sum(1 for s in self._state if s == DEFERRED)

    def id_of(self, url: str) -> int | None:
        return self._ids.get(url)

    def push(self, items: Iterable[QueuedUrl], taken: frozenset[int] = frozenset()) -> None:
        for item in items:
            if item.id != len(self._queue):
                raise ValueError(f"id {item.id} does not continue the queue at {len(self._queue)}")
            self._queue.append(item)
            self._ids[item.url] = item.id
            self.levels.append(item.level)
            self._stamp.append(0)
            self._state.append(DEFERRED)
            self.order.added(item)
            if self._within_depth(item.level):
                self._enter(item.id)

    def resume(self, journal_path, done_ids: set[int]) -> None:
        """Rebuild after a restart from the crawl's journal.

        An order's state (levels lowered along out-links, PageRank's
        in-links, OPIC's cash, best-first's and shark's scores, aco's
        pheromone) is a function of the pages it heard of, in the order it
        heard of them. So the journal keeps, for each page, what the order
        heard (a ``P`` line, written before the page's index row), and the
        committed pages are replayed, in the order their lines were written,
        through the same calls (``restore``).

        One thing is cut first: the children journaled by a page that was
        being committed when the crawl stopped. The page is fetched again,
        and its children are queued again then, where the uninterrupted
        crawl queued them; left in the queue they would be scored (and could
        be fetched) before the page that found them."""
        cut_uncommitted_tail(journal_path, done_ids)
        items, scored = queue_and_scores(journal_path)
        self.restore(items, done_ids, scored)

    def restore(self, items: list[QueuedUrl], done_ids: set[int],
                scored: Iterable[tuple[int, ScoredPage]] = ()) -> None:
        """Rebuild after a restart by replaying the journal's events in the
        order they were written: URLs queued, and the committed pages
        (``scored``: each with the queue's length when it was journaled, and
        what the order heard of it) through the calls the crawl made, its
        links then the order's page event. The levels, the order's scores and
        the heaps come out as the uninterrupted crawl had them after its last
        committed page."""
        replayed = 0
        for queued, page in scored:
            if page.id not in done_ids:
                continue
            self.push(items[len(self._queue):queued])
            self.linked(page.id, page.targets)
            if not page.duplicate:
                self.order.page(self._queue[page.id], page.targets, page.anchors, page.relevance)
            self._close(page.id)
            replayed += 1
        self.push(items[len(self._queue):])
        if replayed != len(done_ids):
            raise ValueError(f"it holds what the order heard of {replayed} of the "
                             f"{len(done_ids)} committed pages, so the order cannot be rebuilt")

    # -- links and levels ----------------------------------------------------
    def linked(self, parent_id: int, targets: list[int]) -> None:
        """Page parent_id (fetched) links to the known ids ``targets``."""
        self._out[parent_id] = array("q", targets)
        level = self.levels[parent_id] + 1
        self._relax([(t, level) for t in targets])

    def _relax(self, start: list[tuple[int, int]]) -> None:
        pending = deque(start)
        while pending:
            item_id, level = pending.popleft()
            if level >= self.levels[item_id]:
                continue
            self.levels[item_id] = level
            self.corrections += 1
            if self._state[item_id] == DEFERRED and self._within_depth(level):
                self._enter(item_id)
            for target in self._out.get(item_id, ()):
                pending.append((target, level + 1))

    def _within_depth(self, level: int) -> bool:
        return not self._max_depth or level <= self._max_depth

    # -- priorities -------------------------------------------------------------
    def rescore(self, ids: Iterable[int]) -> None:
        """The order changed these URLs' priorities."""
        for item_id in ids:
            if self._state[item_id] == WAITING:
                self._push_url(item_id)

    def _enter(self, item_id: int) -> None:
        self._state[item_id] = WAITING
        self._open += 1
        self._push_url(item_id)

    def _host(self, item_id: int) -> str:
        return self._moved.get(item_id) or self._host_of(self._queue[item_id].url)

    def _push_url(self, item_id: int) -> None:
        host = self._host(item_id)
        self._stamp[item_id] += 1
        key = -self.order.priority(item_id)
        entry = (key, item_id, self._stamp[item_id])
        heapq.heappush(self._urls.setdefault(host, []), entry)
        if self._window:
            heapq.heappush(self._all, entry)
        entry = self._entry.get(host)
        if entry is None:
            self._schedule(host)
        elif entry[1] is not None and key < entry[1]:
            self._enqueue_ready(host, key)   # better than its place in the ready heap says

    def _best(self, host: str) -> float | None:
        """-priority of host's best waiting URL; stale entries dropped."""
        heap = self._urls.get(host)
        while heap and (self._state[heap[0][1]] != WAITING or heap[0][2] != self._stamp[heap[0][1]]):
            heapq.heappop(heap)
        if not heap:
            self._urls.pop(host, None)
            return None
        return heap[0][0]

    # -- hosts ---------------------------------------------------------------------
    # A host with waiting URLs is in one of the two heaps, or stalled (all its
    # slots busy: asked again when a fetch ends). _entry[host] = (seq, key):
    # its live entry, key None while it waits in _later.
    def _schedule(self, host: str, now: float | None = None) -> None:
        if host in self._entry:
            return
        best = self._best(host)
        if best is None:
            return
        ready = ready_time(self._readiness, self._not_before, self._stalled, host)
        if ready is None:
            return
        if now is not None and ready <= now:
            self._enqueue_ready(host, best)
            return
        self._seq += 1
        self._entry[host] = (self._seq, None)
        heapq.heappush(self._later, (ready, 0, self._seq, host))

    def _enqueue_ready(self, host: str, key: float) -> None:
        self._seq += 1
        self._entry[host] = (self._seq, key)
        self._best(host)   # its stale entries dropped: the top is its best URL
        heapq.heappush(self._ready, (key, self._urls[host][0][1], self._seq, host))

    def _promote(self, now: float) -> None:
        """Hosts whose time has come move to the ready heap, by their best URL."""
        while self._later and self._later[0][0] <= now:
            _, _, seq, host = heapq.heappop(self._later)
            if self._entry.get(host, (None,))[0] != seq:
                continue
            del self._entry[host]
            best = self._best(host)
            if best is not None:
                self._enqueue_ready(host, best)

    def _live(self, heap: list) -> tuple | None:
        while heap and self._entry.get(heap[0][3], (None,))[0] != heap[0][2]:
            heapq.heappop(heap)
        return heap[0] if heap else None

    # -- handing out ------------------------------------------------------------
    def pop(self, n: int, now: float) -> list[QueuedUrl]:
        """Up to n URLs, best first among the hosts that may start now, each
        with a slot reserved on its host."""
        self._promote(now)
        items: list[QueuedUrl] = []
        floor = self._floor()
        while len(items) < n:
            top = self._live(self._ready)
            if top is None or (floor is not None and top[0] > floor and self._best(top[3]) > floor):
                break   # the best ready host's best is not among the window's: wait for theirs
            if self.order.explores:
                self._draw()   # the order's pick may go to the top of the ready heap
            key, _, _, host = heapq.heappop(self._ready)
            del self._entry[host]
            best = self._best(host)
            if best is None:
                continue
            if best > key != float("-inf"):   # its best got worse since it was placed
                self._enqueue_ready(host, best)
                continue
            if not self._readiness.try_start(host, now):
                self._schedule(host)   # its state moved on (a hold-off): ask again
                continue
            item_id = heapq.heappop(self._urls[host])[1]
            self._state[item_id] = TAKEN
            self._reserved[item_id] = host
            self._not_before.pop(host, None)
            self._schedule(host, now)   # per-host > 1: it may have another slot now
            items.append(self._queue[item_id])
        return items

    def _draw(self) -> None:
        """An order that explores (aco) picks among the ready hosts' best URLs
        (drawn only when the heap holds two hosts or more: with one host
        the draws change nothing, so its fetch order does not hang on them)."""
        if len(self._ready) < 2 or not self.order.explore():
            return
        live = sorted(host for _, _, seq, host in self._ready
                      if self._entry.get(host, (None,))[0] == seq and self._best(host) is not None)
        if len(live) < 2:
            return
        pick = live[self.order.choose([self._urls[host][0][1] for host in live])]
        self._enqueue_ready(pick, float("-inf"))

    def out_links(self) -> dict[int, array]:
        """Fetched id -> the known ids it links to."""
        return self._out

    def _floor(self) -> float | None:
        """With window=K: the key of the K-th best URL not done yet (waiting,
        or handed out and not recorded); None: no floor."""
        if not self._window:
            return None
        top = []
        while self._all and len(top) < self._window:
            entry = heapq.heappop(self._all)
            if self._state[entry[1]] in (WAITING, TAKEN) and entry[2] == self._stamp[entry[1]]:
                top.append(entry)
        for entry in top:
            heapq.heappush(self._all, entry)
        return top[-1][0] if len(top) == self._window else None

    def next_ready(self, now: float) -> float | None:
        top, floor = self._live(self._ready), self._floor()
        if top is not None and (floor is None or top[0] <= floor or self._best(top[3]) <= floor):
            return now
        later = self._live(self._later)
        return later[0] if later else None   # else a fetch ending wakes a window's host

    def fetched(self, item: QueuedUrl) -> None:
        host = self._reserved.pop(item.id, None)
        if host is not None:
            self._schedule(host)
        for stalled in list(self._stalled):
            self._schedule(stalled)

    def requeue(self, item: QueuedUrl, host: str, not_before: float | None = None) -> None:
        """Hand item out again later, on ``host`` (a redirect may move it), not
        before not_before."""
        previous = self._reserved.pop(item.id, None)
        if host != self._host_of(item.url):
            self._moved[item.id] = host
        if not_before is not None:
            self._not_before[host] = max(not_before, self._not_before.get(host, not_before))
        self._state[item.id] = WAITING
        self._entry.pop(host, None)   # its time may have changed: schedule it anew
        self._push_url(item.id)
        if previous is not None and previous != host:
            self._schedule(previous)

    def done(self, item: QueuedUrl) -> None:
        self._close(item.id)
        self._moved.pop(item.id, None)

    def _close(self, item_id: int) -> None:
        if self._state[item_id] in (WAITING, TAKEN):
            self._open -= 1
        self._state[item_id] = DONE

    def exhausted(self) -> bool:
        return self._open == 0


def window_of(order, default: int) -> int:
    """The order's window=K, -1 read as ``default`` (and written back, so
    stats.json shows what the crawl used)."""
    params = getattr(order, "p", {})
    window = int(params.get("window", 0))
    if window < 0:
        window = default
        params["window"] = float(window)
    return window

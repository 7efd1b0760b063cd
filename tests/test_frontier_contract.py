"""One contract over every frontier: breadth-first (urllist.hosts.HostFrontier)
over each storage (RAM, and disk with a RAM budget so small that it
spills after a few URLs), and urllist.ordered.OrderedFrontier under every
--order (over its own RAM structures). Each test runs against the real
politeness gate on a simulated clock."""
from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Callable

import pytest

from getpage.politeness import PolitenessGate
from urllist import HostFrontier, QueuedUrl
from urllist.diskqueues import DiskQueues
from urllist.journal import ScoredPage
from urllist.orders import NAMES, make_order
from urllist.ordered import OrderedFrontier
from urllist.storage import MemoryQueues

TINY_RAM = 700          # bytes: a disk storage spills every three or four URLs
TINY_SEGMENT = 2048     # bytes: segments fill, roll over and are dropped within a test


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def host_of(url):
    return url.split("/")[2]


@dataclass
class Kind:
    name: str
    build: Callable   # (gate, max_ahead, tmp_path) -> frontier
    bfs: bool

    def make(self, gate, tmp_path, max_ahead=0):
        return self.build(gate, max_ahead, tmp_path)


def bfs_over(storage):
    def build(gate, max_ahead, tmp_path):
        return HostFrontier(host_of, gate, max_ahead=max_ahead, storage=storage(tmp_path))
    return build


def ordered(name):
    def build(gate, max_ahead, tmp_path):
        order = make_order(name)
        frontier = OrderedFrontier(host_of, gate, order, 0, 0)
        order.bind(frontier)
        return frontier
    return build


KINDS = [Kind("bfs-memory", bfs_over(lambda tmp: MemoryQueues()), True),
         Kind("bfs-disk", bfs_over(lambda tmp: DiskQueues(tmp / "state", TINY_RAM, TINY_SEGMENT)),
              True)]
KINDS += [Kind(f"{name}-memory", ordered(name), False) for name in NAMES if name != "bfs"]


@pytest.fixture(params=KINDS, ids=[kind.name for kind in KINDS])
def kind(request):
    return request.param


def gate_of(delay=0.0, per_host=1):
    clock = Clock()
    return PolitenessGate(delay, per_host, clock=clock, sleep=lambda s: None)


def seeds(urls):
    return [QueuedUrl(i, url, 0, None) for i, url in enumerate(urls)]


def drain(frontier, gate, now=0.0):
    """Hand out everything left, one batch at a time, each fetched and
    processed at once; the ids in hand-out order."""
    order = []
    while not frontier.exhausted():
        batch = frontier.pop(4, now)
        assert batch, "frontier not exhausted but hands out nothing"
        for item in batch:
            order.append(item.id)
            gate.release(host_of(item.url))
            frontier.fetched(item)
            frontier.done(item)
    return order


def test_ids_continue_the_queue_and_len_counts_every_url(kind, tmp_path):
    frontier = kind.make(gate_of(), tmp_path)
    assert frontier.next_id == 0 and len(frontier) == 0
    frontier.push(seeds(["http://a/0", "http://b/0", "http://a/1"]))
    assert frontier.next_id == 3 and len(frontier) == 3
    with pytest.raises(ValueError):
        frontier.push([QueuedUrl(7, "http://a/7", 1, 0)])
    assert frontier.next_id == 3
    frontier.push([QueuedUrl(3, "http://c/0", 1, 0)])
    assert frontier.next_id == 4 and len(frontier) == 4


def test_pop_takes_one_url_per_ready_host_and_waits_for_the_delay(kind, tmp_path):
    gate = gate_of(delay=1.0)
    frontier = kind.make(gate, tmp_path)
    frontier.push(seeds(["http://a/0", "http://a/1", "http://b/0"]))
    first = frontier.pop(8, 0.0)
    assert sorted(item.id for item in first) == [0, 2]   # one per host, a's first
    assert frontier.pop(8, 0.0) == [] and frontier.next_ready(0.0) is None   # both slots busy
    gate.release("a")
    frontier.fetched(next(item for item in first if item.id == 0))
    assert frontier.pop(8, 0.5) == []                     # a's delay is not over
    assert frontier.next_ready(0.5) == pytest.approx(1.0)
    assert [item.id for item in frontier.pop(8, 1.0)] == [1]


def test_requeue_goes_first_on_its_host_not_before_its_time(kind, tmp_path):
    gate = gate_of()
    frontier = kind.make(gate, tmp_path)
    frontier.push(seeds(["http://a/0", "http://a/1", "http://a/2"]))
    [item] = frontier.pop(8, 0.0)
    assert item.id == 0
    gate.release("a")
    frontier.requeue(item, "a", not_before=5.0)           # a retry after a backoff
    assert frontier.pop(8, 1.0) == [] and frontier.next_ready(1.0) == 5.0
    assert [i.id for i in frontier.pop(8, 5.0)] == [0]
    gate.release("a")
    frontier.requeue(item, "b")                           # a redirect that goes on at host b
    taken = frontier.pop(8, 5.0)
    assert sorted(i.id for i in taken) == [0, 1]          # b for it, a free for its next


def test_bfs_requeued_urls_go_back_in_id_order_among_a_queue_on_disk(kind, tmp_path):
    """Ready hosts go by their head's id, so with every host always free the
    hand-out is id order; URLs put back (one on another host: a redirect)
    take their place in it, also behind URLs already spilled to disk."""
    if not kind.bfs:
        pytest.skip("the other orders hand out by priority")
    gate = gate_of(per_host=100)
    frontier = kind.make(gate, tmp_path)
    frontier.push(seeds([f"http://{'ab'[i % 2]}/{i}" for i in range(20)]))
    first, second = frontier.pop(2, 0.0)
    frontier.requeue(second, "a")                         # b's URL goes on at a
    frontier.requeue(first, "a")
    handed = []
    while not frontier.exhausted():
        [item] = frontier.pop(1, 0.0)
        handed.append(item.id)
        frontier.fetched(item)
        frontier.done(item)
    assert handed == list(range(20))
    if kind.name == "bfs-disk":
        assert frontier.storage_stats()["spilled"] > 0


def test_exhausted_once_every_url_is_done(kind, tmp_path):
    gate = gate_of()
    frontier = kind.make(gate, tmp_path)
    frontier.push(seeds(["http://a/0", "http://b/0"]))
    items = frontier.pop(8, 0.0)
    assert len(items) == 2 and not frontier.exhausted()
    frontier.done(items[0])
    assert not frontier.exhausted()
    frontier.done(items[1])
    assert frontier.exhausted() and frontier.pop(8, 0.0) == []


def grow(rng, frontier, item, hosts, width):
    """item's children: width new URLs on random hosts, one level deeper."""
    first = frontier.next_id
    children = [QueuedUrl(first + k, f"http://{rng.choice(hosts)}/{first + k}", item.level + 1,
                          item.id) for k in range(width)]
    frontier.push(children)
    return children


def order_heard(frontier, item, children) -> ScoredPage:
    """What an --order crawl tells its frontier and order of a page whose
    links are its new children (controller/commit.py, OrderedCommit)."""
    targets, anchors = [child.id for child in children], [0.0] * len(children)
    frontier.linked(item.id, targets)
    frontier.order.page(item, targets, anchors, None)
    return ScoredPage(item.id, False, None, targets, anchors)


def crawl(frontier, gate, rng, hosts, depth=3, width=3):
    """A breadth-first crawl: each page at a level < depth queues width
    children. The items in the order they were handed out."""
    frontier.push(seeds([f"http://{h}/s" for h in hosts[:3]]))
    handed = []
    while not frontier.exhausted():
        batch = frontier.pop(3, 0.0)
        assert batch
        for item in batch:
            handed.append(item)
            gate.release(host_of(item.url))
            frontier.fetched(item)
            if item.level < depth:
                grow(rng, frontier, item, hosts, width)
            frontier.done(item)
    return handed


def test_bfs_hands_out_level_by_level_and_fifo_per_host(kind, tmp_path):
    if not kind.bfs:
        pytest.skip("levels are corrected, not barriers, in the other orders")
    gate = gate_of()
    frontier = kind.make(gate, tmp_path)
    hosts = [f"h{k}" for k in range(6)]
    handed = crawl(frontier, gate, random.Random(3), hosts)
    levels = [item.level for item in handed]
    assert levels == sorted(levels)                       # no level before the last one is done
    assert sorted(item.id for item in handed) == list(range(len(frontier)))
    for host in hosts:
        ids = [item.id for item in handed if host_of(item.url) == host]
        assert ids == sorted(ids), host                   # a host's URLs in discovery order
    per_level = [levels.count(k) for k in range(4)]
    assert frontier.level_flags == (3, 3 + 9, 3 + 9 + 27, 3 + 9 + 27 + 81) == tuple(
        sum(per_level[:k + 1]) for k in range(4))
    assert frontier.finished_levels == 4 and frontier.current_level == 3
    stats = frontier.storage_stats()
    assert stats["waiting"] == stats["ram_bytes"] == stats["disk_bytes"] == 0
    if kind.name == "bfs-disk":   # it did spill, to more than one segment, and gave all back
        assert stats["spilled"] > len(handed) // 2 and stats["peak_disk_bytes"] > TINY_SEGMENT


def test_disk_storage_hands_out_what_memory_storage_does(tmp_path):
    runs = []
    for storage in (MemoryQueues(), DiskQueues(tmp_path, TINY_RAM, TINY_SEGMENT)):
        gate = gate_of()
        frontier = HostFrontier(host_of, gate, storage=storage)
        runs.append([(i.id, i.url, i.level, i.parent_id)
                     for i in crawl(frontier, gate, random.Random(9), [f"h{k}" for k in range(5)])])
    assert runs[0] == runs[1]


def test_next_level_waits_for_the_open_one(kind, tmp_path):
    if not kind.bfs:
        pytest.skip("no level barrier in the other orders")
    frontier = kind.make(gate_of(per_host=10), tmp_path)
    frontier.push(seeds(["http://a/0", "http://b/0"]))
    first = frontier.pop(10, 0.0)
    frontier.push([QueuedUrl(2, "http://a/1", 1, 0), QueuedUrl(3, "http://c/1", 1, 0)])
    frontier.done(first[0])
    assert frontier.pop(10, 0.0) == [] and frontier.current_level == 0
    frontier.done(first[1])
    assert frontier.current_level == 1 and frontier.level_flags == (2, 4)
    assert sorted(i.id for i in frontier.pop(10, 0.0)) == [2, 3]


def test_restore_continues_with_the_same_hand_out(kind, tmp_path):
    gate = gate_of()
    frontier = kind.make(gate, tmp_path / "first")
    hosts = ["a", "b", "c"]
    frontier.push(seeds([f"http://{h}/s" for h in hosts]))
    queued = list(seeds([f"http://{h}/s" for h in hosts]))
    done, events = set(), []
    rng = random.Random(5)
    for _ in range(2):   # two batches: level 0, then part of level 1
        for item in frontier.pop(3, 0.0):
            gate.release(host_of(item.url))
            frontier.fetched(item)
            children = grow(rng, frontier, item, hosts, 4)
            queued += children
            if not kind.bfs:
                events.append((len(queued), order_heard(frontier, item, children)))
            frontier.done(item)
            done.add(item.id)
    fresh_gate = gate_of()
    fresh = kind.make(fresh_gate, tmp_path / "second")
    if kind.bfs:
        fresh.restore((item for item in queued), done)   # an iterator: streamed
    else:   # an order is rebuilt from what it heard of each page, as the journal keeps it
        fresh.restore(queued, done, events)
    assert (fresh.next_id, len(fresh), fresh.level_flags, fresh.current_level,
            fresh.finished_levels) == (frontier.next_id, len(frontier), frontier.level_flags,
                                       frontier.current_level, frontier.finished_levels)
    assert drain(fresh, fresh_gate) == drain(frontier, gate)

"""HostFrontier, the per-host scheduler, on a simulated clock: the real
politeness gate and the real frontier, fetches that take simulated time, and
the Controller's rule for pages fetched ahead (parked until their level
closes). Checks what the design promises: no two starts on one host closer
than the delay, levels equal to a BFS over the graph, and a crawl as fast as
politeness allows."""
import heapq
import random
from collections import deque

import pytest

from controller.wiring import AHEAD_PER_WORKER, SPECULATE_PER_WORKER
from getpage.politeness import PolitenessGate
from urllist import HostFrontier, QueuedUrl


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def site_graph(rng, hosts, sizes, branching):
    """{url: [links]}: each host a tree of its own branching, plus links home
    and cross links to other hosts' roots."""
    graph = {}
    for h, size in zip(hosts, sizes):
        b = branching[h]
        for i in range(size):
            kids = [f"http://{h}/{c}" for c in range(b * i + 1, min(b * i + b + 1, size))]
            other = rng.choice(hosts)
            graph[f"http://{h}/{i}"] = kids + [f"http://{h}/0", f"http://{other}/0"]
    return graph


def bfs_levels(graph, seeds):
    levels = {s: 0 for s in seeds}
    todo = deque(seeds)
    while todo:
        url = todo.popleft()
        for link in graph[url]:
            if link not in levels:
                levels[link] = levels[url] + 1
                todo.append(link)
    return levels


def host_of(url):
    return url.split("/")[2]


def simulate(graph, seeds, *, delay, workers, fetch_seconds, max_ahead, per_host=1,
             speculate=0):
    """Run the crawl loop on the simulated clock; (levels, starts per host, end time).
    ``speculate``: at most this many URLs fetched before they are queued (found
    on pages fetched ahead, or on such pages themselves), as the Controller does."""
    clock = Clock()
    gate = PolitenessGate(delay, per_host, clock=clock, sleep=lambda s: None)
    frontier = HostFrontier(host_of, gate, max_ahead=max_ahead)
    seen = set(seeds)
    frontier.push(QueuedUrl(i, url, 0, None) for i, url in enumerate(seeds))
    running, parked, starts, levels = [], [], {}, {}
    spec = {}   # url -> its speculative item (waiting or fetching) or "fetched"

    def offer(links):
        for url in links:
            if len(spec) < speculate and url not in seen and url not in spec:
                spec[url] = frontier.speculate(url, host_of(url))

    def arrived(item):
        """A fetch ended: park it, process it, or keep a speculative one."""
        if item.id < 0:
            spec[item.url] = "fetched"
            offer(graph[item.url])
        elif item.level > frontier.current_level:
            parked.append(item)            # fetched ahead: processed once its level opens
            offer(graph[item.url])
        else:
            process(item)

    def process(item):
        levels[item.url] = item.level
        new = [link for link in graph[item.url] if link not in seen]
        seen.update(new)
        first = frontier.next_id
        children = [QueuedUrl(first + k, url, item.level + 1, item.id) for k, url in enumerate(new)]
        taken = {c.id for c in children if spec.get(c.url) == "fetched"}
        for c in children:
            if c.url in spec and c.id not in taken:
                frontier.unspeculate(spec.pop(c.url))
        frontier.push(children, taken=frozenset(taken))
        frontier.done(item)
        for c in children:
            if c.id in taken:
                del spec[c.url]
                arrived(c)

    while not frontier.exhausted():
        for item in frontier.pop(workers - len(running), clock.now):
            starts.setdefault(host_of(item.url), []).append(clock.now)
            heapq.heappush(running, (clock.now + fetch_seconds, item.id, item))
        ready = frontier.next_ready(clock.now)
        if running and (ready is None or running[0][0] <= ready or len(running) == workers):
            clock.now, _, item = heapq.heappop(running)
            gate.release(host_of(item.url))
            frontier.fetched(item)
            arrived(item)
            while parked and frontier.current_level >= min(p.level for p in parked):
                for item in sorted(parked, key=lambda p: p.id):
                    if item.level <= frontier.current_level:
                        parked.remove(item)
                        process(item)
        elif ready is not None:
            clock.now = max(clock.now, ready)
        else:
            raise AssertionError("stuck: nothing running, nothing ready, not exhausted")
    return levels, starts, clock.now


def zipf_sites(rng, n, low=10, high=60):
    hosts = [f"h{k}.test" for k in range(n)]
    sizes = [max(low, min(high, int(high / (k + 1) ** 0.7))) for k in range(n)]
    rng.shuffle(sizes)
    return hosts, sizes, {h: rng.randint(2, 6) for h in hosts}


@pytest.mark.parametrize("seed, sites, delay, workers", [
    (1, 40, 0.2, 8), (2, 150, 0.5, 8), (3, 12, 1.0, 4), (4, 30, 0.3, 2), (5, 5, 0.0, 8)])
@pytest.mark.parametrize("max_ahead, speculate", [(0, 0), (64, 0), (64, 64)])
def test_levels_exact_and_no_host_started_twice_within_the_delay(seed, sites, delay, workers,
                                                                 max_ahead, speculate):
    rng = random.Random(seed)
    hosts, sizes, branching = zipf_sites(rng, sites)
    graph = site_graph(rng, hosts, sizes, branching)
    seeds = [f"http://{h}/0" for h in hosts]
    levels, starts, _ = simulate(graph, seeds, delay=delay, workers=workers,
                                 fetch_seconds=0.01, max_ahead=max_ahead, speculate=speculate)
    assert levels == bfs_levels(graph, seeds)
    assert sum(map(len, starts.values())) == len(levels), "a URL was fetched twice"
    for host, times in starts.items():
        gaps = [b - a for a, b in zip(times, times[1:])]
        assert not gaps or min(gaps) >= delay - 1e-9, host


@pytest.mark.parametrize("seed", [7, 1])
@pytest.mark.parametrize("sites, delay", [(40, 0.2), (150, 0.5)])
def test_many_hosts_crawl_at_the_pace_politeness_allows(sites, delay, seed):
    """With the Controller's defaults (8 threads), wall time within 5 % of the
    bound any polite crawler has: (pages of the largest site - 1) x delay.
    (Seed 7's 40 sites hold a 36-page site 29 pages wide at level 2: without
    speculative fetches its level barrier leaves the largest site idle 4 s.)"""
    rng = random.Random(seed)
    hosts, sizes, branching = zipf_sites(rng, sites)
    graph = site_graph(rng, hosts, sizes, branching)
    seeds = [f"http://{h}/0" for h in hosts]
    _, starts, end = simulate(graph, seeds, delay=delay, workers=8, fetch_seconds=0.01,
                              max_ahead=AHEAD_PER_WORKER * 8,
                              speculate=SPECULATE_PER_WORKER * 8)
    bound = (max(sizes) - 1) * delay
    assert bound / end >= 0.95, f"efficiency {bound / end:.2f}"


def test_a_host_whose_slot_is_busy_is_not_handed_out_until_its_fetch_ends():
    clock = Clock()
    gate = PolitenessGate(0.0, 1, clock=clock, sleep=lambda s: None)
    frontier = HostFrontier(host_of, gate)
    frontier.push([QueuedUrl(0, "http://a/0", 0, None), QueuedUrl(1, "http://a/1", 0, None),
                   QueuedUrl(2, "http://b/0", 0, None)])
    first = frontier.pop(8, 0.0)
    assert [i.id for i in first] == [0, 2]      # one per host
    assert frontier.pop(8, 0.0) == [] and frontier.next_ready(0.0) is None
    gate.release("a")
    frontier.fetched(first[0])
    assert [i.id for i in frontier.pop(8, 0.0)] == [1]


def test_requeue_puts_an_item_first_on_a_host_not_before_its_time():
    clock = Clock()
    gate = PolitenessGate(0.0, 1, clock=clock, sleep=lambda s: None)
    frontier = HostFrontier(host_of, gate)
    frontier.push([QueuedUrl(0, "http://a/0", 0, None), QueuedUrl(1, "http://a/1", 0, None)])
    [item] = frontier.pop(8, 0.0)
    gate.release("a")
    frontier.requeue(item, "a", not_before=5.0)       # a retry after a 5 s backoff
    assert frontier.pop(8, 1.0) == [] and frontier.next_ready(1.0) == 5.0
    assert [i.id for i in frontier.pop(8, 5.0)] == [0]
    gate.release("a")
    frontier.requeue(item, "b")                        # a redirect that goes on at host b
    taken = frontier.pop(8, 5.0)                       # b for it, and a is free for the next
    assert sorted(i.id for i in taken) == [0, 1]
    assert gate.ready_at("a") == gate.ready_at("b") == float("inf")   # both reserved


def test_the_next_level_is_handed_out_only_within_max_ahead():
    clock = Clock()
    gate = PolitenessGate(0.0, 1, clock=clock, sleep=lambda s: None)
    frontier = HostFrontier(host_of, gate, max_ahead=1)
    frontier.push([QueuedUrl(0, "http://a/0", 0, None), QueuedUrl(1, "http://b/0", 0, None)])
    a, b = frontier.pop(8, 0.0)
    gate.release("a")
    frontier.fetched(a)
    frontier.push([QueuedUrl(2, "http://c/1", 1, 0), QueuedUrl(3, "http://d/1", 1, 0)])
    frontier.done(a)                                   # level 0 still open: b is out
    ahead = frontier.pop(8, 0.0)
    assert [i.id for i in ahead] == [2]                # one of level 1, not two
    gate.release("b")
    frontier.fetched(b)
    frontier.done(b)                                   # level 0 closes
    assert frontier.current_level == 1
    assert [i.id for i in frontier.pop(8, 0.0)] == [3]


def test_level_1_urls_queued_with_the_seeds_leave_level_0_to_the_seeds():
    """Sitemap URLs are queued at level 1 before any page is fetched: level 0
    still ends with the seeds (its flag was once the whole queue, and the
    level never closed)."""
    gate = PolitenessGate(0.0, 1, clock=Clock(), sleep=lambda s: None)
    frontier = HostFrontier(host_of, gate)
    frontier.push([QueuedUrl(0, "http://a/0", 0, None)])
    frontier.push([QueuedUrl(1, "http://a/listed", 1, None), QueuedUrl(2, "http://b/listed", 1, None)])
    [seed] = [item for item in frontier.pop(8, 0.0) if item.level == 0]
    assert frontier.level_flags == (1,)
    frontier.fetched(seed)
    gate.release("a")
    frontier.done(seed)
    assert frontier.current_level == 1 and frontier.finished_levels == 1

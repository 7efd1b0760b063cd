"""Crawl orders for urllist.ordered.OrderedFrontier (``--order NAME``).

An order scores URLs; the frontier hands out the best one whose host may
start (politeness stays the frontier's and the gate's, the same for every
order). Each order hears of every URL queued (``added``) and of every page
fetched with its links (``page``), and tells the frontier which URLs it
re-scored. Parameters come from ``--order-param KEY=VALUE``.

- importance: I(P) = a*IB(P) + b*IL(P) + c/(1 + level). IB is the number of
  fetched pages linking to P (or, with pagerank_every=k, a partial PageRank
  of the graph fetched so far, recomputed every k pages and scaled to mean
  1); IL scores the URL alone: 1 if the host ends in .com, 1 if "home" is in
  the URL, and 1/(1 + number of path segments).
- opic: Abiteboul et al.'s On-line Page Importance Computation. Every page
  holds cash (the seeds share 1 each); fetching a page moves its cash, it is
  not copied: the page's history keeps it, and it is split evenly among the
  page's links and the virtual page, which gives its cash to every known
  page alike. The URL with the most cash goes first.
- best-first: R(l) = h1*R(anchor) + h2*R(parent), the link's TF-IDF
  relevance to the topic (the target's own relevance, h3, is known only
  once it is fetched, so best-first cannot use it; aco does). A URL's score
  is its best link's, in steps of resolution=0.01; equal scores go in the
  order found (on a host: the smallest id first).
- best-n-first: best-first whose scores are applied in batches of n pages
  (n = 256), as Pant et al.'s best-N-first.
- shark: Shark-search (Hersovici et al.): a link inherits delta*R(parent)
  from a relevant parent, or delta times the parent's own inherited score
  from an irrelevant one (decay along irrelevant chains), blended with its
  anchor's relevance: gamma*inherited + (1-gamma)*R(anchor).
- aco: the ant-colony order. Each link into a URL carries pheromone tau
  (tau0 at first; a new link starts with the trail that led to its page);
  a fetched page of relevance C at depth D deposits C/D on every link of its
  path from the seed, and all pheromone evaporates by rho per page. The
  next URL is chosen by the pseudo-random proportional rule: with
  probability q0 the best tau^alpha * eta^beta (eta = R(l) with h3 = the
  parent's measured relevance as the target estimate), else one drawn in
  proportion to it, from a seeded generator (seed=N) for repeatability.

Shared (``--redis``): a URL's score lives in Redis with its host's
partition, as three terms, and its priority is acc + best + c/(1 + level)
(c: importance's; a seed first, as here). The worker that fetched a page
sends each link's terms with the link (``shared_terms``): acc adds up what
each link brings, best keeps the best link's score, aux the best inherited
score. importance: a (one in-link) to acc, b*IL(P) to best; opic: the
page's cash (its acc when it was leased) split evenly among its links and
the virtual page, each link's share to acc (the virtual page's share, the
same for every known page, is dropped: it leaves their order as it is);
best-first: R(l) to best; shark: its score to best, the inherited score to
aux; best-n-first: as best-first, a URL placed by its first score and its
better ones applied every n pages acknowledged in its partition (the batch
is a partition's, not the crawl's); aco: each link's log weight,
alpha*log(trail) + beta*log(eta), to best (c 0), where the trail is the one
into the link's page with that page's deposit on it, tau0 + C/D: the
trail one machine gives the page's children at that point. A URL linked
from several pages weighs as its best link (one machine: its first
parent's trail times its best eta), and the deposit goes on the page's
own links only, not along its path back to the seed: a later page's
deposit raises no waiting URL of its ancestors' (on one machine it raises
every waiting child of each page on its path). The exploring draw is made
where the lease is, in Redis, by each partition's own generator seeded
from seed and the partition: with probability 1 - q0 a lease takes one of
the partition's ready hosts' best URLs drawn in proportion to its weight
(as on one machine, among two hosts or more). A link below the threshold
is not sent (one machine still lets it raise a known URL's eta). What
cannot be shared (``shared_refusal``): aco's rho > 0 (evaporation lowers
every waiting URL of every partition with each page fetched anywhere),
importance's pagerank_every (a PageRank of the whole graph).

Resuming: an order's state is a function of the pages it heard of, in the
order it heard of them, and of nothing else (no clock, no thread), so
OrderedFrontier.restore rebuilds it by replaying the committed pages; the
one generator, aco's, is drawn from only when two hosts compete, and is
seeded anew after each page from (seed, pages heard of), so a replay
leaves it where the uninterrupted crawl had it.
"""
from __future__ import annotations

import bisect
import itertools
import math
import random
from array import array
from urllib.parse import urlsplit

from urllist.queued import QueuedUrl

SEED_PRIORITY = 1e9   # seeds first, in every order
SEED, LISTED = -1, -2  # what Order._parent holds for a URL no page linked to
TAU_MIN = 1e-9        # aco: no link's pheromone falls below tau0 * this (MAX-MIN ant system's floor)
# Every order's: window=K hands out only URLs among the K best not yet
# recorded (waiting or being fetched; aco's exploring draws aside), so
# that a page budget is not spent on poor URLs of hosts that happen to be
# free while the best ones wait for theirs (0: never leave a ready host idle).
# The default, -1, is the crawl's --workers under a page budget (with every
# fetch thread on one of the K best, the order decides which URL and
# politeness only when; a work-conserving frontier lets politeness decide
# which too: with 8 workers and 8 hosts, each host's best goes whatever it
# scores), and 0 without one, when every page is fetched anyway.
COMMON = {"window": -1.0}


class Order:
    """The contract: what an order hears and what it answers."""
    name = ""
    needs_topic = False
    DEFAULTS: dict[str, float] = {}

    def __init__(self, params: dict[str, str] | None = None) -> None:
        self.p = {**COMMON, **self.DEFAULTS}
        for key, value in (params or {}).items():
            if key not in self.p:
                known = ", ".join(sorted(self.p))
                raise ValueError(f"{self.name} has no parameter {key!r} (it has: {known})")
            try:
                self.p[key] = float(value)
            except ValueError:
                raise ValueError(f"{self.name} parameter {key}={value!r} is not a number") from None
        self.frontier = None
        self.cpu_seconds = 0.0   # spent ordering: scoring, re-scoring, PageRank (the engine counts)
        self._parent = array("q")

    def bind(self, frontier) -> None:
        self.frontier = frontier

    def added(self, item: QueuedUrl) -> None:
        # -1: a seed (first, in every order); -2: a sitemap's URL, found
        # before any page, ranked as a link no page scored yet
        self._parent.append(item.parent_id if item.parent_id is not None
                            else SEED if item.level == 0 else LISTED)

    def page(self, item: QueuedUrl, targets: list[int], anchor: list[float],
             relevance: float | None) -> None:
        """item was fetched; targets are the ids it links to (anchor[i]: the
        relevance of the link to targets[i]'s anchor text, or 0.0)."""

    def priority(self, item_id: int) -> float:
        raise NotImplementedError

    def admits(self, anchor: float, relevance: float | None) -> bool:
        """Whether a new link (its anchor's relevance, its page's) is queued at all."""
        return True

    def explore(self) -> bool:
        """True: choose this pop by ``choose`` instead of taking the best
        (asked only of an order that ``explores``, and only when two hosts
        or more are ready)."""
        return False

    explores = False

    def _seed(self, item_id: int) -> bool:
        return self._parent[item_id] == SEED

    shared = True   # runs shared, with shared_terms (else shared_refusal says why not)
    shared_refusal = ""

    def shared_constants(self) -> tuple[float, float, int]:
        """(c of the level term, a seed's acc, a batch's pages: best-n-first's
        n, 0: none) for a shared crawl's Redis."""
        return 0.0, 0.0, 0

    def shared_draws(self) -> tuple[float, int]:
        """(q0, seed) of a shared crawl's exploring draws: a lease takes a
        ready host's best URL with probability q0, else one drawn in
        proportion to its weight (q0 1: never drawn)."""
        return 1.0, 0

    def shared_terms(self, urls: list[str], anchor: list[float], relevance: float | None,
                     held: tuple[float, ...], level: int) -> list[tuple[float, float, float]]:
        """(add, best, aux) of each link of a page of ``level`` fetched in a
        shared crawl (held: the page's own acc, best, aux when it was leased)."""
        raise NotImplementedError

    def stats(self) -> dict:
        return {"order": self.name, "params": self.p, "cpu_seconds": round(self.cpu_seconds, 4)}


class Importance(Order):
    name = "importance"
    DEFAULTS = {"a": 1.0, "b": 1.0, "c": 1.0, "pagerank_every": 0.0}

    def __init__(self, params=None) -> None:
        super().__init__(params)
        self.backlinks = array("d")
        self._url_score = array("d")
        self._fetched = 0

    def added(self, item: QueuedUrl) -> None:
        super().added(item)
        self.backlinks.append(0.0)
        self._url_score.append(url_score(item.url))

    def page(self, item, targets, anchor, relevance) -> None:
        self._fetched += 1
        every = int(self.p["pagerank_every"])
        if every:
            if self._fetched % every == 0:
                self._pagerank()
            return
        for target in targets:   # distinct: a page's links are
            self.backlinks[target] += 1
        self.frontier.rescore(targets)

    @property
    def shared(self) -> bool:
        return not self.p["pagerank_every"]

    shared_refusal = ("pagerank_every is a PageRank of the whole graph found so far, which no "
                      "partition holds; leave it 0 (in-links counted in each URL's partition)")

    def shared_constants(self):
        return self.p["c"], 0.0, 0

    def shared_terms(self, urls, anchor, relevance, held, level):
        return [(self.p["a"], self.p["b"] * url_score(url), 0.0) for url in urls]

    def _pagerank(self) -> None:
        ranks = pagerank(len(self.backlinks), self.frontier.out_links())
        n = len(ranks)
        for i, rank in enumerate(ranks):
            self.backlinks[i] = rank * n
        self.frontier.rescore(range(n))

    def priority(self, item_id: int) -> float:
        if self._seed(item_id):
            return SEED_PRIORITY
        level = self.frontier.levels[item_id]
        return (self.p["a"] * self.backlinks[item_id] + self.p["b"] * self._url_score[item_id]
                + self.p["c"] / (1 + level))


def url_score(url: str) -> float:
    """IL(P): what the URL string alone says of a page's importance."""
    parts = urlsplit(url)
    segments = [s for s in parts.path.split("/") if s]
    return (float((parts.hostname or "").endswith(".com")) + float("home" in url.casefold())
            + 1.0 / (1 + len(segments)))


def pagerank(n: int, out_links: dict[int, list[int]], damping: float = 0.85,
             iterations: int = 30) -> list[float]:
    """PageRank of the n known pages over the links of the fetched ones
    (pages without out-links spread their rank evenly)."""
    if n == 0:
        return []
    rank = [1.0 / n] * n
    dangling_pages = [i for i in range(n) if not out_links.get(i)]
    for _ in range(iterations):
        nxt = [(1 - damping) / n] * n
        dangling = sum(rank[i] for i in dangling_pages)
        for source, targets in out_links.items():
            if targets:
                share = damping * rank[source] / len(targets)
                for t in targets:
                    nxt[t] += share
        spread = damping * dangling / n
        rank = [r + spread for r in nxt]
    return rank


class Opic(Order):
    name = "opic"

    def __init__(self, params=None) -> None:
        super().__init__(params)
        self.cash = array("d")
        self.history = array("d")
        self.virtual = 0.0       # the virtual page's cash
        self._paid = 0.0         # what the virtual page gave each known page, in all
        self._joined = array("d")   # _paid when the page became known: it got only what came later

    def added(self, item: QueuedUrl) -> None:
        super().added(item)
        self.cash.append(1.0 if self._seed(item.id) else 0.0)
        self.history.append(0.0)
        self._joined.append(self._paid)

    def cash_of(self, item_id: int) -> float:
        return self.cash[item_id] + self._paid - self._joined[item_id]

    def page(self, item, targets, anchor, relevance) -> None:
        cash = self.cash_of(item.id)
        self.history[item.id] += cash
        self.cash[item.id] = 0.0
        self._joined[item.id] = self._paid
        share = cash / (len(targets) + 1)
        for target in targets:
            self.cash[target] += share
        self.virtual += share
        # The virtual page links to every page: visited as often as a page
        # is, it gives all its cash to every known page alike (which leaves
        # their order as it is: the priority below omits the common part).
        self._paid += self.virtual / len(self.cash)
        self.virtual = 0.0
        self.frontier.rescore(targets)

    def shared_constants(self):
        return 0.0, 1.0, 0   # the seeds share 1 each

    def shared_terms(self, urls, anchor, relevance, held, level):
        share = held[0] / (len(urls) + 1)
        return [(share, 0.0, 0.0)] * len(urls)

    def total_cash(self) -> float:
        """Conserved: the seeds' cash, wherever it went (the history only
        records what each page passed on)."""
        return sum(self.cash_of(i) for i in range(len(self.cash))) + self.virtual

    def priority(self, item_id: int) -> float:
        if self._seed(item_id):
            return SEED_PRIORITY
        return self.cash[item_id] - self._joined[item_id]


LINK_WEIGHTS = {"h1": 0.5, "h2": 0.5, "h3": 0.0}   # R(l)'s, for best-first and aco


class BestFirst(Order):
    name = "best-first"
    needs_topic = True
    # resolution: scores in one step of it are ties, and ties go roughly in
    # the order found. An off-topic page's TF-IDF score (0.001 against 0.003)
    # says nothing about its links; ranked on it, the crawl wanders down
    # random off-topic chains once the on-topic links run out, where taken
    # in the order found it fetches the off-topic pages nearest the
    # on-topic ones first: the way across a short off-topic chain.
    DEFAULTS = {**LINK_WEIGHTS, "resolution": 0.01}

    def __init__(self, params=None) -> None:
        super().__init__(params)
        self.score = array("d")

    def added(self, item: QueuedUrl) -> None:
        super().added(item)
        self.score.append(0.0)

    def link_score(self, anchor: float, parent: float) -> float:
        """R(l) = h1*R(anchor) + h2*R(parent) + h3*R(target), weights summing
        to 1. The target is not fetched yet: by topical locality (pages
        mostly link to pages like themselves) its parent's relevance stands
        for it."""
        h1, h2, h3 = self.p["h1"], self.p["h2"], self.p["h3"]
        return (h1 * anchor + (h2 + h3) * parent) / ((h1 + h2 + h3) or 1.0)

    def page(self, item, targets, anchor, relevance) -> None:
        self._rescore(self._score_links(item, targets, anchor, relevance or 0.0))

    def _score_links(self, item, targets, anchor, relevance) -> set[int]:
        changed = set()
        for target, a in zip(targets, anchor):
            value = self.link_score(a, relevance)
            if value > self.score[target]:
                self.score[target] = value
                changed.add(target)
        return changed

    def _rescore(self, changed) -> None:
        self.frontier.rescore(changed)

    def shared_terms(self, urls, anchor, relevance, held, level):
        return [(0.0, self._coarse(self.link_score(a, relevance or 0.0)), 0.0) for a in anchor]

    def priority(self, item_id: int) -> float:
        return SEED_PRIORITY if self._seed(item_id) else self._coarse(self.score[item_id])

    def _coarse(self, value: float) -> float:
        step = self.p.get("resolution", 0.0)
        return math.floor(value / step) * step if step > 0 else value


class BestNFirst(BestFirst):
    name = "best-n-first"
    DEFAULTS = {**BestFirst.DEFAULTS, "n": 256.0}
    def shared_constants(self):
        return 0.0, 0.0, max(int(self.p["n"]), 1)

    def __init__(self, params=None) -> None:
        super().__init__(params)
        self._pages = 0
        self._placed = array("d")   # the score the frontier orders by; nan: not placed yet

    def added(self, item: QueuedUrl) -> None:
        super().added(item)
        self._placed.append(math.nan)

    def _rescore(self, changed) -> None:
        fresh = [t for t in changed if math.isnan(self._placed[t])]
        for t in fresh:   # a URL new since the last batch goes in by its first score
            self._placed[t] = self.score[t]
        self.frontier.rescore(fresh)
        self._pages += 1
        if self._pages % max(int(self.p["n"]), 1) == 0:   # the next batch: every score applied
            self._placed = array("d", self.score)
            self.frontier.rescore(range(len(self._placed)))

    def priority(self, item_id: int) -> float:
        if self._seed(item_id):
            return SEED_PRIORITY
        placed = self._placed[item_id]
        return 0.0 if math.isnan(placed) else self._coarse(placed)


class Shark(BestFirst):
    name = "shark"
    DEFAULTS = {"delta": 0.5, "gamma": 0.5, "threshold": 0.0}   # threshold: a "relevant" parent

    def __init__(self, params=None) -> None:
        super().__init__(params)
        self.inherited = array("d")

    def added(self, item: QueuedUrl) -> None:
        super().added(item)
        self.inherited.append(0.0)

    def shared_terms(self, urls, anchor, relevance, held, level):
        relevance = relevance or 0.0
        inherit = self.p["delta"] * (relevance if relevance > self.p["threshold"] else held[2])
        gamma = self.p["gamma"]
        return [(0.0, self._coarse(gamma * inherit + (1 - gamma) * a), inherit) for a in anchor]

    def _score_links(self, item, targets, anchor, relevance) -> set[int]:
        delta, gamma = self.p["delta"], self.p["gamma"]
        inherit = delta * (relevance if relevance > self.p["threshold"] else self.inherited[item.id])
        changed = set()
        for target, a in zip(targets, anchor):
            self.inherited[target] = max(self.inherited[target], inherit)
            value = gamma * inherit + (1 - gamma) * a
            if value > self.score[target]:
                self.score[target] = value
                changed.add(target)
        return changed


class Aco(BestFirst):
    name = "aco"
    # rho 0: evaporation per page turns the crawl toward the latest-reinforced
    # path and back to breadth-first (experiments/README.md, Crawl orders)
    DEFAULTS = {**LINK_WEIGHTS, "alpha": 1.0, "beta": 2.0, "rho": 0.0,
                "q0": 0.9, "tau0": 1.0, "seed": 0.0, "threshold": 0.0}

    # Shared, each link carries its weight (shared_terms) and the page's
    # deposit goes on its own links: the trail into its children, the one
    # step of the ant's path whose URLs the fetching worker has at hand. The
    # rest of the path (the trail into its parent, grandparent ...) would
    # raise waiting URLs of every partition for each page fetched: a write
    # per ancestor's child per page, where every other order costs none.
    @property
    def shared(self) -> bool:
        return not self.p["rho"]

    shared_refusal = ("rho (evaporation) lowers the pheromone of every waiting URL, in every "
                      "partition, with each page fetched anywhere; leave rho 0 (the default)")

    def __init__(self, params=None) -> None:
        super().__init__(params)
        # tau[p]: the pheromone on the trail into page p, in units of _scale;
        # a queued URL is judged by its page's trail as it is now, so that
        # all waiting URLs share one evaporation and none ages out of turn
        self.tau = array("d")
        self._scale = 1.0           # evaporation so far: true pheromone = tau * _scale
        self._children: dict[int, list[int]] = {}   # page -> the URLs first found on it
        self.rng = random.Random(int(self.p["seed"]))
        self._pages = 0

    def added(self, item: QueuedUrl) -> None:
        super().added(item)
        self.tau.append(self.p["tau0"] / self._scale)
        if item.parent_id is not None:
            self._children.setdefault(item.parent_id, []).append(item.id)

    def admits(self, anchor: float, relevance: float | None) -> bool:
        """The paper queues only links whose R(l) reaches the threshold."""
        return self.link_score(anchor, relevance or 0.0) >= self.p["threshold"]

    def shared_draws(self):
        return self.p["q0"], int(self.p["seed"])

    def shared_terms(self, urls, anchor, relevance, held, level):
        """best: the link's log weight, as priority's, with the trail into
        this page as it is once this page's deposit is on it (with rho 0 the
        trail one machine gives its children at this point: tau0 + C/D)."""
        trail = self.p["tau0"] + (relevance or 0.0) / max(level, 1)
        alpha, beta = self.p["alpha"], self.p["beta"]
        return [(0.0, alpha * math.log(trail)
                 + beta * math.log(max(self.link_score(a, relevance or 0.0), 1e-6)), 0.0)
                for a in anchor]

    def page(self, item, targets, anchor, relevance) -> None:
        self._scale *= 1 - self.p["rho"]
        if self._scale < 1e-100:
            self._rebase()
        depth = max(self.frontier.levels[item.id], 1)
        deposit = (relevance or 0.0) / depth / self._scale
        node = item.id
        while node >= 0 and deposit:   # the ant's path back to its seed
            self.tau[node] += deposit
            self.frontier.rescore(self._children.get(node, ()))
            node = self._parent[node]
        super().page(item, targets, anchor, relevance)
        self._pages += 1
        self.rng = random.Random(f"{int(self.p['seed'])}:{self._pages}")

    def _rebase(self) -> None:
        """Evaporation is kept as one factor; before it underflows, fold it
        into every pheromone value (and so every URL's key: all re-scored)."""
        scale, self._scale = self._scale, 1.0
        least = self.p["tau0"] * TAU_MIN
        for i in range(len(self.tau)):
            self.tau[i] = max(self.tau[i] * scale, least)
        self.frontier.rescore(range(len(self.tau)))

    def _trail(self, item_id: int) -> float:
        parent = self._parent[item_id]
        return self.tau[parent if parent >= 0 else item_id]

    def weight(self, item_id: int) -> float:
        """tau^alpha * eta^beta."""
        return math.exp(self._log_weight(item_id) + self.p["alpha"] * math.log(self._scale))

    def _log_weight(self, item_id: int) -> float:
        """log of the weight, but for the evaporation all URLs share."""
        return (self.p["alpha"] * math.log(self._trail(item_id))
                + self.p["beta"] * math.log(max(self.score[item_id], 1e-6)))

    def priority(self, item_id: int) -> float:
        # in logs, without the evaporation all URLs share: keys made at
        # different times stay comparable
        return SEED_PRIORITY if self._seed(item_id) else self._log_weight(item_id)

    explores = True

    def explore(self) -> bool:
        return self.rng.random() >= self.p["q0"]


    def choose(self, candidates: list[int]) -> int:
        """One of the candidate URLs, drawn in proportion to tau^alpha * eta^beta."""
        return proportional_pick([self._log_weight(i) for i in candidates], self.rng.random())


def proportional_pick(logs: list[float], u: float) -> int:
    """The index drawn in proportion to exp(logs[i]) by the uniform u in
    [0, 1), as random.choices draws (the shared crawl's Lua opick alike)."""
    top = max(logs)
    cumulative = list(itertools.accumulate(math.exp(x - top) for x in logs))
    return bisect.bisect(cumulative, u * cumulative[-1], 0, len(logs) - 1)


ORDERS = {cls.name: cls for cls in (Importance, Opic, BestFirst, BestNFirst, Shark, Aco)}
NAMES = ("bfs", *ORDERS)   # bfs: urllist.hosts.HostFrontier, the level-by-level crawl


def make_order(name: str, params: dict[str, str] | None = None) -> Order:
    return ORDERS[name](params)

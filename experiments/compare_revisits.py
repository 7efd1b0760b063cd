"""Revisit policies on a simulated changing site: which keeps a crawl freshest at equal budget.

Every page changes as a Poisson process whose rate is drawn from a stated
distribution (``DISTRIBUTIONS``, changes per day).  A simulated server
answers a revisit with 304 when the page has not changed since the
crawler's copy (its validators) and 200 with the page's bytes otherwise,
with the time of the page's last change as Last-Modified (or none, with
``--no-last-modified``).  Time is simulated: nothing waits, nothing touches
the network.  The schedules are the crawler's own code: ``urllist.revisit``
estimates each page's rate from what its visits saw (``change_rate``) and
allocates the budget (``allocate``); its allocation is re-solved once a
simulated day, and each page's next visit is its last visit plus the
interval the current allocation gives its current estimate.

Part 1, *classical* (rates known, log-uniform 0.01-10 changes a day, one
refresh per page per day; Cho and Garcia-Molina's 0.715 / 0.527 / 0.752):
each policy's mean freshness three ways: closed forms where there are
some (uniform: through the exponential integral E1; proportional: every
page at the same changes-per-visit, the mean rate), numeric integration
over the distribution (composite Gauss-Legendre in log rate, split at the
optimum's cut-off), and simulation (pages drawn from the distribution, each
revisited at the interval ``allocate`` gives it from a random phase, the
change times drawn, freshness and age measured over the window).

Part 2, *estimated* (per distribution): every scheduler starts from one
crawl (every page fetched once, at uniform times over the first day),
learns for ``--warmup`` days and is measured for ``--measure`` days:
time-averaged freshness and age, revisits per page per day, the 200/304
split, bytes moved, and for ours the estimator's error against the true
rates.  Besides the four policies, two multiplicative controllers
reimplemented from their source:

- Nutch's ``AdaptiveFetchSchedule`` (apache/nutch,
  src/java/org/apache/nutch/crawl/AdaptiveFetchSchedule.java,
  ``setFetchSchedule``): interval x (1 - DEC_RATE) when the page changed,
  x (1 + INC_RATE) when not (both 0.2); with SYNC_DELTA (on) delta = fetch
  time - modified time, the interval is raised to delta if below it and
  the next fetch is fetch time - 0.2 delta + interval; the interval held
  within [min_interval 60 s, max_interval 365 days]; the modified time is
  the response's Last-Modified, the fetch time when there is none or the
  page changed (the code's own fallbacks); a next fetch time in the past
  (possible once max_interval is below delta) is taken as due at once,
  min_interval later.
- StormCrawler's ``AdaptiveScheduler`` (apache/incubator-stormcrawler,
  core/src/main/java/com/digitalpebble/stormcrawler/persistence/
  AdaptiveScheduler.java, ``schedule``): in whole minutes, changed:
  interval = (1 - decr) interval + decr min, unchanged or 304:
  interval = min(interval (1 + incr), max), next fetch = now + interval;
  incr = decr = 0.5, min 60 min, max 20,160 min (two weeks); the first
  fetch schedules the default interval (1,440 min).

Both start at one day (Nutch's default, db.fetch.interval.default, is 30
days; one day is the budget's mean interval, where ours start too).
Neither has a budget knob, so each runs once at its defaults (to show what
it spends), then with one bound tuned by bisection until its measured
revisit rate is the budget within 1 %: its minimum interval when it
overspends at the defaults, its maximum interval when it underspends.  The
table reports the rate every scheduler actually used.

Outputs in --out: results.csv (the estimated-rates rows), classical.csv, estimators.csv, results.md
(the tables, also printed), run.json, and with matplotlib revisits.png.

    python experiments/compare_revisits.py --out experiments/results/revisits
    python experiments/compare_revisits.py --quick
"""
from __future__ import annotations

import heapq
import math
import random
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import click
import numpy as np

from report import Column, markdown_table, plotting_available, run_info, write_csv, write_json, write_markdown
from urllist import revisit
from urllist.revisit import DAY, POLICIES, PageHistory

HEADER_200 = 400          # bytes of a 200 response's status line and headers
HEADER_304 = 250          # bytes of a 304 response
CLASSICAL = (0.01, 10.0)  # changes a day, log-uniform
OUR_BOUNDS = (3600.0, 14 * DAY)   # min and max interval of our policies in part 2
QUICK = {"pages": 100, "classical_pages": 2000, "classical_days": 10, "warmup": 10, "measure": 10}


# -- the site ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Distribution:
    name: str
    text: str
    draw: Callable[[np.random.Generator, int], np.ndarray]   # changes per day


def _log_uniform(rng: np.random.Generator, n: int) -> np.ndarray:
    low, high = CLASSICAL
    return np.exp(rng.uniform(math.log(low), math.log(high), n))


def _pareto(rng: np.random.Generator, n: int) -> np.ndarray:
    return np.minimum(0.1 * (1 - rng.uniform(size=n)) ** (-1 / 1.1), 100.0)


def _bimodal(rng: np.random.Generator, n: int) -> np.ndarray:
    hot = rng.uniform(size=n) < 0.2
    return np.where(hot, 5.0, 0.05) * np.exp(rng.normal(0, 0.5, n))


DISTRIBUTIONS = {
    "log-uniform": Distribution("log-uniform", "log-uniform over 0.01-10 changes/day (mean 1.45)", _log_uniform),
    "pareto": Distribution("pareto", "Pareto, x_m 0.1/day, alpha 1.1, cut at 100/day (median 0.19, mean ~1)",
                           _pareto),
    "bimodal": Distribution("bimodal", "80 % around 0.05/day, 20 % around 5/day (log-normal, sigma 0.5; mean ~1.1)",
                            _bimodal),
}


class Site:
    """The simulated server: per page, the first change the crawler's copy has not seen."""

    def __init__(self, rates_per_day: np.ndarray, seed: int, last_modified: bool = True) -> None:
        self.rng = random.Random(seed)
        self.rates = [float(rate) / DAY for rate in rates_per_day]
        sizes = np.random.default_rng(seed).lognormal(math.log(30_000), 1.0, len(self.rates))
        self.sizes = [int(size) for size in np.minimum(sizes, 2_000_000)]
        self.last_modified = last_modified
        self.next_change = [0.0] * len(self.rates)
        self.modified = [0.0] * len(self.rates)

    def crawl(self, page: int, t: float) -> float | None:
        """The first fetch: a copy taken at t of a page last changed an exponential time before."""
        rate = self.rates[page]
        self.modified[page] = t - self.rng.expovariate(rate)
        self.next_change[page] = t + self.rng.expovariate(rate)
        return self.modified[page] if self.last_modified else None

    def answer(self, page: int, t: float) -> tuple[bool, float | None]:
        """(changed since the last copy, Last-Modified) for a conditional GET at t."""
        first = self.next_change[page]
        if first <= t:
            rate = self.rates[page]
            self.modified[page] = max(first, t - self.rng.expovariate(rate))   # the latest change before t
            self.next_change[page] = t + self.rng.expovariate(rate)
        return first <= t, self.modified[page] if self.last_modified else None


@dataclass
class Meter:
    """Time-averaged freshness and age of every copy over [start, end), and what the visits cost."""
    start: float
    end: float
    pages: int
    sizes: list[int]
    fresh: np.ndarray = field(init=False)
    age: np.ndarray = field(init=False)
    visits: int = 0
    not_modified: int = 0
    bytes: int = 0

    def __post_init__(self) -> None:
        self.fresh = np.zeros(self.pages)
        self.age = np.zeros(self.pages)

    def copy_held(self, page: int, taken: float, first_change: float, until: float) -> None:
        """A copy taken at `taken`, fresh until `first_change`, replaced (or the window ends) at `until`."""
        low, high = max(taken, self.start), min(until, self.end)
        if high <= low:
            return
        self.fresh[page] += max(min(first_change, high) - low, 0.0)
        stale_from = max(first_change, low)
        if stale_from < high:
            self.age[page] += ((high - first_change) ** 2 - (stale_from - first_change) ** 2) / 2

    def answered(self, page: int, t: float, changed: bool) -> None:
        if self.start <= t < self.end:
            self.visits += 1
            self.not_modified += not changed
            self.bytes += HEADER_200 + self.sizes[page] if changed else HEADER_304

    def summary(self) -> dict[str, float]:
        length = self.end - self.start
        return {"freshness": float(np.mean(self.fresh) / length), "age_days": float(np.mean(self.age) / length / DAY),
                "revisits_per_page_day": self.visits / self.pages / (length / DAY),
                "share_304": self.not_modified / self.visits if self.visits else 0.0,
                "mb_per_day": self.bytes / 1e6 / (length / DAY)}


# -- schedulers ------------------------------------------------------------------------------

class Policy:
    """One of urllist.revisit's policies, learning the rates from the visits (or told them)."""

    def __init__(self, policy: str, pages: int, per_day: float, bounds: tuple[float, float],
                 max_rate: float | None = None, known: list[float] | None = None) -> None:
        self.name, self.policy, self.known = policy, policy, known
        self.spend, self.bounds, self.max_rate = per_day * pages / DAY, bounds, max_rate
        self.visits: list[list[float]] = [[] for _ in range(pages)]
        self.changed: list[list[bool]] = [[] for _ in range(pages)]
        self.modified: list[list[float | None]] = [[] for _ in range(pages)]
        self.rates: list[float | None] = list(known) if known else [None] * pages
        self.allocation = self._allocate()

    def _allocate(self) -> revisit.Allocation:
        prior = self.spend / len(self.rates)
        rates = [prior if rate is None else rate for rate in self.rates]
        return revisit.allocate(rates, self.policy, self.spend, min_interval=self.bounds[0],
                                max_interval=self.bounds[1], max_rate=self.max_rate)

    def _interval(self, page: int) -> float:
        rate = self.rates[page]
        return self.allocation.interval(self.spend / len(self.rates) if rate is None else rate)

    def history(self, page: int) -> PageHistory:
        keep = revisit.MAX_INTERVALS + 1
        modified = self.modified[page][-keep:]
        return PageHistory(page, tuple(self.visits[page][-keep:]), tuple(self.changed[page][-keep + 1:]),
                           tuple(modified) if all(m is not None for m in modified) else ())

    def start(self, page: int, t: float, modified: float | None) -> float:
        self.visits[page].append(t)
        self.modified[page].append(modified)
        if self.known is None:
            self.rates[page] = revisit.change_rate(self.history(page))
        return t + self._interval(page)

    def visited(self, page: int, t: float, changed: bool, modified: float | None) -> float:
        self.visits[page].append(t)
        self.changed[page].append(changed)
        self.modified[page].append(modified)
        if self.known is None:
            self.rates[page] = revisit.change_rate(self.history(page))
        return t + self._interval(page)

    def resolve(self, t: float) -> list[tuple[int, float]]:
        """The daily re-solve: every page's next visit under the new allocation."""
        if self.known is not None:
            return []
        self.allocation = self._allocate()
        return [(page, max(visits[-1] + self._interval(page), t)) for page, visits in enumerate(self.visits)]


class Nutch:
    """apache/nutch AdaptiveFetchSchedule.setFetchSchedule, in seconds."""
    INC_RATE = DEC_RATE = SYNC_DELTA_RATE = 0.2

    def __init__(self, pages: int, min_interval: float = 60.0, max_interval: float = 365 * DAY,
                 initial: float = DAY) -> None:
        self.name = "Nutch adaptive"
        self.min_interval, self.max_interval = min_interval, max_interval
        self.interval = [initial] * pages

    def start(self, page: int, t: float, modified: float | None) -> float:
        return self._schedule(page, t, modified, None)

    def visited(self, page: int, t: float, changed: bool, modified: float | None) -> float:
        return self._schedule(page, t, modified, changed)

    def _schedule(self, page: int, t: float, modified: float | None, changed: bool | None) -> float:
        interval = self.interval[page]
        modified_time = t if modified is None else modified
        if changed is True:
            interval *= 1 - self.DEC_RATE
            modified_time = t
        elif changed is False:
            interval *= 1 + self.INC_RATE
        delta = t - modified_time
        interval = max(interval, delta)
        reference = t - delta * self.SYNC_DELTA_RATE
        self.interval[page] = min(max(interval, self.min_interval), self.max_interval)
        # a fetch time in the past (max_interval below delta) is due at once: no sooner than min_interval
        return max(reference + self.interval[page], t + self.min_interval)

    def resolve(self, t: float) -> list[tuple[int, float]]:
        return []


class StormCrawler:
    """apache/incubator-stormcrawler AdaptiveScheduler.schedule, in whole minutes as there."""

    def __init__(self, pages: int, min_interval: float = 60 * 60.0, max_interval: float = 20_160 * 60.0,
                 initial: float = 1440 * 60.0) -> None:
        self.name = "StormCrawler adaptive"
        self.min_minutes, self.max_minutes = min_interval / 60, max_interval / 60
        self.minutes = [int(initial / 60)] * pages
        self.incr = self.decr = 0.5

    def start(self, page: int, t: float, modified: float | None) -> float:
        return t + self.minutes[page] * 60.0

    def visited(self, page: int, t: float, changed: bool, modified: float | None) -> float:
        minutes = self.minutes[page]
        if changed:
            minutes = int((1 - self.decr) * minutes + self.decr * self.min_minutes)
        else:
            minutes = int(min(minutes * (1 + self.incr), self.max_minutes))
        self.minutes[page] = max(minutes, 1)
        return t + self.minutes[page] * 60.0

    def resolve(self, t: float) -> list[tuple[int, float]]:
        return []


# -- the simulation --------------------------------------------------------------------------

def simulate(site: Site, scheduler, warmup_days: float, measure_days: float, seed: int) -> Meter:
    """One crawl over the first day, then revisits as the scheduler says, re-solved daily."""
    pages = len(site.rates)
    meter = Meter(warmup_days * DAY, (warmup_days + measure_days) * DAY, pages, site.sizes)
    rng = random.Random(seed)
    taken, stamp = [0.0] * pages, [0] * pages
    queue = []
    for page in range(pages):
        t = rng.uniform(0, DAY)
        taken[page] = t
        heapq.heappush(queue, (scheduler.start(page, t, site.crawl(page, t)), page, 0))
    resolve_at = DAY
    while queue and queue[0][0] < meter.end:
        if queue[0][0] >= resolve_at:
            for page, due in scheduler.resolve(resolve_at):
                stamp[page] += 1
                heapq.heappush(queue, (due, page, stamp[page]))
            resolve_at += DAY
            continue
        t, page, mark = heapq.heappop(queue)
        if mark != stamp[page]:
            continue
        first_change = site.next_change[page]
        changed, modified = site.answer(page, t)
        meter.copy_held(page, taken[page], first_change, t)
        meter.answered(page, t, changed)
        taken[page] = t
        stamp[page] += 1
        following = scheduler.visited(page, t, changed, modified)
        if not following > t:
            raise RuntimeError(f"{scheduler.name} scheduled page {page} at {following} after a visit at {t}")
        heapq.heappush(queue, (following, page, stamp[page]))
    for page in range(pages):
        meter.copy_held(page, taken[page], site.next_change[page], meter.end)
    return meter


# -- part 1: the classical figures -----------------------------------------------------------

def exponential_integral(x: float) -> float:
    """E1(x) for 0 < x <= 50 by its power series (terms summed in order; exact to ~1e-12 here)."""
    total, term = 0.0, 1.0
    for k in range(1, 200):
        term *= -x / k
        total += term / k
        if abs(term) < 1e-18:
            break
    return -0.5772156649015329 - math.log(x) - total


def closed_forms() -> dict[str, float]:
    """Mean freshness at one refresh per page per day where it has a closed form."""
    low, high = CLASSICAL
    def antiderivative(rate: float) -> float:      # of (1 - e^-r) / r^2
        return math.expm1(-rate) / rate - exponential_integral(rate)
    uniform = (antiderivative(high) - antiderivative(low)) / math.log(high / low)
    mean_rate = (high - low) / math.log(high / low)
    return {"uniform": uniform, "proportional": -math.expm1(-mean_rate) / mean_rate}


def _gauss_legendre(function: Callable[[float], float], low: float, high: float, panels: int = 64) -> float:
    nodes, weights = np.polynomial.legendre.leggauss(16)
    edges = np.linspace(low, high, panels + 1)
    total = 0.0
    for a, b in zip(edges, edges[1:]):
        for node, weight in zip(nodes, weights):
            total += weight * (b - a) / 2 * function((a + b) / 2 + (b - a) / 2 * node)
    return total


def integrated(policy: str) -> dict[str, float]:
    """Mean freshness and age over the log-uniform density, the policy's frequencies from
    revisit.Allocation, its level solved on the density itself."""
    low, high = (math.log(bound / DAY) for bound in CLASSICAL)
    width = high - low
    shape = revisit.Allocation(policy, 0.0, 0.0, math.inf, 1 / DAY)

    def mean(level: float, quantity: Callable[[float, revisit.Allocation], float]) -> float:
        allocation = revisit.Allocation(policy, level, 0.0, math.inf, shape.max_rate)
        cut = math.log(1 / level) if policy == "optimal" and level > 0 else high
        split = min(max(cut, low), high)
        parts = [(low, split), (split, high)]
        return sum(_gauss_legendre(lambda u: quantity(math.exp(u), allocation), a, b) for a, b in parts
                   if b > a) / width
    spend = 1 / DAY
    if policy == "uniform":
        level = spend
    else:
        level = _bisect_level(lambda level: mean(level, lambda r, a: a.frequency(r)) - spend, policy != "optimal")
    return {"freshness": mean(level, lambda r, a: revisit.freshness(r, a.interval(r))),
            "age_days": mean(level, lambda r, a: revisit.age(r, a.interval(r))) / DAY,
            "skipped": mean(level, lambda r, a: float(a.frequency(r) == 0))}


def _bisect_level(excess: Callable[[float], float], grows: bool) -> float:
    low, high = 1e-12, 1e12
    for _ in range(200):
        middle = math.sqrt(low * high)
        if (excess(middle) > 0) == grows:
            high = middle
        else:
            low = middle
        if high / low < 1 + 1e-12:
            break
    return math.sqrt(low * high)


def simulated_known(policy: str, pages: int, days: float, seed: int) -> dict[str, float]:
    """Pages drawn from the log-uniform, each revisited at its allocated interval from a random
    phase; the first change after each visit drawn; freshness and age over [0, days)."""
    rng = np.random.default_rng(seed)
    rates = DISTRIBUTIONS["log-uniform"].draw(rng, pages) / DAY
    allocation = revisit.allocate(list(rates), policy, pages / DAY, min_interval=0.0, max_interval=math.inf)
    intervals = np.array([allocation.interval(rate) for rate in rates])
    end = days * DAY
    refreshed = np.isfinite(intervals)
    fresh, age = np.zeros(pages), np.zeros(pages)
    counts = np.where(refreshed, np.ceil(end / np.where(refreshed, intervals, 1.0)).astype(int) + 1, 1)
    page = np.repeat(np.arange(pages), counts)
    k = np.arange(len(page)) - np.repeat(np.cumsum(counts) - counts, counts)
    interval = np.where(refreshed[page], intervals[page], np.inf)
    taken = np.where(refreshed[page], (k - rng.uniform(size=pages)[page]) * np.where(refreshed[page], interval, 0), 0.0)
    until = np.minimum(taken + interval, end)
    first_change = taken + rng.exponential(1 / rates[page])
    low = np.maximum(taken, 0.0)
    high = np.maximum(until, low)
    np.add.at(fresh, page, np.clip(np.minimum(first_change, high) - low, 0, None))
    stale_from = np.minimum(np.maximum(first_change, low), high)
    np.add.at(age, page, ((high - first_change) ** 2 - (stale_from - first_change) ** 2) / 2 * (stale_from < high))
    return {"freshness": float(fresh.mean() / end), "age_days": float(age.mean() / end / DAY),
            "skipped": float(np.mean(~refreshed)), "revisits_per_page_day": float(np.sum(1 / intervals) * DAY / pages)}


def classical_rows(pages: int, days: float, seed: int) -> list[dict]:
    closed = closed_forms()
    rows = []
    for policy in ("uniform", "proportional", "optimal"):
        integral, simulated = integrated(policy), simulated_known(policy, pages, days, seed)
        rows.append({"policy": policy, "published": PUBLISHED[policy], "closed_form": closed.get(policy),
                     "integrated": integral["freshness"], "simulated": simulated["freshness"],
                     "age_integrated_days": integral["age_days"], "age_simulated_days": simulated["age_days"],
                     "never_refreshed": integral["skipped"], "pages": pages, "days": days})
    return rows


PUBLISHED = {"uniform": 0.715, "proportional": 0.527, "optimal": 0.752}


# -- part 2: rates estimated from the visits --------------------------------------------------

@dataclass(frozen=True)
class Setting:
    distribution: str
    pages: int
    warmup: float          # days
    measure: float         # days
    per_day: float         # revisits per page per day
    last_modified: bool
    seed: int

    def site(self) -> Site:
        rates = DISTRIBUTIONS[self.distribution].draw(np.random.default_rng(self.seed), self.pages)
        return Site(rates, self.seed + 1, self.last_modified)


def run(setting: Setting, make_scheduler) -> tuple[dict, object]:
    site = setting.site()
    scheduler = make_scheduler(setting.pages)
    started = time.perf_counter()
    meter = simulate(site, scheduler, setting.warmup, setting.measure, setting.seed + 2)
    row = {"distribution": setting.distribution, "last_modified": setting.last_modified,
           "scheduler": scheduler.name, **meter.summary(), "cpu_seconds": time.perf_counter() - started}
    row.update(estimate_error(site, scheduler))
    return row, scheduler


def estimate_error(site: Site, scheduler) -> dict[str, float | None]:
    """The final estimates against the true rates: median ratio and the share within 2x."""
    if not isinstance(scheduler, Policy):
        return {"median_ratio": None, "within_2x": None}
    ratios = [(estimate if estimate is not None else 0.0) / truth for estimate, truth in zip(scheduler.rates, site.rates)]
    return {"median_ratio": statistics.median(ratios), "within_2x": float(np.mean([0.5 <= r <= 2 for r in ratios]))}


def estimators_on(site: Site, scheduler: Policy, distribution: str) -> list[dict]:
    """The estimators side by side on the same histories (the uniform policy's)."""
    rows = []
    for name, estimator in (("naive", revisit.naive_rate), ("existence (Cho-GM)", revisit.existence_rate),
                            ("last-modified", revisit.last_modified_rate), ("change_rate", revisit.change_rate)):
        ratios = []
        for page, truth in enumerate(site.rates):
            estimate = estimator(scheduler.history(page))
            if estimate is not None:
                ratios.append(estimate / truth)
        if ratios:
            rows.append({"distribution": distribution, "estimator": name, "pages": len(ratios),
                         "median_ratio": statistics.median(ratios),
                         "within_2x": float(np.mean([0.5 <= r <= 2 for r in ratios])),
                         "median_abs_log2": statistics.median(abs(math.log2(r)) if r > 0 else 10.0 for r in ratios)})
    return rows


def tuned(setting: Setting, controller, knob_bounds) -> tuple[dict, dict, str]:
    """The controller at its defaults, and with one bound moved until its revisit rate is the
    budget within 1 %: false position on log rate against log bound (Illinois), at most 16 runs;
    knob_bounds brackets the budget (the bound at the budget's mean interval cannot miss it)."""
    default_row, _ = run(setting, lambda pages: controller(pages))
    knob = "min_interval" if default_row["revisits_per_page_day"] > setting.per_day else "max_interval"

    def miss(value: float) -> tuple[float, dict]:
        row, _ = run(setting, lambda pages: controller(pages, **{knob: value}))
        floor = 0.5 / (setting.pages * setting.measure)          # half a visit: no visit at all is not -inf
        return math.log(max(row["revisits_per_page_day"], floor) / setting.per_day), row
    ends = [(math.log(value), *miss(value)) for value in knob_bounds[knob]]
    best = min(ends, key=lambda end: abs(end[1]))
    side = 0
    for _ in range(16):
        (a, fa, _), (b, fb, _) = ends
        if abs(best[1]) <= math.log(1.01) or fa * fb > 0:
            break
        c = (a * fb - b * fa) / (fb - fa)
        fc, row = miss(math.exp(c))
        best = min(best, (c, fc, row), key=lambda end: abs(end[1]))
        replaced = 1 if (fc > 0) == (fb > 0) else 0
        ends[replaced] = (c, fc, row)
        if side == replaced:                 # the same end twice: halve the other's weight
            other = ends[1 - replaced]
            ends[1 - replaced] = (other[0], other[1] / 2, other[2])
        side = replaced
    return default_row, best[2], f"{knob} = {_duration(math.exp(best[0]))}"


def _duration(seconds: float) -> str:
    return f"{seconds / DAY:.3g} days" if seconds >= DAY else f"{seconds / 3600:.3g} h"


def estimated_rows(setting: Setting, max_rate: float | None) -> tuple[list[dict], list[dict]]:
    rows, estimators = [], []
    for policy in POLICIES:
        row, scheduler = run(setting, lambda pages: Policy(policy, pages, setting.per_day, OUR_BOUNDS,
                                                           max_rate=max_rate))
        rows.append({**row, "setting": "allocated"})
        if policy == "uniform":
            estimators = estimators_on(setting.site(), scheduler, setting.distribution)
    mean_interval = DAY / setting.per_day      # a bound at the budget's mean interval is sure to overshoot it
    controllers = ((Nutch, {"min_interval": (60.0, mean_interval), "max_interval": (mean_interval, 365 * DAY)}),
                   (StormCrawler, {"min_interval": (3600.0, mean_interval),
                                   "max_interval": (mean_interval, 20_160 * 60.0)}))
    for controller, bounds in controllers:
        default_row, tuned_row, knob = tuned(setting, controller, bounds)
        rows.append({**default_row, "setting": "defaults"})
        rows.append({**tuned_row, "setting": knob})
    return rows, estimators


# -- output ----------------------------------------------------------------------------------

def _number(digits: int) -> Callable[[object], str]:
    return lambda value: "∞" if value == math.inf else f"{value:.{digits}f}"


CLASSICAL_COLUMNS = [Column("policy", "policy"), Column("published", "published", _number(3)),
                     Column("closed_form", "closed form", _number(4)),
                     Column("integrated", "numeric integration", _number(4)),
                     Column("simulated", "simulation", _number(4)),
                     Column("never_refreshed", "never refreshed", lambda v: f"{100 * v:.1f} %"),
                     Column("age_integrated_days", "age, days (integrated)", _number(3)),
                     Column("age_simulated_days", "age, days (simulated)", _number(3))]
ESTIMATED_COLUMNS = [Column("scheduler", "scheduler"), Column("setting", "how the budget is met"),
                     Column("revisits_per_page_day", "revisits/page/day", _number(3)),
                     Column("freshness", "freshness", _number(3)), Column("age_days", "age, days", _number(3)),
                     Column("share_304", "304 share", lambda v: f"{100 * v:.1f} %"),
                     Column("mb_per_day", "MB/day", _number(1)),
                     Column("median_ratio", "median rate estimate / truth", _number(2)),
                     Column("within_2x", "estimates within 2x", lambda v: f"{100 * v:.0f} %")]
ESTIMATOR_COLUMNS = [Column("estimator", "estimator"), Column("pages", "pages with an estimate"),
                     Column("median_ratio", "median estimate / truth", _number(3)),
                     Column("within_2x", "within 2x", lambda v: f"{100 * v:.1f} %"),
                     Column("median_abs_log2", "median abs log2 error", _number(3))]


def report_body(classical: list[dict], estimated: dict[tuple[str, bool], list[dict]],
                estimators: dict[tuple[str, bool], list[dict]], settings: dict[tuple[str, bool], Setting]) -> str:
    parts = ["## Classical figures: rates known, log-uniform 0.01-10 changes/day, one refresh per page per day",
             "", markdown_table(CLASSICAL_COLUMNS, classical), "",
             f"Simulation: {classical[0]['pages']:,} pages drawn from the distribution, {classical[0]['days']:g} days, "
             "each page revisited at its allocated interval from a random phase; a never-refreshed page is "
             "crawled at the window's start, so its age is the window's, not infinite."]
    for key, rows in estimated.items():
        setting = settings[key]
        header = "Last-Modified sent" if setting.last_modified else "no Last-Modified (ETag only)"
        parts += ["", f"## Estimated rates: {DISTRIBUTIONS[setting.distribution].text}; {header}", "",
                  f"{setting.pages:,} pages, {setting.per_day:g} revisit per page per day, {setting.warmup:g} days "
                  f"to learn from one crawl, then {setting.measure:g} days measured; our policies within "
                  f"[{_duration(OUR_BOUNDS[0])}, {_duration(OUR_BOUNDS[1])}], re-solved daily.", "",
                  markdown_table(ESTIMATED_COLUMNS, rows), "",
                  "The estimators on the uniform policy's histories (one visit a day):", "",
                  markdown_table(ESTIMATOR_COLUMNS, estimators[key])]
    return "\n".join(parts)


def plot(path: Path, estimated: dict[tuple[str, bool], list[dict]], subtitle: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    figure, axes = plt.subplots(1, 2, figsize=(12, 4.8))
    rates = np.logspace(-2, 1, 400) / DAY
    for policy in POLICIES:
        allocation = revisit.allocate(list(rates), policy, len(rates) / DAY, min_interval=0, max_interval=math.inf)
        axes[0].plot(rates * DAY, [allocation.frequency(rate) * DAY for rate in rates], label=policy)
    axes[0].set(xscale="log", xlabel="change rate, changes/day", ylabel="revisits/day",
                title="allocations at 1 revisit/page/day, log-uniform rates")
    axes[0].legend()
    keys = list(estimated)
    schedulers = [row["scheduler"] for row in estimated[keys[0]] if row["setting"] != "defaults"]
    width = 0.8 / len(keys)
    for k, key in enumerate(keys):
        values = [row["freshness"] for row in estimated[key] if row["setting"] != "defaults"]
        label = key[0] + ("" if key[1] else ", no Last-Modified")
        axes[1].barh(np.arange(len(values)) + k * width, values, height=width, label=label)
    axes[1].set_yticks(np.arange(len(schedulers)) + 0.4 - width / 2, schedulers)
    axes[1].set(xlabel="time-averaged freshness", title="at equal budget, rates estimated", xlim=(0, 1))
    axes[1].legend(fontsize=8, loc="lower right")
    figure.suptitle(subtitle, fontsize=9)
    figure.tight_layout()
    figure.savefig(path, dpi=90)
    plt.close(figure)


@click.command()
@click.option("--pages", default=1000, show_default=True, type=click.IntRange(10), help="pages of the estimated runs")
@click.option("--warmup", default=60.0, show_default=True, type=click.FloatRange(1), help="days to learn, not measured")
@click.option("--measure", default=60.0, show_default=True, type=click.FloatRange(1), help="days measured")
@click.option("--per-day", default=1.0, show_default=True, type=click.FloatRange(0, min_open=True),
              help="revisit budget, revisits per page per day")
@click.option("--distributions", default="log-uniform,pareto,bimodal", show_default=True,
              help="change-rate distributions of the estimated runs: " + ", ".join(DISTRIBUTIONS))
@click.option("--without-last-modified", default="log-uniform", show_default=True,
              help="distributions also run with a server that sends no Last-Modified ('' for none)")
@click.option("--max-rate", default=None, type=click.FloatRange(0, min_open=True),
              help="capped-proportional's cap, changes/day (default: the budget per page)")
@click.option("--classical-pages", default=20_000, show_default=True, type=click.IntRange(10))
@click.option("--classical-days", default=30.0, show_default=True, type=click.FloatRange(1))
@click.option("--seed", default=2026, show_default=True)
@click.option("--quick", is_flag=True, help="small sizes, for tests: " + ", ".join(f"{k}={v}" for k, v in QUICK.items()))
@click.option("--out", default="revisit-results", show_default=True, type=click.Path(path_type=Path))
def main(pages, warmup, measure, per_day, distributions, without_last_modified, max_rate, classical_pages,
         classical_days, seed, quick, out) -> None:
    """Revisit policies on a simulated changing site, at equal budget, on a simulated clock."""
    started = time.perf_counter()
    plots = plotting_available()
    if quick:
        pages, classical_pages, classical_days, warmup, measure = (
            QUICK["pages"], QUICK["classical_pages"], QUICK["classical_days"], QUICK["warmup"], QUICK["measure"])
    names = _names(distributions)
    settings = {(name, lm): Setting(name, pages, warmup, measure, per_day, lm, seed)
                for name in names for lm in (True, False) if lm or name in _names(without_last_modified)}
    info = run_info("compare_revisits", "simulated sites: " + "; ".join(DISTRIBUTIONS[n].text for n in names), seed)
    classical = classical_rows(classical_pages, classical_days, seed)
    estimated, estimators = {}, {}
    for key, setting in settings.items():
        estimated[key], estimators[key] = estimated_rows(setting, None if max_rate is None else max_rate / DAY)
    out.mkdir(parents=True, exist_ok=True)
    write_csv(out / "classical.csv", list(classical[0]), classical)
    flat = [row for rows in estimated.values() for row in rows]
    write_csv(out / "results.csv", list(flat[0]), flat)
    flat_estimators = [{**row, "last_modified": key[1]} for key, rows in estimators.items() for row in rows]
    write_csv(out / "estimators.csv", list(flat_estimators[0]), flat_estimators)
    body = report_body(classical, estimated, estimators, settings)
    write_markdown(out / "results.md", "Revisit policies", info, body)
    write_json(out / "run.json", info, {"seconds": round(time.perf_counter() - started, 1), "pages": pages,
                                        "warmup_days": warmup, "measure_days": measure, "per_day": per_day,
                                        "our_bounds_seconds": list(OUR_BOUNDS), "max_rate_per_day": max_rate,
                                        "classical_pages": classical_pages, "classical_days": classical_days})
    if plots:
        plot(out / "revisits.png", estimated, f"urllist.revisit on a simulated clock · {info.date[:10]}")
    click.echo(f"{body}\n\nwritten to {out}/ in {time.perf_counter() - started:.0f} s")


def _names(text: str) -> list[str]:
    names = [name.strip() for name in text.split(",") if name.strip()]
    unknown = [name for name in names if name not in DISTRIBUTIONS]
    if unknown:
        raise click.BadParameter(f"unknown distribution {unknown[0]!r}; choose from {', '.join(DISTRIBUTIONS)}")
    return names


if __name__ == "__main__":
    main()

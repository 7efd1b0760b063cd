"""Revisit scheduling: how often each page changes, and which pages to fetch again now.

The model (Cho and Garcia-Molina): page i changes as a Poisson process of
rate lambda_i, and the crawler's copy is *fresh* from a visit until the
page's next change.  A page revisited every I seconds is fresh for
(1 - e^(-lambda I)) / (lambda I) of the time (``freshness``); its copy's
*age*, the time since the first change it missed, averages
I/2 - 1/lambda + (1 - e^(-lambda I)) / (lambda^2 I) (``age``).

**Estimating lambda** from what revisits see (``change_rate`` picks one):

- ``naive_rate``: changes seen / time watched.  A visit sees at most one
  change however many happened, so with one change per visit interval on
  average it reads 1 - 1/e = 0.63 of the truth.
- ``improved_rate`` (J. Cho, H. Garcia-Molina, "Estimating frequency of
  change", ACM TOIT 3(3), 2003): n regular intervals of length I, X of
  them with a change: -log((n - X + 0.5) / (n + 0.5)) / I, the
  bias-reduced estimator (it reads 1.00 where the naive one reads 0.63).
- ``existence_rate``: intervals of any lengths.  The paper's maximum
  likelihood estimate solves sum over changed intervals of
  t / (e^(lambda t) - 1) = sum of the unchanged intervals' lengths; we add
  half an unchanged interval of the mean length to the right side, which
  makes the equation's root exactly ``improved_rate`` when the intervals
  are equal, and keeps it finite when every interval saw a change.
- ``last_modified_rate``: when the server's Last-Modified dates agree
  with what the visits saw, the time from each visit back to the last
  change is known, not only whether there was one.  Going back from each
  visit the process is watched until a change (an observed event) or the
  previous visit (censored), so the likelihood is that of censored
  exponentials: X changes over Q seconds watched, MLE X / Q.  We subtract
  Q_c / Q from X, where Q_c is the watched time that ended in a change
  (derived here, not the paper's formula): it is the gamma correction
  (X - 1) / Q when nothing is censored and vanishes when everything is,
  and measured over 3 to 50 visits at 0.1 to 10 changes per interval it
  is unbiased within 1 % where X / Q reads up to 1.5x
  (``tests/test_revisit.py``).  The crawl's own fetch counts when its
  Last-Modified is known: the page was then watched back to that date.
- ``hint_rate``: one visit and a last-modified date (a sitemap's
  ``<lastmod>`` or the fetch's Last-Modified) A seconds old: ln 2 / A,
  median-unbiased, since under the model A is exponential with median
  ln 2 / lambda.
- Nothing known (one visit, no date): ``change_rate`` answers None and
  ``plan`` assumes the *prior*: the page changes as often as the budget
  lets the average page be visited (revisits per second / pages), so an
  unknown page is neither favoured nor starved.

Only the last ``MAX_INTERVALS`` intervals count: rates drift, and a
history's cost must stay bounded.

**Policies** share a revisit budget B (revisits per second over all
pages) and give page i a revisit frequency f_i with sum f_i = B, each
f_i held within [1/max_interval, 1/min_interval]:

- ``uniform``: every page the same f.
- ``proportional``: f_i = c lambda_i.
- ``capped-proportional``: f_i = c min(lambda_i, max_rate); max_rate
  defaults to B / pages, one change per mean revisit interval.
- ``optimal``: the freshness-optimal allocation (J. Cho, H. Garcia-Molina,
  "Effective page refresh policies for Web crawlers", ACM TODS 28(4),
  2003): maximise sum freshness(lambda_i, 1/f_i) subject to the budget.
  At the optimum every refreshed page has the same marginal freshness mu,
  (1/lambda) (1 - (1 + x) e^(-x)) = mu with x = lambda / f; a page with
  mu lambda >= 1 is worth no refresh at all (f = 0, then held at the
  floor frequency 1/max_interval).
The scale (f, c or mu) is solved numerically so that the *held* frequencies
sum to B: freshness is concave in f, so clipping the unconstrained optimum
at a common mu is exactly the optimum within the bounds (the KKT
conditions).  Only when B lies outside [pages/max_interval,
pages/min_interval] can the sum not meet it (every page sits at a bound).

**Which pages now** (``plan``): a page is due when the time since its last
visit has reached its interval 1/f_i; due pages come most overdue first
(time since the last visit / interval, then id).  ``Budget(per_day=R)``
is B = R / 86,400.  ``Budget(per_pass=N)`` is the budget that spends N
revisits over the time since the previous pass (now - the latest visit
of any page), B = N / that time, and at most the N most overdue pages are
returned; passes at a steady rhythm then find about N pages due each.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

__all__ = ["DAY", "MAX_INTERVALS", "POLICIES", "Allocation", "Budget", "PageHistory", "age", "allocate",
           "change_rate", "existence_rate", "freshness", "hint_rate", "improved_rate", "last_modified_rate",
           "naive_rate", "plan"]

DAY = 86_400.0                       # seconds
MAX_INTERVALS = 100                  # the most recent visit intervals an estimate reads
POLICIES = ("uniform", "proportional", "capped-proportional", "optimal")


@dataclass(frozen=True)
class PageHistory:
    """What the revisits of one page saw (times in epoch seconds)."""
    id: int
    visits: tuple[float, ...]                 # visits that got an answer, ascending; visits[0] = the crawl's fetch
    changed: tuple[bool, ...]                 # len(visits) - 1: did visit k+1 find the page changed since visit k
    modified: tuple[float | None, ...] = ()   # Last-Modified at each visit, None where not given; () = never given
    lastmod: float | None = None              # a sitemap's <lastmod>, a hint before the second visit

    def __post_init__(self) -> None:
        if not self.visits:
            raise ValueError(f"page {self.id}: no visit")
        if len(self.changed) != len(self.visits) - 1:
            raise ValueError(f"page {self.id}: {len(self.visits)} visits need {len(self.visits) - 1} changed flags")
        if self.modified and len(self.modified) != len(self.visits):
            raise ValueError(f"page {self.id}: {len(self.visits)} visits, {len(self.modified)} Last-Modified values")
        if any(later < earlier for earlier, later in zip(self.visits, self.visits[1:])):
            raise ValueError(f"page {self.id}: visits out of order")

    def recent(self) -> PageHistory:
        """The same page with only its last MAX_INTERVALS intervals."""
        if len(self.changed) <= MAX_INTERVALS:
            return self
        return PageHistory(self.id, self.visits[-MAX_INTERVALS - 1:], self.changed[-MAX_INTERVALS:],
                           self.modified[-MAX_INTERVALS - 1:], None)

    def intervals(self) -> list[float]:
        return [later - earlier for earlier, later in zip(self.visits, self.visits[1:])]


@dataclass(frozen=True)
class Budget:
    """How many revisits to spend: exactly one of the two."""
    per_pass: int | None = None      # at most this many pages this pass
    per_day: float | None = None     # revisits per day, over all pages

    def __post_init__(self) -> None:
        if (self.per_pass is None) == (self.per_day is None):
            raise ValueError("a budget is per pass or per day: set exactly one")
        if (self.per_pass or 0) < 0 or (self.per_day or 0) < 0:
            raise ValueError("a budget is not negative")


# -- the model ------------------------------------------------------------------------------

def freshness(rate: float, interval: float) -> float:
    """Expected fraction of time a page of `rate` changes/s, revisited every `interval` s, is fresh."""
    if rate == 0:
        return 1.0
    if math.isinf(interval):
        return 0.0
    r = rate * interval
    return -math.expm1(-r) / r if r > 0 else 1.0


def age(rate: float, interval: float) -> float:
    """Expected time-averaged age (seconds since the first missed change) of such a page's copy."""
    if rate == 0:
        return 0.0
    if math.isinf(interval):
        return math.inf
    r = rate * interval
    if r < 1e-4:   # the closed form cancels to nothing here; its series does not
        return interval * (r / 6 - r * r / 24)
    return interval * (0.5 - 1 / r - math.expm1(-r) / (r * r))


# -- estimators ------------------------------------------------------------------------------

def naive_rate(history: PageHistory) -> float | None:
    """Changes seen over the time watched; None before the second visit."""
    history = history.recent()
    watched = history.visits[-1] - history.visits[0]
    if not history.changed or watched <= 0:
        return None
    return sum(history.changed) / watched


def improved_rate(intervals: int, changes: int, interval: float) -> float:
    """Cho and Garcia-Molina's bias-reduced estimator for `intervals` regular intervals of `interval` s."""
    if not 0 <= changes <= intervals or interval <= 0:
        raise ValueError("need 0 <= changes <= intervals and a positive interval")
    return math.log((intervals + 0.5) / (intervals - changes + 0.5)) / interval


def existence_rate(history: PageHistory) -> float | None:
    """The maximum-likelihood rate from changed / unchanged intervals of any lengths, with the
    half-interval correction (exactly ``improved_rate`` when the intervals are equal)."""
    history = history.recent()
    intervals = history.intervals()
    if not intervals or sum(intervals) <= 0:
        return None
    hit = [t for t, changed in zip(intervals, history.changed) if changed and t > 0]
    if not hit:
        return 0.0
    mean = sum(intervals) / len(intervals)
    quiet = sum(t for t, changed in zip(intervals, history.changed) if not changed) + 0.5 * mean
    start = improved_rate(len(intervals), len(hit), mean)
    return _decreasing_root(lambda rate: sum(t / math.expm1(rate * t) for t in hit) - quiet, start)


def last_modified_rate(history: PageHistory) -> float | None:
    """X changes over Q seconds watched back from each visit, corrected: (X - Q_c / Q) / Q.
    None when some Last-Modified is missing or disagrees with what the visits saw."""
    history = history.recent()
    watched = _watched(history)
    if watched is None:
        return None
    events, total, ended = watched
    if total <= 0:
        return None
    return max(events - ended / total, 0.0) / total


def _watched(history: PageHistory) -> tuple[int, float, float] | None:
    """(changes, seconds watched, seconds watched that ended in a change), or None when the
    Last-Modified dates are missing or contradict the visits."""
    if len(history.modified) != len(history.visits) or len(history.visits) < 2:
        return None
    first = history.modified[0]
    if first is None or first > history.visits[0]:
        return None
    events, total, ended = 1, history.visits[0] - first, history.visits[0] - first
    for k, changed in enumerate(history.changed):
        before, visit, modified = history.visits[k], history.visits[k + 1], history.modified[k + 1]
        if modified is None or modified > visit or (modified > before) != changed:
            return None
        if changed:
            events, total, ended = events + 1, total + visit - modified, ended + visit - modified
        else:
            total += visit - before
    return events, total, ended


def hint_rate(history: PageHistory) -> float | None:
    """ln 2 / the age of the page's last change at its first visit (the sitemap's <lastmod>, else
    that fetch's Last-Modified); None without a usable date."""
    date = history.lastmod if history.lastmod is not None else (history.modified[0] if history.modified else None)
    if date is None or date >= history.visits[0]:
        return None
    return math.log(2) / (history.visits[0] - date)


def change_rate(history: PageHistory) -> float | None:
    """Estimated changes per second: Last-Modified when it is trustworthy, else which intervals
    saw a change, else (one visit) the last-modified hint; None when nothing is known."""
    if len(history.visits) < 2:
        return hint_rate(history)
    rate = last_modified_rate(history)
    return existence_rate(history) if rate is None else rate


def _decreasing_root(function: Callable[[float], float], start: float) -> float:
    """The x > 0 where a decreasing `function` crosses zero (positive near 0, negative far out):
    bracket from `start` by doubling, then close in with ``_crossing``."""
    low = high = start
    while function(low) < 0:
        low /= 2
    while function(high) > 0:
        high *= 2
    return _crossing(function, low, high)


def _crossing(function: Callable[[float], float], low: float, high: float) -> float:
    """Where `function` changes sign between low and high (0 < low <= high), to 1e-12 relative:
    false position in log x with the Illinois halving, which keeps bisection's guarantee and
    converges in a few steps on the smooth, monotone sums this module solves."""
    a, b = math.log(low), math.log(high)
    fa, fb = function(low), function(high)
    if fa == 0 or a == b:
        return low
    if fb == 0:
        return high
    side = 0
    for _ in range(200):
        c = (a * fb - b * fa) / (fb - fa)
        if not a < c < b and not b < c < a:
            c = (a + b) / 2
        fc = function(math.exp(c))
        if fc == 0 or abs(b - a) <= 1e-12:
            return math.exp(c)
        if (fc > 0) == (fb > 0):
            b, fb = c, fc
            fa, side = (fa / 2, -1) if side == -1 else (fa, -1)
        else:
            a, fa = c, fc
            fb, side = (fb / 2, 1) if side == 1 else (fb, 1)
        if abs(b - a) <= 1e-12:
            break
    return math.exp((a + b) / 2)


# -- policies --------------------------------------------------------------------------------

@dataclass(frozen=True)
class Allocation:
    """A policy's revisit frequencies under one budget: ``frequency(rate)`` for any page."""
    policy: str
    level: float          # uniform: the frequency; proportional ones: revisits per change; optimal: mu
    min_interval: float   # seconds; 0 = no floor
    max_interval: float   # seconds; inf = no ceiling
    max_rate: float       # capped-proportional: change rates above it count as it (changes/s)

    def frequency(self, rate: float) -> float:
        """Revisits per second for a page of `rate` changes per second, within the interval bounds."""
        wanted = _FREQUENCY[self.policy](self, rate)
        return min(max(wanted, 1 / self.max_interval), _ceiling(self.min_interval))

    def interval(self, rate: float) -> float:
        """Seconds between revisits of such a page (inf when it is never revisited)."""
        frequency = self.frequency(rate)
        return math.inf if frequency == 0 else 1 / frequency


def _ceiling(min_interval: float) -> float:
    return math.inf if min_interval == 0 else 1 / min_interval


def _optimal_frequency(allocation: Allocation, rate: float) -> float:
    """f with (1/rate)(1 - (1 + x) e^(-x)) = mu, x = rate / f; 0 when even f -> 0 is not worth it."""
    target = allocation.level * rate
    if rate == 0 or target >= 1:
        return 0.0
    return math.inf if target == 0 else rate / _marginal_inverse(target)


_FREQUENCY: dict[str, Callable[[Allocation, float], float]] = {
    "uniform": lambda allocation, rate: allocation.level,
    "proportional": lambda allocation, rate: allocation.level * rate if rate > 0 else 0.0,
    "capped-proportional": lambda allocation, rate: (allocation.level * min(rate, allocation.max_rate)
                                                     if rate > 0 and allocation.max_rate > 0 else 0.0),
    "optimal": _optimal_frequency,
}


def _marginal_inverse(y: float) -> float:
    """x > 0 with 1 - (1 + x) e^(-x) = y, for 0 < y < 1: Newton from a series start below 1/2
    (on the function itself), from the fixed point of x = ln(1 + x) - ln(1 - y) above (on that
    equation in logs, which stays well conditioned as y nears 1)."""
    if y < 0.5:
        s = math.sqrt(2 * y)
        x = s + s * s / 3 + 11 * s ** 3 / 72             # the inverse series, to O(s^4)
        def step(x: float) -> float:
            return (_missed(x) - y) / (x * math.exp(-x))
    else:
        target = -math.log1p(-y)
        x = target
        for _ in range(3):
            x = target + math.log1p(x)
        def step(x: float) -> float:
            return (math.log1p(x) - x + target) / (-x / (1 + x))
    for _ in range(50):
        change = step(x)
        x_next = x - change if x - change > 0 else x / 2
        if abs(x_next - x) <= 4e-16 * x_next:
            return x_next
        x = x_next
    return x


def _missed(x: float) -> float:
    """1 - (1 + x) e^(-x), by its series where the closed form would cancel."""
    if x >= 0.5:
        return -math.expm1(-x) - x * math.exp(-x)
    total, power = 0.0, x
    for k in range(2, 30):
        power *= x / k                                   # x^k / k!
        total += (k - 1) * power if k % 2 == 0 else -(k - 1) * power
    return total


def allocate(rates: Sequence[float], policy: str, revisits_per_second: float, *, min_interval: float,
             max_interval: float, max_rate: float | None = None) -> Allocation:
    """The policy's allocation of `revisits_per_second` over pages changing at `rates` (changes/s):
    its level solved so that the frequencies, held within the interval bounds, sum to the budget
    (as near as the bounds allow)."""
    if policy not in POLICIES:
        raise ValueError(f"unknown revisit policy {policy!r}; choose from {', '.join(POLICIES)}")
    if not 0 <= min_interval <= max_interval or max_interval <= 0:
        raise ValueError("need 0 <= min_interval <= max_interval, max_interval > 0")
    if any(rate < 0 or math.isnan(rate) for rate in rates) or revisits_per_second < 0:
        raise ValueError("rates and the budget are not negative")
    pages = len(rates)
    cap = max_rate if max_rate is not None else (revisits_per_second / pages if pages else 0.0)
    shape = Allocation(policy, 0.0, min_interval, max_interval, cap)
    if pages == 0 or policy == "uniform":
        return _with_level(shape, revisits_per_second / pages if pages else 0.0)
    return _with_level(shape, _solve_level(shape, rates, revisits_per_second))


def _with_level(shape: Allocation, level: float) -> Allocation:
    return Allocation(shape.policy, level, shape.min_interval, shape.max_interval, shape.max_rate)


def _solve_level(shape: Allocation, rates: Sequence[float], budget: float) -> float:
    """The level whose frequencies sum to `budget`; a bound's level when the sum cannot reach it."""
    def excess(level: float) -> float:
        allocation = _with_level(shape, level)
        return sum(allocation.frequency(rate) for rate in rates) - budget
    grows = shape.policy != "optimal"            # more level, more revisits; optimal's mu: fewer
    if excess(math.inf if grows else 0.0) <= 0:
        return math.inf if grows else 0.0        # even every page at its ceiling spends no more
    if excess(0.0 if grows else math.inf) >= 0:
        return 0.0 if grows else math.inf        # every page at its floor spends it already
    positive = [rate for rate in rates if rate > 0]
    start = budget / sum(positive) if grows else len(positive) / sum(positive)
    sign = 1 if grows else -1
    return _increasing_root(lambda level: sign * excess(level), start)


def _increasing_root(function: Callable[[float], float], start: float) -> float:
    return _decreasing_root(lambda x: -function(x), start)


# -- which pages now -------------------------------------------------------------------------

def plan(histories: Iterable[PageHistory], now: float, policy: str, budget: Budget, *, min_interval: float,
         max_interval: float, max_rate: float | None = None, fill: bool = False) -> list[int]:
    """Ids of the pages to revisit now, most overdue first (the module docstring says how).
    ``fill`` (a per-pass budget): the N most overdue pages even if fewer are
    due yet, so a pass run sooner than the rhythm spends its N all the same
    (the pages no revisit is worth, an infinite interval, are never taken)."""
    histories = list(histories)
    if not histories:
        return []
    spend = _revisits_per_second(budget, histories, now)
    prior = spend / len(histories)
    rates = [_or(change_rate(history), prior) for history in histories]
    allocation = allocate(rates, policy, spend, min_interval=min_interval, max_interval=max_interval,
                          max_rate=max_rate)
    overdue = []
    for history, rate in zip(histories, rates):
        lateness = _lateness(now - history.visits[-1], allocation.interval(rate))
        if lateness >= 1 or (fill and lateness > 0):
            overdue.append((-lateness, history.id))
    chosen = [page for _, page in sorted(overdue)]
    return chosen if budget.per_pass is None else chosen[:budget.per_pass]


def _or(value: float | None, default: float) -> float:
    return default if value is None else value


def _revisits_per_second(budget: Budget, histories: Sequence[PageHistory], now: float) -> float:
    if budget.per_day is not None:
        return budget.per_day / DAY
    since = now - max(history.visits[-1] for history in histories)
    if budget.per_pass == 0:
        return 0.0
    return budget.per_pass / since if since > 0 else math.inf


def _lateness(elapsed: float, interval: float) -> float:
    """Time since the last visit in intervals: 1 = due now."""
    if math.isinf(interval):
        return 0.0
    return math.inf if interval == 0 else elapsed / interval

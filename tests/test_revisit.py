"""urllist.revisit: the change-rate estimators read what they should on simulated pages, the
policies spend exactly their budget, the optimum is one, and plan() keeps the budget and bounds."""
from __future__ import annotations

import itertools
import math
import random
import statistics

import pytest

from urllist.revisit import (DAY, POLICIES, Budget, PageHistory, age, allocate, change_rate, existence_rate,
                             freshness, hint_rate, improved_rate, last_modified_rate, naive_rate, plan)
from urllist.revisit import _marginal_inverse

PAGES = 20_000   # simulated pages per estimator check


def regular_pages(rate: float, interval: float, intervals: int, pages: int, seed: int) -> list[PageHistory]:
    """Pages of a Poisson `rate` visited every `interval`: only whether each interval saw a change."""
    rng = random.Random(seed)
    p = -math.expm1(-rate * interval)
    visits = tuple(k * interval for k in range(intervals + 1))
    return [PageHistory(i, visits, tuple(rng.random() < p for _ in range(intervals))) for i in range(pages)]


def dated_pages(rate: float, interval: float, intervals: int, pages: int, seed: int) -> list[PageHistory]:
    """The same pages with a Last-Modified at every visit: the true time of the last change."""
    rng = random.Random(seed)
    histories = []
    for i in range(pages):
        visits = [k * interval for k in range(intervals + 1)]
        last = -rng.expovariate(rate)                 # the page's last change before the crawl
        modified, changed = [last], []
        for before, visit in zip(visits, visits[1:]):
            back = rng.expovariate(rate)              # backward from the visit to the latest change
            changed.append(back < visit - before)
            modified.append(visit - back if back < visit - before else modified[-1])
        histories.append(PageHistory(i, tuple(visits), tuple(changed), tuple(modified)))
    return histories


# -- estimators ------------------------------------------------------------------------------

def test_one_change_per_interval_naive_reads_063_improved_reads_100():
    histories = regular_pages(rate=1.0, interval=1.0, intervals=20, pages=PAGES, seed=7)
    naive = statistics.fmean(naive_rate(h) for h in histories)
    improved = statistics.fmean(existence_rate(h) for h in histories)
    # per page X/n has sd sqrt(p(1-p)/n) = 0.108, so the mean of 20,000 has sd 0.0008;
    # the improved estimate's per-page sd is 0.20, its mean's 0.0014: 5 sd each
    assert naive == pytest.approx(1 - math.exp(-1), abs=0.004)
    assert improved == pytest.approx(1.0, abs=0.01)


def test_improved_estimator_is_nearly_unbiased_exactly_by_the_binomial_sum():
    n, p = 20, 1 - math.exp(-1)
    expected = sum(math.comb(n, x) * p**x * (1 - p)**(n - x) * improved_rate(n, x, 1.0) for x in range(n + 1))
    assert expected == pytest.approx(1.0, abs=0.01)
    assert improved_rate(n, n, 1.0) == pytest.approx(math.log(2 * n + 1))   # finite when every interval changed
    assert improved_rate(n, 0, 1.0) == 0.0


@pytest.mark.parametrize("changed", [(False,) * 5, (True,) * 5, (True, False, True, True, False)])
@pytest.mark.parametrize("interval", [60.0, 3 * DAY])
def test_existence_estimator_on_regular_intervals_is_the_improved_one(changed, interval):
    history = PageHistory(1, tuple(1e9 + k * interval for k in range(6)), changed)
    assert existence_rate(history) == pytest.approx(improved_rate(5, sum(changed), interval), rel=1e-9)


def test_existence_estimator_on_irregular_intervals_is_unbiased_where_the_naive_one_is_not():
    rng = random.Random(3)
    estimates, naive = [], []
    for page in range(4000):
        gaps = [rng.expovariate(1.0) for _ in range(30)]           # mean interval 1, rate 1
        visits = tuple(itertools.accumulate(gaps, initial=0.0))
        history = PageHistory(page, visits, tuple(rng.random() < -math.expm1(-g) for g in gaps))
        estimates.append(existence_rate(history))
        naive.append(naive_rate(history))
    # per-page sd about 0.35: the mean of 4,000 has sd 0.006
    assert statistics.fmean(estimates) == pytest.approx(1.0, abs=0.03)
    assert statistics.fmean(naive) < 0.6


@pytest.mark.parametrize("intervals", [3, 10, 50])
@pytest.mark.parametrize("changes_per_interval", [0.1, 1.0, 10.0])
def test_last_modified_estimator_is_unbiased_where_the_plain_mle_is_not(intervals, changes_per_interval):
    histories = dated_pages(1.0, changes_per_interval, intervals, pages=8000, seed=intervals)
    mean = statistics.fmean(last_modified_rate(h) for h in histories)
    # the sd of one estimate is at most 1/sqrt(changes seen) <= 0.5 here: the mean of 8,000 has sd <= 0.006
    assert mean == pytest.approx(1.0, abs=0.03)
    if intervals == 3 and changes_per_interval == 10.0:     # nothing censored: the MLE X/Q reads high
        plain = [_events_over_watched(h) for h in histories]
        assert statistics.fmean(plain) > 1.3


def _events_over_watched(history: PageHistory) -> float:
    events, watched = 1, history.visits[0] - history.modified[0]
    for k, changed in enumerate(history.changed):
        end = history.modified[k + 1] if changed else history.visits[k]
        events += changed
        watched += history.visits[k + 1] - end
    return events / watched


def test_last_modified_is_used_only_when_it_agrees_with_the_visits():
    visits, changed = (0.0, 100.0, 200.0), (True, False)
    agrees = PageHistory(1, visits, changed, (-50.0, 60.0, 60.0))
    moved_unchanged = PageHistory(1, visits, changed, (-50.0, 60.0, 150.0))   # dynamic Last-Modified
    stale_changed = PageHistory(1, visits, changed, (-50.0, -50.0, -50.0))
    missing = PageHistory(1, visits, changed, (-50.0, None, 60.0))
    # watched back: 50 s before the crawl (to -50, a change), 40 s (to 60, a change), 100 s unchanged
    assert last_modified_rate(agrees) == pytest.approx((2 - 90 / 190) / 190)
    for history in (moved_unchanged, stale_changed, missing, PageHistory(1, visits, changed)):
        assert last_modified_rate(history) is None
        assert change_rate(history) == existence_rate(history)
    assert change_rate(agrees) == last_modified_rate(agrees)


def test_the_hint_is_median_unbiased_and_absent_without_a_date():
    rng = random.Random(11)
    rates = [hint_rate(PageHistory(i, (0.0,), (), lastmod=-rng.expovariate(2.0))) for i in range(PAGES)]
    assert statistics.median(rates) == pytest.approx(2.0, rel=0.03)
    assert hint_rate(PageHistory(1, (0.0,), (), (-10.0,))) == pytest.approx(math.log(2) / 10)
    assert change_rate(PageHistory(1, (0.0,), ())) is None
    assert change_rate(PageHistory(1, (0.0,), (), lastmod=5.0)) is None     # a date after the visit


def test_histories_that_cannot_be_are_refused():
    with pytest.raises(ValueError):
        PageHistory(1, (0.0, 1.0), ())
    with pytest.raises(ValueError):
        PageHistory(1, (1.0, 0.0), (True,))
    with pytest.raises(ValueError):
        PageHistory(1, (0.0, 1.0), (True,), (0.0,))
    with pytest.raises(ValueError):
        Budget()
    with pytest.raises(ValueError):
        Budget(per_pass=3, per_day=3.0)


# -- the model and the policies ---------------------------------------------------------------

def test_freshness_and_age_match_their_limits():
    assert freshness(1.0, 1.0) == pytest.approx(1 - math.exp(-1))
    assert freshness(0.0, 5.0) == 1.0 and freshness(1.0, math.inf) == 0.0
    assert age(1.0, 1e-9) == pytest.approx(1e-18 / 6, rel=1e-6)       # the series branch
    assert age(2.0, 3.0) == pytest.approx(1.5 - 0.5 + (1 - math.exp(-6)) / 12)
    assert age(1.0, math.inf) == math.inf


@pytest.mark.parametrize("y", [1e-15, 1e-9, 1e-4, 0.1, 0.5, 0.9, 1 - 1e-9])
def test_the_marginal_freshness_inverts(y):
    x = _marginal_inverse(y)
    assert -math.expm1(-x) - x * math.exp(-x) == pytest.approx(y, rel=1e-9)


def log_uniform(pages: int) -> list[float]:
    """Change rates log-uniform over 0.01..10 a day, per second, at the quantiles (i + 0.5) / pages."""
    return [10 ** (-2 + 3 * (i + 0.5) / pages) / DAY for i in range(pages)]


def mean_freshness(rates, allocation) -> float:
    return statistics.fmean(freshness(rate, allocation.interval(rate)) for rate in rates)


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("bounds", [(0.0, math.inf), (3600.0, 14 * DAY)])
def test_every_policy_spends_exactly_its_budget_within_the_bounds(policy, bounds):
    rng = random.Random(5)
    rates = [rng.lognormvariate(0, 2) / DAY for _ in range(500)] + [0.0] * 10
    allocation = allocate(rates, policy, 510 / DAY, min_interval=bounds[0], max_interval=bounds[1])
    assert sum(allocation.frequency(rate) for rate in rates) == pytest.approx(510 / DAY, rel=1e-9)
    assert all(bounds[0] <= allocation.interval(rate) <= bounds[1] for rate in rates)


def test_classical_case_optimal_beats_uniform_beats_proportional_and_skips_the_fastest():
    rates = log_uniform(4000)
    spend = len(rates) / DAY                                           # one refresh per page per day
    found = {policy: allocate(rates, policy, spend, min_interval=0, max_interval=math.inf) for policy in POLICIES}
    assert mean_freshness(rates, found["uniform"]) == pytest.approx(0.715, abs=0.002)
    assert mean_freshness(rates, found["proportional"]) == pytest.approx(0.527, abs=0.003)
    assert mean_freshness(rates, found["optimal"]) == pytest.approx(0.752, abs=0.002)
    skipped = [rate for rate in rates if found["optimal"].frequency(rate) == 0]
    assert 0.03 < len(skipped) / len(rates) < 0.07
    assert min(skipped) > max(rate for rate in rates if found["optimal"].frequency(rate) > 0)


def test_the_optimum_cannot_be_improved_by_moving_budget_between_two_pages():
    rates = log_uniform(200)
    allocation = allocate(rates, "optimal", 200 / DAY, min_interval=0, max_interval=math.inf)
    frequencies = [allocation.frequency(rate) for rate in rates]

    def total(fs):
        return sum(freshness(rate, 1 / f) if f > 0 else freshness(rate, math.inf) for rate, f in zip(rates, fs))
    best = total(frequencies)
    rng = random.Random(2)
    for _ in range(200):
        i, j = rng.sample(range(200), 2)
        moved = list(frequencies)
        shift = min(moved[i], 1 / DAY) * rng.uniform(0.01, 0.5)
        moved[i] -= shift
        moved[j] += shift
        assert total(moved) <= best + 1e-12


def test_capped_proportional_treats_every_rate_above_the_cap_alike():
    rates = [0.1 / DAY, 0.5 / DAY, 2 / DAY, 20 / DAY]
    allocation = allocate(rates, "capped-proportional", 4 / DAY, min_interval=0, max_interval=math.inf,
                          max_rate=1 / DAY)
    assert allocation.interval(2 / DAY) == allocation.interval(20 / DAY)
    assert allocation.interval(0.1 / DAY) == pytest.approx(5 * allocation.interval(0.5 / DAY))
    default = allocate(rates, "capped-proportional", 4 / DAY, min_interval=0, max_interval=math.inf)
    assert default.max_rate == pytest.approx(1 / DAY)                  # one change per mean revisit interval


def test_an_unknown_policy_is_refused_with_the_choices():
    with pytest.raises(ValueError, match="uniform, proportional, capped-proportional, optimal"):
        allocate([1.0], "fastest", 1.0, min_interval=0, max_interval=10)


# -- plan ------------------------------------------------------------------------------------

def site(pages: int, now: float, seed: int) -> list[PageHistory]:
    """Pages visited daily for 30 days, changing at log-uniform rates, last visits 1 to 10 days ago."""
    rng = random.Random(seed)
    histories = []
    for i, rate in enumerate(log_uniform(pages)):
        last = now - DAY - rng.uniform(0, 9 * DAY)
        visits = tuple(last - (30 - k) * DAY for k in range(31))
        changed = tuple(rng.random() < -math.expm1(-rate * DAY) for _ in range(30))
        histories.append(PageHistory(i, visits, changed))
    return histories


@pytest.mark.parametrize("policy", POLICIES)
def test_a_pass_budget_is_the_day_budget_it_implies_cut_at_n(policy):
    now = 100 * DAY
    histories = site(300, now, seed=4)
    since = now - max(history.visits[-1] for history in histories)
    bounds = {"min_interval": 3600, "max_interval": 14 * DAY}
    chosen = plan(histories, now, policy, Budget(per_pass=40), **bounds)
    due = plan(histories, now, policy, Budget(per_day=40 * DAY / since), **bounds)
    assert len(due) > 40 and chosen == due[:40]
    assert len(set(due)) == len(due)


def test_a_day_budget_returns_the_pages_due_and_keeps_the_floor():
    now = 100 * DAY
    histories = site(300, now, seed=4)
    bounds = {"min_interval": 3600, "max_interval": 14 * DAY}
    # one visit a day each, every last visit a day or more ago: all due, the oldest first
    chosen = plan(histories, now, "uniform", Budget(per_day=300), **bounds)
    assert chosen == sorted(range(300), key=lambda i: histories[i].visits[-1])
    earlier = now - 4 * DAY
    expected = sorted((i for i, h in enumerate(histories) if earlier - h.visits[-1] >= DAY),
                      key=lambda i: histories[i].visits[-1])
    assert 0 < len(expected) < 300
    assert plan(histories, earlier, "uniform", Budget(per_day=300), **bounds) == expected
    lavish = plan(histories, now, "optimal", Budget(per_day=1e9), min_interval=11 * DAY, max_interval=14 * DAY)
    assert lavish == []                                   # every page was visited within 11 days


def test_the_ceiling_brings_back_a_page_no_budget_would():
    now = 100 * DAY
    fresh = PageHistory(1, (now - 20 * DAY, now - 10 * DAY), (False,))
    stale = PageHistory(2, (now - 40 * DAY, now - 15 * DAY), (False,))
    assert plan([fresh, stale], now, "proportional", Budget(per_day=1e-9), min_interval=60,
                max_interval=14 * DAY) == [2]


def test_pages_never_revisited_get_the_prior_and_the_hint_orders_them():
    now = 10 * DAY
    unknown = [PageHistory(i, (now - 2 * DAY,), ()) for i in range(10)]
    # the prior: each changes as often as the budget visits the average page, every 2 days here
    assert plan(unknown, now, "proportional", Budget(per_day=5), min_interval=60, max_interval=30 * DAY) \
        == list(range(10))
    assert plan(unknown, now - 1, "proportional", Budget(per_day=5), min_interval=60, max_interval=30 * DAY) == []
    hinted = [PageHistory(0, (now - DAY,), (), lastmod=now - 100 * DAY),     # unchanged for 99 days
              PageHistory(1, (now - DAY,), (), lastmod=now - 1.01 * DAY)]    # changed just before the crawl
    assert plan(hinted, now, "proportional", Budget(per_pass=2), min_interval=60, max_interval=30 * DAY) == [1]

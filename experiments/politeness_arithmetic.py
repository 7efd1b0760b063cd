"""Politeness arithmetic: how many hosts a polite crawler needs, measured on the real scheduler.

A polite crawler starts at most one request per ``delay`` seconds on one
host, so its request queue is split into one queue per host and its speed
is bounded twice (Little's law: pages in flight = rate x time per page):

    pages/s <= threads / fetch                  (every thread busy)
    pages/s <= hosts with work / host period    (every host at its pace)

The host period is the time between two starts on one host.  The
crawler's gate (getpage.politeness) measures the delay from the later of
a request's start and the server's answer (its headers), and one request
per host is in flight at a time, so the period is max(delay + answer,
fetch). The simulation's server answers at once and spends the fetch
time sending the body, so the period is max(delay, fetch): at one page
per 30 s, 100 pages/s needs 3,000 hosts with URLs waiting.  The design
notes' delay + fetch is the period of a gate that waits the delay after
each fetch *ends*; both are reported.

Everything runs on a simulated clock, no network and no sleeping: the real
``urllist.HostFrontier`` (which host goes next) and the real
``getpage.PolitenessGate`` (when it may), driven by the Controller's loop
(``Simulation``): fetch threads, fetches of ``--fetch`` seconds on average
(uniformly within +- ``--jitter`` of it, seeded), pages of
the next level fetched ahead of their level (``AHEAD_PER_WORKER`` per
thread, as the Controller) and parked until it opens.  Each site is a
star: its root (a seed) links to every other page of the site, so from
level 1 on a host's queue holds all its pages and what is measured is the
politeness arithmetic, not the level barrier (tests/test_host_frontier.py
measures that one on trees).

1. Little's law: --hosts sites of --pages-per-host pages each, plus three
   cases that tell the formulas apart (threads the limit; delay = 2 x
   fetch; fetch = 2 x delay).  The measured rate is the fetch starts in a
   steady window (every host started, none run out; a whole number of host
   periods, so each host counts exactly once per period) over its length.
2. Zipf hosts: --zipf-hosts sites whose sizes are drawn with
   P(size >= x) = x^(-1/s), capped at --zipf-max (Zipf's rank-size law:
   the r-th largest of N sites has about (N/r)^s pages), every root a
   seed; run once as they are and once with a per-host budget (--budget
   pages at most, what --max-pages-per-host does).  The rate is counted per
   host period; for each target rate, the first period below it: how many
   hosts still had work then, and how many URLs the queue still held.

Outputs in --out: results.csv (the Little's-law rows), zipf_runs.csv,
zipf_targets.csv, zipf_rate.csv (the rate over time, in log-spaced bins),
results.md (the tables, also printed), run.json, and with matplotlib
littles_law.png and zipf_rate.png.

    python experiments/politeness_arithmetic.py
    python experiments/politeness_arithmetic.py --quick
    python experiments/politeness_arithmetic.py --hosts 30,300,3000 --delay 10 --fetch 1
"""
from __future__ import annotations

import heapq
import math
import random
import time
from array import array
from dataclasses import dataclass, field
from pathlib import Path

import click
import numpy as np

from controller.wiring import AHEAD_PER_WORKER
from getpage.politeness import PolitenessGate
from report import Column, markdown_table, plotting_available, run_info, write_csv, write_json, write_markdown
from urllist import HostFrontier, QueuedUrl

# Cases beside the --hosts series that tell the formulas apart: (label, hosts, delay, fetch, threads).
CONTRASTS = (("threads are the limit", 3000, 30.0, 0.5, 20),
             ("delay = 2 x fetch", 300, 1.0, 0.5, 200),
             ("fetch = 2 x delay", 300, 1.0, 2.0, 400))
QUICK = {"hosts": "30,300,3000", "pages_per_host": 6, "zipf_hosts": 3000, "zipf_max": 1000}


@dataclass(frozen=True)
class Setup:
    delay: float        # seconds between the starts of two requests to one host
    fetch: float        # seconds one fetch takes, on average
    threads: int        # fetch threads
    jitter: float = 0   # each fetch takes fetch x (1 +- jitter), uniformly drawn

    def fetch_times(self, seed: int):
        """An endless stream of fetch durations."""
        rng = random.Random(seed)
        while True:
            yield self.fetch * (1 + self.jitter * (2 * rng.random() - 1))

    @property
    def period(self) -> float:
        """Seconds between two starts on a host with work: one request in flight, start to start."""
        return max(self.delay, self.fetch)

    def predicted(self, hosts: int) -> float:
        """pages/s by Little's law with the gate's start-to-start period."""
        return min(self.threads / self.fetch, hosts / self.period)

    def end_to_start(self, hosts: int) -> float:
        """pages/s if the delay were counted from the end of each fetch (delay + fetch)."""
        return min(self.threads / self.fetch, hosts / (self.delay + self.fetch))


@dataclass
class Trace:
    """Every fetch start of a simulated crawl, in time order."""
    hosts: int
    starts: array = field(default_factory=lambda: array("d"))   # simulated seconds
    host: array = field(default_factory=lambda: array("l"))     # host number of each start
    end: float = 0.0                                            # when the last fetch ended
    busy: float = 0.0                                           # thread-seconds spent fetching
    wall_seconds: float = 0.0                                   # what simulating it took

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        return np.frombuffer(self.starts, dtype=np.float64), np.frombuffer(self.host, dtype=np.int64)


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _never_sleep(seconds: float) -> None:
    raise AssertionError("the simulation asks the gate without blocking; nothing may sleep")


def host_name(number: int) -> str:
    return f"h{number}.test:80"


def host_of(url: str) -> str:
    return url.split("/", 3)[2]


class Simulation:
    """The Controller's loop on a simulated clock, over star sites of the given sizes:
    the real HostFrontier and PolitenessGate, fetches of setup.fetch seconds on
    setup.threads threads, pages fetched ahead of their level parked until it opens."""

    def __init__(self, sizes: list[int], setup: Setup, seed: int = 0) -> None:
        self.sizes, self.setup = sizes, setup
        self.durations = setup.fetch_times(seed)
        self.names = [host_name(k) for k in range(len(sizes))]
        self.clock = Clock()
        self.gate = PolitenessGate(setup.delay, 1, clock=self.clock, sleep=_never_sleep)
        self.frontier = HostFrontier(host_of, self.gate, max_ahead=AHEAD_PER_WORKER * setup.threads)
        self.host_of_id = array("l")
        self.running: list[tuple[float, int, QueuedUrl]] = []   # (end, id, item)
        self.parked: list[tuple[int, int, QueuedUrl]] = []      # (level, id, item)
        self.trace = Trace(len(sizes))

    def run(self) -> Trace:
        started = time.perf_counter()
        self._push(range(len(self.sizes)), [0] * len(self.sizes), 0, None)
        while not self.frontier.exhausted():
            self._start_ready()
            if not self._advance():
                raise RuntimeError("stuck: nothing running, no host ready, URLs left")
        self.trace.end = self.clock.now
        self.trace.wall_seconds = time.perf_counter() - started
        return self.trace

    def _push(self, hosts, pages, level: int, parent: int | None) -> None:
        first = self.frontier.next_id
        self.host_of_id.extend(hosts)
        self.frontier.push(QueuedUrl(first + k, f"http://{self.names[host]}/{page}", level, parent)
                           for k, (host, page) in enumerate(zip(hosts, pages)))

    def _start_ready(self) -> None:
        now = self.clock.now
        for item in self.frontier.pop(self.setup.threads - len(self.running), now):
            self.trace.starts.append(now)
            self.trace.host.append(self.host_of_id[item.id])
            duration = next(self.durations)
            self.trace.busy += duration
            heapq.heappush(self.running, (now + duration, item.id, item))

    def _advance(self) -> bool:
        """Move the clock to the next event, a fetch ending or a host's time coming;
        False when there is none."""
        ready = self.frontier.next_ready(self.clock.now)
        running = self.running
        if running and (ready is None or running[0][0] <= ready or len(running) == self.setup.threads):
            self.clock.now, _, item = heapq.heappop(running)
            self._fetched(item)
        elif ready is not None:
            self.clock.now = max(self.clock.now, ready)
        else:
            return False
        return True

    def _fetched(self, item: QueuedUrl) -> None:
        self.gate.release(self.names[self.host_of_id[item.id]])
        self.frontier.fetched(item)
        heapq.heappush(self.parked, (item.level, item.id, item))
        while self.parked and self.parked[0][0] <= self.frontier.current_level:
            self._process(heapq.heappop(self.parked)[2])

    def _process(self, item: QueuedUrl) -> None:
        """A root queues the rest of its site; every page is then done."""
        if item.level == 0:
            host = self.host_of_id[item.id]
            size = self.sizes[host]
            self._push([host] * (size - 1), range(1, size), 1, item.id)
        self.frontier.done(item)


# -- 1. Little's law ----------------------------------------------------------------------------

def steady_window(trace: Trace, period: float) -> tuple[float, float]:
    """[begin, end): after every host's first start, before any host's last, and a whole
    number of periods long, its edges half a period off the starts' rhythm."""
    starts, hosts = trace.arrays()
    first, last = _first_and_last(starts, hosts, trace.hosts)
    begin = first.max() + period / 2
    periods = math.floor((last.min() - begin) / period)
    if periods < 1:
        raise click.ClickException("no steady window: give every host more pages (--pages-per-host)")
    return begin, begin + periods * period


def _first_and_last(starts: np.ndarray, hosts: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray]:
    """Each host's first and last start (starts are in time order)."""
    first, last = np.full(count, np.inf), np.full(count, -np.inf)
    np.minimum.at(first, hosts, starts)
    np.maximum.at(last, hosts, starts)
    return first, last


def smallest_gap(trace: Trace) -> float:
    """The shortest time between two starts on one host (the gate's promise: >= delay)."""
    starts, hosts = trace.arrays()
    order = np.lexsort((starts, hosts))
    same = hosts[order][1:] == hosts[order][:-1]
    gaps = np.diff(starts[order])[same]
    return float(gaps.min()) if gaps.size else math.inf


def littles_law_row(label: str, hosts: int, pages: int, setup: Setup) -> dict:
    """Crawl `hosts` star sites of `pages` pages; the steady rate against both formulas."""
    trace = Simulation([pages] * hosts, setup).run()
    begin, end = steady_window(trace, setup.period)
    starts, _ = trace.arrays()
    measured = np.count_nonzero((starts >= begin) & (starts < end)) / (end - begin)
    predicted = setup.predicted(hosts)
    limit = "threads" if setup.threads / setup.fetch < hosts / setup.period else "politeness"
    return {"case": label, "hosts": hosts, "delay": setup.delay, "fetch": setup.fetch,
            "threads": setup.threads, "pages": len(starts), "limit": limit,
            "threads_bound": setup.threads / setup.fetch, "predicted": predicted,
            "end_to_start": setup.end_to_start(hosts), "measured": measured,
            "ratio": measured / predicted, "window_begin": begin, "window_end": end,
            "smallest_gap": smallest_gap(trace), "simulated_seconds": trace.end,
            "wall_seconds": trace.wall_seconds}


def series_label(setup: Setup) -> str:
    return f"{setup.delay:g} s delay"


def littles_law(host_counts: list[int], pages: int, setup: Setup) -> list[dict]:
    """The --hosts series, then CONTRASTS (at setup's jitter)."""
    rows = [littles_law_row(series_label(setup), hosts, pages, setup) for hosts in host_counts]
    for label, hosts, delay, fetch, threads in CONTRASTS:
        rows.append(littles_law_row(label, hosts, pages, Setup(delay, fetch, threads, setup.jitter)))
    return rows


# -- 2. Zipf host sizes ---------------------------------------------------------------------------

def zipf_sizes(hosts: int, s: float, largest: int, seed: int) -> list[int]:
    """Site sizes with P(size >= x) = x^(-1/s) for whole x, capped at largest."""
    rng = random.Random(seed)
    return [min(largest, int((1.0 - rng.random()) ** -s)) for _ in range(hosts)]


@dataclass(frozen=True)
class Periods:
    """A crawl counted per host period: starts[k] in [k, k+1) periods, and the
    hosts with work at the beginning of each (a page still to start)."""
    period: float
    starts: np.ndarray
    with_work: np.ndarray
    total: int

    @classmethod
    def of(cls, trace: Trace, period: float) -> Periods:
        starts, hosts = trace.arrays()
        counts = np.bincount((starts // period).astype(np.int64))
        _, last = _first_and_last(starts, hosts, trace.hosts)
        begins = np.arange(len(counts)) * period
        with_work = len(last) - np.searchsorted(np.sort(last), begins, side="left")
        return cls(period, counts, with_work, len(starts))

    def rate(self) -> np.ndarray:
        return self.starts / self.period


def crossings(run: str, periods: Periods, targets: list[float]) -> list[dict]:
    """For each target: the first period whose rate is below it, and the queue then."""
    rows = []
    rates, done = periods.rate(), np.concatenate(([0], np.cumsum(periods.starts)))
    for target in targets:
        below = np.flatnonzero(rates < target)
        k = int(below[0]) if below.size else None
        rows.append({"run": run, "target": target, "hosts_needed": target * periods.period,
                     "time": None if k is None else k * periods.period,
                     "hosts_with_work": None if k is None else int(periods.with_work[k]),
                     "rate_before": None if not k else float(rates[k - 1]),
                     "urls_left": None if k is None else int(periods.total - done[k]),
                     "share_done": None if k is None else float(done[k] / periods.total)})
    return rows


def run_summary(run: str, sizes: list[int], trace: Trace, setup: Setup, periods: Periods) -> dict:
    """Totals of one Zipf run; host_use: starts per host with work per period (1 = none idled)."""
    starts, _ = trace.arrays()
    working = periods.with_work > 0
    use = periods.starts[working] / periods.with_work[working]
    share = {q: float(starts[math.ceil(q * len(starts)) - 1]) for q in (0.5, 0.9, 0.99)}
    return {"run": run, "hosts": len(sizes), "pages": len(starts), "largest": max(sizes),
            "first_period_rate": float(np.count_nonzero(starts < setup.period) / setup.period),
            "time_50": share[0.5], "time_90": share[0.9], "time_99": share[0.99], "end": trace.end,
            "mean_rate": len(starts) / trace.end,
            "thread_use": trace.busy / (setup.threads * trace.end),
            "host_use": float(periods.starts.sum() / periods.with_work.sum()), "host_use_min": float(use.min()),
            "smallest_gap": smallest_gap(trace), "wall_seconds": trace.wall_seconds}


def log_bins(run: str, periods: Periods, bins: int = 60) -> list[dict]:
    """The rate per period merged into log-spaced bins (a whole number of periods each)."""
    n = len(periods.starts)
    edges = np.unique(np.concatenate(([0], np.geomspace(1, n, bins).round(), [n])).astype(np.int64))
    rows = []
    for a, b in zip(edges[:-1], edges[1:]):
        rows.append({"run": run, "begin": a * periods.period, "end": b * periods.period,
                     "rate": float(periods.starts[a:b].sum() / ((b - a) * periods.period)),
                     "hosts_with_work": int(periods.with_work[a]),
                     "host_bound": float(periods.with_work[a] / periods.period)})
    return rows


def zipf_runs(sizes: list[int], budget: int, setup: Setup, targets: list[float]) -> dict[str, list[dict]]:
    """The Zipf sites crawled whole and with a per-host budget: summaries, crossings, rate series."""
    out = {"runs": [], "targets": [], "rate": []}
    for run, capped in (("no budget", sizes), (f"budget {budget}", [min(size, budget) for size in sizes])):
        trace = Simulation(capped, setup).run()
        periods = Periods.of(trace, setup.period)
        out["runs"].append(run_summary(run, capped, trace, setup, periods))
        out["targets"] += crossings(run, periods, targets)
        out["rate"] += log_bins(run, periods)
    return out


# -- output ---------------------------------------------------------------------------------------------

def _n(value) -> str:
    return f"{value:,.0f}"


def _f(digits: int):
    return f"{{:,.{digits}f}}".format


LITTLE = (Column("case", "case"), Column("hosts", "hosts", _n), Column("delay", "delay s", "{:g}".format),
          Column("fetch", "fetch s", "{:g}".format), Column("threads", "threads"), Column("pages", "pages", _n),
          Column("limit", "limit"), Column("predicted", "predicted pages/s: min(T/F, H/max(D,F))", _f(2)),
          Column("end_to_start", "if the delay ran from each fetch's end: min(T/F, H/(D+F))", _f(2)),
          Column("measured", "measured pages/s", _f(2)), Column("ratio", "measured / predicted", _f(3)),
          Column("smallest_gap", "smallest gap on a host, s", _f(2)),
          Column("wall_seconds", "wall s to simulate", _f(1)))
RUNS = (Column("run", "run"), Column("hosts", "hosts", _n), Column("pages", "pages", _n),
        Column("largest", "largest host", _n), Column("first_period_rate", "pages/s, first period", _f(1)),
        Column("time_50", "50 % fetched at, s", _n), Column("time_90", "90 % at, s", _n),
        Column("time_99", "99 % at, s", _n), Column("end", "end, s", _n),
        Column("mean_rate", "mean pages/s", _f(2)), Column("thread_use", "thread use", "{:.1%}".format),
        Column("host_use", "starts / hosts with work, all periods", "{:.4f}".format),
        Column("host_use_min", "worst period", "{:.4f}".format),
        Column("smallest_gap", "smallest gap on a host, s", _f(2)), Column("wall_seconds", "wall s to simulate", _f(1)))
TARGETS = (Column("run", "run"), Column("target", "target pages/s", "{:g}".format),
           Column("hosts_needed", "hosts needed: target x period", _n),
           Column("time", "rate first below target at, s", _n),
           Column("rate_before", "pages/s the period before", _f(1)),
           Column("hosts_with_work", "hosts with work then", _n),
           Column("urls_left", "URLs still queued then", _n), Column("share_done", "crawl done then", "{:.1%}".format))


def report_body(little: list[dict], zipf: dict[str, list[dict]], setup: Setup, zipf_note: str) -> str:
    return "\n\n".join([
        "## Little's law: the steady rate against the prediction",
        "T threads, F fetch seconds, H hosts, D delay. The gate counts the delay from start to start, "
        "one request per host at a time, so a host with work starts one page per max(D, F).",
        markdown_table(LITTLE, little),
        f"## Zipf host sizes, delay {setup.delay:g} s, fetch {setup.fetch:g} s, {setup.threads} threads",
        zipf_note, markdown_table(RUNS, zipf["runs"]),
        "## Hosts the queue must hold for a target rate",
        "Rates counted per host period; the first period below each target, and what the queue held then.",
        markdown_table(TARGETS, zipf["targets"])])


def _pyplot():
    import matplotlib
    matplotlib.use("Agg")   # files only: no display needed, same output everywhere
    import matplotlib.pyplot as plt
    return plt


def _save(figure, path: Path, subtitle: str) -> None:
    figure.suptitle(subtitle, fontsize=8, y=0.01, va="bottom")
    figure.tight_layout(rect=(0, 0.03, 1, 1))
    figure.savefig(path)
    _pyplot().close(figure)


def plot_littles_law(path: Path, little: list[dict], setup: Setup, subtitle: str) -> None:
    """Left: the --hosts series against both formulas; right: measured / predicted, every case."""
    figure, (left, right) = _pyplot().subplots(1, 2, figsize=(11, 4.5), dpi=100)
    series = [row for row in little if row["case"] == series_label(setup)]
    hosts = np.geomspace(min(r["hosts"] for r in series) / 2, max(r["hosts"] for r in series) * 2, 100)
    left.plot(hosts, [setup.predicted(h) for h in hosts], label="min(T/F, H/max(D,F))")
    left.plot(hosts, [setup.end_to_start(h) for h in hosts], linestyle=":", label="min(T/F, H/(D+F))")
    left.plot([r["hosts"] for r in series], [r["measured"] for r in series], "o", label="measured")
    left.set(xscale="log", yscale="log", xlabel="hosts with work", ylabel="pages/s",
             title=f"D = {setup.delay:g} s, F = {setup.fetch:g} s, T = {setup.threads}")
    left.legend(fontsize=8)
    rows = np.arange(len(little))
    right.barh(rows - 0.2, [r["ratio"] for r in little], 0.4, label="start to start: H/max(D,F)")
    right.barh(rows + 0.2, [r["measured"] / r["end_to_start"] for r in little], 0.4,
               label="end to start: H/(D+F)")
    right.axvline(1, color="0.3", linewidth=0.8)
    right.set_yticks(rows, [f"{r['case']}, H={r['hosts']:,}" for r in little], fontsize=8)
    right.invert_yaxis()
    right.set(xlabel="measured / predicted", title="which formula the measurement follows")
    right.set_xlim(0, 1.9)
    right.legend(fontsize=8, loc="upper right")
    _save(figure, path, subtitle)


def plot_zipf(path: Path, zipf: dict[str, list[dict]], targets: list[float], subtitle: str) -> None:
    """The rate over time of each Zipf run (log-log), with hosts with work / period beside it."""
    figure, axes = _pyplot().subplots(figsize=(8, 4.8), dpi=100)
    for run in zipf["runs"]:
        rows = [row for row in zipf["rate"] if row["run"] == run["run"] and row["rate"] > 0]
        middle = [math.sqrt(max(row["begin"], 1.0) * row["end"]) for row in rows]
        line, = axes.plot(middle, [row["rate"] for row in rows], label=f"{run['run']}: measured")
        axes.plot(middle, [row["host_bound"] for row in rows], linestyle=":", color=line.get_color(),
                  label=f"{run['run']}: hosts with work / period")
        axes.plot(middle[-1], rows[-1]["rate"], "o", color=line.get_color())
        axes.annotate(f"ends at {run['end']:,.0f} s", (middle[-1], rows[-1]["rate"]), fontsize=7,
                      xytext=(4, 4), textcoords="offset points", color=line.get_color())
    for target in targets:
        axes.axhline(target, color="0.7", linewidth=0.8)
        axes.annotate(f"{target:g} pages/s", (1, target), xycoords=("axes fraction", "data"),
                      ha="right", va="bottom", fontsize=7, color="0.4")
    axes.set(xscale="log", yscale="log", xlabel="simulated time (s)", ylabel="pages/s",
             title="Zipf host sizes: the rate falls as the small hosts run out")
    axes.legend(fontsize=8, loc="lower left")
    _save(figure, path, subtitle)


def _numbers(text: str, kind=float) -> list:
    try:
        return [kind(value) for value in text.split(",") if value.strip()]
    except ValueError:
        raise click.BadParameter(f"{text!r} is not a comma-separated list of numbers") from None


@click.command()
@click.option("--hosts", default="30,300,3000,10000", show_default=True,
              help="host counts of the Little's-law series (comma-separated)")
@click.option("--pages-per-host", default=20, show_default=True, type=click.IntRange(4),
              help="pages of each site in the Little's-law runs")
@click.option("--delay", default=30.0, show_default=True, type=click.FloatRange(0, min_open=True),
              help="seconds between the starts of two requests to one host")
@click.option("--fetch", default=0.5, show_default=True, type=click.FloatRange(0, min_open=True),
              help="seconds one fetch takes")
@click.option("--threads", default=200, show_default=True, type=click.IntRange(1), help="fetch threads")
@click.option("--jitter", default=0.5, show_default=True, type=click.FloatRange(0, 1),
              help="each fetch takes fetch x (1 +- jitter) seconds, uniformly drawn")
@click.option("--zipf-hosts", default=10_000, show_default=True, type=click.IntRange(1),
              help="sites in the Zipf runs")
@click.option("--zipf-s", default=1.0, show_default=True, type=click.FloatRange(0, min_open=True),
              help="Zipf exponent s: P(size >= x) = x^(-1/s)")
@click.option("--zipf-max", default=10_000, show_default=True, type=click.IntRange(1),
              help="largest site, pages")
@click.option("--budget", default=50, show_default=True, type=click.IntRange(1),
              help="per-host budget of the second Zipf run, pages")
@click.option("--targets", default="10,50,100", show_default=True, help="target rates, pages/s")
@click.option("--seed", default=2026, show_default=True, help="seed of the Zipf site sizes")
@click.option("--quick", is_flag=True, help="small sizes, for tests: " + ", ".join(f"{k}={v}" for k, v in QUICK.items()))
@click.option("--out", default="politeness-results", show_default=True, type=click.Path(path_type=Path))
def main(hosts, pages_per_host, delay, fetch, threads, jitter, zipf_hosts, zipf_s, zipf_max, budget, targets,
         seed, quick, out) -> None:
    """Little's law for a polite crawler, and the Zipf tail, on the real scheduler and a simulated clock."""
    started = time.perf_counter()
    plots = plotting_available()
    if quick:
        hosts, pages_per_host, zipf_hosts, zipf_max = (QUICK["hosts"], QUICK["pages_per_host"],
                                                       QUICK["zipf_hosts"], QUICK["zipf_max"])
    setup, target_list = Setup(delay, fetch, threads, jitter), _numbers(targets)
    sizes = zipf_sizes(zipf_hosts, zipf_s, zipf_max, seed)
    zipf_note = (f"{zipf_hosts:,} star sites, sizes drawn with P(size >= x) = x^(-1/s), s = {zipf_s:g}, "
                 f"at most {zipf_max:,} pages (seed {seed}); the second run caps every site at {budget} pages.")
    info = run_info("politeness_arithmetic", zipf_note, seed)
    little = littles_law(_numbers(hosts, int), pages_per_host, setup)
    zipf = zipf_runs(sizes, budget, setup, target_list)
    out.mkdir(parents=True, exist_ok=True)
    write_csv(out / "results.csv", list(little[0]), little)
    for name in ("runs", "targets", "rate"):
        write_csv(out / f"zipf_{name}.csv", list(zipf[name][0]), zipf[name])
    body = report_body(little, zipf, setup, zipf_note)
    write_markdown(out / "results.md", "Politeness arithmetic", info, body)
    write_json(out / "run.json", info, {"seconds": round(time.perf_counter() - started, 1),
                                        "delay": delay, "fetch": fetch, "threads": threads, "jitter": jitter,
                                        "pages_per_host": pages_per_host, "zipf_hosts": zipf_hosts,
                                        "zipf_s": zipf_s, "zipf_max": zipf_max, "budget": budget,
                                        "ahead_per_thread": AHEAD_PER_WORKER})
    if plots:
        subtitle = f"real HostFrontier + PolitenessGate on a simulated clock · {info.date[:10]}"
        plot_littles_law(out / "littles_law.png", little, setup, subtitle)
        plot_zipf(out / "zipf_rate.png", zipf, target_list, subtitle)
    click.echo(f"{body}\n\nwritten to {out}/ in {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()

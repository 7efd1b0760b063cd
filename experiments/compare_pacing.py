"""Which rule should --delay auto follow? Heritrix's, AutoThrottle's or a window's, measured.

    .venv/bin/python experiments/compare_pacing.py            # ~6 min
    .venv/bin/python experiments/compare_pacing.py --quick    # a check: one server, two rules

Each rule is a policy of getpage/pacing.py's shape (``observe(pace,
observation) -> pace``) put in the crawler's place (controller.wiring's
``pacing_policy``), and the real crawler crawls, in this process, loopback
servers of benchmarks/struggling_site.py, all at --per-host 4:

- ``heritrix-5`` / ``heritrix-1``: Heritrix's rule, the wait after a fetch is
  ``delayFactor x`` its duration (5, Heritrix's default, and 1), one request
  in flight a host (Heritrix's queues), within ``[min, max]``;
- ``autothrottle``: Scrapy AutoThrottle's, the delay moves half way to
  ``latency / target concurrency`` (1, its default) on each answer, never
  down on a non-2xx answer, every slot of --per-host open;
- ``window`` (what ``AdaptivePolicy`` does): the number in flight found as
  TCP finds its window (grows after calm answers, shrinks when answers slow
  down, halves on 503/429/timeouts), the interval doubled on overload and
  eased back after.

The servers: ``struggling`` (one core: answers take 20 ms x the requests
being served, 503 past two at once), ``slow`` (the same at 100 ms), and
``parallel`` (eight cores: 50 ms whatever the load, 503 past eight).
Per run: wall seconds, pages/s, 503s (the server's log), the most requests
in flight the server saw. Results (``--out``, experiments/results/pacing/):
results.csv (every run), results.md (medians), run.json.
"""
from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import click  # noqa: E402

from benchmarks.struggling_site import StrugglingSite  # noqa: E402
from controller import api, wiring  # noqa: E402
from experiments.report import (Column, markdown_table, run_info, write_csv, write_json,  # noqa: E402
                                write_markdown)
from getpage.pacing import AdaptivePolicy, FixedPolicy, Observation, Pace  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "pacing"
SERVERS = {
    "struggling": dict(pages=300, base=0.02, capacity=2),
    "slow": dict(pages=100, base=0.1, capacity=2),
    "parallel": dict(pages=300, base=0.05, capacity=8, shared_core=False),
}
PER_HOST = 4


class HeritrixPolicy(FixedPolicy):
    """Heritrix's politeness: wait factor x the last fetch's duration, one in flight."""

    adaptive = True

    def __init__(self, factor: float, min_delay: float = 0.0, max_delay: float = 30.0) -> None:
        super().__init__(min_delay, 1)
        self.factor, self.min_delay, self.max_delay = factor, min_delay, max_delay

    def observe(self, pace: Pace, seen: Observation) -> Pace:
        wait = min(self.max_delay, max(self.min_delay, self.factor * seen.latency))
        return replace(pace, interval=max(wait, pace.robots), latency=seen.latency)


class AutoThrottlePolicy(FixedPolicy):
    """Scrapy AutoThrottle's rule: toward latency / target, half way per answer."""

    adaptive = True

    def __init__(self, per_host: int, target: float = 1.0, max_delay: float = 60.0) -> None:
        super().__init__(0.0, per_host)
        self.target, self.max_delay = target, max_delay

    def observe(self, pace: Pace, seen: Observation) -> Pace:
        toward = (pace.interval + seen.latency / self.target) / 2
        if not seen.healthy and toward < pace.interval:
            toward = pace.interval
        return replace(pace, interval=max(pace.robots, min(self.max_delay, toward)),
                       latency=seen.latency)


POLICIES = {
    "heritrix-5": lambda: HeritrixPolicy(5.0),
    "heritrix-1": lambda: HeritrixPolicy(1.0),
    "autothrottle": lambda: AutoThrottlePolicy(PER_HOST),
    "window": lambda: AdaptivePolicy(0.0, 60.0, PER_HOST),
}


def run(policy_name: str, server: str, spec: dict, work: Path, **options) -> dict:
    wiring.pacing_policy = lambda config: POLICIES[policy_name]()
    with StrugglingSite(**spec) as site:
        started = time.monotonic()
        result = api.crawl(site.url, out=work / f"{policy_name}-{server}", delay="auto",
                           per_host=PER_HOST, max_depth=0, max_pages=0, quiet=True, overwrite=True,
                           **options)
        wall = time.monotonic() - started
        log = site.log()
    pages = result.stats["pages"]
    return {"policy": policy_name, "server": server, "wall_s": round(wall, 2), "pages": pages,
            "pages_per_s": round(pages / wall, 2), "refused": sum(s.status == 503 for s in log),
            "most_at_once": max(s.load for s in log)}


COLUMNS = [Column("server", "server"), Column("policy", "policy"),
           Column("wall_s", "wall s", lambda v: f"{v:.1f}"),
           Column("pages_per_s", "pages/s", lambda v: f"{v:.1f}"),
           Column("refused", "503s", lambda v: f"{v:g}"), Column("most_at_once", "most at once"),
           Column("runs", "runs")]


def medians(runs: list[dict]) -> list[dict]:
    rows = []
    for server in dict.fromkeys(r["server"] for r in runs):
        for policy in POLICIES:
            mine = [r for r in runs if r["server"] == server and r["policy"] == policy]
            if mine:
                rows.append({"server": server, "policy": policy,
                             **{key: statistics.median(r[key] for r in mine)
                                for key in ("wall_s", "pages_per_s", "refused")},
                             "most_at_once": max(r["most_at_once"] for r in mine), "runs": len(mine)})
    return rows


def write(out: Path, info, runs: list[dict]) -> str:
    """results.csv (every run), results.md (medians), run.json; the table."""
    out.mkdir(parents=True, exist_ok=True)
    write_csv(out / "results.csv", list(runs[0]), runs)
    text = markdown_table(COLUMNS, medians(runs))
    write_markdown(out / "results.md", f"Pacing rules at --per-host {PER_HOST}", info, text)
    write_json(out / "run.json", info, {"servers": SERVERS, "per_host": PER_HOST})
    return text


@click.command()
@click.option("--rounds", type=click.IntRange(1), default=1, show_default=True)
@click.option("--quick", is_flag=True, help="The struggling server only, 20 pages, two rules.")
@click.option("--out", type=click.Path(path_type=Path), default=RESULTS, show_default=True)
def main(rounds: int, quick: bool, out: Path) -> None:
    servers = {"struggling": {**SERVERS["struggling"], "pages": 20}} if quick else SERVERS
    # a quick run checks the script: two rules, parsing in the fetch threads (no process to start)
    policies = ("heritrix-1", "window") if quick else tuple(POLICIES)
    options = {"processes": 0} if quick else {}
    info = run_info("compare_pacing", "; ".join(f"{name}: {spec}" for name, spec in servers.items()),
                    None)
    runs = []
    with tempfile.TemporaryDirectory(prefix="pacing-") as tmp:
        for _ in range(rounds):
            for server, spec in servers.items():
                for policy in policies:   # interleaved: each server's rules back to back
                    runs.append(run(policy, server, spec, Path(tmp), **options))
                    click.echo(json.dumps(runs[-1]), err=True)
    click.echo(write(out, info, runs))


if __name__ == "__main__":
    main()

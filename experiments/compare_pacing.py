"""Which rule should --delay auto follow? Heritrix's, AutoThrottle's or a window's, measured.

    .venv/bin/python experiments/compare_pacing.py            # ~6 min
    .venv/bin/python experiments/compare_pacing.py --quick    # one server, ~1 min

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
in flight the server saw. Results: experiments/results/pacing/.
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
from benchmarks.report import machine, markdown_table  # noqa: E402
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


def run(policy_name: str, server: str, work: Path) -> dict:
    wiring.pacing_policy = lambda config: POLICIES[policy_name]()
    with StrugglingSite(**SERVERS[server]) as site:
        started = time.monotonic()
        result = api.crawl(site.url, out=work / f"{policy_name}-{server}", delay="auto",
                           per_host=PER_HOST, max_depth=0, max_pages=0, quiet=True, overwrite=True)
        wall = time.monotonic() - started
        log = site.log()
    pages = result.stats["pages"]
    return {"policy": policy_name, "server": server, "wall_s": round(wall, 2), "pages": pages,
            "pages_per_s": round(pages / wall, 2), "refused": sum(s.status == 503 for s in log),
            "most_at_once": max(s.load for s in log)}


def table(runs: list[dict]) -> str:
    rows = []
    for server in dict.fromkeys(r["server"] for r in runs):
        for policy in POLICIES:
            mine = [r for r in runs if r["server"] == server and r["policy"] == policy]
            if mine:
                rows.append((server, policy, f"{statistics.median(r['wall_s'] for r in mine):.1f}",
                             f"{statistics.median(r['pages_per_s'] for r in mine):.1f}",
                             f"{statistics.median(r['refused'] for r in mine):g}",
                             str(max(r["most_at_once"] for r in mine)), str(len(mine))))
    return markdown_table(("server", "policy", "wall s", "pages/s", "503s", "most at once", "runs"),
                          rows, left=2)


@click.command()
@click.option("--rounds", type=click.IntRange(1), default=1, show_default=True)
@click.option("--quick", is_flag=True, help="The struggling server only.")
def main(rounds: int, quick: bool) -> None:
    servers = ["struggling"] if quick else list(SERVERS)
    runs = []
    with tempfile.TemporaryDirectory(prefix="pacing-") as tmp:
        for _ in range(rounds):
            for server in servers:
                for policy in POLICIES:   # interleaved: each server's rules back to back
                    runs.append(run(policy, server, Path(tmp)))
                    click.echo(json.dumps(runs[-1]), err=True)
    text = table(runs)
    click.echo(text)
    RESULTS.mkdir(parents=True, exist_ok=True)
    meta = machine()
    (RESULTS / "pacing.json").write_text(json.dumps({"machine": meta, "runs": runs}, indent=1) + "\n")
    (RESULTS / "pacing.md").write_text(
        f"# Pacing rules at --per-host {PER_HOST}\n\n{meta['date']}, {meta['cores']} cores, load "
        f"average at start {' '.join(meta['load_average'])}; medians of {rounds} round(s)\n\n{text}\n")


if __name__ == "__main__":
    main()

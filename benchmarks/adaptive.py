"""Adaptive politeness (issue 26): --delay auto against fixed delays and Scrapy's AutoThrottle.

    .venv/bin/python -m benchmarks.adaptive --rounds 3
    .venv/bin/python -m benchmarks.adaptive --rounds 1 --no-fast --no-scrapy   # a quick look

Two servers, every setting run on each in turn, interleaved over rounds:

- the struggling server (benchmarks/struggling_site.py): 400 pages on one
  host whose answers take 20 ms x the requests it is serving at once and
  which answers 503 (every third with Retry-After: 1) to a third request at
  once. Ours with fixed delays at --per-host 4 (the user's bound), the
  best fixed setting found by hand (--delay 0 --per-host 1), --delay auto
  --per-host 4, and Scrapy with AutoThrottle on (its defaults: start delay
  5 s, target concurrency 1; CONCURRENT_REQUESTS_PER_DOMAIN 4, robots.txt
  obeyed as ours does). Counted from the server's own log: 503s, requests.
- a fast server: the polite benchmark's largest generated site
  (benchmarks/polite_site.py) behind nginx, ours at the default --delay 1
  against --delay auto and --delay 0.

Per run: wall seconds, pages saved, pages/s, 503s, all requests; for ours
what stats.json says set the pace. Results: benchmarks/results/adaptive/
<name>.json (every run) and benchmarks/results/<name>.md (medians), which
report.render_results copies into RESULTS.md.
"""
from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

if __package__ in (None, ""):   # run as a file: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import click

from benchmarks import peers as peer_registry
from benchmarks.measure import run_measured
from benchmarks.nginx import Nginx
from benchmarks.polite_site import SiteSetSpec, generate
from benchmarks.report import git_commit, machine, markdown_table, render_results
from benchmarks.struggling_site import StrugglingSite

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
STRUGGLING = (  # (label, our crawler's arguments)
    ("--delay 0 --per-host 4", ("--delay", "0", "--per-host", "4")),
    ("--delay 0.02 --per-host 4", ("--delay", "0.02", "--per-host", "4")),
    ("--delay 0.05 --per-host 4", ("--delay", "0.05", "--per-host", "4")),
    ("--delay 0.1 --per-host 4", ("--delay", "0.1", "--per-host", "4")),
    ("--delay 0 --per-host 1", ("--delay", "0", "--per-host", "1")),
    ("--delay auto --per-host 4", ("--delay", "auto", "--per-host", "4")),
)
FAST = (
    ("--delay 1 (default)", ("--delay", "1")),
    ("--delay auto", ("--delay", "auto")),
    ("--delay auto --per-host 4", ("--delay", "auto", "--per-host", "4")),
    ("--delay 0", ("--delay", "0")),
)
SCRAPY_LABEL = "Scrapy AutoThrottle (per domain 4)"
SCRAPY_SETTINGS = {"AUTOTHROTTLE_ENABLED": True, "CONCURRENT_REQUESTS_PER_DOMAIN": 4,
                   "DOWNLOAD_DELAY": 0, "ROBOTSTXT_OBEY": True}


@dataclass(frozen=True)
class Run:
    server: str        # struggling | fast
    setting: str
    round: int
    wall_s: float
    pages: int         # saved with status 200
    requests: int      # the server's count, robots.txt and 503s included
    refused: int       # 503s the server sent
    pace: str          # ours: what stats.json says set the pace

    @property
    def pages_per_s(self) -> float:
        return self.pages / self.wall_s if self.wall_s else 0.0


def run_ours(seed: str, args: tuple[str, ...], work: Path) -> tuple[float, int, str]:
    out = work / "out"
    crawler = REPO / ".venv" / "bin" / "crawler"
    measured = run_measured([str(crawler), "crawl", seed, "--out", str(out), "--max-depth", "0",
                             "--max-pages", "0", "--quiet", *args], work / "log", timeout=1800)
    stats = json.loads((out / "stats.json").read_text(encoding="utf-8"))
    from controller.pace import text
    return measured.wall_s, len(peer_registry.index_csv_by_host(out)), text(stats["pace"])


def run_scrapy(seed: str, work: Path) -> tuple[float, int, str]:
    out = work / "out"
    peer = peer_registry.scrapy(name="scrapy", settings=SCRAPY_SETTINGS)
    measured = run_measured(peer.command(seed, out), work / "log", timeout=1800)
    return measured.wall_s, len(peer.saved(out)), ""


def struggling_round(round_no: int, work: Path, scrapy: bool) -> list[Run]:
    runs = []
    settings = [(label, args) for label, args in STRUGGLING] + ([(SCRAPY_LABEL, None)] if scrapy else [])
    for label, args in settings:
        with StrugglingSite() as site, tempfile.TemporaryDirectory(dir=work) as run_dir:
            wall, pages, pace = (run_ours(site.url, args, Path(run_dir)) if args is not None
                                 else run_scrapy(site.url, Path(run_dir)))
            runs.append(Run("struggling", label, round_no, wall, pages, len(site.log()),
                            site.count_status(503), pace))
        click.echo(_line(runs[-1]), err=True)
    return runs


def fast_round(round_no: int, work: Path, server: Nginx, seed: str) -> list[Run]:
    runs = []
    for label, args in FAST:
        if round_no > 1 and label.startswith("--delay 1"):
            continue   # pages x 1 s, the same every round: measured once
        mark = server.mark()
        with tempfile.TemporaryDirectory(dir=work) as run_dir:
            wall, pages, pace = run_ours(seed, args, Path(run_dir))
        entries = server.requests_since(mark)
        runs.append(Run("fast", label, round_no, wall, pages, len(entries),
                        sum(1 for e in entries if e.status == 503), pace))
        click.echo(_line(runs[-1]), err=True)
    return runs


def _line(run: Run) -> str:
    return (f"{run.server:10} round {run.round} {run.setting:36} {run.wall_s:7.1f} s "
            f"{run.pages:4} pages {run.pages_per_s:6.1f}/s {run.refused:4} x 503 "
            f"{run.requests:5} requests  {run.pace}")


def table(runs: list[Run]) -> str:
    rows = []
    for server in ("struggling", "fast"):
        labels = list(dict.fromkeys(run.setting for run in runs if run.server == server))
        for label in labels:
            mine = [run for run in runs if run.server == server and run.setting == label]
            rows.append((server, label, str(len(mine)),
                         f"{statistics.median(r.wall_s for r in mine):.1f}",
                         f"{statistics.median(r.pages_per_s for r in mine):.1f}",
                         f"{statistics.median(r.refused for r in mine):g}",
                         f"{statistics.median(r.requests for r in mine):g}",
                         str(min(r.pages for r in mine))))
    return markdown_table(("server", "setting", "runs", "wall s", "pages/s", "503s", "requests",
                           "pages (min)"), rows, left=2)


def section(result: dict) -> str:
    runs = [Run(**run) for run in result["runs"]]
    m = result["machine"]
    paces = sorted({f"- {run.setting} ({run.server}): {run.pace}" for run in runs
                    if run.pace and run.round == 1})
    return "\n".join([
        f"## {result['label']} — adaptive, {m['date']}", "",
        f"- ours: commit `{result['ours_source'].get('commit', '?')}`; Scrapy {result['scrapy'] or '—'}; "
        f"load average at start {' '.join(m.get('load_average', []))}, at the end "
        f"{' '.join(result['load_end'])}; {m['cores']} cores",
        "- servers: struggling = benchmarks/struggling_site.py (400 pages, 20 ms x requests served "
        "at once, 503 past 2 at once, every third 503 with Retry-After: 1); fast = the largest "
        "polite-benchmark site behind nginx",
        f"- rounds: {result['rounds']}, settings interleaved; medians; raw numbers: "
        f"`benchmarks/results/adaptive/{result['name']}.json`", "",
        table(runs), "", "What stats.json said set the pace (round 1):", "", *paces, ""])


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--rounds", type=click.IntRange(1), default=3, show_default=True)
@click.option("--fast/--no-fast", default=True, show_default=True, help="Also the fast (nginx) server.")
@click.option("--scrapy/--no-scrapy", default=True, show_default=True,
              help="Also Scrapy with AutoThrottle (benchmarks/.venv-scrapy, made if missing).")
@click.option("--name", default="adaptive-politeness", show_default=True)
@click.option("--label", default="Adaptive politeness (issue 26)", show_default=True)
@click.option("--save/--no-save", default=True, show_default=True)
def main(rounds, fast, scrapy, name, label, save) -> None:
    started = time.monotonic()
    info = machine()
    version = peer_registry.ensure_scrapy() if scrapy else ""
    runs: list[Run] = []
    with tempfile.TemporaryDirectory(prefix="adaptive-") as tmp:
        work = Path(tmp)
        sites = generate(SiteSetSpec(sites=1), work / "sites")
        with Nginx({site.address: work / "sites" / site.address for site in sites.sites}) as server:
            seed = server.url_for(sites.sites[0].address) + "index.html"
            for round_no in range(1, rounds + 1):
                runs += struggling_round(round_no, work, scrapy)
                if fast:
                    runs += fast_round(round_no, work, server, seed)
    result = {"name": name, "label": label, "machine": info, "scrapy": version, "rounds": rounds,
              "load_end": Path("/proc/loadavg").read_text().split()[:3],
              "ours_source": git_commit(REPO), "elapsed_s": round(time.monotonic() - started, 1),
              "runs": [asdict(run) for run in runs]}
    click.echo(section(result))
    if save:
        raw = BENCH_DIR / "results" / "adaptive" / f"{name}.json"
        raw.parent.mkdir(parents=True, exist_ok=True)
        raw.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
        (BENCH_DIR / "results" / f"{name}.md").write_text(section(result), encoding="utf-8")
        (BENCH_DIR / "RESULTS.md").write_text(render_results(BENCH_DIR / "results"), encoding="utf-8")


if __name__ == "__main__":
    main()

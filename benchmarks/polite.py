"""Polite throughput across many hosts (issue 12): our crawler and Scrapy at one request per host.

    .venv/bin/python -m benchmarks.polite --sites 40 --delay 0.2 --rounds 2
    .venv/bin/python -m benchmarks.polite --issue12          # the three settings of the issue
    .venv/bin/python -m benchmarks.polite --peers ours,ours-shared   # one machine against 3 workers

Many small generated sites (benchmarks/polite_site.py), each on its own
loopback address behind one nginx, every site's root a seed; each peer crawls
them all with the same delay and one request per host in flight,
interleaved over rounds. From the server's access log, per run: whether every
page was fetched once, the gaps between request starts per host, and the
wall time against the lower bound every polite crawler has, (pages of the
largest site - 1) x delay. Results go to benchmarks/results/polite/<name>.json
(every number) and benchmarks/results/<name>.md (the table), which
report.render_results copies into RESULTS.md.

The peer ``ours-shared`` is our crawler as a shared crawl: --shared-workers
processes (default 3) on one redis-server of its own (AOF, appendfsync
everysec), started as benchmarks/shared.py starts them (the first creates the
crawl with the seeds, the others join), each with --processes 0 (three
parser processes more would only crowd two cores); its output is their
directories merged by ``crawler merge``, checked as the others' is. Its wall
time runs from the first worker's start to the last one's exit.
"""
from __future__ import annotations

import json
import math
import os
import shlex
import shutil
import sys
import time
from collections import defaultdict
from dataclasses import asdict, dataclass, replace
from datetime import datetime, timezone
from pathlib import Path

if __package__ in (None, ""):   # run as a file: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import click
import redis

from benchmarks import peers as peer_registry
from benchmarks.checks import check_saved, count_server
from benchmarks.measure import Measured, Usage, run_measured
from benchmarks.nginx import LogEntry, Nginx, NginxError
from benchmarks.polite_site import SHAPES, SiteSet, SiteSetSpec, generate
from benchmarks.report import machine, markdown_table, render_results
from benchmarks.run import _ours_source
from benchmarks.shared import StartError, frozen, start_workers, wait_all, waits_for_crawl
from benchmarks.shared import merge as merge_dirs

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))   # tests/redisserver.py
from redisserver import RedisServer  # noqa: E402

BENCH_DIR = Path(__file__).resolve().parent
PEERS = ("ours", "scrapy", "scrapy-aware", "ours-shared")
DEFAULT_PEERS = ("ours", "scrapy", "scrapy-aware")
SHARED_FSYNC = "everysec"   # the shared crawl's Redis: AOF, fsync once a second
SHORT_GAP = 0.9   # a gap below this fraction of the delay counts as short (impolite)


@dataclass(frozen=True)
class Setting:
    spec: SiteSetSpec
    delay_s: float               # seconds between two request starts to one host
    rounds: int = 1              # interleaved rounds (each runs every peer once)

    @property
    def name(self) -> str:
        return f"{self.spec.site_count} sites, {self.spec.shape}, delay {self.delay_s:g} s"


ISSUE12 = (Setting(SiteSetSpec(sites=40), 0.2, rounds=2),
           Setting(SiteSetSpec(sites=150), 0.5, rounds=1),   # ~30 s lower bound per run: one round
           Setting(SiteSetSpec(shape="barrier"), 0.2, rounds=2))


@dataclass(frozen=True)
class Options:
    peers: tuple[str, ...] = DEFAULT_PEERS
    ours_args: str = ""              # extra arguments for `crawler crawl`
    scrapy_concurrency: int = 16     # Scrapy's CONCURRENT_REQUESTS (its default)
    timeout_s: float = 600.0         # per run; the run is killed after it
    keep_output: bool = False        # keep each run's output directory
    shared_workers: int = 3          # worker processes of ours-shared
    warmup: int = 0                  # unmeasured runs of each peer before the rounds (warm_up)


@dataclass(frozen=True)
class Gaps:
    """Seconds between consecutive request starts to one host, as the server saw them."""
    count: int                 # gaps over all hosts
    smallest_s: float | None   # the smallest gap of any host
    p1_s: float | None         # 1st percentile (nearest rank) of all gaps pooled
    short: int                 # gaps below SHORT_GAP x delay
    median_s: float | None = None   # the median of all gaps pooled (None: stored before it was)


@dataclass(frozen=True)
class PoliteRun:
    setting: str
    peer: str
    round: int
    delay_s: float
    sites: int
    site_pages: int            # HTML pages of all sites
    largest_site: int          # pages of the largest site
    wall_s: float              # the command's start to its exit, harness clock
    cpu_s: float               # user + system, GNU time
    exit_code: int
    exit_ok: bool
    timed_out: bool
    requests: int              # access-log lines of the run (pages, robots.txt)
    span_s: float              # first request start to last request end, server clock
    pages: int                 # distinct site pages saved byte-identical
    missed: int                # site pages never requested
    duplicates: int            # requests for site pages beyond the first
    gaps: Gaps
    levels_exact: bool | None  # every site's pages on their BFS levels; None: the peer records none
    slots: int | None          # Scrapy: download slots its responses came through; None: not Scrapy
    script_calls: int | None = None   # ours-shared: Lua script calls Redis ran (EVALSHA); None: no Redis
    started_s: float = 0.0     # when the command started, seconds since the epoch (0: not recorded)

    @property
    def lower_bound_s(self) -> float:
        """The least time any crawler polite at `delay_s` needs: the largest site's requests in a row."""
        return (self.largest_site - 1) * self.delay_s

    @property
    def efficiency(self) -> float:
        return self.lower_bound_s / self.wall_s if self.wall_s > 0 else 0.0

    @property
    def pages_per_s(self) -> float:
        return self.pages / self.wall_s if self.wall_s > 0 else 0.0

    @property
    def calls_per_page(self) -> float | None:
        return None if self.script_calls is None or not self.pages else self.script_calls / self.pages

    @property
    def fetched_once(self) -> bool:
        return self.missed == 0 and self.duplicates == 0

    def to_dict(self) -> dict:
        return {**asdict(self), "lower_bound_s": self.lower_bound_s, "efficiency": self.efficiency,
                "pages_per_s": self.pages_per_s, "calls_per_page": self.calls_per_page}


# -- what the server saw -----------------------------------------------------------
def gaps_by_host(entries: list[LogEntry]) -> dict[str, list[int]]:
    """Milliseconds between consecutive request starts, per server address."""
    starts: dict[str, list[int]] = defaultdict(list)
    for entry in entries:
        starts[entry.address].append(entry.start_ms)
    return {host: [b - a for a, b in zip(sorted(s), sorted(s)[1:])] for host, s in starts.items()}


def gap_stats(entries: list[LogEntry], delay_s: float) -> Gaps:
    pooled = sorted(gap for gaps in gaps_by_host(entries).values() for gap in gaps)
    if not pooled:
        return Gaps(0, None, None, 0)
    p1 = pooled[max(0, math.ceil(0.01 * len(pooled)) - 1)]
    short = SHORT_GAP * round(delay_s * 1000)
    return Gaps(len(pooled), pooled[0] / 1000, p1 / 1000, sum(1 for gap in pooled if gap < short),
                pooled[(len(pooled) - 1) // 2] / 1000)


def span_s(entries: list[LogEntry]) -> float:
    if not entries:
        return 0.0
    return (max(e.end_ms for e in entries) - min(e.start_ms for e in entries)) / 1000


def server_check(entries: list[LogEntry], sites: SiteSet) -> tuple[int, int]:
    """(site pages never requested, requests for site pages beyond the first), over all sites."""
    counts = [count_server([e for e in entries if e.address == site.address], site.truth)
              for site in sites.sites]
    return sum(c.html_missed for c in counts), sum(c.html_duplicates for c in counts)


def saved_check(peer: peer_registry.Peer, out: Path, sites: SiteSet) -> tuple[int, bool | None]:
    """(distinct pages saved byte-identical, whether every site's levels are exact or None)."""
    saved = peer.saved_by_host(out) if out.exists() else []
    checks = [check_saved([page for host, page in saved if host == site.address], site.truth,
                          sites.root(site), check_levels=peer.records_levels) for site in sites.sites]
    levels = None
    if peer.records_levels:
        levels = all(c.wrong_level == 0 and c.levels == site.truth.levels for c, site in zip(checks, sites.sites))
    return sum(c.identical for c in checks), levels


def scrapy_slots(out: Path) -> int | None:
    try:
        return len((out / "slots.txt").read_text(encoding="utf-8").split())
    except OSError:
        return None


# -- the peers -------------------------------------------------------------------
def scrapy_settings(delay_s: float, concurrency: int) -> dict[str, object]:
    """Scrapy polite and breadth-first: one request per slot (host), a fixed delay, FIFO by depth."""
    # DOWNLOAD_DELAY_JITTER (Scrapy 2.19) replaces RANDOMIZE_DOWNLOAD_DELAY (older releases): both, so
    # no release randomizes; 2.19 then warns once that the old name is deprecated.
    return {"DOWNLOAD_DELAY": delay_s, "RANDOMIZE_DOWNLOAD_DELAY": False, "DOWNLOAD_DELAY_JITTER": 0,
            "CONCURRENT_REQUESTS_PER_DOMAIN": 1, "CONCURRENT_REQUESTS": concurrency,
            "DEPTH_PRIORITY": 1, "SCHEDULER_DISK_QUEUE": "scrapy.squeues.PickleFifoDiskQueue",
            "SCHEDULER_MEMORY_QUEUE": "scrapy.squeues.FifoMemoryQueue",
            "ROBOTSTXT_OBEY": True}   # as ours: robots.txt once per host, so both make the same requests


def make_peer(name: str, delay_s: float, options: Options, source: Path | None) -> peer_registry.Peer:
    if name == "ours":
        return peer_registry.ours(source=source, delay=delay_s)
    if name == "ours-shared":
        return replace(peer_registry.ours(source=source, delay=delay_s), name=name)
    settings = scrapy_settings(delay_s, options.scrapy_concurrency)
    if name == "scrapy-aware":
        settings["SCHEDULER_PRIORITY_QUEUE"] = "scrapy.pqueues.DownloaderAwarePriorityQueue"
    if name in ("scrapy", "scrapy-aware"):
        return peer_registry.scrapy(name=name, settings=settings)
    raise ValueError(f"unknown peer {name!r}; choose from {', '.join(PEERS)}")


# -- one run, one setting ------------------------------------------------------------
def run_one(peer: peer_registry.Peer, server: Nginx, sites: SiteSet, setting: Setting,
            options: Options, run_dir: Path, round_no: int) -> PoliteRun:
    """Run one peer once on every site; keep the run's access log as run_dir/access.log."""
    out = run_dir / "out"
    shutil.rmtree(run_dir, ignore_errors=True)
    run_dir.mkdir(parents=True)
    seeds = tuple(server.url_for(site.address) + sites.seed(site).lstrip("/") for site in sites.sites)
    extra = tuple(shlex.split(options.ours_args)) if peer.name.startswith("ours") else ()
    env = {**os.environ, **peer.env, "no_proxy": "*", "NO_PROXY": "*"}   # loopback only: never a proxy
    mark = server.mark()
    calls = None
    if peer.name == "ours-shared":
        measured, calls = run_shared(peer, seeds, extra, options, run_dir, env)
    else:
        measured = run_measured(peer.argv(seeds, out, extra), run_dir / "logs", timeout=options.timeout_s,
                                env=env, cwd=run_dir)
    server.mark()   # a barrier: every request of the run is in the log after it
    (run_dir / "access.log").write_text(server.log_since(mark), encoding="utf-8")
    entries = server.requests_since(mark)
    record = replace(_record(peer, setting, sites, round_no, measured, entries, out), script_calls=calls)
    if record.exit_ok and not options.keep_output:
        shutil.rmtree(out, ignore_errors=True)
    return record


def run_shared(peer: peer_registry.Peer, seeds: tuple[str, ...], extra: tuple[str, ...], options: Options,
               run_dir: Path, env: dict[str, str]) -> tuple[Measured, int]:
    """The shared crawl of ours-shared, its workers' output merged into
    run_dir/out; and the script calls Redis ran for it."""
    dirs = [run_dir / f"w{k}" for k in range(options.shared_workers)]
    first = peer.argv(seeds, dirs[0], extra)
    with RedisServer(run_dir / "redis", extra=("--appendfsync", SHARED_FSYNC)) as redis_server:
        client = redis.Redis.from_url(redis_server.url)
        waits_for_crawl(first[0], frozen(env))   # asked before the clock starts
        started = time.perf_counter()
        try:
            timed = start_workers(first, [redis_server.url], client, dirs, run_dir, env, ("--processes", "0"))
        except StartError as exc:
            raise click.ClickException(str(exc)) from None
        in_time = wait_all(timed, time.monotonic() + options.timeout_s)
        wall = time.perf_counter() - started
        calls = client.info("commandstats").get("cmdstat_evalsha", {}).get("calls", 0)
    usages = [t.usage() for t in timed]
    merged = merge_dirs(first[0], dirs, run_dir / "out", env, run_dir)
    (run_dir / "merge-stderr.txt").write_text(merged.stderr, encoding="utf-8")
    codes = [t.proc.returncode for t in timed] + [merged.returncode]
    cpu = Usage(sum(u.user_s for u in usages), sum(u.sys_s for u in usages),
                max(u.max_rss_kb for u in usages), None)
    return Measured(tuple(first), next((c for c in codes if c), 0), wall, cpu, not in_time), calls


def _record(peer, setting, sites, round_no, measured, entries, out) -> PoliteRun:
    missed, duplicates = server_check(entries, sites)
    pages, levels = saved_check(peer, out, sites)
    return PoliteRun(
        setting=setting.name, peer=peer.name, round=round_no, delay_s=setting.delay_s,
        sites=len(sites.sites), site_pages=sites.pages, largest_site=sites.largest,
        wall_s=measured.wall_s, started_s=measured.started_s, cpu_s=measured.usage.cpu_s, exit_code=measured.exit_code,
        exit_ok=measured.exit_code in peer.ok_exit_codes, timed_out=measured.timed_out,
        requests=len(entries), span_s=span_s(entries), pages=pages, missed=missed, duplicates=duplicates,
        gaps=gap_stats(entries, setting.delay_s), levels_exact=levels,
        slots=scrapy_slots(out) if peer.name.startswith("scrapy") else None)


def warm_up(peers, server: Nginx, sites: SiteSet, setting: Setting, options: Options, work: Path,
            progress) -> None:
    """Run each peer ``options.warmup`` times, unmeasured. The first run after
    a while reads the interpreter's and the libraries' files from disk
    (0.1 s more of start-up after `drop_caches` here, and this VM's memory
    reclaim empties the page cache between sessions): it would count against
    whichever peer goes first in the first round."""
    for n in range(options.warmup):
        for peer in peers:
            run_one(peer, server, sites, setting, options, work / "runs" / f"warmup-{peer.name}", 0)
            progress(f"warm-up {n + 1}/{options.warmup} {peer.name}: done (not measured)")


def measure(setting: Setting, options: Options, work: Path, source: Path | None = None,
            progress=lambda line: None) -> tuple[SiteSet, list[PoliteRun]]:
    """Generate the setting's sites, serve them, and run every peer `rounds` times, interleaved."""
    site_dir = work / f"polite-{setting.spec.shape}-{setting.spec.site_count}"
    shutil.rmtree(site_dir, ignore_errors=True)   # generated in well under a second
    sites = generate(setting.spec, site_dir)
    peers = [make_peer(name, setting.delay_s, options, source) for name in options.peers]
    records = []
    with Nginx({site.address: sites.root(site) for site in sites.sites}) as server:
        warm_up(peers, server, sites, setting, options, work, progress)
        for round_no in range(1, setting.rounds + 1):
            for peer in peers:
                run_dir = work / "runs" / f"polite-{setting.spec.site_count}-{peer.name}-{round_no}"
                record = run_one(peer, server, sites, setting, options, run_dir, round_no)
                progress(_line(record, setting.rounds))
                records.append(record)
    return sites, records


# -- tables and results ----------------------------------------------------------------
COLUMNS = ("setting", "peer", "round", "wall s", "lower bound s", "efficiency", "× ours", "pages/s",
           "server span s", "smallest gap s", "1st pct gap s", "median gap s", "short gaps", "requests",
           "each page once", "levels exact", "Scrapy slots", "script calls/page")


def table(records: list[PoliteRun]) -> str:
    ours = {(r.setting, r.round): r.wall_s for r in records if r.peer == "ours"}
    rows = [(r.setting, r.peer, str(r.round), f"{r.wall_s:.1f}", f"{r.lower_bound_s:.1f}",
             f"{r.efficiency:.2f}", _times(ours.get((r.setting, r.round)), r.wall_s), f"{r.pages_per_s:.1f}",
             f"{r.span_s:.1f}", _seconds(r.gaps.smallest_s), _seconds(r.gaps.p1_s),
             _seconds(r.gaps.median_s), str(r.gaps.short), str(r.requests),
             _yes(r.fetched_once) if r.pages == r.site_pages else f"NO ({r.pages}/{r.site_pages} saved)",
             _yes(r.levels_exact), "—" if r.slots is None else f"{r.slots}/{r.sites}",
             "—" if r.calls_per_page is None else f"{r.calls_per_page:.2f}")
            for r in records]
    return markdown_table(COLUMNS, rows, left=2)


def _times(single_s: float | None, wall_s: float) -> str:
    """The single node's wall time ÷ this run's, in the same round: its speed against ours."""
    return "—" if single_s is None or wall_s <= 0 else f"{single_s / wall_s:.2f}×"


def _seconds(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def _yes(value: bool | None) -> str:
    return "—" if value is None else ("yes" if value else "NO")


def section(result: dict) -> str:
    """The Markdown section of one stored result, for RESULTS.md."""
    m, o = result["machine"], result["options"]
    source = result["ours_source"]
    records = [_from_dict(r) for r in result["runs"]]
    head = [f"## Polite crawling across many hosts — {result.get('label') or 'polite'}, {m['date']}", "",
            f"Written by `.venv/bin/python -m benchmarks.polite {result['argv']}` "
            f"(raw numbers: `benchmarks/results/polite/{result['name']}.json`); columns: benchmarks/README.md.", "",
            f"- ours: commit `{source.get('commit', '?')}`"
            + (" (working tree with uncommitted changes)" if source.get("dirty") else "")
            + f", its defaults and extra args `{o['ours_args'] or '(none)'}`",
            *([f"- ours-shared: {o.get('shared_workers', 3)} worker processes sharing one crawl through "
               f"one redis-server (AOF, appendfsync {SHARED_FSYNC}), each with --processes 0; "
               "× ours: the single node's wall time ÷ this run's, in the same round"]
              if "ours-shared" in o["peers"] else []),
            f"- Scrapy {m.get('scrapy') or '—'}: CONCURRENT_REQUESTS={o['scrapy_concurrency']}, one per slot, "
            f"ROBOTSTXT_OBEY; `scrapy-aware` adds DownloaderAwarePriorityQueue",
            f"- machine: {m['cpu']}, {m['cores']} cores, Python {m['python']}; {m['nginx']}; "
            f"load average at start {' '.join(m.get('load_average', [])) or '—'}",
            *(f"- {s['name']}: {s['rounds']} round(s), {s['pages']} pages, largest site {s['largest']}, "
              f"sizes {s['sizes']}" for s in result["settings"]),
            f"- wall time of the whole benchmark: {result['elapsed_s']:.0f} s", ""]
    return "\n".join(head + [table(records), ""])


def _from_dict(record: dict) -> PoliteRun:
    fields = {k: v for k, v in record.items() if k in PoliteRun.__dataclass_fields__}
    return PoliteRun(**{**fields, "gaps": Gaps(**record["gaps"])})


def _setting_info(setting: Setting, sites: SiteSet) -> dict:
    return {"name": setting.name, "spec": asdict(setting.spec), "delay_s": setting.delay_s,
            "rounds": setting.rounds, "pages": sites.pages, "largest": sites.largest,
            "sizes": _sizes_line(sites),
            "sites": [{"address": s.address, "branching": s.branching, "levels": list(s.truth.levels)}
                      for s in sites.sites]}


def _sizes_line(sites: SiteSet) -> str:
    sizes = sorted((site.pages for site in sites.sites), reverse=True)
    return ", ".join(map(str, sizes)) if len(sizes) <= 8 else f"{', '.join(map(str, sizes[:6]))}, ... {sizes[-1]}"


def store(result: dict, results_dir: Path, results_md: Path) -> Path:
    """Write the JSON and the Markdown section, then rewrite RESULTS.md from every stored result."""
    raw = results_dir / "polite" / f"{result['name']}.json"
    raw.parent.mkdir(parents=True, exist_ok=True)
    raw.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    (results_dir / f"{result['name']}.md").write_text(section(result), encoding="utf-8")
    results_md.write_text(render_results(results_dir), encoding="utf-8")
    return raw


# -- the command line --------------------------------------------------------------
def run_options(command):
    """--work, --results-dir, --results-md, --timeout and --keep-output: where a polite
    benchmark works and stores, and how long one run may take."""
    options = (
        click.option("--work", type=click.Path(path_type=Path), default=BENCH_DIR / "work", show_default=True),
        click.option("--results-dir", type=click.Path(path_type=Path), default=BENCH_DIR / "results",
                     show_default=True),
        click.option("--results-md", type=click.Path(path_type=Path), default=BENCH_DIR / "RESULTS.md",
                     show_default=True),
        click.option("--timeout", type=click.FloatRange(min=1), default=600.0, show_default=True,
                     help="Seconds allowed per run."),
        click.option("--keep-output", is_flag=True, help="Keep each run's output directory under --work/runs."),
        click.option("--warmup", type=click.IntRange(min=0), default=1, show_default=True,
                     help="Unmeasured runs of each peer before the rounds (a cold page cache "
                          "would count against the peer that goes first)."))
    for option in reversed(options):
        command = option(command)
    return command


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--sites", type=click.IntRange(1, 250), default=40, show_default=True,
              help="Sites, one per loopback address 127.0.0.2 ...")
@click.option("--delay", type=click.FloatRange(min=0.01), default=0.2, show_default=True,
              help="Seconds between two request starts to one host, for every peer.")
@click.option("--shape", type=click.Choice(SHAPES), default="own", show_default=True,
              help="own: each site its own branching 2-6; ternary: every site 3; barrier: the two-site case.")
@click.option("--rounds", type=click.IntRange(min=1), default=None,
              help="Interleaved rounds.  [default: 1; with --issue12 each setting's own: 2, 1, 2]")
@click.option("--issue12", is_flag=True,
              help="The issue's three settings: 40 sites / 0.2 s, 150 sites / 0.5 s, the barrier pair / 0.2 s.")
@click.option("--peers", default=",".join(DEFAULT_PEERS), show_default=True,
              help=f"Comma-separated peers, run in this order each round, of: {', '.join(PEERS)} "
                   "(ours-shared: our crawler as --shared-workers processes sharing one crawl through Redis).")
@click.option("--shared-workers", type=click.IntRange(min=1), default=3, show_default=True,
              help="Worker processes of ours-shared.")
@click.option("--ours-args", default="", help="Extra arguments for `crawler crawl`, e.g. '--workers 32'.")
@click.option("--ours-commit", default=None,
              help="Run our crawler as of this commit (exported with git archive), not the working tree.")
@click.option("--scrapy-concurrency", type=click.IntRange(min=1), default=16, show_default=True,
              help="Scrapy's CONCURRENT_REQUESTS.")
@click.option("--label", default="", help="Title of this result in RESULTS.md, e.g. 'before the new scheduler'.")
@click.option("--name", default=None, help="File name of the result (without .json / .md).")
@click.option("--save/--no-save", default=True, show_default=True,
              help="Store the result and rewrite RESULTS.md.")
@run_options
def main(sites, delay, shape, rounds, issue12, peers, shared_workers, ours_args, ours_commit,
         scrapy_concurrency, label, name, save, work, results_dir, results_md, timeout, keep_output, warmup):
    """Polite throughput: our crawler and Scrapy on many sites, one request per host, a fixed delay.

    Example: .venv/bin/python -m benchmarks.polite --sites 40 --delay 0.2 --rounds 2
    """
    settings = _settings(sites, delay, shape, rounds, issue12)
    options = Options(peers=_peer_names(peers), ours_args=ours_args, scrapy_concurrency=scrapy_concurrency,
                      timeout_s=timeout, keep_output=keep_output, shared_workers=shared_workers,
                      warmup=warmup)
    work.mkdir(parents=True, exist_ok=True)
    source, source_info = _ours_source(ours_commit, work)
    scrapy_version = peer_registry.ensure_scrapy() if any(p.startswith("scrapy") for p in options.peers) else ""
    started, before, clock = datetime.now(timezone.utc), machine(), time.perf_counter()
    try:
        measured = [measure(s, options, work, source, lambda line: click.echo(line, err=True)) for s in settings]
    except NginxError as exc:
        raise click.ClickException(str(exc)) from None
    records = [r for _, runs in measured for r in runs]
    click.echo(table(records))
    result = {"kind": "polite", "label": label, "argv": shlex.join(sys.argv[1:]),
              "name": name or f"polite-{'issue12' if issue12 else shape + '-' + str(sites)}-"
                              f"{started.strftime('%Y%m%d-%H%M%S')}",
              "started": started.isoformat(timespec="seconds"), "elapsed_s": time.perf_counter() - clock,
              "machine": {**before, "scrapy": scrapy_version}, "ours_source": source_info,
              "options": {**asdict(options), "peers": list(options.peers)},
              "settings": [_setting_info(s, site_set) for s, (site_set, _) in zip(settings, measured)],
              "runs": [r.to_dict() for r in records]}
    if save:
        click.echo(f"stored {store(result, results_dir, results_md)} and rewrote {results_md}", err=True)
    if not all(r.exit_ok and not r.timed_out for r in records):
        click.echo("some runs failed (see the exit code in the JSON and --work/runs/*/logs)", err=True)
        sys.exit(1)


def _settings(sites, delay, shape, rounds, issue12) -> tuple[Setting, ...]:
    if issue12:
        return tuple(replace(s, rounds=rounds) if rounds else s for s in ISSUE12)
    return (Setting(SiteSetSpec(sites=sites, shape=shape), delay, rounds or 1),)


def _peer_names(peers: str) -> tuple[str, ...]:
    names = tuple(p.strip() for p in peers.split(",") if p.strip())
    unknown = [name for name in names if name not in PEERS]
    if unknown or not names:
        raise click.BadParameter(f"unknown peer {unknown[0] if unknown else '(none)'!r}; "
                                 f"choose from {', '.join(PEERS)}", param_hint="--peers")
    return names


def _line(r: PoliteRun, rounds: int) -> str:
    problems = [text for failed, text in (
        (not r.exit_ok or r.timed_out, f"exit {r.exit_code}" + (" TIMEOUT" if r.timed_out else "")),
        (not r.fetched_once, f"missed {r.missed} dup {r.duplicates}"),
        (r.levels_exact is False, "levels not exact")) if failed]
    return (f"round {r.round}/{rounds} {r.peer:12} {r.setting}: {r.pages}/{r.site_pages} pages in {r.wall_s:.1f} s "
            f"(lower bound {r.lower_bound_s:.1f} s, efficiency {r.efficiency:.2f}, {r.pages_per_s:.1f} pages/s, "
            f"smallest gap {_seconds(r.gaps.smallest_s)} s, {r.gaps.short} short)"
            + (" — " + "; ".join(problems) if problems else ""))


if __name__ == "__main__":
    main()

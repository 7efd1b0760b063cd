"""The distributed crawl (issue 14): pages/s of 1, 2 and 3 worker processes sharing one
crawl through Redis, against the single-node crawler, and what Redis costs per page and
per URL.

    .venv/bin/python -m benchmarks.distributed                 # both settings (~10 min)
    .venv/bin/python -m benchmarks.distributed --settings one-host --crawl-args '--per-host 8' --label 'per-host 8'
    .venv/bin/python -m benchmarks.distributed --settings one-host --workers 3 --order importance --label 'order importance'

Two settings, each served by nginx on loopback (benchmarks/nginx.py):
- ``one-host``: the benchmark site (benchmarks/site.py, 5,000 pages of ~16 KB, ~27
  links each) on 127.0.0.1 with --delay 0: the raw cost of the shared state;
- ``many-hosts``: 100 sites of 30 pages (benchmarks/polite_site.py), one per 127.0.0.x,
  with --delay 0.5: politeness allows at most hosts / delay pages/s.

Each round runs every variant once, interleaved: the single-node crawler (``crawler
crawl``), then N shared workers (``crawler crawl --redis`` creates the crawl and is the
first, ``crawler worker`` the others; each under /usr/bin/time -v), each shared run on a
fresh redis-server (tests/redisserver.py: loopback, its own data directory, AOF with
appendfsync always, or everysec for the variants that say so). Every run is checked:
the pages saved (the workers' output merged by ``crawler merge``) are the site's pages
byte for byte with its ground truth's pages per BFS level, nginx's access log has each
page once, and per server address no two request starts are closer than 0.9 x the
delay. Measured: wall time, the workers' CPU (GNU time), Redis's CPU (INFO cpu) and
script calls (INFO commandstats), nginx's CPU, the rest of the machine's, and what is
left in Redis afterwards (MEMORY USAGE per kind of key, the seen set per URL, the AOF).

A profile run per setting (the most workers, not in the throughput medians) logs every
command (SLOWLOG with threshold 0, drained with a reset in one MULTI every half second):
which script the workers call how often per page, client round trips per page, and the
queue lists' MEMORY USAGE per queued URL at their largest.

Stored: benchmarks/results/distributed/distributed-<date>.json (every run),
benchmarks/results/distributed.md (the section, which report.render_results copies into
RESULTS.md; distributed-LABEL.md with --label) and the same section in
benchmarks/RESULTS.md. Columns and caveats: benchmarks/README.md.
"""
from __future__ import annotations

import csv
import hashlib
import importlib.util
import json
import os
import shlex
import shutil
import statistics
import sys
import threading
import time
from collections import Counter, defaultdict
from contextlib import ExitStack
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path

if __package__ in (None, ""):   # run as a file: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import click
import redis

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
sys.path.insert(0, str(REPO / "tests"))   # tests/redisserver.py starts the server

from benchmarks.checks import check_saved, count_server  # noqa: E402
from benchmarks.measure import system_busy_seconds  # noqa: E402
from benchmarks.nginx import Nginx  # noqa: E402
from benchmarks.peers import index_csv_by_host  # noqa: E402
from benchmarks.polite import gaps_by_host, span_s  # noqa: E402
from benchmarks.polite_site import SiteSetSpec, generate  # noqa: E402
from benchmarks.redis_seen import put_section, redis_version  # noqa: E402
from benchmarks.report import machine, markdown_table, stored_options  # noqa: E402
from benchmarks.run import _ours_source, _warm  # noqa: E402
from benchmarks.shared import (CRAWL_ID, PREFIX, StartError, Timed, frozen, start_workers,  # noqa: E402
                               wait_all, waits_for_crawl)
from benchmarks.shared import merge as merge_dirs  # noqa: E402
from benchmarks.site import SiteSpec, ensure  # noqa: E402
from redisserver import RedisServer  # noqa: E402
from urllist.orders import make_order  # noqa: E402

CRAWLER = str(REPO / ".venv" / "bin" / "crawler")
SECTION_TITLE = "## Distributed crawl: workers sharing one crawl through Redis (issue 14)"
PROFILE_EVERY_S = 0.5     # how often the profile drains the slowlog and samples the queue
SHORT = 0.9               # a gap below this fraction of the delay is impolite (as polite.py)
HARNESS = "benchmark-harness"   # the client name of this script's own Redis connections


# -- what is crawled -------------------------------------------------------------------
@dataclass(frozen=True)
class Site:
    address: str          # where nginx serves it
    root: Path            # its files
    truth: object         # benchmarks.site.GroundTruth


@dataclass(frozen=True)
class Setting:
    name: str             # one-host | many-hosts
    delay_s: float
    sites: tuple[Site, ...]
    options: tuple[str, ...] = ()   # more `crawler crawl` options, e.g. ('--per-host', '8')
    source: Path = REPO             # the crawler's source tree (a `git archive` with --ours-commit)

    def env(self) -> dict[str, str]:
        """Every crawler process's environment: this source tree, loopback only (never a proxy)."""
        return {**os.environ, "PYTHONPATH": str(self.source), "no_proxy": "*", "NO_PROXY": "*"}

    @property
    def pages(self) -> int:
        return sum(site.truth.total for site in self.sites)

    @property
    def allowed_per_s(self) -> float | None:
        """What politeness allows while every host has work: hosts / delay."""
        return len(self.sites) / self.delay_s if self.delay_s > 0 else None

    @property
    def barrier_s(self) -> float:
        """The least time of a crawler that opens level k+1 on no host before level k is done
        on every host: each level takes its largest host's pages on it times the delay."""
        depth = max(len(site.truth.levels) for site in self.sites)
        return self.delay_s * sum(max(site.truth.levels[k] if k < len(site.truth.levels) else 0
                                      for site in self.sites) for k in range(depth))


def one_host(pages: int, work: Path) -> Setting:
    truth = ensure(SiteSpec(pages=pages), work / f"site-{pages}")
    return Setting("one-host", 0.0, (Site("127.0.0.1", work / f"site-{pages}", truth),))


def many_hosts(hosts: int, pages: int, delay_s: float, work: Path) -> Setting:
    directory = work / f"distributed-hosts-{hosts}x{pages}"
    shutil.rmtree(directory, ignore_errors=True)   # generated in well under a second
    sites = generate(SiteSetSpec(sites=hosts, min_pages=pages, max_pages=pages), directory)
    return Setting("many-hosts", delay_s,
                   tuple(Site(s.address, sites.root(s), s.truth) for s in sites.sites))


# -- the variants ----------------------------------------------------------------------
@dataclass(frozen=True)
class Variant:
    workers: int            # shared workers; 0 = the single-node crawler, no Redis
    processes: int          # each process's --processes
    fsync: str = "always"   # Redis's appendfsync (shared variants)
    servers: int = 1        # Redis servers the crawl is partitioned over (--redis given so often)

    @property
    def label(self) -> str:
        if not self.workers:
            return f"single, --processes {self.processes}"
        fsync = "" if self.fsync == "always" else f", fsync {self.fsync}"
        servers = f", {self.servers} Redis servers" if self.servers > 1 else ""
        return (f"{self.workers} worker{'s' if self.workers > 1 else ''}, --processes "
                f"{self.processes}{fsync}{servers}")


def variants(workers: list[int], processes: list[int], compare: list[int], everysec: list[int],
             single_processes: int, servers: list[int] = (1,)) -> list[Variant]:
    """The single-node crawler; N workers at each --processes; the most workers at the
    compared --processes; then the everysec ones; then the variants of the most workers
    again over each number of Redis servers above one."""
    out = [Variant(0, single_processes)]
    out += [Variant(n, p) for p in processes for n in workers]
    out += [Variant(max(workers), p) for p in compare if p not in processes]
    out += [Variant(n, processes[0], "everysec") for n in everysec]
    most = [v for v in out if v.workers == max(workers)]
    out += [replace(v, servers=k) for k in servers if k > 1 for v in most]
    return out


# -- running the crawlers -----------------------------------------------------------------
def crawl_args(setting: Setting, server: Nginx) -> list[str]:
    seeds = [server.url_for(site.address) + "index.html" for site in setting.sites]
    return [*seeds, "--delay", f"{setting.delay_s:g}", "--max-depth", "0", "--max-pages", "0",
            "--quiet", *setting.options]


# -- readings around a run ------------------------------------------------------------------
@dataclass(frozen=True)
class Reading:
    clock: float
    busy_s: float       # the whole machine's busy CPU
    nginx_s: float
    redis_each: tuple[float, ...]   # each redis-server's CPU (none without Redis)

    @property
    def redis_s(self) -> float:
        return sum(self.redis_each)


def read(server: Nginx, clients: list[redis.Redis]) -> Reading:
    return Reading(time.perf_counter(), system_busy_seconds(), server.cpu_seconds(),
                   tuple(redis_cpu(client) for client in clients))


def redis_cpu(client: redis.Redis) -> float:
    cpu = client.info("cpu")
    return cpu["used_cpu_user"] + cpu["used_cpu_sys"]


def script_stats(clients: list[redis.Redis]) -> dict:
    """EVALSHA calls and their time inside Redis, and every command counted (scripts' inner
    commands included), since the last CONFIG RESETSTAT; summed over the servers."""
    out = Counter()
    for client in clients:
        stats = client.info("commandstats")
        evalsha = stats.get("cmdstat_evalsha", {"calls": 0, "usec": 0})
        out.update({"evalsha_calls": evalsha["calls"], "evalsha_usec": evalsha["usec"],
                    "commands": sum(s["calls"] for s in stats.values())})
    return dict(out)


def redis_left_all(servers: list[RedisServer]) -> dict:
    """redis_left of every server (partition k on server k), summed."""
    lefts = [redis_left(redis.Redis.from_url(s.url, client_name=HARNESS), s.data_dir,
                        partition_prefix(k)) for k, s in enumerate(servers)]
    out = {name: sum(left[name] for left in lefts)
           for name in ("used_memory", "seen_keys", "seen_urls", "seen_bytes", "aof_bytes")}
    keys: dict = defaultdict(lambda: {"keys": 0, "bytes": 0})
    for left in lefts:
        for pattern, counts in left["keys"].items():
            keys[pattern]["keys"] += counts["keys"]
            keys[pattern]["bytes"] += counts["bytes"]
    return {**out, "keys": dict(sorted(keys.items()))}


def partition_prefix(part: int) -> str:
    """The keys' prefix of partition ``part`` (urllist.redisqueue.prefix_of)."""
    return PREFIX if part == 0 else f"crawl:{{{CRAWL_ID}:{part}}}:"


def redis_left(client: redis.Redis, data_dir: Path, prefix: str = PREFIX) -> dict:
    """What the crawl leaves in Redis: bytes and keys per key pattern, the seen set (one set
    ``seen`` or the sets ``seen:*``), the AOF."""
    keys = list(client.scan_iter(match=prefix + "*", count=1000))
    pipe = client.pipeline(transaction=False)
    for key in keys:
        pipe.memory_usage(key, samples=0)
        pipe.type(key)
    replies = pipe.execute()
    groups: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    seen = []
    for key, size, kind in zip(keys, replies[0::2], replies[1::2]):
        pattern = key_pattern(key.decode()[len(prefix):])
        groups[pattern][0] += 1
        groups[pattern][1] += size or 0
        if pattern in ("seen", "seen:*") and kind == b"set":
            seen.append(key)
    pipe = client.pipeline(transaction=False)
    for key in seen:
        pipe.scard(key)
    return {"used_memory": client.info("memory")["used_memory"],
            "keys": {p: {"keys": n, "bytes": b} for p, (n, b) in sorted(groups.items())},
            "seen_keys": len(seen), "seen_urls": sum(pipe.execute()),
            "seen_bytes": sum(groups[p][1] for p in ("seen", "seen:*") if p in groups),
            "aof_bytes": sum(f.stat().st_size for f in data_dir.rglob("*.aof") if f.is_file())}


def key_pattern(name: str) -> str:
    """``q:3:127.0.0.5`` -> ``q:*``: one row per kind of key, whatever host, level or worker."""
    head, sep, _ = name.partition(":")
    return head + (":*" if sep else "")


# -- the profile: every command, and the queue ---------------------------------------------------
def script_names(source: Path = REPO) -> dict[str, str]:
    """SHA1 -> name of every Lua script the source tree's urllist/redisqueue.py defines
    (module strings holding redis.call), so the slowlog's EVALSHA lines can be named. Read
    from the file as it is now: the workers started from it, whatever this process imported."""
    spec = importlib.util.spec_from_file_location("redisqueue_measured",
                                                  source / "urllist" / "redisqueue.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module   # its dataclasses look their module up there
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[spec.name]
    return {hashlib.sha1(value.encode()).hexdigest(): name.strip("_").lower()
            for name, value in vars(module).items()
            if isinstance(value, str) and "redis.call" in value and name.isupper()}


def call_name(names: dict[str, str], sha: str, first_arg: str) -> str:
    """A script call's name; the politeness gate's with its operation."""
    name = names.get(sha, "other script")
    return f"{name} {first_arg}" if name == "gate" else name


class Profile(threading.Thread):
    """While a shared run goes on: every command Redis runs (the slowlog with threshold 0,
    drained with a reset in one MULTI, so nothing is lost or counted twice) and, each
    turn, the queue lists' total length and MEMORY USAGE."""

    def __init__(self, url: str, source: Path) -> None:
        super().__init__(daemon=True)
        self.source = source
        self.client = redis.Redis.from_url(url, client_name=HARNESS)
        self.calls: Counter = Counter()    # client round trips: command, or (SHA, first ARGV)
        self.usec: Counter = Counter()
        self.inner: Counter[str] = Counter()    # commands the scripts ran
        self.acks = 0                           # pages acknowledged (counted by the scripts' HINCRBY)
        self.lost = 0                           # slowlog entries missed (ids skipped)
        self.queue = {"urls": 0, "bytes": 0, "lists": 0, "entry_bytes": 0}   # at its largest
        self._last_id = None
        self._done = threading.Event()
        self.client.config_set("slowlog-max-len", 1_000_000)
        self.client.slowlog_reset()
        self.client.config_set("slowlog-log-slower-than", 0)

    def run(self) -> None:
        while not self._done.wait(PROFILE_EVERY_S):
            self.drain()
            self.sample_queue()

    def finish(self) -> dict:
        self._done.set()
        self.join()
        self.drain()
        self.client.config_set("slowlog-log-slower-than", 10_000)
        names = script_names(self.source)
        calls, usec = Counter(), Counter()
        for key, n in self.calls.items():
            name = call_name(names, *key) if isinstance(key, tuple) else key
            calls[name] += n
            usec[name] += self.usec[key]
        return {"calls": dict(calls), "usec": dict(usec), "inner": dict(self.inner), "acks": self.acks,
                "lost": self.lost, "queue": self.queue}

    def drain(self) -> None:
        pipe = self.client.pipeline(transaction=True)
        pipe.slowlog_get(-1)
        pipe.slowlog_reset()
        entries, _ = pipe.execute()
        for entry in sorted(entries, key=lambda e: e["id"]):
            if self._last_id is not None:
                self.lost += entry["id"] - self._last_id - 1
            self._last_id = entry["id"]
            self.count(entry)
        if self._last_id is not None:
            self._last_id += 1   # the SLOWLOG GET itself: logged, then reset with the rest

    def count(self, entry: dict) -> None:
        if entry["client_name"].decode() == HARNESS:
            return
        address = entry["client_address"].decode()
        words = entry["command"].decode("utf-8", "replace").split(" ", 5)
        name = words[0].upper()
        if address == "?:0":   # run inside a script
            self.inner[name] += 1
            if name == "HINCRBY" and words[2:3] == ["processed"]:   # by the call's pages
                self.acks += int(words[3])
            return
        key = (words[1], words[4] if len(words) > 4 else "") if name == "EVALSHA" else name
        self.calls[key] += 1
        self.usec[key] += entry["duration"]

    def sample_queue(self) -> None:
        keys = list(self.client.scan_iter(match=PREFIX + "q:*", count=1000))
        pipe = self.client.pipeline(transaction=False)
        for key in keys:
            pipe.llen(key)
            pipe.memory_usage(key, samples=0)
        values = pipe.execute()
        urls, size = sum(values[0::2]), sum(v or 0 for v in values[1::2])
        if urls > self.queue["urls"]:
            entries = [e for key in keys for e in self.client.lrange(key, 0, -1)]
            self.queue = {"urls": urls, "bytes": size, "lists": len(keys),
                          "entry_bytes": sum(map(len, entries)) / max(1, len(entries))}


# -- one run ------------------------------------------------------------------------------
@dataclass
class Run:
    setting: str
    variant: str
    workers: int
    processes: int
    fsync: str | None
    round: int
    site_pages: int
    worker_pages: list = field(default_factory=list)   # index.csv rows of each worker
    wall_s: float = 0.0            # first command started to last one exited, harness clock
    span_s: float = 0.0            # first request start to last request end, nginx's clock
    exit_ok: bool = False          # every command exited 0 within the timeout
    worker_cpu_s: float = 0.0      # GNU time of every worker (its parser processes included)
    max_rss_kb: int = 0            # the largest worker
    nginx_cpu_s: float = 0.0
    redis_cpu_s: float = 0.0
    redis_cpu_each_s: list = field(default_factory=list)   # per Redis server
    other_cpu_s: float = 0.0       # the rest of the machine meanwhile
    pages: int = 0                 # site pages saved byte-identical on their BFS levels' counts
    levels_exact: bool = False
    requests: int = 0
    missed: int = 0                # site pages never requested
    duplicates: int = 0            # requests for site pages beyond the first
    robots: int = 0                # robots.txt requests
    smallest_gap_s: float | None = None
    short_gaps: int = 0            # gaps below SHORT x delay
    below_delay: int = 0           # gaps below the delay itself
    merge_s: float = 0.0
    scripts: dict = field(default_factory=dict)   # script_stats
    left: dict = field(default_factory=dict)      # redis_left
    profile: dict = field(default_factory=dict)   # Profile.finish, profile runs only

    @property
    def pages_per_s(self) -> float:
        return self.pages / self.wall_s if self.wall_s else 0.0

    @property
    def checked(self) -> bool:
        """Every page once, saved byte-identical on its level, no short gap."""
        return (self.exit_ok and self.pages == self.site_pages and self.levels_exact
                and not self.missed and not self.duplicates and not self.short_gaps)

    def per_page(self, value: float) -> float:
        return value / self.pages if self.pages else 0.0


def run_once(setting: Setting, variant: Variant, server: Nginx, run_dir: Path, round_no: int,
             timeout: float, profile: bool = False) -> Run:
    shutil.rmtree(run_dir, ignore_errors=True)
    run_dir.mkdir(parents=True)
    run = Run(setting.name, variant.label + (" (profile)" if profile else ""), variant.workers,
              variant.processes, variant.fsync if variant.workers else None, round_no, setting.pages)
    mark = server.mark()
    if variant.workers:
        dirs = run_shared(setting, variant, server, run_dir, run, timeout, profile)
    else:
        dirs = [run_dir / "out"]
        measure_run(run, server, [], timeout, lambda: [Timed.start(
            [CRAWLER, "crawl", *crawl_args(setting, server), "--out", str(dirs[0]),
             "--processes", str(variant.processes)], run_dir / "logs", setting.env())])
    server.mark()   # a barrier: every request of the run is in the log after it
    check_server(run, setting, server.requests_since(mark))
    out = merge(run, dirs, run_dir, setting.env()) if variant.workers else dirs[0]
    run.worker_pages = [rows_written(d) for d in dirs]
    check_saved_pages(run, setting, out)
    return run


def run_shared(setting: Setting, variant: Variant, server: Nginx, run_dir: Path, run: Run,
               timeout: float, profile: bool) -> list[Path]:
    dirs = [run_dir / f"w{k}" for k in range(variant.workers)]
    own = ("--processes", str(variant.processes))
    with ExitStack() as stack:
        servers = [stack.enter_context(RedisServer(run_dir / f"redis{k or ''}",
                                                   extra=("--appendfsync", variant.fsync)))
                   for k in range(variant.servers)]
        clients = [redis.Redis.from_url(s.url, client_name=HARNESS) for s in servers]
        for client in clients:
            assert client.config_get("appendfsync")["appendfsync"] == variant.fsync
            client.config_resetstat()
        watch = Profile(servers[0].url, setting.source) if profile else None

        def start() -> list[Timed]:
            try:
                return start_workers([CRAWLER, "crawl", *crawl_args(setting, server), "--out", str(dirs[0])],
                                     [s.url for s in servers], clients[0], dirs, run_dir, setting.env(), own)
            except StartError as exc:
                raise click.ClickException(str(exc)) from None
        waits_for_crawl(CRAWLER, frozen(setting.env()))   # asked before the clock starts
        if watch:
            watch.start()
        measure_run(run, server, clients, timeout, start)
        if watch:
            run.profile = watch.finish()
        run.scripts = script_stats(clients)
        run.left = redis_left_all(servers)
    return dirs


def measure_run(run: Run, server: Nginx, clients: list[redis.Redis], timeout: float,
                start) -> None:
    """Readings, start() (the commands), their end, readings again."""
    before = read(server, clients)
    timed = start()
    run.exit_ok = wait_all(timed, time.monotonic() + timeout)
    after = read(server, clients)
    run.exit_ok = run.exit_ok and all(t.proc.returncode == 0 for t in timed)
    usages = [t.usage() for t in timed]
    run.wall_s = after.clock - before.clock
    run.worker_cpu_s = sum(u.cpu_s for u in usages)
    run.max_rss_kb = max(u.max_rss_kb for u in usages)
    run.nginx_cpu_s = after.nginx_s - before.nginx_s
    run.redis_cpu_s = after.redis_s - before.redis_s
    run.redis_cpu_each_s = [a - b for a, b in zip(after.redis_each, before.redis_each)]
    run.other_cpu_s = max(0.0, after.busy_s - before.busy_s - run.worker_cpu_s
                          - run.nginx_cpu_s - run.redis_cpu_s)


def merge(run: Run, dirs: list[Path], run_dir: Path, env: dict[str, str]) -> Path:
    """The workers' output as one crawl directory, by `crawler merge`."""
    merged = run_dir / "merged"
    started = time.perf_counter()
    done = merge_dirs(CRAWLER, dirs, merged, env, run_dir)
    run.merge_s = time.perf_counter() - started
    if done.returncode != 0:
        run.exit_ok = False
        (run_dir / "merge-stderr.txt").write_text(done.stderr)
    return merged


def rows_written(out: Path) -> int:
    """The rows a crawler process wrote to its index.csv (its share of the work)."""
    try:
        with open(out / "index.csv", encoding="utf-8", newline="") as index:
            return max(0, sum(1 for _ in csv.reader(index)) - 1)
    except OSError:
        return 0


# -- the checks ------------------------------------------------------------------------------
def check_server(run: Run, setting: Setting, entries: list) -> None:
    """Each page once per site; the gaps between request starts per server address."""
    counts = [count_server([e for e in entries if e.address == site.address], site.truth)
              for site in setting.sites]
    run.requests, run.span_s = len(entries), span_s(entries)
    run.missed = sum(c.html_missed for c in counts)
    run.duplicates = sum(c.html_duplicates for c in counts)
    run.robots = sum(1 for e in entries if e.path == "/robots.txt")
    if setting.delay_s > 0:
        gaps = [gap for host in gaps_by_host(entries).values() for gap in host]
        delay_ms = round(setting.delay_s * 1000)
        run.smallest_gap_s = min(gaps) / 1000 if gaps else None
        run.short_gaps = sum(1 for gap in gaps if gap < SHORT * delay_ms)
        run.below_delay = sum(1 for gap in gaps if gap < delay_ms)


def check_saved_pages(run: Run, setting: Setting, out: Path) -> None:
    """Pages saved byte-identical, and every site's pages per level as its ground truth."""
    try:
        saved = index_csv_by_host(out)
    except OSError:
        return
    checks = [(check_saved([page for host, page in saved if host == site.address], site.truth,
                           site.root, check_levels=True), site) for site in setting.sites]
    run.pages = sum(c.identical for c, _ in checks)
    run.levels_exact = all(c.wrong_level == 0 and c.levels == site.truth.levels
                           for c, site in checks)


# -- medians and tables -------------------------------------------------------------------------
def reference(run: Run, runs: list[Run]) -> Run | None:
    """The single-node run of the same setting and round."""
    return next((r for r in runs if r.setting == run.setting and r.round == run.round
                 and not r.workers and not r.profile), None)


def busiest_share(run: Run) -> float | None:
    """The share of the pages the busiest worker wrote (1 / workers when even)."""
    total = sum(run.worker_pages)
    return max(run.worker_pages) / total if total else None


def summarize(runs: list[Run], settings: dict[str, Setting]) -> list[dict]:
    """One row per (setting, variant): medians over rounds, ratios per round then the median."""
    rows = []
    for key in dict.fromkeys((r.setting, r.variant) for r in runs if not r.profile):
        mine = [r for r in runs if (r.setting, r.variant) == key]
        ratios = [r.pages_per_s / ref.pages_per_s for r in mine
                  if (ref := reference(r, runs)) and ref.pages_per_s]
        shares = [s for r in mine if (s := busiest_share(r)) is not None]
        allowed, barrier = settings[key[0]].allowed_per_s, settings[key[0]].barrier_s
        med = lambda f: statistics.median(f(r) for r in mine)
        rows.append({
            "setting": key[0], "variant": key[1], "workers": mine[0].workers,
            "processes": mine[0].processes, "fsync": mine[0].fsync, "rounds": len(mine),
            "servers": max(1, len(mine[0].redis_cpu_each_s)),
            "pages_per_s": med(lambda r: r.pages_per_s), "wall_s": med(lambda r: r.wall_s),
            "span_s": med(lambda r: r.span_s),
            "x_single": statistics.median(ratios) if ratios else None,
            "of_allowed": med(lambda r: r.pages_per_s) / allowed if allowed else None,
            "of_barrier": barrier / med(lambda r: r.wall_s) if barrier else None,
            "worker_cpu_ms_per_page": med(lambda r: 1000 * r.per_page(r.worker_cpu_s)),
            "redis_cpu_us_per_page": med(lambda r: 1e6 * r.per_page(r.redis_cpu_s)),
            "busiest_redis_us_per_page": med(lambda r: 1e6 * r.per_page(max(r.redis_cpu_each_s or [0]))),
            "aof_bytes_per_page": med(lambda r: r.per_page(r.left.get("aof_bytes", 0))),
            "calls_per_page": med(lambda r: r.per_page(r.scripts.get("evalsha_calls", 0))),
            "usec_per_call": med(lambda r: r.scripts["evalsha_usec"] / r.scripts["evalsha_calls"]
                                 if r.scripts.get("evalsha_calls") else 0.0),
            "script_us_per_page": med(lambda r: r.per_page(r.scripts.get("evalsha_usec", 0))),
            "cores_busy": med(lambda r: (r.worker_cpu_s + r.redis_cpu_s + r.nginx_cpu_s) / r.wall_s),
            "other_cores": med(lambda r: r.other_cpu_s / r.wall_s),
            "merge_s": med(lambda r: r.merge_s),
            "checked": all(r.checked for r in mine),
            "busiest_share": statistics.median(shares) if shares else None})
    return rows


THROUGHPUT_COLUMNS = ("setting", "variant", "pages/s", "× single", "÷ hosts/delay",
                      "barrier bound ÷ wall", "wall s",
                      "worker CPU ms/page", "Redis CPU µs/page", "busiest Redis µs/page",
                      "AOF B/page", "script calls/page",
                      "µs/call in Redis", "cores busy", "other load", "merge s", "checked")


def throughput_table(rows: list[dict]) -> str:
    cells = [(r["setting"], r["variant"], f"{r['pages_per_s']:.0f}", _times(r["x_single"]),
              _fraction(r["of_allowed"]), _fraction(r["of_barrier"]), f"{r['wall_s']:.1f}",
              f"{r['worker_cpu_ms_per_page']:.2f}",
              _blank(r["workers"], f"{r['redis_cpu_us_per_page']:.0f}"),
              _blank(r["workers"], f"{r.get('busiest_redis_us_per_page', 0):.0f}"),
              _blank(r["workers"], f"{r.get('aof_bytes_per_page', 0):,.0f}"),
              _blank(r["workers"], f"{r['calls_per_page']:.2f}"),
              _blank(r["workers"], f"{r['usec_per_call']:.0f}"),
              f"{r['cores_busy']:.2f}", f"{r['other_cores']:.2f}",
              _blank(r["workers"], f"{r['merge_s']:.1f}"), "yes" if r["checked"] else "NO")
             for r in rows]
    return markdown_table(THROUGHPUT_COLUMNS, cells, left=2)


PLAIN = "plain commands (robots.txt, set-up)"


def profile_rows(run: Run) -> list[tuple[str, float, float, float]]:
    """(script, SCRIPT LOAD or the plain commands together; calls per page, µs per call,
    µs per page), most time first."""
    calls, usec = Counter(), Counter()
    for name, n in run.profile["calls"].items():
        group = name if not name.isupper() or name == "SCRIPT" else PLAIN
        calls[group] += n
        usec[group] += run.profile["usec"][name]
    rows = [(name, run.per_page(n), usec[name] / n, run.per_page(usec[name]))
            for name, n in calls.items()]
    return sorted(rows, key=lambda row: -row[3])


def profile_table(run: Run) -> str:
    rows = profile_rows(run)
    total_calls = sum(r[1] for r in rows)
    inner = run.per_page(sum(run.profile["inner"].values()))
    cells = [(name, f"{per:.2f}", f"{us:.0f}", f"{per_page:.0f}") for name, per, us, per_page in rows]
    cells.append(("all round trips", f"{total_calls:.2f}", "—", f"{sum(r[3] for r in rows):.0f}"))
    cells.append(("commands run inside the scripts", f"{inner:.1f}", "—", "—"))
    return markdown_table(("client call", "per page", "µs/call", "µs/page"), cells)


def inner_table(run: Run) -> str:
    """The commands the scripts ran, by name, per page, most first: where to cut Lua work."""
    counts = sorted(run.profile["inner"].items(), key=lambda item: -item[1])
    return markdown_table(("command inside the scripts", "per page"),
                          [(name, f"{run.per_page(n):.2f}") for name, n in counts])


def _times(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}×"


def _fraction(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def _blank(workers: int, text: str) -> str:
    return text if workers else "—"


# -- memory and the scale arithmetic ---------------------------------------------------------------
def memory(runs: list[Run]) -> dict:
    """Per setting: the seen set and what stays (from the last run with the most workers),
    the queue at its largest (from the profile run)."""
    out = {}
    for name in dict.fromkeys(r.setting for r in runs):
        shared = [r for r in runs if r.setting == name and r.workers and r.left]
        if not shared:
            continue
        plain = [r for r in shared if not r.profile]
        last = max(plain or shared, key=lambda r: (r.workers, r.round))
        left = last.left
        queue = next((r.profile["queue"] for r in shared if r.profile), {})
        out[name] = {
            "run": last.variant, "pages": last.pages, "seen_urls": left["seen_urls"],
            "seen_keys": left.get("seen_keys", 1),
            "seen_bytes_per_url": left["seen_bytes"] / left["seen_urls"] if left["seen_urls"] else None,
            "queue_urls": queue.get("urls", 0),
            "queue_bytes_per_url": queue["bytes"] / queue["urls"] if queue.get("urls") else None,
            "queue_entry_bytes": queue.get("entry_bytes"), "queue_lists": queue.get("lists", 0),
            "used_memory": left["used_memory"], "aof_bytes_per_page": last.per_page(left["aof_bytes"]),
            "keys": left["keys"]}
    return out


def memory_table(mem: dict) -> str:
    cells = [(name, f"{m['seen_urls']:,}", f"{m['seen_keys']:,}", _number(m["seen_bytes_per_url"]),
              f"{m['queue_urls']:,}",
              f"{m['queue_lists']:,}", _number(m["queue_bytes_per_url"]), _number(m["queue_entry_bytes"]),
              f"{m['used_memory'] / 2**20:.1f}", f"{m['aof_bytes_per_page']:,.0f}")
             for name, m in mem.items()]
    return markdown_table(("setting", "seen URLs", "seen sets", "seen B/URL", "queued URLs at the most",
                           "queue lists then", "queue B/URL", "queue entry B", "used_memory after MB",
                           "AOF B/page"), cells)


def seen_note(mem: dict) -> list[str]:
    """A warning where the seen set's per-set overhead, not its URLs, makes its bytes per URL."""
    crowded = [name for name, m in mem.items() if m["seen_keys"] * 20 > m["seen_urls"]]
    if not crowded:
        return []
    return [f"In {', '.join(crowded)} the seen set's URLs are spread over nearly as many sets, so "
            f"its bytes per URL are mostly each set's own overhead; the URL-seen section measures "
            f"the layouts at 10⁵ to 10⁷ URLs.", ""]


def left_table(mem: dict) -> str:
    cells = [(name, pattern, f"{k['keys']:,}", f"{k['bytes']:,}", f"{k['bytes'] / m['pages']:.1f}")
             for name, m in mem.items() for pattern, k in m["keys"].items()]
    return markdown_table(("setting", "key", "keys", "bytes", "B/page"), cells, left=2)


def _number(value: float | None) -> str:
    return "—" if value is None else f"{value:.1f}"


def scale(rows: list[dict], runs: list[Run], mem: dict) -> dict:
    """Per setting, from the medians of the most workers (appendfsync always): what one Redis
    core carries, and how many nodes of the measured one-worker speed that is."""
    out = {}
    for name in dict.fromkeys(r["setting"] for r in rows):
        mine = [r for r in rows if r["setting"] == name and r["workers"]]
        always = [r for r in mine if r["fsync"] == "always" and r.get("servers", 1) == 1]
        if not always:
            continue
        one = min(always, key=lambda r: r["workers"])   # the first of the fewest: main --processes
        most = max((r for r in always if r["processes"] == one["processes"]), key=lambda r: r["workers"])
        everysec = [r for r in mine if r["fsync"] == "everysec" and r["workers"] == most["workers"]
                    and r.get("servers", 1) == 1]
        profiled = next((r for r in runs if r.setting == name and r.profile), None)
        capacity = 1e6 / most["redis_cpu_us_per_page"] if most["redis_cpu_us_per_page"] else None
        out[name] = {
            "from": most["variant"], "node": one["variant"], "node_pages_per_s": one["pages_per_s"],
            "calls_per_page": most["calls_per_page"],
            "round_trips_per_page": sum(profiled.per_page(n) for n in profiled.profile["calls"].values())
            if profiled else None,
            "redis_cpu_us_per_page": most["redis_cpu_us_per_page"],
            "script_us_per_page": most["script_us_per_page"],
            "pages_per_s_per_redis_core": capacity,
            "nodes_per_redis_core": capacity / one["pages_per_s"] if capacity and one["pages_per_s"] else None,
            "everysec_x_pages_per_s": everysec[0]["pages_per_s"] / most["pages_per_s"] if everysec else None,
            "everysec_x_redis_cpu": everysec[0]["redis_cpu_us_per_page"] / most["redis_cpu_us_per_page"]
            if everysec and most["redis_cpu_us_per_page"] else None,
            "urls_per_gib_seen": 2**30 / mem[name]["seen_bytes_per_url"]
            if mem.get(name, {}).get("seen_bytes_per_url") else None}
    return out


def scale_lines(sc: dict) -> list[str]:
    lines = []
    for name, s in sc.items():
        cap = s["pages_per_s_per_redis_core"]
        lines.append(
            f"- {name}, from \"{s['from']}\": {s['calls_per_page']:.2f} script calls per page"
            + (f" ({s['round_trips_per_page']:.2f} client round trips in the profile run)"
               if s["round_trips_per_page"] else "")
            + f"; Redis CPU {s['redis_cpu_us_per_page']:.0f} µs per page ({s['script_us_per_page']:.0f} µs"
            f" of it inside the scripts)" + (f", so one Redis core carries ~{cap:,.0f} pages/s" if cap else "")
            + (f", {s['nodes_per_redis_core']:.1f} nodes at the {s['node_pages_per_s']:.0f} pages/s of"
               f" \"{s['node']}\" here" if s["nodes_per_redis_core"] else "")
            + (f"; appendfsync everysec: {s['everysec_x_pages_per_s']:.2f}× the pages/s,"
               f" {s['everysec_x_redis_cpu']:.2f}× the Redis CPU per page" if s["everysec_x_pages_per_s"] else "")
            + (f"; the seen set holds {s['urls_per_gib_seen'] / 1e6:.0f} M URLs per GiB"
               if s["urls_per_gib_seen"] else "") + ".")
    return lines


# -- the section, storing ----------------------------------------------------------------------
RUNS_COLUMNS = ("setting", "variant", "round", "pages", "wall s", "pages/s", "span s", "worker CPU s",
                "Redis CPU s", "nginx CPU s", "other CPU s", "script calls", "requests", "robots.txt",
                "missed", "duplicates", "smallest gap s", "gaps < 0.9 delay", "gaps < delay",
                "levels exact")


def runs_table(runs: list[Run]) -> str:
    cells = [(r.setting, r.variant, str(r.round), str(r.pages), f"{r.wall_s:.1f}", f"{r.pages_per_s:.0f}",
              f"{r.span_s:.1f}", f"{r.worker_cpu_s:.1f}", f"{r.redis_cpu_s:.2f}", f"{r.nginx_cpu_s:.2f}",
              f"{r.other_cpu_s:.1f}", str(r.scripts.get("evalsha_calls", "—")), str(r.requests),
              str(r.robots), str(r.missed), str(r.duplicates),
              "—" if r.smallest_gap_s is None else f"{r.smallest_gap_s:.3f}", str(r.short_gaps),
              str(r.below_delay), "yes" if r.levels_exact else "NO")
             for r in runs]
    return markdown_table(RUNS_COLUMNS, cells, left=2)


def title(label: str) -> str:
    return SECTION_TITLE + (f" — {label}" if label else "")


def section(result: dict) -> str:
    m, source = result["machine"], result["source"]
    runs = [run_from_dict(r) for r in result["runs"]]
    profiled = [r for r in runs if r.profile]
    return "\n".join([
        title(result.get("label", "")), "",
        f"Written by `.venv/bin/python -m benchmarks.distributed{' ' * bool(result['argv'])}"
        f"{result['argv']}` (raw numbers: "
        f"`benchmarks/results/distributed/{result['name']}.json`); columns: benchmarks/README.md.", "",
        f"- {m['date']}; commit `{source['commit']}`"
        + (" (working tree with uncommitted changes)" if source["dirty"] else "")
        + (" (run from its git archive)" if source.get("source") else "")
        + (" — **the crawler's code changed during the run**" if result.get("code_changed") else "")
        + f"; {m['cpu']}, {m['cores']} cores, Python {m['python']}; {m['nginx']}; {result['redis']}; "
        f"load average at start {' '.join(m['load_average'])}; the whole benchmark "
        f"{result['elapsed_s']:.0f} s",
        *(f"- {s['name']}: {s['sites']} site(s), {s['pages']:,} pages, --delay {s['delay_s']:g}, "
          f"{s['rounds']} interleaved round(s)"
          + (f"; politeness allows hosts / delay = {s['allowed_per_s']:.0f} pages/s, and a crawler "
             f"that finishes each level on every host before the next needs at least "
             f"{s['barrier_s']:.1f} s (the barrier bound)" if s["allowed_per_s"] else "")
          for s in result["settings"]),
        "- medians over rounds; × single is per round, to the single-node crawler in the same "
        "round, then the median; every crawler process `--workers 8`"
        + (f", every crawl `{result['options']['crawl_args']}`" if result["options"].get("crawl_args") else "")
        + "; a fresh redis-server per run (AOF, appendfsync always unless the variant says everysec)", "",
        throughput_table(result["summary"]), "",
        "Scale arithmetic:", "",
        *scale_lines(result["scale"]), "",
        *(part for r in profiled for part in (
            f"Profile of one run, {r.setting}, {r.variant} (every command logged; "
            f"{r.profile['lost']} log entries lost): who calls what per page",
            "", profile_table(r), "",
            "<details><summary>the commands inside the scripts, by name</summary>", "",
            inner_table(r), "", "</details>", "")),
        "Redis memory: the seen set (MEMORY USAGE / SCARD after the crawl), the queue lists "
        "(MEMORY USAGE of every q:* list / their length, at the largest sample of the profile run), "
        "used_memory and the AOF after the crawl:", "",
        memory_table(result["memory"]), "", *seen_note(result["memory"]),
        "<details><summary>what stays in Redis after the crawl, per key</summary>", "",
        left_table(result["memory"]), "", "</details>", "",
        "<details><summary>every run</summary>", "", runs_table(runs), "", "</details>", ""])


def run_to_dict(run: Run) -> dict:
    return {**asdict(run), "pages_per_s": run.pages_per_s, "checked": run.checked}


def run_from_dict(record: dict) -> Run:
    return Run(**{k: v for k, v in record.items() if k in Run.__dataclass_fields__})


def store(result: dict, results_dir: Path, results_md: Path) -> Path:
    raw = results_dir / "distributed" / f"{result['name']}.json"
    raw.parent.mkdir(parents=True, exist_ok=True)
    raw.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    text = section(result)
    slug = "".join(c if c.isalnum() else "-" for c in result.get("label", "").lower())
    (results_dir / f"distributed{'-' + slug if slug else ''}.md").write_text(text, encoding="utf-8")
    put_section(results_md, title(result.get("label", "")) + "\n", text)
    return raw


# -- the command line -------------------------------------------------------------------------------
def measure(setting: Setting, plan: list[Variant], rounds: int, profile: bool, work: Path,
            timeout: float, keep: bool, progress) -> list[Run]:
    """Every variant once per round, interleaved, then the profile run; one nginx for all."""
    _warm_sites(setting)
    runs = []
    with Nginx({site.address: site.root for site in setting.sites}) as server:
        schedule = [(n, v, False) for n in range(1, rounds + 1) for v in plan]
        if profile and any(v.workers for v in plan):
            schedule.append((1, max((v for v in plan if v.fsync == "always" and v.servers == 1),
                                    key=lambda v: v.workers), True))
        for round_no, variant, profiled in schedule:
            run_dir = work / "runs" / "distributed" / f"{setting.name}-{len(runs)}"
            run = run_once(setting, variant, server, run_dir, round_no, timeout, profiled)
            progress(_line(run, rounds))
            if run.checked and not keep:
                shutil.rmtree(run_dir, ignore_errors=True)
            runs.append(run)
    return runs


def _warm_sites(setting: Setting) -> None:
    for site in setting.sites:
        _warm(site.root)


def _line(r: Run, rounds: int) -> str:
    problems = [text for failed, text in (
        (not r.exit_ok, "a command failed or timed out"), (r.missed or r.duplicates,
                                                          f"missed {r.missed} dup {r.duplicates}"),
        (r.pages != r.site_pages, f"{r.pages}/{r.site_pages} saved"),
        (not r.levels_exact, "levels not exact"), (r.short_gaps, f"{r.short_gaps} short gaps")) if failed]
    return (f"round {r.round}/{rounds} {r.setting} {r.variant}: {r.pages} pages in {r.wall_s:.1f} s "
            f"({r.pages_per_s:.0f} pages/s), workers {r.worker_cpu_s:.1f} CPU s, Redis "
            f"{r.redis_cpu_s:.2f} s" + (" — " + "; ".join(problems) if problems else ""))


def code_digest(source: Path) -> str:
    """A digest of the crawler's own code as it is on disk now: other people edit this tree,
    and a run is only one measurement if the code stayed the same throughout."""
    digest = hashlib.blake2b(digest_size=8)
    for package in ("controller", "getpage", "textfilter", "urlfilter", "urllist"):
        for path in sorted((source / package).rglob("*.py")):
            digest.update(str(path.relative_to(source)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def _ints(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x.strip()]


def _rounds(text: str, names: list[str]) -> dict[str, int]:
    """Rounds per setting: one number for all, or one per setting in their order."""
    counts = _ints(text)
    if len(counts) == 1:
        counts = counts * len(names)
    if len(counts) < len(names) or min(counts) < 1:
        raise click.BadParameter(f"give one count of rounds, or one per setting ({len(names)})",
                                 param_hint="--rounds")
    return dict(zip(names, counts))


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--settings", "names", default="one-host,many-hosts", show_default=True,
              help="Comma-separated: one-host (one big site, --delay 0), many-hosts (--delay D).")
@click.option("--pages", type=click.IntRange(min=10), default=5000, show_default=True,
              help="Pages of the one-host site (benchmarks/site.py).")
@click.option("--hosts", type=click.IntRange(1, 250), default=100, show_default=True,
              help="Sites of the many-hosts setting, one per 127.0.0.x.")
@click.option("--host-pages", type=click.IntRange(min=2), default=30, show_default=True,
              help="Pages of each many-hosts site.")
@click.option("--delay", type=click.FloatRange(min=0.01), default=0.5, show_default=True,
              help="The many-hosts setting's --delay.")
@click.option("--workers", "workers", default="1,2,3", show_default=True,
              help="Comma-separated counts of shared workers.")
@click.option("--processes", default="0", show_default=True,
              help="Comma-separated --processes of the workers, each with every worker count (the "
                   "first is also the everysec and profile runs').")
@click.option("--compare-processes", "compare", default="1", show_default=True,
              help="Also run the most workers with each of these --processes (empty: none).")
@click.option("--single-processes", type=click.IntRange(min=0), default=1, show_default=True,
              help="--processes of the single-node crawler (1: its default on 2 cores).")
@click.option("--servers", default="1", show_default=True,
              help="Redis servers of the shared variants, comma-separated: with a number above "
                   "1, the variants of the most workers run again over that many servers (the "
                   "crawl partitioned by host, --redis given that often).")
@click.option("--everysec", default="3", show_default=True,
              help="Worker counts also run with appendfsync everysec (empty: none).")
@click.option("--rounds", default="2,1", show_default=True,
              help="Interleaved rounds per setting, in the order of --settings (one number: all).")
@click.option("--crawl-args", default="", help="More options for every `crawler crawl` (the shared "
              "crawl's settings, so every worker's), e.g. '--per-host 8'.")
@click.option("--ours-commit", default=None,
              help="Run the crawler as of this commit (exported with git archive under --work), not "
                   "the working tree, which others may be editing meanwhile.")
@click.option("--order", default="bfs", show_default=True,
              help="The crawl order of every crawl (another than bfs: the shared crawl's queues by "
                   "score, urllist/orders.py; the focused orders are given the topic 'page').")
@click.option("--label", default="", help="Names this result's own section in RESULTS.md (and its "
              "file results/distributed-LABEL.md), beside the default run's, e.g. 'per-host 8'.")
@click.option("--profile/--no-profile", default=True, show_default=True,
              help="One more run per setting with every Redis command logged.")
@stored_options
@click.option("--timeout", type=click.FloatRange(min=1), default=600.0, show_default=True,
              help="Seconds allowed per run.")
@click.option("--keep-output", is_flag=True, help="Keep every run's directory under --work/runs/distributed.")
def main(names, pages, hosts, host_pages, delay, workers, processes, compare, single_processes,
         servers, everysec, rounds, crawl_args, ours_commit, order, label, profile, save, work, results_dir,
         results_md, timeout, keep_output) -> None:
    """Pages/s of N workers sharing one crawl through Redis, against the single-node crawler,
    and what Redis costs per page and per URL.

    Example: .venv/bin/python -m benchmarks.distributed --settings many-hosts --rounds 1
    """
    progress = lambda line: click.echo(line, err=True)
    work.mkdir(parents=True, exist_ok=True)
    makers = {"one-host": lambda: one_host(pages, work),
              "many-hosts": lambda: many_hosts(hosts, host_pages, delay, work)}
    unknown = [n for n in names.split(",") if n not in makers]
    if unknown:
        raise click.BadParameter(f"unknown setting {unknown[0]!r}; choose from one-host, many-hosts",
                                 param_hint="--settings")
    tree, source = _ours_source(ours_commit, work)
    tree = tree or REPO
    if order != "bfs":
        topic = ["--topic", "page"] if make_order(order).needs_topic else []
        crawl_args = shlex.join(["--order", order, *topic]) + (" " + crawl_args if crawl_args else "")
    settings = {n: replace(makers[n](), options=tuple(shlex.split(crawl_args)), source=tree)
                for n in names.split(",")}
    plan = variants(_ints(workers), _ints(processes), _ints(compare), _ints(everysec), single_processes,
                    _ints(servers))
    rounds = _rounds(rounds, list(settings))
    started, clock, before = datetime.now(timezone.utc), time.perf_counter(), machine()
    code = code_digest(tree)
    runs = [r for name, s in settings.items()
            for r in measure(s, plan, rounds[name], profile, work, timeout, keep_output, progress)]
    rows = summarize(runs, settings)
    mem = memory(runs)
    result = {"name": f"distributed-{started:%Y%m%d-%H%M%S}", "label": label, "started": started.isoformat(),
              "argv": shlex.join(sys.argv[1:]), "elapsed_s": time.perf_counter() - clock,
              "machine": before, "redis": redis_version(), "source": source,
              "code_changed": code != code_digest(tree),
              "options": {"plan": [asdict(v) for v in plan], "profile": profile,
                          "crawl_args": crawl_args},
              "settings": [{"name": s.name, "sites": len(s.sites), "pages": s.pages,
                            "delay_s": s.delay_s, "allowed_per_s": s.allowed_per_s,
                            "barrier_s": s.barrier_s, "rounds": rounds[s.name]}
                           for s in settings.values()],
              "summary": rows, "scale": scale(rows, runs, mem), "memory": mem,
              "runs": [run_to_dict(r) for r in runs]}
    _show(result, rows, mem, save and (results_dir, results_md))
    if not all(r.checked for r in runs):
        click.echo("some runs failed their checks (see the every-run table and --work/runs/distributed)",
                   err=True)
        sys.exit(1)


def _show(result: dict, rows, mem, store_in) -> None:
    """The tables on stdout; the result stored when ``store_in`` is (results dir, RESULTS.md)."""
    click.echo(throughput_table(rows))
    click.echo("\n".join(["", *scale_lines(result["scale"]), "", memory_table(mem)]))
    if store_in:
        click.echo(f"stored {store(result, *store_in)} and its section in {store_in[1]}", err=True)
    if result["code_changed"]:
        click.echo("the crawler's code changed during the run: its numbers mix versions", err=True)


if __name__ == "__main__":
    main()

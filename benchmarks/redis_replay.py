"""The shared crawl's Redis side past what this machine can fetch (issue 25):
many simulated workers replay a crawl of a synthetic site graph against a
real redis-server, and Redis's own counters say what a page costs it.

    .venv/bin/python -m benchmarks.redis_replay      # 3, 12, 48 workers x 1, 1,000 hosts x always, everysec
    .venv/bin/python -m benchmarks.redis_replay --fsync everysec --pages 20000 --hosts 1000

Each worker is the real worker-side code (urllist.redisqueue: SharedCrawl,
RedisGate, RedisFrontier with its tick and wake-up threads) making the
engine's calls: ``pop`` for the URLs its fetch threads may take, the gate's
``started`` and ``release``, ``commit`` (one ``sync`` script call: slot
given back, page acknowledged with its links, next URLs leased) and
``written``. Only the HTTP fetch is replaced: a page's links are looked up
in a graph held in memory, after an optional simulated fetch time.

The graph: N pages over H hosts (page i on host i mod H), every page with
the same number of links (27, as benchmarks/site.py). Pages are handed out
as children in order, ``round(links x new share)`` to a page until all N
have a parent, so every page is reachable; the other links point to pages
already handed out (links a real crawl finds seen).

Workers are threads of this one process, not processes: Redis needs one of
the two cores, and 48 interpreters would take it from Redis; Redis sees
each worker as its own clients either way (its own connections, worker id
and tick). The driver's pages/s is therefore bounded by this process's
Python; the capacity of one Redis core is 10^6 / (Redis CPU us a page).

Measured over the crawl (from the first join to the last leave), from the
server itself: ``INFO cpu`` (Redis CPU), ``INFO commandstats`` (script calls,
every command including the scripts' own), the AOF's size. Checked: every
page of the graph acknowledged exactly once, at its BFS distance from the
seed, and Redis's counts agree.

Stored: benchmarks/results/redis-replay/<name>.json (every run) and
benchmarks/results/redis-replay.md (the section), then RESULTS.md rendered
again (benchmarks/report.py).
"""
from __future__ import annotations

import hashlib
import heapq
import json
import random
import shlex
import sys
import threading
import time
from collections import Counter, deque
from dataclasses import asdict, dataclass
from functools import cached_property
from datetime import datetime, timezone
from pathlib import Path

if __package__ in (None, ""):   # run as a file: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import click

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR.parent / "tests"))   # tests/redisserver.py starts the server

from benchmarks.distributed import redis_cpu, script_stats  # noqa: E402
from benchmarks.redis_seen import redis_version  # noqa: E402
from benchmarks.report import machine, markdown_table, render_results, stored_options  # noqa: E402
from controller.admission import trap_keys  # noqa: E402
from redisserver import RedisServer  # noqa: E402
from urllist.redisqueue import RedisFrontier, RedisGate, SharedCrawl, connect  # noqa: E402

CRAWL_ID = "replay"
SECTION_TITLE = "## Shared crawl's Redis side replayed: many simulated workers (issue 25)"
WAIT_SECONDS = 0.05   # a worker's loop looks at its frontier again at least this often


# -- the synthetic site graph ----------------------------------------------------------
@dataclass(frozen=True)
class Graph:
    urls: list[str]
    links: list[list[int]]    # page -> the pages it links to

    @classmethod
    def make(cls, pages: int, hosts: int, links: int, new_share: float, seed: int = 1) -> Graph:
        rng = random.Random(seed)
        children = max(1, round(links * new_share))
        urls = [f"http://h{i % hosts}.replay.test/p{i}" for i in range(pages)]
        out, handed = [], 1
        for page in range(pages):
            new = list(range(handed, min(pages, handed + children)))
            handed += len(new)
            out.append(new + [rng.randrange(handed) for _ in range(links - len(new))])
        return cls(urls, out)

    @cached_property
    def by_url(self) -> dict[str, tuple[str, list[tuple[str, str, str, str]]]]:
        """url -> (its host, its links as the engine hands them to commit: (url,
        host, path if it has a query, pattern or '')), worked out once a graph."""
        keys = [(url, *trap_keys(url)) for url in self.urls]
        return {url: (keys[page][1], [keys[c] for c in self.links[page]])
                for page, url in enumerate(self.urls)}

    def levels(self) -> list[int]:
        """BFS distance of every page from page 0."""
        level, todo = [0] + [-1] * (len(self.urls) - 1), deque([0])
        while todo:
            page = todo.popleft()
            for child in self.links[page]:
                if level[child] < 0:
                    level[child] = level[page] + 1
                    todo.append(child)
        return level


# -- one simulated worker --------------------------------------------------------------
class Worker:
    """A worker process's calls to Redis, with its fetch threads simulated:
    a page popped now is "fetched" ``fetch_s`` later, then acknowledged."""

    def __init__(self, url: str, name: str, graph: Graph, threads: int, fetch_s: float) -> None:
        self.shared = SharedCrawl(connect(url), CRAWL_ID)
        self.woken = threading.Event()
        self.gate = RedisGate(self.shared, name, Cancelled)
        self.frontier = RedisFrontier(self.shared, self.gate, threads, wake=self.woken.set)
        self.pages, self.threads, self.fetch_s = graph.by_url, threads, fetch_s
        self.acked: list[tuple[str, int]] = []   # (url, level) of every page accepted
        self.refused = 0   # acknowledgements Redis refused: the lease was taken back
        self.last_ack = 0.0
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            self.frontier.join()
            self._crawl()
            self.frontier.flush()
            self.frontier.leave()
        except BaseException as exc:   # reported by the driver, which fails the run
            self.error = exc

    def _crawl(self) -> None:
        fetching: list[tuple[float, int, object]] = []   # (ends at, tie-break, item)
        while not (self.frontier.exhausted() and not fetching):
            now = self.gate.clock()
            for item in self.frontier.pop(self.threads - len(fetching), now):
                self.gate.started(self.pages[item.url][0])
                heapq.heappush(fetching, (now + self.fetch_s, item.id, item))
            while fetching and fetching[0][0] <= self.gate.clock():
                self._acknowledge(heapq.heappop(fetching)[2])
            self._wait(fetching)

    def _wait(self, fetching) -> None:
        now = self.gate.clock()
        until = [now + WAIT_SECONDS, *(f[0] for f in fetching[:1])]
        if len(fetching) < self.threads:
            ready = self.frontier.next_ready(now)
            until.append(now + WAIT_SECONDS if ready is None else ready)
        pause = min(until) - now
        if pause > 0:
            self.woken.wait(pause)
            self.woken.clear()

    def _acknowledge(self, item) -> None:
        """What the engine does once a page is fetched and digested."""
        host, links = self.pages[item.url]
        self.gate.release(host)
        md5 = hashlib.md5(item.url.encode()).hexdigest()
        self.frontier.commit(item, md5, links, True, {"id": item.id, "url": item.url},
                             then=lambda commit: self._judged(item, commit))

    def _judged(self, item, commit) -> None:
        """Redis's answer (held back while the page's chain goes on, as the engine's)."""
        if not commit.accepted:
            self.refused += 1
            return
        self.acked.append((item.url, item.level))
        self.last_ack = time.perf_counter()
        self.frontier.written(item.id)


class Cancelled(Exception):
    """What a cancelled politeness wait raises (nothing cancels one here)."""


# -- one run: a fresh Redis, a crawl, W workers ----------------------------------------
@dataclass
class Run:
    hosts: int
    workers: int
    fsync: str
    pages: int
    wall_s: float
    redis_cpu_s: float
    script_calls: int
    commands: int
    aof_bytes: int
    problems: list[str]
    by_command: dict[str, int]   # INFO commandstats: calls of each command (scripts' own included)

    @property
    def us_per_page(self) -> float:
        return self.redis_cpu_s * 1e6 / self.pages

    def per_page(self, value: float) -> float:
        return value / self.pages


def aof_bytes(data_dir: Path) -> int:
    return sum(f.stat().st_size for f in data_dir.rglob("*.aof") if f.is_file())


def replay(graph: Graph, hosts: int, workers: int, fsync: str, threads: int, fetch_s: float,
           delay: float, work: Path) -> Run:
    data = work / f"redis-{hosts}-{workers}-{fsync}"
    extra = ("--appendfsync", fsync, "--auto-aof-rewrite-percentage", "0")
    with RedisServer(data, extra=extra) as server:
        client = server.client()
        seed = graph.urls[0]
        SharedCrawl(client, CRAWL_ID).create({"replay": True}, [(seed, *trap_keys(seed))], delay=delay,
                                             per_host=1, max_pages=0, host_cap=0, query_cap=0)
        crew = [Worker(server.url, f"w{i}", graph, threads, fetch_s) for i in range(workers)]
        client.config_resetstat()
        cpu0, aof0, start = redis_cpu(client), aof_bytes(data), time.perf_counter()
        threads_ = [threading.Thread(target=w.run) for w in crew]
        for t in threads_:
            t.start()
        for t in threads_:
            t.join()
        stats, cpu = script_stats(client), redis_cpu(client) - cpu0
        by_command = {name.removeprefix("cmdstat_"): s["calls"]
                      for name, s in client.info("commandstats").items()}
        problems = check(graph, crew, client.hgetall(f"crawl:{{{CRAWL_ID}}}:state"))
        end = max((w.last_ack for w in crew), default=start)
        return Run(hosts, workers, fsync, sum(len(w.acked) for w in crew), end - start, cpu,
                   stats["evalsha_calls"], stats["commands"], aof_bytes(data) - aof0, problems,
                   by_command)


def check(graph: Graph, crew: list[Worker], state: dict) -> list[str]:
    """What is wrong with the crawl's result ([] when nothing): every page of the
    graph acknowledged once, at its BFS level; Redis's counts the same."""
    problems = [f"worker {w.gate.member.worker} failed: {w.error!r}" for w in crew if w.error]
    refused = sum(w.refused for w in crew)
    if refused:   # no worker is killed or stalled here: every lease should hold
        problems.append(f"{refused} acknowledgements refused (lease lost)")
    acked = [pair for w in crew for pair in w.acked]
    twice = [url for url, n in Counter(url for url, _ in acked).items() if n > 1]
    if twice:
        problems.append(f"{len(twice)} pages acknowledged more than once, e.g. {twice[0]}")
    truth = dict(zip(graph.urls, graph.levels()))
    missing = set(truth) - {url for url, _ in acked}
    if missing:
        problems.append(f"{len(missing)} pages never acknowledged, e.g. {min(missing)}")
    wrong = [(url, level) for url, level in acked if truth.get(url) != level]
    if wrong:
        problems.append(f"{len(wrong)} pages at the wrong level, e.g. {wrong[0][0]} at "
                        f"{wrong[0][1]}, BFS says {truth.get(wrong[0][0])}")
    counts = {k.decode(): int(v) for k, v in state.items()}
    if counts.get("processed") != len(graph.urls) or counts.get("next_id") != len(graph.urls):
        problems.append(f"Redis counts processed {counts.get('processed')} of "
                        f"{counts.get('next_id')} queued, the graph has {len(graph.urls)}")
    return problems


# -- output ----------------------------------------------------------------------------
def row(run: Run) -> dict:
    return {**asdict(run), "us_per_page": run.us_per_page, "capacity_pages_per_s": 1e6 / run.us_per_page,
            "pages_per_s": run.pages / run.wall_s, "redis_busy": run.redis_cpu_s / run.wall_s,
            "calls_per_page": run.per_page(run.script_calls),
            "commands_per_page": run.per_page(run.commands),
            "sadd_per_page": run.per_page(run.by_command.get("sadd", 0)),
            "aof_bytes_per_page": run.per_page(run.aof_bytes)}


def table(rows: list[dict]) -> str:
    head = ["hosts", "workers", "fsync", "pages", "Redis CPU µs/page", "capacity pages/s (10⁶ ÷ µs)",
            "script calls/page", "commands/page", "SADD/page", "AOF B/page", "pages/s", "Redis busy", "check"]
    return markdown_table(head, [
        (f"{r['hosts']:,}", str(r["workers"]), r["fsync"], f"{r['pages']:,}", f"{r['us_per_page']:,.0f}",
         f"{r['capacity_pages_per_s']:,.0f}", f"{r['calls_per_page']:.2f}", f"{r['commands_per_page']:.1f}",
         f"{r['sadd_per_page']:.1f}", f"{r['aof_bytes_per_page']:,.0f}", f"{r['pages_per_s']:,.0f}",
         f"{r['redis_busy']:.0%}",
         "ok" if not r["problems"] else "; ".join(r["problems"])) for r in rows])


def section(result: dict) -> str:
    o = result["options"]
    return "\n".join([
        SECTION_TITLE, "",
        f"`.venv/bin/python -m benchmarks.redis_replay {result['argv']}`; {result['started'][:16]} UTC, "
        f"{result['redis']}, {result['machine'].get('cpu', '')}, load average "
        f"{' '.join(result['machine'].get('load_average', []))}; raw numbers: "
        f"`benchmarks/results/redis-replay/{result['name']}.json`.", "",
        f"A graph of {o['pages']:,} pages, {o['links']} links a page, {result['new_share']:.1%} of links "
        f"new; {o['threads']} fetch threads a worker, simulated fetch {o['fetch_ms']:g} ms, "
        f"`--delay {o['delay']:g}`. Redis CPU from `INFO cpu`, calls and commands from "
        f"`INFO commandstats`, AOF from its size, over the crawl; pages/s is what this one "
        f"Python process drove (its threads share the machine's two cores with Redis), the "
        f"capacity is what one Redis core would coordinate at this cost a page; Redis busy "
        f"is its CPU seconds over the crawl's wall time. SADD/page: a link the worker sends "
        f"Redis to judge is one SADD (one more when a sync leaves its worker idle); links "
        f"a worker has seen Redis judge are not sent, and that cache is each worker's own.", "",
        table(result["rows"]), ""])


def store(result: dict, results_dir: Path, results_md: Path) -> Path:
    raw = results_dir / "redis-replay" / f"{result['name']}.json"
    raw.parent.mkdir(parents=True, exist_ok=True)
    raw.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    (results_dir / "redis-replay.md").write_text(section(result), encoding="utf-8")
    results_md.write_text(render_results(results_dir), encoding="utf-8")
    return raw


def _ints(text: str, option: str) -> list[int]:
    try:
        values = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        values = []
    if not values or min(values) < 1:
        raise click.BadParameter(f"{text!r} is not a comma-separated list of positive counts",
                                 param_hint=option)
    return values


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--pages", type=click.IntRange(min=2), default=5000, show_default=True)
@click.option("--hosts", "host_counts", default="1,1000", show_default=True, help="Comma-separated host counts.")
@click.option("--workers", "worker_counts", default="3,12,48", show_default=True,
              help="Comma-separated counts of simulated workers.")
@click.option("--fsync", "policies", default="always,everysec", show_default=True,
              help="Comma-separated appendfsync policies of Redis (always, everysec).")
@click.option("--links", type=click.IntRange(min=1), default=27, show_default=True, help="Links a page.")
@click.option("--new-share", type=click.FloatRange(0, 1), default=0.1, show_default=True,
              help="Share of a page's links that are new pages, while pages are left to hand out.")
@click.option("--threads", type=click.IntRange(min=1), default=8, show_default=True,
              help="Fetch threads a worker (the URLs it leases at once).")
@click.option("--fetch-ms", type=click.FloatRange(min=0), default=0.0, show_default=True,
              help="Simulated fetch time a page.")
@click.option("--delay", type=click.FloatRange(min=0), default=0.0, show_default=True,
              help="The crawl's politeness delay, seconds.")
@stored_options
def main(pages, host_counts, worker_counts, policies, links, new_share, threads, fetch_ms, delay, save, work,
         results_dir, results_md) -> None:
    """Redis CPU, calls, commands and AOF a page of W simulated workers sharing one crawl."""
    hosts_list, workers_list = _ints(host_counts, "--hosts"), _ints(worker_counts, "--workers")
    policies = [p.strip() for p in policies.split(",")]
    if not set(policies) <= {"always", "everysec"}:
        raise click.BadParameter(f"{','.join(policies)!r}: give always, everysec or both", param_hint="--fsync")
    started, runs, before = datetime.now(timezone.utc), [], machine()
    work = work / "redis-replay" / f"{started:%Y%m%d-%H%M%S}"
    for hosts in hosts_list:
        graph = Graph.make(pages, hosts, links, new_share)
        for fsync in policies:
            for workers in workers_list:
                run = replay(graph, hosts, workers, fsync, threads, fetch_ms / 1000, delay, work)
                click.echo(f"{hosts} hosts, {workers} workers, {fsync}: {run.us_per_page:,.0f} µs/page"
                           f"{'' if not run.problems else ' FAILED'}", err=True)
                runs.append(run)
    result = {"name": f"redis-replay-{started:%Y%m%d-%H%M%S}", "started": started.isoformat(),
              "argv": shlex.join(sys.argv[1:]), "machine": before, "redis": redis_version(),
              "options": {"pages": pages, "links": links, "new_share": new_share, "threads": threads,
                          "fetch_ms": fetch_ms, "delay": delay, "fsync": policies},
              "new_share": (pages - 1) / (pages * links), "rows": [row(r) for r in runs]}
    click.echo(table(result["rows"]))
    if save:
        click.echo(f"stored {store(result, results_dir, results_md)} and RESULTS.md", err=True)
    if any(r.problems for r in runs):
        sys.exit(1)


if __name__ == "__main__":
    main()

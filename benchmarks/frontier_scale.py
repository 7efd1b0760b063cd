"""The frontier at scale, no network: N URLs pushed and popped through the
real frontier (urllist.hosts.HostFrontier over its disk storage with the
default RAM budget, as `crawler crawl` builds it) and the real URL-seen set.

A breadth-first crawl is simulated: seeds, then each URL handed out
"links to" FANOUT new URLs (on hosts spread over HOSTS, 10^6 unless N is
small) and DUPS URLs found before (the seen-set drops them), pushed before
the URL is done, until N URLs were queued; then everything is handed out.
Readiness is a stub that is always ready: what is measured is the
frontier, not politeness. Every size runs in a fresh process, so its peak
RSS is its own.

Progress is counted in operations (a push or a pop; each URL is pushed and
popped once, 2N in all); for each tenth of them: URLs/s (operations / 2
per second), RSS and disk held. The issue's bar: N = 10^8 over 10^6 hosts
with peak RSS <= 2 GB, the last tenth's URLs/s within 1.5x of the first's.

    .venv/bin/python -m benchmarks.frontier_scale                      # 10^6 and 10^7
    .venv/bin/python -m benchmarks.frontier_scale --urls 100000000 --seen none
    .venv/bin/python -m benchmarks.frontier_scale --urls 1000000 --order opic

Stored: benchmarks/results/frontier/scale-<N>-<order>-<storage>-<seen>.json.
"""
from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from controller.config import CrawlConfig
from urlfilter import make_seen
from urllist import HostFrontier, QueuedUrl
from urllist.diskqueues import DEFAULT_RAM_BYTES, DiskQueues
from urllist.ordered import OrderedFrontier
from urllist.orders import NAMES, make_order
from urllist.storage import MemoryQueues

RESULTS = Path(__file__).parent / "results" / "frontier"
SEEDS = 100
BATCH = 64          # URLs asked of pop() at a time (the crawl loop asks --workers)
SCATTER = 2654435761  # Knuth's multiplier: consecutive URL numbers land on scattered hosts


class AlwaysReady:
    """Readiness with no politeness: every host may always start."""

    def ready_at(self, host: str) -> float:
        return 0.0

    def try_start(self, host: str, now: float) -> bool:
        return True


def host_of(url: str) -> str:
    return url[7:url.index("/", 7)]


def rss_mb() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


class Urls:
    """URL number i, always the same string: its host is i scattered over hosts."""

    def __init__(self, hosts: int) -> None:
        self.hosts = hosts
        self.made = 0

    def url(self, i: int) -> str:
        return f"http://h{i * SCATTER % self.hosts}.example/p/{i}"

    def fresh(self, count: int) -> list[str]:
        first, self.made = self.made, self.made + count
        return [self.url(i) for i in range(first, self.made)]


def build(order: str, storage: str, ram_mb: int | None, workdir: Path):
    if order == "bfs":
        ram = DEFAULT_RAM_BYTES if ram_mb is None else ram_mb << 20
        queues = DiskQueues(workdir, ram) if storage == "disk" else MemoryQueues()
        return HostFrontier(host_of, AlwaysReady(), storage=queues)
    ranked = make_order(order)
    frontier = OrderedFrontier(host_of, AlwaysReady(), ranked, 0, 0)
    ranked.bind(frontier)
    return frontier


class Tenths:
    """The run's pace, kept as it goes: a row per tenth of the 2N operations
    (a push or a pop), and a progress line on stderr per hundredth."""

    def __init__(self, n: int, frontier) -> None:
        self.n, self.frontier = n, frontier
        self.step = 2 * n // 10
        self.rows: list[dict] = []
        self.started = self.last = self.fine_wall = time.perf_counter()
        self.last_cpu = self.fine_cpu = time.process_time()
        self.mark, self.fine = self.step, self.step // 10

    def passed(self, pushed: int, popped: int) -> None:
        if pushed + popped >= self.fine:
            cpu, wall = time.process_time(), time.perf_counter()
            row = tenth_row(self.fine * 100 // (2 * self.n), wall - self.fine_wall,
                            cpu - self.fine_cpu, self.step // 10, self.frontier, pushed, popped)
            print(json.dumps({"hundredth": row.pop("tenth"), **row}), file=sys.stderr, flush=True)
            self.fine, self.fine_cpu, self.fine_wall = self.fine + self.step // 10, cpu, wall
        if pushed + popped >= self.mark:
            now, cpu = time.perf_counter(), time.process_time()
            self.rows.append(tenth_row(len(self.rows) + 1, now - self.last, cpu - self.last_cpu,
                                       self.step, self.frontier, pushed, popped))
            self.last, self.last_cpu, self.mark = now, cpu, self.mark + self.step


def simulate(n: int, hosts: int, fanout: int, dups: int, seen_name: str, order: str,
             storage: str, ram_mb: int | None, workdir: Path) -> dict:
    rng = random.Random(24)
    frontier = build(order, storage, ram_mb, workdir)
    seen = None if seen_name == "none" else make_seen(seen_name)
    urls = Urls(hosts)
    base_rss = rss_mb()
    pace = Tenths(n, frontier)
    pushed = popped = 0

    def push(found: list[str], level: int, parent: int | None) -> int:
        new = found if seen is None else [url for url in found if seen.add(url)]
        first = frontier.next_id
        items = [QueuedUrl(first + k, url, level, parent) for k, url in enumerate(new[:n - pushed])]
        frontier.push(items)
        if order != "bfs" and parent is not None:
            targets = [item.id for item in items]
            frontier.linked(parent, targets)
            frontier.order.page(QueuedUrl(parent, "", level - 1, None), targets,
                                [0.0] * len(targets), None)
        return len(items)

    pushed += push(urls.fresh(SEEDS), 0, None)
    while not frontier.exhausted():
        batch = frontier.pop(BATCH, 0.0)
        if not batch:
            raise RuntimeError("the frontier holds URLs it never hands out")
        for item in batch:
            popped += 1
            if pushed < n:
                found = urls.fresh(fanout)
                if seen is not None and dups:
                    found += [urls.url(rng.randrange(urls.made)) for _ in range(dups)]
                pushed += push(found, item.level + 1, item.id)
            frontier.fetched(item)
            frontier.done(item)
        pace.passed(pushed, popped)
    return summary(n, hosts, fanout, dups, seen_name, order, storage, ram_mb, frontier,
                   pace.rows, time.perf_counter() - pace.started, base_rss, pushed)


def tenth_row(k: int, seconds: float, cpu: float, ops: int, frontier, pushed: int,
              popped: int) -> dict:
    """One tenth of the operations: its URLs per second of wall time and of
    CPU time (the machine is shared: CPU time shows the code's own pace)."""
    stats = frontier.storage_stats() if hasattr(frontier, "storage_stats") else {}
    return {"tenth": k, "seconds": round(seconds, 2), "urls_per_s": round(ops / 2 / seconds),
            "cpu_seconds": round(cpu, 2), "urls_per_cpu_s": round(ops / 2 / cpu),
            "rss_mb": round(rss_mb(), 1), "disk_mb": round(stats.get("disk_bytes", 0) / 2**20, 1),
            "waiting": stats.get("waiting", pushed - popped), "pushed": pushed, "popped": popped}


def summary(n, hosts, fanout, dups, seen_name, order, storage, ram_mb, frontier, tenths,
            seconds, base_rss, pushed) -> dict:
    stats = frontier.storage_stats() if hasattr(frontier, "storage_stats") else {}
    peak_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    top = max(tenths, key=lambda row: row["waiting"])
    return {
        "urls": n, "pushed": pushed, "hosts": hosts, "fanout": fanout, "dups": dups,
        "seen": seen_name, "order": order, "storage": storage if order == "bfs" else "memory",
        "ram_budget_mb": (DEFAULT_RAM_BYTES >> 20 if ram_mb is None else ram_mb),
        "seconds": round(seconds, 1), "urls_per_s": round(n / seconds),
        "peak_rss_mb": round(peak_rss, 1), "base_rss_mb": round(base_rss, 1),
        "peak_disk_mb": round(stats.get("peak_disk_bytes", 0) / 2**20, 1),
        "spilled": stats.get("spilled", 0),
        "max_waiting_seen": top["waiting"],
        "rss_bytes_per_waiting_url": round((top["rss_mb"] - base_rss) * 2**20 / max(top["waiting"], 1), 1),
        "disk_bytes_per_waiting_url": round(top["disk_mb"] * 2**20 / max(top["waiting"], 1), 1),
        "last_over_first": round(tenths[-1]["urls_per_s"] / tenths[0]["urls_per_s"], 2),
        "last_over_first_cpu": round(tenths[-1]["urls_per_cpu_s"] / tenths[0]["urls_per_cpu_s"], 2),
        "cpu_seconds": round(sum(row["cpu_seconds"] for row in tenths), 1),
        "levels": list(frontier.level_flags), "tenths": tenths,
    }


def table(result: dict) -> str:
    lines = [f"N = {result['urls']:,} over {result['hosts']:,} hosts, order {result['order']}, "
             f"storage {result['storage']} (RAM budget {result['ram_budget_mb']} MB), "
             f"seen-set {result['seen']}: {result['seconds']} s, {result['urls_per_s']:,} URLs/s, "
             f"peak RSS {result['peak_rss_mb']:,} MB, peak disk {result['peak_disk_mb']:,} MB, "
             f"last/first tenth {result['last_over_first']} (CPU: {result['last_over_first_cpu']})",
             "", "| tenth | s | URLs/s | CPU s | URLs/CPU s | RSS MB | disk MB | waiting |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|"]
    lines += [f"| {r['tenth']} | {r['seconds']} | {r['urls_per_s']:,} | {r['cpu_seconds']} | "
              f"{r['urls_per_cpu_s']:,} | {r['rss_mb']:,} | {r['disk_mb']:,} | {r['waiting']:,} |"
              for r in result["tenths"]]
    return "\n".join(lines)


def one(args) -> dict:
    [n] = args.urls
    hosts = args.hosts or min(10**6, max(1, n // 10))
    with tempfile.TemporaryDirectory(prefix="frontier-scale-", dir=args.workdir) as work:
        return simulate(n, hosts, args.fanout, args.dups, args.seen, args.order,
                        args.storage, args.ram, Path(work))


def main(argv: list[str] | None = None) -> int:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--urls", type=int, action="append",
                         help="N, URLs pushed and popped (repeatable; default 10^6 and 10^7)")
    options.add_argument("--hosts", type=int, default=0, help="default: min(10^6, N/10)")
    options.add_argument("--fanout", type=int, default=10, help="new URLs per page")
    options.add_argument("--dups", type=int, default=4, help="links per page to URLs found before")
    options.add_argument("--seen", default=CrawlConfig.__dataclass_fields__["dedup"].default,
                         help="URL-seen algorithm (urlfilter.SEEN_ALGORITHMS) or none")
    options.add_argument("--order", default="bfs", choices=NAMES)
    options.add_argument("--storage", default="disk", choices=("disk", "memory"),
                         help="bfs only; the other orders keep their own RAM structures")
    options.add_argument("--ram", type=int, default=None, help="RAM budget, MB (default: the crawl's)")
    options.add_argument("--workdir", default=None, help="where the disk storage's files go")
    options.add_argument("--single", action="store_true", help=argparse.SUPPRESS)
    args = options.parse_args(argv)
    if args.single:
        print(json.dumps(one(args)))
        return 0
    RESULTS.mkdir(parents=True, exist_ok=True)
    for n in args.urls or [10**6, 10**7]:
        done = subprocess.run([sys.executable, "-m", "benchmarks.frontier_scale", "--single",
                               *child_args(args, n)], stdout=subprocess.PIPE, text=True,
                              check=False)
        if done.returncode:
            return 1
        result = json.loads(done.stdout)
        name = f"scale-{n}-{result['order']}-{result['storage']}-{result['seen']}.json"
        (RESULTS / name).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
        print(table(result), "\n", flush=True)
    return 0


def child_args(args, n: int) -> list[str]:
    """The options of one size's run, in its own process."""
    given = {"--urls": n, "--hosts": args.hosts, "--fanout": args.fanout, "--dups": args.dups,
             "--seen": args.seen, "--order": args.order, "--storage": args.storage,
             "--ram": args.ram, "--workdir": args.workdir}
    return [str(part) for option, value in given.items() if value is not None
            for part in (option, value)]


if __name__ == "__main__":
    raise SystemExit(main())

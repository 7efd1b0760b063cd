"""The URL-seen set at crawl scale (issue 24): an exact set in bounded RAM.

    .venv/bin/python -m benchmarks.seen_scale                                   # 10^6 and 10^7, every store
    .venv/bin/python -m benchmarks.seen_scale --sizes 100000000 --stores sieve  # 10^8, one store
    .venv/bin/python -m benchmarks.seen_scale --sizes 1000000 --stores set,ascii,intstring,stringhash,md5,bloom

For each store and size n, a fresh child process adds 2n URLs one at a time,
as the crawl's engine does: every second add is a URL never offered before
(n distinct URLs in all), the other a repeat of a URL drawn uniformly from
those offered so far, the hard case for a disk set (a crawl's repeats are
mostly recent, and the engine's SeenCache answers those before the set;
here every add reaches the set). URLs look like
``http://h123.example.com/d45/page-678.html`` over 10^6 hosts.

Measured per run: seconds for each tenth of the adds, wall and CPU time
(process_time: every thread of the child, so RocksDB's compactions count;
reading a block from the page cache is CPU too), the throughput in the first
and last tenth and their ratio; the CPU ratio is the one that means
something on a machine shared with other work. Peak RSS of the child (ru_maxrss,
which includes what it allocated to make URLs: the "none" store adds to
nothing and shows that floor), bytes on disk at the end, and for the
in-RAM structures their own ``bytes`` per URL (``stats()``).

Stores: the registry's (``sieve`` and the paper's algorithms), and three
embedded stores over the same 64-bit fingerprints, written here only to be
measured: RocksDB through rocksdict (bloom filter of 10 bits per key, no
write-ahead log), the same with batches of 1,000 (multi-get + WriteBatch),
SQLite in WAL mode (a WITHOUT ROWID table, INSERT OR IGNORE, one
transaction per 10,000 adds), and LMDB (put without overwrite, one
transaction per 10,000 adds). rocksdict and lmdb are not dependencies of
the crawler: `pip install rocksdict lmdb` to measure them; a store whose
module is missing is skipped.

Stored: benchmarks/results/seen-scale.json (every run) and
benchmarks/results/seen-scale.md, the section copied into RESULTS.md.
"""
from __future__ import annotations

import fcntl
import json
import os
import random
import resource
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):   # run as a file: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import click

from benchmarks.redis_seen import put_section
from benchmarks.report import git_commit, machine
from urlfilter import SEEN_ALGORITHMS, make_seen
from urlfilter.sieve import fingerprint

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
RESULTS = BENCH_DIR / "results"
SECTION_TITLE = "## URL-seen set at crawl scale: a disk sieve against embedded stores (issue 24)"
HOSTS = 1_000_000
TENTHS = 10
BATCH = 1000
COMMIT_EVERY = 10_000


def url(i: int) -> str:
    return f"http://h{i % HOSTS}.example.com/d{i % 97}/page-{i}.html"


def stream(n: int, seed: int = 24):
    """2n URLs: new ones and uniform repeats of earlier ones, alternately."""
    rng = random.Random(seed)
    for i in range(n):
        yield url(i)
        yield url(rng.randrange(i + 1))


# -- embedded stores, measured only -------------------------------------------------
class NoStore:
    """Adds to nothing: the cost and RSS of making the URLs."""
    name = "none"

    def add(self, url: str) -> bool:
        return True


class RocksSeen:
    name = "rocksdb"

    def __init__(self, directory: Path) -> None:
        from rocksdict import BlockBasedOptions, Options, Rdict, WriteOptions
        options = Options(raw_mode=True)
        table = BlockBasedOptions()
        table.set_bloom_filter(10, False)
        options.set_block_based_table_factory(table)
        self.db = Rdict(str(directory / "rocks"), options)
        writes = WriteOptions()
        writes.disable_wal = True
        self.db.set_write_options(writes)

    def add(self, url: str) -> bool:
        key = fingerprint(url).to_bytes(8, "little")
        if key in self.db:
            return False
        self.db[key] = b""
        return True

    def disk(self) -> Path:
        return Path(self.db.path())


class RocksBatchSeen(RocksSeen):
    """The same store, asked 1,000 URLs at a time (multi-get, then one WriteBatch)."""
    name = "rocksdb-batch"

    def add_many(self, urls: list[str]) -> list[bool]:
        from rocksdict import WriteBatch
        keys = [fingerprint(u).to_bytes(8, "little") for u in urls]
        found = self.db[keys]
        batch, new, fresh = WriteBatch(raw_mode=True), [], set()
        for key, value in zip(keys, found):
            is_new = value is None and key not in fresh
            if is_new:
                fresh.add(key)
                batch.put(key, b"")
            new.append(is_new)
        self.db.write(batch)
        return new


class SqliteSeen:
    name = "sqlite"

    def __init__(self, directory: Path) -> None:
        self.path = directory / "seen.sqlite"
        self.db = sqlite3.connect(self.path, isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=OFF")
        self.db.execute("CREATE TABLE seen (k INTEGER PRIMARY KEY) WITHOUT ROWID")
        self.db.execute("BEGIN")
        self.pending = 0

    def add(self, url: str) -> bool:
        key = fingerprint(url) - (1 << 63)           # SQLite integers are signed
        new = self.db.execute("INSERT OR IGNORE INTO seen VALUES (?)", (key,)).rowcount == 1
        self.pending += 1
        if self.pending >= COMMIT_EVERY:
            self.db.execute("COMMIT")
            self.db.execute("BEGIN")
            self.pending = 0
        return new

    def disk(self) -> Path:
        return self.path.parent


class LmdbSeen:
    name = "lmdb"

    def __init__(self, directory: Path) -> None:
        import lmdb
        self.path = directory / "lmdb"
        self.env = lmdb.open(str(self.path), map_size=1 << 36, sync=False, metasync=False,
                             writemap=True, readahead=False)
        self.txn = self.env.begin(write=True)
        self.pending = 0

    def add(self, url: str) -> bool:
        new = self.txn.put(fingerprint(url).to_bytes(8, "big"), b"", overwrite=False)
        self.pending += 1
        if self.pending >= COMMIT_EVERY:
            self.txn.commit()
            self.txn = self.env.begin(write=True)
            self.pending = 0
        return new

    def disk(self) -> Path:
        return self.path


EMBEDDED = {"none": NoStore, "rocksdb": RocksSeen, "rocksdb-batch": RocksBatchSeen,
            "sqlite": SqliteSeen, "lmdb": LmdbSeen}
STORES = ("sieve", "rocksdb", "rocksdb-batch", "sqlite", "lmdb")


def open_store(name: str, directory: Path, n: int):
    if name == "none":
        return NoStore()
    if name in EMBEDDED:
        return EMBEDDED[name](directory)
    return make_seen(name, capacity=n, directory=directory / "sieve")


def available(name: str) -> bool:
    module = {"rocksdb": "rocksdict", "rocksdb-batch": "rocksdict", "lmdb": "lmdb"}.get(name)
    if module is None:
        return True
    try:
        __import__(module)
    except ImportError:
        return False
    return True


# -- one run, in a child process ------------------------------------------------------
def disk_bytes(path: Path) -> int:
    """Bytes allocated on disk (LMDB's map file is sparse: its size says little)."""
    files = [path] if path.is_file() else list(path.rglob("*")) if path.exists() else []
    return sum(p.stat().st_blocks * 512 for p in files if p.is_file())


def peak_rss() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def run_child(name: str, n: int, directory: Path) -> dict:
    store = open_store(name, directory, n)
    tenth = max(1, 2 * n // TENTHS)
    seconds, cpu, news, started = [], [], 0, time.perf_counter()
    adds = stream(n)
    add_many = getattr(store, "add_many", None)
    for _ in range(TENTHS):
        start, start_cpu = time.perf_counter(), time.process_time()
        if add_many is None:
            for _, u in zip(range(tenth), adds):
                news += store.add(u)
        else:
            for _ in range(0, tenth, BATCH):
                news += sum(add_many([u for _, u in zip(range(BATCH), adds)]))
        seconds.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
        print(f"{name} {n:,}: tenth {len(seconds)}: {seconds[-1]:.1f} s wall, {cpu[-1]:.1f} s CPU, "
              f"peak RSS {peak_rss() / 2**20:,.0f} MB", file=sys.stderr, flush=True)
    stats = store.stats() if hasattr(store, "stats") else {}
    where = store.disk() if hasattr(store, "disk") else directory
    return {"store": name, "n": n, "adds": tenth * TENTHS, "new": news,
            "seconds": time.perf_counter() - started, "tenths": seconds, "cpu_tenths": cpu,
            "peak_rss": peak_rss(),
            "disk_bytes": disk_bytes(where), "structure_bytes": stats.get("bytes")}


def measure(name: str, n: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="seen-scale-", dir=RESULTS.parent / "work"
                                     if (RESULTS.parent / "work").is_dir() else None) as tmp:
        child = subprocess.run([sys.executable, "-m", "benchmarks.seen_scale", "--child", name,
                                "--sizes", str(n), "--work", tmp],
                               cwd=REPO, stdout=subprocess.PIPE, text=True)   # progress on stderr
    if child.returncode:
        raise click.ClickException(f"{name} at {n}: the child failed (exit {child.returncode})")
    return json.loads(child.stdout)


# -- tables ---------------------------------------------------------------------------
def row(run: dict) -> str:
    per_tenth = run["adds"] / TENTHS
    wall = run["tenths"][-1] / run["tenths"][0]
    first, last = per_tenth / run["cpu_tenths"][0], per_tenth / run["cpu_tenths"][-1]
    structure = (f"{run['structure_bytes'] / run['n']:.1f}" if run.get("structure_bytes") is not None
                 else "—")
    return (f"| {run['store']} | {run['n']:,} | {run['adds'] / run['seconds']:,.0f} | "
            f"{run['adds'] / sum(run['cpu_tenths']):,.0f} | {first:,.0f} | {last:,.0f} | "
            f"{first / last:.2f} | {wall:.2f} | {run['peak_rss'] / 2**20:,.0f} | "
            f"{run['disk_bytes'] / run['n']:.1f} | {structure} |")


def table(runs: list[dict]) -> str:
    head = ["| store | distinct URLs n | adds/s (wall) | adds/s (CPU) | first tenth (CPU) | "
            "last tenth (CPU) | slowdown last/first (CPU) | (wall) | peak RSS MB | disk bytes/URL | "
            "RAM bytes/URL (structure) |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    return "\n".join(head + [row(r) for r in runs])


def section(runs: list[dict], command: str) -> str:
    m = machine()
    text = [SECTION_TITLE, "",
            f"Written by runs of `.venv/bin/python -m benchmarks.seen_scale` (the last: "
            f"`{command}`; every run's raw numbers: `benchmarks/results/seen-scale.json`); "
            f"{m['cpu']}, {m['cores']} cores "
            f"shared with other work, Python {m['python']}, {m['date']}, commit "
            f"`{git_commit(REPO).get('commit', '?')}`.", "", table(runs), ""]
    conclusion = RESULTS / "seen" / "conclusion.md"   # read into seen-scale.md, not a section of its own
    if conclusion.exists():
        text += [conclusion.read_text(encoding="utf-8").rstrip(), ""]
    return "\n".join(text)


def save(runs: list[dict], command: str) -> None:
    """Add the runs to the stored ones (one writer at a time: runs of several
    sizes may go on side by side)."""
    directory = os.open(RESULTS, os.O_RDONLY)   # the lock: flock on the results directory
    try:
        fcntl.flock(directory, fcntl.LOCK_EX)
        merge_into(RESULTS / "seen-scale.json", runs, command)
    finally:
        os.close(directory)


def merge_into(stored: Path, runs: list[dict], command: str) -> None:
    old = json.loads(stored.read_text(encoding="utf-8")) if stored.exists() else []
    keep = [r for r in old if (r["store"], r["n"]) not in {(x["store"], x["n"]) for x in runs}]
    every = sorted(keep + runs, key=lambda r: (r["n"], r["store"]))
    stored.write_text(json.dumps(every, indent=1) + "\n", encoding="utf-8")
    text = section(every, command)
    (RESULTS / "seen-scale.md").write_text(text, encoding="utf-8")
    put_section(BENCH_DIR / "RESULTS.md", SECTION_TITLE, text)


@click.command()
@click.option("--sizes", default="1000000,10000000", show_default=True,
              help="Comma-separated numbers of distinct URLs (each offered twice on average).")
@click.option("--stores", default=",".join(STORES), show_default=True,
              help=f"Comma-separated: none, {', '.join(STORES)}, or a --dedup name "
                   f"({', '.join(sorted(SEEN_ALGORITHMS))}).")
@click.option("--save/--no-save", "keep", default=True, show_default=True)
@click.option("--child", default="", hidden=True)
@click.option("--work", type=click.Path(path_type=Path), default=None, hidden=True)
def main(sizes: str, stores: str, keep: bool, child: str, work: Path | None) -> None:
    counts = [int(s) for s in sizes.split(",") if s]
    if child:
        print(json.dumps(run_child(child, counts[0], work)))
        return
    names = [s for s in stores.split(",") if s]
    runs = []
    for n in counts:
        for name in names:
            if not available(name):
                click.echo(f"{name}: skipped (module missing)", err=True)
                continue
            runs.append(measure(name, n))
            click.echo(row(runs[-1]), err=True)
    click.echo(table(runs))
    if keep:
        save(runs, " ".join(sys.argv[1:]))


if __name__ == "__main__":
    main()

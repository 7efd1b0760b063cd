"""What `crawler forget` costs (issue 25): a finished crawl's keys removed from
a real redis-server with SCAN MATCH and UNLINK in batches, against the one
`KEYS crawl:{ID}:*` and UNLINK of all it lists that a simpler command
would make.

    .venv/bin/python -m benchmarks.redis_forget                         # 3 rounds, two sizes
    .venv/bin/python -m benchmarks.redis_forget --sizes 20000:200 --rounds 1 --no-save

For each size (URLs seen : hosts) and round, a fresh redis-server
(tests/redisserver.py: loopback, AOF on with appendfsync always, as the
tests run it) is filled with a crawl's key layout: the seen-set's 65,536
buckets holding the URLs' 64-bit fingerprints, queue lists holding a tenth
of the URLs, a politeness hash per host, the keys that make
it a crawl, and a second, small crawl beside it. Measured: the keys of the
crawl; the wall time of KEYS + UNLINK and of SharedCrawl.forget() (on
the same crawl filled again); the longest PING round trip another client saw
during each, and while idle for as long as forget took (how long Redis
kept everyone else waiting, and what a PING waits anyway); and that the
other crawl's keys are all left.

Stored: benchmarks/results/redis/forget.json and benchmarks/results/redis-forget.md
(report.render_results copies it into RESULTS.md).
"""
from __future__ import annotations

import json
import multiprocessing
import statistics
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

if __package__ in (None, ""):   # run as a file: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import click

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
sys.path.insert(0, str(REPO / "tests"))   # tests/redisserver.py starts the server

from benchmarks.redis_seen import heading, redis_version, store_as  # noqa: E402
from benchmarks.report import git_commit, machine  # noqa: E402
from redisserver import RedisServer  # noqa: E402
from urllist.redisqueue import SEEN_BUCKETS, SharedCrawl, fingerprint  # noqa: E402

SECTION_TITLE = "## Forgetting a shared crawl: SCAN + UNLINK in batches against KEYS (issue 25)"
FILL_PIPELINE = 5000       # commands per pipeline while filling
OTHER_HOSTS = 100          # the crawl beside it: its keys must all be left


def fill(client, crawl_id: str, urls: int, hosts: int) -> int:
    """A crawl's keys: seen buckets, per-host queues and politeness hashes,
    and the keys that make it a crawl. The number of keys."""
    p = f"crawl:{{{crawl_id}}}:"
    pipe = client.pipeline(transaction=False)
    for i in range(urls):
        bucket, member = fingerprint(f"http://h{i % hosts}.example/p/{i}").split(":")
        pipe.sadd(f"{p}seen:{bucket}", member)
        if i % 10 == 0:
            pipe.rpush(f"{p}q:1:h{i % hosts}.example", f"{i}\t1\t0\th{i % hosts}.example\t/p/{i}")
        if (i + 1) % FILL_PIPELINE == 0:
            pipe.execute()
    for h in range(hosts):
        pipe.hset(f"{p}h:h{h}.example", mapping={"fl": 0, "last": 0})
    pipe.set(p + "settings", "{}")
    pipe.hset(p + "state", mapping={"next_id": urls, "processed": urls})
    pipe.hset(p + "cfg", "lease", 60000)
    pipe.hset(p + "epoch", "w", 1)
    pipe.execute()
    return SharedCrawl(client, crawl_id).leftover()


class Pinger:
    """Another client, in a process of its own (no GIL shared with the one
    measured), pinging in a loop while something runs: its longest round
    trip is how long Redis kept everyone else waiting."""

    def __init__(self, url: str) -> None:
        self._stop = multiprocessing.Event()
        self._ready = multiprocessing.Event()
        self._longest = multiprocessing.Value("d", 0.0)
        self._process = multiprocessing.Process(target=_ping, daemon=True,
                                                args=(url, self._ready, self._stop, self._longest))

    @property
    def longest(self) -> float:
        return self._longest.value

    def __enter__(self) -> Pinger:
        self._process.start()
        self._ready.wait()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._process.join()


def _ping(url: str, ready, stop, longest) -> None:
    import redis
    client = redis.Redis.from_url(url)
    client.ping()   # connected before the measured action starts
    ready.set()
    while not stop.is_set():
        start = time.perf_counter()
        client.ping()
        longest.value = max(longest.value, time.perf_counter() - start)


def timed(url: str, action) -> tuple[float, float, object]:
    """(wall seconds of action(), longest PING meanwhile, its result)."""
    with Pinger(url) as pinger:
        start = time.perf_counter()
        result = action()
        wall = time.perf_counter() - start
    return wall, pinger.longest, result


def naive_forget(client, crawl_id: str) -> int:
    """What a simpler command would do: KEYS, then UNLINK of all it found
    (both single calls that hold Redis for the whole key space)."""
    keys = client.keys(f"crawl:{{{crawl_id}}}:*")
    client.unlink(*keys)
    return len(keys)


def run_once(urls: int, hosts: int, data_dir: Path) -> dict:
    with RedisServer(data_dir) as server:
        client = server.client()
        keys = fill(client, "big", urls, hosts)
        other = fill(client, "other", OTHER_HOSTS * 10, OTHER_HOSTS)
        keys_s, keys_ping, listed = timed(server.url, lambda: naive_forget(client, "big"))
        fill(client, "big", urls, hosts)   # the same crawl again, for forget
        crawl = SharedCrawl(client, "big")
        forget_s, forget_ping, removed = timed(server.url, crawl.forget)
        # The same time with nothing to do: how long a PING waits anyway (the
        # machine's other load, the scheduler).
        _, idle_ping, _ = timed(server.url, lambda: time.sleep(forget_s))
        left, other_left = crawl.leftover(), SharedCrawl(client, "other").leftover()
    return {"urls": urls, "hosts": hosts, "keys": keys, "keys_listed": listed,
            "keys_s": keys_s, "keys_longest_ping_s": keys_ping,
            "forget_s": forget_s, "forget_longest_ping_s": forget_ping, "removed": removed,
            "idle_longest_ping_s": idle_ping,
            "left": left, "other_keys": other, "other_left": other_left}


def summarize(runs: list[dict]) -> list[dict]:
    rows = []
    for size in sorted({(r["urls"], r["hosts"]) for r in runs}):
        mine = [r for r in runs if (r["urls"], r["hosts"]) == size]
        med = {name: statistics.median(r[name] for r in mine)
               for name in ("keys", "keys_s", "keys_longest_ping_s", "forget_s",
                            "forget_longest_ping_s", "idle_longest_ping_s")}
        rows.append({"urls": size[0], "hosts": size[1], **med,
                     "max_forget_longest_ping_s": max(r["forget_longest_ping_s"] for r in mine),
                     "all_removed": all(r["left"] == 0 and r["removed"] == r["keys"] for r in mine),
                     "other_untouched": all(r["other_left"] == r["other_keys"] for r in mine),
                     "rounds": len(mine)})
    return rows


COLUMNS = (("URLs seen", "---:"), ("hosts", "---:"), ("keys of the crawl", "---:"),
           ("forget s", "---:"), ("keys/s", "---:"),
           ("longest PING during forget ms (median / max)", "---:"),
           ("the same, idle ms", "---:"), ("KEYS + UNLINK s", "---:"),
           ("longest PING during KEYS + UNLINK ms", "---:"),
           ("all removed, other crawl untouched", ":---"))


def cells(r: dict) -> tuple[str, ...]:
    ms = lambda seconds, digits=1: f"{seconds * 1000:.{digits}f}"   # noqa: E731
    return (f"{r['urls']:,}", f"{r['hosts']:,}", f"{r['keys']:,.0f}", f"{r['forget_s']:.2f}",
            f"{r['keys'] / r['forget_s']:,.0f}",
            f"{ms(r['forget_longest_ping_s'])} / {ms(r['max_forget_longest_ping_s'])}",
            ms(r["idle_longest_ping_s"]), f"{r['keys_s']:.2f}", ms(r["keys_longest_ping_s"], 0),
            "yes" if r["all_removed"] and r["other_untouched"] else "NO")


def table(rows: list[dict]) -> str:
    line = lambda values: "| " + " | ".join(values) + " |"   # noqa: E731
    return "\n".join([line(name for name, _ in COLUMNS),
                      "|" + "|".join(align for _, align in COLUMNS) + "|",
                      *(line(cells(r)) for r in rows)])


def section(result: dict) -> str:
    s = result["settings"]
    return "\n".join([
        *heading(SECTION_TITLE, "redis_forget", "benchmarks/results/redis/forget.json", result,
                 "on (appendfsync always)"),
        f"A fresh redis-server per run, {s['rounds']} rounds, medians. The crawl: the URLs' "
        f"fingerprints in the seen-set's {SEEN_BUCKETS:,} buckets, a tenth of them queued (on "
        f"a tenth of the hosts), a politeness hash per host; beside it a crawl of "
        f"{OTHER_HOSTS} hosts. "
        f"forget is SharedCrawl.forget (SCAN MATCH, COUNT 500, UNLINK of each step's keys); "
        f"KEYS + UNLINK is what a simpler command would do (one KEYS crawl:{{ID}}:*, one "
        f"UNLINK of all it lists), on the same crawl filled again. Longest PING: the "
        f"longest round trip of another client (a process of its own) pinging in a loop "
        f"meanwhile; idle: the same for as long as forget took, with nothing running (what "
        f"the machine's other load costs a PING anyway).", "",
        table(result["rows"]), ""])


@click.command()
@click.option("--sizes", default="100000:1000,1000000:100000", show_default=True,
              help="Comma-separated URLS:HOSTS pairs.")
@click.option("--rounds", type=click.IntRange(min=1), default=3, show_default=True)
@click.option("--save/--no-save", default=True, show_default=True,
              help="Store the result and put its section into RESULTS.md.")
@click.option("--results-dir", type=click.Path(path_type=Path), default=BENCH_DIR / "results",
              show_default=True)
@click.option("--results-md", type=click.Path(path_type=Path), default=BENCH_DIR / "RESULTS.md",
              show_default=True)
def main(sizes, rounds, save, results_dir, results_md):
    """Wall time and blocking of `crawler forget` against KEYS + UNLINK."""
    pairs = [tuple(int(n) for n in pair.split(":")) for pair in sizes.split(",") if pair.strip()]
    started, where, source = datetime.now(timezone.utc), machine(), git_commit(REPO)
    runs = []
    with tempfile.TemporaryDirectory(prefix="redis-forget-") as tmp:
        for urls, hosts in pairs:
            for round_no in range(1, rounds + 1):
                runs.append({"round": round_no,
                             **run_once(urls, hosts, Path(tmp) / f"{urls}-{hosts}-{round_no}")})
                click.echo(json.dumps(runs[-1]), err=True)
    result = {"started": started.isoformat(), "machine": where, "source": source,
              "redis": redis_version(),
              "settings": {"sizes": sizes, "rounds": rounds,
                           "command": f"--sizes {sizes} --rounds {rounds}"},
              "runs": runs, "rows": summarize(runs)}
    click.echo(table(result["rows"]))
    if save:
        raw = store_as("forget", result, section(result), SECTION_TITLE, results_dir, results_md)
        click.echo(f"stored {raw} and its section in {results_md}", err=True)


if __name__ == "__main__":
    main()

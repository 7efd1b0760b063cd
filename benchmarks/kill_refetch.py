"""How many pages a killed worker costs a shared crawl: kill -9 one of three
workers at a different moment in each round, read from Redis what it held
(its lease hash), start it again with its id, and count the pages the
sites were asked for twice. The claim under test (README, "Distributed
crawling"): only what the dead worker held is fetched again, and nothing
is lost.

    .venv/bin/python -m benchmarks.kill_refetch [--rounds 8]

Prints a table and writes benchmarks/results/distributed/kill-refetch.json.
The sites are the tests' many-host loopback sites (tests/manyhosts.py).
"""
from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import click
import redis

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))   # the loopback sites and the Redis the tests use

from manyhosts import many_hosts, truth  # noqa: E402
from redisserver import RedisServer  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "distributed" / "kill-refetch.json"


def crawler(args, cwd):
    return subprocess.Popen([sys.executable, "-m", "controller", *args], cwd=cwd,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})


def rows(out: Path) -> list[str]:
    index = out / "index.csv"
    return index.read_text(encoding="utf-8").splitlines()[1:] if index.exists() else []


def one_round(roots, logs, kill_after: int, work: Path) -> dict:
    for log in logs:
        log.clear()
    with RedisServer(work / "redis") as server:
        url = server.url
        dirs = [work / f"w{k}" for k in range(3)]
        procs = [crawler(["crawl", *roots, "--redis", url, "--crawl-id", "k", "--out", str(dirs[0]),
                          "--delay", "0.2", "--max-depth", "0", "--max-pages", "0", "--quiet"], work)]
        client = redis.Redis.from_url(url)
        while not client.exists("crawl:{k}:state"):
            time.sleep(0.01)   # polling an observable condition
        victim_args = ["worker", "--redis", url, "--crawl-id", "k", "--out", str(dirs[1]), "--quiet",
                       "--worker-id", "victim"]
        victim = crawler(victim_args, work)
        procs.append(crawler(["worker", "--redis", url, "--crawl-id", "k", "--out", str(dirs[2]),
                              "--quiet"], work))
        while len(rows(dirs[1])) < kill_after and victim.poll() is None:
            time.sleep(0.005)   # polling an observable condition
        victim.send_signal(signal.SIGKILL)
        victim.wait()
        held = len(client.hkeys("crawl:{k}:lease:victim"))
        again = crawler(victim_args, work)
        for proc in procs + [again]:
            proc.wait(timeout=300)
    requests = Counter((i, r.path) for i, log in enumerate(logs) for r in log.snapshot()
                       if r.path != "/robots.txt")
    found = {line.split(",")[1] for d in dirs for line in rows(d)}
    return {"kill_after_rows": kill_after, "held_at_kill": held,
            "fetched_again": sum(n - 1 for n in requests.values() if n > 1),
            "lost": len(set(truth(roots)) - found)}


@click.command()
@click.option("--rounds", type=click.IntRange(min=1), default=8, show_default=True)
@click.option("--seed", default=14, show_default=True)
def main(rounds: int, seed: int) -> None:
    pick = random.Random(seed)
    results = []
    with many_hosts(first_address=110) as (roots, logs):
        for n in range(rounds):
            with tempfile.TemporaryDirectory() as work:
                results.append(one_round(roots, logs, pick.randint(3, 18), Path(work)))
            r = results[-1]
            print(f"round {n + 1}: killed after {r['kill_after_rows']} rows; held "
                  f"{r['held_at_kill']}, fetched again {r['fetched_again']}, lost {r['lost']}")
    print("\n| round | killed after rows | held at kill | fetched again | lost |\n|---:|---:|---:|---:|---:|")
    for n, r in enumerate(results, 1):
        print(f"| {n} | {r['kill_after_rows']} | {r['held_at_kill']} | {r['fetched_again']} | {r['lost']} |")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps({"rounds": results, "seed": seed}, indent=2) + "\n",
                       encoding="utf-8")


if __name__ == "__main__":
    main()

"""One crawl shared by N worker processes through a redis-server of its own,
as the benchmarks that set it against one machine start it
(benchmarks/distributed.py, benchmarks/polite.py): the first process
(``crawler crawl ... --redis``) creates the crawl, the others (``crawler
worker``, started with it) wait for it and join, each under GNU time in its
own session with its own --out; ``crawler merge`` makes one crawl directory
of their output.
"""
from __future__ import annotations

import functools
import os
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import redis

from benchmarks.measure import GNU_TIME, parse_time_v

CRAWL_ID = "bench"
PREFIX = f"crawl:{{{CRAWL_ID}}}:"
START_TIMEOUT_S = 60      # for the first worker to create the crawl in Redis


class StartError(Exception):
    """The first worker did not create the crawl (see its logs)."""


@dataclass
class Timed:
    """A command running under GNU time in its own session."""
    proc: subprocess.Popen
    logs: Path

    @classmethod
    def start(cls, argv: list[str], logs: Path, env: dict[str, str]) -> Timed:
        logs.mkdir(parents=True, exist_ok=True)
        with open(logs / "stdout.txt", "wb") as out, open(logs / "stderr.txt", "wb") as err:
            proc = subprocess.Popen([GNU_TIME, "-v", "-o", str(logs / "time.txt"), *argv],
                                    stdin=subprocess.DEVNULL, stdout=out, stderr=err, env=env,
                                    start_new_session=True)
        return cls(proc, logs)

    def usage(self):
        path = self.logs / "time.txt"
        return parse_time_v(path.read_text() if path.exists() else "")

    def kill(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, 9)
            self.proc.wait()


def wait_all(timed: list[Timed], deadline: float) -> bool:
    """Wait for every command; past the deadline kill them all. True if none was killed."""
    try:
        for t in timed:
            t.proc.wait(timeout=max(0.1, deadline - time.monotonic()))
        return True
    except subprocess.TimeoutExpired:
        return False
    finally:
        for t in timed:
            t.kill()


def wait_created(client: redis.Redis, first: Timed, deadline: float) -> None:
    """Until the first worker has stored the crawl (joining before that is refused)."""
    while not client.exists(PREFIX + "state"):
        if first.proc.poll() is not None or time.monotonic() > deadline:
            raise StartError(f"the first worker did not create the crawl; see {first.logs}")
        time.sleep(0.01)   # polling Redis for an observable condition, bounded by the deadline


def start_workers(first: list[str], redis_urls: list[str], client: redis.Redis, dirs: list[Path],
                  logs: Path, env: dict[str, str], own: tuple[str, ...] = ()) -> list[Timed]:
    """The first worker (first: its ``crawler crawl`` command with the seeds,
    the crawl's settings and --out dirs[0]) and one ``crawler worker`` per
    further directory; every one with --redis for each server (the crawl
    partitioned over them); `own` are every process's own options
    (--processes). All start together when the crawler knows
    --wait-for-crawl (the others wait for the crawl in Redis, so none
    starts late by a Python start-up); else the others once the crawl
    exists (in ``client``, the first server's)."""
    shared = (*(arg for url in redis_urls for arg in ("--redis", url)), "--crawl-id", CRAWL_ID)
    together = waits_for_crawl(first[0], frozen(env))
    wait = ("--wait-for-crawl", str(START_TIMEOUT_S)) if together else ()
    started = [Timed.start([*first, *shared, *own], logs / "logs-w0", env)]
    if not together:
        wait_created(client, started[0], time.monotonic() + START_TIMEOUT_S)
    return started + [Timed.start([first[0], "worker", *shared, "--out", str(d), "--quiet", *wait,
                                   *own], logs / f"logs-w{k}", env)
                      for k, d in enumerate(dirs[1:], 1)]


@functools.lru_cache(maxsize=None)
def waits_for_crawl(crawler: str, env: tuple[tuple[str, str], ...]) -> bool:
    """Whether this crawler's worker can wait for its crawl to be made (an
    older commit's cannot). Asked once a crawler: ask before a timed run."""
    shown = subprocess.run([crawler, "worker", "--help"], capture_output=True, text=True, env=dict(env),
                           timeout=60)
    return "--wait-for-crawl" in shown.stdout


def frozen(env: dict[str, str]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted(env.items()))


def merge(crawler: str, dirs: list[Path], merged: Path, env: dict[str, str],
          cwd: Path) -> subprocess.CompletedProcess:
    """The workers' output as one crawl directory, by ``crawler merge``."""
    return subprocess.run([crawler, "merge", "--out", str(merged), *map(str, dirs)],
                          capture_output=True, text=True, timeout=600, env=env, cwd=cwd)

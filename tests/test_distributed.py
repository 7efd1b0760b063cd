"""A crawl shared by worker processes through a real redis-server: the same
result as one machine, politeness across all workers (the servers' logs),
nothing lost when a worker or Redis itself is killed."""
import csv
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
import redis

from controller.config import CrawlConfig
from controller.engine import Crawl
from controller.resume import STATE_DIR
from controller.shared import WORKER_ID_FILE
from crawldir import rows_of
from manyhosts import SERVER_SIDE, SITES, many_hosts, truth
from redisserver import RedisServer, wait_created
from urllist.redisqueue import fingerprint

ROOT = Path(__file__).resolve().parent.parent
DELAY = 0.1
PAGES = sum(pages for pages, _ in SITES)


@pytest.fixture(scope="module")
def hosts():
    with many_hosts(first_address=60) as sites:
        yield sites


@pytest.fixture
def clean_logs(hosts):
    roots, logs = hosts
    for log in logs:
        log.clear()
    return roots, logs


def start(args: list[str], cwd: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "controller", *args], cwd=cwd,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})


def kill_9(proc: subprocess.Popen) -> None:
    """SIGKILL, then wait for the process, not for its pipes: a parser
    process it started may hold them open a while longer."""
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    proc.stdout.close()
    proc.stderr.close()


def first_worker(roots, redis_url, out, *extra):
    return ["crawl", *roots, "--redis", redis_url, "--crawl-id", "t", "--out", str(out),
            "--delay", str(DELAY), "--max-depth", "0", "--max-pages", "0", "--quiet", *extra]


def worker(redis_url, out, *extra):
    return ["worker", "--redis", redis_url, "--crawl-id", "t", "--out", str(out), "--quiet",
            "--processes", "1", *extra]


def finish(procs, timeout=120):
    for proc in procs:
        out, err = proc.communicate(timeout=timeout)
        assert proc.returncode == 0, err


def union_rows(dirs):
    rows = [row for d in dirs for row in rows_of(d)]
    ids = Counter(row["id"] for row in rows)
    assert not [i for i, n in ids.items() if n > 1], "a page was committed twice"
    return rows


def wait_rows(out: Path, at_least: int, procs, timeout=60):
    deadline = time.monotonic() + timeout
    while True:
        index = out / "index.csv"
        if index.exists() and index.read_bytes().count(b"\n") - 1 >= at_least:
            return
        ended = [p for p in procs if p.poll() is not None]
        assert not ended, f"a worker ended too soon: {ended[0].communicate()}"
        assert time.monotonic() < deadline
        time.sleep(0.01)   # polling an observable condition, bounded by the deadline


def wait_for(condition, procs, timeout=60):
    deadline = time.monotonic() + timeout
    while not condition():
        ended = [p for p in procs if p.poll() is not None]
        assert not ended, f"a worker ended too soon: {ended[0].args[3]} {ended[0].communicate()}"
        assert time.monotonic() < deadline
        time.sleep(0.05)   # polling an observable condition, bounded by the deadline


def page_requests(logs):
    return Counter((i, r.path) for i, log in enumerate(logs) for r in log.snapshot()
                   if r.path != "/robots.txt")


def test_three_workers_give_the_one_machine_crawl_and_stay_polite(clean_logs, tmp_path,
                                                                   redis_server):
    roots, logs = clean_logs
    single = tmp_path / "single"
    Crawl(CrawlConfig(seeds=tuple(roots), out=single, delay=DELAY, max_depth=0, max_pages=0,
                      warc=True, progress=False)).run()
    for log in logs:
        log.clear()
    dirs = [tmp_path / f"w{k}" for k in range(3)]
    # Slow enough that the workers started after the first one join while it
    # runs (a worker takes about a second to start): the first alone keeps
    # every host busy.
    delay = 3 * DELAY
    procs = [start(first_worker(roots, redis_server.url, dirs[0], "--warc", "--delay", str(delay)),
                   tmp_path)]
    wait_created(redis_server.url, procs)
    procs += [start(worker(redis_server.url, d), tmp_path) for d in dirs[1:]]
    wait_for(lambda: any((d / "index.csv").exists() and (d / "index.csv").read_bytes().count(b"\n") > 1
                         for d in dirs[1:]), procs)   # a row from a worker that joined
    during = status_of(redis_server.url)
    assert 0 < during["processed"] <= during["queue_total"] <= PAGES
    finish(procs)
    after = status_of(redis_server.url)
    assert after["finished"] and after["processed"] == PAGES and after["leased"] == 0
    assert after["workers"] == []   # each left, giving back what it held
    bucket = fingerprint(roots[0]).split(":")[0]   # the seen-set keeps the compact encoding
    assert redis.Redis.from_url(redis_server.url).object("encoding", f"crawl:{{t}}:seen:{bucket}") \
        == b"intset"
    rows = union_rows(dirs)
    assert {r["url"]: int(r["level"]) for r in rows} == truth(roots)
    assert {r["url"]: int(r["level"]) for r in rows_of(single)} == truth(roots)
    by_url = {r["url"]: r for r in rows_of(single)}
    for d in dirs:
        for row in rows_of(d):
            assert (d / row["html_path"]).read_bytes() == \
                (single / by_url[row["url"]]["html_path"]).read_bytes()
    assert all(rows_of(d) for d in dirs), "a worker got no work"
    for log in logs:   # every worker's robots.txt and pages, one host
        records = sorted(log.snapshot(), key=lambda r: r.time)
        short = [(a.path, a.client_port, b.path, b.client_port, b.time - a.time) for a, b in zip(records, records[1:])
                 if b.time - a.time < SERVER_SIDE * delay]
        assert not short, short
    assert max(page_requests(logs).values()) == 1 and len(page_requests(logs)) == PAGES
    assert [sum(r.path == "/robots.txt" for r in log.snapshot()) for log in logs] == [1] * len(logs)
    assert fetched_ahead(roots, logs), "no page of a level was requested before the one before closed"
    assert_merge_is_the_single_crawl(tmp_path, dirs, single)


def fetched_ahead(roots, logs) -> list[int]:
    """Levels L whose first page request came before the last request of
    level L-1: before L-1 could close (it closes once its last page is
    acknowledged, after that page's request), so fetched ahead of the barrier."""
    times: dict[int, list[float]] = {}
    levels = {site_and_path(roots, url): level for url, level in truth(roots).items()}
    for k, log in enumerate(logs):
        for record in log.snapshot():
            if (k, record.path) in levels:
                times.setdefault(levels[k, record.path], []).append(record.time)
    return [level for level in sorted(times)[1:] if min(times[level]) < max(times[level - 1])]


def status_of(redis_url):
    done = cli("status", "--redis", redis_url, "--crawl-id", "t", "--format", "json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def assert_merge_is_the_single_crawl(tmp_path, dirs, single):
    merged = tmp_path / "merged"
    assert cli("merge", "--out", str(merged), *map(str, dirs)).returncode == 0
    strip = lambda rows: sorted((r["url"], r["level"], r["status"], r["body_md5"]) for r in rows)
    assert strip(rows_of(merged)) == strip(rows_of(single))
    reports = [json.loads(cli("report", str(d), "--format", "json").stdout) for d in (merged, single)]
    assert [(l["urls"], l["pages"]) for l in reports[0]["levels"]] == \
        [(l["urls"], l["pages"]) for l in reports[1]["levels"]]
    indexed = [sorted(line.split()[2] for line in cli("warc-index", str(d)).stdout.splitlines()
                      if " text/html " in line) for d in (merged, single)]
    assert indexed[0] == indexed[1] and len(indexed[0]) == PAGES
    exported = [sorted(json.loads(line)["url"] for line in cli("export", str(d)).stdout.splitlines())
                for d in (merged, single)]
    assert exported[0] == exported[1]


def held_urls(redis_url: str, worker_id: str) -> set[str]:
    client = redis.Redis.from_url(redis_url)
    return {value.decode().split("\t", 4)[4]
            for value in client.hvals(f"crawl:{{t}}:lease:{worker_id}")}


def site_and_path(roots, url):
    """(index of the site's log, request path) of a URL of the test sites."""
    for k, root in enumerate(roots):
        base = root[:-len("p/0.html")]
        if url.startswith(base):
            return k, url[len(base) - 1:]
    raise ValueError(url)


def test_a_killed_worker_loses_nothing_and_only_what_it_held_is_fetched_again(
        clean_logs, tmp_path, redis_server):
    client = redis.Redis.from_url(redis_server.url)

    def committed(dirs, victim):   # pages the victim committed: rows written, or kept by Redis
        index = dirs[1] / "index.csv"
        written = index.read_bytes().count(b"\n") - 1 if index.exists() else 0
        return max(written, client.hlen(f"crawl:{{t}}:rows:{victim}")) >= 3

    held, twice = killed_and_rejoined(clean_logs, tmp_path, redis_server.url, "0.2", committed)
    print(f"held at the kill: {len(held)}, fetched again: {len(twice)}")


def killed_and_rejoined(clean_logs, tmp_path, redis_url, delay, ready):
    """Three workers; the victim killed -9 once ready(dirs, its worker id),
    then run again: the crawl is the one machine's, and only what the victim
    held (at the kill, by Redis) is requested twice. (URLs held, paths
    requested twice.) The victim is the worker that makes the crawl, so it
    works from the start however slowly the others start: the crawl cannot
    end before it is ready, since what it holds keeps the crawl open."""
    roots, logs = clean_logs
    dirs = [tmp_path / f"w{k}" for k in range(3)]
    victim = start(first_worker(roots, redis_url, dirs[1], "--delay", delay), tmp_path)
    wait_created(redis_url, [victim])
    id_file = dirs[1] / STATE_DIR / WORKER_ID_FILE
    wait_for(id_file.exists, [victim])
    victim_id = id_file.read_text(encoding="utf-8").strip()
    procs = [start(worker(redis_url, dirs[k]), tmp_path) for k in (0, 2)]
    wait_for(lambda: ready(dirs, victim_id), procs + [victim])
    kill_9(victim)
    held = held_urls(redis_url, victim_id)   # what Redis says it held when it died
    again = start(worker(redis_url, dirs[1]), tmp_path)   # its id is in its --out
    finish(procs + [again])
    rows = union_rows(dirs)
    assert {r["url"]: int(r["level"]) for r in rows} == truth(roots)
    twice = {path for path, n in page_requests(logs).items() if n > 1}
    assert twice <= {site_and_path(roots, url) for url in held}
    return held, twice


def held_ahead(redis_url: str, worker_id: str) -> set[str]:
    """URLs the worker holds of a level after the open one (fetched ahead)."""
    client = redis.Redis.from_url(redis_url)
    open_level = client.llen("crawl:{t}:flags") - 1
    entries = [value.decode().split("\t", 4)
               for value in client.hvals(f"crawl:{{t}}:lease:{worker_id}")]
    return {entry[4] for entry in entries if int(entry[1]) > open_level}


def test_a_worker_killed_holding_pages_fetched_ahead_loses_nothing(tmp_path, redis_server):
    # A page of level 1 that takes seconds to answer holds level 1 open, so
    # every worker fetches pages of level 2 ahead meanwhile, however loaded
    # the machine: the victim is sure to hold some when it is killed.
    with many_hosts(first_address=66, slow={0: {"/p/1.html": 3.0}}) as (roots, logs):
        def fetched_and_held(dirs, victim):   # a page of the next level the victim fetched and holds
            requested = set(page_requests(logs))
            return any(site_and_path(roots, url) in requested
                       for url in held_ahead(redis_server.url, victim))

        killed_and_rejoined((roots, logs), tmp_path, redis_server.url, "0.3", fetched_and_held)


def two_workers(roots, redis_url, dirs, *, lease: int, name: str, rows: int):
    """The first worker, and a second one called ``name`` once it has written ``rows`` rows."""
    procs = [start(first_worker(roots, redis_url, dirs[0], "--lease-seconds", str(lease),
                                "--delay", "0.2"), dirs[0].parent)]
    wait_created(redis_url, procs)
    second = start(worker(redis_url, dirs[1], "--worker-id", name), dirs[0].parent)
    wait_rows(dirs[1], rows, procs + [second])
    return procs, second


def test_an_expired_lease_goes_to_the_other_workers(clean_logs, tmp_path, redis_server):
    roots, logs = clean_logs
    dirs = [tmp_path / f"w{k}" for k in range(2)]
    procs, victim = two_workers(roots, redis_server.url, dirs, lease=2, name="victim", rows=5)
    kill_9(victim)
    finish(procs)   # the other worker took its URLs when the lease ran out
    # A page the victim committed in the instant before the kill has its files
    # in the victim's directory and its row in Redis, until the victim runs again.
    client = redis.Redis.from_url(redis_server.url)
    pending = {int(i) for i in client.hkeys("crawl:{t}:rows:victim")}
    rows = union_rows(dirs)
    missing = set(truth(roots)) - {r["url"] for r in rows}
    assert len(missing) == len(pending - {int(r["id"]) for r in rows})
    finish([start(worker(redis_server.url, dirs[1], "--worker-id", "victim"), tmp_path)])
    rows = union_rows(dirs)
    assert {r["url"]: int(r["level"]) for r in rows} == truth(roots)
    print(f"rows the victim wrote when it came back: {len(missing)}")


def stop_while_holding(proc, worker_id, redis_url, procs):
    """SIGSTOP proc at a moment it holds a lease, so the crawl cannot end
    without taking it for dead (a worker stopped holding nothing is not
    missed: the others may simply finish)."""
    client = redis.Redis.from_url(redis_url)
    held = lambda: client.hlen(f"crawl:{{t}}:lease:{worker_id}") > 0   # noqa: E731
    deadline = time.monotonic() + 60
    while True:
        # A lease lasts about one fetch (milliseconds): ask often, or the
        # crawl may end before one is seen (it did, polling every 50 ms).
        assert all(p.poll() is None for p in procs + [proc]), "a worker ended too soon"
        assert time.monotonic() < deadline
        if held():
            proc.send_signal(signal.SIGSTOP)
            wait_for(lambda: Path(f"/proc/{proc.pid}/stat").read_text().split()[2] == "T", procs)
            if held():
                return
            proc.send_signal(signal.SIGCONT)
        time.sleep(0.001)   # polling an observable condition, bounded by the deadline


def test_a_worker_stopped_past_its_lease_is_fenced_and_says_so(clean_logs, tmp_path,
                                                               redis_server):
    """Alive but silent past its lease (SIGSTOP): the others take its URLs;
    when it runs on, nothing it sends counts, and it stops with one line."""
    roots, logs = clean_logs
    dirs = [tmp_path / f"w{k}" for k in range(2)]
    procs, slow = two_workers(roots, redis_server.url, dirs, lease=3, name="slow", rows=3)
    stop_while_holding(slow, "slow", redis_server.url, procs)
    held = {site_and_path(roots, url) for url in held_urls(redis_server.url, "slow")}
    wait_for(lambda: "slow" not in {w["worker"] for w in status_of(redis_server.url)["workers"]},
             procs)
    resumed = time.monotonic()   # the servers' logs use this clock
    slow.send_signal(signal.SIGCONT)
    _, err = slow.communicate(timeout=60)
    ended = time.monotonic()
    assert slow.returncode == 1
    assert len(err.strip().splitlines()) == 1 and "slow was taken for dead" in err, err
    finish(procs)
    finish([start(worker(redis_server.url, dirs[1], "--worker-id", "slow"), tmp_path)])
    rows = union_rows(dirs)
    assert {r["url"]: int(r["level"]) for r in rows} == truth(roots)
    # A request the slow worker was stopped in the middle of sending leaves
    # when it runs on: fencing refuses all it does next, but cannot recall
    # that one (README, what it does not do). So per host the gaps are polite
    # but for at most one request, for a URL the slow worker held, sent while
    # it was finishing; landing between two polite requests it makes two
    # short gaps, one on each side.
    for k, log in enumerate(logs):
        records = sorted(log.snapshot(), key=lambda r: r.time)
        strays = [None] + [r for r in records
                           if (k, r.path) in held and resumed <= r.time <= ended]
        assert any(polite([r.time for r in records if r is not stray], SERVER_SIDE * 0.2)
                   for stray in strays), (k, [r.time for r in records], resumed, ended)


def polite(times: list[float], gap: float) -> bool:
    return all(b - a >= gap for a, b in zip(times, times[1:]))


def test_redis_killed_and_restarted_loses_nothing_acknowledged(clean_logs, tmp_path):
    roots, logs = clean_logs
    with RedisServer(tmp_path / "redis") as redis_server:
        dirs = [tmp_path / f"w{k}" for k in range(2)]
        procs = [start(first_worker(roots, redis_server.url, dirs[0], "--delay", "0.2"), tmp_path)]
        wait_created(redis_server.url, procs)
        procs += [start(worker(redis_server.url, dirs[1]), tmp_path)]
        wait_for(lambda: len(status_of(redis_server.url)["workers"]) == 2, procs)   # both joined
        wait_for(lambda: sum(len(rows_of(d)) for d in dirs if (d / "index.csv").exists()) >= 10,
                 procs)
        redis_server.kill()        # kill -9: only the append-only file survives
        redis_server.start()       # same port, same data directory
        finish(procs)
    rows = union_rows(dirs)
    assert {r["url"]: int(r["level"]) for r in rows} == truth(roots)


@pytest.mark.parametrize("extra, message", [
    ((), "cannot reach Redis"),
    (("--maxmemory-policy", "allkeys-lru"), "maxmemory-policy is allkeys-lru"),
    (("--appendonly", "no"), "Redis has no append-only file"),
])
def test_a_redis_that_cannot_hold_the_crawl_is_a_one_line_error(tmp_path, extra, message):
    out = tmp_path / "w"
    server = RedisServer(tmp_path / "redis", extra=extra)
    if extra:
        server.start()
        url = server.url
    else:
        url = "redis://127.0.0.1:1/0"
    try:
        done = subprocess.run([sys.executable, "-m", "controller", "crawl", "http://127.0.0.1:1/",
                               "--redis", url, "--out", str(out)], capture_output=True, text=True,
                              timeout=60, env={**os.environ, "PYTHONPATH": str(ROOT)})
    finally:
        server.stop()
    assert done.returncode == 2
    assert message in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert not out.exists()


def cli(*args):
    return subprocess.run([sys.executable, "-m", "controller", *args], capture_output=True,
                          text=True, timeout=60, env={**os.environ, "PYTHONPATH": str(ROOT)})


def test_joining_a_crawl_that_is_not_there_or_creating_one_twice(tmp_path, redis_server):
    done = cli("worker", "--redis", redis_server.url, "--crawl-id", "nope", "--out",
               str(tmp_path / "w"))
    assert done.returncode == 2 and "no such crawl in Redis" in done.stderr
    assert not (tmp_path / "w").exists()
    first = cli("crawl", "http://127.0.0.1:1/", "--redis", redis_server.url, "--crawl-id", "x",
                "--out", str(tmp_path / "a"), "--retries", "0", "--quiet")
    assert first.returncode == 1 and "every seed failed" in first.stderr
    again = cli("crawl", "http://127.0.0.1:1/", "--redis", redis_server.url, "--crawl-id", "x",
                "--out", str(tmp_path / "b"))
    assert again.returncode == 2 and "holds a crawl of that name already" in again.stderr
    assert not (tmp_path / "b").exists()


def test_a_worker_started_before_its_crawl_waits_for_it(clean_logs, tmp_path, redis_server):
    roots, _ = clean_logs
    dirs = [tmp_path / "w0", tmp_path / "w1"]
    early = start(worker(redis_server.url, dirs[1], "--wait-for-crawl", "60"), tmp_path)
    # it is looking for the crawl (connected to Redis) before the crawl is made
    wait_for(lambda: len(redis.Redis.from_url(redis_server.url).client_list()) > 1, [early])
    procs = [early, start(first_worker(roots, redis_server.url, dirs[0]), tmp_path)]
    finish(procs)
    assert len(union_rows(dirs)) == PAGES
    assert {place["worker"] for place in status_of(redis_server.url)["places"]} == {
        (d / STATE_DIR / WORKER_ID_FILE).read_text().strip() for d in dirs}
    gone = cli("worker", "--redis", redis_server.url, "--crawl-id", "nope", "--out",
               str(tmp_path / "late"), "--wait-for-crawl", "0.2")
    assert gone.returncode == 2 and "no such crawl in Redis" in gone.stderr


def test_a_worker_leases_past_its_threads_while_pages_wait_out_the_delay(clean_logs, tmp_path,
                                                                        redis_server):
    """One fetch thread, one second between a host's requests: after a host's
    robots.txt its page waits out the delay in no thread, so the worker
    leases the next host meanwhile (every host's robots.txt goes out before
    the first page), as one machine does."""
    roots, logs = clean_logs
    finish([start(first_worker(roots, redis_server.url, tmp_path / "w", "--delay", "1",
                               "--workers", "1", "--max-pages", str(len(roots))), tmp_path)])
    robots = [r.time for log in logs for r in log.snapshot() if r.path == "/robots.txt"]
    pages = [r.time for log in logs for r in log.snapshot() if r.path != "/robots.txt"]
    assert len(robots) == len(pages) == len(roots)
    assert max(robots) < min(pages)


def test_settings_come_from_redis(tmp_path, redis_server, clean_logs):
    roots, _ = clean_logs
    finish([start(first_worker(roots, redis_server.url, tmp_path / "w0", "--max-depth", "1"),
                  tmp_path)])   # alone: it does the whole crawl
    finish([start(worker(redis_server.url, tmp_path / "w1"), tmp_path)])   # joins a finished crawl
    with open(tmp_path / "w1" / "index.csv", newline="") as f:
        assert list(csv.DictReader(f)) == []   # nothing left to do: it did nothing
    assert '"max_depth": 1' in (tmp_path / "w1" / "state" / "settings.json").read_text()


def test_a_row_committed_but_not_written_is_written_when_the_worker_comes_back(
        clean_logs, tmp_path, redis_server):
    """The instant between a commit in Redis and the row on disk, made to
    happen: the row is taken off the worker's index and left in its
    write-ahead file, its commit in Redis, as a kill -9 there would leave
    them; the same worker, started again, writes it. A row in the write-ahead
    whose page Redis never took (killed before the acknowledgement) is not
    written, nor are its files kept: another worker fetches that URL again.
    The written row's page files and edges.csv lines are kept through the
    restart."""
    from controller.resume import STATE_DIR
    from controller.shared import default_worker_id
    from controller.wiring import AHEAD_FILE
    roots, _ = clean_logs
    out = tmp_path / "w0"
    finish([start(first_worker(roots, redis_server.url, out, "--max-depth", "1"), tmp_path)])
    index = out / "index.csv"
    *kept, last = index.read_bytes().splitlines(keepends=True)
    index.write_bytes(b"".join(kept))
    row = rows_of_text(last)
    never_taken = {**row, "id": 10 ** 6, "url": "http://127.0.0.1:9/never-acknowledged"}
    (out / STATE_DIR / AHEAD_FILE).write_text(
        f"{row['id']}\t{json.dumps(row)}\n{never_taken['id']}\t{json.dumps(never_taken)}\n",
        encoding="utf-8")
    html = (out / row["html_path"]).read_bytes()   # written before the commit, as a parser does
    stray = [out / "pages" / f"{never_taken['id']}.html", out / "text" / f"{never_taken['id']}.txt"]
    for path in stray:
        path.write_text("a page Redis never took", encoding="utf-8")
    client = redis.Redis.from_url(redis_server.url)
    client.hset(f"crawl:{{t}}:rows:{default_worker_id(out)}", row["id"], f"{row['new_links']}\t-1")
    finish([start(worker(redis_server.url, out), tmp_path)])
    assert index.read_bytes().splitlines(keepends=True)[-1] == last
    assert (out / row["html_path"]).read_bytes() == html   # the row's files kept for it
    edges = [line for line in (out / "edges.csv").read_text(encoding="utf-8").splitlines()
             if line.split(",", 1)[0] == str(row["id"])]
    assert len(edges) == row["out_links"] > 0   # and its links, written before the commit
    assert b"never-acknowledged" not in index.read_bytes()
    assert not any(path.exists() for path in stray)   # no file that no row points at
    assert (out / STATE_DIR / AHEAD_FILE).read_text(encoding="utf-8") == ""   # it left cleanly
    fetch = [line for line in (out / "trace.log").read_text().splitlines()
             if line.split(" ")[1:4] == ["FETCH", str(row["level"]), str(row["id"])]]
    assert len(fetch) == 2   # the first run's, and the one written with the row
    assert client.hlen(f"crawl:{{t}}:rows:{default_worker_id(out)}") == 0


def rows_of_text(line: bytes) -> dict:
    """An index.csv line as the engine's row dict is before it is written."""
    from controller.store import INDEX_COLUMNS
    row = dict(zip(INDEX_COLUMNS, next(csv.reader([line.decode("utf-8")]))))
    for name in ("id", "level", "bytes", "out_links", "new_links", "status", "text_chars",
                 "parent_id"):
        row[name] = int(row[name]) if row[name] else (None if name == "parent_id" else "")
    for name in ("elapsed_ms", "filtered_ratio"):
        row[name] = float(row[name]) if row[name] else ""
    return row


def test_max_pages_is_one_budget_for_all_workers(clean_logs, tmp_path, redis_server):
    roots, logs = clean_logs
    dirs = [tmp_path / f"w{k}" for k in range(2)]
    procs = [start(first_worker(roots, redis_server.url, dirs[0], "--max-pages", "20"), tmp_path)]
    wait_created(redis_server.url, procs)
    procs += [start(worker(redis_server.url, dirs[1]), tmp_path)]
    finish(procs)
    assert len(union_rows(dirs)) == 20
    assert sum(page_requests(logs).values()) == 20
    reasons = {json.loads((d / "stats.json").read_text())["stop_reason"] for d in dirs}
    assert reasons == {"max-pages"}


def test_without_redis_py_the_hint_is_one_line(tmp_path):
    blocker = tmp_path / "block"
    blocker.mkdir()
    (blocker / "redis.py").write_text("raise ImportError('blocked for the test')\n")
    done = subprocess.run([sys.executable, "-m", "controller", "worker", "--redis",
                           "redis://127.0.0.1:1/0", "--out", str(tmp_path / "w")],
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": f"{blocker}:{ROOT}"})
    assert done.returncode == 2 and not (tmp_path / "w").exists()
    assert done.stderr.strip().splitlines() == [
        "crawler: error: a shared crawl needs redis-py: pip install -e '.[redis]' (or: pip "
        "install redis hiredis) (see 'crawler worker --help')"]


def test_trap_limits_count_as_on_one_machine(clean_logs, tmp_path, redis_server):
    roots, _ = clean_logs
    single = tmp_path / "single"
    Crawl(CrawlConfig(seeds=tuple(roots), out=single, delay=DELAY, max_depth=0, max_pages=0,
                      max_pages_per_host=4, progress=False)).run()
    dirs = [tmp_path / f"w{k}" for k in range(2)]
    procs = [start(first_worker(roots, redis_server.url, dirs[0], "--max-pages-per-host", "4"),
                   tmp_path)]
    wait_created(redis_server.url, procs)
    procs += [start(worker(redis_server.url, dirs[1]), tmp_path)]
    finish(procs)
    assert sorted(r["url"] for r in union_rows(dirs)) == sorted(r["url"] for r in rows_of(single))
    assert len(rows_of(single)) == 4 * len(roots)   # seeds counted: four URLs a host


def test_redis_away_longer_than_the_lease_reclaims_nobody(clean_logs, tmp_path):
    roots, _ = clean_logs
    with RedisServer(tmp_path / "redis") as redis_server:
        dirs = [tmp_path / f"w{k}" for k in range(2)]
        procs = [start(first_worker(roots, redis_server.url, dirs[0], "--delay", "0.2",
                                    "--lease-seconds", "2"), tmp_path)]
        wait_created(redis_server.url, procs)
        procs += [start(worker(redis_server.url, dirs[1]), tmp_path)]
        wait_for(lambda: len(status_of(redis_server.url)["workers"]) == 2, procs)
        redis_server.kill()
        time.sleep(3)   # the fault under test: Redis away for longer than the lease
        redis_server.start()
        finish(procs)
        assert status_of(redis_server.url)["reclaimed"] == 0
    assert {r["url"]: int(r["level"]) for r in union_rows(dirs)} == truth(roots)


def test_pages_without_text_are_no_duplicates_as_on_one_machine(tmp_path, redis_server, serve):
    """Two pages with no text but different bytes: neither is a copy of the
    other, on one machine (ContentSeen) and in a shared crawl (Redis's
    verdict, asked with what the worker sends: textfilter's exact_key)."""
    pages = {"/": b"<p>root</p><a href='/e1'>1</a><a href='/e2'>2</a>",
             "/e1": b"<html><body><img src='x.png'></body></html>",
             "/e2": b"<html><body><br></body></html>"}

    def handler(request):
        return 200, {"Content-Type": "text/html"}, pages.get(request.path, b"")
    with serve(handler) as (base, _):
        single = tmp_path / "single"
        Crawl(CrawlConfig(seeds=(base,), out=single, delay=0, max_depth=1, max_pages=0,
                          progress=False)).run()
        shared = tmp_path / "w0"
        finish([start(["crawl", base, "--redis", redis_server.url, "--crawl-id", "t", "--out",
                       str(shared), "--delay", "0", "--max-depth", "1", "--max-pages", "0",
                       "--quiet", "--processes", "1"], tmp_path)])
    verdicts = [{row["url"]: row["duplicate_of"] for row in rows_of(out)} for out in (single, shared)]
    assert verdicts[0] == verdicts[1] == {base + path.lstrip("/"): "" for path in pages}

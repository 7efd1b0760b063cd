"""A shared crawl's settings and commands say what really runs: options it
would not use are refused, --redis is given once, `crawler status` names
where each worker writes, `crawler forget` removes a finished crawl's keys
(and nothing else) from a real redis-server, and a worker's summary says its
counts are its share."""
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis

from controller.config import CrawlConfig
from controller.shared import create, shared_crawl
from crawldir import rows_of
from redisserver import wait_created

ROOT = Path(__file__).resolve().parent.parent
UNREACHABLE = "redis://127.0.0.1:1/0"


def cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "controller", *args], capture_output=True,
                          text=True, timeout=120, cwd=cwd,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


def start(*args, cwd):
    return subprocess.Popen([sys.executable, "-m", "controller", *args], cwd=cwd,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})


def one_line_usage_error(done, *words):
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1, done.stderr
    assert all(word in lines[0] for word in words), lines[0]
    assert "Traceback" not in done.stderr


def keys_of(url: str, crawl_id: str) -> list[bytes]:
    client = redis.Redis.from_url(url)
    return sorted(key for key in client.scan_iter(count=1000)
                  if key.startswith(f"crawl:{{{crawl_id}}}:".encode()))


def shared_crawl_of(demo_server, url, out, crawl_id="t", *extra, cwd=None):
    return cli("crawl", demo_server.url, "--redis", url, "--crawl-id", crawl_id, "--out", str(out),
               "--delay", "0", "--max-depth", "1", "--processes", "0", *extra, cwd=cwd)


@pytest.mark.parametrize("option, value, instead", [
    ("--dedup", "sieve", "64-bit fingerprint set in Redis"),
    ("--bloom-capacity", "500", "64-bit fingerprint set in Redis"),
    ("--bloom-error", "0.01", "64-bit fingerprint set in Redis"),
    ("--seen-cache", "0", "not this option"),
    ("--frontier-ram", "16", "its queue is in Redis"),
])
def test_a_single_node_option_given_with_redis_is_refused_before_anything(tmp_path, option,
                                                                          value, instead):
    # An unreachable Redis: the refusal comes before any connection is tried.
    done = cli("crawl", "http://127.0.0.1:1/", "--redis", UNREACHABLE, option, value,
               "--out", str(tmp_path / "w"))
    one_line_usage_error(done, f"{option} does not apply to a shared crawl", instead,
                         f"leave {option} out")
    assert not (tmp_path / "w").exists()


def test_a_config_file_sets_them_only_by_a_value_other_than_the_default(tmp_path, redis_server):
    defaults = tmp_path / "defaults.toml"   # as `crawler config DIR` writes every option
    defaults.write_text('dedup = "sieve"\nseen-cache = 16384\nfrontier-ram = 256\n')
    bloom = tmp_path / "bloom.toml"
    bloom.write_text('dedup = "bloom"\n')
    refused = cli("crawl", "http://127.0.0.1:1/", "--redis", redis_server.url, "--config",
                  str(bloom), "--out", str(tmp_path / "b"))
    one_line_usage_error(refused, "--dedup does not apply to a shared crawl")
    assert keys_of(redis_server.url, "crawl") == [] and not (tmp_path / "b").exists()
    ran = cli("crawl", "http://127.0.0.1:1/", "--redis", redis_server.url, "--config",
              str(defaults), "--out", str(tmp_path / "a"), "--retries", "0", "--quiet")
    assert ran.returncode == 1 and "every seed failed" in ran.stderr, ran.stderr   # it ran


@pytest.mark.parametrize("option, value", [("--crawl-id", "x"), ("--lease-seconds", "5")])
def test_a_shared_crawl_option_without_redis_is_refused(tmp_path, option, value):
    done = cli("crawl", "http://127.0.0.1:1/", option, value, "--out", str(tmp_path / "w"))
    one_line_usage_error(done, f"{option} is for a crawl shared through Redis", "--redis")
    assert not (tmp_path / "w").exists()


@pytest.mark.parametrize("command", [
    ["crawl", "http://127.0.0.1:1/", "--out", "OUT"],
    ["worker", "--out", "OUT"],
    ["status"],
    ["forget", "--crawl-id", "t"],
])
def test_one_redis_given_twice_is_refused(tmp_path, redis_server, command):
    args = [str(tmp_path / "w") if arg == "OUT" else arg for arg in command]
    done = cli(*args, "--redis", redis_server.url, "--redis", redis_server.url)
    one_line_usage_error(done, f"--redis {redis_server.url} given twice", "each Redis server once")
    assert redis_server.client().dbsize() == 0 and not (tmp_path / "w").exists()


def test_one_redis_given_twice_is_named_without_its_password(tmp_path):
    url = "redis://:s3cret@127.0.0.1:1/0"
    done = cli("crawl", "http://127.0.0.1:1/", "--redis", url, "--redis", url,
               "--out", str(tmp_path / "w"))
    one_line_usage_error(done, "--redis redis://:PASSWORD@127.0.0.1:1/0 given twice")
    assert "s3cret" not in done.stderr


def test_a_crawl_id_with_a_brace_is_refused(tmp_path):
    done = cli("crawl", "http://127.0.0.1:1/", "--redis", UNREACHABLE, "--crawl-id", "a}:b",
               "--out", str(tmp_path / "w"))
    one_line_usage_error(done, "cannot contain { or }")


def test_stats_start_line_and_summary_say_what_runs(tmp_path, redis_server, demo_server):
    out = tmp_path / "w0"
    done = shared_crawl_of(demo_server, redis_server.url, out)
    assert done.returncode == 0, done.stderr
    stats = json.loads((out / "stats.json").read_text())
    assert stats["dedup"] == {"algorithm": "redis", "fingerprint_bits": 64}
    assert stats["shared"]["counts"] == "this worker's share of the crawl"
    assert stats["shared"]["settings_not_used"] == sorted(
        ["dedup", "bloom_capacity", "bloom_error", "seen_cache", "frontier_ram"])
    assert not (out / "state" / "seen").exists()   # no URL-seen structure of its own
    start = [line for line in done.stderr.splitlines() if "of shared crawl t at" in line]
    assert start and "URL-seen set: 64-bit fingerprints in Redis (no --dedup)" in start[0]
    assert f"at redis://127.0.0.1:{redis_server.port}/0" in start[0]
    summary = done.stdout.splitlines()
    stopped = next(line for line in summary if line.startswith("stopped: "))
    assert f"this worker's share: {len(rows_of(out))} URLs" in stopped
    assert summary[-1].startswith("shared: these counts are worker ")
    assert (f"crawler status --redis redis://127.0.0.1:{redis_server.port}/0 --crawl-id t"
            in summary[-1]) and "crawler merge" in summary[-1]
    merged = tmp_path / "merged"
    assert cli("merge", "--out", str(merged), str(out)).returncode == 0
    assert json.loads((merged / "stats.json").read_text())["dedup"]["algorithm"] == "redis"


def test_a_password_in_the_redis_url_is_not_shown(tmp_path, redis_server, demo_server):
    redis_server.client().config_set("requirepass", "s3cret")
    url = f"redis://:s3cret@127.0.0.1:{redis_server.port}/0"
    done = shared_crawl_of(demo_server, url, tmp_path / "w0")
    assert done.returncode == 0, done.stderr
    assert "s3cret" not in done.stdout + done.stderr
    assert f"redis://:PASSWORD@127.0.0.1:{redis_server.port}/0" in done.stdout
    status = cli("status", "--redis", url, "--crawl-id", "nope")
    one_line_usage_error(status, "no such crawl")
    assert "s3cret" not in status.stderr


def test_status_names_where_each_worker_writes(tmp_path, redis_server, demo_server):
    # Relative --out: what is recorded is absolute, with the worker's host name.
    first = shared_crawl_of(demo_server, redis_server.url, "w0", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    second = cli("worker", "--redis", redis_server.url, "--crawl-id", "t", "--out", "w1",
                 "--quiet", cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    assert second.stdout.splitlines()[-1].startswith("shared: these counts are worker ")
    done = cli("status", "--redis", redis_server.url, "--crawl-id", "t", "--format", "json")
    places = json.loads(done.stdout)["places"]
    ids = [(tmp_path / d / "state" / "worker-id").read_text().strip() for d in ("w0", "w1")]
    host = socket.gethostname()
    assert sorted(places, key=lambda p: p["worker"]) == sorted(
        [{"worker": ids[0], "host": host, "out": str(tmp_path / "w0"), "left": True},
         {"worker": ids[1], "host": host, "out": str(tmp_path / "w1"), "left": True}],
        key=lambda p: p["worker"])
    text = cli("status", "--redis", redis_server.url, "--crawl-id", "t").stdout
    assert f"{host}:{tmp_path / 'w0'} (left)" in text and f"{host}:{tmp_path / 'w1'} (left)" in text


def test_forget_removes_a_finished_crawl_and_nothing_else(tmp_path, redis_server, demo_server):
    url = redis_server.url
    for crawl_id, out in (("t", "w0"), ("t2", "o0"), ("t*", "g0")):   # t2, t*: t's prefix and a glob
        assert shared_crawl_of(demo_server, url, tmp_path / out, crawl_id).returncode == 0
    before = {crawl_id: keys_of(url, crawl_id) for crawl_id in ("t2", "t*")}
    removed = len(keys_of(url, "t"))
    assert removed > 50 and before["t2"] and before["t*"]
    done = cli("forget", "--redis", url, "--crawl-id", "t")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == (f"forgot crawl t at {url}: {removed:,} keys removed; the id "
                                   f"can be used again (the workers' output directories are kept)")
    assert keys_of(url, "t") == []
    assert {crawl_id: keys_of(url, crawl_id) for crawl_id in ("t2", "t*")} == before
    assert rows_of(tmp_path / "w0")   # the worker's directory is kept
    # Small batches, and a glob in the id: t*'s keys only, never t2's.
    assert shared_crawl(url, "t*").forget(batch=7) == len(before["t*"])
    assert keys_of(url, "t*") == [] and keys_of(url, "t2") == before["t2"]
    again = shared_crawl_of(demo_server, url, tmp_path / "w0-again")
    assert again.returncode == 0, again.stderr   # the id is free: the same crawl once more
    assert sorted(r["url"] for r in rows_of(tmp_path / "w0-again")) == \
        sorted(r["url"] for r in rows_of(tmp_path / "w0"))
    nothing = cli("forget", "--redis", url, "--crawl-id", "nope")
    one_line_usage_error(nothing, "no such crawl")


def test_forget_refuses_an_unfinished_crawl_unless_forced(tmp_path, redis_server):
    crawl = shared_crawl(redis_server.url, "t")
    assert create(crawl, CrawlConfig(seeds=("http://127.0.0.1:1/",), out=tmp_path / "w"))
    done = cli("forget", "--redis", redis_server.url, "--crawl-id", "t")
    one_line_usage_error(done, "unfinished (0 of 1 URLs processed)", "--force")
    assert keys_of(redis_server.url, "t")
    forced = cli("forget", "--redis", redis_server.url, "--crawl-id", "t", "--force")
    assert forced.returncode == 0, forced.stderr
    assert keys_of(redis_server.url, "t") == []


def test_forget_refuses_while_a_worker_is_live(tmp_path, redis_server, demo_server):
    """A worker at work: refused; forced, the worker is refused at its next
    call and stops with one line, and the crawl's keys are gone."""
    proc = start("crawl", demo_server.url, "--redis", redis_server.url, "--crawl-id", "t",
                 "--out", str(tmp_path / "w0"), "--delay", "0.5", "--max-depth", "2", "--quiet",
                 cwd=tmp_path)
    wait_created(redis_server.url, [proc])
    crawl = shared_crawl(redis_server.url, "t")
    end = time.monotonic() + 60
    while not (crawl.live_workers() and crawl.places()):   # until it has joined, and said where
        assert proc.poll() is None and time.monotonic() < end
        time.sleep(0.01)   # polling an observable condition, bounded by the deadline
    shown = json.loads(cli("status", "--redis", redis_server.url, "--crawl-id", "t",
                           "--format", "json").stdout)
    assert [(w["host"], w["out"]) for w in shown["workers"]] == \
        [(socket.gethostname(), str(tmp_path / "w0"))]
    done = cli("forget", "--redis", redis_server.url, "--crawl-id", "t")
    one_line_usage_error(done, f"live workers ({crawl.live_workers()[0]})", "--force")
    forced = cli("forget", "--redis", redis_server.url, "--crawl-id", "t", "--force")
    assert forced.returncode in (0, 1), forced.stderr
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 1 and len(err.strip().splitlines()) == 1, err
    assert "crawl t was removed from Redis (crawler forget --force)" in err, err
    if keys_of(redis_server.url, "t"):   # what it wrote before its next call was refused
        assert "run crawler forget again" in forced.stderr
        assert cli("forget", "--redis", redis_server.url, "--crawl-id", "t").returncode == 0
    assert keys_of(redis_server.url, "t") == []


@pytest.mark.parametrize("url, shown", [
    ("redis://:s3cret@127.0.0.1:1/0", "redis://:PASSWORD@127.0.0.1:1/0"),
    ("redis://127.0.0.1:1/0?password=s3cret", "redis://127.0.0.1:1/0?password=PASSWORD"),
])
def test_a_redis_that_cannot_be_reached_is_named_without_its_password(tmp_path, url, shown):
    done = cli("crawl", "http://127.0.0.1:1/", "--redis", url, "--out", str(tmp_path / "w"))
    one_line_usage_error(done, f"--redis {shown}: cannot reach Redis")
    assert "s3cret" not in done.stderr


def test_content_dedup_off_marks_no_duplicate_as_on_one_machine(tmp_path, redis_server,
                                                                 demo_server):
    """The demo site plants exact copies: with --content-dedup off neither
    crawl marks one, and both follow the copies' links alike."""
    single = cli("crawl", demo_server.url, "--out", str(tmp_path / "one"), "--delay", "0",
                 "--max-depth", "3", "--content-dedup", "off", "--quiet")
    assert single.returncode == 0, single.stderr
    done = shared_crawl_of(demo_server, redis_server.url, tmp_path / "w0", "t",
                           "--max-depth", "3", "--content-dedup", "off")
    assert done.returncode == 0, done.stderr
    rows = rows_of(tmp_path / "w0")
    assert [r["url"] for r in rows if r["duplicate_of"]] == []
    assert sorted((r["url"], r["level"]) for r in rows) == \
        sorted((r["url"], r["level"]) for r in rows_of(tmp_path / "one"))
    assert not redis_server.client().exists("crawl:{t}:content")

"""--delay auto, what set the pace, and recrawl's politeness options, end to
end: the crawler as a process against loopback servers whose logs say what
they were asked and when (benchmarks/struggling_site.py)."""
import json
import subprocess
import sys
from pathlib import Path

from benchmarks.struggling_site import StrugglingSite
from manyhosts import SERVER_SIDE   # the server's clock starts a request later than ours
from test_recrawl import crawler   # the crawler as a process, its exit checked

ROOT = Path(__file__).resolve().parent.parent


def gaps(log):
    times = sorted(served.at for served in log)
    return [b - a for a, b in zip(times, times[1:])]


def test_auto_on_a_struggling_server_draws_almost_no_503s(tmp_path):
    with StrugglingSite(pages=60) as site:
        crawler("crawl", site.url, "--out", str(tmp_path / "o"), "--delay", "auto", "--per-host", "4",
                "--max-depth", "0", "--max-pages", "0", "--quiet")
        log = site.log()
    assert {served.path for served in log if served.status == 200} >= site.page_paths()
    assert sum(served.status == 503 for served in log) <= 3
    assert sum(served.load == 2 for served in log) > 0    # it used the server's second slot
    pace = json.loads((tmp_path / "o" / "stats.json").read_text())["pace"]
    assert pace["policy"] == "--delay auto, 0-60 s, --per-host 4" and pace["hosts"] == 1
    assert pace["busiest"][0]["window"] in (1, 2, 3)


def test_a_crawl_delay_site_says_robots_txt_set_the_pace(tmp_path):
    out = tmp_path / "o"
    with StrugglingSite(pages=2, capacity=10, crawl_delay=2) as site:
        done = crawler("crawl", site.url, "--out", str(out), "--delay", "0")
        log = site.log()
    host = site.url.split("/")[2]
    assert [served.path for served in log] == ["/robots.txt", "/p/0.html", "/p/1.html"]
    assert min(gaps(log)) >= 2 * SERVER_SIDE
    lines = done.stderr.splitlines()
    assert lines[0].endswith("robots.txt obeyed (its Crawl-delay wins if longer)")
    assert (f"pace: robots.txt of {host} asks Crawl-delay 2 s: at most 0.5 requests/s to it"
            in lines[1:3])
    said = ("pace (--delay 0): robots.txt's Crawl-delay (2 s) for 2 requests on 1 host, "
            "the fixed delay for 1 request")   # robots.txt itself, before its Crawl-delay was known
    assert said in done.stdout.splitlines()
    pace = json.loads((out / "stats.json").read_text())["pace"]
    assert pace["governors"] == {"crawl-delay": {"hosts": 1, "requests": 2, "interval_range": [2, 2]},
                                 "delay": {"hosts": 0, "requests": 1, "interval_range": []}}
    assert pace["busiest"][0] | {"latency": 0} == {
        "host": host, "governed_by": "crawl-delay", "interval": 2, "window": 1, "latency": 0,
        "errors": 0, "crawl_delay": 2, "paced": {"delay": 1, "crawl-delay": 2}, "held_off": 0}
    report = crawler("report", str(out)).stdout
    assert "  pace        " + said.removeprefix("pace ") in report


def test_recrawl_takes_the_politeness_and_speed_options_anew(tmp_path):
    out = tmp_path / "o"
    with StrugglingSite(pages=3, base=0.05, capacity=10, shared_core=False) as site:
        crawler("crawl", site.url, "--out", str(out), "--delay", "0", "--workers", "1", "--quiet",
                "--ignore-robots")
        seen = len(site.log())
        crawler("recrawl", str(out), "--quiet", "--delay", "0.2", "--workers", "4")
        again, seen = site.log()[seen:], len(site.log())
        assert sorted(served.path for served in again) == sorted(site.page_paths())
        assert min(gaps(again)) >= 0.2 * SERVER_SIDE
        # two at once: four threads, and two requests in flight to the host
        crawler("recrawl", str(out), "--quiet", "--delay", "0", "--per-host", "2", "--workers", "4")
        again, seen = site.log()[seen:], len(site.log())
        assert max(served.load for served in again) == 2
        site.base = 0.3
        done = crawler("recrawl", str(out), "--quiet", "--delay", "0", "--timeout", "0.1")
        assert "3 pages asked again: 0 not-modified, 0 unchanged, 0 changed, 3 failed" in done.stdout
        site.base = 0.05
        done = crawler("recrawl", str(out), "--quiet", "--delay", "auto", "--max-delay", "5")
        assert "3 pages asked again: 0 not-modified, 3 unchanged, 0 changed, 0 failed" in done.stdout
    bad = crawler("recrawl", str(out), "--delay", "soon", check=False)
    assert bad.returncode == 2 and "'soon' is neither a number of seconds >= 0 nor auto" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_three_workers_on_one_struggling_host_keep_its_one_pace(tmp_path, redis_server):
    import redis
    from redisserver import wait_created
    dirs = [tmp_path / f"w{k}" for k in range(3)]
    shared = ["--redis", redis_server.url, "--crawl-id", "t", "--quiet"]
    with StrugglingSite(pages=150) as site:
        procs = [started("crawl", site.url, "--out", str(dirs[0]), "--delay", "auto", "--per-host", "4",
                         "--max-depth", "0", "--max-pages", "0", *shared)]
        wait_created(redis_server.url, procs)
        procs += [started("worker", "--out", str(d), "--processes", "1", *shared) for d in dirs[1:]]
        for proc in procs:
            assert proc.wait(timeout=240) == 0, proc.stderr.read()
        log = site.log()
    assert {served.path for served in log if served.status == 200} >= site.page_paths()
    # every worker ran the crawl to its end; which of them fetched is the leases' business (the
    # worker holding the host's window re-leases it as it gives it back, so one may do it all)
    assert all((d / "stats.json").exists() for d in dirs)
    # the one record in Redis, decided by the workers that saw the answers:
    # the server was never asked past what it can take but for a few probes
    assert sum(served.status == 503 for served in log) <= 5
    assert sum(served.load > 2 for served in log) <= 5
    host = site.url.split("/")[2]
    record = redis.Redis.from_url(redis_server.url).hgetall(f"crawl:{{t}}:h:{host}")
    assert int(record[b"pv"]) > 1 and 1 <= int(record[b"win"]) <= 4
    assert json.loads(record[b"pace"])["window"] == int(record[b"win"])


def started(*args):
    return subprocess.Popen([sys.executable, "-m", "controller", *args], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def test_bad_delay_settings_get_one_line_and_write_nothing(tmp_path):
    out = tmp_path / "o"
    for args, problem in (
            (["--delay", "fast"], "'fast' is neither a number of seconds >= 0 nor auto"),
            (["--min-delay", "2"], "--min-delay and --max-delay bound --delay auto, and this delay "
                                   "is fixed (--delay 1): give --delay auto, or drop them"),
            (["--delay", "auto", "--min-delay", "3", "--max-delay", "1"],
             "--min-delay 3 is above --max-delay 1: give a smaller --min-delay or a larger "
             "--max-delay")):
        done = crawler("crawl", "http://127.0.0.1:9/", "--out", str(out), *args, check=False)
        assert done.returncode == 2 and problem in done.stderr, done.stderr
        assert "Traceback" not in done.stderr and not out.exists()

"""SIGTERM to the whole process group of a real `crawler` (what timeout,
kill -- -PGID, systemd, docker stop, Slurm and CI cancels send): a clean
stop with exit 143 and no traceback, nothing committed that was not
really fetched and parsed, and `--resume` ends with exactly the
uninterrupted result."""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from controller.config import CrawlConfig
from controller.engine import Crawl
import bigsite
from crawldir import committed, rows_of

PAGES = 1500
TERM_AT = (150, 600, 1100)   # committed rows at which the process group gets SIGTERM


def crawler(url, out, *extra):
    return [sys.executable, "-m", "controller", "crawl", url, "--out", str(out),
            "--workers", "4", "--max-depth", "0", "--max-pages", "0", "--quiet", *extra]


def start_in_own_group(args):
    """The crawler and its parser processes in a process group of their own,
    as a shell job or a service is."""
    return subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True)


def wait_for_rows(out, proc, target, seconds=60):
    deadline = time.monotonic() + seconds
    while committed(out) < target and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)   # polling an observable condition, bounded by the deadline


def terminate_group(proc):
    """SIGTERM to the group; (exit status, stderr, signal time, seconds to exit)."""
    signalled = time.monotonic()
    os.killpg(proc.pid, signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    return proc.returncode, err.decode(), signalled, time.monotonic() - signalled


@pytest.fixture(scope="module")
def site():
    from demosite.server import serve
    with serve(bigsite.handler(PAGES)) as (base, log):
        yield base + "p/0.html", log


@pytest.fixture(scope="module")
def reference(site, tmp_path_factory):
    url, _ = site
    out = tmp_path_factory.mktemp("reference") / "out"
    Crawl(CrawlConfig(seeds=(url,), out=out, delay=0, workers=4, per_host=4, max_depth=0,
                      max_pages=0, progress=False)).run()
    return {r["url"]: int(r["level"]) for r in rows_of(out)}


def test_sigterm_to_the_group_then_resume_gives_the_uninterrupted_result(site, reference,
                                                                          tmp_path):
    url, log = site
    out = tmp_path / "out"
    for i, target in enumerate(TERM_AT):
        proc = start_in_own_group(crawler(url, out, "--delay", "0", "--per-host", "4",
                                          *(("--resume",) if i else ())))
        wait_for_rows(out, proc, target)
        assert proc.poll() is None, "the crawl ended before it could be signalled"
        status, err, _, _ = terminate_group(proc)
        assert status == 143, err
        assert "Traceback" not in err and "BrokenProcessPool" not in err, err
        assert "--resume" in err
        rows = rows_of(out)
        assert [r for r in rows if r["error"]] == [], "a stop was committed as an error row"
    done = subprocess.run(crawler(url, out, "--delay", "0", "--per-host", "4", "--resume"),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr

    rows = rows_of(out)
    urls = [r["url"] for r in rows]
    assert len(urls) == len(set(urls)) == PAGES
    assert {r["url"]: int(r["level"]) for r in rows} == reference
    assert [r for r in rows if r["error"]] == []
    for row in rows:
        number = int(row["url"].split("/")[-1][:-5])
        assert (out / row["html_path"]).read_bytes() == bigsite.page(number, PAGES)


def test_sigterm_with_a_delay_stops_within_one_request_not_workers_times_delay(site, tmp_path):
    """8 fetch threads, one host, --delay 2: seven threads hold a URL waiting
    at the host's gate. On SIGTERM they give their URLs back unrequested; the
    server sees no request start after the signal, and the URLs they held
    are fetched by --resume."""
    url, log = site
    out = tmp_path / "out"
    log.clear()
    proc = start_in_own_group(crawler(url, out, "--delay", "2", "--workers", "8"))
    wait_for_rows(out, proc, 2)
    status, err, signalled, seconds = terminate_group(proc)
    assert status == 143 and "Traceback" not in err, err
    assert seconds < 10, f"took {seconds:.1f} s from SIGTERM to exit"
    late = [r.path for r in log.snapshot() if r.time > signalled]
    assert late == [], f"requests started after SIGTERM: {late}"
    before = {r["url"] for r in rows_of(out)}
    base = urlsplit(url)._replace(path="").geturl()
    fetched = {base + r.path for r in log.snapshot() if r.path != "/robots.txt"}
    assert fetched == before, "a page was requested but not committed, or the reverse"

    resumed = start_in_own_group(crawler(url, out, "--resume", "--delay", "0", "--per-host", "4",
                                         "--max-pages", str(len(before) + 20)))
    assert resumed.wait(timeout=60) == 0, resumed.stderr.read().decode(errors="replace")
    after = rows_of(out)
    assert len(after) == len(before) + 20 and before < {r["url"] for r in after}


def test_a_dead_parser_process_leaves_its_pages_for_resume_not_error_rows(site, reference,
                                                                          tmp_path):
    """A parser process killed mid-crawl (the OOM killer, a stray kill) breaks
    the pool: the pages it held are not committed as `parse:` error rows but
    left for --resume, which ends with the uninterrupted result."""
    url, _ = site
    out = tmp_path / "out"
    config = CrawlConfig(seeds=(url,), out=out, delay=0, workers=4, per_host=4, max_depth=0,
                         max_pages=0, processes=1, progress=False)
    crawl = Crawl(config)

    def kill_a_parser(level, tally):
        if level == 2:
            for process in list(crawl.parsers._pool._processes.values()):
                os.kill(process.pid, signal.SIGKILL)

    crawl.on_level = kill_a_parser
    stats = crawl.run()
    assert stats["stop_reason"] == "parser-died"
    assert crawl.parser_failure.startswith("BrokenProcessPool")
    rows = rows_of(out)
    assert [r for r in rows if r["error"]] == [] and len(rows) < PAGES
    Crawl(config, resume=True).run()
    rows = rows_of(out)
    assert {r["url"]: int(r["level"]) for r in rows} == reference
    assert [r for r in rows if r["error"]] == []


def test_sigterm_twice_within_a_moment_is_one_clean_stop_ten_times(site, reference, tmp_path):
    """GNU timeout sends SIGTERM to the crawler and then to its group: the
    second one is the same stop, not a second Ctrl-C. Each of ten runs ends
    with 143, its stats.json and the resume hint; --resume then finishes."""
    url, _ = site
    out = tmp_path / "out"
    args = crawler(url, out, "--delay", "0", "--per-host", "4")
    for run in range(10):
        proc = start_in_own_group([*args, *(("--resume",) if run else ())])
        wait_for_rows(out, proc, committed(out) + 40)
        assert proc.poll() is None, "the crawl ended before it could be signalled"
        # Back to back, as timeout(1) sends them; how close they land is up
        # to the scheduler, and the stop must be one whatever the gap.
        os.kill(proc.pid, signal.SIGTERM)
        os.killpg(proc.pid, signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
        err = err.decode()
        assert proc.returncode == 143, err
        assert "Traceback" not in err and "aborted" not in err, err
        assert "--resume" in err
        stats = json.loads((out / "stats.json").read_text())
        assert stats["stop_reason"] == "terminated"
        assert stats["urls"] == len(rows_of(out))   # written by this run, not left by the last
    done = subprocess.run([*args, "--resume"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert {r["url"]: int(r["level"]) for r in rows_of(out)} == reference


def test_sighup_stops_cleanly_with_129_and_resume_finishes(site, reference, tmp_path):
    url, _ = site
    out = tmp_path / "out"
    args = crawler(url, out, "--delay", "0", "--per-host", "4")
    proc = start_in_own_group(args)
    wait_for_rows(out, proc, 200)
    os.killpg(proc.pid, signal.SIGHUP)
    _, err = proc.communicate(timeout=60)
    err = err.decode()
    assert proc.returncode == 129, err
    assert "Traceback" not in err and "--resume" in err
    stats = json.loads((out / "stats.json").read_text())
    assert stats["stop_reason"] == "hangup" and stats["urls"] == len(rows_of(out)) < PAGES
    trace = (out / "trace.log").read_text()
    assert trace.endswith("\n") and " END " in trace.splitlines()[-1]
    done = subprocess.run([*args, "--resume"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert {r["url"]: int(r["level"]) for r in rows_of(out)} == reference


def test_a_closed_terminal_drops_the_progress_and_the_crawl_stops_cleanly(site, tmp_path):
    """The crawler draws its live line on a terminal; the terminal goes away
    (its master side closed: writes to it fail with EIO) and SIGHUP follows,
    as when a terminal window is closed. The crawl stops as for SIGTERM."""
    import pty
    url, _ = site
    out = tmp_path / "out"
    master, slave = pty.openpty()
    args = [arg for arg in crawler(url, out, "--delay", "0", "--per-host", "4") if arg != "--quiet"]
    proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=slave, stderr=slave,
                            start_new_session=True)
    os.close(slave)
    try:
        wait_for_rows(out, proc, 200)
        assert proc.poll() is None, "the crawl ended before the terminal closed"
    finally:
        os.close(master)
    at_close = committed(out)
    wait_for_rows(out, proc, at_close + 100)   # it draws on the hung-up terminal meanwhile
    os.killpg(proc.pid, signal.SIGHUP)
    assert proc.wait(timeout=60) == 129
    stats = json.loads((out / "stats.json").read_text())
    assert stats["stop_reason"] == "hangup" and stats["urls"] == len(rows_of(out)) >= at_close + 100


def test_under_nohup_sighup_is_ignored_and_the_crawl_finishes(site, reference, tmp_path):
    url, _ = site
    out = tmp_path / "out"
    proc = subprocess.Popen(["nohup", *crawler(url, out, "--delay", "0", "--per-host", "4")],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True, cwd=tmp_path)
    wait_for_rows(out, proc, 200)
    os.killpg(proc.pid, signal.SIGHUP)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err.decode()
    assert {r["url"]: int(r["level"]) for r in rows_of(out)} == reference


STARTPOINT = str(Path(__file__).resolve().parent / "startpoint.py")


@pytest.mark.parametrize("point", ["import", "import-callback", "config", "spawn"])
def test_ctrl_c_during_start_up_is_one_line_and_130_never_a_traceback(site, tmp_path, point):
    """Ctrl-C (SIGINT to the process group) while the modules load (also
    where Python would forget a KeyboardInterrupt), before the signal
    handlers exist, and while the parser processes start Python."""
    url, _ = site
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, STARTPOINT, point, *crawler(url, out)[3:],
                             "--processes", "2"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    _, err = proc.communicate(timeout=60)
    err = err.decode()
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "Error" not in err, err
    if point == "spawn":   # the handlers exist by then: a clean stop
        assert json.loads((out / "stats.json").read_text())["stop_reason"] == "interrupted"
    else:
        assert err.strip() == "crawler: aborted"

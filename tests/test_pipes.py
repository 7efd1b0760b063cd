"""A reader that stops reading: `crawler crawl URL | head -1`, a pager quit
early, `crawler export DIR | head -1`. Real pipes, closed by the reading
end: the crawl goes on to its end and its own exit status, and a command
that only prints ends quietly with status 0, as `head` expects of a writer."""
import json
import signal
import subprocess
import sys
import time

import pytest

from controller.config import CrawlConfig
from controller.engine import Crawl
import bigsite
from crawldir import committed, rows_of

PAGES = 1000
PIPE_BUFFER = 1 << 16   # what a pipe holds on Linux before the writer waits


@pytest.fixture(scope="module")
def site():
    from demosite.server import serve
    with serve(bigsite.handler(PAGES)) as (base, _):
        yield base + "p/0.html"


@pytest.fixture(scope="module")
def crawl_dir(site, tmp_path_factory):
    out = tmp_path_factory.mktemp("crawl") / "out"
    Crawl(CrawlConfig(seeds=(site,), out=out, delay=0, workers=4, per_host=4, max_depth=0,
                      max_pages=0, warc=True, progress=False)).run()
    return out


def crawler(*args, **popen):
    return subprocess.Popen([sys.executable, "-m", "controller", *args], **popen)


def crawl_args(site, out):
    return ["crawl", site, "--out", str(out), "--max-depth", "0", "--max-pages", "0",
            "--delay", "0", "--per-host", "4", "--workers", "4"]


def test_a_crawl_whose_stdout_reader_left_completes_with_its_own_status(site, tmp_path):
    """`crawler crawl URL | head -1`: the table and summary at the end meet a closed pipe."""
    out = tmp_path / "out"
    proc = crawler(*crawl_args(site, out), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 0, err
    assert "Traceback" not in err and "Broken pipe" not in err, err
    assert json.loads((out / "stats.json").read_text())["stop_reason"] == "queue-empty"
    assert len(rows_of(out)) == PAGES


def test_a_crawl_whose_progress_reader_left_completes(site, tmp_path):
    """`crawler crawl URL 2>&1 | head -1`: every progress line after the first
    meets a closed pipe; the crawl fetches every page and writes stats.json."""
    out = tmp_path / "out"
    proc = crawler(*crawl_args(site, out), stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert proc.stdout.readline().startswith(b"crawling with ")
    proc.stdout.close()
    assert proc.wait(timeout=120) == 0
    assert json.loads((out / "stats.json").read_text())["stop_reason"] == "queue-empty"
    assert len(rows_of(out)) == PAGES


def test_a_crawl_stopped_after_its_reader_left_still_exits_143(site, tmp_path):
    """The "stopping" line, the summary and the resume hint all meet the
    closed pipe: the exit status still tells how the crawl ended."""
    out = tmp_path / "out"
    proc = crawler(*crawl_args(site, out), stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    proc.stdout.readline()
    proc.stdout.close()
    deadline = time.monotonic() + 60
    while committed(out) < 20 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)   # polling an observable condition, bounded by the deadline
    assert proc.poll() is None, "the crawl ended before it could be signalled"
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) == 143
    stats = json.loads((out / "stats.json").read_text())
    assert stats["stop_reason"] == "terminated" and stats["urls"] == len(rows_of(out)) < PAGES


READERS = [["report"], ["report", "--format", "markdown"], ["report", "--format", "json"],
           ["report", "--format", "html"], ["export"], ["warc-index"], ["config"]]


@pytest.mark.parametrize("command", READERS, ids=" ".join)
def test_a_reader_command_whose_reader_left_first_ends_quietly_with_0(crawl_dir, command):
    """The pipe is closed before the command writes its first line."""
    proc = crawler(command[0], str(crawl_dir), *command[1:], stdout=subprocess.PIPE,
                   stderr=subprocess.PIPE)
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 0, err
    assert err == ""


@pytest.mark.parametrize("command", [["export"], ["warc-index"], ["report", "--format", "html"]],
                         ids=" ".join)
def test_a_reader_command_read_for_one_line_ends_quietly_with_0(crawl_dir, command):
    """`crawler export DIR | head -1`: more than a pipe holds, read for one line."""
    args = [command[0], str(crawl_dir), *command[1:]]
    whole = subprocess.run([sys.executable, "-m", "controller", *args], capture_output=True,
                           timeout=60)
    assert whole.returncode == 0 and len(whole.stdout) > 2 * PIPE_BUFFER
    proc = crawler(*args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0)
    # unbuffered: readline takes the first line and no more, as head -1 does
    assert proc.stdout.readline() == whole.stdout.splitlines(keepends=True)[0]
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 0, err
    assert err == ""


def test_a_full_disk_behind_stdout_is_still_an_error(crawl_dir):
    """Only a reader that left is quiet: /dev/full (every write: no space) is not."""
    with open("/dev/full", "wb") as full:
        done = subprocess.run([sys.executable, "-m", "controller", "export", str(crawl_dir)],
                              stdout=full, stderr=subprocess.PIPE, timeout=60)
    assert done.returncode != 0

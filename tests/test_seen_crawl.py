"""The default URL-seen set (the disk sieve) in real crawls: spilled to
state/seen/ while the crawl runs, gone when it ends, and rebuilt, not
trusted, after a SIGKILL: the resumed crawl gets the uninterrupted pages
at the same levels."""
import csv
import signal
import subprocess
import sys
from pathlib import Path

import pytest

import bigsite
from crawldir import wait_for_rows
from controller.config import CrawlConfig
from controller.engine import Crawl

PAGES = 600
KILL_AT = (150, 400)   # committed rows at which the crawl is killed
SMALL_SIEVE = Path(__file__).resolve().parent / "smallsieve.py"


@pytest.fixture(scope="module")
def site():
    from demosite.server import serve
    with serve(bigsite.handler(PAGES)) as (base, _log):
        yield base + "p/0.html"


def rows_of(out):
    """(url, level) of every committed row, sorted: a URL fetched twice shows twice."""
    with open(out / "index.csv", newline="", encoding="utf-8") as f:
        return sorted((r["url"], int(r["level"])) for r in csv.DictReader(f) if r.get("title") is not None)


def small_sieve_crawl(url, out, *extra):
    return [sys.executable, str(SMALL_SIEVE), "crawl", url, "--out", str(out), "--delay", "0",
            "--workers", "4", "--per-host", "4", "--max-depth", "0", "--seen-cache", "0", "--quiet",
            *extra]


def test_default_dedup_is_the_sieve_and_leaves_no_file(site, tmp_path):
    out = tmp_path / "out"
    crawl = Crawl(CrawlConfig(seeds=(site,), out=out, delay=0, workers=4, per_host=4,
                              max_depth=0, progress=False))
    crawl.run()
    assert crawl.seen.name == "sieve"
    assert len(rows_of(out)) == PAGES
    del crawl
    assert not (out / "state" / "seen").exists()


def test_a_spilled_sieve_killed_and_rebuilt_gives_the_uninterrupted_crawl(site, tmp_path):
    reference = tmp_path / "reference"
    Crawl(CrawlConfig(seeds=(site,), out=reference, delay=0, workers=4, per_host=4,
                      max_depth=0, dedup="set", progress=False)).run()
    out = tmp_path / "out"
    for i, target in enumerate(KILL_AT):
        proc = subprocess.Popen(small_sieve_crawl(site, out, *(("--resume",) if i else ())),
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        wait_for_rows(out, proc, target)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        assert list((out / "state" / "seen").glob("keys.*")), "the killed crawl's sieve was on disk"
    done = subprocess.run(small_sieve_crawl(site, out, "--resume"), capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert rows_of(out) == rows_of(reference)
    assert not (out / "state" / "seen").exists()

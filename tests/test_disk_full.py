"""A full disk is this machine's failure, never a page's: on a real small
file system (a tmpfs the test mounts) a 1,000-page crawl stops with one line
and exit 3, records no page with a local error, and --resume after more
space gives the uninterrupted crawl's URLs, levels and bytes.

Mounting needs root (CI runs the tests as root); elsewhere these tests are
skipped and say why."""
import csv
import errno
import os
import shutil
import subprocess
import sys
import uuid

import pytest
from warcio.archiveiterator import ArchiveIterator

import bigsite

PAGES = 1000
CRAWLER = [sys.executable, "-m", "controller"]
# Sizes at which the disk fills at different points of the crawl, with and
# without a WARC (which grows fastest): the file that meets the full disk
# varies from run to run, which is the point.
SIZES = [("1200k", False), ("2600k", False), ("1m", True), ("2m", True), ("5m", True)]
ROOMY = "64m"   # after the user "frees some": room for the whole crawl
LOCAL_ERRORS = ("OSError", "No space", "Errno", "parse:")


def _can_mount() -> str:
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return "mounts a tmpfs, which needs root (CI runs the tests as root)"
    if shutil.which("mount") is None:
        return "no mount command"
    return ""


pytestmark = pytest.mark.skipif(bool(_can_mount()), reason=_can_mount() or "-")


@pytest.fixture
def tmpfs(tmp_path):
    """A mounted tmpfs (size set by the test), unmounted in teardown."""
    where = tmp_path / "disk"
    where.mkdir()
    mounted = []

    def mount(size: str):
        subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", f"crawltest-{uuid.uuid4().hex[:8]}",
                        str(where)], check=True)
        mounted.append(where)
        return where

    yield mount
    for path in mounted:
        subprocess.run(["umount", str(path)], check=False)


def remount(where, size: str) -> None:
    subprocess.run(["mount", "-o", f"remount,size={size}", str(where)], check=True)


@pytest.fixture(scope="module")
def site():
    from demosite.server import serve
    with serve(bigsite.handler(PAGES)) as (base, log):
        yield base + "p/0.html"


def crawl_args(url, out, *extra):
    return [*CRAWLER, "crawl", url, "--out", str(out), "--delay", "0", "--workers", "4",
            "--per-host", "4", "--max-depth", "0", "--max-pages", "0", "--quiet", *extra]


def result_of(out) -> dict:
    """url -> (level, the bytes of its saved page) for every row of index.csv."""
    with open(out / "index.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    return {row["url"]: (int(row["level"]), (out / row["html_path"]).read_bytes()
                         if row["html_path"] else None, row["error"]) for row in rows}


@pytest.fixture(scope="module")
def reference(site, tmp_path_factory):
    """The uninterrupted crawl, on a disk with room, shared by every size."""
    out = tmp_path_factory.mktemp("reference") / "out"
    done = subprocess.run(crawl_args(site, out), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    result = result_of(out)
    assert len(result) == PAGES
    return result


@pytest.mark.parametrize("size,warc", SIZES, ids=[f"{s}{'-warc' if w else ''}" for s, w in SIZES])
def test_a_full_disk_stops_the_crawl_and_resume_finishes_it(site, reference, tmpfs, size, warc):
    disk = tmpfs(size)
    out = disk / "crawl"
    extra = ("--warc",) if warc else ()
    full = subprocess.run(crawl_args(site, out, *extra), capture_output=True, text=True, timeout=300)

    assert full.returncode == 3, full.stderr
    lines = full.stderr.splitlines()
    assert len(lines) == 1 and "Traceback" not in full.stderr, full.stderr
    assert lines[0].startswith(f"crawler: error: no space left on device in {out}"), lines[0]
    assert lines[0].endswith(f"then crawler crawl --out {out} --resume"), lines[0]
    assert not list(out.glob("*.tmp")), "a temporary file was left on the full disk"
    stopped = result_of(out)
    assert 0 < len(stopped) < PAGES
    assert not [url for url, (_, _, error) in stopped.items()
                if any(mark in error for mark in LOCAL_ERRORS)], "a local failure became a page's error"

    remount(disk, ROOMY)
    done = subprocess.run(crawl_args(site, out, *extra, "--resume"), capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert result_of(out) == reference
    if warc:
        assert warc_page_ids(out / "crawl.warc.gz") == index_ids(out)


def index_ids(out) -> set[int]:
    with open(out / "index.csv", newline="", encoding="utf-8") as f:
        return {int(row["id"]) for row in csv.DictReader(f)}


def warc_page_ids(path) -> set[int]:
    """Page ids of the response records (every record readable: no torn one left)."""
    ids = set()
    with open(path, "rb") as f:
        for record in ArchiveIterator(f):
            if record.rec_type == "response":
                ids.add(int(record.rec_headers.get_header("WARC-Crawler-Page-Id")))
    return ids


def test_a_record_the_disk_has_no_room_for_is_not_on_disk_at_all(tmpfs):
    """WholeWrites: a failed record is cut off again, so the file ends with
    the last whole record, and nothing of it is written later."""
    from urllist.journal import WholeWrites
    disk = tmpfs("64k")
    log = WholeWrites(disk / "log.txt")
    log.write("first line\n")
    with pytest.raises(OSError) as failed:
        log.write("x" * 200_000 + "\n")
    assert failed.value.errno == errno.ENOSPC and failed.value.filename == str(disk / "log.txt")
    log.close()
    assert (disk / "log.txt").read_bytes() == b"first line\n"


def test_export_to_a_full_disk_is_one_line_and_exit_2(site, reference, tmpfs, tmp_path):
    crawl = tmp_path / "crawl"
    done = subprocess.run(crawl_args(site, crawl, "--max-pages", "300"), capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    disk = tmpfs("64k")
    for command in (["export", str(crawl), "--out", str(disk / "pages.jsonl")],
                    ["report", str(crawl), "--plot", str(disk / "crawl.png")]):
        failed = subprocess.run([*CRAWLER, *command], capture_output=True, text=True, timeout=120)
        assert failed.returncode == 2, failed.stderr
        assert len(failed.stderr.splitlines()) == 1 and "Traceback" not in failed.stderr, failed.stderr
        assert "no space left on device" in failed.stderr
        assert not [p.name for p in disk.iterdir()], "a partial file was left behind"

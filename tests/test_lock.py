"""One crawl per directory: a second crawl, --resume, --overwrite or demo into a
directory being crawled is refused (exit 2, one line naming the process)
before it sends a request or changes a file; the kernel frees the lock of a
killed crawl at once; `crawler report` tells a running crawl from a killed one."""
import os
import signal
import subprocess
import sys
import time

import pytest

import bigsite
from crawldir import committed, rows_of
from controller.config import CrawlConfig
from controller.lock import CrawlLock, holder
from controller.resume import lock_path, prepare_out_dir
from controller.store import OutputError
from demosite.server import serve

PAGES = 400
SECOND_AGENT = "second-crawler/1.0"


def snapshot(out):
    """Every file and folder under out, with each file's bytes and modification
    time (a rewrite with the same bytes shows too)."""
    return {str(path.relative_to(out)): (path.read_bytes(), path.stat().st_mtime_ns)
            if path.is_file() else "folder" for path in sorted(out.rglob("*"))}


def crawler(*args):
    return [sys.executable, "-m", "controller", *args]


def start_crawl(url, out, *extra):
    """A real crawl, slow on purpose (--delay), in its own process group."""
    return subprocess.Popen(crawler("crawl", url, "--out", str(out), "--max-depth", "0",
                                    "--quiet", *extra),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)


def wait_for_rows(proc, out, n):
    deadline = time.monotonic() + 60
    while committed(out) < n and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)   # polling an observable condition, bounded by the deadline
    assert committed(out) >= n, proc.stderr.read() if proc.poll() is not None else "too slow"


def run(*args):
    return subprocess.run(crawler(*args), capture_output=True, text=True, timeout=120)


def assert_refused(done, out, pid):
    """Exit 2 and one error line naming the process."""
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    error = done.stderr.splitlines()[-1]
    assert (error.startswith(f"crawler: error: {out} is being crawled by process {pid} (started ")
            and f"wait for it or stop it (kill {pid}), then --resume" in error)


@pytest.fixture(scope="module")
def site():
    with serve(bigsite.handler(PAGES)) as (base, log):
        yield base + "p/0.html", log


@pytest.fixture
def config_of(tmp_path):
    def make(**settings):
        return CrawlConfig(**{"seeds": ("http://127.0.0.1:9/",), "out": tmp_path / "out",
                              "progress": False, **settings})
    return make


# -- real processes ---------------------------------------------------------------
def test_a_second_crawl_of_a_directory_being_crawled_is_refused_and_changes_nothing(site, tmp_path):
    url, log = site
    out = tmp_path / "out"
    first = start_crawl(url, out, "--delay", "0.1", "--max-pages", "30")
    try:
        wait_for_rows(first, out, 3)
        os.killpg(first.pid, signal.SIGSTOP)   # nothing of the first crawl writes now
        before = snapshot(out)
        resume = run("crawl", "--out", str(out), "--resume", "--user-agent", SECOND_AGENT)
        overwrite = run("crawl", url, "--out", str(out), "--overwrite", "--delay", "0",
                        "--user-agent", SECOND_AGENT)
        demo = run("demo", "--out", str(out), "--quiet")
        report = run("report", str(out))
        after = snapshot(out)
        os.killpg(first.pid, signal.SIGCONT)
        assert first.wait(timeout=120) == 0, first.stderr.read()
    finally:
        if first.poll() is None:
            os.killpg(first.pid, signal.SIGKILL)
    assert_refused(resume, out, first.pid)
    assert_refused(overwrite, out, first.pid)
    assert_refused(demo, out, first.pid)   # before its demo server starts
    assert after == before, "the refused commands changed the crawl's files"
    assert not [r for r in log.snapshot() if r.headers.get("user-agent") == SECOND_AGENT]
    assert report.returncode == 0 and f"PARTIAL: running (pid {first.pid})" in report.stdout
    assert len(rows_of(out)) == 30
    finished = run("report", str(out))
    assert "finished: max-pages" in finished.stdout and "running" not in finished.stdout

    again = run("crawl", "--out", str(out), "--resume", "--max-pages", "40", "--delay", "0",
                "--quiet")
    assert again.returncode == 0, again.stderr
    urls = [row["url"] for row in rows_of(out)]
    assert len(urls) == 40 == len(set(urls))


def test_a_killed_crawls_lock_is_free_at_once(site, tmp_path):
    url, _ = site
    out = tmp_path / "out"
    proc = start_crawl(url, out, "--delay", "0.05", "--max-pages", "0", "--processes", "1")
    try:
        wait_for_rows(proc, out, 3)
        assert holder(lock_path(out)).pid == proc.pid
        proc.send_signal(signal.SIGKILL)   # the Controller process only; its parser lives on a moment
        proc.wait()
        assert holder(lock_path(out)) is None
        lock = CrawlLock.take(lock_path(out), create=False)   # no waiting, no clean-up
        lock.release()
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
    report = run("report", str(out))
    assert "PARTIAL: killed before it finished" in report.stdout
    again = run("crawl", "--out", str(out), "--resume", "--max-pages", "20", "--delay", "0",
                "--quiet")
    assert again.returncode == 0, again.stderr
    assert len({row["url"] for row in rows_of(out)}) == len(rows_of(out)) == 20


# -- prepare_out_dir in this process ----------------------------------------------
def test_prepare_out_dir_returns_the_lock_held_until_released(config_of):
    config = config_of()
    lock = prepare_out_dir(config, resume=False, overwrite=False)
    assert holder(lock_path(config.out)).pid == os.getpid()
    assert holder(lock_path(config.out)).started.endswith("Z")
    lock.release()
    lock.release()   # a second release does nothing
    assert holder(lock_path(config.out)) is None
    assert [p.relative_to(config.out).as_posix() for p in config.out.rglob("*")] == \
        ["state", "state/lock"]


@pytest.mark.parametrize("resume, overwrite", [(True, False), (False, True), (False, False)])
def test_a_locked_directory_is_refused_before_anything_in_it_changes(config_of, resume, overwrite):
    config = config_of()
    prepare_out_dir(config, resume=False, overwrite=False).release()
    (config.out / "state" / "settings.json").write_text("{}")
    (config.out / "index.csv").write_text("id\n")
    running = CrawlLock.take(lock_path(config.out), create=False)   # as another crawl would
    before = snapshot(config.out)
    try:
        with pytest.raises(OutputError, match=rf"is being crawled by process {os.getpid()} "
                                              rf"\(started .*Z\); wait for it or stop it "
                                              rf"\(kill {os.getpid()}\), then --resume"):
            prepare_out_dir(config, resume=resume, overwrite=overwrite)
        assert snapshot(config.out) == before
    finally:
        running.release()


def test_overwrite_keeps_the_lock_file_it_holds_and_removes_the_rest(config_of):
    config = config_of()
    prepare_out_dir(config, resume=False, overwrite=False).release()
    state = config.out / "state"
    inode = (state / "lock").stat().st_ino
    for name in ("settings.json", "queue.log"):
        (state / name).write_text("old")
    (config.out / "index.csv").write_text("id\n")
    (config.out / "notes.txt").write_text("mine")
    lock = prepare_out_dir(config, resume=False, overwrite=True)
    try:
        assert sorted(p.name for p in state.iterdir()) == ["lock"]
        assert (state / "lock").stat().st_ino == inode     # the very file that is locked
        assert holder(lock_path(config.out)).pid == os.getpid()
        assert sorted(p.name for p in config.out.iterdir()) == ["notes.txt", "state"]
    finally:
        lock.release()


def test_a_refusal_for_another_reason_releases_the_lock(config_of):
    config = config_of()
    prepare_out_dir(config, resume=False, overwrite=False).release()
    with pytest.raises(OutputError, match="not empty"):
        prepare_out_dir(config, resume=False, overwrite=False)
    with pytest.raises(OutputError, match="holds no crawl to resume"):
        prepare_out_dir(config, resume=True, overwrite=False)
    assert holder(lock_path(config.out)) is None


def test_a_report_asking_at_the_same_instant_is_not_taken_for_a_crawl(config_of):
    config = config_of()
    prepare_out_dir(config, resume=False, overwrite=False).release()
    import fcntl
    reader = os.open(lock_path(config.out), os.O_RDONLY)
    fcntl.flock(reader, fcntl.LOCK_SH)   # what holder() holds for an instant
    try:
        with pytest.raises(OutputError, match="is being read by another process at this instant"):
            prepare_out_dir(config, resume=False, overwrite=True)
        assert holder(lock_path(config.out)) is None   # reports never see each other
    finally:
        os.close(reader)
    prepare_out_dir(config, resume=False, overwrite=True).release()


def test_asking_who_holds_a_directory_creates_no_file(tmp_path):
    assert holder(lock_path(tmp_path / "missing")) is None
    assert holder(lock_path(tmp_path)) is None
    assert list(tmp_path.iterdir()) == []
    assert CrawlLock.take(lock_path(tmp_path), create=False) is None
    assert list(tmp_path.iterdir()) == []

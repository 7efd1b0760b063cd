"""Crash safety: SIGKILL a real `crawler` process at several points, resume, and
get exactly what an uninterrupted crawl gets; refusals that protect a crawl."""
import csv
import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from collections import Counter
from warcio.archiveiterator import ArchiveIterator

from controller.commit import Commit
from controller.config import CrawlConfig
from controller.engine import Crawl
from controller.store import OutputError
import bigsite

PAGES = 1200
KILL_AT = (100, 300, 500, 700, 900)   # committed rows at which the process is killed
DEDUPS = ["set", "ascii", "intstring", "stringhash", "md5", "bloom"]


def rows_of(out):
    path = out / "index.csv"
    if not path.exists():
        return []
    with open(path, newline="", encoding="utf-8") as f:
        return [r for r in csv.DictReader(f) if r.get("title") is not None]


def committed(out):
    path = out / "index.csv"
    return path.read_bytes().count(b"\n") - 1 if path.exists() else 0


def crawler_args(url, out, dedup, *extra):
    return [sys.executable, "-m", "controller", "crawl", url, "--out", str(out), "--delay", "0",
            "--workers", "4", "--per-host", "4", "--max-depth", "0", "--max-pages", "0",
            "--dedup", dedup, "--quiet", *extra]


def serving(pages):
    from demosite.server import serve
    with serve(bigsite.handler(pages)) as (base, log):
        yield base + "p/0.html", log


@pytest.fixture(scope="module")
def site():
    yield from serving(PAGES)


# A commit's steps do not depend on how large the crawl is: killed in the
# 300th page's commit, a 400-page crawl (levels 0-5) is in the middle of its
# level 4, so the resume finishes a level begun before the kill and the next.
SMALL_PAGES = 400


@pytest.fixture(scope="module")
def small_site():
    yield from serving(SMALL_PAGES)


def edges_of(out):
    with open(out / "edges.csv", newline="", encoding="utf-8") as f:
        return sorted((r["from_url"], r["to_url"]) for r in csv.DictReader(f))


@pytest.fixture(scope="module")
def reference(site, tmp_path_factory):
    return reference_of(site, tmp_path_factory)


@pytest.fixture(scope="module")
def small_reference(small_site, tmp_path_factory):
    return reference_of(small_site, tmp_path_factory)


def reference_of(site, tmp_path_factory):
    """The uninterrupted crawl of a site: URL -> level, and its edges."""
    url, log = site
    out = tmp_path_factory.mktemp("reference") / "out"
    Crawl(CrawlConfig(seeds=(url,), out=out, delay=0, workers=4, per_host=4, max_depth=0,
                      max_pages=0, progress=False)).run()
    return {r["url"]: int(r["level"]) for r in rows_of(out)}, edges_of(out)


def kill_and_resume(url, out, dedup, *extra):
    """SIGKILL a crawl at each of KILL_AT committed rows, then let it finish;
    (monotonic time of each kill, URLs committed by then)."""
    kills = []
    for i, target in enumerate(KILL_AT):
        resume = ("--resume",) if i else ()
        proc = subprocess.Popen(crawler_args(url, out, dedup, *extra, *resume),
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        while committed(out) < target and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)   # polling an observable condition, bounded by the deadline
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        kills.append((time.monotonic(), {r["url"] for r in rows_of(out)}))
    done = subprocess.run(crawler_args(url, out, dedup, *extra, "--resume"), capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return kills


# The URL-seen structure is not written anywhere: a resume rebuilds it from
# index.csv with the same add() calls whichever --dedup it is, so five kills
# are run with the exact reference (set) and the one that may answer wrongly
# (bloom); every other structure's rebuild is checked by the test after this
# one, and its answers by test_seen.py.
@pytest.mark.parametrize("dedup", ["set", "bloom"])
def test_kill_and_resume_gives_the_uninterrupted_result(site, reference, tmp_path, dedup):
    url, log = site
    out = tmp_path / "out"
    kills = kill_and_resume(url, out, dedup)

    rows = rows_of(out)
    urls = [r["url"] for r in rows]
    levels, edges = reference
    assert len(urls) == len(set(urls)), "a URL was recorded twice"
    assert {u: int(r["level"]) for u, r in zip(urls, rows)} == levels
    counts = [len(urls_then) for _, urls_then in kills]
    assert all(t <= c < PAGES for t, c in zip(KILL_AT, counts)), f"killed at {counts} rows"
    assert len(levels) == PAGES
    assert edges_of(out) == edges
    for row in rows:
        assert (out / row["html_path"]).read_bytes() == bigsite.page(int(row["url"].split("/")[-1][:-5]), PAGES)
    # No page whose row was written before a kill was requested again after it.
    requests = log.snapshot()
    base = urlsplit(url)._replace(path="").geturl()
    for killed_at, committed_urls in kills:
        again = {base + r.path for r in requests if r.time > killed_at} & committed_urls
        assert not again, f"fetched again after their rows were written: {sorted(again)[:3]}"
    log.clear()


@pytest.mark.parametrize("dedup", DEDUPS)
def test_every_url_seen_structure_is_rebuilt_on_resume(small_site, small_reference, tmp_path,
                                                      dedup):
    """Stopped by its budget in the middle of a level (250 pages: level 4),
    then resumed to the end: no URL recorded twice (a URL the rebuilt
    structure forgot) and none missing (one it wrongly says it saw)."""
    url, log = small_site
    out = tmp_path / "out"
    fast = dict(delay=0, workers=4, per_host=4, max_depth=0, dedup=dedup)
    Crawl(make_crawl(out, url, max_pages=250, **fast)).run()
    Crawl(make_crawl(out, url, **fast), resume=True).run()
    rows = rows_of(out)
    levels, edges = small_reference
    assert len(rows) == len({r["url"] for r in rows}) == SMALL_PAGES
    assert {r["url"]: int(r["level"]) for r in rows} == levels
    assert edges_of(out) == edges
    log.clear()


def make_crawl(out, url="http://127.0.0.1:9/", **overrides):
    settings = dict(seeds=(url,), out=out, progress=False, max_pages=0)
    settings.update(overrides)
    return CrawlConfig(**settings)


def test_a_new_crawl_refuses_a_non_empty_directory(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    with pytest.raises(OutputError, match="not empty; use --resume .* --overwrite"):
        Crawl(make_crawl(out))
    assert (out / "notes.txt").read_text() == "mine"


def test_resume_refuses_other_settings_and_names_the_difference(tmp_path, site):
    url, log = site
    out = tmp_path / "out"
    Crawl(make_crawl(out, url, max_pages=5, delay=0)).run()
    with pytest.raises(OutputError, match="started with --dedup sieve, not ascii"):
        Crawl(make_crawl(out, url, dedup="ascii"), resume=True)
    with pytest.raises(OutputError, match="started with --scope host, not any"):
        Crawl(make_crawl(out, url, scope="any"), resume=True)
    with pytest.raises(OutputError, match="--seeds"):
        Crawl(make_crawl(out, url + "?other"), resume=True)


def test_resume_needs_a_crawl_to_resume(tmp_path):
    with pytest.raises(OutputError, match="holds no crawl to resume"):
        Crawl(make_crawl(tmp_path / "empty"), resume=True)


def test_overwrite_replaces_only_the_crawl_files(tmp_path, site):
    url, log = site
    out = tmp_path / "out"
    Crawl(make_crawl(out, url, max_pages=3, delay=0)).run()
    (out / "notes.txt").write_text("mine")
    Crawl(make_crawl(out, url, max_pages=2, delay=0), overwrite=True).run()
    assert len(rows_of(out)) == 2 and (out / "notes.txt").read_text() == "mine"


def test_resume_from_the_command_line_needs_only_the_directory(tmp_path, site):
    url, log = site
    out = tmp_path / "out"
    first = subprocess.run(crawler_args(url, out, "ascii", "--max-pages", "40"),
                           capture_output=True, text=True, timeout=60)
    assert first.returncode == 0 and "--resume" in first.stderr
    again = subprocess.run([sys.executable, "-m", "controller", "crawl", "--out", str(out),
                            "--resume", "--max-pages", "60", "--delay", "0", "--quiet"],
                           capture_output=True, text=True, timeout=60)
    assert again.returncode == 0, again.stderr
    rows = rows_of(out)
    assert len(rows) == 60 and len({r["url"] for r in rows}) == 60
    wrong = subprocess.run([sys.executable, "-m", "controller", "crawl", "--out", str(out),
                            "--resume", "--dedup", "set"], capture_output=True, text=True, timeout=60)
    assert wrong.returncode == 2 and "--dedup ascii, not set" in wrong.stderr
    assert wrong.stderr.count("\n") == 1


def test_resume_keeps_the_limits_and_speed_the_crawl_was_started_with(tmp_path, site):
    """`crawler crawl --out DIR --resume`, as the crawler itself prints it after
    Ctrl-C, must not fall back to the default --delay 1 and --max-pages 1000."""
    url, log = site
    out = tmp_path / "out"
    first = subprocess.run(crawler_args(url, out, "ascii", "--max-pages", "40", "--workers", "3"),
                           capture_output=True, text=True, timeout=60)
    assert first.returncode == 0
    again = subprocess.run([sys.executable, "-m", "controller", "crawl", "--out", str(out),
                            "--resume", "--max-pages", "70", "--quiet"],
                           capture_output=True, text=True, timeout=60)
    assert again.returncode == 0, again.stderr
    settings = json.loads((out / "stats.json").read_text())["settings"]
    assert (settings["delay"], settings["workers"], settings["max_pages"]) == (0, 3, 70)
    assert len(rows_of(out)) == 70


def test_resume_removes_page_files_no_row_points_at(tmp_path, site):
    """A parser process saves a page before its row is written; after a kill,
    a page whose refetch then fails must not leave that file behind."""
    url, log = site
    out = tmp_path / "out"
    fast = dict(delay=0, workers=4, per_host=4, max_depth=0)
    Crawl(make_crawl(out, url, max_pages=20, **fast)).run()
    committed_ids = {r["id"] for r in rows_of(out)}
    (out / "pages" / "987.html").write_bytes(b"<p>written before a kill</p>")
    (out / "text" / "987.txt").write_text("written before a kill")
    Crawl(make_crawl(out, url, max_pages=30, **fast), resume=True).run()
    rows = rows_of(out)
    assert "987" not in {r["id"] for r in rows} and committed_ids < {r["id"] for r in rows}
    assert not (out / "pages" / "987.html").exists() and not (out / "text" / "987.txt").exists()
    assert {p.stem for p in (out / "pages").iterdir()} == {r["id"] for r in rows if r["html_path"]}


def test_a_file_as_output_directory_is_refused(tmp_path):
    target = tmp_path / "a-file"
    target.write_text("x")
    with pytest.raises(OutputError, match="is a file, not a directory"):
        Crawl(make_crawl(target))


def test_resume_and_overwrite_together_are_refused(tmp_path):
    with pytest.raises(OutputError, match="give only one of them"):
        Crawl(make_crawl(tmp_path / "out"), resume=True, overwrite=True)


def test_rates_after_a_resume_cover_only_the_new_run(tmp_path, site):
    url, log = site
    out = tmp_path / "out"
    Crawl(make_crawl(out, url, max_pages=20, delay=0)).run()
    stats = Crawl(make_crawl(out, url, max_pages=30, delay=0), resume=True).run()
    assert stats["urls"] == 30 and stats["urls_this_run"] == 10
    assert stats["urls_per_second"] == pytest.approx(10 / stats["elapsed_seconds"], rel=0.05)


def test_kill_and_resume_keeps_warc_extraction_and_content_memory_exact(site, reference, tmp_path):
    """The files written before the commit mark (WARC records, extracted rows) and
    the state rebuilt from index.csv (content fingerprints, in-links) after five kills."""
    url, log = site
    out = tmp_path / "out"
    kill_and_resume(url, out, "stringhash", "--warc", "--content-dedup", "near",
                    "--extract", "title=css:title", "--extract", "links=xpath://a/@href")
    rows = rows_of(out)
    assert len(rows) == PAGES and len({r["url"] for r in rows}) == PAGES
    # No two bigsite pages have the same text (titles differ) ...
    assert [r for r in rows if r["duplicate_of"]] == []
    # ... but page i's words are a rotation picked by i % 12, and digits are not
    # SimHash features: each page whose rotation an earlier committed page had is
    # a near duplicate of an earlier page, also across the five resumes (the
    # content memory is rebuilt from index.csv).
    position = {r["id"]: k for k, r in enumerate(rows)}
    rotations_seen = set()
    for k, row in enumerate(rows):
        rotation = int(row["url"].split("/")[-1][:-5]) % 12
        if rotation in rotations_seen:
            assert row["near_duplicate_of"] and position[row["near_duplicate_of"]] < k, row["url"]
        rotations_seen.add(rotation)
    edges = Counter(to for _, to in edges_of(out))
    assert {r["url"]: int(r["in_links"]) for r in rows} == {r["url"]: edges[r["url"]] for r in rows}
    with open(out / "extracted.csv", newline="", encoding="utf-8") as f:
        extracted = list(csv.DictReader(f))
    assert sorted(int(e["id"]) for e in extracted) == sorted(int(r["id"]) for r in rows)
    responses = Counter()
    with open(out / "crawl.warc.gz", "rb") as f:
        for record in ArchiveIterator(f, check_digests="raise"):
            if record.rec_type == "response":
                uri = record.rec_headers.get_header("WARC-Target-URI")
                responses[uri] += 1
                page_id = record.rec_headers.get_header("WARC-Crawler-Page-Id")
                assert record.content_stream().read() == (out / "pages" / f"{page_id}.html").read_bytes()
    assert responses == Counter({r["url"]: 1 for r in rows})


def snapshot(out):
    """Every file of a crawl directory: its bytes' hash and its mtime."""
    import hashlib
    return {str(p.relative_to(out)): (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
            for p in sorted(out.rglob("*")) if p.is_file()}


def resume_cli(out, *extra):
    return subprocess.run([sys.executable, "-m", "controller", "crawl", "--out", str(out), "--resume",
                           "--quiet", *extra], capture_output=True, text=True, timeout=120)


def test_resuming_a_finished_crawl_changes_no_file(tmp_path, site):
    url, log = site
    out = tmp_path / "out"
    first = subprocess.run(crawler_args(url, out, "set", "--max-depth", "3"), capture_output=True,
                           text=True, timeout=120)
    assert first.returncode == 0, first.stderr
    stats = json.loads((out / "stats.json").read_text())
    assert stats["stop_reason"] == "max-depth" and stats["skipped_links"]["depth"] > 0
    before = snapshot(out)
    requests = len(log.snapshot())
    again = resume_cli(out)
    assert again.returncode == 0, again.stderr
    assert again.stderr == (f"crawler: the crawl in {out} is finished (stop reason max-depth); "
                            f"nothing to resume\n")
    assert snapshot(out) == before
    assert len(log.snapshot()) == requests, "a finished crawl sent requests"


def test_a_crawl_stopped_by_its_page_budget_goes_on_only_with_a_larger_one(tmp_path, site):
    url, log = site
    out = tmp_path / "out"
    first = subprocess.run(crawler_args(url, out, "set", "--max-pages", "40"), capture_output=True,
                           text=True, timeout=120)
    assert first.returncode == 0, first.stderr
    before = snapshot(out)
    same = resume_cli(out)
    assert same.returncode == 0 and "finished (stop reason max-pages, 40 URLs)" in same.stderr
    assert "give a larger --max-pages" in same.stderr and same.stderr.count("\n") == 1
    assert snapshot(out) == before
    larger = resume_cli(out, "--max-pages", "60")
    assert larger.returncode == 0, larger.stderr
    assert len(rows_of(out)) == 60


VERDICT = ("stop_reason", "stop_detail", "skipped_links", "urls", "pages", "errors")


def verdict_of(out):
    stats = json.loads((out / "stats.json").read_text())
    return {key: stats[key] for key in VERDICT}


def stop_at(url, out, rows, sig, *extra):
    """Start or resume a --max-depth 4 crawl; send sig once it has ``rows`` rows."""
    resume = ("--resume",) if (out / "index.csv").exists() else ()
    proc = subprocess.Popen(crawler_args(url, out, "set", "--max-depth", "4", *extra, *resume),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while committed(out) < rows and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)   # polling an observable condition, bounded by the deadline
    proc.send_signal(sig)
    proc.wait(timeout=60)
    assert committed(out) < 653, "the crawl ended before it was stopped"


def test_the_verdict_does_not_depend_on_when_a_run_was_stopped(tmp_path, site):
    """stop_reason, its detail and the links not queued, by reason, of a crawl
    stopped (SIGTERM twice, at different moments, then kill -9) and resumed
    are the uninterrupted crawl's."""
    url, log = site
    whole = tmp_path / "whole"
    done = subprocess.run(crawler_args(url, whole, "set", "--max-depth", "4"), capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    expected = verdict_of(whole)
    assert expected["stop_reason"] == "max-depth" and expected["urls"] == 653

    out = tmp_path / "stopped"
    stop_at(url, out, 100, signal.SIGTERM)
    stop_at(url, out, 400, signal.SIGTERM)
    stop_at(url, out, 550, signal.SIGKILL)
    finished = resume_cli(out)
    assert finished.returncode == 0, finished.stderr
    assert verdict_of(out) == expected
    assert {r["url"]: r["level"] for r in rows_of(out)} == {r["url"]: r["level"] for r in rows_of(whole)}


def test_a_stats_json_that_cannot_be_written_is_one_line_and_resume_writes_it(tmp_path, site):
    """The end of a crawl is local I/O too: a stats.json that cannot be
    written (here its temporary name is taken by a directory) is one line,
    exit 3, and a crawl that --resume then ends, with the same verdict."""
    url, log = site
    out = tmp_path / "out"
    first = subprocess.run(crawler_args(url, out, "set", "--max-pages", "30"), capture_output=True,
                           text=True, timeout=120)
    assert first.returncode == 0, first.stderr
    (out / "stats.json").unlink()
    (out / "stats.json.tmp").mkdir()
    blocked = resume_cli(out, "--max-pages", "50")
    assert blocked.returncode == 3, blocked.stderr
    assert blocked.stderr.count("\n") == 1 and "Traceback" not in blocked.stderr
    assert blocked.stderr.startswith(f"crawler: error: is a directory in {out} (at stats.json.tmp)")
    assert not (out / "stats.json").exists() and len(rows_of(out)) == 50
    (out / "stats.json.tmp").rmdir()
    again = resume_cli(out, "--max-pages", "50")
    assert again.returncode == 0, again.stderr
    stats = json.loads((out / "stats.json").read_text())
    assert (stats["stop_reason"], stats["urls"], stats["urls_this_run"]) == ("max-pages", 50, 0)


KILLPOINT = Path(__file__).resolve().parent / "killpoint.py"


@pytest.mark.parametrize("step", Commit.STEPS)
def test_killed_after_any_step_of_a_commit_resume_gives_the_uninterrupted_result(
        small_site, small_reference, tmp_path, step):
    """Whatever a page's commit made durable before a kill, --resume records
    each page once, at its level, with its links, its WARC records once, and
    every page queued by exactly one page."""
    url, _ = small_site
    out = tmp_path / "out"
    args = crawler_args(url, out, "set", "--warc")[3:]   # after "python -m controller"
    killed = subprocess.run([sys.executable, str(KILLPOINT), f"commit:{step}:300", *args],
                            capture_output=True, text=True, timeout=120)
    assert killed.returncode == 137, killed.stderr
    assert committed(out) < SMALL_PAGES
    done = subprocess.run(crawler_args(url, out, "set", "--warc", "--resume"), capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    rows = rows_of(out)
    levels, edges = small_reference
    assert len(rows) == len({r["url"] for r in rows}) == SMALL_PAGES
    assert {r["url"]: int(r["level"]) for r in rows} == levels
    assert edges_of(out) == edges
    assert sum(int(r["new_links"]) for r in rows) == SMALL_PAGES - 1
    responses = Counter()
    with open(out / "crawl.warc.gz", "rb") as f:
        for record in ArchiveIterator(f):
            if record.rec_type == "response":
                responses[record.rec_headers.get_header("WARC-Target-URI")] += 1
    assert responses == Counter({r["url"]: 1 for r in rows})

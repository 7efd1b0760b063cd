"""The real-sites benchmark (benchmarks/real_sites.py): documentation sites' ground truth, the timeline.

The walk is checked on a small hand-written site (what a crawler that
follows every link must ask for); the timeline on a log whose every gap is
known, so its parts must add up to wall - bound; and the harness end to end
on two generated sites, its timeline recomputed from the access log it
kept. The end-to-end test skips when nginx or GNU time is missing
(apt-get install -y nginx-light time).
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # the repository root holds benchmarks/

from benchmarks import docs_sites, real_sites, timeline  # noqa: E402
from benchmarks.nginx import BARRIER_PATH, LogEntry, find_nginx, parse_log_line  # noqa: E402

needs_nginx = pytest.mark.skipif(find_nginx() is None, reason="nginx not installed (apt-get install -y nginx)")
needs_time = pytest.mark.skipif(not os.access("/usr/bin/time", os.X_OK), reason="GNU time not installed")


def _write(root: Path, path: str, body: str) -> None:
    file = root / path
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(body, encoding="utf-8")


def test_the_walk_counts_what_a_crawler_following_every_link_asks_for(tmp_path):
    _write(tmp_path, "index.html", '<a href="a.html#top">a</a> <A HREF="sub/">sub</A> <a href="notes.txt">t</a>'
                                   '<a href="http://elsewhere.example/x.html">x</a> <a href="a.html?q=1">q</a>'
                                   '<a href="mailto:someone@example.org">m</a> <a href="http://[user@/">bad</a>')
    _write(tmp_path, "a.html", '<a href="/index.html">home</a><a href="gone.html">404</a>'
                               '<frame src="sub/deep%20page.html">')
    _write(tmp_path, "sub/index.html", '<base href="/sub/"><a href="deep page.html">d</a><a href="../a.html">a</a>')
    _write(tmp_path, "sub/deep page.html", "<p>no links</p>")
    _write(tmp_path, "notes.txt", "plain text")
    _write(tmp_path, "orphan.html", "<p>nothing links here</p>")
    truth = docs_sites.walk(tmp_path, "/index.html")
    assert truth.paths_by_level == (("/index.html",), ("/a.html", "/sub/"), ("/sub/deep%20page.html",))
    assert truth.assets == ("/notes.txt",) and truth.broken == ("/gone.html",)
    assert truth.requests_needed == 6 and truth.seed == "/index.html"


def test_missing_documentation_packages_are_named_in_one_line_with_exit_2(tmp_path, monkeypatch):
    monkeypatch.setattr(docs_sites, "DOC_SITES", (docs_sites.DocSite("no-such-doc", str(tmp_path), "/x.html"),))
    result = CliRunner().invoke(real_sites.main, ["--work", str(tmp_path / "work"), "--no-save"])
    assert result.exit_code == 2
    assert result.output == "the documentation sites are not installed; run: apt-get install -y no-such-doc\n"
    assert not (tmp_path / "work" / "runs").exists()


def _log(address: str, path: str, start: int, took: int = 2) -> LogEntry:
    return LogEntry(path, 200, 1, 1, 1, address, end_ms=start + took, duration_ms=took)


def test_the_seconds_above_the_bound_are_split_along_the_bounding_host_and_add_up(tmp_path):
    # Launch at 0; the crawl starts at 300 (START), asks host .3 first at 320, the bounding
    # host .2 at 330: robots.txt, then pages at +150 (50 after robots), +100, +180 (a level
    # closed at 650 inside that gap), +100, +130 after a 40 ms response (30 slow); the
    # other host answers last at 1000; the command exits at 1100. Delay 100 ms, 5 pages.
    trace = tmp_path / "trace.log"
    trace.write_text("# time event\n1970-01-01T00:00:00.300Z START http://x/\n"
                     "1970-01-01T00:00:00.650Z LEVEL 0 2 5 7\n", encoding="utf-8")
    bounding = [_log("127.0.0.2", "/robots.txt", 330), _log("127.0.0.2", "/index.html", 480),
                _log("127.0.0.2", "/a.html", 580), _log("127.0.0.2", "/b.html", 760),
                _log("127.0.0.2", "/c.html", 860, took=140), _log("127.0.0.2", "/d.html", 1000 - 10, took=5)]
    other = [_log("127.0.0.3", "/robots.txt", 320), _log("127.0.0.3", "/index.html", 990, took=10)]
    split = timeline.excess(other + bounding, "127.0.0.2", 5, 0.1, 0, 1.1, trace)
    assert split.parts == pytest.approx({"start-up: the process": 0.3, "start-up: the crawl": 0.02,
                           "first request elsewhere": 0.01, "requests beyond the bound": 0.1,
                           "after robots.txt": 0.05, "level barrier": 0.08, "slow response": 0.03,
                           "other waits": 0.0, "its last response": 0.005, "other hosts after it": 0.005,
                           "the end": 0.1})
    assert split.total() == pytest.approx(1.1 - (5 - 1) * 0.1)
    assert (split.requests, split.idle_gaps, split.idle_at_level_close) == (6, 2, 2)
    assert split.idle_s == pytest.approx(0.08 + 0.57)   # .2's 180 ms gap, .3's 670 ms gap: both span 650


@needs_nginx
@needs_time
def test_the_harness_splits_each_run_from_the_log_it_kept(tmp_path):
    args = ["--generated", "2", "--delay", "0.05", "--rounds", "1", "--work", str(tmp_path / "work"),
            "--results-dir", str(tmp_path / "results"), "--results-md", str(tmp_path / "RESULTS.md"),
            "--name", "t", "--label", "test"]
    result = CliRunner().invoke(real_sites.main, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    stored = json.loads((tmp_path / "results" / "real_sites" / "t.json").read_text())
    run, split = stored["runs"][0], stored["timelines"][0]
    assert run["pages"] == run["site_pages"] and run["levels_exact"] and run["missed"] == run["duplicates"] == 0
    assert sum(split["parts"].values()) == pytest.approx(run["wall_s"] - run["lower_bound_s"], abs=0.002)
    log = (tmp_path / "work" / "runs" / "real-sites-ours-1" / "access.log").read_text().splitlines()
    entries = [e for e in map(parse_log_line, log)
               if e is not None and e.address == split["host"] and e.path != BARRIER_PATH]
    assert split["requests"] == len(entries) and min(entries, key=lambda e: e.start_ms).path == "/robots.txt"
    text = (tmp_path / "RESULTS.md").read_text()
    assert "## The politeness bound on 2 generated sites — test" in text and "| the end " in text

"""The polite benchmark (benchmarks/polite.py): many sites on loopback addresses, gaps, efficiency.

The end-to-end test runs the harness on two small sites with our crawler and
recomputes what it reports from the access log nginx wrote, read here
independently. It skips when nginx or GNU time is missing
(apt-get install -y nginx-light time).
"""
from __future__ import annotations

import json
import math
import os
import random
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

import pytest
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # the repository root holds benchmarks/

from benchmarks.nginx import BARRIER_PATH, LogEntry, find_nginx, parse_log_line, render_config  # noqa: E402
from benchmarks.polite import Gaps, gap_stats, main, scrapy_settings, span_s  # noqa: E402
from benchmarks.polite_site import SiteSetSpec, generate, tree_levels, zipf_sizes  # noqa: E402

needs_nginx = pytest.mark.skipif(find_nginx() is None, reason="nginx not installed (apt-get install -y nginx)")
needs_time = pytest.mark.skipif(not os.access("/usr/bin/time", os.X_OK), reason="GNU time not installed")


# -- the log and the gaps ------------------------------------------------------------
def test_a_log_line_gives_the_site_address_and_the_request_start_in_exact_milliseconds():
    entry = parse_log_line("/p/0/5.html 200 3012 7 2 127.0.0.9 1796118312.663 0.012\n")
    assert (entry.path, entry.status, entry.address) == ("/p/0/5.html", 200, "127.0.0.9")
    assert (entry.end_ms, entry.duration_ms, entry.start_ms) == (1796118312663, 12, 1796118312651)
    assert parse_log_line("/a 200 1 1 1\n").start_ms == 0          # the five-field format still reads
    assert parse_log_line("/a 200 1 1 1 127.0.0.2 5.000\n") is None


def test_config_has_one_server_block_per_address_all_on_one_port(tmp_path):
    text = render_config({"127.0.0.2": Path("/srv/a"), "127.0.0.3": Path("/srv/b")}, 18125, tmp_path)
    assert text.count("server {") == 2
    assert "listen 127.0.0.2:18125;\n        server_name localhost;\n        root /srv/a;" in text
    assert "listen 127.0.0.3:18125;\n        server_name localhost;\n        root /srv/b;" in text
    assert "$server_addr $msec $request_time" in text


def _entry(address: str, start_ms: int) -> LogEntry:
    return LogEntry("/x", 200, 1, 1, 1, address, end_ms=start_ms + 3, duration_ms=3)


def test_gaps_are_per_host_the_smallest_of_any_host_the_first_percentile_and_median_pooled():
    entries = [_entry("127.0.0.2", t) for t in (400, 0, 200)] + [_entry("127.0.0.3", t) for t in (50, 200, 420)]
    assert gap_stats(entries, delay_s=0.2) == Gaps(count=4, smallest_s=0.15, p1_s=0.15, short=1,
                                                      median_s=0.2)   # 150 < 180
    assert span_s(entries) == 0.423
    many = [_entry("127.0.0.2", sum(range(k + 1))) for k in range(201)]   # gaps 1, 2, ..., 200 ms
    assert gap_stats(many, delay_s=0.1) == Gaps(count=200, smallest_s=0.001, p1_s=0.002, short=89,
                                                     median_s=0.1)
    assert gap_stats([_entry("127.0.0.2", 5)], delay_s=0.1) == Gaps(0, None, None, 0)


def test_scrapy_runs_polite_and_breadth_first():
    settings = scrapy_settings(0.5, 16)
    assert settings["DOWNLOAD_DELAY"] == 0.5 and settings["CONCURRENT_REQUESTS_PER_DOMAIN"] == 1
    assert settings["RANDOMIZE_DOWNLOAD_DELAY"] is False and settings["DOWNLOAD_DELAY_JITTER"] == 0
    assert settings["DEPTH_PRIORITY"] == 1 and settings["SCHEDULER_MEMORY_QUEUE"].endswith("FifoMemoryQueue")


# -- the sites -------------------------------------------------------------------
def test_trees_have_their_branching_and_sizes_are_zipf_like_between_10_and_60():
    assert tree_levels(60, 3) == (1, 3, 9, 27, 20) and tree_levels(10, 6) == (1, 6, 3) and tree_levels(1, 2) == (1,)
    sizes = zipf_sizes(SiteSetSpec(sites=40), random.Random(1))
    assert sorted(sizes, reverse=True)[:4] == [60, 35, 27, 22] and min(sizes) == 11 and len(sizes) == 40


HREF = re.compile(rb'<a href="([^"]*)"')


def test_every_site_is_a_tree_on_its_own_address_whose_bfs_levels_are_its_tree_levels(tmp_path):
    sites = generate(SiteSetSpec(sites=12), tmp_path)
    assert [s.address for s in sites.sites] == [f"127.0.0.{k}" for k in range(2, 14)]
    assert {s.branching for s in sites.sites} <= set(range(2, 7)) and len({s.branching for s in sites.sites}) > 1
    for site in sites.sites:
        assert site.truth.levels == tree_levels(site.pages, site.branching)
        files = {"/" + p.relative_to(sites.root(site)).as_posix() for p in sites.root(site).rglob("*.html")}
        assert files == set(site.truth.html_paths())
        hrefs = b"".join(HREF.findall(b"".join(p.read_bytes() for p in sites.root(site).rglob("*.html"))))
        assert b"http" not in hrefs and b"127.0.0." not in hrefs     # no site links to another
    ternary = generate(SiteSetSpec(sites=5, shape="ternary"), tmp_path / "t")
    assert {s.branching for s in ternary.sites} == {3}
    barrier = generate(SiteSetSpec(shape="barrier"), tmp_path / "b")
    assert [s.truth.levels for s in barrier.sites] == [(1, 2, 45), (1, 1, 2, 44)] and barrier.largest == 48


# -- end to end: the harness against the access log ----------------------------------------
def _log(path: Path) -> list[tuple[str, str, int]]:
    """(address, URI, start ms) per request, read straight from nginx's log line."""
    rows = []
    for line in path.read_text().splitlines():
        uri, _status, _bytes, _conn, _nth, address, msec, request_time = line.split()
        if uri != BARRIER_PATH:
            rows.append((address, uri, round((float(msec) - float(request_time)) * 1000)))
    return rows


@needs_nginx
@needs_time
def test_the_harness_reports_what_the_access_log_shows(tmp_path):
    work, results = tmp_path / "work", tmp_path / "results"
    result = CliRunner().invoke(main, ["--sites", "2", "--delay", "0.02", "--peers", "ours", "--name", "t",
                                       "--work", str(work), "--results-dir", str(results),
                                       "--results-md", str(tmp_path / "RESULTS.md")])
    assert result.exit_code == 0, result.output
    stored = json.loads((results / "polite" / "t.json").read_text())
    run, setting = stored["runs"][0], stored["settings"][0]
    log = _log(work / "runs" / "polite-2-ours-1" / "access.log")
    truth = {s["address"]: s for s in setting["sites"]}
    # every page once, as the log counts them per address
    pages = Counter((a, uri) for a, uri, _ in log if uri != "/robots.txt")
    assert set(pages.values()) == {1} and {a for a, _ in pages} == set(truth)
    assert {a: sum(1 for b, _ in pages if b == a) for a in truth} == {a: sum(s["levels"]) for a, s in truth.items()}
    assert run["missed"] == run["duplicates"] == 0 and run["requests"] == len(log) == len(pages) + 2
    # efficiency: (pages of the largest site - 1) x delay / wall time
    largest = max(Counter(a for a, _ in pages).values())
    assert run["largest_site"] == largest and run["lower_bound_s"] == pytest.approx((largest - 1) * 0.02)
    assert run["efficiency"] == pytest.approx((largest - 1) * 0.02 / run["wall_s"])
    # gaps between request starts per host
    starts = defaultdict(list)
    for address, _, start in log:
        starts[address].append(start)
    gaps = sorted(b - a for s in starts.values() for a, b in zip(sorted(s), sorted(s)[1:]))
    assert run["gaps"]["smallest_s"] == gaps[0] / 1000 and run["gaps"]["count"] == len(gaps)
    assert run["gaps"]["p1_s"] == gaps[math.ceil(len(gaps) / 100) - 1] / 1000
    assert run["gaps"]["short"] == sum(1 for g in gaps if g < 18)
    assert run["pages"] == len(pages) and run["levels_exact"] is True
    assert "| 2 sites, own, delay 0.02 s | ours |" in (tmp_path / "RESULTS.md").read_text()
    # one warm-up run came first, in the log but not among the runs
    assert stored["options"]["warmup"] == 1 and [r["round"] for r in stored["runs"]] == [1]
    warm = _log(work / "runs" / "warmup-ours" / "access.log")
    assert len(warm) == len(log) and max(start for *_, start in warm) < min(start for *_, start in log)


@needs_nginx
@needs_time
def test_the_shared_variant_is_three_workers_on_one_redis_checked_as_the_single_node(tmp_path):
    work, results = tmp_path / "work", tmp_path / "results"
    result = CliRunner().invoke(main, ["--sites", "2", "--delay", "0.02", "--peers", "ours,ours-shared",
                                       "--name", "t", "--keep-output", "--work", str(work),
                                       "--results-dir", str(results), "--results-md", str(tmp_path / "RESULTS.md")])
    assert result.exit_code == 0, result.output
    single, shared = json.loads((results / "polite" / "t.json").read_text())["runs"]
    assert shared["peer"] == "ours-shared" and shared["exit_ok"] and not shared["timed_out"]
    # the merged output of the three workers: every page once, byte-identical, on its level
    assert shared["pages"] == shared["site_pages"] == single["pages"] and shared["levels_exact"] is True
    assert shared["missed"] == shared["duplicates"] == 0 and shared["gaps"]["short"] == 0
    run = work / "runs" / "polite-2-ours-shared-1"
    assert sorted(p.name for p in run.glob("logs-w*")) == ["logs-w0", "logs-w1", "logs-w2"]
    assert any((run / "redis").rglob("*.aof"))   # the crawl's state was in Redis, with its AOF
    assert shared["script_calls"] >= 3 and single["script_calls"] is None   # a worker joins with one at least
    (row,) = [line for line in (tmp_path / "RESULTS.md").read_text().splitlines() if "| ours-shared |" in line]
    cells = [cell.strip() for cell in row.split("|")]
    assert cells[4] == f"{shared['wall_s']:.1f}"   # wall s, then "× ours": the single node's ÷ its own
    assert cells[7] == f"{single['wall_s'] / shared['wall_s']:.2f}×"

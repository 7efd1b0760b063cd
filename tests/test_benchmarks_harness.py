"""The benchmark harness (benchmarks/): site generator, nginx wrapper, measuring, checks, tables.

Nothing here needs Scrapy. Tests that need nginx, wget or GNU time skip when
they are not installed (apt-get install -y nginx wget time).
"""
from __future__ import annotations

import http.client
import os
import re
import shutil
import subprocess
import sys
from collections import deque
from pathlib import Path
from urllib.parse import urldefrag, urljoin, urlsplit

import pytest
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # the repository root holds benchmarks/

from benchmarks import site as bsite  # noqa: E402
from benchmarks.checks import ServerCount, SavedCheck, check_saved, count_server  # noqa: E402
from benchmarks.measure import parse_time_v, run_measured  # noqa: E402
from benchmarks.nginx import LogEntry, Nginx, find_nginx, parse_log_line, render_config  # noqa: E402
from benchmarks.peers import SavedPage, saved_from_index_tsv, saved_from_mirror  # noqa: E402
from benchmarks.report import (RunRecord, compare_table, markdown_table, render_results,  # noqa: E402
                               rss_growth_per_page, scaling_table, summarize)
from benchmarks.run import Settings, compare, main  # noqa: E402

needs_nginx = pytest.mark.skipif(find_nginx() is None, reason="nginx not installed (apt-get install -y nginx)")
needs_time = pytest.mark.skipif(not os.access("/usr/bin/time", os.X_OK), reason="GNU time not installed")
needs_wget = pytest.mark.skipif(shutil.which("wget") is None, reason="wget not installed")

SMALL = bsite.SiteSpec(pages=240, page_bytes=4000, links_per_page=12, depth=5, seed=11)
HREF = re.compile(rb'<a href="([^"]*)"')


@pytest.fixture(scope="module")
def small_site(tmp_path_factory):
    directory = tmp_path_factory.mktemp("site")
    return directory, bsite.generate(SMALL, directory)


def _files(directory: Path) -> dict[str, bytes]:
    return {p.relative_to(directory).as_posix(): p.read_bytes() for p in directory.rglob("*") if p.is_file()}


def _walk_from_disk(directory: Path) -> tuple[dict[str, int], set[str]]:
    """An independent BFS over the files: regex hrefs, urljoin, fragments dropped."""
    base = "http://site.test"
    level = {"/index.html": 0}
    linked: set[str] = set()
    queue = deque(["/index.html"])
    while queue:
        path = queue.popleft()
        for raw in HREF.findall((directory / path.lstrip("/")).read_bytes()):
            target = urlsplit(urldefrag(urljoin(base + path, raw.decode()))[0]).path
            linked.add(target)
            if target.endswith(".html") and (directory / target.lstrip("/")).is_file() and target not in level:
                level[target] = level[path] + 1
                queue.append(target)
    return level, linked


# -- the site --------------------------------------------------------------------
def test_same_spec_gives_the_same_bytes_and_another_seed_does_not(small_site, tmp_path):
    directory, _ = small_site
    again = bsite.generate(SMALL, tmp_path / "again")
    assert _files(tmp_path / "again") == _files(directory)
    assert again == bsite.read_truth(directory)
    other = tmp_path / "other"
    bsite.generate(bsite.SiteSpec(**{**SMALL.__dict__, "seed": 12}), other)
    assert (other / "p/0/17.html").read_bytes() != (directory / "p/0/17.html").read_bytes()


def test_ground_truth_levels_match_a_breadth_first_walk_of_the_files(small_site):
    directory, truth = small_site
    level, _ = _walk_from_disk(directory)
    assert truth.level_of_path() == level
    assert truth.levels == bsite.layout(SMALL).level_sizes
    assert truth.total == SMALL.pages and len(truth.levels) == SMALL.depth + 1
    html_files = {"/" + p for p in _files(directory) if p.endswith(".html")}
    assert html_files == set(truth.html_paths())


def test_assets_exist_broken_links_do_not_and_robots_disallows_only_unlinked_paths(small_site):
    directory, truth = small_site
    _, linked = _walk_from_disk(directory)
    assert truth.assets and truth.broken
    assert set(truth.assets) <= linked and set(truth.broken) <= linked
    assert all((directory / a.lstrip("/")).is_file() for a in truth.assets)
    assert not any((directory / b.lstrip("/")).exists() for b in truth.broken)
    assert (directory / "files/doc-0.pdf").read_bytes().startswith(b"%PDF-")
    assert (directory / "img/pic-0.png").read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    assert (directory / "robots.txt").read_text() == "User-agent: *\nDisallow: /private/\n"
    assert not any(path.startswith("/private/") for path in linked)
    assert linked <= set(truth.html_paths()) | set(truth.assets) | set(truth.broken)


def test_pages_have_the_asked_size_and_link_count(small_site):
    directory, truth = small_site
    sizes = [len((directory / p.lstrip("/")).read_bytes()) for p in truth.html_paths()]
    links = [len(HREF.findall((directory / p.lstrip("/")).read_bytes())) for p in truth.html_paths()]
    assert abs(sum(sizes) / len(sizes) - SMALL.page_bytes) < 0.1 * SMALL.page_bytes
    assert sum(sizes) == truth.html_bytes
    assert SMALL.links_per_page <= sum(links) / len(links) < SMALL.links_per_page + 1
    hrefs = b"".join((directory / p.lstrip("/")).read_bytes() for p in truth.html_paths()[-20:])
    assert b'href="/p/0/' in hrefs and b'href="./' in hrefs and b"#s2" in hrefs


@pytest.mark.parametrize("source, target, form, expected", [
    (1500, 20, 0, "/p/0/20.html"), (1500, 20, 1, "../0/20.html"), (1500, 1501, 1, "1501.html"),
    (1500, 1501, 2, "./1501.html"), (1500, 20, 2, "/p/0/20.html"), (1500, 20, 3, "/p/0/20.html#s2"),
    (1500, 0, 1, "/index.html"), (0, 7, 1, "/p/0/7.html"),
])
def test_hrefs_take_four_forms_that_resolve_to_the_target(source, target, form, expected):
    assert bsite.href(source, target, form) == expected
    page_url = "http://site.test" + bsite.page_path(source)
    assert urldefrag(urljoin(page_url, expected))[0] == "http://site.test" + bsite.page_path(target)


@pytest.mark.parametrize("pages, depth", [(1, 7), (3, 7), (10, 7), (300, 7), (5000, 7), (50_000, 7), (1000, 3)])
def test_layout_fills_every_level_and_sums_to_the_page_count(pages, depth):
    shape = bsite.layout(bsite.SiteSpec(pages=pages, depth=depth))
    assert shape.pages == pages
    assert len(shape.level_sizes) == min(depth, pages - 1) + 1
    assert all(size >= 1 for size in shape.level_sizes)
    assert all(shape.parent(p) is not None and shape.level_of(shape.parent(p)) == shape.level_of(p) - 1
               for p in range(1, min(pages, 2000)))


def test_ensure_reuses_a_site_of_the_same_spec_and_regenerates_another(tmp_path):
    spec = bsite.SiteSpec(pages=30, page_bytes=2000, seed=3)
    bsite.generate(spec, tmp_path)
    marker = tmp_path / "index.html"
    marker.write_bytes(b"changed")
    assert bsite.ensure(spec, tmp_path).spec == spec
    assert marker.read_bytes() == b"changed"            # reused, not rewritten
    bsite.ensure(bsite.SiteSpec(pages=30, page_bytes=2000, seed=4), tmp_path)
    assert marker.read_bytes().startswith(b"<!DOCTYPE html>")


# -- nginx -----------------------------------------------------------------------
def test_config_serves_the_root_on_loopback_with_one_worker_keepalive_and_its_own_files(tmp_path):
    text = render_config(Path("/srv/site"), 18123, tmp_path, user="www-data")
    assert "listen 127.0.0.1:18123;" in text and "root /srv/site;" in text
    assert "worker_processes 1;" in text and "user www-data;" in text
    assert f"pid {tmp_path}/nginx.pid;" in text and f"access_log {tmp_path}/access.log bench;" in text
    assert "keepalive_requests 1000000;" in text and "daemon off;" in text
    assert all(f"{kind}_temp_path {tmp_path}/" in text for kind in ("client_body", "proxy", "fastcgi"))
    assert "user " not in render_config(Path("/srv/site"), 1, tmp_path)


@needs_nginx
def test_rendered_config_passes_nginx_own_check(tmp_path):
    conf = tmp_path / "nginx.conf"
    conf.write_text(render_config(tmp_path, 18124, tmp_path))
    done = subprocess.run([find_nginx(), "-t", "-p", str(tmp_path), "-c", str(conf), "-e", str(tmp_path / "e.log")],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_access_log_lines_parse_into_entries():
    assert parse_log_line("/p/0/5.html 200 16172 4 3\n") == LogEntry("/p/0/5.html", 200, 16172, 4, 3)
    assert parse_log_line("garbage\n") is None


@needs_nginx
def test_nginx_serves_files_logs_each_request_and_stops(small_site):
    directory, truth = small_site
    with Nginx(directory) as server:
        mark = server.mark()
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
        answers = []
        for path in ["/index.html", truth.assets[0], truth.broken[0]]:
            conn.request("GET", path)
            response = conn.getresponse()
            answers.append((response.status, response.getheader("Content-Type"), response.read()))
        conn.close()
        entries = server.requests_since(mark)
        pid, workdir = server.pid, server.workdir
        assert answers[0] == (200, "text/html", (directory / "index.html").read_bytes())
        assert answers[1][:2] == (200, "application/pdf") and answers[2][0] == 404
        assert [(e.path, e.status, e.nth) for e in entries] == [
            ("/index.html", 200, 1), (truth.assets[0], 200, 2), (truth.broken[0], 404, 3)]
        assert len({e.connection for e in entries}) == 1        # keep-alive: one connection
        assert server.cpu_seconds() >= 0
    assert not Path(f"/proc/{pid}").exists() and not workdir.exists()


# -- measuring and checking -------------------------------------------------------------
TIME_V = """\tCommand being timed: "x"
\tUser time (seconds): 1.25
\tSystem time (seconds): 0.50
\tMaximum resident set size (kbytes): 40960
\tExit status: 3
"""


def test_gnu_time_report_is_parsed():
    usage = parse_time_v(TIME_V)
    assert (usage.user_s, usage.sys_s, usage.max_rss_kb, usage.exit_status) == (1.25, 0.5, 40960, 3)
    assert usage.cpu_s == 1.75
    assert parse_time_v("").max_rss_kb == 0


@needs_time
def test_a_measured_command_reports_its_memory_cpu_and_exit_status(tmp_path):
    code = "import sys; b = bytearray(96 * 2**20); sum(range(3 * 10**6)); sys.exit(3)"
    measured = run_measured([sys.executable, "-c", code], tmp_path)
    assert measured.exit_code == 3 and not measured.timed_out
    assert measured.usage.max_rss_kb > 96 * 1024
    assert measured.usage.cpu_s > 0 and measured.wall_s >= measured.usage.user_s * 0.5


@needs_time
def test_a_run_over_its_time_limit_is_killed_with_its_children(tmp_path):
    code = "import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); time.sleep(60)"
    measured = run_measured([sys.executable, "-c", code], tmp_path, timeout=1.0)
    assert measured.timed_out and measured.wall_s < 10


def test_server_counts_find_missed_and_duplicate_pages(small_site):
    _, truth = small_site
    pages = truth.html_paths()
    entries = [LogEntry(p, 200, 1, 1, i) for i, p in enumerate(pages[2:])]
    entries += [LogEntry(pages[5], 200, 1, 2, 1), LogEntry("/robots.txt", 200, 1, 2, 2),
                LogEntry(truth.broken[0], 404, 1, 2, 3)]
    count = count_server(entries, truth)
    assert count == ServerCount(requests=len(pages) - 2 + 3, connections=2, html_fetched=len(pages) - 2,
                                html_duplicates=1, html_missed=2, other=2)


def test_saved_pages_are_checked_byte_for_byte_and_level_by_level(small_site, tmp_path):
    directory, truth = small_site
    pages, level_of = truth.html_paths(), truth.level_of_path()
    saved = []
    for i, path in enumerate(pages[:-1]):   # the last page is missing
        file = tmp_path / f"{i}.html"
        body = (directory / path.lstrip("/")).read_bytes()
        file.write_bytes(body + b"x" if i == 3 else body)   # page 3 differs
        saved.append(SavedPage(path, file, level_of[path] + (1 if i == 4 else 0)))   # page 4 on a wrong level
    saved += [SavedPage(pages[0], tmp_path / "0.html", 0), SavedPage("/files/doc-0.pdf", tmp_path / "0.html", 9)]
    check = check_saved(saved, truth, directory, check_levels=True)
    assert (check.identical, check.differ, check.duplicates, check.missing, check.other, check.wrong_level) == (
        len(pages) - 2, 1, 1, 1, 1, 1)
    assert check_saved(saved, truth, directory).wrong_level is None


def test_peer_outputs_are_read_back(tmp_path):
    (tmp_path / "pages").mkdir()
    (tmp_path / "pages/0.body").write_bytes(b"a")
    (tmp_path / "index.tsv").write_text("http://127.0.0.1:9/p/0/1.html#s2\t200\t1\tpages/0.body\n"
                                        "http://127.0.0.1:9/p/missing-0.html\t404\t2\tpages/1.body\n")
    assert saved_from_index_tsv(tmp_path) == [SavedPage("/p/0/1.html", tmp_path / "pages/0.body", 1)]
    mirror = tmp_path / "mirror"
    (mirror / "p/0").mkdir(parents=True)
    (mirror / "p/0/1.html").write_bytes(b"a")
    assert saved_from_mirror(mirror) == [SavedPage("/p/0/1.html", mirror / "p/0/1.html", None)]


# -- tables ------------------------------------------------------------------------
def _record(peer, round_no, wall, cpu, rss_kb=51200, pages=100, site_pages=100):
    return RunRecord(peer=peer, round=round_no, site_pages=site_pages, wall_s=wall, user_s=cpu, sys_s=0.0,
                     max_rss_kb=rss_kb, exit_code=0, exit_ok=True, timed_out=False, server_cpu_s=0.01,
                     server=ServerCount(pages + 1, 1, pages, 0, 0, 1),
                     saved=SavedCheck(pages, 0, 0, 0, 0, 0 if peer == "ours" else None,
                                      (1, pages - 1) if peer == "ours" else None))


def test_ratios_are_taken_per_round_then_the_median():
    records = [_record("ours", 1, 1.0, 0.5), _record("scrapy", 1, 2.0, 1.0),
               _record("ours", 2, 1.0, 0.5), _record("scrapy", 2, 4.0, 1.0),
               _record("ours", 3, 4.0, 0.5), _record("scrapy", 3, 4.0, 2.0)]
    ours, scrapy = summarize(records, truth_levels=(1, 99))
    assert ours.pages_per_s == 100 and scrapy.pages_per_s == 25
    assert ours.speed_ratio == 2.0                  # per round 2, 4, 1 -> median 2 (not 100 / 25 = 4)
    assert ours.cpu_ratio == 0.5 and scrapy.speed_ratio == 1.0
    assert ours.levels_exact is True and scrapy.levels_exact is None
    assert summarize(records, truth_levels=(2, 98))[0].levels_exact is False


def test_compare_table_is_markdown_with_aligned_columns():
    table = compare_table(summarize([_record("ours", 1, 0.5, 0.2), _record("scrapy", 1, 1.0, 0.8)]))
    lines = table.splitlines()
    assert lines[0].startswith("| peer   | pages | wall s | pages/s |")
    assert lines[1].startswith("|:-------|------:|-------:|--------:|")
    assert lines[2].startswith("| ours   |   100 |   0.50 |     200 |  0.20 |        2.00 |          50 |")
    assert "|            2.00× |                0.25× |" in lines[2]
    assert len({len(line) for line in lines}) == 1
    assert markdown_table(("a", "b"), [("x", "1")], left=2) == "| a | b |\n|:--|:--|\n| x | 1 |"


def test_scaling_table_reports_speed_against_5k_and_rss_growth_per_page():
    records = [_record("ours", 1, 10.0, 5.0, rss_kb=40_000, pages=1000, site_pages=1000),
               _record("ours", 1, 50.0, 25.0, rss_kb=50_000, pages=5000, site_pages=5000),
               _record("ours", 1, 220.0, 100.0, rss_kb=80_000, pages=20000, site_pages=20000)]
    rows = scaling_table(records).splitlines()[2:]
    assert [row.split("|")[4].strip() for row in rows] == ["100", "100", "91"]
    assert [row.split("|")[5].strip() for row in rows] == ["1.00×", "1.00×", "0.91×"]
    assert [row.split("|")[8].strip() for row in rows] == ["—", f"{10_000 * 1024 / 4000:.0f}", f"{30_000 * 1024 / 15000:.0f}"]
    assert rss_growth_per_page(records) == pytest.approx(2126.2, rel=1e-4)


def test_results_md_is_rendered_from_stored_results(tmp_path):
    import json
    records = [_record("ours", 1, 0.5, 0.2), _record("scrapy", 1, 1.0, 0.8)]
    result = {"kind": "compare", "label": "baseline, before optimisation", "started": "2026-01-01T00:00:00+00:00",
              "elapsed_s": 3.0, "ours_source": {"commit": "abc1234", "dirty": False},
              "machine": {"cpu": "Test CPU", "cores": 2, "ram_gb": 4.0, "kernel": "6.1", "python": "3.11.7",
                          "nginx": "nginx/1.22.1", "wget": "GNU Wget 1.21.3", "scrapy": "2.19.0",
                          "date": "2026-01-01 00:00 UTC", "load_average": ["0.10", "0.20", "0.30"]},
              "settings": {"pages": 100, "page_bytes": 16000, "links_per_page": 27, "rounds": 1,
                           "peers": ["ours", "scrapy"], "ours_args": ""},
              "site_levels": [1, 99], "runs": [r.to_dict() for r in records],
              "summary": [s.__dict__ for s in summarize(records)]}
    (tmp_path / "compare-100.json").write_text(json.dumps(result))
    text = render_results(tmp_path)
    assert "## baseline, before optimisation — compare, 2026-01-01 00:00 UTC" in text
    assert "commit `abc1234`" in text and "Test CPU, 2 cores" in text
    assert compare_table(summarize(records)) in text
    assert "kept 0.00 of its 2 cores busy" in text
    assert [RunRecord.from_dict(r.to_dict()) for r in records] == records
    scaled = [_record("ours", 1, 10.0, 5.0, pages=n, site_pages=n) for n in (1000, 5000)]
    (tmp_path / "scaling.json").write_text(json.dumps({
        **result, "kind": "scaling", "label": "", "started": "2026-01-02T00:00:00+00:00",
        "site_levels": {"1000": [1, 999], "5000": [1, 4999]}, "runs": [r.to_dict() for r in scaled],
        "summary": []}))
    (tmp_path / "micro.md").write_text("## URL_Filter µs per link\n\n| a |\n|---|\n| 1 |\n")
    text = render_results(tmp_path)
    assert text.index("## scaling — scaling") < text.index("## baseline")   # newest first
    assert "1000, 5000 pages of ~16 KB" in text and scaling_table(scaled) in text
    # A micro-benchmark's own table is kept, after the crawl benchmarks.
    assert text.index("## baseline") < text.index("## URL_Filter µs per link\n\n| a |")


# -- end to end (ours + wget; Scrapy is too slow to install here) ---------------------------------
@needs_nginx
@needs_time
@needs_wget
def test_a_small_interleaved_comparison_checks_every_page(tmp_path):
    settings = Settings(pages=60, rounds=1, peers=("ours", "wget"), page_bytes=3000, links_per_page=10)
    truth, records = compare(settings, tmp_path)
    assert [r.peer for r in records] == ["ours", "wget"]
    ours, wget = records
    for r in records:
        assert r.exit_ok and r.pages == truth.total and r.fetched_once and r.saved_all_identical, r
    assert ours.saved.wrong_level == 0 and ours.saved.levels == truth.levels
    assert ours.server.requests == truth.total + 1 + len(truth.broken)   # robots.txt; .pdf/.png skipped
    assert wget.server.requests == truth.total + len(truth.assets) + len(truth.broken)
    assert not (tmp_path / "runs/ours-1/out").exists()   # outputs are deleted after checking


def test_cli_rejects_an_unknown_peer():
    result = CliRunner().invoke(main, ["--peers", "ours,curl", "--no-save"])
    assert result.exit_code == 2 and "unknown peer 'curl'" in result.output

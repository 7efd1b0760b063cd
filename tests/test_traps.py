"""The trap guard's pattern rule (--max-pattern-depth) in real crawls of an
endless calendar, and reports of a crawl hundreds of levels deep.

The calendar site: "/" links /events/, /about/ and forty stories
/news/1.html .. /news/40.html (one numbered family, found on one level;
each story links the next); /events/ links /calendar/2026/11/, and every
month links the month before and after it, forever. Breadth-first, the
calendar's first month is at level 2 and two new months appear one level
deeper each time.
"""
from __future__ import annotations

import csv
import json
import subprocess
import sys
import re
from pathlib import Path

import pytest

from controller.config import CrawlConfig
from controller.engine import Crawl
from controller.readers.report import build_report, render_report, sections
from demosite import Response
from redisserver import wait_created

STORIES = 40
FINITE = ["/", "/events/", "/about/"] + [f"/news/{k}.html" for k in range(1, STORIES + 1)]
FIRST_MONTH = (2026, 11)
FIRST_LEVEL = 2          # of the first month
DEFAULT_DEPTH = 10       # --max-pattern-depth's default


def month_path(offset: int) -> str:
    """The month ``offset`` months after the first one."""
    index = FIRST_MONTH[0] * 12 + FIRST_MONTH[1] - 1 + offset
    return "/calendar/%04d/%02d/" % (index // 12, index % 12 + 1)


def calendar_site(request):
    path = request.path
    links: list[str] = []
    if path == "/":
        links = ["/events/", "/about/"] + [f"/news/{k}.html" for k in range(1, STORIES + 1)]
    elif path == "/events/":
        links = [month_path(0)]
    elif path == "/about/":
        links = ["/"]
    elif match := re.fullmatch(r"/news/(\d+)\.html", path):
        k = int(match.group(1))
        links = ["/"] + ([f"/news/{k + 1}.html"] if k < STORIES else [])
    elif match := re.fullmatch(r"/calendar/(\d{4})/(\d{2})/", path):
        year, month = int(match.group(1)), int(match.group(2))
        links = [month_path((year * 12 + month - 1) - (FIRST_MONTH[0] * 12 + FIRST_MONTH[1] - 1) + d)
                 for d in (-1, 1)] + ["/events/"]
    else:
        return Response(404, {"Content-Type": "text/plain"}, b"not found")
    body = "".join(f'<p><a href="{link}">{link}</a></p>' for link in links)
    return Response(200, {"Content-Type": "text/html; charset=utf-8"},
                    f"<html><head><title>{path}</title></head><body>{body}</body></html>".encode())


def crawler(*args, timeout=120):
    return subprocess.run([sys.executable, "-m", "controller", *args],
                          capture_output=True, text=True, timeout=timeout)


def rows_of(out: Path) -> list[dict]:
    with open(out / "index.csv", newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def fetched_paths(log) -> list[str]:
    return [r.path for r in log if r.path != "/robots.txt"]


def test_an_unbounded_crawl_follows_the_calendar_ten_levels_and_names_the_trap(serve, tmp_path):
    with serve(calendar_site) as (url, log):
        stats = Crawl(CrawlConfig(seeds=(url,), out=tmp_path / "out", max_depth=0, max_pages=3000,
                                  workers=4, per_host=4, delay=0, progress=False)).run()
        requested = fetched_paths(log)
    host = url.split("/")[2]
    months = {month_path(d) for d in range(-DEFAULT_DEPTH, DEFAULT_DEPTH + 1)}
    assert sorted(requested) == sorted(FINITE + list(months))   # each once, the site complete
    levels = {r["url"].split("/", 3)[3]: int(r["level"]) for r in rows_of(tmp_path / "out")}
    assert max(levels.values()) == FIRST_LEVEL + DEFAULT_DEPTH
    # The two months one level further are what the rule refused.
    assert stats["skipped_links"]["pattern-depth"] == 2
    assert stats["trap_patterns"] == {f"{host}/calendar/<n>/<n>/": 2}
    assert stats["stop_reason"] == "queue-empty"
    assert stats["stop_detail"] == f"queue-empty; trap guard: {host}/calendar/<n>/<n>/ 2 URLs not followed"
    assert stats["settings"]["max_pattern_depth"] == DEFAULT_DEPTH
    traps = [line.split(" ", 2)[2] for line in (tmp_path / "out" / "trace.log").read_text().splitlines()
             if line.split(" ")[1:2] == ["TRAP"]]
    assert traps == [f"{FIRST_LEVEL + DEFAULT_DEPTH + 1} {host}/calendar/<n>/<n>/"]   # logged once
    overview = render_report(build_report(tmp_path / "out")).split("\n\n")[1]
    assert f"\n  trap guard  {host}/calendar/<n>/<n>/ 2 URLs not followed" in overview


def test_max_pattern_depth_zero_follows_the_calendar_until_the_page_budget(serve, tmp_path):
    out = tmp_path / "out"
    with serve(calendar_site) as (url, log):
        done = crawler("crawl", url, "--out", str(out), "--max-depth", "0", "--max-pages", "200",
                       "--max-pattern-depth", "0", "--delay", "0")
        requested = fetched_paths(log)
    assert done.returncode == 0, done.stderr
    stats = json.loads((out / "stats.json").read_text())
    assert stats["stop_reason"] == "max-pages" and "trap guard" not in stats["stop_detail"]
    assert "pattern-depth" not in stats["skipped_links"] and stats["trap_patterns"] == {}
    assert sum(path.startswith("/calendar/") for path in requested) >= 200 - len(FINITE)


def test_the_guard_option_is_in_help_and_in_the_config_file(tmp_path):
    assert "--max-pattern-depth" in crawler("crawl", "--help").stdout
    config = tmp_path / "crawl.toml"
    config.write_text("max-pattern-depth = -1\n")
    refused = crawler("crawl", "http://127.0.0.1:1/", "--out", str(tmp_path / "o"),
                      "--config", str(config))
    assert refused.returncode == 2 and "max-pattern-depth" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "o").exists()


# -- a crawl hundreds of levels deep, and its reports ----------------------------

DEEP_PAGES = 700


@pytest.fixture(scope="module")
def deep_crawl(tmp_path_factory):
    """The calendar followed with the guard off: about 330 levels."""
    from demosite.server import serve
    out = tmp_path_factory.mktemp("deep") / "out"
    with serve(calendar_site) as (url, _):
        done = crawler("crawl", url, "--out", str(out), "--max-depth", "0", "--max-pages",
                       str(DEEP_PAGES), "--max-pattern-depth", "0", "--delay", "0")
    assert done.returncode == 0, done.stderr
    return out, done.stdout


def test_the_levels_table_shows_thirty_levels_then_ranges(deep_crawl):
    out, _ = deep_crawl
    stats = json.loads((out / "stats.json").read_text())
    deepest = max(level["level"] for level in stats["levels"])
    assert 300 <= deepest < 400   # the fixture is what the test is about
    report = build_report(out)
    levels = next(t for t in sections(report) if t.title == "Levels")
    labels = [row[0] for row in levels.rows[:-1]]
    # Past 40 levels: 0..29 one by one, then ranges 50 wide (the narrowest
    # round width giving at most 10 ranges), aligned to multiples of 50.
    assert labels == ([str(k) for k in range(30)] + ["30–49"]
                      + [f"{s}–{min(s + 49, deepest)}" for s in range(50, deepest + 1, 50)])
    by_level = {level["level"]: level for level in stats["levels"]}
    for row in levels.rows[30:-1]:
        first, last = map(int, row[0].split("–"))
        assert int(row[1]) == sum(by_level[k]["urls"] for k in range(first, last + 1))
        assert row[7] == str(by_level[last]["m"])
    assert levels.rows[-1][1] == str(stats["urls"])


def test_reports_of_hundreds_of_levels_stay_short(deep_crawl, tmp_path):
    out, crawl_stdout = deep_crawl
    text = crawler("report", str(out))
    assert text.returncode == 0, text.stderr
    assert len(text.stdout.splitlines()) < 160
    assert re.search(r"^\s+30–49\s+40\s+40\s+0\s", text.stdout, re.M)
    assert not re.search(r"^\s+45\s", text.stdout, re.M)   # level 45 is in 30–49
    markdown = crawler("report", str(out), "--format", "markdown").stdout
    assert "\n| 50–99 | 100 | 100 | 0 | 0 | 0 | 100 |" in markdown
    # The summary printed after the crawl groups its levels the same way.
    assert re.search(r"^\s+50–99\s+100\s+100\s", crawl_stdout, re.M)
    assert len(crawl_stdout.splitlines()) < 50
    html_out = crawler("report", str(out), "--format", "html")
    assert html_out.returncode == 0, html_out.stderr
    cells = re.findall(r"<td[^>]*>([0-9–]+)</td>", html_out.stdout)
    assert "50–99" in cells and "45" not in cells
    assert len(html_out.stdout) < 600_000


def test_the_plot_has_one_bar_per_row_of_the_levels_table(deep_crawl):
    pytest.importorskip("matplotlib")
    from controller.readers.plot import draw
    out, _ = deep_crawl
    report = build_report(out)
    levels = next(t for t in sections(report) if t.title == "Levels")
    labels = [row[0] for row in levels.rows[:-1]]
    assert len(labels) <= 30 + 1 + 10 < len(report.levels)   # ranges, not 330 bars
    figure = draw(report)
    panels = [ax for ax in figure.get_axes() if ax.get_title() == "Pages per level (breadth-first)"]
    (axes,) = panels
    assert [tick.get_text() for tick in axes.get_xticklabels()] == labels
    (timeline,) = [ax for ax in figure.get_axes() if ax.get_title().startswith("Pages fetched over")]
    marks = [t.get_text() for t in timeline.texts if t.get_text().startswith("L")]
    ends = [f"L{label.split('–')[-1]}" for label in labels]
    # Where rows of the table end, in order, never crowded (at most one per 3 % of the axis).
    assert marks[0] == "L0" and set(marks) <= set(ends) and marks == sorted(marks, key=ends.index)
    assert 5 <= len(marks) <= 34


# -- the demo site ------------------------------------------------------------------

def test_the_demo_sites_own_url_families_fit_in_the_default_budget(demo_site):
    """No numbered family of the demo site's finite part spans more levels
    than the default allows, and the default demo crawl (depth 6) reaches
    the calendar less deep than that: the rule cuts neither, so the ground
    truth needs no rule of its own."""
    from urlfilter.traps import pattern_of
    truth = demo_site.ground_truth(max_depth=60)
    spans: dict[str, list[int]] = {}
    for url, level in truth.url_levels.items():
        if not url.startswith("/calendar/") and (pattern := pattern_of("http://h" + url)):
            spans.setdefault(pattern, []).append(level)
    assert spans and max(max(v) - min(v) for v in spans.values()) <= DEFAULT_DEPTH // 2
    calendar = [level for url, level in demo_site.ground_truth(max_depth=6).url_levels.items()
                if url.startswith("/calendar/")]
    assert max(calendar) - min(calendar) < DEFAULT_DEPTH


def test_an_unbounded_demo_crawl_stays_out_of_the_calendar(demo_site, demo_server, tmp_path):
    out = tmp_path / "out"
    stats = Crawl(CrawlConfig(seeds=(demo_server.url,), out=out, max_depth=0, max_pages=3000,
                              workers=4, per_host=4, delay=0, progress=False)).run()
    rows = rows_of(out)
    levels = {"/" + r["url"].split("/", 3)[3]: int(r["level"]) for r in rows}
    calendar = [path for path in levels if path.startswith("/calendar/")]
    assert len(calendar) < 0.05 * len(rows)
    # The rest of the site is crawled completely, every URL at its level.
    truth = demo_site.ground_truth(max_depth=60)
    trapless = {url: level for url, level in truth.url_levels.items() if not url.startswith("/calendar/")}
    assert {path: level for path, level in levels.items() if not path.startswith("/calendar/")} == trapless
    host = demo_server.url.split("/")[2]
    assert f"; trap guard: {host}/calendar/<n>/<n>/ " in stats["stop_detail"]
    report = crawler("report", str(out))
    assert report.returncode == 0 and len(report.stdout.splitlines()) < 150


def test_a_resumed_crawl_remembers_where_each_pattern_began(serve, tmp_path):
    """Stopped by its page budget while in the calendar, then resumed without
    one: the queue replayed from the journal gives the pattern its first
    level back, so the months fetched are those of an uninterrupted crawl."""
    out = tmp_path / "out"
    with serve(calendar_site) as (url, log):
        first = crawler("crawl", url, "--out", str(out), "--max-depth", "0", "--max-pages", "50",
                        "--delay", "0")
        assert first.returncode == 0, first.stderr
        assert json.loads((out / "stats.json").read_text())["stop_reason"] == "max-pages"
        months_before = {p for p in fetched_paths(log) if p.startswith("/calendar/")}
        again = crawler("crawl", url, "--out", str(out), "--max-depth", "0", "--max-pages", "0",
                        "--delay", "0", "--resume")
        assert again.returncode == 0, again.stderr
        requested = fetched_paths(log)
    assert 0 < len(months_before) < 2 * DEFAULT_DEPTH
    months = {month_path(d) for d in range(-DEFAULT_DEPTH, DEFAULT_DEPTH + 1)}
    assert {p for p in requested if p.startswith("/calendar/")} == months
    assert {r["url"].split("/", 3)[3] for r in rows_of(out)} == {p[1:] for p in FINITE} | {m[1:] for m in months}


def test_a_shared_crawl_refuses_the_same_months_as_one_machine(serve, tmp_path, redis_server):
    """Two workers through Redis: the pattern's first level is kept in Redis,
    so together they fetch exactly the months one machine fetches, and the
    merged crawl names the trap."""
    dirs = [tmp_path / "w0", tmp_path / "w1"]
    with serve(calendar_site) as (url, log):
        first = subprocess.Popen([sys.executable, "-m", "controller", "crawl", url, "--redis",
                                  redis_server.url, "--crawl-id", "cal", "--out", str(dirs[0]),
                                  "--max-depth", "0", "--max-pages", "0", "--delay", "0", "--quiet"],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        wait_created(redis_server.url, [first], crawl_id="cal")
        second = crawler("worker", "--redis", redis_server.url, "--crawl-id", "cal", "--out",
                         str(dirs[1]), "--quiet", "--processes", "1")
        _, err = first.communicate(timeout=120)
        assert first.returncode == 0, err
        assert second.returncode == 0, second.stderr
        requested = fetched_paths(log)
    months = {month_path(d) for d in range(-DEFAULT_DEPTH, DEFAULT_DEPTH + 1)}
    assert sorted(requested) == sorted(FINITE + list(months))
    merged = tmp_path / "merged"
    done = crawler("merge", "--out", str(merged), *map(str, dirs))
    assert done.returncode == 0, done.stderr
    stats = json.loads((merged / "stats.json").read_text())
    host = url.split("/")[2]
    assert stats["skipped_links"]["pattern-depth"] == 2
    assert stats["stop_detail"].endswith(f"; trap guard: {host}/calendar/<n>/<n>/ 2 URLs not followed")


def test_a_crawl_stopped_between_two_trap_refusals_keeps_the_uninterrupted_verdict(serve, tmp_path):
    """The site has 64 pages; the two months at the guard's limit are the last
    two processed, and each refuses one month. Stopped after 63 pages (one
    refusal made) and resumed, the crawl names the trap with both refusals,
    as the uninterrupted crawl does: each page's refusals by pattern are
    journaled with it and counted again for the committed pages."""
    out = tmp_path / "out"
    with serve(calendar_site) as (url, _log):
        host = url.split("/")[2]
        first = crawler("crawl", url, "--out", str(out), "--max-depth", "0", "--max-pages", "63",
                        "--delay", "0", "--workers", "1")
        assert first.returncode == 0, first.stderr
        stopped = json.loads((out / "stats.json").read_text())
        assert stopped["stop_reason"] == "max-pages"
        assert stopped["trap_patterns"] == {f"{host}/calendar/<n>/<n>/": 1}
        again = crawler("crawl", url, "--out", str(out), "--max-depth", "0", "--max-pages", "0",
                        "--delay", "0", "--resume")
        assert again.returncode == 0, again.stderr
    stats = json.loads((out / "stats.json").read_text())
    assert stats["urls"] == len(FINITE) + 2 * DEFAULT_DEPTH + 1
    assert stats["skipped_links"]["pattern-depth"] == 2
    assert stats["trap_patterns"] == {f"{host}/calendar/<n>/<n>/": 2}
    assert stats["stop_detail"] == f"queue-empty; trap guard: {host}/calendar/<n>/<n>/ 2 URLs not followed"

"""`crawler report`: what it says about a real demo crawl (checked against the
demo site's own ground truth and answers), about hand-written crawl
directories with known numbers, about cut-off and missing files, and the PNG
it draws. Every report here is read after the demo server has stopped: a
report never needs the network."""
import csv
import io
import json
import os
import shutil
import struct
import sys
import subprocess
from dataclasses import asdict
from datetime import datetime, timedelta, timezone
from urllib.parse import urlsplit

import pytest

from controller.config import CrawlConfig
from controller.engine import Crawl
from controller.readers.plot import draw, write_plot
from controller.readers.report import ReportError, build_report, render_report
from controller.readers.summary import level_table
from controller.store import INDEX_COLUMNS
from demosite import DemoServer
from demosite.model import is_disallowed

DEPTH = 6
STOP_AT_LEVEL = 3   # the report taken while the crawl runs, right after this level ends


def path_of(url):
    parts = urlsplit(url)
    return parts.path + (f"?{parts.query}" if parts.query else "")


@pytest.fixture(scope="module")
def demo(tmp_path_factory, demo_site):
    """A finished demo crawl, plus a report taken while that crawl was running."""
    out = tmp_path_factory.mktemp("report") / "demo"
    during = {}

    def on_level(level, row):
        if level == STOP_AT_LEVEL:
            during["report"] = build_report(out)

    with DemoServer(demo_site) as server:
        config = CrawlConfig(seeds=(server.url,), out=out, max_depth=DEPTH, max_pages=0,
                             workers=4, per_host=4, delay=0, retry_backoff=0.05, processes=0,
                             progress=False)
        stats = Crawl(config, on_level=on_level).run()
    return out, stats, during["report"]


def expected_levels(truth, upto=None):
    """(level, urls, pages, new urls, m) of a correct crawl: level k's new URLs are
    level k+1's URLs, and m is the queue total once level k+1 is known."""
    sizes = [level.urls for level in truth.levels]
    rows = []
    for k, level in enumerate(truth.levels[:upto]):
        new = sizes[k + 1] if k + 1 < len(sizes) else 0
        rows.append((k, level.urls, level.pages, new, sum(sizes[:k + 2])))
    return rows


def served(site, path):
    """(status, media type) the demo site gives path, after redirects; None for robots."""
    if is_disallowed(path):
        return None, "none"
    for _ in range(6):
        response = site.respond(path, "127.0.0.1")
        if response.status not in (301, 302, 303, 307, 308):
            break
        path = path_of(response.headers["Location"])
    return response.status, response.headers["Content-Type"].split(";")[0]


# -- a finished demo crawl ---------------------------------------------------
def test_level_table_matches_the_demo_sites_ground_truth(demo, demo_site):
    out, stats, _ = demo
    report = build_report(out)
    truth = demo_site.ground_truth(DEPTH)
    assert [(r.level, r.urls, r.pages, r.new_urls, r.m) for r in report.levels] == \
        expected_levels(truth)
    assert (report.urls, report.pages) == (truth.total_urls, truth.total_pages)
    assert report.finished and report.stop_reason == "max-depth" and report.notes == ()
    assert report.runs == 1 and report.seeds == tuple(stats["seeds"])


def test_status_codes_and_content_types_are_what_the_site_served(demo, demo_site):
    out, _, _ = demo
    report = build_report(out)
    answers = [served(demo_site, path) for path in demo_site.ground_truth(DEPTH).url_levels]
    statuses = {}
    for status, _ in answers:
        key = "none" if status is None else str(status)
        statuses[key] = statuses.get(key, 0) + 1
    types = {}
    for _, media in answers:
        types[media] = types.get(media, 0) + 1
    assert {c.value: c.count for c in report.status_codes} == statuses
    assert {c.value: c.count for c in report.content_types} == types
    assert [c.count for c in report.content_types] == sorted(types.values(), reverse=True)


def test_errors_are_grouped_by_kind_with_example_urls(demo, demo_site):
    out, _, _ = demo
    report = build_report(out)
    paths = demo_site.ground_truth(DEPTH).url_levels
    robots = {p for p in paths if is_disallowed(p)}
    http = {p: served(demo_site, p)[0] for p in paths if (served(demo_site, p)[0] or 0) >= 400}
    groups = {g.kind: g for g in report.errors_by_kind}
    assert set(groups) == {"robots", "http"}
    assert groups["robots"].count == len(robots)
    assert {path_of(e.url) for e in groups["robots"].examples} == robots
    assert groups["http"].count == len(http)
    assert {path_of(e.url): int(e.detail.split()[0]) for e in groups["http"].examples} == http


def test_speed_agrees_with_stats_json(demo):
    out, stats, _ = demo
    speed = build_report(out).speed
    assert speed.fetches == stats["urls"] and speed.bytes == stats["bytes"]
    # The trace's START..END and the Controller's clock measure the same run.
    assert speed.crawl_seconds == pytest.approx(stats["elapsed_seconds"], abs=0.05)
    assert speed.average_urls_per_second == pytest.approx(stats["urls_per_second"], rel=0.05)
    if speed.crawl_seconds < speed.peak_window_seconds:
        assert speed.peak_urls_per_second is None   # no whole window to measure
    else:
        # Pigeonhole: some 1-second span holds at least fetches / ceil(seconds).
        seconds = -(-speed.crawl_seconds // 1)
        assert speed.peak_urls_per_second >= speed.fetches / seconds


def test_links_ratio_and_dedup_come_from_edges_index_and_stats(demo):
    out, stats, _ = demo
    report = build_report(out, top=5)
    with open(out / "edges.csv", newline="", encoding="utf-8") as f:
        edges = [row for row in csv.DictReader(f)]
    linking = {}
    for edge in edges:
        if edge["to_url"] != edge["from_url"]:
            linking.setdefault(edge["to_url"], set()).add(edge["from_id"])
    top = report.top_in_links
    assert len(top) == 5
    assert [link.links for link in top] == sorted((len(v) for v in linking.values()),
                                                   reverse=True)[:5]
    assert all(len(linking[link.url]) == link.links for link in top)
    ratio = report.filtered_ratio
    assert ratio.pages == stats["pages"] and ratio.overall == stats["filtered_ratio"]["overall"]
    assert ratio.mean == pytest.approx(stats["filtered_ratio"]["mean_per_page"], abs=1e-3)
    assert sum(bucket.pages for bucket in ratio.histogram) == stats["pages"]
    assert report.dedup == stats["dedup"] and report.skipped_links == stats["skipped_links"]


def test_a_report_taken_while_the_crawl_runs_says_it_is_partial_and_running(demo, demo_site):
    out, _, during = demo
    truth = demo_site.ground_truth(DEPTH)
    assert [(r.level, r.urls, r.pages, r.new_urls, r.m) for r in during.levels] == \
        expected_levels(truth, upto=STOP_AT_LEVEL + 1)
    assert not during.finished and during.stop_reason is None and during.dedup is None
    assert any("stats.json is missing" in note for note in during.notes)
    assert f"no END line for the last run: the crawl is running (pid {os.getpid()})" in \
        " ".join(during.notes)
    assert (during.running, during.pid) == (True, os.getpid())   # this process crawled it
    assert f"PARTIAL: running (pid {os.getpid()})" in render_report(during)
    assert build_report(out).finished


# -- cut-off, missing and foreign files ----------------------------------------
def copy_crawl(source, target):
    target.mkdir()
    for name in ("index.csv", "trace.log", "edges.csv", "stats.json"):
        shutil.copy(source / name, target / name)
    return target


def cut_last_line_in_half(path):
    data = path.read_bytes()
    start = data.rstrip(b"\n").rfind(b"\n") + 1
    path.write_bytes(data[:start + (len(data) - start) // 2])


def test_a_killed_crawl_with_cut_lines_and_no_stats_is_reported_as_partial(demo, demo_site, tmp_path):
    out, _, _ = demo
    crawl = copy_crawl(out, tmp_path / "killed")
    cut_last_line_in_half(crawl / "index.csv")
    cut_last_line_in_half(crawl / "trace.log")     # the END line
    (crawl / "stats.json").unlink()
    report = build_report(crawl)
    truth = demo_site.ground_truth(DEPTH)
    assert report.urls == truth.total_urls - 1
    assert [(r.level, r.urls) for r in report.levels] == \
        [(k, level.urls - (k == DEPTH)) for k, level in enumerate(truth.levels)]
    assert not report.finished and report.stop_reason is None
    notes = " ".join(report.notes)
    for expected in ("index.csv: the last line is cut off", "trace.log: the last line is cut off",
                     "stats.json is missing", "no END line"):
        assert expected in notes
    assert report.dedup is None and report.filtered_ratio.overall is None
    text = render_report(report)
    assert "PARTIAL" in text and "not available: stats.json" in text


def test_a_lock_file_nobody_holds_means_the_crawl_was_killed(demo, tmp_path):
    out, _, _ = demo
    crawl = copy_crawl(out, tmp_path / "killed")
    cut_last_line_in_half(crawl / "trace.log")     # the END line
    (crawl / "stats.json").unlink()
    unknown = build_report(crawl)                  # made before crawls had a lock file
    assert unknown.running is None and "still running, or killed" in render_report(unknown)
    (crawl / "state").mkdir()
    (crawl / "state" / "lock").write_text("4242 2026-01-01T00:00:00.000Z\n")
    killed = build_report(crawl)
    assert (killed.running, killed.pid) == (False, None)
    assert "PARTIAL: killed before it finished" in render_report(killed)
    assert "no END line for the last run: the crawl was killed" in " ".join(killed.notes)
    assert sorted(p.name for p in (crawl / "state").iterdir()) == ["lock"]


def test_without_trace_log_the_level_flags_come_from_stats_json(demo, demo_site, tmp_path):
    out, _, _ = demo
    crawl = copy_crawl(out, tmp_path / "no-trace")
    (crawl / "trace.log").unlink()
    report = build_report(crawl)
    assert [(r.level, r.urls, r.pages, r.new_urls, r.m) for r in report.levels] == \
        expected_levels(demo_site.ground_truth(DEPTH))
    assert report.speed.fetches == 0 and report.speed.average_urls_per_second is None
    assert any(note.startswith("trace.log is missing") for note in report.notes)
    assert report.finished and report.stop_reason == "max-depth"


def test_a_cut_edges_line_and_edges_of_uncommitted_pages_are_not_counted(tmp_path):
    crawl = write_crawl(tmp_path / "c", rows=[row(0, "http://h/", 0), row(1, "http://h/a", 1)],
                        edges=[(0, "http://h/", "http://h/a"), (1, "http://h/a", "http://h/b"),
                               (7, "http://h/x", "http://h/a")],
                        trace=[])
    with open(crawl / "edges.csv", "a", encoding="utf-8") as f:
        f.write("1,http://h/a,http://h/")   # no newline: being written
    report = build_report(crawl)
    assert {(link.url, link.links) for link in report.top_in_links} == \
        {("http://h/a", 1), ("http://h/b", 1)}
    assert any(note.startswith("edges.csv: the last line is cut off") for note in report.notes)


def test_an_empty_directory_is_a_one_line_error(tmp_path):
    with pytest.raises(ReportError, match="is empty") as error:
        build_report(tmp_path)
    assert "\n" not in str(error.value) and str(tmp_path) in str(error.value)


def other_files(d):
    d.mkdir()
    (d / "notes.txt").write_text("hello\n")


def foreign_index(d):
    d.mkdir()
    (d / "index.csv").write_text("a,b\n1,2\n")


def a_file(d):
    d.write_text("not a directory\n")


@pytest.mark.parametrize("make, message", [
    (other_files, "not a crawl directory: it has no index.csv"),
    (foreign_index, "is not a crawler index"),
    (a_file, "is not a directory"),
    (lambda d: None, "does not exist"),
])
def test_a_directory_without_a_crawl_is_a_one_line_error(tmp_path, make, message):
    target = tmp_path / "dir"
    make(target)
    with pytest.raises(ReportError, match=message) as error:
        build_report(target)
    assert "\n" not in str(error.value)


def test_an_unreadable_file_is_a_one_line_error(demo, tmp_path):
    out, _, _ = demo
    crawl = copy_crawl(out, tmp_path / "c")
    (crawl / "trace.log").unlink()
    (crawl / "trace.log").mkdir()        # reading it fails even as root
    with pytest.raises(ReportError, match="cannot read .*trace.log") as error:
        build_report(crawl)
    assert "\n" not in str(error.value)


# -- hand-written crawls with known numbers ------------------------------------
T0 = datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)


def at(seconds):
    return (T0 + timedelta(seconds=seconds)).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def row(id, url, level, status=200, ctype="text/html", size=1000, ratio=0.5, error="",
        new_links=0):
    saved = status == 200 and not error
    return {"id": id, "url": url, "final_url": url, "level": level, "parent_id": "",
            "status": "" if status is None else status, "content_type": ctype, "encoding": "utf-8",
            "bytes": size, "text_chars": 100 if saved else "", "filtered_ratio": ratio if saved else "",
            "out_links": 0, "new_links": new_links, "fetched_at": at(0), "elapsed_ms": 1,
            "html_path": f"pages/{id}.html" if saved else "", "text_path": "", "error": error,
            "title": ""}


def write_crawl(path, rows, edges, trace, stats=None):
    path.mkdir(parents=True)
    with open(path / "index.csv", "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, INDEX_COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    with open(path / "edges.csv", "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows([("from_id", "from_url", "to_url"), *edges])
    (path / "trace.log").write_text("# header\n" + "".join(line + "\n" for line in trace),
                                    encoding="utf-8")
    if stats is not None:
        (path / "stats.json").write_text(json.dumps(stats), encoding="utf-8")
    return path


def fetch_line(seconds, id, size=1024):
    return f"{at(seconds)} FETCH 0 {id} 200 {size} 5 http://h/{id}"


def test_peak_rate_is_the_busiest_second_and_the_average_spans_the_run(tmp_path):
    # 10 fetches within 0.45 s, then one a second: the peak is 10 URLs/s.
    times = [0.05 * k for k in range(10)] + [1.0, 2.0, 3.0, 4.0, 5.0]
    trace = [f"{at(0)} START http://h/"] + [fetch_line(t, k, 2048) for k, t in enumerate(times)]
    trace.append(f"{at(5.0)} END queue-empty 15 5.00")
    # Three of the burst's URLs are 404s: URLs, not HTML pages.
    rows = [row(k, f"http://h/{k}", 0, status=404 if k in (1, 3, 5) else 200) for k in range(15)]
    speed = build_report(write_crawl(tmp_path / "c", rows, [], trace)).speed
    assert (speed.fetches, speed.crawl_seconds) == (15, 5.0)
    assert speed.average_urls_per_second == 3.0 and speed.average_kb_per_second == 6.0
    assert speed.average_pages_per_second == 2.4
    assert speed.peak_urls_per_second == 10.0 and speed.peak_kb_per_second == 20.0
    assert speed.peak_pages_per_second == 7.0


def test_a_crawl_shorter_than_the_peak_window_has_no_peak(tmp_path):
    trace = [f"{at(0)} START http://h/", fetch_line(0.2, 0), f"{at(0.5)} END queue-empty 1 0.50"]
    speed = build_report(write_crawl(tmp_path / "c", [row(0, "http://h/0", 0)], [], trace)).speed
    assert speed.peak_urls_per_second is None and speed.average_urls_per_second == 2.0
    assert "—" in render_report(build_report(tmp_path / "c"))


def test_the_pause_before_a_resume_is_not_crawl_time(tmp_path):
    trace = [f"{at(0)} START http://h/", fetch_line(1, 0), f"{at(2)} END interrupted 1 2.00",
             f"{at(3600)} RESUME 1 3", fetch_line(3601, 1), fetch_line(3602, 2),
             f"{at(3603)} END queue-empty 3 3.00"]
    rows = [row(k, f"http://h/{k}", 0) for k in range(3)]
    report = build_report(write_crawl(tmp_path / "c", rows, [], trace, stats={"levels": []}))
    assert report.runs == 2 and report.finished and report.stop_reason == "queue-empty"
    assert report.speed.crawl_seconds == 5.0
    assert report.timeline.resumed_at == (2.0,)
    assert sum(report.timeline.fetches) == 3


def test_in_links_skip_self_links_and_ties_sort_by_url(tmp_path):
    edges = [(0, "http://h/", "http://h/"), (0, "http://h/", "http://h/b"),
             (0, "http://h/", "http://h/a"), (1, "http://h/a", "http://h/b"),
             (1, "http://h/a", "http://h/")]
    rows = [row(0, "http://h/", 0), row(1, "http://h/a", 1)]
    report = build_report(write_crawl(tmp_path / "c", rows, edges, []))
    assert [(link.url, link.links) for link in report.top_in_links] == \
        [("http://h/b", 2), ("http://h/", 1), ("http://h/a", 1)]
    assert [(link.url, link.links) for link in report.top_out_links] == \
        [("http://h/", 3), ("http://h/a", 2)]


def test_filtered_ratio_quantiles_and_histogram(tmp_path):
    ratios = [0.1, 0.2, 0.3, 0.4, 0.5, 1.0]
    rows = [row(k, f"http://h/{k}", 0, ratio=r) for k, r in enumerate(ratios)]
    rows.append(row(9, "http://h/err", 0, status=404, error="http: 404 Not Found"))
    summary = build_report(write_crawl(tmp_path / "c", rows, [], [])).filtered_ratio
    quantiles = {q.name: q.value for q in summary.quantiles}
    assert summary.pages == 6 and summary.mean == pytest.approx(2.5 / 6, abs=1e-4)
    assert quantiles["min"] == 0.1 and quantiles["max"] == 1.0
    assert quantiles["median"] == pytest.approx(0.35) and quantiles["p25"] == pytest.approx(0.225)
    assert [b.pages for b in summary.histogram] == [0, 1, 1, 1, 1, 1, 0, 0, 0, 1]


# -- rendering -------------------------------------------------------------------
def test_text_markdown_and_json_carry_the_same_report(demo):
    out, stats, _ = demo
    report = build_report(out)
    text, markdown = render_report(report, "text"), render_report(report, "markdown")
    for title in ("Levels", "Speed", "Status codes", "Content types", "Errors by kind",
                  "Filtered ratio", "Top pages by in-links", "Top pages by out-links",
                  "Dedup counters"):
        assert f"\n{title}\n" in text and f"\n## {title}\n" in markdown
    assert "| level | urls | pages | errors | dups | near | new urls | queue m |" in markdown
    assert json.loads(render_report(report, "json")) == json.loads(json.dumps(asdict(report)))
    levels_text = text.split("\nLevels\n")[1].split("\n\n")[0]
    assert level_table(stats).splitlines()[1].split() == levels_text.splitlines()[1].split()
    with pytest.raises(ValueError, match="unknown report format"):
        render_report(report, "pdf")


def test_the_terminal_level_table_keeps_its_expected_column():
    stats = {"levels": [{"level": 0, "urls": 1, "pages": 1, "errors": 0, "new_urls": 3, "m": 4}],
             "urls": 1, "pages": 1, "errors": 0}
    assert level_table(stats, [(1, 1)]).splitlines()[1].endswith("1 /    1 ok")
    assert level_table(stats, [(2, 1)]).splitlines()[1].endswith("MISMATCH")


# -- the plot ----------------------------------------------------------------------
def png_size(path):
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    assert data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24]), len(data)


def test_the_plot_is_a_png_of_a_readable_size(demo, tmp_path):
    out, _, _ = demo
    png = write_plot(out, tmp_path / "crawl.png")
    (width, height), size = png_size(png)
    assert 800 <= width <= 2400 and 600 <= height <= 1800
    assert 20_000 < size < 2_000_000


def test_a_partial_crawl_and_one_without_trace_can_be_plotted(demo, tmp_path):
    out, _, _ = demo
    crawl = copy_crawl(out, tmp_path / "killed")
    cut_last_line_in_half(crawl / "trace.log")
    (crawl / "stats.json").unlink()
    assert png_size(write_plot(build_report(crawl), tmp_path / "partial.png"))[0][0] >= 800
    (crawl / "trace.log").unlink()
    assert png_size(write_plot(crawl, tmp_path / "no-trace.png"))[0][0] >= 800


def test_plot_without_matplotlib_says_how_to_install_it(demo, tmp_path, monkeypatch):
    out, _, _ = demo
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)   # import fails
    with pytest.raises(ReportError, match=r"needs matplotlib.*pip install -e '\.\[plot\]'"):
        write_plot(out, tmp_path / "x.png")
    assert not (tmp_path / "x.png").exists()


def test_a_plot_that_cannot_be_written_is_a_one_line_error(demo, tmp_path):
    out, _, _ = demo
    with pytest.raises(ReportError, match="cannot write .*x.png") as error:
        write_plot(out, tmp_path / "no" / "such" / "x.png")
    assert "\n" not in str(error.value)


def test_reports_and_plots_read_nothing_but_the_directory(demo, tmp_path, monkeypatch):
    """The demo server is gone; a socket opened now would be a bug."""
    import socket

    def refuse(*args, **kwargs):
        raise AssertionError("a report must not open a socket")

    monkeypatch.setattr(socket, "socket", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    out, _, _ = demo
    render_report(build_report(out), "text")
    write_plot(out, tmp_path / "offline.png")
    assert io.BytesIO((tmp_path / "offline.png").read_bytes()).read(4) == b"\x89PNG"


def test_plot_without_matplotlib_prints_nothing_but_the_one_line(demo, tmp_path):
    """Checked before the report is printed: no half output, no PNG, exit 2."""
    out, _, _ = demo
    blocker = tmp_path / "block"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text("import sys\nsys.modules['matplotlib'] = None\n")
    done = subprocess.run([sys.executable, "-m", "controller", "report", str(out), "--plot",
                           str(tmp_path / "x.png")], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(blocker)})
    assert done.returncode == 2 and done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1 and "needs matplotlib" in done.stderr
    assert not (tmp_path / "x.png").exists()


def test_errors_and_robots_denials_are_counted_as_stats_json_counts_them(demo):
    out, stats, _ = demo
    report = build_report(out)
    assert stats["robots_denied"] == report.robots_denied == 2   # /private/ and /search
    assert report.errors == stats["errors"]
    assert [lv.errors for lv in report.levels] == [lv["errors"] for lv in stats["levels"]]
    assert "2 denied by robots.txt" in render_report(report)


# -- what the figures and tables count as saved, and where the legends sit -----------
def duplicate(id, url, level, of, own_file):
    """A duplicate of page ``of``: byte-equal ones name the original's file."""
    return {**row(id, url, level), "duplicate_of": of,
            "html_path": f"pages/{id}.html" if own_file else f"pages/{of}.html"}


def test_duplicates_whose_html_was_not_saved_are_not_counted_as_saved(tmp_path):
    rows = [row(0, "http://h/", 0), row(1, "http://h/a", 1), row(2, "http://h/b", 1),
            duplicate(3, "http://h/a-copy", 1, of=1, own_file=False),
            duplicate(4, "http://h/b-big5", 1, of=2, own_file=True),   # same text, other bytes
            row(5, "http://h/gone", 1, status=404, error="http: 404 Not Found")]
    report = build_report(write_crawl(tmp_path / "c", rows, [], []))
    assert (report.pages, report.saved) == (5, 4)
    assert [(lv.pages, lv.saved, lv.duplicates) for lv in report.levels] == [(1, 1, 0), (4, 3, 2)]
    assert "5 HTML pages, 4 saved (2 duplicates of earlier pages, 1 of them byte-equal" in \
        render_report(report)
    assert json.loads(render_report(report, "json"))["saved"] == 4
    figure = draw(report)
    saved_bars = axes_titled(figure, "Pages per level").containers[0]
    assert [bar.get_height() for bar in saved_bars] == [1, 3]


def test_saved_pages_are_the_html_files_the_demo_crawl_left(demo):
    out, stats, _ = demo
    report = build_report(out)
    files = {int(path.stem) for path in (out / "pages").glob("*.html")}
    with open(out / "index.csv", newline="", encoding="utf-8") as f:
        level_of = {int(r["id"]): int(r["level"]) for r in csv.DictReader(f)}
    assert report.saved == len(files) < report.pages == stats["pages"]
    assert [lv.saved for lv in report.levels] == \
        [sum(level_of[id] == lv.level for id in files) for lv in report.levels]


def all_axes(figure):
    from matplotlib.axes import Axes
    return figure.findobj(Axes)


def axes_titled(figure, title):
    return next(axes for axes in all_axes(figure) if axes.get_title().startswith(title))


def boxes_under_legends(figure):
    """(legend, artist) pairs whose boxes on the rendered figure overlap: bars and their labels."""
    from matplotlib.legend import Legend
    from matplotlib.patches import Rectangle
    from matplotlib.text import Text
    figure.draw_without_rendering()
    renderer = figure.canvas.get_renderer()
    legends = figure.findobj(Legend)
    bars = [patch for axes in all_axes(figure) for patch in axes.patches
            if isinstance(patch, Rectangle) and patch.get_height() > 0]
    labels = [text for axes in all_axes(figure) for text in axes.texts
              if isinstance(text, Text) and text.get_text()]
    assert len(legends) == 4 and len(bars) > 10
    return [(legend, artist) for legend in legends for artist in bars + labels
            if legend.get_window_extent(renderer).overlaps(artist.get_window_extent(renderer))]


@pytest.mark.parametrize("tallest", ["first", "last"])
def test_no_legend_covers_a_bar_or_its_label(tmp_path, tallest):
    """The tallest level and the tallest status bar stand in a corner, where a
    legend inside the plot would go."""
    sizes = [1, 3, 8, 30] if tallest == "last" else [30, 8, 3, 1]
    rows, k = [], 0
    for level, size in enumerate(sizes):
        for _ in range(size):
            denied = tallest == "last" and level == 3 or tallest == "first" and level == 0 and k % 2
            rows.append(row(k, f"http://h/{k}", level, status=None if denied else 200,
                            error="robots: disallowed by robots.txt" if denied else ""))
            k += 1
    rows.append(row(k, "http://h/gone", 1, status=404, error="http: 404 Not Found"))
    trace = [f"{at(0)} START http://h/"] + [fetch_line(0.01 * n, n) for n in range(k)]
    report = build_report(write_crawl(tmp_path / "c", rows, [], trace))
    assert boxes_under_legends(draw(report)) == []

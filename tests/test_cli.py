"""The command line: one-line errors with exit 2 for bad input, and a clean
stop on Ctrl-C / SIGTERM that keeps everything collected so far."""
import csv
import json
import signal
import subprocess
import sys
import time

import pytest


def crawler(*args, timeout=60):
    return subprocess.run([sys.executable, "-m", "controller", *args],
                          capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize("args, words", [
    (["crawl", "ftp://example.org/"], "not an http(s) URL"),
    (["crawl", "example.org"], "did you mean http://example.org/"),
    (["crawl", "http://"], "'http://' has no host after 'http://'"),
    (["crawl", "http:///only-a-path"], "'http:///only-a-path' has no host after 'http://'"),
    (["crawl", "http://127.0.0.1:1/", "--max-pages", "-1"], "--max-pages"),
    (["crawl", "http://127.0.0.1:1/", "--delay", "-0.5"], "--delay"),
    (["crawl", "http://127.0.0.1:1/", "--scope", "planet"], "--scope"),
    (["crawl", "http://127.0.0.1:1/", "--dedup", "list"], "--dedup"),
    (["crawl", "http://127.0.0.1:1/", "--frobnicate"], "--frobnicate"),
    (["crawl", "http://127.0.0.1:1/", "--exclude", "(unclosed"], "not a valid regular expression"),
    (["crawl"], "SEED"),
    (["fly"], "fly"),
])
def test_bad_input_gets_one_line_and_exit_2(tmp_path, args, words):
    done = crawler(*args, "--out", str(tmp_path / "o")) if args[0] == "crawl" and len(args) > 1 \
        else crawler(*args)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("crawler: error: ") and words in lines[0]
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("agent, words", [
    ("", "is empty"),
    ("  ", "is empty"),
    ("bot\n", "one line of printable ASCII"),
    ("a b/1", "reads as a name with a space"),
    ("bot/1.0(+http://x/)", "put a space before anything else"),
])
def test_a_bad_user_agent_gets_one_line_and_exit_2_and_writes_nothing(tmp_path, agent, words):
    done = subprocess.run([sys.executable, "-m", "controller", "crawl", "http://127.0.0.1:1/",
                           "--user-agent", agent], capture_output=True, text=True, timeout=60,
                          cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("crawler: error: --user-agent: ")
    assert words in lines[0]
    assert list(tmp_path.iterdir()) == []   # no crawl-out/


def test_a_user_agent_with_a_comment_after_the_product_is_sent_as_given(tmp_path, serve):
    with serve(lambda request: (200, {"Content-Type": "text/html"}, b"<p>ok</p>")) as (url, log):
        done = crawler("crawl", url, "--out", str(tmp_path / "o"), "--ignore-robots", "--quiet",
                       "--user-agent", "bfs-crawler/0.1 (+https://example.org/bot)")
        assert done.returncode == 0, done.stderr
        assert {r.headers["user-agent"] for r in log.snapshot()} == \
            {"bfs-crawler/0.1 (+https://example.org/bot)"}


def test_unwritable_output_directory_is_a_usage_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    done = crawler("crawl", "http://127.0.0.1:1/", "--out", str(blocker / "out"))
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "cannot write to output directory" in done.stderr
    assert "Traceback" not in done.stderr


def test_help_and_version_exit_0():
    assert crawler("--help").returncode == 0
    version = crawler("--version")
    assert version.returncode == 0 and "0.1.0" in version.stdout


def fetch_lines(trace):
    if not trace.exists():
        return 0
    return sum(1 for line in trace.read_text().splitlines() if " FETCH " in line)


@pytest.mark.parametrize("sig, status, reason", [(signal.SIGINT, 130, "interrupted"),
                                                 (signal.SIGTERM, 143, "terminated")])
def test_a_signal_stops_cleanly_and_keeps_what_was_fetched(tmp_path, demo_server, sig, status, reason):
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "controller", "crawl", demo_server.url,
                             "--out", str(out), "--delay", "0.05", "--max-depth", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while fetch_lines(out / "trace.log") < 5 and time.monotonic() < deadline:
        time.sleep(0.02)  # polling an observable condition, bounded by the deadline
    proc.send_signal(sig)
    stdout, stderr = proc.communicate(timeout=30)
    assert proc.returncode == status, stderr
    assert "Traceback" not in stderr
    stats = json.loads((out / "stats.json").read_text())
    assert stats["stop_reason"] == reason
    with open(out / "index.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == stats["urls"] == fetch_lines(out / "trace.log") >= 5
    assert stats["urls"] < 400   # it stopped long before the site's end
    for row in rows:
        if row["html_path"]:
            assert (out / row["html_path"]).stat().st_size == int(row["bytes"])


def test_serve_demo_serves_the_site_until_interrupted():
    import re
    import urllib.request
    proc = subprocess.Popen([sys.executable, "-m", "controller", "serve-demo", "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        url = re.search(r"http://127\.0\.0\.1:\d+/", line).group(0)
        with urllib.request.urlopen(url + "robots.txt", timeout=10) as answer:
            assert b"Disallow: /private/" in answer.read()
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()   # never leave a server behind, even when the test fails
            proc.communicate()
    assert proc.returncode == 0


def test_a_crawl_whose_every_seed_failed_exits_1_with_one_line(tmp_path):
    """Port 1 on loopback refuses: the rows are kept, and the exit says so."""
    out = tmp_path / "o"
    # With or without robots.txt, the error is the connection's: a host that is
    # down is not a robots.txt verdict (nor is the page requested after it).
    for robots, error in (((), "connection: refused"), (("--ignore-robots",), "connection: refused")):
        done = crawler("crawl", "http://127.0.0.1:1/", "http://127.0.0.1:1/other", "--out", str(out),
                       "--retries", "0", "--quiet", "--overwrite", *robots)
        assert done.returncode == 1, done.stderr
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("crawler: error: every seed failed (")
        assert error in lines[0]
        with open(out / "index.csv", newline="", encoding="utf-8") as f:
            assert [row["error"] for row in csv.DictReader(f)] == [error] * 2
        assert json.loads((out / "stats.json").read_text())["errors"] == 2


def test_a_corrupt_settings_file_on_resume_is_one_line_not_a_traceback(tmp_path, serve):
    out = tmp_path / "o"
    with serve(lambda request: (200, {"Content-Type": "text/html"}, b"<p>ok</p>")) as (url, log):
        assert crawler("crawl", url, "--out", str(out), "--quiet").returncode == 0
    (out / "state" / "settings.json").write_text('{"seeds": [', encoding="utf-8")
    done = crawler("crawl", "--out", str(out), "--resume")
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "settings.json cannot be read" in done.stderr and "Traceback" not in done.stderr


def test_crawl_help_groups_the_options_and_every_option_has_its_text():
    import click as click_module
    from controller.cli import OPTION_GROUPS, crawl as crawl_command
    missing = [p.name for p in crawl_command.params
               if isinstance(p, click_module.Option) and not p.help]
    assert missing == []
    text = crawler("crawl", "--help").stdout
    titles = [title for title, _ in OPTION_GROUPS]
    positions = [text.index(f"\n{title}:\n") for title in titles]
    assert positions == sorted(positions)
    limits = text[text.index("\nLimits:\n"):text.index("\nFetching and politeness:\n")]
    assert "--max-depth" in limits and "--delay" not in limits


def test_a_crawl_starts_with_one_line_of_what_is_in_force(tmp_path, serve):
    from controller.config import CrawlConfig
    from controller.progress import in_force
    assert in_force(CrawlConfig(seeds=("http://h/",), out=tmp_path)) == (
        "crawling with depth <= 3, <= 1000 URLs, 1 request/s per host (--delay 1), "
        "robots.txt obeyed (its Crawl-delay wins if longer)")
    assert in_force(CrawlConfig(seeds=("http://h/",), out=tmp_path, max_depth=0, max_pages=0,
                                delay=0.5, per_host=2, obey_robots=False, max_seconds=60)) == (
        "crawling with any depth, no URL limit, <= 60 s, 4 request/s per host (--delay 0.5, "
        "--per-host 2), robots.txt ignored")
    with serve(lambda request: (200, {"Content-Type": "text/html"}, b"<p>ok</p>")) as (url, log):
        done = crawler("crawl", url, "--out", str(tmp_path / "o"), "--delay", "0")
    assert done.returncode == 0
    assert done.stderr.splitlines()[0] == ("crawling with depth <= 3, <= 1000 URLs, no delay "
                                           "between requests to a host (--per-host 1), "
                                           "robots.txt obeyed (its Crawl-delay wins if longer)")

"""The Python API: crawl() checks its keywords as the CLI checks its options,
and read_crawl() reads a finished, a running and a killed crawl."""
import csv
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from controller import crawl, read_crawl
from controller.api import CrawlResult, UsageError
from controller.readers.files import ReportError
from demosite import DemoServer

ROOT = Path(__file__).resolve().parent.parent


def index_rows(out: Path) -> list[dict]:
    with open(out / "index.csv", newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


@pytest.fixture(scope="module")
def finished(tmp_path_factory, demo_site):
    out = tmp_path_factory.mktemp("api") / "demo"
    with DemoServer(demo_site) as server:
        result = crawl([server.url], out=out, max_depth=3, max_pages=0, delay=0, workers=4,
                       per_host=4, quiet=True)
    return result


def test_the_readme_notebook_example_runs_as_written(tmp_path):
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- notebook example[^\n]*-->\n```python\n(.*?)```", readme, re.S)
    assert block, "README lost its notebook example"
    (tmp_path / "example.py").write_text(block.group(1), encoding="utf-8")
    done = subprocess.run([sys.executable, "example.py"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    assert "max-depth 77 pages" in done.stdout
    assert re.search(r"level\s*\n0\s+1\n1\s+17\n2\s+65\n", done.stdout)   # the demo's levels
    assert "missing.html" in done.stdout and "characters" in done.stdout


def test_crawl_returns_the_stats_it_wrote(finished):
    assert isinstance(finished, CrawlResult) and finished.problem is None
    assert finished.stop_reason == "max-depth"
    data = finished.read()
    assert data.state == "ended" and data.stats == finished.stats
    assert finished.stats["settings"]["max_depth"] == 3


@pytest.mark.parametrize("keywords, message", [
    ({"max_dept": 2}, "unknown option 'max_dept'"),
    ({"max_depth": -1}, "'--max-depth': -1 is not in the range x>=0"),
    ({"delay": "slow"}, "'--delay': 'slow' is neither a number of seconds >= 0 nor auto"),
    ({"ignore_robots": "yes"}, "ignore_robots='yes': give True or False"),
    ({"scope": "planet"}, "'--scope': 'planet' is not one of"),
    ({"seed_files": ["no-such-seeds.txt"]}, "-i no-such-seeds.txt: cannot read it"),
])
def test_a_bad_keyword_is_the_clis_one_line_message_and_nothing_is_written(tmp_path, keywords,
                                                                            message):
    with pytest.raises(UsageError) as caught:
        crawl("http://127.0.0.1:1/", out=tmp_path / "o", **keywords)
    assert message in str(caught.value) and "\n" not in str(caught.value)
    assert not (tmp_path / "o").exists()


def test_seeds_are_checked_and_required(tmp_path):
    with pytest.raises(UsageError, match="'-x' is not an http"):
        crawl(["-x"], out=tmp_path / "o")   # never read as an option
    with pytest.raises(UsageError, match="give at least one start URL"):
        crawl([], out=tmp_path / "o")
    assert not (tmp_path / "o").exists()


def test_keywords_take_both_spellings_and_config_files(tmp_path, demo_site):
    config = tmp_path / "course.toml"
    config.write_text("max-depth = 1\nmax-pages = 5\n", encoding="utf-8")
    with DemoServer(demo_site) as server:
        result = crawl(server.url, out=tmp_path / "o", config_file=config, text="main",
                       drop_param=["utm_*"], delay=0, quiet=True)
    settings = result.stats["settings"]
    assert (settings["max_depth"], settings["max_pages"]) == (1, 5)   # from the file
    assert settings["text_mode"] == "main" and settings["drop_params"] == ["utm_*"]
    assert result.stats["urls"] == 5 and result.stop_reason == "max-pages"


def test_a_crawl_whose_seeds_all_failed_says_so(tmp_path):
    result = crawl("http://127.0.0.1:1/", out=tmp_path / "o", retries=0, quiet=True)
    assert result.problem.startswith("every seed failed (http://127.0.0.1:1/:")


def test_read_crawl_gives_every_row_typed(finished):
    out = finished.out
    rows = index_rows(out)
    data = read_crawl(out, pandas=False)
    assert len(data.index) == len(rows) == finished.stats["urls"]
    for got, cells in zip(data.index, rows):
        assert got["id"] == int(cells["id"]) and got["url"] == cells["url"]
        assert got["level"] == int(cells["level"])
        assert got["status"] == (int(cells["status"]) if cells["status"] else None)
        assert got["fetched_at"].isoformat().startswith(cells["fetched_at"][:19])
    assert data.notes == []


def test_read_crawl_as_dataframes_matches_the_lists(finished):
    frames = read_crawl(finished.out)
    lists = read_crawl(finished.out, pandas=False)
    assert list(frames.index["url"]) == [row["url"] for row in lists.index]
    assert str(frames.index["status"].dtype) == "Int64"
    assert frames.index["status"].isna().sum() == sum(r["status"] is None for r in lists.index)
    assert len(frames.edges) == len(lists.edges) > 0
    assert frames.index.groupby("level").size().to_dict() == \
        {row["level"]: row["urls"] for row in finished.stats["levels"]}


def test_pages_are_the_saved_pages_with_their_own_bytes(finished):
    out = finished.out
    saved = [row for row in index_rows(out) if row["html_path"]]
    pages = list(read_crawl(out).pages())
    assert [page["url"] for page in pages] == [row["url"] for row in saved]
    for page, row in zip(pages, saved):
        assert page["html"] == (out / row["html_path"]).read_bytes()
        assert page["text"] == (out / row["text_path"]).read_text(encoding="utf-8")


def test_a_directory_without_a_crawl_is_a_one_line_error(tmp_path):
    with pytest.raises(ReportError, match="does not exist"):
        read_crawl(tmp_path / "nothing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ReportError, match="is empty"):
        read_crawl(tmp_path / "empty")


def test_without_pandas_lists_and_a_hint(finished, tmp_path):
    blocker = tmp_path / "block"
    blocker.mkdir()
    (blocker / "pandas.py").write_text("raise ImportError('blocked for the test')\n")
    script = (f"from controller import read_crawl\n"
              f"d = read_crawl({str(finished.out)!r})\n"
              f"print(type(d.index).__name__, type(d.edges).__name__)\n"
              f"try:\n    read_crawl({str(finished.out)!r}, pandas=True)\n"
              f"except Exception as exc:\n    print(exc)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60, env={**os.environ, "PYTHONPATH": f"{blocker}:{ROOT}"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "list list", "read_crawl(pandas=True) needs pandas: pip install pandas (or, from the "
        "repository: .venv/bin/pip install -e '.[notebook]')"]


def wait_for_rows(out: Path, at_least: int, proc: subprocess.Popen, timeout: float = 60) -> None:
    """Until index.csv holds ``at_least`` complete rows (polling a file the
    crawl writes: the condition itself, not a guess at how long it takes)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        index = out / "index.csv"
        if index.exists() and index.read_bytes().count(b"\n") > at_least:
            return
        assert proc.poll() is None, "the crawl ended before the test could read it running"
        time.sleep(0.05)
    raise AssertionError(f"no {at_least} rows in {timeout} s")


def test_read_crawl_reads_a_running_and_then_a_killed_crawl(tmp_path, demo_site):
    out = tmp_path / "live"
    with DemoServer(demo_site) as server:
        proc = subprocess.Popen([sys.executable, "-m", "controller", "crawl", server.url,
                                 "--out", str(out), "--max-pages", "0", "--delay", "0.05",
                                 "--quiet"], cwd=tmp_path, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": str(ROOT)})
        try:
            wait_for_rows(out, 10, proc)
            running = read_crawl(out, pandas=False)
            assert running.state == "running" and running.stats is None
            ids = {row["id"] for row in running.index}
            assert len(ids) >= 10 and {edge["from_id"] for edge in running.edges} <= ids
            assert running.settings["delay"] == 0.05
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    killed_rows = len(index_rows(out))
    with open(out / "index.csv", "ab") as f:
        f.write(b"99999,http://127.0.0.1/cut-in-ha")   # a row the kill cut in half
    killed = read_crawl(out, pandas=False)
    assert killed.state == "killed" and killed.stats is None
    assert len(killed.index) >= len(running.index) and len(killed.index) <= killed_rows
    assert any("index.csv: the last line is cut off" in note for note in killed.notes)
    assert len(list(killed.pages(html=False))) == sum(1 for r in killed.index if r["html_path"])

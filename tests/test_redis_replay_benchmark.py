"""benchmarks/redis_replay.py run tiny: simulated workers crawl a synthetic
graph through a real redis-server, every page once at its BFS level, and the
table and stored result say so. Timings are the benchmark's business, not
asserted here."""
from __future__ import annotations

import json
import sys
from pathlib import Path

from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # the repository root holds benchmarks/

from benchmarks import redis_replay as rr  # noqa: E402


def test_the_graph_reaches_every_page_at_a_known_distance():
    graph = rr.Graph.make(pages=300, hosts=7, links=27, new_share=0.1)
    levels = graph.levels()
    assert len(graph.urls) == len(set(graph.urls)) == 300
    assert all(len(links) == 27 for links in graph.links)
    assert min(levels) == 0 and levels.count(0) == 1
    assert max(levels) == 5   # three children a page: 1 + 3 + 9 + 27 + 81 + 179
    assert {url.split("/")[2] for url in graph.urls} == {f"h{i}.replay.test" for i in range(7)}


def test_a_tiny_replay_checks_its_crawl_and_stores_the_table(tmp_path):
    args = ["--pages", "120", "--hosts", "1,9", "--workers", "2,4", "--threads", "3", "--fsync", "always",
            "--work", str(tmp_path / "work"), "--results-dir", str(tmp_path / "results"),
            "--results-md", str(tmp_path / "RESULTS.md")]
    result = CliRunner().invoke(rr.main, args)
    assert result.exit_code == 0, result.output
    rows = [line for line in result.stdout.splitlines() if line.startswith("| ")][1:]
    assert [tuple(c.strip() for c in row.split("|")[1:4]) for row in rows] == [
        ("1", "2", "always"), ("1", "4", "always"), ("9", "2", "always"), ("9", "4", "always")]
    assert all(row.split("|")[4].strip() == "120" and row.rstrip(" |").endswith("ok") for row in rows)
    (stored,) = (tmp_path / "results" / "redis-replay").glob("*.json")
    runs = json.loads(stored.read_text())["rows"]
    assert all(r["script_calls"] > 0 and r["commands"] > r["script_calls"] and r["aof_bytes"] > 0
               for r in runs)
    assert rr.SECTION_TITLE in (tmp_path / "RESULTS.md").read_text()


def test_the_check_finds_pages_twice_missing_at_a_wrong_level_and_refused():
    graph = rr.Graph.make(pages=5, hosts=1, links=2, new_share=0.5)
    worker = rr.Worker.__new__(rr.Worker)   # only what check() reads of a worker
    worker.error, worker.refused = None, 1
    levels = graph.levels()
    worker.acked = [(graph.urls[0], 0), (graph.urls[0], 0), (graph.urls[1], levels[1] + 1)]
    problems = rr.check(graph, [worker], {b"processed": b"5", b"next_id": b"5"})
    assert [p.split(",")[0] for p in problems] == [
        "1 acknowledgements refused (lease lost)", "1 pages acknowledged more than once",
        "3 pages never acknowledged", "1 pages at the wrong level"]

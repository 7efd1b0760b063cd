"""benchmarks/distributed.py end to end on tiny sites: real workers on a real
redis-server and nginx, every run checked, the numbers stored where RESULTS.md
finds them, and its section replacing only itself."""
from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # the repository root holds benchmarks/

from benchmarks.distributed import SECTION_TITLE, key_pattern, main, script_names  # noqa: E402
from benchmarks.nginx import find_nginx  # noqa: E402
from redisserver import REDIS_SERVER  # noqa: E402

pytestmark = [
    pytest.mark.skipif(find_nginx() is None, reason="nginx not installed (apt-get install -y nginx)"),
    pytest.mark.skipif(not os.access("/usr/bin/time", os.X_OK), reason="GNU time not installed"),
    pytest.mark.skipif(not shutil.which(REDIS_SERVER), reason="redis-server not installed"),
]
OTHERS = "# Benchmark results\n\n## compare, before\n\nA table.\n"
AFTER = "## Polite crawling, later\n\nA third.\n"
HOSTS, HOST_PAGES, PAGES = 3, 6, 60
# Wide enough that the first request on a new connection (its connect time
# counted in the server's gap, not the crawler's) stays inside 0.9 x delay
# on a loaded machine.
DELAY = 0.2


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    """One tiny run of the whole benchmark: (its directory, its output, its JSON)."""
    tmp = tmp_path_factory.mktemp("distributed")
    (tmp / "RESULTS.md").write_text(f"{OTHERS}\n{SECTION_TITLE}\n\nold numbers\n\n{AFTER}",
                                    encoding="utf-8")
    args = ["--pages", PAGES, "--hosts", HOSTS, "--host-pages", HOST_PAGES, "--delay", str(DELAY),
            "--workers", "2", "--processes", "0", "--compare-processes", "", "--single-processes", "0",
            "--everysec", "", "--rounds", "1",
            "--work", tmp / "work", "--results-dir", tmp / "results", "--results-md", tmp / "RESULTS.md"]
    done = CliRunner().invoke(main, [str(a) for a in args])
    assert done.exit_code == 0, done.output
    raw, = (tmp / "results" / "distributed").glob("distributed-*.json")
    return tmp, done.output, json.loads(raw.read_text(encoding="utf-8"))


def test_every_run_is_checked_measured_and_stored_beside_the_crawl_results(bench):
    tmp, output, result = bench
    assert "| one-host   | 2 workers, --processes 0 |" in output
    assert not list((tmp / "results").glob("*.json"))   # render_results reads those as crawls
    runs = result["runs"]
    assert [(r["setting"], r["variant"]) for r in runs] == [
        (s, v) for s in ("one-host", "many-hosts") for v in
        ("single, --processes 0", "2 workers, --processes 0", "2 workers, --processes 0 (profile)")]
    assert all(r["checked"] for r in runs)
    assert [r["site_pages"] for r in runs] == [PAGES] * 3 + [HOSTS * HOST_PAGES] * 3
    shared = [r for r in runs if r["workers"]]
    assert all(r["redis_cpu_s"] > 0 and r["scripts"]["evalsha_calls"] > 0 for r in shared)
    assert all(r["left"]["seen_urls"] >= r["pages"] for r in shared)
    many = [r for r in runs if r["setting"] == "many-hosts"]
    assert all(r["smallest_gap_s"] >= 0.9 * DELAY and r["robots"] == HOSTS for r in many)
    assert not list((tmp / "work" / "runs" / "distributed").iterdir())   # checked runs deleted


def test_the_profile_names_every_call_and_sees_one_acknowledgement_per_page(bench):
    tmp, _, result = bench
    profiled = [r for r in result["runs"] if r["profile"]]
    assert len(profiled) == 2
    for r in profiled:
        calls = r["profile"]["calls"]
        # Every URL requested (robots.txt aside) is acknowledged once, as nginx's log counts them.
        assert r["profile"]["acks"] == r["requests"] - r["robots"]
        assert calls["tick"] >= 1
        if r["setting"] == "many-hosts":   # at a delay no chain: a sync call a page
            assert calls["sync"] >= r["profile"]["acks"]
        else:   # one host, no delay: its URLs chained under its one slot, several a call
            assert calls["sync"] < r["profile"]["acks"]
        assert "other script" not in calls
        assert r["profile"]["lost"] == 0 and r["profile"]["inner"]["SADD"] >= r["pages"]
    section = (tmp / "results" / "distributed.md").read_text(encoding="utf-8")
    assert section.startswith(SECTION_TITLE) and "| sync " in section
    assert (tmp / "RESULTS.md").read_text(encoding="utf-8") == f"{OTHERS}\n{section}\n{AFTER}"


def test_keys_are_grouped_by_kind_and_every_script_has_a_name():
    assert [key_pattern(k) for k in ("seen", "q:3:127.0.0.5", "rows:host-ab12")] == ["seen", "q:*", "rows:*"]
    names = set(script_names().values())
    assert {"sync", "tick", "gate", "mark"} <= names

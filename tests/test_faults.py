"""The whole crawler against a hostile site (tests/faultsite.py).

One crawl in this process (module fixture) is checked from several sides:
every normal page saved, every fault in index.csv with the error kind the
site expects, the server's own log of what it was asked (retries, waits),
nothing sent to the other host, the traps cut and counted. Then the real
``crawler`` command crawls the same site under /usr/bin/time -v, to show it
exits 0 without a traceback and within a memory bound. Last, a public seed
whose page links and redirects into a "private" host, with resolver and
classifier stubs: the private server receives nothing.
"""
import csv
import json
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from faultsite import FAULTS, TRAPS, FaultSite
from getpage_stub import StubServer, page, redirect

from controller.config import CrawlConfig
from controller.engine import Crawl
from getpage import FetchConfig, Fetcher

# Small limits so the traps end quickly, and short waits so faults do.
LIMITS = {
    "max_depth": 0, "max_pages": 0, "workers": 8, "per_host": 8, "delay": 0.0,
    "timeout": 1.0, "retries": 2, "retry_backoff": 0.05, "max_retry_after": 5.0,
    "max_pages_per_host": 100, "max_query_variants": 20, "max_path_repeats": 2,
    "max_bytes": 10_000_000,
    # The calendar here is for the host budget to cut; tests/test_traps.py
    # shows the pattern rule (--max-pattern-depth) cutting one.
    "max_pattern_depth": 0,
}
RSS_LIMIT_KB = 300 * 1024


def read_index(out: Path) -> dict[str, dict]:
    """index.csv rows by URL path (with query)."""
    with open(out / "index.csv", newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    return {_path(row["url"]): row for row in rows}


def _path(url: str) -> str:
    return "/" + url.split("/", 3)[3]


def kind(error: str) -> str:
    return error.partition(":")[0]


def check_against_ground_truth(site: FaultSite, out: Path) -> dict[str, dict]:
    """The assertions every crawl of the fault site must pass; returns the rows."""
    rows = read_index(out)
    for path in site.normal_paths:
        row = rows[path]
        assert (row["status"], row["error"]) == ("200", ""), row
        assert (out / row["html_path"]).is_file() and (out / row["text_path"]).is_file()
    for fault in site.faults:
        row = rows[fault.path]
        assert kind(row["error"]) == fault.kind, (fault, row["error"])
        if not fault.kind:
            assert row["status"] == "200" and row["html_path"], row
    assert site.other_paths() == []  # the cross-host redirect was refused, not followed
    return rows


@pytest.fixture(scope="module")
def crawl(tmp_path_factory):
    out = tmp_path_factory.mktemp("faults") / "crawl"
    with FaultSite() as site:
        config = CrawlConfig(seeds=(site.url,), out=out, processes=0, progress=False, **LIMITS)
        stats = Crawl(config).run()
    return site, out, stats


def test_the_crawl_ends_normally(crawl):
    _, out, stats = crawl
    assert stats["stop_reason"] == "queue-empty"
    assert json.loads((out / "stats.json").read_text())["stop_reason"] == "queue-empty"


def test_every_normal_page_is_saved_and_every_fault_recorded(crawl):
    site, out, _ = crawl
    rows = check_against_ground_truth(site, out)
    assert rows["/fault/loop-a"]["error"] == "redirect: loop"
    cross = rows["/fault/cross-host"]["error"]
    assert cross.startswith("redirect: ") and cross.endswith(site.other_url + "landing.html")
    assert rows["/fault/slow"]["error"] == "timeout: read 1s"
    assert rows["/fault/huge"]["error"] == rows["/fault/bomb"]["error"] == (
        "too-large: body over 10000000 bytes")
    assert rows["/fault/garbage"]["error"] == "garbage: binary content served as text/html"
    assert rows["/fault/short"]["error"] == "connection: closed before the body was complete"


def test_the_server_saw_retries_only_where_they_belong(crawl):
    site, _, _ = crawl
    retried = {"/fault/500": 3, "/fault/reset": 3, "/fault/short": 3, "/fault/slow": 3,
               "/fault/503-once": 2, "/fault/429-once": 2}
    once = ["/fault/404", "/fault/garbage", "/fault/huge", "/fault/bomb", "/fault/loop-a",
            "/fault/cross-host", "/robots.txt", *site.normal_paths]
    tries = {path: site.count(path) for path in retried}
    # The reset fault loses every request. One lost on a reused connection is
    # sent again at once, on a new connection, by the transport: not a try.
    tries["/fault/reset"] -= sum(r.path == "/fault/reset" and r.reused for r in site.requests())
    assert tries == retried
    assert {path: site.count(path) for path in once} == {path: 1 for path in once}


def test_retry_after_was_waited_for(crawl):
    site, _, _ = crawl
    first, second = (r.at for r in site.requests() if r.path == "/fault/503-once")
    assert second - first >= 1.0 - 0.01


def test_the_traps_are_cut_and_counted(crawl):
    site, out, stats = crawl
    skipped = stats["skipped_links"]
    for reason in set(site.traps.values()):
        assert skipped.get(reason, 0) > 0, (reason, skipped)
    rows = read_index(out)
    assert len(rows) <= LIMITS["max_pages_per_host"]
    assert sum(path.startswith("/search?") for path in rows) == LIMITS["max_query_variants"]
    assert "/trap/a/b/a/b/" in rows and "/trap/a/b/a/b/a/b/" not in rows
    assert any(path.startswith("/calendar/") for path in rows)


@pytest.mark.skipif(not Path("/usr/bin/time").exists(), reason="needs /usr/bin/time")
def test_the_crawler_command_survives_the_site_in_bounded_memory(tmp_path):
    crawler = Path(sys.executable).with_name("crawler")
    out = tmp_path / "cli-crawl"
    with FaultSite() as site:
        # The command line has no options for the backoff and the Retry-After
        # cap: their defaults (0.5 s, 30 s) cost a second or two here.
        options = [f"--{name.replace('_', '-')}={value}" for name, value in LIMITS.items()
                   if name not in ("retry_backoff", "max_retry_after")]
        done = subprocess.run(["/usr/bin/time", "-v", str(crawler), "crawl", site.url, "--out", str(out),
                               "--quiet", *options], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Traceback" not in done.stderr + done.stdout
    peak_kb = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr).group(1))
    print(f"\ncrawler on the fault site: peak RSS {peak_kb / 1024:.1f} MB")
    assert peak_kb < RSS_LIMIT_KB
    check_against_ground_truth(site, out)


# -- public seed, private neighbour ----------------------------------------------


def test_a_public_page_cannot_lead_the_crawl_into_a_private_network(tmp_path):
    """site.test is "public" (127.0.0.1), intranet.test "private" (127.0.0.2),
    by stubs; the public page links and redirects to the intranet."""
    site, intranet = StubServer(), StubServer(host="127.0.0.2")
    try:
        secret = intranet.url("/secret", host="intranet.test")
        site.routes["/"] = page(f'<html><body><a href="{secret}">link</a>'
                                f'<a href="/jump">jump</a></body></html>')
        site.routes["/jump"] = redirect(intranet.url("/other", host="intranet.test"))
        table = {"site.test": ["127.0.0.1"], "intranet.test": ["127.0.0.2"]}
        categories = {"127.0.0.1": "public", "127.0.0.2": "private"}

        def resolve(host, port):
            if host not in table:
                raise socket.gaierror(socket.EAI_NONAME, "unknown")
            return table[host]

        config = CrawlConfig(seeds=(site.url("/", host="site.test"),), out=tmp_path / "out",
                             scope="any", max_depth=2, delay=0, processes=0, progress=False)
        fetcher = Fetcher(FetchConfig(user_agent=config.user_agent, delay=0, retries=0,
                                      allowed_addresses=frozenset({"public"})),
                          resolve=resolve, classify=categories.__getitem__)
        Crawl(config, fetcher=fetcher).run()
        rows = read_index(tmp_path / "out")
    finally:
        site.close()
        intranet.close()
    assert intranet.received == []
    blocked = "blocked: intranet.test resolves to private address 127.0.0.2"
    assert rows["/secret"]["error"] == blocked
    assert rows["/jump"]["error"].startswith(blocked)
    assert rows["/"]["status"] == "200"


def test_fault_site_ground_truth_covers_the_issue():
    """Every fault the issue lists has a URL on the site and a known answer."""
    assert {fault.path for fault in FAULTS} >= {
        "/fault/slow", "/fault/reset", "/fault/500", "/fault/503-once", "/fault/429-once",
        "/fault/loop-a", "/fault/cross-host", "/fault/huge", "/fault/bomb", "/fault/garbage",
        "/fault/short"}
    assert set(TRAPS.values()) == {"repeats", "query-variants", "host-pages"}

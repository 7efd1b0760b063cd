"""The recrawl benchmark (benchmarks/recrawl.py): nginx's header log, the site's changes, the counts.

The end-to-end test runs the harness on a 30-page site with our crawler and
wget-head and recomputes what it reports from the header logs nginx wrote,
read here independently. The tests with a server skip when nginx or GNU
time is missing (apt-get install -y nginx-light time wget).
"""
from __future__ import annotations

import http.client
import json
import os
import re
import shutil
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # the repository root holds benchmarks/

from benchmarks.nginx import find_nginx  # noqa: E402
from benchmarks.recrawl import (PAGE_AGE_S, Heard, HeaderNginx, StepRun, count, heard, main,  # noqa: E402
                                parse_heard, ratio_table, site)

needs_nginx = pytest.mark.skipif(find_nginx() is None, reason="nginx not installed (apt-get install -y nginx)")
needs_tools = pytest.mark.skipif(not (os.access("/usr/bin/time", os.X_OK) and shutil.which("wget")),
                                 reason="GNU time or wget not installed")


def _heard(method: str, uri: str, status: int, ims: str = "") -> Heard:
    return Heard(method, uri, status, 100, "", ims, "", 1)


# -- the log and the counts ------------------------------------------------------------
def test_a_header_log_line_gives_the_method_the_answer_the_bytes_and_the_validators():
    line = ('{"method":"GET","uri":"/p/0/5.html","status":304,"bytes":181,"inm":"\\"6a1-3e8\\"",'
            '"ims":"Sat, 21 Nov 2026 17:24:11 GMT","cc":"max-age=0","conn":7}')
    entry = parse_heard(line)
    assert entry == Heard("GET", "/p/0/5.html", 304, 181, '"6a1-3e8"', "Sat, 21 Nov 2026 17:24:11 GMT",
                          "max-age=0", 7)
    assert entry.conditional and entry.answer == "304"
    assert _heard("HEAD", "/a", 200).answer == "HEAD" and _heard("GET", "/a", 404).answer == "other"
    assert not _heard("GET", "/a", 200).conditional
    assert parse_heard("/a 200 1 1 1") is None and heard('{"method":"GET"}\n') == []


def test_the_counts_tell_changed_pages_fetched_again_from_unchanged_ones_fetched_in_full(tmp_path):
    served = site(12, tmp_path)
    pages = served.truth.html_paths()
    changed = tuple(pages[:2])
    requests = ([_heard("GET", pages[0], 200, "x"), _heard("GET", pages[1], 304, "x"),   # one change missed
                 _heard("GET", pages[2], 200, "x")]                                      # one refetched for nothing
                + [_heard("HEAD", path, 200) for path in pages[3:-1]] + [_heard("GET", "/robots.txt", 200)])
    counts = count(requests, served.truth, changed)
    assert (counts["changed"], counts["changed_refetched"], counts["unchanged_full"]) == (2, 1, 1)
    assert (counts["ok_200"], counts["not_modified"], counts["head"], counts["other"]) == (3, 1, 8, 0)
    assert counts["unasked"] == 1 and counts["conditional"] == 3 and counts["bytes_sent"] == 1200


def _run(tool: str, step: str, wall: float, requests: int, round_no: int = 1) -> StepRun:
    return StepRun(tool=tool, round=round_no, step=step, wall_s=wall, cpu_s=0.0, exit_code=0, exit_ok=True,
                   timed_out=False, requests=requests, ok_200=requests, not_modified=0, head=0, other=0,
                   conditional=0, max_age_0=0, connections=1, bytes_sent=2 * requests, site_pages=10,
                   changed=0, changed_refetched=0, unchanged_full=0, unasked=0, saved_current=10)


def test_ratios_pair_each_round_with_the_same_round_and_take_the_median():
    records = [_run("ours", "first", 2.0, 10, 1), _run("wget", "first", 1.0, 10, 1),
               _run("ours", "first", 3.0, 10, 2), _run("wget", "first", 1.0, 5, 2),
               _run("ours", "first", 4.0, 10, 3), _run("wget", "first", 1.0, 20, 3)]
    row = next(line for line in ratio_table(records).splitlines() if line.startswith("| first"))
    assert [cell.strip() for cell in row.strip("|").split("|")] == ["first", "wget", "3.00", "1.00", "1.00"]


# -- the site ----------------------------------------------------------------------------
HREF = re.compile(rb'<a href="([^"]*)"')


def test_a_change_rewrites_a_tenth_of_the_pages_keeping_their_links_and_restoring_undoes_it(tmp_path):
    served = site(50, tmp_path)
    now = time.time()
    served.restore(now)
    pages = served.truth.html_paths()
    assert all(abs((served.served / p.lstrip("/")).stat().st_mtime - (now - PAGE_AGE_S)) < 1 for p in pages)
    changed = served.change(0.1, seed=1)
    assert len(changed) == 5 and set(changed) <= set(pages) and served.change(0.1, seed=1) == changed
    for path in pages:
        old, new = (root / path.lstrip("/") for root in (served.pristine, served.served))
        assert (old.read_bytes() != new.read_bytes()) == (path in changed)
        assert HREF.findall(old.read_bytes()) == HREF.findall(new.read_bytes())
        assert (new.stat().st_mtime > now - 60) == (path in changed)
    served.restore(time.time())
    assert all((served.served / p.lstrip("/")).read_bytes() == (served.pristine / p.lstrip("/")).read_bytes()
               for p in pages)


# -- the server ----------------------------------------------------------------------------
def _ask(server: HeaderNginx, method: str, headers: dict) -> tuple[int, dict]:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        conn.request(method, "/a.html", headers=headers)
        response = conn.getresponse()
        response.read()
        return response.status, dict(response.getheaders())
    finally:
        conn.close()


@needs_nginx
def test_the_header_log_records_each_request_s_validators_beside_the_usual_access_log(tmp_path):
    (tmp_path / "a.html").write_text("<p>a</p>")
    with HeaderNginx(tmp_path) as server:
        mark, usual = server.header_mark(), server.mark()
        status, headers = _ask(server, "GET", {})
        assert status == 200
        assert _ask(server, "GET", {"If-None-Match": headers["ETag"]})[0] == 304
        assert _ask(server, "GET", {"If-Modified-Since": headers["Last-Modified"],
                                    "Cache-Control": "max-age=0"})[0] == 304
        assert _ask(server, "HEAD", {})[0] == 200
        server.header_mark()
        seen = heard(server.header_log_since(mark))
        assert [(h.method, h.status, h.if_none_match, h.if_modified_since, h.cache_control) for h in seen] == [
            ("GET", 200, "", "", ""), ("GET", 304, headers["ETag"], "", ""),
            ("GET", 304, "", headers["Last-Modified"], "max-age=0"), ("HEAD", 200, "", "", "")]
        assert seen[0].bytes - seen[3].bytes == len("<p>a</p>") and seen[1].bytes < seen[3].bytes
        assert [e.status for e in server.requests_since(usual)] == [200, 304, 304, 200]


# -- end to end: the harness against the header logs ------------------------------------------
def _log(path: Path) -> list[dict]:
    """The requests of one step as nginx wrote them, barrier requests left out."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return [row for row in rows if not row["uri"].startswith("/__benchmark")]


@needs_nginx
@needs_tools
def test_the_harness_reports_what_the_header_logs_show(tmp_path):
    work, results = tmp_path / "work", tmp_path / "results"
    result = CliRunner().invoke(main, ["--pages", "30", "--rounds", "1", "--tools", "ours,wget-head",
                                       "--name", "t", "--work", str(work), "--results-dir", str(results)])
    assert result.exit_code == 0, result.output
    stored = json.loads((results / "recrawl" / "t.json").read_text())
    changed = set(stored["changed_pages"]["1"])
    assert len(changed) == 3
    runs = {(r["tool"], r["step"]): r for r in stored["runs"]}
    for (tool, step), run in runs.items():
        log = _log(work / "runs" / f"recrawl-{tool}-1" / "logs" / step / "headers.log")
        assert run["requests"] == len(log) and run["bytes_sent"] == sum(row["bytes"] for row in log)
        assert run["head"] == sum(row["method"] == "HEAD" for row in log)
        assert run["not_modified"] == sum(row["status"] == 304 for row in log)
        assert run["saved_current"] == run["site_pages"] == 30, (tool, step)
    # ours revisits every page with its validators: 304 unless it changed, then 200 (the body again)
    revisit = [row for row in _log(work / "runs" / "recrawl-ours-1" / "logs" / "changed" / "headers.log")
               if row["uri"] != "/robots.txt"]
    assert len(revisit) == 30 and all(row["inm"] and row["ims"] for row in revisit)
    assert {row["uri"] for row in revisit if row["status"] == 200} == changed
    assert runs[("ours", "changed")]["changed_refetched"] == 3 and runs[("ours", "changed")]["unchanged_full"] == 0
    # wget-head asks HEAD for each page it holds and GETs the changed ones
    wget_log = _log(work / "runs" / "recrawl-wget-head-1" / "logs" / "changed" / "headers.log")
    assert {row["uri"] for row in wget_log if row["method"] == "GET" and row["status"] == 200} >= changed
    assert "| ours " in (results / "recrawl" / "t.md").read_text()

"""crawler recrawl: conditional GETs against a loopback site that changes
between passes; what the server received, which files hold which bytes,
what visits.csv, index.csv, trace.log and the WARC say; a kill -9 in the
middle of a pass; bad input."""
import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from changingsite import ChangingSite, page_html

ROOT = Path(__file__).resolve().parent.parent
T0 = 1_700_000_000   # a Last-Modified date (2023-11-14)


def crawler(*args, check=True):
    result = subprocess.run([sys.executable, "-m", "controller", *args], capture_output=True,
                            text=True, cwd=ROOT, timeout=120)
    if check and result.returncode != 0:
        raise AssertionError(f"crawler {' '.join(args)} exited {result.returncode}: {result.stderr}")
    return result


def rows(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def by_path(index_rows, site):
    return {row["url"][len(site.url):]: row for row in index_rows}


def build(site):
    """/ links to a b c d; a has an ETag, b a Last-Modified date, c both, d neither."""
    site.set("/", page_html("home", ["/a", "/b", "/c", "/d"]), etag='"h1"')
    site.set("/a", page_html("a", ["/"]), etag='"a1"')
    site.set("/b", page_html("b"), modified=T0)
    site.set("/c", page_html("c"), etag='"c1"', modified=T0)
    site.set("/d", page_html("d"))


def test_a_recrawl_asks_conditionally_keeps_what_did_not_change_and_saves_new_versions(tmp_path):
    out = tmp_path / "crawl"
    with ChangingSite() as site:
        build(site)
        crawler("crawl", site.url + "/", "--out", str(out), "--delay", "0", "--quiet", "--warc",
                "--ignore-robots", "--content-dedup", "near")
        first = by_path(rows(out / "index.csv"), site)
        assert first["/a"]["etag"] == '"a1"' and first["/b"]["last_modified"].endswith("GMT")
        # Between the passes: a changes (and links to a new page e), d changes
        # (no validators: its bytes tell), b and c do not.
        site.set("/a", page_html("a", ["/", "/e"], extra="New."), etag='"a2"')
        site.set("/e", page_html("e"), etag='"e1"')
        site.set("/d", page_html("d", extra="Also new."))
        site.log.clear()
        result = crawler("recrawl", str(out), "--quiet")
        assert "5 pages asked again: 3 not-modified, 0 unchanged, 2 changed, 0 failed" in result.stdout

        # The server saw the validators each page had given.
        assert site.requests("/a")[0]["if-none-match"] == '"a1"'
        assert site.requests("/b")[0]["if-modified-since"] == "Tue, 14 Nov 2023 22:13:20 GMT"
        assert "if-none-match" not in site.requests("/b")[0]
        assert site.requests("/c")[0]["if-none-match"] == '"c1"'
        assert not {"if-none-match", "if-modified-since"} & set(site.requests("/d")[0])
        assert len(site.requests("/e")) == 1   # the new link, crawled once

    visits = {row["url"][len(site.url):]: row for row in rows(out / "visits.csv")}
    assert {path: v["outcome"] for path, v in visits.items()} == {
        "/": "not-modified", "/a": "changed", "/b": "not-modified", "/c": "not-modified",
        "/d": "changed"}
    index = by_path(rows(out / "index.csv"), site)
    for path in ("/a", "/d"):   # the new version on disk, the row describing it
        assert (out / index[path]["html_path"]).read_bytes() == site.pages[path]["body"]
        assert (index[path]["visits"], index[path]["changes"]) == ("2", "1")
        assert index[path]["body_md5"] == visits[path]["body_md5"] != first[path]["body_md5"]
    assert index["/a"]["etag"] == '"a2"'
    # A new version is never a copy of its own earlier one (near-duplicate
    # detection is on by default, and d's new text is one sentence longer).
    assert all(v["duplicate_of"] == v["near_duplicate_of"] == "" for v in visits.values())
    for path in ("/b", "/c", "/"):   # untouched, one more visit
        assert (out / index[path]["html_path"]).read_bytes() == site.pages[path]["body"]
        assert (index[path]["visits"], index[path]["changes"]) == ("2", "0")
    assert index["/e"]["level"] == str(int(index["/a"]["level"]) + 1) == "2"
    assert index["/e"]["parent_id"] == index["/a"]["id"]
    assert index["/e"]["in_links"] == "1"   # the new version's link counts
    assert not list((out / "pages").glob("*.new")) and not list((out / "text").glob("*.new"))
    trace = (out / "trace.log").read_text(encoding="utf-8")
    assert " RECRAWL 1 5\n" in trace and f" VISIT 1 {index['/a']['id']} 200 changed " in trace

    from warcio.archiveiterator import ArchiveIterator
    with open(out / "crawl.warc.gz", "rb") as f:
        records = [(r.rec_headers.get_header("WARC-Target-URI")[len(site.url):], r.rec_type,
                    r.rec_headers.get_header("WARC-Profile") or "")
                   for r in ArchiveIterator(f) if r.rec_type in ("response", "revisit")]
    assert records.count(("/b", "revisit", "http://netpreserve.org/warc/1.1/revisit/server-not-modified")) == 1
    assert [kind for path, kind, _ in records if path == "/a"] == ["response", "response"]
    assert [kind for path, kind, _ in records if path == "/e"] == ["response"]


@pytest.mark.parametrize("processes", ["2", "0"])   # 0: pages are digested in the fetch threads
def test_a_second_pass_with_the_same_bytes_and_no_validators_is_unchanged(processes, tmp_path):
    out = tmp_path / "crawl"
    with ChangingSite() as site:
        site.set("/", page_html("home", ["/d"]))
        site.set("/d", page_html("d"))
        crawler("crawl", site.url + "/", "--out", str(out), "--delay", "0", "--quiet",
                "--ignore-robots", "--warc", "--processes", processes)
        crawler("recrawl", str(out), "--quiet")
        crawler("recrawl", str(out), "--quiet", "--budget", "1")
    visits = rows(out / "visits.csv")
    assert [(v["pass"], v["outcome"]) for v in visits] == [("1", "unchanged"), ("1", "unchanged"),
                                                           ("2", "unchanged")]
    index = rows(out / "index.csv")
    assert sorted(row["visits"] for row in index) == ["2", "3"]
    state = json.loads((out / "state" / "recrawl.json").read_text(encoding="utf-8"))
    assert [p["state"] for p in state["passes"]] == ["done", "done"]
    report = crawler("report", str(out)).stdout
    assert "state       finished: queue-empty" in report   # a pass is not a crawl run left open
    assert "recrawls    2 passes (last: 1 pages asked, 0 not-modified, 1 unchanged, 0 changed, 0 failed)" in report
    assert len(state["passes"][1]["chosen"]) == 1
    from warcio.archiveiterator import ArchiveIterator
    with open(out / "crawl.warc.gz", "rb") as f:   # the same bytes: a revisit record each time
        kinds = [(r.rec_type, r.rec_headers.get_header("WARC-Profile") or "")
                 for r in ArchiveIterator(f) if r.rec_type in ("response", "revisit")]
    identical = ("revisit", "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest")
    assert kinds.count(("response", "")) == 2 and kinds.count(identical) == 3


def test_new_links_are_queued_from_the_shallowest_level_without_a_gap(tmp_path):
    """/ -> a -> b -> d; then / gains x (level 1) and b gains y (level 3).
    The total queue is in level order: x is crawled at level 1; y, after
    level 2 with no new link, is left out and counted (it crashed the crawl)."""
    out = tmp_path / "crawl"
    with ChangingSite() as site:
        site.set("/", page_html("home", ["/a"]))
        site.set("/a", page_html("a", ["/b"]))
        site.set("/b", page_html("b", ["/d"]))
        site.set("/d", page_html("d"))
        crawler("crawl", site.url + "/", "--out", str(out), "--delay", "0", "--quiet",
                "--ignore-robots", "--max-depth", "0", "--max-pages", "0")
        site.set("/", page_html("home", ["/a", "/x"]))
        site.set("/b", page_html("b", ["/d", "/y"]))
        site.set("/x", page_html("x"))
        site.set("/y", page_html("y"))
        result = crawler("recrawl", str(out), "--quiet")
        assert "links new to the crawl on changed pages: 1 queued, 1 not queued" in result.stdout
        assert (len(site.requests("/x")), len(site.requests("/y"))) == (1, 0)
    levels = {row["url"][len(site.url):]: row["level"] for row in rows(out / "index.csv")}
    assert levels == {"/": "0", "/a": "1", "/b": "2", "/d": "3", "/x": "1"}
    state = json.loads((out / "state" / "recrawl.json").read_text(encoding="utf-8"))
    assert state["passes"][-1]["state"] == "done"


def test_a_page_reached_by_a_redirect_is_asked_again_through_it(tmp_path):
    """The redirect's target was marked seen by the crawl: a revisit must
    still follow it, and send the validators to the target only."""
    out = tmp_path / "crawl"
    with ChangingSite() as site:
        site.set("/", page_html("home", ["/old"]), etag='"h"')
        site.redirect("/old", "/new")
        site.set("/new", page_html("new"), etag='"n1"')
        crawler("crawl", site.url + "/", "--out", str(out), "--delay", "0", "--quiet",
                "--ignore-robots")
        site.log.clear()
        crawler("recrawl", str(out), "--quiet")
        assert "if-none-match" not in site.requests("/old")[0]
        assert site.requests("/new")[0]["if-none-match"] == '"n1"'
        outcomes = {row["url"][len(site.url):]: row["outcome"] for row in rows(out / "visits.csv")}
        assert outcomes == {"/": "not-modified", "/old": "not-modified"}
        # The redirect ends elsewhere now, with the same bytes: the validators follow it.
        site.set("/new2", site.pages["/new"]["body"], etag='"n1"')
        site.redirect("/old", "/new2")
        crawler("recrawl", str(out), "--quiet")
        crawler("recrawl", str(out), "--quiet")
        asked = site.requests("/new2")
    assert "if-none-match" not in asked[0] and asked[1]["if-none-match"] == '"n1"'
    index = {row["url"][len(site.url):]: row for row in rows(out / "index.csv")}
    assert index["/old"]["final_url"] == site.url + "/new2"


@pytest.mark.parametrize("stop", [signal.SIGKILL, signal.SIGTERM])
def test_a_recrawl_killed_mid_pass_goes_on_and_loses_nothing(stop, tmp_path):
    pages = {"/": {"body": page_html("home", [f"/p{k}" for k in range(30)]).decode(), "etag": '"h"'}}
    pages.update({f"/p{k}": {"body": page_html(f"p{k}").decode(), "etag": f'"p{k}"'}
                  for k in range(30)})
    state, port_file = tmp_path / "site.json", tmp_path / "port"
    state.write_text(json.dumps(pages), encoding="utf-8")
    server = subprocess.Popen([sys.executable, str(ROOT / "tests" / "changingsite.py"), str(state),
                               str(port_file), "0.05"])
    try:
        while not port_file.exists() or not port_file.read_text():
            time.sleep(0.05)
        url = port_file.read_text()
        out = tmp_path / "crawl"
        crawler("crawl", url + "/", "--out", str(out), "--delay", "0", "--quiet", "--ignore-robots",
                "--workers", "2")
        for k in range(30):   # every page changes
            pages[f"/p{k}"] = {"body": page_html(f"p{k}", extra="v2").decode(), "etag": f'"p{k}v2"'}
        state.write_text(json.dumps(pages), encoding="utf-8")
        victim = subprocess.Popen([sys.executable, "-m", "controller", "recrawl", str(out), "--quiet"],
                                  cwd=ROOT, start_new_session=True, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
        visits = out / "visits.csv"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and (not visits.exists() or
                                               visits.read_text().count("\n") < 8):
            time.sleep(0.02)
        os.killpg(victim.pid, stop)   # the whole process group: parser processes too
        assert victim.wait(timeout=30) == (-signal.SIGKILL if stop == signal.SIGKILL else 143)
        done_before = len(rows(visits))
        assert 0 < done_before < 31   # killed mid-pass
        crawler("recrawl", str(out), "--quiet")
    finally:
        server.kill()
        server.wait()
    visited = rows(out / "visits.csv")
    assert sorted(int(v["id"]) for v in visited) == list(range(31))   # each page once, in pass 1
    assert {v["pass"] for v in visited} == {"1"}
    index = rows(out / "index.csv")
    for row in index:
        path = row["url"][len(url):]
        assert (out / row["html_path"]).read_bytes() == pages[path]["body"].encode()
        assert row["changes"] == ("0" if path == "/" else "1")
    assert not list((out / "pages").glob("*.new"))


def test_bad_input_gets_one_line_and_writes_nothing(tmp_path):
    empty = tmp_path / "nothing"
    empty.mkdir()
    result = crawler("recrawl", str(empty), check=False)
    assert result.returncode == 2 and "holds no crawl" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and list(empty.iterdir()) == []
    for args, problem in ((["--budget", "lots"], "--budget lots: give a number"),
                          (["--min-interval", "soon"], "--min-interval soon: give a duration"),
                          (["--min-interval", "2d", "--max-interval", "1d"], "longer than")):
        result = crawler("recrawl", str(empty), *args, check=False)
        assert result.returncode == 2 and problem in result.stderr, result.stderr
        assert "Traceback" not in result.stderr and list(empty.iterdir()) == []


def test_a_sitemaps_lastmod_says_which_page_to_revisit_first():
    from controller.revisits import RevisitPlan, choose
    from urllist.revisit import Budget
    fetched = "2026-11-30T00:00:00.000Z"
    page = {"html_path": "pages/x.html", "error": "", "status": "200", "fetched_at": fetched,
            "last_modified": ""}
    rows = [{**page, "id": "0", "url": "http://a/old"}, {**page, "id": "1", "url": "http://a/hot"}]
    day, fetch = 86400.0, 1795996800.0   # fetch = fetched_at
    lastmods = {"http://a/old": fetch - 300 * day, "http://a/hot": fetch - 3600}
    how = RevisitPlan("proportional", Budget(per_pass=1))
    assert choose(rows, {}, how, fetch + day, lastmods) == [1]
    lastmods = {"http://a/old": fetch - 3600, "http://a/hot": fetch - 300 * day}
    assert choose(rows, {}, how, fetch + day, lastmods) == [0]


def test_the_python_api_recrawls_too(tmp_path):
    from controller import crawl, recrawl
    from controller.api import UsageError
    with ChangingSite() as site:
        site.set("/", page_html("home", ["/a"]), etag='"h"')
        site.set("/a", page_html("a"), etag='"a"')
        crawl(site.url + "/", out=tmp_path / "c", delay=0, quiet=True, ignore_robots=True)
        site.set("/a", page_html("a", extra="v2"), etag='"a2"')
        summary = recrawl(tmp_path / "c", quiet=True, policy="uniform")
    assert (summary["pass"], summary["not-modified"], summary["changed"]) == (1, 1, 1)
    from controller import read_crawl
    visits = read_crawl(tmp_path / "c", pandas=False).visits
    assert sorted((v["pass"], v["outcome"], v["status"]) for v in visits) == [
        (1, "changed", 200), (1, "not-modified", 304)]
    frame = read_crawl(tmp_path / "c").visits
    assert list(frame.outcome.sort_values()) == ["changed", "not-modified"]
    with pytest.raises(UsageError, match="--budget soon: give a number"):
        recrawl(tmp_path / "c", budget="soon")
    with pytest.raises(UsageError, match="recrawl\\(\\) got an unknown option 'depth'"):
        recrawl(tmp_path / "c", depth=2)


def home_and_a(site, out, *options):
    """/ linking to /a, both with an ETag, crawled into out."""
    site.set("/", page_html("home", ["/a"]), etag='"h1"')
    site.set("/a", page_html("a"), etag='"a1"')
    crawler("crawl", site.url + "/", "--out", str(out), "--delay", "0", "--quiet",
            "--ignore-robots", *options)


def killed_at(point, *args):
    return subprocess.run([sys.executable, str(ROOT / "tests" / "killpoint.py"), point, *args],
                          capture_output=True, text=True, cwd=ROOT, timeout=120).returncode


def test_killed_between_a_new_versions_record_and_its_row_the_stored_version_stands(tmp_path):
    out = tmp_path / "crawl"
    with ChangingSite() as site:
        home_and_a(site, out, "--warc")
        first = site.pages["/a"]["body"]
        site.set("/a", page_html("a", extra="version two"), etag='"a2"')
        assert killed_at("after-archive", "recrawl", str(out), "--quiet") == 137
        del site.pages["/a"]   # and then the page is gone: the redo visit fails
        crawler("recrawl", str(out), "--quiet")
    row = next(r for r in rows(out / "index.csv") if r["url"].endswith("/a"))
    assert (out / row["html_path"]).read_bytes() == first and row["changes"] == "0"
    assert not list((out / "pages").glob("*.new"))


def test_killed_between_a_new_versions_row_and_its_files_the_files_follow(tmp_path):
    out = tmp_path / "crawl"
    with ChangingSite() as site:
        home_and_a(site, out)
        site.set("/a", page_html("a", extra="version two"), etag='"a2"')
        assert killed_at("after-row", "recrawl", str(out), "--quiet") == 137
        asked = len(site.requests("/a"))
        crawler("recrawl", str(out), "--quiet")
        assert len(site.requests("/a")) == asked   # its visit was committed: not made again
    row = next(r for r in rows(out / "index.csv") if r["url"].endswith("/a"))
    assert (out / row["html_path"]).read_bytes() == site.pages["/a"]["body"]
    assert row["changes"] == "1" and not list((out / "pages").glob("*.new"))


def test_killed_while_queueing_new_links_the_next_run_queues_the_rest_and_crawls_them(tmp_path):
    out = tmp_path / "crawl"
    with ChangingSite() as site:
        home_and_a(site, out)
        site.set("/", page_html("home", ["/a", "/x", "/y"]), etag='"h2"')
        site.set("/x", page_html("x"))
        site.set("/y", page_html("y"))
        assert killed_at("enqueue", "recrawl", str(out), "--quiet") == 137
        crawler("recrawl", str(out), "--quiet")
        assert (len(site.requests("/x")), len(site.requests("/y"))) == (1, 1)
    levels = {row["url"][len(site.url):]: row["level"] for row in rows(out / "index.csv")}
    assert levels == {"/": "0", "/a": "1", "/x": "1", "/y": "1"}
    state = json.loads((out / "state" / "recrawl.json").read_text(encoding="utf-8"))
    assert [p["state"] for p in state["passes"]] == ["done"]

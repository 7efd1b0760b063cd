"""Many hosts with a delay, over real sockets: each site on its own loopback
address (127.0.0.x), every root a seed. The scheduler must keep every host's
requests at least the delay apart as the servers saw them, keep levels
exact, and survive a kill and --resume."""
import signal
import subprocess
import sys
import time

import pytest

from controller.config import CrawlConfig
from controller.engine import Crawl
from demosite import Response
from demosite.server import serve
from crawldir import rows_of
from manyhosts import SERVER_SIDE, SITES, gaps_per_host, many_hosts, truth

@pytest.fixture(scope="module")
def hosts():
    with many_hosts() as sites:
        yield sites


@pytest.mark.parametrize("delay, workers", [(0.15, 8), (0.25, 3)])
def test_every_host_is_asked_at_most_once_per_delay_and_levels_are_exact(hosts, tmp_path,
                                                                         delay, workers):
    roots, logs = hosts
    for log in logs:
        log.clear()
    out = tmp_path / "out"
    stats = Crawl(CrawlConfig(seeds=tuple(roots), out=out, delay=delay, workers=workers,
                              max_depth=0, max_pages=0, progress=False)).run()
    rows = rows_of(out)
    assert {r["url"]: int(r["level"]) for r in rows} == truth(roots)
    assert stats["errors"] == 0 and stats["urls"] == sum(pages for pages, _ in SITES)
    # Every URL fetched speculatively was queued later and took its response.
    speculative = stats["speculative"]
    assert speculative["used"] == speculative["fetches"] and speculative["kept_unused"] == 0
    print("speculative fetches", speculative)
    for gaps in gaps_per_host(logs):   # robots.txt first, then one page at a time
        assert min(gaps) >= SERVER_SIDE * delay
    paths = [r.path for log in logs for r in log.snapshot()]
    assert len(paths) == len(set((id(log), r.path) for log in logs for r in log.snapshot()))


def test_kill_and_resume_with_many_hosts_and_a_delay(hosts, tmp_path):
    roots, logs = hosts
    out = tmp_path / "out"
    args = [sys.executable, "-m", "controller", "crawl", *roots, "--out", str(out), "--delay",
            "0.1", "--max-depth", "0", "--max-pages", "0", "--quiet"]
    for target in (10, 35):
        proc = subprocess.Popen(args + (["--resume"] if target != 10 else []),
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while (not (out / "index.csv").exists()
               or (out / "index.csv").read_bytes().count(b"\n") - 1 < target):
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.01)   # polling an observable condition, bounded by the deadline
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    done = subprocess.run(args + ["--resume"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    rows = rows_of(out)
    assert len(rows) == len({r["url"] for r in rows})
    assert {r["url"]: int(r["level"]) for r in rows} == truth(roots)


def barrier_sites():
    """Site A: 24 pages, all at level 1. Site B: a chain b0 -> b1 -> ... -> b12
    in which b5 links to a missing page too, b6 to a page robots.txt
    disallows, and b8 redirects to b9: while A's level 1 takes 24 x delay,
    B's deeper pages can only be fetched speculatively (up to the redirect,
    which a speculative fetch does not follow)."""
    def a(request):
        if request.path == "/robots.txt":
            return Response(404, {"Content-Type": "text/plain"}, b"")
        if request.path == "/a/0.html":
            links = "".join(f'<a href="/a/{i}.html">x</a>' for i in range(1, 25))
            return page("a0", links)
        if request.path.startswith("/a/"):
            return page(request.path, "")
        return Response(404, {"Content-Type": "text/plain"}, b"")

    def b(request):
        path = request.path
        if path == "/robots.txt":
            return Response(200, {"Content-Type": "text/plain"}, b"User-agent: *\nDisallow: /private\n")
        if path == "/b/8.html":
            return Response(301, {"Location": "/b/9.html"}, b"")
        if path.startswith("/b/") and path[3:-5].isdigit() and int(path[3:-5]) < 12:
            i = int(path[3:-5])
            extra = {5: '<a href="/gone.html">x</a>', 6: '<a href="/private/x.html">x</a>'}.get(i, "")
            return page(path, f'<a href="/b/{i + 1}.html">next</a>{extra}')
        return Response(404, {"Content-Type": "text/plain"}, b"")
    return a, b


def page(title, body):
    return Response(200, {"Content-Type": "text/html; charset=utf-8"},
                    f"<html><title>{title}</title><body><h1>{title}</h1>{body}</body></html>".encode())


def test_speculative_fetches_cross_the_level_barrier_once_per_url(tmp_path):
    a, b = barrier_sites()
    with serve(a, host="127.0.0.40") as (base_a, log_a), serve(b, host="127.0.0.41") as (base_b, log_b):
        out = tmp_path / "out"
        # b's chain of 13 numbered pages is what crosses the barriers here, not
        # a trap: the trap guard's pattern budget (10 levels) is off.
        stats = Crawl(CrawlConfig(seeds=(base_a + "a/0.html", base_b + "b/0.html"), out=out,
                                  delay=0.1, max_depth=0, max_pages=0, max_pattern_depth=0,
                                  progress=False)).run()
        requests = [r.path for r in log_b.snapshot()]
    rows = {r["url"][len(base_b) - 1:]: r for r in rows_of(out) if r["url"].startswith(base_b)}
    # Levels as a breadth-first walk gives them: b8 redirects to b9, whose page
    # is b8's row (its final URL), so b10 is at level 9 and so on.
    assert {path: int(r["level"]) for path, r in rows.items() if path.startswith("/b/")} == \
        {f"/b/{i}.html": i if i < 9 else i - 1 for i in range(13) if i != 9}   # b12: a 404
    assert int(rows["/gone.html"]["level"]) == 6 and int(rows["/private/x.html"]["level"]) == 7
    assert rows["/b/8.html"]["final_url"] == base_b + "b/9.html"
    assert rows["/gone.html"]["error"].startswith("http: 404")
    assert rows["/private/x.html"]["error"] == "robots: disallowed by robots.txt"
    assert sorted(requests) == sorted(set(requests)), "a URL of site B was requested twice"
    assert "/private/x.html" not in requests
    speculative = stats["speculative"]
    # b3 .. b8, the missing page and the disallowed one (no request for it).
    assert speculative["fetches"] >= 6 and speculative["used"] == speculative["fetches"]


def html(body):
    return Response(200, {"Content-Type": "text/html"}, f"<html><body>{body}</body></html>".encode())


def test_redirects_into_a_host_with_its_own_queue_leave_no_host_behind(tmp_path):
    """Site A's pages redirect to site B, which has pages of its own queued: a
    redirect hop takes B's slot outside the frontier's reservations, and B
    must still be handed out afterwards (it once dropped out of the schedule)."""
    with serve(lambda r: html(f"B page {r.path}")) as (b, b_log):
        def site_a(request):
            if request.path == "/":
                return html("".join(f'<a href="/r{i}">r</a><a href="{b}p{i}">p</a>'
                                    for i in range(60)))
            return Response(302, {"Location": f"{b}t{request.path[2:]}"}, b"")
        with serve(site_a) as (a, _):
            stats = Crawl(CrawlConfig(seeds=(a,), out=tmp_path / "out", delay=0, processes=0,
                                      obey_robots=False, scope="any", max_depth=0, max_pages=0,
                                      progress=False)).run()
        requests = [r.path for r in b_log.snapshot()]
    assert stats["stop_reason"] == "queue-empty" and stats["urls"] == 121
    assert len(requests) == len(set(requests)) == 120


def test_a_host_whose_robots_txt_is_retried_is_not_deadlocked(tmp_path):
    """H's robots.txt answers 503 once (retried after a backoff) while a link to H
    is queued: the second fetch must not wait on H's slot for the first's load."""
    answers = {"robots": 0}

    def h(request):
        if request.path == "/robots.txt":
            answers["robots"] += 1
            if answers["robots"] == 1:
                return Response(503, {"Content-Type": "text/plain"}, b"")
            return Response(404, {"Content-Type": "text/plain"}, b"")
        return html(f"H {request.path}")
    with serve(h) as (h_url, _):
        with serve(lambda r: html(f'<a href="{h_url}x">x</a>') if r.path == "/"
                   else Response(404, {}, b"")) as (g_url, _):
            stats = Crawl(CrawlConfig(seeds=(h_url, g_url), out=tmp_path / "out", delay=0,
                                      processes=0, scope="any", retry_backoff=1.0, max_depth=0,
                                      max_pages=0, max_seconds=20, progress=False)).run()
    assert stats["stop_reason"] == "queue-empty" and stats["urls"] == 3


@pytest.mark.parametrize("limit", ["depth", "pages"])
def test_speculative_fetches_keep_to_max_depth_and_max_pages(tmp_path, limit):
    """Level 0 is held open by a slow page on A while B's chain could be
    speculated arbitrarily deep: --max-depth 3 and --max-pages 10 still bound
    what is requested."""
    def b(request):
        if request.path == "/robots.txt":
            return Response(404, {"Content-Type": "text/plain"}, b"")
        if request.path == "/":
            return html('<a href="/1">1</a>' + "".join(f'<a href="/x{i}">x</a>' for i in range(20)))
        n = int(request.path[1:]) if request.path[1:].isdigit() else 99
        return html(f'<a href="/{n + 1}">next</a>' if n < 15 else "end")

    def a(request):
        if request.path != "/robots.txt":
            time.sleep(1.0)   # keeps level 0 open; a sleeping handler, not the test
        return html("A")
    extra = {"max_depth": 3, "max_pages": 0} if limit == "depth" else {"max_depth": 0, "max_pages": 10}
    with serve(b) as (b_url, b_log), serve(a) as (a_url, _):
        stats = Crawl(CrawlConfig(seeds=(a_url, b_url), out=tmp_path / "out", delay=0.02,
                                  processes=0, scope="any", progress=False, **extra)).run()
        requests = [r.path for r in b_log.snapshot() if r.path != "/robots.txt"]
    assert len(requests) == len(set(requests))
    if limit == "depth":
        assert not {f"/{n}" for n in range(4, 16)} & set(requests)
    else:
        assert stats["urls"] == 10 and len(rows_of(tmp_path / "out")) == 10
        assert len(requests) <= 10


def test_a_page_budget_records_every_page_it_requests(tmp_path):
    """--max-pages ending inside a level while pages of the next one were
    fetched ahead: the budget goes to the open level first, so every page
    asked for gets its row (none parked for a level that never closes)."""
    def site(slow):
        def answer(request):
            if request.path == "/robots.txt":
                return Response(404, {"Content-Type": "text/plain"}, b"")
            if slow:
                time.sleep(0.05)   # a slow server: its level-1 pages come in late
            if request.path == "/":
                return html(f"{slow}" + "".join(f'<a href="/{i}">{i}</a>' for i in range(20)))
            return html(f"{slow}" + "".join(f'<a href="{request.path}/{j}">{j}</a>' for j in range(3)))
        return answer
    with serve(site(True)) as (a_url, a_log), serve(site(False)) as (b_url, b_log):
        stats = Crawl(CrawlConfig(seeds=(a_url, b_url), out=tmp_path / "out", delay=0.01,
                                  processes=0, scope="any", max_depth=0, max_pages=30,
                                  progress=False)).run()
        requests = [r for log in (a_log, b_log) for r in log.snapshot() if r.path != "/robots.txt"]
    rows = rows_of(tmp_path / "out")
    assert len(rows) == stats["urls"] == 30
    assert len(requests) == 30
    assert max(int(r["level"]) for r in rows) == 1   # the first 30 in breadth-first order

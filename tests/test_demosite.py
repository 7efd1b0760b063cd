"""The demo site: deterministic content, every trap it promises, a true ground truth.

The ground truth is checked two ways: link by link (resolving each served
href must give the target the link model claims) and as a whole (a separate,
regex-based BFS over the running server must find the same URLs at the same
levels, and the server must see exactly the requests the truth predicts).
"""
from __future__ import annotations

import ast
import gzip
import html
import http.client
import json
import re
import socket
import string
import threading
from pathlib import Path
from urllib.error import HTTPError
from urllib.parse import urljoin, urlsplit, urlunsplit
from urllib.request import ProxyHandler, Request, build_opener
from urllib.robotparser import RobotFileParser

import pytest

from demosite import DemoServer, DemoSite, LevelTruth, Response
from demosite.links import ORIGIN
from demosite.model import REDIRECT_FROM, REDIRECT_TO, TRAP_START

HOST = "127.0.0.1:8000"
CRAWLER_PACKAGES = {"controller", "getpage", "textfilter", "urlfilter", "urllist"}

# --- an independent crawler: regex links, urljoin, its own normalization ----

LINK = re.compile(r"""<(?:a|area|iframe)\b[^>]*?\s(?:href|src)\s*=\s*(?:"([^"]*)"|'([^']*)')""",
                  re.IGNORECASE)
BASE = re.compile(r"""<base\b[^>]*?\shref\s*=\s*"([^"]*)\"""", re.IGNORECASE)
UNRESERVED = set(string.ascii_letters + string.digits + "-._~")
DENIED = (".png", ".jpg", ".gif", ".css", ".js", ".pdf", ".zip")


def normalize(url: str) -> str:
    parts = urlsplit(url)
    port = parts.port
    netloc = (parts.hostname or "") + (f":{port}" if port and port != 80 else "")

    def unescape(match: re.Match) -> str:
        char = chr(int(match.group(1), 16))
        return char if char in UNRESERVED else match.group(0).upper()

    path = re.sub(r"%([0-9A-Fa-f]{2})", unescape, parts.path or "/")
    path = urlsplit(urljoin("http://x/", path)).path  # urljoin removes dot segments
    return urlunsplit((parts.scheme.lower(), netloc.lower(), path, parts.query, ""))


def hrefs(body: bytes) -> list[str]:
    text = body.decode("latin-1")
    return [html.unescape(double or single) for double, single in LINK.findall(text)]


def resolve_links(body: bytes, page_url: str) -> list[str]:
    """Every link of a page as a normalized absolute URL, schemes other than http kept."""
    text = body.decode("latin-1")
    base = BASE.search(text)
    base_url = urljoin(page_url, base.group(1).strip()) if base else page_url
    return [normalize(urljoin(base_url, href.strip(" \t\n\r\f"))) for href in hrefs(body)]


def independent_bfs(base_url: str, max_depth: int, obey_robots: bool):
    """(path?query -> level, per-level LevelTruth) found by crawling the running server."""
    opener = build_opener(ProxyHandler({}))  # loopback only, whatever the environment says
    robots = RobotFileParser()
    with opener.open(base_url + "robots.txt") as answer:
        robots.parse(answer.read().decode().splitlines())
    origin = normalize(base_url).rstrip("/")
    rows = {normalize(base_url): 0}
    known = set(rows)  # rows, plus redirect targets, which share their URL's row
    frontier = list(rows)
    counts = []
    for level in range(max_depth + 1):
        if not frontier:
            break
        pages = disallowed = 0
        queued = []
        for url in frontier:
            if obey_robots and not robots.can_fetch("independent-bfs", url):
                disallowed += 1
                continue
            try:
                with opener.open(url) as answer:
                    final = normalize(answer.geturl())
                    is_html = answer.headers.get_content_type() == "text/html"
                    body = answer.read()
            except HTTPError as error:
                error.close()
                continue
            known.add(final)
            if not is_html:
                continue
            pages += 1
            if level == max_depth:
                continue
            for link in resolve_links(body, final):
                in_scope = link.startswith(origin + "/")
                if in_scope and not urlsplit(link).path.lower().endswith(DENIED) and link not in known:
                    known.add(link)
                    rows[link] = level + 1
                    queued.append(link)
        counts.append(LevelTruth(len(frontier), pages, disallowed))
        frontier = queued
    return {url[len(origin):]: level for url, level in rows.items()}, counts


# --- helpers ----------------------------------------------------------------


def get(server: DemoServer, path: str, headers: dict[str, str] | None = None,
        method: str = "GET") -> http.client.HTTPResponse:
    connection = http.client.HTTPConnection(server.address.split(":")[0],
                                            int(server.address.split(":")[1]), timeout=5)
    connection.request(method, path, headers=headers or {})
    response = connection.getresponse()
    response.body = response.read()
    connection.close()
    return response


# --- determinism and size -----------------------------------------------------


def test_same_seed_gives_the_same_bytes_and_truth():
    one, two = DemoSite(2026), DemoSite(2026)
    targets = one.paths() + ["/robots.txt", TRAP_START, "/calendar/1999/01/", "/missing.html",
                             REDIRECT_FROM, "/feed", "/download?file=report"]
    for target in targets:
        assert one.respond(target, HOST) == two.respond(target, HOST), target
    assert one.ground_truth(6) == two.ground_truth(6)
    assert one.ground_truth(4, obey_robots=False) == two.ground_truth(4, obey_robots=False)


def test_another_seed_gives_another_site():
    default, other = DemoSite(2026), DemoSite(7)
    assert default.respond("/", HOST).body != other.respond("/", HOST).body
    assert default.ground_truth(6).url_levels != other.ground_truth(6).url_levels
    assert len(other.paths()) >= 200


def test_site_has_200_pages_over_7_levels(demo_site):
    truth = demo_site.ground_truth(max_depth=6)
    assert len(demo_site.paths()) >= 200
    assert len(truth.levels) == 7
    trapless = [url for url in truth.url_levels if not url.startswith("/calendar/")]
    assert {truth.url_levels[url] for url in trapless} == set(range(7))
    trap_pages = sum(1 for url in truth.url_levels if url.startswith("/calendar/"))
    assert truth.total_pages - trap_pages >= 200


def test_pages_weigh_2_to_10_kilobytes_and_long_reads_up_to_20(demo_site):
    near = demo_site.planted_near_duplicates()
    long_reads = set(near) | set(near.values())  # near copies and their originals
    sizes = {path: len(demo_site.respond(path, HOST).body) for path in demo_site.paths()}
    ordinary = [size for path, size in sizes.items() if path not in long_reads]
    assert 2_000 <= min(ordinary) and max(ordinary) <= 10_000
    assert all(10_000 < sizes[path] <= 20_000 for path in long_reads)


# --- the link model against the served HTML -----------------------------------


def test_every_href_resolves_to_the_target_its_link_claims(demo_site):
    origin = f"http://{HOST}"
    months = [TRAP_START, "/calendar/2026/12/", "/calendar/2027/01/", "/calendar/0001/01/"]
    for path in demo_site.paths() + months:
        body = demo_site.respond(path, HOST).body
        served = resolve_links(body, origin + path)
        claimed = [None if link.target is None else origin + link.target
                   for link in demo_site.links(path)]
        assert len(served) == len(claimed), path  # so off-site links match in number too
        in_site = sorted(url for url in served if url.startswith(origin + "/"))
        assert in_site == sorted(t for t in claimed if t is not None), path


def test_every_promised_link_form_is_served(demo_site):
    pages = [demo_site.respond(path, HOST).body for path in demo_site.paths()]
    found = [href for body in pages for href in hrefs(body)]
    text = b"".join(pages).decode("latin-1")
    forms = {
        "../x": lambda h: h.startswith("../"),
        "./x": lambda h: h.startswith("./") and len(h) > 2,
        "x.html": lambda h: re.fullmatch(r"[a-z][\w-]*\.html", h) is not None,
        "/abs": lambda h: h.startswith("/") and not h.startswith("//"),
        "?query": lambda h: h.startswith("?page="),
        "#fragment": lambda h: h.startswith("#"),
        "page#part": lambda h: re.fullmatch(r"/.+\.html#\w+", h) is not None,
        "HTTP://HOST": lambda h: h.startswith("HTTP://" + HOST.upper() + "/"),
        "dot segments": lambda h: "/./" in h and "/../" in h,
        "%7E": lambda h: "%7E" in h,
        "%7e": lambda h: "%7e" in h,
        "escaped letter": lambda h: "%61" in h or "%70" in h,
        "whitespace": lambda h: h != h.strip() and h.strip().startswith("/"),
        "javascript:": lambda h: h.startswith("javascript:"),
        "mailto:": lambda h: h.startswith("mailto:"),
        "tel:": lambda h: h.startswith("tel:"),
        "other host": lambda h: "example.invalid" in h,
        "scheme-relative": lambda h: h.startswith("//"),
        "denied extension": lambda h: h.endswith((".png", ".pdf")),
    }
    missing = [name for name, is_form in forms.items() if not any(is_form(h) for h in found)]
    assert missing == []
    for markup in ("<area ", "<iframe src=", "<base href=", "href='"):
        assert markup in text


def test_equivalent_spellings_get_the_same_answer(demo_site):
    same = {
        "/people/%7Eeditor.html": "/people/~editor.html",
        "/people/%7eeditor.html": "/people/~editor.html",
        "/arts/%70ainting/": "/arts/painting/",
        "/science/./detour/../physics/": "/science/physics/",
        "/news/world/articles.html?page=2#top": "/news/world/articles.html?page=2",
    }
    for spelled, canonical in same.items():
        answer = demo_site.respond(spelled, HOST)
        assert answer.status == 200 and answer == demo_site.respond(canonical, HOST)


def test_full_url_links_carry_the_request_host_upper_cased(demo_server, demo_site):
    path = next(path for path in demo_site.paths()
                if any(link.href.startswith(ORIGIN) for link in demo_site.links(path)))
    port = demo_server.address.split(":")[1]
    answer = get(demo_server, path, {"Host": f"LocalHost:{port}"})
    served = hrefs(answer.body)
    assert any(href.strip().startswith(f"HTTP://LOCALHOST:{port}/") for href in served)
    assert not any("{ORIGIN}" in href for href in served)


# --- charsets ------------------------------------------------------------------


@pytest.mark.parametrize("path, header, declared_in_body, codecs", [
    ("/intl/gbk.html", "text/html; charset=gbk", b"", ("gbk", "gb18030")),
    ("/intl/big5.html", "text/html", b'<meta charset="big5">', ("big5", "big5hkscs")),
    ("/intl/shift_jis.html", "text/html",
     b'<meta http-equiv="Content-Type" content="text/html; charset=shift_jis">',
     ("shift_jis", "cp932")),
])
def test_legacy_charset_pages(demo_server, path, header, declared_in_body, codecs):
    answer = get(demo_server, path)
    assert answer.status == 200
    assert answer.getheader("Content-Type") == header
    if declared_in_body:
        assert declared_in_body in answer.body[:1024]
    else:
        assert b"charset" not in answer.body.lower()
    sentence = DemoSite.EXPECTED_TEXTS[path]
    for codec in codecs:  # the label's codec, and the superset browsers use for it
        assert sentence in answer.body.decode(codec)
    with pytest.raises(UnicodeDecodeError):
        answer.body.decode("utf-8")


def test_utf8_page_holds_its_sentence(demo_server):
    answer = get(demo_server, "/intl/")
    assert answer.getheader("Content-Type") == "text/html; charset=utf-8"
    assert DemoSite.EXPECTED_TEXTS["/intl/"] in answer.body.decode("utf-8")


# --- robots, redirect, errors, non-HTML ---------------------------------------


def test_robots_txt_keeps_everyone_out_of_private_and_search(demo_server):
    answer = get(demo_server, "/robots.txt")
    assert answer.status == 200 and answer.getheader("Content-Type").startswith("text/plain")
    text = answer.body.decode()
    assert "User-agent: *\nDisallow: /private/\nDisallow: /search\n" in text
    robots = RobotFileParser()
    robots.parse(text.splitlines())
    for path in ("/private/", "/private/reports.html", "/search?q=crawler"):
        assert not robots.can_fetch("anybot", demo_server.url + path.lstrip("/"))
    for path in ("/", "/archive/2019.html", "/news/"):
        assert robots.can_fetch("anybot", demo_server.url + path.lstrip("/"))
    assert not robots.can_fetch("BadBot", demo_server.url)


def test_redirect_leads_to_a_page_linked_from_nowhere(demo_server, demo_site):
    answer = get(demo_server, REDIRECT_FROM)
    assert answer.status == 301
    assert answer.getheader("Location") == f"http://{demo_server.address}{REDIRECT_TO}"
    assert get(demo_server, REDIRECT_TO).status == 200
    linked = {link.target for path in demo_site.paths() for link in demo_site.links(path)}
    assert REDIRECT_FROM in linked and REDIRECT_TO not in linked
    truth = demo_site.ground_truth(6, obey_robots=False)
    level = truth.url_levels[REDIRECT_FROM]
    assert REDIRECT_TO not in truth.url_levels and REDIRECT_TO in truth.requested
    assert truth.url_levels["/news/moved-here/followup.html"] == level + 1


def test_error_pages_are_rows_but_their_links_are_not_followed(demo_server, demo_site):
    missing, broken = get(demo_server, "/missing.html"), get(demo_server, "/broken.html")
    assert missing.status == 404 and broken.status == 500
    assert b"/errors/report.html" in broken.body
    truth = demo_site.ground_truth(10, obey_robots=False)
    assert "/missing.html" in truth.url_levels and "/broken.html" in truth.url_levels
    assert "/errors/report.html" not in truth.url_levels
    assert "/errors/report.html" in demo_site.paths()


def test_non_html_resources(demo_server, demo_site):
    feed = get(demo_server, "/feed")
    assert feed.getheader("Content-Type") == "application/json"
    assert json.loads(feed.body)["items"]
    download = get(demo_server, "/download?file=report")
    assert download.getheader("Content-Type") == "application/octet-stream"
    assert get(demo_server, "/images/logo.png").body.startswith(b"\x89PNG")
    truth = demo_site.ground_truth(6, obey_robots=False)
    assert {"/feed", "/download?file=report"} <= truth.url_levels.keys()
    assert not any(url.endswith((".png", ".pdf", ".css")) for url in truth.url_levels)
    not_pages = {url for url in truth.url_levels if url not in demo_site.paths()
                 and url != REDIRECT_FROM and not url.startswith("/calendar/")}
    assert not_pages == {"/feed", "/download?file=report", "/missing.html", "/broken.html"}
    assert truth.total_pages == truth.total_urls - len(not_pages)


# --- the trap ------------------------------------------------------------------


def test_calendar_trap_never_ends(demo_server):
    path, seen = TRAP_START, set()
    for _ in range(40):
        answer = get(demo_server, path)
        assert answer.status == 200 and answer.getheader("Content-Type").startswith("text/html")
        seen.add(path)
        later = [href for href in hrefs(answer.body) if href.startswith("/calendar/")]
        assert len(later) == 1
        path = later[0]
    assert len(seen) == 40 and path == "/calendar/2030/03/"


def test_ground_truth_grows_with_max_depth_because_of_the_trap(demo_site):
    deep = demo_site.ground_truth(30)
    assert len(deep.levels) == 31
    assert all(level.urls == level.pages == 2 for level in deep.levels[8:])
    totals = [demo_site.ground_truth(depth).total_urls for depth in (8, 9, 10)]
    assert totals[0] < totals[1] < totals[2]


# --- ground truth semantics ----------------------------------------------------


def test_robots_change_the_truth_at_several_levels(demo_site):
    obeying, ignoring = demo_site.ground_truth(6), demo_site.ground_truth(6, obey_robots=False)
    assert obeying.levels[1].disallowed == 1 and obeying.levels[2].disallowed == 1
    assert ignoring.total_disallowed == 0
    differing = [k for k in range(7) if obeying.levels[k] != ignoring.levels[k]]
    assert len(differing) >= 4
    assert not any(url.startswith("/archive/") for url in obeying.url_levels)
    archive_levels = {v for url, v in ignoring.url_levels.items() if url.startswith("/archive/")}
    assert archive_levels == {3, 4, 5}
    assert "/private/" in obeying.url_levels and "/private/" not in obeying.requested


def test_shallower_truths_are_prefixes_of_deeper_ones(demo_site):
    deepest = demo_site.ground_truth(7)
    for depth in range(7):
        truth = demo_site.ground_truth(depth)
        assert truth.levels == deepest.levels[:depth + 1]
        assert truth.url_levels == {u: v for u, v in deepest.url_levels.items() if v <= depth}


def test_levels_are_shortest_distances_in_the_link_model(demo_site):
    truth = demo_site.ground_truth(7, obey_robots=False)
    linked_from: dict[str, set[int]] = {}  # target -> levels of the pages linking to it
    for url, level in truth.url_levels.items():
        page = REDIRECT_TO if url == REDIRECT_FROM else url
        if demo_site.respond(page, HOST).status != 200:
            continue
        for link in demo_site.links(page):
            linked_from.setdefault(link.target, set()).add(level)
    for url, level in truth.url_levels.items():
        if level:
            assert min(linked_from[url]) == level - 1, url
    # Shortest distance matters: many URLs are also linked from deeper pages.
    assert sum(max(linked_from[u]) > v for u, v in truth.url_levels.items() if v) > 100
    featured = {link.target for link in demo_site.links("/") if link.role == "related"}
    assert {truth.url_levels[url] for url in featured} == {1}


@pytest.mark.parametrize("obey_robots", [True, False])
def test_independent_bfs_over_http_agrees_with_the_ground_truth(demo_server, demo_site,
                                                                 obey_robots):
    rows, counts = independent_bfs(demo_server.url, max_depth=4, obey_robots=obey_robots)
    truth = demo_site.ground_truth(4, obey_robots=obey_robots)
    assert counts == list(truth.levels)
    assert rows == truth.url_levels
    asked = set(demo_server.request_log.paths()) - {"/robots.txt"}
    assert asked == truth.requested


# --- the server ----------------------------------------------------------------


def test_gzip_when_asked_and_only_then(demo_server):
    plain = get(demo_server, "/news/")
    assert plain.getheader("Content-Encoding") is None
    packed = get(demo_server, "/news/", {"Accept-Encoding": "gzip, deflate"})
    assert packed.getheader("Content-Encoding") == "gzip"
    assert packed.getheader("Vary") == "Accept-Encoding"
    assert int(packed.getheader("Content-Length")) == len(packed.body) < len(plain.body)
    assert gzip.decompress(packed.body) == plain.body
    refused = get(demo_server, "/news/", {"Accept-Encoding": "gzip;q=0, identity"})
    assert refused.getheader("Content-Encoding") is None and refused.body == plain.body
    binary = get(demo_server, "/download?file=report", {"Accept-Encoding": "gzip"})
    assert binary.getheader("Content-Encoding") is None


def test_keep_alive_serves_many_requests_on_one_connection(demo_server):
    host, port = demo_server.address.split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=5)
    statuses = []
    for path in ("/", "/missing.html", REDIRECT_FROM, "/feed", "/robots.txt", "/broken.html"):
        connection.request("GET", path)
        answer = connection.getresponse()
        body = answer.read()
        assert int(answer.getheader("Content-Length")) == len(body)
        statuses.append(answer.status)
    connection.request("HEAD", "/news/")
    head = connection.getresponse()
    assert head.read() == b"" and int(head.getheader("Content-Length")) > 2000
    connection.close()
    assert statuses == [200, 404, 301, 200, 200, 500]
    assert len({record.client_port for record in demo_server.requests}) == 1
    assert [r.method for r in demo_server.requests][-1] == "HEAD"


def test_request_log_records_path_headers_and_time(demo_server):
    get(demo_server, "/people/%7Eeditor.html", {"User-Agent": "probe/1.0"})
    get(demo_server, "/news/")
    first, second = demo_server.requests
    assert (first.method, first.path) == ("GET", "/people/%7Eeditor.html")
    assert first.headers["user-agent"] == "probe/1.0"
    assert first.time <= second.time
    demo_server.clear_requests()
    assert demo_server.requests == []


def test_server_prints_nothing_per_request(demo_server, capfd):
    for path in ("/", "/missing.html", "/broken.html", REDIRECT_FROM):
        get(demo_server, path)
    out, err = capfd.readouterr()
    assert out == "" and err == ""


def test_stop_closes_kept_alive_connections_and_frees_the_port(demo_site):
    server = DemoServer(demo_site).start()
    host, port = server.address.split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=5)
    connection.request("GET", "/")
    connection.getresponse().read()
    server.stop()
    with pytest.raises((ConnectionError, http.client.HTTPException, OSError)):
        connection.request("GET", "/news/")
        connection.getresponse()
    connection.close()
    with socket.create_server((host, int(port))):
        pass


def test_serve_forever_serves_until_stopped(demo_site):
    server = DemoServer(demo_site)  # bound already: the CLI can print server.url first
    foreground = threading.Thread(target=server.serve_forever)
    foreground.start()
    assert get(server, "/").status == 200
    server.stop()
    foreground.join(timeout=5)
    assert not foreground.is_alive()


def test_serve_helper_runs_a_handler_function(serve):
    def handler(request):
        if request.path == "/boom":
            raise RuntimeError("handler bug")
        if request.path == "/tuple":
            return 203, {"Content-Type": "text/plain"}, b"tuple"
        return Response(200, {"Content-Type": "text/plain"}, request.path.encode())

    with serve(handler) as (base_url, log):
        opener = build_opener(ProxyHandler({}))
        assert opener.open(base_url + "hello?x=1").read() == b"/hello?x=1"
        assert opener.open(Request(base_url + "tuple")).read() == b"tuple"
        with pytest.raises(HTTPError) as failure:
            opener.open(base_url + "boom")
        assert failure.value.code == 500
        failure.value.close()
        assert [record.path for record in log] == ["/hello?x=1", "/tuple", "/boom"]


def test_a_handler_returning_none_owns_the_connection(serve):
    def handler(request):
        request.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil close")

    with serve(handler) as (base_url, log):
        opener = build_opener(ProxyHandler({}))
        assert opener.open(base_url).read() == b"until close"
        assert len(log) == 1


def test_demosite_imports_no_crawler_package():
    imported = set()
    for source in (Path(__file__).parent.parent / "demosite").glob("*.py"):
        for node in ast.walk(ast.parse(source.read_text())):
            if isinstance(node, ast.Import):
                imported |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module:
                imported.add(node.module.split(".")[0])
    assert imported and not imported & CRAWLER_PACKAGES

"""Issue 7 end to end, over real sockets: content duplicates, in-links,
--drop-param, extraction and WARC, each checked against what the server
sent and what its generator planted."""
import csv
import json
import re
import subprocess
import sys
from collections import Counter
from urllib.parse import urlsplit

import pytest
from warcio.archiveiterator import ArchiveIterator

from controller.config import CrawlConfig
from controller.engine import Crawl
from demosite import DemoServer
from demosite.blog import EXTRACT_OPTIONS, BlogSite

DEPTH = 6


def run_crawl(url, out, resume=False, **overrides):
    settings = dict(seeds=(url,), out=out, max_depth=DEPTH, max_pages=0, workers=4, per_host=4,
                    delay=0, retry_backoff=0.05, progress=False)
    settings.update(overrides)
    stats = Crawl(CrawlConfig(**settings), resume=resume).run()
    return stats, read_csv(out / "index.csv")


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def path_of(url):
    parts = urlsplit(url)
    return parts.path + (f"?{parts.query}" if parts.query else "")


def pairs(rows, column):
    by_id = {row["id"]: path_of(row["url"]) for row in rows}
    return {frozenset((path_of(row["url"]), by_id[row[column]])) for row in rows if row[column]}


@pytest.fixture(scope="module")
def near_crawl(tmp_path_factory, demo_site):
    out = tmp_path_factory.mktemp("near") / "out"
    with DemoServer(demo_site) as server:
        stats, rows = run_crawl(server.url, out, content_dedup="near", warc=True)
        requests = server.requests
    return out, stats, rows, requests


def test_every_planted_duplicate_is_marked_and_no_distinct_page(near_crawl, demo_site):
    out, stats, rows, _ = near_crawl
    planted = {frozenset(pair) for pair in demo_site.planted_duplicates().items()}
    planted_near = {frozenset(pair) for pair in demo_site.planted_near_duplicates().items()}
    assert len(planted) >= 15 and len(planted_near) >= 10
    assert pairs(rows, "duplicate_of") == planted
    assert pairs(rows, "near_duplicate_of") == planted_near
    assert all(0 <= int(row["hamming"]) <= 5 for row in rows if row["near_duplicate_of"])
    assert stats["content"] == {"mode": "near", "duplicates": len(planted),
                                "near_duplicates": len(planted_near)}


def test_a_duplicate_shares_only_equal_files_and_its_links_are_not_queued(near_crawl):
    out, _, rows, _ = near_crawl
    by_id = {row["id"]: row for row in rows}
    duplicates = [row for row in rows if row["duplicate_of"]]
    for row in duplicates:
        original = by_id[row["duplicate_of"]]
        assert int(original["id"]) < int(row["id"])
        assert row["content_md5"] == original["content_md5"]
        assert row["text_path"] == original["text_path"]
        assert not (out / "text" / f"{row['id']}.txt").exists()
        own = (out / "pages" / f"{row['id']}.html").exists()
        if row["body_md5"] == original["body_md5"]:
            assert row["html_path"] == original["html_path"] and not own
        else:
            assert row["html_path"] == f"pages/{row['id']}.html" and own
        assert row["new_links"] == "0"
        queued_by_it = [r for r in rows if r["parent_id"] == row["id"]]
        assert queued_by_it == []
    saved = {p.stem for p in (out / "pages").iterdir()}
    assert saved == {row["id"] for row in rows if row["html_path"] == f"pages/{row['id']}.html"}


def test_in_links_count_the_edges_to_each_url(near_crawl):
    out, _, rows, _ = near_crawl
    edges = Counter(row["to_url"] for row in read_csv(out / "edges.csv"))
    for row in rows:
        expected = edges[row["url"]] + (edges[row["final_url"]]
                                        if row["final_url"] not in ("", row["url"]) else 0)
        assert int(row["in_links"]) == expected, row["url"]
    assert max(int(row["in_links"]) for row in rows) > 100    # the home page, linked from every menu


def test_the_report_shows_duplicates_per_level(near_crawl):
    out, stats, rows, _ = near_crawl
    report = json.loads(subprocess.run(
        [sys.executable, "-m", "controller", "report", str(out), "--format", "json"],
        capture_output=True, text=True, check=True).stdout)
    per_level = Counter(int(row["level"]) for row in rows if row["duplicate_of"])
    near_per_level = Counter(int(row["level"]) for row in rows if row["near_duplicate_of"])
    levels = report["levels"]
    assert {lv["level"]: lv["duplicates"] for lv in levels if lv["duplicates"]} == dict(per_level)
    assert {lv["level"]: lv["near_duplicates"] for lv in levels if lv["near_duplicates"]} == \
        dict(near_per_level)


def test_the_warc_holds_every_response_as_sent(near_crawl):
    out, _, rows, requests = near_crawl
    by_url = {row["url"]: row for row in rows}
    responses, revisits, requests_seen = {}, [], 0
    with open(out / "crawl.warc.gz", "rb") as f:
        for record in ArchiveIterator(f, check_digests="raise"):
            uri = record.rec_headers.get_header("WARC-Target-URI")
            if record.rec_type == "response":
                responses[uri] = record.content_stream().read()
            elif record.rec_type == "revisit":
                revisits.append(uri)
            elif record.rec_type == "request":
                requests_seen += 1
                assert record.http_headers.get_header("User-Agent").startswith("bfs-crawler/")
    pages = [row for row in rows if row["html_path"] and not row["duplicate_of"]]
    for row in pages:
        assert responses[row["final_url"]] == (out / row["html_path"]).read_bytes(), row["url"]
    assert revisits and all(by_url[uri]["duplicate_of"] for uri in revisits)
    # One request record per response received (robots.txt is not archived).
    assert requests_seen == len(responses) + len(revisits)
    # (retries of /broken.html's 500 keep only the last attempt)
    assert requests_seen == len({r.path for r in requests if r.path != "/robots.txt"})


def test_an_independent_reader_verifies_every_record(near_crawl):
    """FastWARC (Rust, not warcio) reads the archive and checks every digest."""
    from fastwarc.warc import ArchiveIterator as FastIterator, WarcRecordType

    out, _, _, _ = near_crawl
    kinds, payloads_checked = Counter(), 0
    with open(out / "crawl.warc.gz", "rb") as f:          # the whole block of each record
        for record in FastIterator(f, parse_http=False):
            kinds[str(record.record_type).rsplit(".", 1)[-1]] += 1
            assert record.verify_block_digest(consume=True)
    with open(out / "crawl.warc.gz", "rb") as f:          # the HTTP payload of each response
        for record in FastIterator(f, parse_http=True, record_types=WarcRecordType.response):
            assert record.verify_payload_digest(consume=True)
            payloads_checked += 1
    with open(out / "crawl.warc.gz", "rb") as f:
        expected = Counter(r.rec_type for r in ArchiveIterator(f))
    assert kinds == expected and payloads_checked == expected["response"] > 400


def test_warc_index_lists_every_response(near_crawl):
    out, _, _, _ = near_crawl
    result = subprocess.run([sys.executable, "-m", "controller", "warc-index", str(out)],
                            capture_output=True, text=True, check=True)
    lines = result.stdout.splitlines()
    assert lines[0] == " CDX N b a m s k r M S V g"
    with open(out / "crawl.warc.gz", "rb") as f:
        kinds = Counter(r.rec_type for r in ArchiveIterator(f))
    assert len(lines) - 1 == kinds["response"] + kinds["revisit"]
    assert lines[1:] == sorted(lines[1:])


def test_drop_param_fetches_a_page_once_whatever_its_tracking_parameters(tmp_path, demo_site,
                                                                          demo_server):
    stats, rows = run_crawl(demo_server.url, tmp_path / "out", max_depth=4,
                            drop_params=("utm_*", "sessionid"))
    asked = [r.path for r in demo_server.requests]
    assert [p for p in asked if "utm_" in p or "sessionid" in p] == []
    assert not [row for row in rows if "utm_" in row["url"] or "sessionid" in row["url"]]
    assert {p for p, n in Counter(asked).items() if n > 1} == {"/broken.html"}   # retried 500
    planted_by_params = [p for p in demo_site.planted_duplicates() if "utm_" in p or "sessionid" in p]
    assert planted_by_params     # the site does plant them


def test_exact_mode_keeps_duplicate_state_across_a_resume(tmp_path, demo_site, demo_server):
    out = tmp_path / "out"
    run_crawl(demo_server.url, out, max_pages=200)
    stats, rows = run_crawl(demo_server.url, out, resume=True)
    planted = {frozenset(pair) for pair in demo_site.planted_duplicates().items()}
    assert pairs(rows, "duplicate_of") == planted
    assert [row["near_duplicate_of"] for row in rows if row["near_duplicate_of"]] == []
    assert len({row["url"] for row in rows}) == len(rows)


def test_content_dedup_off_saves_every_copy(tmp_path, demo_server):
    stats, rows = run_crawl(demo_server.url, tmp_path / "out", max_depth=3, content_dedup="off")
    assert not [row for row in rows if row["duplicate_of"] or row["near_duplicate_of"]]
    assert all(row["html_path"] == f"pages/{row['id']}.html" for row in rows if row["html_path"])


# -- extraction: the R crawler paper's benchmark shape -----------------------
def extraction_settings():
    options = list(EXTRACT_OPTIONS)
    settings = {"extract": [], "extract_exclude": [], "extract_from": ""}
    while options:
        flag, value = options.pop(0), options.pop(0)
        name = flag.lstrip("-").replace("-", "_")
        if isinstance(settings[name], list):
            settings[name].append(value)
        else:
            settings[name] = value
    return {k: tuple(v) if isinstance(v, list) else v for k, v in settings.items()}


def test_the_1000_page_blog_yields_1600_of_1600_records(tmp_path):
    site = BlogSite()
    out = tmp_path / "blog"
    with DemoServer(site) as server:
        stats, rows = run_crawl(server.url, out, max_depth=3, extract_jsonl=True,
                                **extraction_settings())
    assert len(rows) == 1000 and not [row for row in rows if row["error"]]
    assert stats["content"]["extraction"]["records"] == 1600
    assert stats["content"]["extraction"]["extracted"] == 1600
    extracted = {path_of(row["url"]): (row["title"], row["post"])
                 for row in read_csv(out / "extracted.csv")}
    assert extracted == dict(site.posts())
    lines = [json.loads(line) for line in (out / "extracted.jsonl").read_text().splitlines()]
    assert {path_of(line["url"]): (line["title"], line["post"]) for line in lines} == \
        {path: ([title], [post]) for path, (title, post) in site.posts().items()}


def test_the_extraction_command_line_reports_the_rate(tmp_path):
    site = BlogSite(content_pages=40, menu_pages=10)
    with DemoServer(site) as server:
        result = subprocess.run(
            [sys.executable, "-m", "controller", "crawl", server.url, "--out", str(tmp_path / "b"),
             "--delay", "0", "--max-pages", "0", "-q", *EXTRACT_OPTIONS],
            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "extract: 80 of 80 records (100.0%) from 40 pages" in result.stdout
    report = subprocess.run([sys.executable, "-m", "controller", "report", str(tmp_path / "b")],
                            capture_output=True, text=True, check=True).stdout
    content = report[report.index("\nContent\n"):]
    assert re.search(r"extraction records +80 of 80\n", content)
    assert re.search(r"extraction rate +100\.0%\n", content)
    assert re.search(r"pages where title matched nothing +0\n", content)


@pytest.mark.parametrize("args, message", [
    (["--extract", "title"], "--extract"),
    (["--extract", "title=css:h1[", ], "--extract"),
    (["--extract", "t=xpath://div[", ], "--extract"),
    (["--extract-from", "/posts/"], "add at least one --extract"),
    (["--extract", "t=css:h1", "--extract-from", "(unclosed"], "--extract-from"),
    (["--drop-param", ""], "--drop-param"),
    (["--drop-param", "a=b"], "--drop-param"),
    (["--content-dedup", "fuzzy"], "--content-dedup"),
    (["--simhash-distance", "99"], "--simhash-distance"),
])
def test_bad_content_options_are_one_line_usage_errors(tmp_path, args, message):
    result = subprocess.run(
        [sys.executable, "-m", "controller", "crawl", "http://127.0.0.1:9/", "--out",
         str(tmp_path / "o"), *args], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1 and message in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "o").exists()


def test_warc_index_of_a_directory_without_a_warc_is_a_usage_error(tmp_path):
    result = subprocess.run([sys.executable, "-m", "controller", "warc-index", str(tmp_path)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and "--warc" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


# -- small sites for the corner cases ------------------------------------------
def site_of(pages, redirects=None):
    """A handler serving {path: html} (and {path: location} redirects)."""
    from demosite import Response

    def answer(request):
        if request.path in (redirects or {}):
            return Response(301, {"Location": redirects[request.path]}, b"")
        if request.path in pages:
            return Response(200, {"Content-Type": "text/html; charset=utf-8"},
                            pages[request.path].encode())
        return Response(404, {"Content-Type": "text/plain"}, b"no")
    return answer


def html(text, *links):
    anchors = "".join(f'<a href="{href}">more</a> ' for href in links)
    return f"<html><body><p>{text}</p>{anchors}</body></html>"


def by_path(rows):
    return {path_of(row["url"]): row for row in rows}


def test_in_links_do_not_depend_on_the_order_pages_are_processed(tmp_path, serve):
    # /b has /a's text, so its links are not followed, but they are links: /y has 2 in-links.
    pages = {"/": html("home", "/a", "/b"), "/a": html("same", "/x"), "/b": html("same", "/y"),
             "/x": html("x page", "/y"), "/y": html("y page")}
    with serve(site_of(pages)) as (base, log):
        _, whole = run_crawl(base, tmp_path / "whole", workers=1, per_host=1)
        run_crawl(base, tmp_path / "resumed", workers=1, per_host=1, max_pages=4)
        _, resumed = run_crawl(base, tmp_path / "resumed", resume=True, workers=1, per_host=1)
    for rows in (whole, resumed):
        rows = by_path(rows)
        assert rows["/b"]["duplicate_of"] == rows["/a"]["id"]
        assert {path: int(row["in_links"]) for path, row in rows.items()} == \
            {"/": 0, "/a": 1, "/b": 1, "/x": 1, "/y": 2}


def test_in_links_of_a_redirect_count_links_to_its_normalized_target(tmp_path, serve):
    pages = {"/": html("home", "/old", "/c"), "/c": html("c page", "/new"),
             "/new": html("the new page")}
    with serve(site_of(pages, {"/old": "/new?utm_source=feed"})) as (base, log):
        _, rows = run_crawl(base, tmp_path / "out", workers=1, per_host=1, drop_params=("utm_*",))
    rows = by_path(rows)
    assert "/new" not in rows    # fetched once, as /old's redirect target
    assert int(rows["/old"]["in_links"]) == 2   # the link to /old and the link to /new


def test_pages_without_text_are_nobody_s_copy_even_after_a_resume(tmp_path, serve):
    pages = {"/": html("home", "/e", "/n"), "/e": "<html><body></body></html>",
             "/n": "<html><body><p>1 2 3</p></body></html>"}
    with serve(site_of(pages)) as (base, log):
        _, whole = run_crawl(base, tmp_path / "whole", workers=1, per_host=1, content_dedup="near")
        run_crawl(base, tmp_path / "resumed", workers=1, per_host=1, content_dedup="near",
                  max_pages=2)
        _, resumed = run_crawl(base, tmp_path / "resumed", resume=True, workers=1, per_host=1,
                               content_dedup="near")
    for rows in (whole, resumed):
        assert [(path_of(r["url"]), r["duplicate_of"], r["near_duplicate_of"]) for r in rows] == \
            [("/", "", ""), ("/e", "", ""), ("/n", "", "")]


def test_a_resumed_crawl_writes_the_revisits_an_uninterrupted_one_writes(tmp_path, demo_server):
    def revisits(out, rows):
        by_id = {row["id"]: row for row in rows}
        same_bytes = {row["url"] for row in rows if row["duplicate_of"]
                      and row["body_md5"] == by_id[row["duplicate_of"]]["body_md5"]}
        with open(out / "crawl.warc.gz", "rb") as f:
            written = {r.rec_headers.get_header("WARC-Target-URI") for r in ArchiveIterator(f)
                       if r.rec_type == "revisit"}
        return same_bytes, written

    _, whole = run_crawl(demo_server.url, tmp_path / "whole", warc=True)
    run_crawl(demo_server.url, tmp_path / "resumed", warc=True, max_pages=200)
    _, resumed = run_crawl(demo_server.url, tmp_path / "resumed", warc=True, resume=True)
    expected, written = revisits(tmp_path / "whole", whole)
    assert expected and written == expected
    assert revisits(tmp_path / "resumed", resumed) == (expected, expected)


def test_warc_index_says_when_the_archive_ends_in_a_torn_record(near_crawl, tmp_path):
    out, _, _, _ = near_crawl
    whole = (out / "crawl.warc.gz").read_bytes()
    torn = tmp_path / "torn.warc.gz"
    torn.write_bytes(whole[:-100])          # a kill in the middle of the last record
    full = subprocess.run([sys.executable, "-m", "controller", "warc-index", str(out)],
                          capture_output=True, text=True, check=True)
    cut = subprocess.run([sys.executable, "-m", "controller", "warc-index", str(torn)],
                         capture_output=True, text=True, timeout=60)
    assert full.stderr == ""
    assert cut.returncode == 0 and "cut off" in cut.stderr and len(cut.stderr.splitlines()) == 1
    def records(listing):    # lines without the file name, the last field
        return {line.rsplit(" ", 1)[0] for line in listing.splitlines()[1:]}
    assert records(cut.stdout) <= records(full.stdout)
    assert len(records(full.stdout) - records(cut.stdout)) <= 1

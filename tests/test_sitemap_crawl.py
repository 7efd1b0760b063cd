"""--sitemaps and --sitemap in a crawl: pages that only a sitemap lists are
crawled at level 1 with via = sitemap; a hostile sitemap is refused with
one line and the crawl goes on; what the server was asked."""
import csv
import gzip
import json
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

from getpage_stub import StubServer, page

ROOT = Path(__file__).resolve().parent.parent
HTML = "<!DOCTYPE html><html><head><title>{0}</title></head><body><p>Page {0}.</p>{1}</body></html>"


def html(name, *links):
    return HTML.format(name, "".join(f'<a href="{href}">{href}</a>' for href in links))


def urlset(*locs):
    entries = "".join(f"<url><loc>{loc}</loc><lastmod>2026-11-30</lastmod></url>" for loc in locs)
    return (f'<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/'
            f'schemas/sitemap/0.9">{entries}</urlset>').encode()


def site():
    server = StubServer()
    base = server.url("")
    server.routes.update({
        "/robots.txt": page(f"User-agent: *\nDisallow:\nSitemap: {base}/sitemap_index.xml\n",
                            "text/plain"),
        "/": page(html("home", "/a")),
        "/a": page(html("a")),
        "/sitemap_index.xml": page(
            f'<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
            f"<sitemap><loc>{base}/sm1.xml.gz</loc></sitemap>"
            f"<sitemap><loc>{base}/sitemap_index.xml</loc></sitemap>"   # itself: read once
            f"<sitemap><loc>{base}/sm2.txt</loc></sitemap></sitemapindex>", "application/xml"),
        "/sm1.xml.gz": page(gzip.compress(urlset(f"{base}/hidden1", f"{base}/a",
                                                 f"{base}/hidden2", "http://elsewhere.example/x"), mtime=0),
                            "application/gzip"),
        "/sm2.txt": page(f"{base}/hidden3\n", "text/plain"),
        "/bomb.xml": page('<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">'
                          '<!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">]>'
                          "<urlset><url><loc>&lol2;</loc></url></urlset>", "application/xml"),
    })
    for name in ("hidden1", "hidden2", "hidden3"):
        server.routes[f"/{name}"] = page(html(name))
    return server, base


def crawl(*args):
    return subprocess.run([sys.executable, "-m", "controller", "crawl", *args, "--delay", "0",
                           "--quiet"], capture_output=True, text=True, cwd=ROOT, timeout=120)


def test_pages_only_a_sitemap_lists_are_crawled_at_level_1(tmp_path):
    server, base = site()
    try:
        result = crawl(base + "/", "--out", str(tmp_path), "--sitemaps", "--warc",
                       "--sitemap", base + "/bomb.xml")
    finally:
        server.close()
    assert result.returncode == 0, result.stderr
    rows = {row["url"][len(base):]: row for row in csv.DictReader(open(tmp_path / "index.csv"))}
    assert set(rows) == {"/", "/a", "/hidden1", "/hidden2", "/hidden3"}
    # /a is linked from / and listed too: the sitemap, read first, found it.
    assert {path: (row["level"], row["via"]) for path, row in rows.items()} == {
        "/": ("0", "seed"), "/a": ("1", "sitemap"), "/hidden1": ("1", "sitemap"),
        "/hidden2": ("1", "sitemap"), "/hidden3": ("1", "sitemap")}
    asked = server.paths()
    for sitemap in ("/sitemap_index.xml", "/sm1.xml.gz", "/sm2.txt", "/bomb.xml"):
        assert asked.count(sitemap) == 1
    assert "trace.log stats.json crawl.warc.gz sitemaps.csv\n" in result.stdout
    refused = [line for line in result.stdout.splitlines() if line.startswith("sitemap refused:")]
    assert len(refused) == 2   # the bomb, and the index listed again by itself
    assert any("bomb.xml" in line for line in refused)
    from warcio.archiveiterator import ArchiveIterator
    with open(tmp_path / "crawl.warc.gz", "rb") as f:   # pages only: sitemaps stream, unkept
        archived = {r.rec_headers.get_header("WARC-Target-URI")[len(base):]
                    for r in ArchiveIterator(f) if r.rec_type == "response"}
    assert archived == set(rows)
    stats = json.loads((tmp_path / "stats.json").read_text(encoding="utf-8"))
    assert stats["sitemaps"]["queued"] == 4 and stats["sitemaps"]["files"] == 4
    listed = list(csv.DictReader(open(tmp_path / "sitemaps.csv", encoding="utf-8")))
    assert {row["url"][len(base):] for row in listed} == {"/hidden1", "/a", "/hidden2", "/hidden3"}
    midnight = datetime(2026, 11, 30, tzinfo=timezone.utc).timestamp()   # <lastmod>2026-11-30
    assert {row["lastmod"] for row in listed if row["url"].endswith(("1", "2"))} == {f"{midnight:.0f}"}


def test_without_sitemaps_they_are_not_read(tmp_path):
    server, base = site()
    try:
        result = crawl(base + "/", "--out", str(tmp_path))
    finally:
        server.close()
    assert result.returncode == 0, result.stderr
    assert not any("sitemap" in path or path.startswith("/sm") for path in server.paths())
    assert not (tmp_path / "sitemaps.csv").exists()


def test_a_sitemap_that_is_no_url_is_a_usage_error(tmp_path):
    result = crawl("http://127.0.0.1:9/", "--out", str(tmp_path / "x"), "--sitemap", "sitemap.xml")
    assert result.returncode == 2 and "--sitemap: 'sitemap.xml' is not an http(s) URL" in result.stderr, result.stderr
    assert not (tmp_path / "x").exists()


def test_under_another_order_sitemap_pages_are_links_the_seed_goes_first(tmp_path):
    server, base = site()
    try:
        result = crawl(base + "/", "--out", str(tmp_path), "--sitemaps", "--order", "opic",
                       "--workers", "1")
    finally:
        server.close()
    assert result.returncode == 0, result.stderr
    rows = [(row["url"][len(base):], row["level"], row["via"])
            for row in csv.DictReader(open(tmp_path / "index.csv"))]
    assert rows[0] == ("/", "0", "seed")   # a listed page does not rank as a seed
    assert sorted(rows[1:]) == [("/a", "1", "sitemap"), ("/hidden1", "1", "sitemap"),
                                ("/hidden2", "1", "sitemap"), ("/hidden3", "1", "sitemap")]



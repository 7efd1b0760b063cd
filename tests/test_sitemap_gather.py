"""controller.sitemaps.gather: a site's sitemaps read through a real Fetcher
from real servers on loopback (127.0.0.1 and, for a sitemap on another
host, 127.0.0.2); the servers' logs show what was asked, and when."""
from __future__ import annotations

import gzip

import pytest
from getpage_stub import StubServer, local_config, page, send
from sitemap_files import index, urlset

from controller.sitemaps import MAX_FILES, gather
from getpage import Fetcher
from textfilter.sitemap import w3c_datetime
from urlfilter.rules import UrlRules

UA = "BfsBot/0.1 (+http://example.org/bot)"
DELAY = 0.2
SERVER_SIDE = 0.9   # the gap a server sees may be a little short of the client's (tests/manyhosts.py)


@pytest.fixture
def main():
    stub = StubServer("127.0.0.1")
    yield stub
    stub.close()


@pytest.fixture
def other():
    stub = StubServer("127.0.0.2")
    yield stub
    stub.close()


def xml(body: bytes, content_type: str = "application/xml"):
    return page(body, content_type)


def encoded(body: bytes):
    """Served compressed on the wire (Content-Encoding: gzip), as many servers do."""
    return lambda handler: send(handler, 200, gzip.compress(body, mtime=0), {
        "Content-Type": "application/xml", "Content-Encoding": "gzip"})


def scope_of(seed: str):
    return UrlRules.from_seeds([seed], exclude=["/private/"]).reject_reason


def build_site(main: StubServer, other: StubServer) -> None:
    m, o = main.url, other.url
    main.routes["/robots.txt"] = page(
        "User-agent: *\nDisallow: /blocked/\n"
        f"Sitemap: /sitemap_index.xml\nSitemap: {o('/cross.xml')}\nSitemap: /blocked/secret.xml\n",
        "text/plain")
    main.routes["/sitemap_index.xml"] = xml(index([
        m("/maps/pages.xml.gz"), m("/maps/news.xml"), m("/maps/list.txt"),
        o("/foreign.xml"), m("/sitemap_index.xml"), m("/maps/missing.xml"), m("/maps/pages.xml.gz")]))
    main.routes["/maps/pages.xml.gz"] = page(gzip.compress(urlset(
        [m("/p/1"), m("/p/2"), m("/private/x"), o("/p/9"), m("/p/1"), m("/p/3")],
        ["2024-01-01", "2024-02-02T10:00:00Z", "2024-01-01", "2024-01-01", "2025-01-01", "garbage"]), mtime=0),
        "application/x-gzip")
    main.routes["/maps/news.xml"] = encoded(urlset([m("/news/1"), m("/news/2")]))
    main.routes["/maps/list.txt"] = page(f"{m('/t/1')}\nnot a url\n{m('/t/2')}\n", "text/plain")
    main.routes["/extra.xml"] = xml(urlset([m("/e/1")]))
    other.routes["/cross.xml"] = xml(urlset([m("/x/1"), o("/own"), "http://127.0.0.3/elsewhere"]))


def test_a_sites_sitemaps_are_gathered_through_robots_txt_indexes_and_gzip(main, other):
    build_site(main, other)
    seed = main.url("/")
    with Fetcher(local_config(UA, delay=DELAY)) as fetcher:
        gathered = gather(fetcher, [seed, main.url("/other-seed")],
                          [main.url("/extra.xml"), main.url("/sitemap_index.xml")], scope_of(seed))
    m, o = main.url, other.url
    assert [(u.url, u.sitemap) for u in gathered.urls] == [
        (m("/p/1"), m("/maps/pages.xml.gz")), (m("/p/2"), m("/maps/pages.xml.gz")),
        (m("/p/3"), m("/maps/pages.xml.gz")),
        (m("/news/1"), m("/maps/news.xml")), (m("/news/2"), m("/maps/news.xml")),
        (m("/t/1"), m("/maps/list.txt")), (m("/t/2"), m("/maps/list.txt")),
        (m("/x/1"), o("/cross.xml")),          # cross-submitted: robots.txt of main names it
        (m("/e/1"), m("/extra.xml")),
    ]
    assert [u.lastmod for u in gathered.urls[:3]] == [
        w3c_datetime("2024-01-01"), w3c_datetime("2024-02-02T10:00:00Z"), None]
    assert gathered.problems == (
        f"{m('/sitemap_index.xml')}: listed again by {m('/sitemap_index.xml')}, which was read already: read once",
        f"{m('/maps/missing.xml')}: http: 404 Not Found",
        f"{m('/maps/pages.xml.gz')}: listed again by {m('/sitemap_index.xml')}, which was read already: read once",
        f"{m('/blocked/secret.xml')}: robots: disallowed by robots.txt",
    )
    assert gathered.dropped == {
        "sitemap on another origin than its index": 1,   # /foreign.xml
        "exclude": 1,                                    # /private/x, by the crawl's rules
        "on another origin than its sitemap": 2,         # o('/p/9'); 127.0.0.3 in cross.xml
        "listed twice": 1,                               # /p/1 again
        "not an http(s) URL": 1,                         # "not a url" in list.txt
        "scope": 1,                                      # o('/own'): cross.xml's own origin, not the crawl's
    }
    assert gathered.files == 8
    paths = main.paths()
    assert sorted(paths) == sorted(["/robots.txt", "/sitemap_index.xml", "/maps/pages.xml.gz",
                                    "/maps/news.xml", "/maps/list.txt", "/maps/missing.xml",
                                    "/extra.xml"])   # each once; /blocked/ never asked
    assert other.paths() == ["/robots.txt", "/cross.xml"]   # /foreign.xml never asked
    times = [r.at for r in main.received]
    assert min(b - a for a, b in zip(times, times[1:])) >= SERVER_SIDE * DELAY


def test_a_nested_index_is_refused_and_a_cycle_is_read_once(main):
    m = main.url
    main.routes["/a.xml"] = xml(index([m("/b.xml"), m("/leaf.xml")]))
    main.routes["/b.xml"] = xml(index([m("/a.xml")]))
    main.routes["/leaf.xml"] = xml(urlset([m("/1")]))
    with Fetcher(local_config(UA, delay=0)) as fetcher:
        gathered = gather(fetcher, [], [m("/a.xml"), m("/leaf.xml")])
    assert [u.url for u in gathered.urls] == [m("/1")]
    assert gathered.problems == (
        f"{m('/b.xml')}: refused: a sitemap index listed by a sitemap index "
        "(sitemaps.org: an index lists sitemaps, not indexes)",)
    assert main.paths() == ["/robots.txt", "/a.xml", "/b.xml", "/leaf.xml"]


def test_a_page_served_where_a_sitemap_should_be_is_no_sitemap(main):
    main.routes["/sitemap.xml"] = page("<html><body>Oops, not found</body></html>")
    main.routes["/empty.xml"] = xml(b"")
    with Fetcher(local_config(UA, delay=0)) as fetcher:
        gathered = gather(fetcher, [], [main.url("/sitemap.xml"), main.url("/empty.xml"), "ftp://x/s.xml"])
    assert gathered.problems == (
        "ftp://x/s.xml: not an http(s) URL (--sitemap)",
        f"{main.url('/sitemap.xml')}: not a sitemap: served as text/html",
        f"{main.url('/empty.xml')}: refused: empty: no sitemap in it",
    )
    assert gathered.urls == ()


def test_the_files_cap_and_the_urls_cap(main):
    m = main.url
    main.routes["/index.xml"] = xml(index([m(f"/s{k}.xml") for k in range(5)]))
    for k in range(5):
        main.routes[f"/s{k}.xml"] = xml(urlset([m(f"/{k}/{i}") for i in range(3)]))
    with Fetcher(local_config(UA, delay=0)) as fetcher:
        by_files = gather(fetcher, [], [m("/index.xml")], max_files=3)
        by_urls = gather(fetcher, [], [m("/index.xml")], max_urls=4)
    assert MAX_FILES == 100
    assert [u.url for u in by_files.urls] == [m(f"/{k}/{i}") for k in range(2) for i in range(3)]
    assert by_files.problems == ("3 sitemap(s) not read: the cap is 3 sitemap files per crawl",)
    assert [u.url for u in by_urls.urls] == [m("/0/0"), m("/0/1"), m("/0/2"), m("/1/0")]
    assert by_urls.dropped == {"over the cap of 4 URLs": 2}
    assert by_urls.problems == ("3 sitemap(s) not read: 4 URLs were gathered already (the cap)",)


def test_without_robots_txt_only_the_named_sitemaps_are_read(main):
    main.routes["/robots.txt"] = page("Sitemap: /from-robots.xml\n", "text/plain")
    main.routes["/named.xml"] = xml(urlset([main.url("/n")]))
    with Fetcher(local_config(UA, delay=0, obey_robots=False)) as fetcher:
        gathered = gather(fetcher, [main.url("/")], [main.url("/named.xml")])
    assert [u.url for u in gathered.urls] == [main.url("/n")]
    assert main.paths() == ["/named.xml"]


def test_an_old_namespace_sitemap_is_read_and_one_with_nothing_recognizable_says_so(main):
    old = "http://www.google.com/schemas/sitemap/0.84"
    main.routes["/old.xml"] = xml(f'<urlset xmlns="{old}"><url xmlns=""><loc>{main.url("/o")}</loc></url>'
                                  "</urlset>".encode())
    main.routes["/foreign.xml"] = xml(b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
                                      b'<x:url xmlns:x="http://example.test/x"><x:loc>/f</x:loc></x:url></urlset>')
    with Fetcher(local_config(UA, delay=0)) as fetcher:
        gathered = gather(fetcher, [], [main.url("/old.xml"), main.url("/foreign.xml")])
    assert [u.url for u in gathered.urls] == [main.url("/o")]
    assert gathered.problems == (
        f"{main.url('/foreign.xml')}: refused: nothing recognizable: no <url> in the <urlset>, only elements "
        "such as <url> in namespace http://example.test/x (sitemaps.org's namespace is "
        "http://www.sitemaps.org/schemas/sitemap/0.9)",)

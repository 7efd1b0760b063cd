"""textfilter.sitemap: sitemaps parsed from streamed bytes, hostile ones refused
with one line. (Through a real Fetcher and server: test_sitemap_gather.py;
the peak memory of each hostile file: test_sitemap_hostile.py.)"""
from __future__ import annotations

import gzip
import random
from datetime import datetime, timezone

import pytest
from faultsite import gzip_bomb
from sitemap_files import MIB, NS, billion_laughs, external_dtd, external_entity, index, inflating, nested, urlset

from textfilter.sitemap import (
    INFLATE_CHUNK,
    MAX_BYTES,
    MAX_DEPTH,
    MAX_ENTRIES,
    MAX_MARKUP_BYTES,
    SitemapEntry,
    SitemapError,
    SitemapParser,
    parse_sitemap,
    w3c_datetime,
)


def epoch(*fields, tz=timezone.utc):
    return datetime(*fields, tzinfo=tz).timestamp()


def chunked(data, size=64 * 1024):
    """``data`` as a Fetcher hands a body on: in pieces of at most 64 KiB."""
    return [data[start:start + size] for start in range(0, len(data), size)] or [b""]


def refusal(data, **settings):
    with pytest.raises(SitemapError) as caught:
        parse_sitemap(chunked(data), **settings)
    message = str(caught.value)
    assert "\n" not in message
    return message


# -- what a sitemap holds --------------------------------------------------------

def test_a_urlset_gives_its_locs_and_lastmods_in_document_order():
    body = (f'<?xml version="1.0" encoding="UTF-8"?>\n'
            f'<urlset xmlns="{NS}" xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">\n'
            "<url><loc>\n  http://a.test/?x=1&amp;y=2  \n</loc><lastmod>2024-01-02</lastmod>"
            "<changefreq>daily</changefreq><priority>0.5</priority>"
            "<image:image><image:loc>http://img.test/1.png</image:loc></image:image></url>\n"
            "<url><lastmod>2024-01-02</lastmod></url>\n"
            "<url><loc>http://a.test/b</loc><lastmod>yesterday</lastmod></url>\n"
            "</urlset>").encode()
    sitemap = parse_sitemap(body)
    assert sitemap.kind == "urlset"
    assert sitemap.entries == (SitemapEntry("http://a.test/?x=1&y=2", epoch(2024, 1, 2)),
                               SitemapEntry("http://a.test/b", None))
    assert sitemap.skipped == {"no <loc>": 1}


def test_a_sitemap_index_gives_its_child_sitemaps():
    sitemap = parse_sitemap(index(["http://a.test/s1.xml", "http://a.test/s2.xml.gz"]))
    assert sitemap.kind == "sitemapindex"
    assert [entry.loc for entry in sitemap.entries] == ["http://a.test/s1.xml", "http://a.test/s2.xml.gz"]


def test_no_namespace_or_another_one_is_read_by_local_names():
    plain = b"<urlset><url><loc>http://a.test/</loc></url></urlset>"
    old = b'<urlset xmlns="http://www.google.com/schemas/sitemap/0.84"><url><loc>http://a.test/</loc></url></urlset>'
    assert parse_sitemap(plain).entries == parse_sitemap(old).entries == (SitemapEntry("http://a.test/"),)


def test_gzip_is_told_by_its_magic_and_gives_the_same_entries():
    body = urlset([f"http://a.test/{i}" for i in range(500)], ["2024-05-06T07:08:09Z"] * 500)
    plain = parse_sitemap(body)
    assert parse_sitemap(gzip.compress(body, mtime=0)) == plain
    two_members = gzip.compress(body[:1000], mtime=0) + gzip.compress(body[1000:], mtime=0) + b"\0" * 8
    assert parse_sitemap(two_members) == plain


@pytest.mark.parametrize("compress", [False, True])
def test_chunk_boundaries_do_not_matter(compress):
    body = urlset([f"http://a.test/p/{i}?q=é" for i in range(300)], ["2024-02-03"] * 300)
    data = gzip.compress(body, mtime=0) if compress else body
    whole = parse_sitemap(data)
    rng = random.Random(7)
    for _ in range(20):
        cuts = sorted(rng.sample(range(1, len(data)), rng.randint(1, 40)))
        pieces = [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)])]
        assert parse_sitemap(pieces) == whole
    assert parse_sitemap([data[i:i + 1] for i in range(len(data))]) == whole


def test_entries_come_out_of_feed_as_they_complete():
    parser = SitemapParser()
    first = parser.feed(b'<urlset><url><loc>http://a.test/1</loc></url><url><loc>http://a')
    second = parser.feed(b".test/2</loc></url></urlset>")
    assert (first, second, parser.close()) == ([SitemapEntry("http://a.test/1")],
                                               [SitemapEntry("http://a.test/2")], [])


def test_a_text_sitemap_is_one_url_a_line():
    body = b"\xef\xbb\xbf\nhttp://a.test/1\r\n\n  http://a.test/2  \nhttp://a.test/%C3%A9\n"
    sitemap = parse_sitemap(body)
    assert sitemap.kind == "text"
    assert [e.loc for e in sitemap.entries] == ["http://a.test/1", "http://a.test/2", "http://a.test/%C3%A9"]
    assert parse_sitemap(gzip.compress(body, mtime=0)) == sitemap


def test_a_loc_of_2048_characters_or_more_is_skipped_and_counted():
    fits, too_long = "http://a.test/" + "x" * (2047 - 14), "http://a.test/" + "x" * (2048 - 14)
    xml = parse_sitemap(urlset([fits, too_long, "http://a.test/ok"]))
    assert [e.loc for e in xml.entries] == [fits, "http://a.test/ok"]
    assert xml.skipped == {"<loc> of 2,048 characters or more": 1}
    text = parse_sitemap(f"{fits}\n{too_long}\n{'y' * 100_000}\nhttp://a.test/ok\n".encode())
    assert [e.loc for e in text.entries] == [fits, "http://a.test/ok"]
    assert text.skipped == {"<loc> of 2,048 characters or more": 2}


# -- lastmod: W3C Datetime ------------------------------------------------------------

@pytest.mark.parametrize("text, expected", [
    ("2024", epoch(2024, 1, 1)),
    ("2024-07", epoch(2024, 7, 1)),
    ("2024-07-16", epoch(2024, 7, 16)),
    ("2024-07-16T19:20Z", epoch(2024, 7, 16, 19, 20)),
    ("2024-07-16T19:20+01:00", epoch(2024, 7, 16, 18, 20)),
    ("2024-07-16T19:20:30-05:30", epoch(2024, 7, 17, 0, 50, 30)),
    ("2024-07-16T19:20:30.45+01:00", epoch(2024, 7, 16, 18, 20, 30) + 0.45),
    ("  2024-07-16T19:20:30Z \n", epoch(2024, 7, 16, 19, 20, 30)),
    ("2024-07-16T19:20:30", None),          # a time needs its zone
    ("2024-07-16 19:20:30Z", None),
    ("2024-02-30", None),
    ("2024-13", None),
    ("2024-07-16T24:00Z", None),
    ("2024-07-16T19:20+01:60", None),
    ("2024-07-16T19:20+24:00", None),
    ("24-07-16", None),
    ("Tue, 16 Jul 2024 19:20:30 GMT", None),
    ("", None),
])
def test_lastmod_is_a_w3c_datetime_in_epoch_seconds(text, expected):
    assert w3c_datetime(text) == (pytest.approx(expected) if expected else None)


def test_a_bad_lastmod_is_ignored_not_fatal():
    sitemap = parse_sitemap(urlset(["http://a.test/1", "http://a.test/2"], ["soon", "2020-01-01"]))
    assert [e.lastmod for e in sitemap.entries] == [None, epoch(2020, 1, 1)]


# -- the sitemaps.org limits --------------------------------------------------------------

@pytest.mark.parametrize("kind", ["xml", "text"])
def test_exactly_50000_entries_is_a_sitemap_and_50001_is_refused(kind):
    assert MAX_ENTRIES == 50_000

    def body(n):
        locs = [f"http://a.test/{i}" for i in range(n)]
        return urlset(locs) if kind == "xml" else "\n".join(locs).encode()
    assert len(parse_sitemap(body(50_000)).entries) == 50_000
    assert refusal(body(50_001)) == "over 50,000 entries (the sitemaps.org limit)"


def test_exactly_max_bytes_is_read_and_one_more_is_refused():
    body = urlset(["http://a.test/"])
    padded = body.replace(b"</urlset>", b" " * 100 + b"</urlset>")
    limit = len(padded)
    assert SitemapParser(max_bytes=limit).feed(padded) == [SitemapEntry("http://a.test/")]
    parser = SitemapParser(max_bytes=limit - 1)
    with pytest.raises(SitemapError, match=f"^over {limit - 1:,} bytes \\(the sitemaps.org limit\\)"):
        parser.feed(padded)


def test_a_gzip_bomb_is_stopped_once_its_output_passes_50_mb():
    assert MAX_BYTES == 52_428_800
    bomb = inflating(f'<urlset xmlns="{NS}">'.encode(), b" " * MIB, 1024, b"</urlset>")   # 1 GiB of spaces
    assert len(bomb) < 2 * MIB
    parser = SitemapParser()
    with pytest.raises(SitemapError) as caught:
        for start in range(0, len(bomb), 64 * 1024):
            parser.feed(bomb[start:start + 64 * 1024])
    assert str(caught.value) == ("over 52,428,800 bytes when uncompressed (the sitemaps.org limit; "
                                 "a gzip bomb?): stopped reading")
    assert MAX_BYTES < parser.size <= MAX_BYTES + INFLATE_CHUNK
    assert start < len(bomb) // 10   # the rest of the download is never asked for


def test_a_bomb_of_zeros_is_refused_at_its_first_bytes():
    parser = SitemapParser()
    with pytest.raises(SitemapError, match="^binary data \\(a NUL byte\\) where a text sitemap was expected$"):
        parser.feed(gzip_bomb(1024 * MIB)[:64 * 1024])
    assert parser.size <= INFLATE_CHUNK


# -- hostile and broken files: one line each --------------------------------------------

DTD = "a DTD (<!DOCTYPE>) at line 2 (entity bombs and external entities need one)"


@pytest.mark.parametrize("body, message", [
    (billion_laughs(), DTD),
    (external_entity("file:///etc/passwd"), DTD),
    (external_dtd("http://127.0.0.1:9/evil.dtd"), DTD),
    (f'<urlset xmlns="{NS}"><url><loc>&lol;</loc></url></urlset>'.encode(),
     "malformed XML: undefined entity at line 1, column 70"),
    (nested(MAX_DEPTH + 1), f"elements nested over {MAX_DEPTH} deep at line 1"),
    (b"<urlset a='" + b"x" * (2 * MAX_MARKUP_BYTES) + b"'/>",
     "a tag, comment or declaration over 1,048,576 bytes at line 1"),
    (b"<urlset><!-- " + b"> " * MAX_MARKUP_BYTES + b"--></urlset>",
     "a tag, comment or declaration over 1,048,576 bytes at line 1"),
    (b"\n\n<urlset>\n<url><loc>http://a.test/</url>\n</urlset>", "malformed XML: mismatched tag at line 4, column 26"),
    (b"<urlset><url><loc>http://a.test/</loc></url>", "malformed XML: no element found at line 1, column 44"),
    (b'<rss version="2.0"><channel/></rss>', "not a sitemap: the root element is <rss>, not <urlset> or <sitemapindex>"),
    (b"<!DOCTYPE html><html><body>Not found</body></html>", DTD.replace("line 2", "line 1")),
    (b"http://a.test/\x00\x01\x02", "binary data (a NUL byte) where a text sitemap was expected"),
    (gzip.compress(urlset(["http://a.test/"]), mtime=0)[:-12], "gzip data ends early (a truncated file)"),
    (b"\x1f\x8b\x08\x00garbage-garbage", "broken gzip data (Error -3 while decompressing data: invalid code lengths set)"),
    (b"", "empty: no sitemap in it"),
    (b" \n\t ", "empty: no sitemap in it"),
    (gzip.compress(b"", mtime=0), "empty: no sitemap in it"),
])
def test_a_hostile_or_broken_file_is_refused_with_one_line(body, message):
    assert refusal(body) == message


def test_nesting_exactly_to_the_cap_is_fine():
    # Not refused for its depth: only because it lists no <url>.
    assert refusal(nested(MAX_DEPTH)).startswith("nothing recognizable: no <url> in the <urlset>, "
                                                 "only elements such as <a> in namespace ")


def test_an_index_where_no_index_may_be_is_refused_and_a_urlset_is_not():
    body = index(["http://a.test/s.xml"])
    assert refusal(body, allow_index=False) == ("a sitemap index listed by a sitemap index "
                                                "(sitemaps.org: an index lists sitemaps, not indexes)")
    assert parse_sitemap(urlset(["http://a.test/"]), allow_index=False).kind == "urlset"


def test_a_refusal_comes_out_of_the_feed_that_crossed_the_line():
    parser = SitemapParser(max_entries=2)
    assert parser.feed(b"<urlset><url><loc>http://a.test/1</loc></url>") == [SitemapEntry("http://a.test/1")]
    assert parser.feed(b"<url><loc>http://a.test/2</loc></url>") == [SitemapEntry("http://a.test/2")]
    with pytest.raises(SitemapError, match="^over 2 entries"):
        parser.feed(b"<url>")

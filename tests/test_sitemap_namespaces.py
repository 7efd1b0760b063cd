"""Sitemap namespaces, as Google's and Scrapy's readers take them: a table of
namespace mixes and the URLs each gives. An element counts when it is in
sitemaps.org's namespace (0.9), Google's older one (0.84), no namespace, or
the root's own; extensions (image, news ...) are not a page's <loc>."""
import pytest

from textfilter.sitemap import SitemapError, parse_sitemap

NS09 = "http://www.sitemaps.org/schemas/sitemap/0.9"
NS084 = "http://www.google.com/schemas/sitemap/0.84"
IMAGE = "http://www.google.com/schemas/sitemap-image/1.1"
OTHER = "http://example.test/not-a-sitemap"
URL = "http://a.test/page"

TABLE = [
    # (case, document, URLs found)
    ("0.9 throughout", f'<urlset xmlns="{NS09}"><url><loc>{URL}</loc></url></urlset>', [URL]),
    ("0.84 throughout", f'<urlset xmlns="{NS084}"><url><loc>{URL}</loc></url></urlset>', [URL]),
    ("no namespace", f"<urlset><url><loc>{URL}</loc></url></urlset>", [URL]),
    ("0.84 root, children in none", f'<urlset xmlns="{NS084}"><url xmlns=""><loc>{URL}</loc></url></urlset>',
     [URL]),
    ("0.9 root, children in none", f'<urlset xmlns="{NS09}"><url xmlns=""><loc>{URL}</loc></url></urlset>', [URL]),
    ("no root namespace, children in 0.9", f'<urlset><url xmlns="{NS09}"><loc>{URL}</loc></url></urlset>', [URL]),
    ("0.9 root, children in 0.84", f'<urlset xmlns="{NS09}"><url xmlns="{NS084}"><loc>{URL}</loc></url></urlset>',
     [URL]),
    ("0.9 url, loc in none", f'<urlset xmlns="{NS09}"><url><loc xmlns="">{URL}</loc></url></urlset>', [URL]),
    ("prefixed 0.9", f'<sm:urlset xmlns:sm="{NS09}"><sm:url><sm:loc>{URL}</sm:loc></sm:url></sm:urlset>', [URL]),
    ("prefixed root, plain children", f'<sm:urlset xmlns:sm="{NS09}"><url><loc>{URL}</loc></url></sm:urlset>',
     [URL]),
    ("root's own namespace throughout", f'<urlset xmlns="{OTHER}"><url><loc>{URL}</loc></url></urlset>', [URL]),
    ("image loc inside a url is not a page", f'<urlset xmlns="{NS09}" xmlns:i="{IMAGE}"><url><loc>{URL}</loc>'
     f"<i:image><i:loc>http://a.test/i.png</i:loc></i:image></url></urlset>", [URL]),
    ("image loc in place of loc is no loc", f'<urlset xmlns="{NS09}" xmlns:i="{IMAGE}"><url>'
     f"<i:loc>http://a.test/i.png</i:loc></url><url><loc>{URL}</loc></url></urlset>", [URL]),
    ("0.84 index, children in none", f'<sitemapindex xmlns="{NS084}"><sitemap xmlns=""><loc>{URL}.xml</loc>'
     "</sitemap></sitemapindex>", [URL + ".xml"]),
    ("index in none, children in 0.9", f'<sitemapindex><sitemap xmlns="{NS09}"><loc>{URL}.xml</loc>'
     "</sitemap></sitemapindex>", [URL + ".xml"]),
]


@pytest.mark.parametrize("case, document, urls", TABLE, ids=[row[0] for row in TABLE])
def test_namespaces(case, document, urls):
    assert [entry.loc for entry in parse_sitemap(document.encode()).entries] == urls


@pytest.mark.parametrize("document, message", [
    (f'<urlset xmlns="{NS09}" xmlns:i="{IMAGE}"><i:url><i:loc>{URL}</i:loc></i:url></urlset>',
     f"nothing recognizable: no <url> in the <urlset>, only elements such as <url> in namespace {IMAGE} "
     f"(sitemaps.org's namespace is {NS09})"),
    (f'<urlset xmlns="{NS09}"><page><loc>{URL}</loc></page></urlset>',
     f"nothing recognizable: no <url> in the <urlset>, only elements such as <page> in namespace {NS09} "
     f"(sitemaps.org's namespace is {NS09})"),
    (f'<urlset xmlns="{NS09}"><url xmlns="{OTHER}"><loc>{URL}</loc></url></urlset>',
     f"nothing recognizable: no <url> in the <urlset>, only elements such as <url> in namespace {OTHER} "
     f"(sitemaps.org's namespace is {NS09})"),
    (f'<urlset xmlns="{NS09}"></urlset>', "empty: the <urlset> lists nothing"),
    (f'<sitemapindex xmlns="{NS09}">\n</sitemapindex>', "empty: the <sitemapindex> lists nothing"),
])
def test_a_sitemap_with_nothing_recognizable_says_so_in_one_line(document, message):
    with pytest.raises(SitemapError) as caught:
        parse_sitemap(document.encode())
    assert str(caught.value) == message

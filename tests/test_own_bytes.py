"""Every row's pages/ file holds exactly the bytes its own URL served: the same
article in other encodings, declared in other ways, is a duplicate by its
text but keeps its own bytes; only byte-equal copies share a file."""
import csv
import hashlib

import pytest

from controller.config import CrawlConfig
from controller.engine import Crawl
from demosite import Response
from demosite.server import serve

ARTICLE = ("Le coût de la vie à Montréal : une élève très sûre d'elle explique où "
           "l'été se passe, « déjà vu », naïve façon de dire qu'il faut économiser.")
TITLE = "Économie d'été"

# (how the charset is declared, codec): header, <meta charset>, <meta http-equiv>
DECLARATIONS = ("header", "meta", "http-equiv")
ENCODINGS = ("utf-8", "windows-1252", "iso-8859-15", "utf-16")


def page(encoding: str, declared: str) -> tuple[dict, bytes]:
    meta = {"meta": f'<meta charset="{encoding}">',
            "http-equiv": f'<meta http-equiv="Content-Type" content="text/html; charset={encoding}">',
            "header": ""}[declared]
    html = (f"<!DOCTYPE html><html><head>{meta}<title>{TITLE}</title></head>"
            f"<body><p>{ARTICLE}</p></body></html>")
    header = "text/html" + (f"; charset={encoding}" if declared == "header" else "")
    codec = "utf-16" if encoding == "utf-16" else encoding   # Python's utf-16 writes a BOM
    return {"Content-Type": header}, html.encode(codec)


def variants() -> dict[str, tuple[dict, bytes]]:
    found = {}
    for encoding in ENCODINGS:
        for declared in DECLARATIONS:
            if encoding == "utf-16" and declared != "header":
                continue   # a BOM, not a <meta>, declares UTF-16 (HTML standard)
            found[f"/{encoding}-{declared}.html"] = page(encoding, declared)
    found["/copy-of-utf-8-header.html"] = found["/utf-8-header.html"]   # byte-equal
    return found


@pytest.fixture(scope="module")
def crawl(tmp_path_factory):
    pages = variants()
    hub = "".join(f'<a href="{path}">{path}</a> ' for path in pages).encode()

    def answer(request):
        if request.path == "/":
            return Response(200, {"Content-Type": "text/html; charset=utf-8"},
                            b"<html><body>" + hub + b"</body></html>")
        if request.path in pages:
            headers, body = pages[request.path]
            return Response(200, headers, body)
        return Response(404, {"Content-Type": "text/plain"}, b"")

    out = tmp_path_factory.mktemp("bytes") / "out"
    with serve(answer) as (base, _):
        Crawl(CrawlConfig(seeds=(base,), out=out, delay=0, workers=4, per_host=4,
                          max_depth=1, max_pages=0, progress=False)).run()
    with open(out / "index.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    return out, pages, rows


def path_of(row):
    return "/" + row["url"].split("/", 3)[3]


def test_every_html_path_holds_its_own_urls_bytes(crawl):
    out, pages, rows = crawl
    articles = [r for r in rows if path_of(r) in pages]
    assert len(articles) == len(pages)
    for row in articles:
        served = pages[path_of(row)][1]
        assert (out / row["html_path"]).read_bytes() == served, row["url"]
        assert row["body_md5"] == hashlib.md5(served).hexdigest()


def test_text_equal_pages_are_duplicates_that_share_only_the_text(crawl):
    out, pages, rows = crawl
    articles = [r for r in rows if path_of(r) in pages]
    # The first copy is the first one processed (fetches run in parallel).
    [first] = [r for r in articles if not r["duplicate_of"]]
    rest = [r for r in articles if r is not first]
    assert all(r["duplicate_of"] == first["id"] for r in rest), [r["url"] for r in rest]
    assert {r["text_path"] for r in articles} == {first["text_path"]}
    assert ARTICLE in (out / first["text_path"]).read_text(encoding="utf-8")
    # Only byte-equal pages share an html file.
    by_file = {}
    for row in articles:
        by_file.setdefault(row["html_path"], set()).add(row["body_md5"])
    assert all(len(digests) == 1 for digests in by_file.values())
    # A duplicate shares its first copy's file when the bytes are equal: here only
    # the byte-equal pair can, and only when one of them is the first copy.
    sharing = [r for r in articles if r["html_path"] != f"pages/{r['id']}.html"]
    pair = {"/copy-of-utf-8-header.html", "/utf-8-header.html"}
    assert [path_of(r) for r in sharing] == (sorted(pair - {path_of(first)})
                                             if path_of(first) in pair else [])


def test_no_file_in_pages_is_left_without_a_row(crawl):
    out, _, rows = crawl
    files = {f"pages/{p.name}" for p in (out / "pages").iterdir()}
    assert files == {r["html_path"] for r in rows if r["html_path"]}

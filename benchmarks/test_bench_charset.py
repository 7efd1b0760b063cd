"""Micro-benchmark of finding a 43 KB page's declared encoding
(getpage/charset.py ``meta_codec``: the HTML Standard's prescan of the first
1024 bytes, then the crawler's scan of the rest of the <head>), for a page
that declares it first, one that declares it late in a long head, and one
that does not declare it.

Run:  .venv/bin/python -m pytest benchmarks/test_bench_charset.py --benchmark-enable \\
          --benchmark-columns=median,iqr,rounds
Without --benchmark-enable (the project's default) each runs once, as a test.
"""
from __future__ import annotations

import pytest

from getpage.charset import meta_codec

HEAD = ('<!DOCTYPE html><html lang="en"><head><meta name="viewport" content="width=device-width">'
        + "".join(f'<link rel="stylesheet" href="/css/s{i}.css" media="all" crossorigin="anonymous">'
                  for i in range(10))
        + "<script>" + "var x = 1;\n" * 300 + "</script><style>" + "p { margin: 0 }\n" * 300 + "</style>")
BODY = "<body>" + '<div class="c"><a href="/x/y?z=1" title="t">link</a> text text</div>' * 500 + "</body></html>"
PAGES = {
    "meta first": ('<meta charset="windows-1251">' + HEAD + "</head>" + BODY, "cp1251"),
    "meta late in the head": (HEAD + '<meta charset="windows-1251"></head>' + BODY, "cp1251"),
    "no meta": (HEAD + "</head>" + BODY, None),
}


@pytest.mark.parametrize("shape", list(PAGES))
def test_meta_codec_43kb_page(benchmark, shape):
    page, codec = PAGES[shape]
    assert benchmark(meta_codec, page.encode("ascii")) == codec

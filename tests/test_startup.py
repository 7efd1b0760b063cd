"""What a crawl loads: the modules only some options or commands need stay unloaded.

A crawl with the default options never loads BeautifulSoup (the lxml reader
reads ordinary pages without it), the readers of `crawler report` and
`crawler export`, `crawler recrawl`'s command, nor what --extract, --topic,
--config, --extractor regex or a SimHash need: together a few hundred
milliseconds of CPU at every start (benchmarks/RESULTS.md, the politeness
bound on real sites). Checked on a real crawl with -X importtime, which the
parser processes inherit, so their imports are checked too; the same crawl
with the options that need such a module does load it.
"""
from __future__ import annotations

import subprocess
import sys

import pytest

from demosite import Response

PAGE = ("<html><head><title>{title}</title></head><body><h1>{title}</h1>"
        "<p>Some text about {title}.</p>{links}</body></html>")
PAGES = {"/": ["/a.html", "/b.html"], "/a.html": ["/b.html", "/"], "/b.html": ["/a.html"]}
NOT_LOADED = ("bs4", "soupsieve", "textfilter.text", "textfilter.tree", "textfilter.regex_links",
              "textfilter.extract", "cssselect", "textfilter.relevance", "numpy", "tomllib",
              "controller.readers.report", "controller.readers.export", "controller.recrawl_cli")


def site(request):
    if request.path not in PAGES:
        return Response(404, {"Content-Type": "text/plain"}, b"not found")
    links = "".join(f'<a href="{href}">{href}</a>' for href in PAGES[request.path])
    body = PAGE.format(title=request.path, links=links).encode("utf-8")
    return Response(200, {"Content-Type": "text/html; charset=utf-8"}, body)


def loaded_modules(base_url: str, out, *options: str) -> list[str]:
    """Every module the crawl's processes imported, once per process that imported it."""
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "controller", "crawl", base_url,
                           "--out", str(out), "--delay", "0", "--processes", "1", "--quiet", *options],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return [line.rsplit("|", 1)[1].strip() for line in done.stderr.splitlines()
            if line.startswith("import time:") and "|" in line]


def test_a_default_crawl_loads_only_what_it_uses(serve, tmp_path):
    with serve(site) as (base_url, log):
        modules = loaded_modules(base_url, tmp_path / "out")
        assert {request.path for request in log} >= set(PAGES)
    assert modules.count("controller.digest") == 2   # the crawler's and its parser process's imports
    assert "textfilter.fast" in modules
    assert sorted(set(NOT_LOADED) & set(modules)) == []


@pytest.mark.parametrize("options, module", [
    (("--extractor", "bs4"), "bs4"),
    (("--extractor", "regex"), "textfilter.regex_links"),
    (("--extract", "title=css:h1"), "textfilter.extract"),
    (("--content-dedup", "near"), "numpy"),
], ids=["bs4", "regex", "extract", "near"])
def test_an_option_loads_what_it_needs(serve, tmp_path, options, module):
    with serve(site) as (base_url, _):
        assert module in loaded_modules(base_url, tmp_path / "out", *options)

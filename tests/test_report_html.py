"""`crawler report DIR --format html`: one self-contained page, read in a real
browser (headless Chromium over the DevTools protocol, tests/browser.py, with
the network off) as a reader would: no console errors, the level table and
the figures on the screenshot, a header click sorts, and a crawled page
whose title holds a script does not run it. The crawls are real: the demo
site, and a small hostile site on 127.0.0.1."""
import html
import io
import os
import re
import subprocess
import sys

import numpy
import pytest

from browser import CHROMIUM, Browser
from controller.config import CrawlConfig
from controller.engine import Crawl
from controller.readers.report import build_report, sections, settings_section
from demosite import DemoServer, Response

needs_chromium = pytest.mark.skipif(CHROMIUM is None,
                                    reason="chromium not installed (apt-get install -y chromium)")
SAVED_GREEN = (0x2e, 0x7d, 0x32)   # plot.py's colour of saved pages


def report_html(out, *, env=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "controller", "report", str(out), "--format", "html"],
                          capture_output=True, text=True, timeout=120, env=env)


@pytest.fixture(scope="module")
def demo(tmp_path_factory, demo_site):
    """A finished demo crawl and its HTML report, written by the CLI."""
    out = tmp_path_factory.mktemp("html") / "demo"
    with DemoServer(demo_site) as server:
        Crawl(CrawlConfig(seeds=(server.url,), out=out, max_depth=6, max_pages=0, workers=4,
                          per_host=4, delay=0, retry_backoff=0.05, processes=0, progress=False)).run()
    done = report_html(out)
    assert done.returncode == 0, done.stderr
    page = out.parent / "report.html"
    page.write_text(done.stdout, encoding="utf-8")
    return out, page


@pytest.fixture(scope="module")
def browser():
    if CHROMIUM is None:
        pytest.skip("chromium not installed (apt-get install -y chromium)")
    with Browser() as running:
        yield running


@pytest.fixture(scope="module")
def demo_page(demo, browser):
    return browser.open(demo[1].as_uri())


# -- the file ------------------------------------------------------------------
def test_the_page_names_nothing_outside_itself(demo):
    text = demo[1].read_text(encoding="utf-8")
    references = re.findall(r'\b(?:src|href|action|srcset)\s*=\s*"([^"]*)"', text)
    assert references and all(ref.startswith(("data:image/svg+xml;base64,", "#"))
                              for ref in references)
    assert "@import" not in text and "url(" not in text
    assert re.search(r"""<meta http-equiv="Content-Security-Policy" content="default-src 'none';""", text)


def test_every_section_of_the_text_report_and_the_settings_are_on_the_page(demo):
    out, page = demo
    text = page.read_text(encoding="utf-8")
    report = build_report(out)
    for table in [*sections(report), settings_section(report)]:
        assert f"<h2>{html.escape(table.title)}</h2>" in text
        for cell in (c for row in table.rows for c in row):
            assert f">{html.escape(cell)}</t" in text, (table.title, cell)
        for note in table.notes:
            assert html.escape(note) in text
    assert report.settings["max_depth"] == 6 and "<td>max_depth</td><td>6</td>" in text
    assert text.count('<img src="data:image/svg+xml;base64,') == 4


# -- in Chromium ---------------------------------------------------------------------
@needs_chromium
def test_chromium_shows_it_without_errors_and_asks_for_nothing_but_the_file(demo, demo_page):
    _, page = demo
    assert demo_page.problems() == []
    assert demo_page.requests[0] == page.as_uri()
    assert all(url.startswith("data:image/svg+xml") for url in demo_page.requests[1:])
    shown = demo_page.evaluate("""Array.from(document.images).map(
        i => [i.closest('figure').id, i.complete, i.naturalWidth, i.naturalHeight])""")
    assert [name for name, *_ in shown] == ["figure-levels", "figure-duplicates", "figure-timeline",
                                            "figure-statuses"]
    assert all(complete and width > 300 and height > 200 for _, complete, width, height in shown)


def level_rows(page):
    return page.evaluate("""Array.from(document.querySelectorAll('#levels tbody tr'))
        .map(tr => Array.from(tr.cells).map(td => td.textContent))""")


@needs_chromium
def test_the_screenshot_holds_the_level_table_and_the_figures(demo, demo_page, tmp_path):
    from PIL import Image
    out, _ = demo
    report = build_report(out)
    levels = next(table for table in sections(report) if table.title == "Levels")
    assert level_rows(demo_page) == [list(row) for row in levels.rows[:-1]]
    png = demo_page.screenshot()
    (tmp_path / "report.png").write_bytes(png)
    shot = Image.open(io.BytesIO(png)).convert("RGB")
    width, height = demo_page.evaluate("[document.documentElement.scrollWidth, "
                                       "document.documentElement.scrollHeight]")
    assert shot.size == (width, height) and width == 1280 and height > 3000
    assert len(shot.getcolors(1 << 24)) > 200                     # not blank
    table = shot.crop(box_of(demo_page, "#levels table"))
    assert dark_share(table) > 0.01                              # its digits are drawn
    figure = shot.crop(box_of(demo_page, "#figure-levels img"))
    assert figure.size[0] > 300 and colour_count(figure, SAVED_GREEN) > 2000   # the saved bars


def box_of(page, selector):
    """(left, top, right, bottom) of the element in page coordinates."""
    return tuple(round(v) for v in page.evaluate(f"""(() => {{
        const r = document.querySelector({selector!r}).getBoundingClientRect();
        return [r.left + scrollX, r.top + scrollY, r.right + scrollX, r.bottom + scrollY]; }})()"""))


def dark_share(image):
    return float((numpy.asarray(image.convert("L")) < 100).mean())


def colour_count(image, rgb):
    return int((numpy.asarray(image) == rgb).all(axis=2).sum())


@needs_chromium
def test_clicking_a_header_sorts_the_rows_numbers_as_numbers(demo, browser):
    page = browser.open(demo[1].as_uri())
    unsorted = level_rows(page)
    urls = sorted(int(row[1]) for row in unsorted)
    click_header(page, "#levels", "urls")
    assert [int(row[1]) for row in level_rows(page)] == urls        # 1, 17, 31 ... not 1, 137, 145
    click_header(page, "#levels", "urls")
    assert [int(row[1]) for row in level_rows(page)] == urls[::-1]
    assert page.evaluate("document.querySelector('#levels tfoot td').textContent") == "total"
    titles = top_titles(page)            # by in-links, ties by URL: "Demo Daily", "About ..."
    click_header(page, "#top-pages-by-in-links", "title")
    assert top_titles(page) == sorted(titles) != titles
    assert page.problems() == []


def top_titles(page):
    return page.evaluate("""Array.from(document.querySelectorAll('#top-pages-by-in-links tbody tr'))
        .map(tr => tr.cells[3].textContent)""")


def click_header(page, section, name):
    """Scroll the header into view and click its middle with the mouse."""
    x, y = page.evaluate(f"""(() => {{
        const th = Array.from(document.querySelectorAll('{section} thead th'))
            .find(th => th.textContent === {name!r});
        th.scrollIntoView({{block: 'center'}});
        const r = th.getBoundingClientRect();
        return [r.left + r.width / 2, r.top + r.height / 2]; }})()""")
    page.click(x, y)


# -- untrusted text from the crawl -----------------------------------------------------
HOSTILE_TITLES = {"/a": "<script>window.pwned = 1</script>",
                  "/b": '"><img src=x onerror="window.pwned = 2">'}
HOSTILE_REASON = "<script>window.pwned = 3</script>"
HOSTILE_AGENT = "bfs-crawler/0.1 (<script>window.pwned = 4</script>)"


def hostile_site(request):
    if request.path == "/gone":   # the reason phrase is the server's to choose
        request.send_response(404, HOSTILE_REASON)
        request.send_header("Content-Length", "0")
        request.end_headers()
        return None
    if request.path == "/":
        body = "<title>home</title>" + "".join(f'<a href="{p}">x</a>' for p in (*HOSTILE_TITLES, "/gone"))
    elif request.path in HOSTILE_TITLES:
        body = f'<title>{html.escape(HOSTILE_TITLES[request.path])}</title><a href="/">home</a>'
    else:
        return Response(404, {"Content-Type": "text/plain"}, b"no")
    return Response(200, {"Content-Type": "text/html; charset=utf-8"}, body.encode())


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    from demosite.server import serve
    out = tmp_path_factory.mktemp("hostile") / "crawl"
    with serve(hostile_site) as (url, _):
        Crawl(CrawlConfig(seeds=(url,), out=out, max_depth=2, delay=0, retries=0, processes=0,
                          user_agent=HOSTILE_AGENT, progress=False)).run()
    done = report_html(out)
    assert done.returncode == 0, done.stderr
    page = out.parent / "hostile.html"
    page.write_text(done.stdout, encoding="utf-8")
    return out, page


def test_titles_error_texts_and_settings_from_the_crawl_are_escaped(hostile):
    out, page = hostile
    text = page.read_text(encoding="utf-8")
    report = build_report(out)
    assert {link.title for link in report.top_in_links} >= set(HOSTILE_TITLES.values())
    assert any(HOSTILE_REASON in example.detail for group in report.errors_by_kind
               for example in group.examples)
    for hostile_text in (*HOSTILE_TITLES.values(), HOSTILE_REASON, HOSTILE_AGENT):
        assert hostile_text not in text and html.escape(hostile_text) in text
    assert text.count("<script") == 1


@needs_chromium
def test_a_script_in_a_crawled_title_does_not_run(hostile, browser):
    _, page = hostile
    tab = browser.open(page.as_uri())
    assert tab.evaluate("typeof window.pwned") == "undefined"
    shown = tab.evaluate("document.body.innerText")
    assert all(t in shown for t in (*HOSTILE_TITLES.values(), HOSTILE_REASON, HOSTILE_AGENT))
    assert tab.evaluate("document.scripts.length") == 1
    assert tab.evaluate("document.querySelectorAll('img:not([src^=\"data:image/svg+xml\"])').length") == 0
    assert tab.problems() == []


@needs_chromium
def test_the_probe_sees_errors_and_requests_when_there_are_some(browser, tmp_path):
    """The checks above would pass on a broken probe: this page has every fault."""
    page = tmp_path / "faulty.html"
    page.write_text('<!DOCTYPE html><title>faulty</title><img src="http://127.0.0.1:9/none.png">'
                    '<script>console.error("said"); notDefined();</script>', encoding="utf-8")
    tab = browser.open(page.as_uri())
    problems = " | ".join(tab.problems())
    assert "console.error" in problems and "notDefined" in problems and "log error" in problems
    assert "http://127.0.0.1:9/none.png" in tab.requests


# -- without matplotlib -------------------------------------------------------------------
def test_without_matplotlib_the_page_has_the_tables_and_one_line_on_the_figures(demo, tmp_path):
    out, _ = demo
    blocker = tmp_path / "block"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text("import sys\nsys.modules['matplotlib'] = None\n")
    done = report_html(out, env={**os.environ, "PYTHONPATH": str(blocker)})
    assert done.returncode == 0 and done.stderr == ""
    assert "<img" not in done.stdout and '<section id="levels">' in done.stdout
    hint = [line for line in done.stdout.splitlines() if "need matplotlib" in line]
    assert len(hint) == 1 and "pip install -e &#x27;.[plot]&#x27;" in hint[0]

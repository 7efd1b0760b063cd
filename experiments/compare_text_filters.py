"""Compare the plain text filter with the main-content filter (--text main).

Filters, each html -> text:

- plain:       ``textfilter.parse(html, url, "lxml").text``, every readable line
               of the page (the crawler's default; the time includes the link
               extraction that parse() does in the same pass);
- main:        ``textfilter.maintext.main_text(html)``, the main block only;
- trafilatura: ``trafilatura.extract`` (comments off, tables on), when it is
               installed; a point of comparison, not a crawler dependency.

Corpora:

- ``demo``: every HTML page of the demo site, rendered by ``DemoSite.respond``
  (no server), decoded as the crawler decodes. Its ground truth comes from
  the generator's known template (demosite/render.py): the main content of a
  demo page is its ``<article>`` (the h1, the prose, the facts list, the
  table) minus the link lists inside it (the ``<section>`` "Read on" list,
  the only sections the template puts there), laid out by the plain filter.
  Scores are token precision, recall and F1 against that reference, counted
  as multisets and summed over the pages of a type (micro-average). Tokens
  are words, and single characters for Chinese and Japanese script.
- ``pgdocs``: the PostgreSQL manual's HTML (``--pgdocs DIR``, default the
  Debian package's directory; skipped when absent). No ground truth: only
  how much text each filter keeps and how fast.

Decoding is not timed. Every filter is timed per call, in interleaved
passes (--repeat; the median pass is shown). Outputs in --out: results.csv,
results.md (also printed) and run.json.

    python experiments/compare_text_filters.py
    python experiments/compare_text_filters.py --repeat 5 --out experiments/results/text_filters
"""
from __future__ import annotations

import re
import statistics
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import click
from lxml import etree

from demosite import DemoSite
from getpage.charset import decode_html
from report import Column, fix_hash_seed, markdown_table, run_info, write_csv, write_json, write_markdown
from textfilter.maintext import main_text
from textfilter.parse import parse

DEMO_HOST = "127.0.0.1:8000"
DEMO_URL = f"http://{DEMO_HOST}"
PGDOCS = Path("/usr/share/doc/postgresql-doc-15/html")
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_TOKEN = re.compile(f"[{_CJK}]|[^\\W{_CJK}]+")

CSV_KEYS = ("corpus", "page_type", "filter", "pages", "precision", "recall", "f1",
            "chars_per_page", "share_of_plain", "same_as_plain", "ms_per_page")


def plain_text(html: str) -> str:
    return parse(html, DEMO_URL, "lxml").text


def trafilatura_filter() -> Callable[[str], str] | None:
    """trafilatura.extract as html -> text, or None when it is not installed."""
    try:
        import trafilatura
    except ImportError:
        return None

    def extract(html: str) -> str:
        return trafilatura.extract(html, include_comments=False, include_tables=True) or ""
    return extract


@dataclass(frozen=True)
class Page:
    name: str               # demo path or file name
    kind: str               # page type: home, section, category, list, article ...
    html: str               # decoded
    reference: str | None   # the main content by the template, None without ground truth


@dataclass(frozen=True)
class Row:
    corpus: str
    page_type: str
    filter: str
    pages: int
    precision: float | None     # shared tokens / tokens the filter kept
    recall: float | None        # shared tokens / reference tokens
    f1: float | None
    chars_per_page: float       # mean length of the text kept
    share_of_plain: float       # chars kept / chars of the plain text
    same_as_plain: int          # pages whose text equals the plain text
    ms_per_page: float          # median pass


# -- pages -----------------------------------------------------------------------------

def page_type(path: str) -> str:
    """The demo page's type, read from its path (demosite/model.py's layout)."""
    segments = path.partition("?")[0].strip("/").split("/")
    name = segments[-1]
    if path == "/":
        return "home"
    if segments[0] == "intl":
        return "intl"
    if name == "articles.html":
        return "list"
    if re.fullmatch(r"story-\d+\.html", name):
        return "article"
    if name in ("comments.html", "attachments.html"):
        return name.removesuffix(".html")
    if path.endswith("/") and segments[0] not in ("private", "calendar"):
        return "section" if len(segments) == 1 else "category"
    return "other"


def template_reference(html: str) -> str:
    """The demo template's main content: <article> minus its <section> link lists, laid out plainly."""
    tree = etree.fromstring(html, etree.HTMLParser())
    article = tree.find(".//article")
    if article is None:
        return ""
    for section in article.findall("section"):
        article.remove(section)
    return plain_text(etree.tostring(article, encoding="unicode", method="html"))


def demo_pages(seed: int) -> list[Page]:
    site = DemoSite(seed)
    pages = []
    for path in site.paths():
        response = site.respond(path, DEMO_HOST)
        html, _ = decode_html(response.body, response.headers.get("Content-Type", ""))
        pages.append(Page(path, page_type(path), html, template_reference(html)))
    return pages


def pgdocs_pages(directory: Path, limit: int) -> list[Page]:
    files = sorted(directory.glob("*.html"))
    if limit:
        files = files[:limit]
    return [Page(path.name, "all", decode_html(path.read_bytes(), "")[0], None) for path in files]


# -- measuring -------------------------------------------------------------------------

def run_filters(pages: list[Page], filters: dict[str, Callable[[str], str]],
                repeat: int) -> tuple[dict[str, list[str]], dict[str, list[list[float]]]]:
    """(texts by filter, seconds per page per pass by filter); passes interleave the filters."""
    texts: dict[str, list[str]] = {}
    seconds: dict[str, list[list[float]]] = {name: [] for name in filters}
    clock = time.perf_counter
    for _ in range(repeat):
        for name, apply in filters.items():
            results, times = [], []
            for page in pages:
                started = clock()
                results.append(apply(page.html))
                times.append(clock() - started)
            texts.setdefault(name, results)
            seconds[name].append(times)
    return texts, seconds


def tokens(text: str) -> Counter[str]:
    return Counter(_TOKEN.findall(text))


def score(kept: list[str], references: list[str | None]) -> tuple[float | None, ...]:
    """Micro-averaged (precision, recall, F1) of token multisets; Nones without references."""
    if any(reference is None for reference in references):
        return None, None, None
    shared = found = expected = 0
    for text, reference in zip(kept, references, strict=True):
        mine, truth = tokens(text), tokens(reference)
        shared += sum((mine & truth).values())
        found += sum(mine.values())
        expected += sum(truth.values())
    precision = shared / found if found else None
    recall = shared / expected if expected else None
    f1 = (2 * precision * recall / (precision + recall)
          if precision is not None and recall is not None and precision + recall else None)
    return precision, recall, f1


def rows_for(corpus: str, pages: list[Page], texts: dict[str, list[str]],
             seconds: dict[str, list[list[float]]]) -> list[Row]:
    """One row per (page type, filter), then one per filter over all pages."""
    groups = sorted({page.kind for page in pages})
    selections = [(kind, [i for i, page in enumerate(pages) if page.kind == kind]) for kind in groups]
    if len(groups) > 1:
        selections.append(("all", list(range(len(pages)))))
    rows = []
    for kind, chosen in selections:
        plain_chars = sum(len(texts["plain"][i]) for i in chosen)
        for name in texts:
            kept = [texts[name][i] for i in chosen]
            precision, recall, f1 = score(kept, [pages[i].reference for i in chosen])
            passes = [sum(run[i] for i in chosen) for run in seconds[name]]
            rows.append(Row(
                corpus=corpus, page_type=kind, filter=name, pages=len(chosen),
                precision=precision, recall=recall, f1=f1,
                chars_per_page=sum(map(len, kept)) / len(chosen),
                share_of_plain=sum(map(len, kept)) / plain_chars if plain_chars else 0.0,
                same_as_plain=sum(texts[name][i] == texts["plain"][i] for i in chosen),
                ms_per_page=1000 * statistics.median(passes) / len(chosen)))
    return rows


# -- outputs ---------------------------------------------------------------------------

def _share(value: object) -> str:
    return f"{value:.3f}"


TABLE = (
    Column("corpus", "corpus"), Column("page_type", "page type"), Column("filter", "filter"),
    Column("pages", "pages", lambda v: f"{v:,}"),
    Column("precision", "precision", _share), Column("recall", "recall", _share),
    Column("f1", "F1", _share),
    Column("chars_per_page", "chars/page", lambda v: f"{v:,.0f}"),
    Column("share_of_plain", "share of plain", _share),
    Column("same_as_plain", "= plain", lambda v: f"{v:,}"),
    Column("ms_per_page", "ms/page", lambda v: f"{v:.3f}"),
)

NOTES = """\
Reference (demo only): the text of the page's `<article>` minus the `<section>` link lists
inside it, laid out by the plain filter. It comes from the demo generator's known
template (demosite/render.py puts the h1, the prose, the facts list and the table in
`<article>`; menus, breadcrumbs, related links, map, iframes and footer outside it), so
it is exact for this site and says nothing about other templates. The demo is also an
easy case for main_text: its template is semantic (`<article>`, `<nav>`, `<aside>`,
`<footer>`). The PostgreSQL manual (DocBook output, `<div>`s and tables, no semantic
tags) has no ground truth here: only the text kept is reported.

Precision, recall, F1: token multisets, summed over the pages of a row (micro-average).
"share of plain": characters kept / characters of the plain text. "= plain": pages whose
text equals the plain text (for main: the pages where it found no main block and fell
back). ms/page: per call, median of the timed passes; plain includes parse()'s link
extraction, which the crawler does anyway; main and trafilatura parse the page again."""


def write_outputs(out: Path, info, rows: list[Row], repeat: int, seconds: float,
                  extra: dict[str, object]) -> str:
    out.mkdir(parents=True, exist_ok=True)
    data = [asdict(row) for row in rows]
    write_csv(out / "results.csv", CSV_KEYS, data)
    table = markdown_table(TABLE, data)
    summary = f"{repeat} timed passes (median shown); decoding not timed; total {seconds:.0f} s."
    body = f"{summary}\n\n{table}\n\n{NOTES}\n"
    write_markdown(out / "results.md", "Plain text vs main-content text", info, body)
    write_json(out / "run.json", info, {"seconds": round(seconds, 1), "repeat": repeat, **extra})
    return f"{info.markdown()}\n\n{body}"


@click.command()
@click.option("--seed", default=2026, show_default=True, help="Seed of the demo site.")
@click.option("--pgdocs", default=PGDOCS, show_default=True,
              type=click.Path(file_okay=False, path_type=Path),
              help="Directory of the PostgreSQL manual's HTML; skipped when it does not exist.")
@click.option("--pg-limit", default=0, show_default=True, type=click.IntRange(min=0),
              help="Use only the first N manual pages (by file name); 0 = all.")
@click.option("--repeat", default=3, show_default=True, type=click.IntRange(min=1),
              help="Timed passes over each corpus; the median is reported.")
@click.option("--no-trafilatura", is_flag=True, help="Leave trafilatura out even if installed.")
@click.option("--out", default="text-filter-results", show_default=True,
              type=click.Path(file_okay=False, path_type=Path), help="Output directory.")
def main(seed, pgdocs, pg_limit, repeat, no_trafilatura, out):
    """Score plain and main-content text on the demo site; measure both on the PostgreSQL manual.

    Example: python experiments/compare_text_filters.py --out experiments/results/text_filters
    """
    started = time.perf_counter()
    filters: dict[str, Callable[[str], str]] = {"plain": plain_text, "main": main_text}
    extract = None if no_trafilatura else trafilatura_filter()
    if extract is not None:
        filters["trafilatura"] = extract
    corpora = [("demo", demo_pages(seed))]
    if pgdocs.is_dir():
        corpora.append(("pgdocs", pgdocs_pages(pgdocs, pg_limit)))
    described = "; ".join(
        f"{name}: {len(pages):,} pages, {sum(len(p.html) for p in pages) / 1e6:.1f} M characters"
        for name, pages in corpora)
    info = run_info("compare_text_filters", f"demo site seed {seed} and {pgdocs}; {described}", seed)
    rows: list[Row] = []
    for name, pages in corpora:
        click.echo(f"{name}: {len(pages):,} pages ...", err=True)
        texts, seconds = run_filters(pages, filters, repeat)
        rows += rows_for(name, pages, texts, seconds)
    extra = {"filters": list(filters), "trafilatura": _version("trafilatura")}
    click.echo(write_outputs(out, info, rows, repeat, time.perf_counter() - started, extra))
    click.echo(f"written to {out}/")


def _version(package: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version(package)
    except PackageNotFoundError:
        return None


if __name__ == "__main__":
    fix_hash_seed()
    main()

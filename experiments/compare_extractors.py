"""Compare link extractors: the design paper's regular expressions against HTML parsers.

The paper extracts links with regular expressions because it found regex
matching faster than a Java HTML package.  This experiment measures that
claim for Python on real pages.  Extractors, each returning (<base href>,
links) by the rules of ``textfilter.links``:

- regex:           ``textfilter``'s regex scan of the raw source (the paper's way);
- bs4:             BeautifulSoup on lxml, the crawler's default (the reference);
- bs4-html.parser: BeautifulSoup on Python's own html.parser;
- lxml:            lxml's parser events, no tree (``textfilter``'s "lxml").

Pages: ``demo`` (every HTML page of the demo site, rendered by
``DemoSite.respond``; no server) and ``crawl:DIR`` (the pages/ of any crawler
output directory, decoded by the charset the crawl recorded in index.csv).
Decoding is done before timing: only extraction is measured.

For each corpus and extractor: ms per page (median of --repeat runs over the
whole corpus), links found, and agreement with the reference extractor:
precision (share of the links found that the reference also finds on that
page, counted as multisets), recall (share of the reference's links found)
and pages whose answer is identical (same base, same links, same order).
Outputs in --out: results.csv, results.md (also printed), run.json,
ms_per_page.png and differences.md (examples of each disagreement).  The plot
needs matplotlib (the ``experiments`` extra); without it it is skipped, and the
run says so in one line before it starts measuring.

    python experiments/compare_extractors.py
    python experiments/compare_extractors.py --corpus demo --corpus crawl:crawl-out
"""
from __future__ import annotations

import csv
import statistics
import time
import warnings
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import click
from bs4 import BeautifulSoup, MarkupResemblesLocatorWarning, XMLParsedAsHTMLWarning

from demosite import DemoSite
from getpage.charset import decode_html
from report import (Column, fix_hash_seed, markdown_table, peak_memory_mb, plotting_available, run_info,
                    write_csv, write_json, write_markdown)
from textfilter import EXTRACTORS
from textfilter.links import soup_links

Links = tuple[str | None, tuple[str, ...]]

DEMO_HOST = "127.0.0.1:8000"
CSV_KEYS = ("corpus", "extractor", "pages", "ms_per_page", "links", "reference_links", "matched",
            "precision", "recall", "identical_pages", "ms_per_page_min", "ms_per_page_max",
            "mean_page_kb")


def html_parser_links(html: str) -> Links:
    """(base, links) from BeautifulSoup on Python's html.parser, by textfilter's link rules."""
    with warnings.catch_warnings():   # bs4's hints are for people typing at a prompt
        warnings.simplefilter("ignore", MarkupResemblesLocatorWarning)
        warnings.simplefilter("ignore", XMLParsedAsHTMLWarning)
        return soup_links(BeautifulSoup(html, "html.parser"))


CANDIDATES: dict[str, Callable[[str], Links]] = {
    "regex": EXTRACTORS["regex"],
    "bs4": EXTRACTORS["bs4"],
    "bs4-html.parser": html_parser_links,
    "lxml": EXTRACTORS["lxml"],
}


@dataclass(frozen=True)
class Page:
    name: str       # where it came from: a demo path or a file under pages/
    html: str       # decoded text


@dataclass(frozen=True)
class PageSet:
    label: str      # "demo" or "crawl:DIR", as given
    description: str
    pages: tuple[Page, ...]
    chars: int


@dataclass(frozen=True)
class Measurement:
    corpus: str
    extractor: str
    pages: int
    ms_per_page: float             # median over repeats
    links: int                     # links found (duplicates within a page counted)
    reference_links: int
    matched: int                   # links also found by the reference on the same page (multiset)
    precision: float | None        # matched / links
    recall: float | None           # matched / reference_links
    identical_pages: int           # same base, same links, same order as the reference
    ms_per_page_min: float
    ms_per_page_max: float
    mean_page_kb: float


# -- pages ---------------------------------------------------------------------------------

def demo_pages(seed: int) -> list[Page]:
    """Every HTML page of the demo site with this seed, decoded as a crawler would."""
    site = DemoSite(seed)
    pages = []
    for path in site.paths():
        response = site.respond(path, DEMO_HOST)
        text, _ = decode_html(response.body, response.headers.get("Content-Type", ""))
        pages.append(Page(path, text))
    return pages


def crawl_pages(directory: Path) -> list[Page]:
    """The saved pages of a crawl, decoded by their Content-Type (index.csv) or by sniffing."""
    index = directory / "index.csv"
    if index.is_file():
        with index.open(newline="", encoding="utf-8", errors="replace") as file:
            rows = [(row["html_path"], row.get("content_type", "")) for row in csv.DictReader(file)
                    if row.get("html_path")]
    else:
        files = sorted((directory / "pages").glob("*.html"), key=lambda p: (len(p.stem), p.stem))
        rows = [(f"pages/{path.name}", "") for path in files]
    if not rows:
        raise ValueError(f"{directory} holds no saved pages (pages/*.html)")
    pages = []
    for relative, content_type in rows:
        text, _ = decode_html((directory / relative).read_bytes(), content_type)
        pages.append(Page(relative, text))
    return pages


def load_pages(spec: str, seed: int, limit: int) -> PageSet:
    """The pages named by spec ("demo" or "crawl:DIR"), the first ``limit`` of them if limit > 0."""
    kind, _, argument = spec.partition(":")
    if spec == "demo":
        pages, origin = demo_pages(seed), f"demo site, seed {seed}"
    elif kind == "crawl" and argument:
        pages, origin = crawl_pages(Path(argument)), f"crawl {argument}"
    else:
        raise ValueError(f"unknown page corpus {spec!r}; use demo or crawl:DIR")
    if limit:
        pages = pages[:limit]
    chars = sum(len(page.html) for page in pages)
    return PageSet(spec, f"{origin}: {len(pages):,} pages, {chars / 1e6:.1f} M characters",
                   tuple(pages), chars)


# -- measuring -------------------------------------------------------------------------------

def extract_all(extractor: Callable[[str], Links], pages: tuple[Page, ...]) -> tuple[float, list[Links]]:
    """(elapsed seconds, answers) for one pass over the pages."""
    started = time.perf_counter()
    answers = [extractor(page.html) for page in pages]
    return time.perf_counter() - started, answers


def agreement(answers: list[Links], reference: list[Links]) -> tuple[int, int, int, int]:
    """(links found, reference links, matched, identical pages), links compared per page as multisets."""
    found = expected = matched = identical = 0
    for mine, theirs in zip(answers, reference, strict=True):
        found += len(mine[1])
        expected += len(theirs[1])
        matched += sum((Counter(mine[1]) & Counter(theirs[1])).values())
        identical += mine == theirs
    return found, expected, matched, identical


def measure_corpus(page_set: PageSet, names: list[str], reference: str, repeat: int):
    """Measurements of every extractor on one page set, and their answers by name."""
    seconds: dict[str, list[float]] = {name: [] for name in names}
    answers: dict[str, list[Links]] = {}
    for _ in range(repeat):
        for name in names:   # interleaved, so a slow spell of the machine hits every extractor
            elapsed, result = extract_all(CANDIDATES[name], page_set.pages)
            seconds[name].append(elapsed)
            answers.setdefault(name, result)
    count = len(page_set.pages)
    measurements = []
    for name in names:
        found, expected, matched, identical = agreement(answers[name], answers[reference])
        per_page = [1000 * s / count for s in seconds[name]]
        measurements.append(Measurement(
            corpus=page_set.label, extractor=name, pages=count,
            ms_per_page=statistics.median(per_page), ms_per_page_min=min(per_page),
            ms_per_page_max=max(per_page), links=found, reference_links=expected, matched=matched,
            precision=matched / found if found else None,
            recall=matched / expected if expected else None,
            identical_pages=identical, mean_page_kb=page_set.chars / count / 1000))
    return measurements, answers


def differences(page_set: PageSet, answers: dict[str, list[Links]], reference: str,
                per_extractor: int = 10) -> str:
    """Markdown: for each extractor, up to per_extractor pages where it disagrees with the reference."""
    sections = []
    for name, result in answers.items():
        if name == reference:
            continue
        lines = []
        for page, mine, theirs in zip(page_set.pages, result, answers[reference]):
            if mine != theirs:
                lines.append(_difference(page.name, mine, theirs))
        shown = lines[:per_extractor]
        more = f"\n- ... and {len(lines) - len(shown)} more pages" if len(lines) > len(shown) else ""
        body = "\n".join(shown) + more if lines else "no differences: every page identical"
        sections.append(f"### {page_set.label}: {name} vs {reference}\n\n{body}\n")
    return "\n".join(sections)


def _difference(name: str, mine: Links, theirs: Links) -> str:
    extra = list((Counter(mine[1]) - Counter(theirs[1])).elements())
    missing = list((Counter(theirs[1]) - Counter(mine[1])).elements())
    parts = [f"- `{name}`:"]
    if mine[0] != theirs[0]:
        parts.append(f"base {mine[0]!r} instead of {theirs[0]!r};")
    if extra:
        parts.append(f"extra {_few(extra)};")
    if missing:
        parts.append(f"missing {_few(missing)};")
    if not extra and not missing and mine[0] == theirs[0]:
        parts.append("same links in another order;")
    return " ".join(parts).rstrip(";")


def _few(links: list[str], shown: int = 4) -> str:
    text = ", ".join(f"`{link[:80]}`" for link in links[:shown])
    return text + (f" (+{len(links) - shown})" if len(links) > shown else "")


# -- outputs --------------------------------------------------------------------------------

def _share(value: float) -> str:
    return f"{value:.4f}"


TABLE = (
    Column("corpus", "pages from"), Column("extractor", "extractor"),
    Column("pages", "pages", lambda v: f"{v:,}"), Column("mean_page_kb", "KB/page", lambda v: f"{v:.1f}"),
    Column("ms_per_page", "ms/page", lambda v: f"{v:.3f}"),
    Column("links", "links", lambda v: f"{v:,}"),
    Column("reference_links", "reference links", lambda v: f"{v:,}"),
    Column("precision", "precision", _share), Column("recall", "recall", _share),
    Column("identical_pages", "identical pages", lambda v: f"{v:,}"),
)


def plot(path: Path, measurements: list[Measurement], subtitle: str) -> Path:
    """Horizontal bars of ms per page, one group per corpus, log scale; precision/recall written beside."""
    import matplotlib
    matplotlib.use("Agg")   # files only: no display needed, same output everywhere
    import matplotlib.pyplot as plt
    labels = [f"{m.extractor}  ({m.corpus[:30]})" for m in measurements]
    figure, axes = plt.subplots(figsize=(8, 1.2 + 0.42 * len(measurements)), dpi=100)
    colors = {name: f"C{i}" for i, name in enumerate(CANDIDATES)}
    positions = range(len(measurements))[::-1]
    axes.barh(positions, [m.ms_per_page for m in measurements],
              color=[colors[m.extractor] for m in measurements])
    for y, m in zip(positions, measurements):
        note = f" {m.ms_per_page:.2f} ms"
        if m.precision is not None and m.recall is not None:
            note += f"   P {m.precision:.3f}  R {m.recall:.3f}"
        axes.text(m.ms_per_page, y, note, va="center", fontsize=8)
    axes.set_yticks(list(positions), labels, fontsize=8)
    axes.set_xscale("log")
    axes.set_xlim(right=max(m.ms_per_page for m in measurements) * 30)
    axes.set_xlabel("ms per page (log scale); P/R = precision/recall vs the reference")
    axes.set_title("Link extraction: time per page", fontsize=11)
    figure.text(0.99, 0.005, subtitle, ha="right", va="bottom", fontsize=7, color="0.4")
    figure.tight_layout(rect=(0, 0.03, 1, 1))
    figure.savefig(path)
    plt.close(figure)
    return path


def parse_extractors(_context, _parameter, value: str) -> list[str]:
    names = [part.strip() for part in value.split(",") if part.strip()]
    unknown = [name for name in names if name not in CANDIDATES]
    if unknown or not names:
        raise click.BadParameter(f"unknown {', '.join(unknown) or 'empty list'}; "
                                 f"choose from {','.join(CANDIDATES)}")
    return list(dict.fromkeys(names))


@click.command()
@click.option("--corpus", "corpora", multiple=True, default=("demo",), show_default=True,
              help="demo (the demo site's pages) or crawl:DIR (a crawler output directory); repeatable.")
@click.option("--extractors", default=",".join(CANDIDATES), show_default=True,
              callback=parse_extractors, help="Extractors to run, comma-separated.")
@click.option("--reference", default="bs4", show_default=True, type=click.Choice(list(CANDIDATES)),
              help="The extractor whose answers count as right.")
@click.option("--repeat", default=3, show_default=True, type=click.IntRange(min=1),
              help="Timed passes over each corpus; the median is reported.")
@click.option("--limit", default=0, show_default=True, type=click.IntRange(min=0),
              help="Use only the first N pages of each corpus; 0 = all.")
@click.option("--seed", default=2026, show_default=True, help="Seed of the demo site.")
@click.option("--out", default="extractor-results", show_default=True,
              type=click.Path(file_okay=False, path_type=Path), help="Output directory.")
def main(corpora, extractors, reference, repeat, limit, seed, out):
    """Time link extraction per page and score each extractor against the reference parser.

    Example: python experiments/compare_extractors.py --corpus demo --corpus crawl:crawl-out
    """
    started = time.perf_counter()
    plots = plotting_available()
    names = extractors if reference in extractors else [reference, *extractors]
    try:
        page_sets = [load_pages(spec, seed, limit) for spec in corpora]
    except (ValueError, OSError) as error:
        raise click.ClickException(str(error)) from None
    info = run_info("compare_extractors", "; ".join(s.description for s in page_sets), seed)
    measurements, notes = [], []
    for page_set in page_sets:
        click.echo(f"{page_set.description} ...", err=True)
        found, answers = measure_corpus(page_set, names, reference, repeat)
        measurements += found
        notes.append(differences(page_set, answers, reference))
    out.mkdir(parents=True, exist_ok=True)
    _write_outputs(out, info, measurements, notes, reference, repeat, time.perf_counter() - started, plots)


def _write_outputs(out: Path, info, measurements: list[Measurement], notes: list[str], reference: str,
                   repeat: int, seconds: float, plots: bool) -> None:
    rows = [asdict(m) for m in measurements]
    write_csv(out / "results.csv", CSV_KEYS, rows)
    table = markdown_table(TABLE, rows)
    peak = peak_memory_mb()
    summary = (f"Reference: {reference}. {repeat} timed passes per corpus (median shown); "
               f"decoding not timed; total {seconds:.0f} s.")
    write_markdown(out / "results.md", "Link extractor comparison", info, f"{summary}\n\n{table}")
    (out / "differences.md").write_text(
        f"# Where the extractors disagree with {reference}\n\n" + "\n".join(notes), encoding="utf-8")
    write_json(out / "run.json", info, {"seconds": round(seconds, 1), "reference": reference,
                                         "repeat": repeat,
                                         "peak_memory_mb": None if peak is None else round(peak, 1)})
    if plots:
        plot(out / "ms_per_page.png", measurements, f"{info.python.split(' (')[0]} · {info.date[:10]}")
    click.echo(f"{info.markdown()}\n\n{summary}\n\n{table}\n\nwritten to {out}/")


if __name__ == "__main__":
    fix_hash_seed()
    main()

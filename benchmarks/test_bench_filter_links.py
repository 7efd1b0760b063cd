"""Micro-benchmarks of URL_Filter's per-link work: normalize + reject_reason, fast and reference.

For every link of a crawled page the worker calls ``normalize(href, base)``
and then ``UrlRules.reject_reason(url)`` (controller/digest.py,
``Digester.filter_links``).  The inputs are the real links of the issue-5
benchmark site (benchmarks/site.py, 3,000 pages: hrefs like ``/p/2/2017.html``,
``../1/1234.html``, ``./2345.html``, ``2345.html``, ``/index.html#s2``): 300
pages, read with ``textfilter.parse(html, url, "lxml")``, each link with its
page's URL as the base, as a crawl sees them.  Every benchmark first checks
that the fast path answers exactly as the reference.

Run:  .venv/bin/python -m pytest benchmarks/test_bench_filter_links.py --benchmark-enable \\
          --benchmark-columns=median,iqr,rounds
Without --benchmark-enable (the project's default) each runs once, as a test.
µs per link, CPU time (time.process_time), median of interleaved rounds:

      .venv/bin/python -m benchmarks.test_bench_filter_links
"""
from __future__ import annotations

import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from benchmarks.site import SiteSpec, generate, page_path
from textfilter import parse
from urlfilter import UrlRules, normalize
from urlfilter.normalize import normalize_reference

ORIGIN = "http://127.0.0.1:8080"
SITE = SiteSpec(pages=3000)      # three directories, so "../" links occur
PAGES_READ = range(1, SITE.pages, SITE.pages // 300)

Link = tuple[str, str]           # (href, base)


def read_links(site: Path) -> list[Link]:
    """(href, page URL) of every link on the sampled pages, in document order."""
    links = []
    for page in PAGES_READ:
        url = ORIGIN + page_path(page)
        parsed = parse((site / page_path(page)[1:]).read_text(encoding="utf-8"), url, "lxml")
        links += [(href, parsed.base_url) for href in parsed.links]
    return links


def filter_fast(links: list[Link], rules: UrlRules) -> list[str | None]:
    """What filter_links computes per link: the URL if accepted, else the reason."""
    answers = []
    for href, base in links:
        url = normalize(href, base, fold_www=False, drop_query=False)
        answers.append(url if url is None else rules.reject_reason(url) or url)
    return answers


def filter_reference(links: list[Link], rules: UrlRules) -> list[str | None]:
    answers = []
    for href, base in links:
        url = normalize_reference(href, base, fold_www=False, drop_query=False)
        answers.append(url if url is None else rules.reject_reason_reference(url) or url)
    return answers


def normalize_all(links: list[Link], implementation: Callable) -> list[str | None]:
    return [implementation(href, base, fold_www=False, drop_query=False) for href, base in links]


@pytest.fixture(scope="module")
def links() -> list[Link]:
    with tempfile.TemporaryDirectory() as site:
        generate(SITE, Path(site))
        links = read_links(Path(site))
    assert len(links) > 25 * len(PAGES_READ)
    return links


@pytest.fixture(scope="module")
def rules() -> UrlRules:
    return UrlRules.from_seeds([ORIGIN + "/index.html"])


@pytest.mark.parametrize("implementation", [filter_fast, filter_reference], ids=["fast", "reference"])
def test_filter_links(benchmark, links, rules, implementation):
    expected = filter_reference(links, rules)
    assert sum(isinstance(answer, str) and answer.startswith(ORIGIN) for answer in expected) > 0.95 * len(expected)
    assert benchmark(implementation, links, rules) == expected


@pytest.mark.parametrize("implementation", [normalize, normalize_reference], ids=["fast", "reference"])
def test_normalize(benchmark, links, implementation):
    expected = normalize_all(links, normalize_reference)
    assert benchmark(normalize_all, links, implementation) == expected


@pytest.mark.parametrize("method", ["reject_reason", "reject_reason_reference"], ids=["fast", "reference"])
def test_reject_reason(benchmark, links, rules, method):
    urls = [url for url in normalize_all(links, normalize) if url is not None]
    expected = [rules.reject_reason_reference(url) for url in urls]
    check = getattr(rules, method)
    assert benchmark(lambda: [check(url) for url in urls]) == expected


def cpu_microseconds_per_link(links: list[Link], rules: UrlRules, rounds: int = 15) -> dict[str, float]:
    """Median CPU µs per link of each implementation, rounds interleaved (a shared
    machine's slow moments hit both alike)."""
    urls = [url for url in normalize_all(links, normalize) if url is not None]
    work = {
        "normalize, reference": lambda: normalize_all(links, normalize_reference),
        "normalize, fast": lambda: normalize_all(links, normalize),
        "reject_reason, reference": lambda: [rules.reject_reason_reference(url) for url in urls],
        "reject_reason, fast": lambda: [rules.reject_reason(url) for url in urls],
        "both, reference": lambda: filter_reference(links, rules),
        "both, fast": lambda: filter_fast(links, rules),
    }
    times: dict[str, list[float]] = {name: [] for name in work}
    for _ in range(rounds):
        for name, run in work.items():
            start = time.process_time()
            run()
            times[name].append((time.process_time() - start) / len(links) * 1e6)
    return {name: statistics.median(samples) for name, samples in times.items()}


def test_fast_path_is_at_least_twice_as_fast(links, rules):
    """A loose floor (the measured gain is about 3x) that a busy machine cannot trip."""
    micros = cpu_microseconds_per_link(links, rules, rounds=5)
    assert micros["both, reference"] >= 2 * micros["both, fast"], micros


def main() -> None:
    with tempfile.TemporaryDirectory() as site:
        generate(SITE, Path(site))
        links = read_links(Path(site))
    micros = cpu_microseconds_per_link(links, UrlRules.from_seeds([ORIGIN + "/index.html"]))
    print(f"{len(links)} links of {len(PAGES_READ)} pages; CPU µs per link, median of 15 interleaved rounds")
    for name, value in micros.items():
        print(f"  {name:26s} {value:6.3f}")
    for part in ("normalize", "reject_reason", "both"):
        print(f"  {part} speed-up: {micros[part + ', reference'] / micros[part + ', fast']:.1f}x")


if __name__ == "__main__":
    sys.exit(main())

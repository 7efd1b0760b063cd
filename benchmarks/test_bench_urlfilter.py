"""Micro-benchmarks of URL_Filter's hot paths (pytest-benchmark), and the cost
per link of resolving links as browsers do.

Run:  .venv/bin/python -m pytest benchmarks/test_bench_urlfilter.py --benchmark-enable
They are timed only when asked; a normal test run executes each once.

CPU µs per link of each way to normalize, on the benchmark site's links and on
the WHATWG URL Standard's test inputs, with how many of the standard's cases
each resolves as the standard says (a table; also written to
benchmarks/results/urlfilter-whatwg.md):

      .venv/bin/python -m benchmarks.test_bench_urlfilter [--before COMMIT]

The ways: this tree's ``normalize`` (fast path, then the reference) and
``normalize_reference`` (urlfilter/whatwg.py, then the canonical step);
ada-url (a C++ WHATWG parser) followed by the same canonical step; and, from
``git show COMMIT:urlfilter/normalize.py``, the RFC 3986 code before the
WHATWG parser (``--before``, default 28556cb; "none" leaves it out).
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
import types
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path

import ada_url
import pytest

from benchmarks.report import git_commit, machine
from benchmarks.site import generate
from benchmarks.test_bench_filter_links import SITE, read_links
from urlfilter import SEEN_ALGORITHMS, make_seen, normalize, whatwg
from urlfilter.normalize import canonical, normalize_reference

BASE = "https://www.example.com/a/b/index.html"
HREFS = [f"../section/{i}/article-{i * 7}.html?ref=home&page={i}" for i in range(1000)]
ROOT = Path(__file__).resolve().parent.parent
WHATWG_DATA = ROOT / "tests" / "data" / "whatwg" / "urltestdata.json"
RESULTS_FILE = Path(__file__).resolve().parent / "results" / "urlfilter-whatwg.md"
RESULTS_HEADING = ("## URL_Filter per link, RFC 3986 and WHATWG resolution (issue 11)\n\n"
                   "Written by `.venv/bin/python -m benchmarks.test_bench_urlfilter --rounds 21`\n"
                   "(to `benchmarks/results/urlfilter-whatwg.md`, which `benchmarks/run.py` copies "
                   "into RESULTS.md).\n\n")
BEFORE = "28556cb"        # the last commit whose normalize followed RFC 3986

Link = tuple[str, str | None]                 # (href, base)
Case = tuple[str, str | None, str | None]     # (href, base, the standard's href or None)


def test_normalize_relative_links(benchmark):
    result = benchmark(lambda: [normalize(h, BASE) for h in HREFS])
    assert result[0] == "https://www.example.com/a/section/0/article-0.html?ref=home&page=0"


@pytest.mark.parametrize("name", sorted(SEEN_ALGORITHMS))
def test_seen_add_and_lookup(benchmark, name):
    urls = [f"https://news.example.com/2026/11/{i % 28 + 1:02d}/story-{i}.html" for i in range(2000)]

    def run():
        seen = make_seen(name, capacity=4000)
        return sum(seen.add(u) for u in urls) + sum(seen.add(u) for u in urls)

    assert benchmark(run) == len(urls)


# -- the WHATWG inputs ---------------------------------------------------------------------

def whatwg_cases() -> list[Case]:
    """The standard's cases with an http(s) base or none (as tests/test_whatwg_urls.py reads them)."""
    cases = []
    for entry in json.loads(WHATWG_DATA.read_text(encoding="utf-8")):
        if isinstance(entry, dict) and (entry["base"] is None or entry["base"].startswith(("http:", "https:"))):
            href = entry.get("href")
            expected = href if not entry.get("failure") and href.startswith(("http:", "https:")) else None
            cases.append((entry["input"], entry["base"], expected))
    return cases


def url_from_href(href: str) -> whatwg.Url | None:
    """The parts of an http(s) URL as the standard serializes it (ada's output)."""
    scheme, _, rest = href.partition("://")
    if scheme not in whatwg.DEFAULT_PORTS:
        return None
    rest, hash_sign, fragment = rest.partition("#")
    rest, question_mark, query = rest.partition("?")
    authority, slash, path = rest.partition("/")
    userinfo, _, host_and_port = authority.rpartition("@")
    username, _, password = userinfo.partition(":")
    host, _, port = host_and_port.rpartition(":") if host_and_port.rfind(":") > host_and_port.rfind("]") \
        else (host_and_port, "", "")
    return whatwg.Url(scheme, username, password, host, port, slash + path,
                      query if question_mark else None, fragment if hash_sign else None)


def normalize_with_ada(url: str, base: str | None = None) -> str | None:
    """ada-url's resolution, then the crawler's canonical step."""
    try:
        href = ada_url.join_url(base, url) if base is not None else ada_url.normalize_url(url)
    except ValueError:
        return None
    parsed = url_from_href(href)
    return canonical(parsed) if parsed is not None else None


@pytest.fixture(scope="module")
def cases() -> list[Case]:
    return whatwg_cases()


@pytest.mark.parametrize("implementation", [normalize, normalize_reference, normalize_with_ada],
                         ids=["fast", "reference", "ada"])
def test_normalize_whatwg_inputs(benchmark, cases, implementation):
    expected = [normalize_reference(href) if href else None for _, _, href in cases]
    assert benchmark(lambda: [implementation(url, base) for url, base, _ in cases]) == expected


# -- the table ----------------------------------------------------------------------------

def module_at(commit: str, path: str) -> types.ModuleType:
    """``path`` as it was at ``commit``, imported under a name of its own (git show, read-only)."""
    source = subprocess.run(["git", "-C", str(ROOT), "show", f"{commit}:{path}"],
                            capture_output=True, text=True, check=True).stdout
    module = types.ModuleType(f"{Path(path).stem}_at_{commit}")
    exec(compile(source, f"{commit}:{path}", "exec"), module.__dict__)
    return module


def ways(before: str | None) -> dict[str, Callable[..., str | None]]:
    found = {}
    if before:
        old = module_at(before, "urlfilter/normalize.py")
        found |= {f"RFC 3986 ({before}), fast path": old.normalize,
                  f"RFC 3986 ({before}), reference": old.normalize_reference}
    return found | {"WHATWG, fast path (normalize)": normalize,
                    "WHATWG, reference (normalize_reference)": normalize_reference,
                    "ada-url + canonical step": normalize_with_ada}


def microseconds_per_link(links: list[Link], candidates: dict[str, Callable], rounds: int) -> dict[str, float]:
    """Median CPU µs per link of each candidate, rounds interleaved (a shared
    machine's slow moments hit all alike)."""
    times: dict[str, list[float]] = {name: [] for name in candidates}
    for _ in range(rounds):
        for name, run in candidates.items():
            start = time.process_time()
            for href, base in links:
                run(href, base)
            times[name].append((time.process_time() - start) / len(links) * 1e6)
    return {name: statistics.median(samples) for name, samples in times.items()}


def score(cases: list[Case], implementation: Callable) -> tuple[int, int]:
    """(cases resolved as the standard says, cases) on the crawler's canonical forms."""
    right = sum(implementation(url, base) == (normalize_reference(href) if href else None)
                for url, base, href in cases)
    return right, len(cases)


def table(site_links: list[Link], cases: list[Case], candidates: dict[str, Callable], rounds: int) -> str:
    links = [(url, base) for url, base, _ in cases]
    site = microseconds_per_link(site_links, candidates, rounds)
    standard = microseconds_per_link(links, candidates, rounds)
    browser_cases = [case for case in cases if case[1] and case[2]]
    lines = [f"CPU µs per link, median of {rounds} interleaved rounds; {len(site_links)} links of the "
             f"benchmark site ({len(range(1, SITE.pages, SITE.pages // 300))} pages), {len(links)} WHATWG inputs "
             f"(http(s) base or none). Right: WHATWG cases resolved as the standard says (canonical forms), "
             f"all {len(cases)} and the {len(browser_cases)} with an http(s) base and an http(s) result.", "",
             "| way | µs/link, site links | µs/link, WHATWG inputs | right, all | right, http(s) base and result |",
             "|---|---:|---:|---:|---:|"]
    for name, run in candidates.items():
        right, total = score(cases, run)
        browser_right, browser_total = score(browser_cases, run)
        lines.append(f"| {name} | {site[name]:.2f} | {standard[name]:.2f} | {right}/{total} | "
                     f"{browser_right}/{browser_total} |")
    return "\n".join(lines) + "\n"


def measured_on() -> str:
    m, source = machine(), git_commit(ROOT)
    dirty = " (working tree with uncommitted changes)" if source["dirty"] else ""
    return (f"{m['date']}, commit `{source['commit']}`{dirty}; {m['cpu']}, {m['cores']} cores, Python {m['python']}, "
            f"ada-url {version('ada-url')}; "
            f"load average at start {' '.join(m['load_average'])}.\n\n")


def main(argv: list[str] | None = None) -> int:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--before", default=BEFORE, help="commit of the code to compare with ('none': leave out)")
    options.add_argument("--rounds", type=int, default=15)
    args = options.parse_args(argv)
    with tempfile.TemporaryDirectory() as site:
        generate(SITE, Path(site))
        site_links = read_links(Path(site))
    text = measured_on() + table(site_links, whatwg_cases(), ways(None if args.before == "none" else args.before),
                                 args.rounds)
    print(text)
    RESULTS_FILE.parent.mkdir(exist_ok=True)
    RESULTS_FILE.write_text(RESULTS_HEADING + text, encoding="utf-8")   # RESULTS.md takes it whole
    return 0


if __name__ == "__main__":
    sys.exit(main())

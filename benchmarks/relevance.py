"""What topical relevance costs a parser process, per 16 KB page (issue 15).

Two pages of about 16 KB: one of the benchmark site (benchmarks/site.py:
plain paragraphs, 27 links) and the rich page of tests/test_fast_parse.py
(lists, tables, <pre>, scripts, CJK text). For each, CPU µs of:
- parse(html, url, "lxml"), the one parse every page gets, for scale;
- anchors(html), the second parse a topic adds (a parser target, no tree);
- terms(text), the page text's terms, against the readable reference;
- topic.relevance(text) of the page's text, for a topic of three keywords,
  a topic that is a whole sample page, and the keywords with a background idf;
- the whole Digester (parse, links, fingerprints, files) without a topic,
  as this tree has it and as the commit before the topic had it, and with a
  topic (text and every anchor scored).
Medians over interleaved rounds (a shared machine's slow moments hit every
candidate alike), each round timing `--repeat` calls.

    .venv/bin/python -m benchmarks.relevance [--rounds 15] [--repeat 20] [--before COMMIT]

Prints the table and writes it to benchmarks/results/relevance.md, which
RESULTS.md takes whole.
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
import types
from collections.abc import Callable
from pathlib import Path

from benchmarks.report import git_commit, machine
from benchmarks.site import SiteSpec, generate, page_path
from benchmarks.test_bench_urlfilter import ROOT
from controller.digest import Digester, DigestJob
from textfilter import parse
from textfilter.relevance import Topic, anchors, terms, terms_reference
from urlfilter import UrlRules

sys.path.insert(0, str(ROOT / "tests"))   # tests/ modules import each other by name
from test_fast_parse import benchmark_like_page  # noqa: E402

BEFORE = "f692c30"    # the last commit whose Digester had no topic
HOST = "127.0.0.1:8080"
PAGE_URL = f"http://{HOST}/p/0/42.html"
KEYWORDS = "crawler frontier queue"
RESULTS_FILE = Path(__file__).resolve().parent / "results" / "relevance.md"
RESULTS_HEADING = ("## Topical relevance per page (issue 15)\n\n"
                   "Written by `.venv/bin/python -m benchmarks.relevance --rounds 15` "
                   "(to `benchmarks/results/relevance.md`, which `benchmarks/run.py` copies "
                   "into RESULTS.md).\n\n")


def site_pages(count: int) -> list[str]:
    with tempfile.TemporaryDirectory() as site:
        generate(SiteSpec(pages=count), Path(site))
        return [(Path(site) / page_path(i).lstrip("/")).read_text(encoding="utf-8")
                for i in range(count)]


def candidates(page: str, pages: list[str], out: Path, before: str | None) -> dict[str, Callable[[], object]]:
    """Name -> a call to time on page (its text and job prepared beforehand)."""
    text = parse(page, PAGE_URL, "lxml").text
    texts = [parse(other, PAGE_URL, "lxml").text for other in pages]
    keywords, sample = Topic.from_text(KEYWORDS), Topic.from_text(texts[43])
    off_topic = Topic.from_text("jazz saxophone improvisation")
    background = Topic.from_text(KEYWORDS, background=texts)
    rules = UrlRules(scope="host", seed_hosts=frozenset({HOST}))
    job = DigestJob(1, PAGE_URL, page.encode("utf-8"), page)
    found = {
        "parse (lxml)": lambda: parse(page, PAGE_URL, "lxml"),
        "anchors(html)": lambda: anchors(page),
        "terms(text)": lambda: terms(text),
        "terms_reference(text), the regular expression alone": lambda: terms_reference(text),
        "relevance(text), 3 keywords": lambda: keywords.relevance(text),
        "relevance(text), a sample page as topic": lambda: sample.relevance(text),
        "relevance(text), 3 keywords not in the page": lambda: off_topic.relevance(text),
        "relevance(text), 3 keywords, background idf": lambda: background.relevance(text),
    }
    if before:
        old = digest_module_at(before).Digester(out, rules, "lxml")
        found[f"Digester, no topic ({before})"] = lambda: old(job)
    plain, focused = Digester(out, rules, "lxml"), Digester(out, rules, "lxml", topic=keywords)
    found["Digester, no topic"] = lambda: plain(job)
    found["Digester, topic: 3 keywords"] = lambda: focused(job)
    return found


def digest_module_at(commit: str) -> types.ModuleType:
    """controller/digest.py as it was at commit (git show, read-only), as a
    module of its own name; registered, since dataclasses look their module up."""
    source = subprocess.run(["git", "-C", str(ROOT), "show", f"{commit}:controller/digest.py"],
                            capture_output=True, text=True, check=True).stdout
    name = f"digest_at_{commit}"
    module = sys.modules[name] = types.ModuleType(name)
    exec(compile(source, f"{commit}:controller/digest.py", "exec"), module.__dict__)
    return module


def microseconds(calls: dict[str, Callable[[], object]], rounds: int, repeat: int) -> dict[str, float]:
    """Median CPU µs per call of each candidate, rounds interleaved."""
    times: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(rounds):
        for name, call in calls.items():
            start = time.process_time()
            for _ in range(repeat):
                call()
            times[name].append((time.process_time() - start) / repeat * 1e6)
    return {name: statistics.median(samples) for name, samples in times.items()}


def table(columns: dict[str, dict[str, float]], sizes: dict[str, int]) -> str:
    names = list(next(iter(columns.values())))
    lines = ["| µs per page | " + " | ".join(f"{page} ({sizes[page]:,} chars)" for page in columns) + " |",
             "|---|" + "---:|" * len(columns)]
    lines += [f"| {name} | " + " | ".join(f"{column[name]:,.0f}" for column in columns.values()) + " |"
              for name in names]
    return "\n".join(lines) + "\n"


def measured_on() -> str:
    m, source = machine(), git_commit(ROOT)
    dirty = " (working tree with uncommitted changes)" if source["dirty"] else ""
    return (f"{m['date']}, commit `{source['commit']}`{dirty}; {m['cpu']}, {m['cores']} cores, "
            f"Python {m['python']}; load average at start {' '.join(m['load_average'])}.\n\n")


def main(argv: list[str] | None = None) -> int:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--rounds", type=int, default=15)
    options.add_argument("--repeat", type=int, default=20)
    options.add_argument("--before", default=BEFORE, help="commit of the Digester without a topic ('none': leave out)")
    args = options.parse_args(argv)
    pages = site_pages(60)
    measured = {"benchmark site": pages[42], "rich": benchmark_like_page(7)}
    columns = {}
    with tempfile.TemporaryDirectory() as out:
        for folder in ("pages", "text"):
            (Path(out) / folder).mkdir()
        for name, page in measured.items():
            calls = candidates(page, pages, Path(out), None if args.before == "none" else args.before)
            columns[name] = microseconds(calls, args.rounds, args.repeat)
    text = (measured_on() + f"CPU µs per page, median of {args.rounds} interleaved rounds of "
            f"{args.repeat} calls; keywords: \"{KEYWORDS}\"; background: the texts of 60 pages "
            "of the benchmark site.\n\n" + table(columns, {n: len(p) for n, p in measured.items()}))
    print(text)
    store(text)
    return 0


def store(text: str) -> None:
    RESULTS_FILE.parent.mkdir(exist_ok=True)
    RESULTS_FILE.write_text(RESULTS_HEADING + text, encoding="utf-8")   # RESULTS.md takes it whole


if __name__ == "__main__":
    sys.exit(main())

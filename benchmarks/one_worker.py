"""Is a --workers 1 crawl repeatable under every --order, and what does
that cost? Crawls the demo site (tests' DemoSite, on 127.0.0.1) several
times per order with `crawler crawl --workers 1 --delay 0`, and compares
each run's index.csv order (the order pages were recorded, which with one
worker is the order they were fetched in) with the first run's.

    .venv/bin/python -m benchmarks.one_worker [--runs 4] [--orders bfs,opic]
    .venv/bin/python -m benchmarks.one_worker --tree /tmp/main    # another checkout, e.g.
        # mkdir /tmp/main && git archive main | tar -x -C /tmp/main

With several --tree values the trees take turns, run by run (interleaved,
so that the machine's load falls on each alike). Prints a table and writes
it to benchmarks/results/one-worker.md (a section of RESULTS.md), the raw
numbers to benchmarks/results/one_worker/one-worker.json.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TOPIC = "football travel story news"   # words the demo site's pages use
FOCUSED = {"best-first", "best-n-first", "shark", "aco"}


def crawl(tree: Path, url: str, order: str) -> tuple[list[str], float]:
    """One crawl by the crawler in ``tree``: (URLs in index.csv order, seconds)."""
    out = Path(tempfile.mkdtemp()) / "out"
    topic = ["--topic", TOPIC] if order in FOCUSED else []
    started = time.monotonic()
    subprocess.run([sys.executable, "-m", "controller", "crawl", url, "--out", str(out), "--order",
                    order, "--workers", "1", "--delay", "0", "--max-pages", "0", "--quiet", *topic],
                   cwd=tree, env={**os.environ, "PYTHONPATH": str(tree)}, check=True,
                   capture_output=True)
    seconds = time.monotonic() - started
    with open(out / "index.csv", newline="", encoding="utf-8") as f:
        return [row["url"] for row in csv.DictReader(f)], seconds


def first_difference(a: list[str], b: list[str]) -> int | None:
    """Index of the first page the two runs recorded differently; None: same order."""
    return next((i for i, (x, y) in enumerate(zip(a, b)) if x != y),
                None if len(a) == len(b) else min(len(a), len(b)))


def main() -> None:
    from demosite import DemoServer, DemoSite
    from urllist.orders import NAMES
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=4)
    parser.add_argument("--orders", default=",".join(NAMES))
    parser.add_argument("--tree", action="append", type=Path, help="source tree (default: this one)")
    args = parser.parse_args()
    trees = args.tree or [ROOT]
    results = []
    with DemoServer(DemoSite()) as server:
        for order in args.orders.split(","):
            runs: dict[Path, list] = {tree: [] for tree in trees}
            for _ in range(args.runs):
                for tree in trees:
                    runs[tree].append(crawl(tree, server.url, order))
            for tree, done in runs.items():
                first = done[0][0]
                results.append({"tree": str(tree), "order": order, "pages": len(first), "runs": len(done),
                                "first_difference": [first_difference(first, urls) for urls, _ in done[1:]],
                                "median_seconds": round(statistics.median(s for _, s in done), 2)})
    table = ["| tree | order | pages | runs | first difference from run 1 | median s/run |",
             "|:--|:--|--:|--:|:--|--:|"]
    for r in results:
        table.append(f"| {r['tree']} | {r['order']} | {r['pages']} | {r['runs']} | "
                     f"{', '.join('none' if d is None else str(d) for d in r['first_difference'])} | "
                     f"{r['median_seconds']} |")
    print("\n".join(table))
    raw = ROOT / "benchmarks" / "results" / "one_worker" / "one-worker.json"
    raw.parent.mkdir(exist_ok=True)
    raw.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    command = " ".join(["python -m benchmarks.one_worker", *sys.argv[1:]])
    (ROOT / "benchmarks" / "results" / "one-worker.md").write_text(
        f"## One worker under every order: repeatable, and what it costs (issue 24)\n\n"
        f"Written by `{command}` (raw numbers: `benchmarks/results/one_worker/one-worker.json`), "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load average at the end "
        f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}. The demo site, `--workers 1 --delay 0`; "
        f"a first difference is the index.csv row where a run's order left the first run's "
        f"(none: the same order throughout).\n\n" + "\n".join(table) + "\n", encoding="utf-8")

if __name__ == "__main__":
    main()

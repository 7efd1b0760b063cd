"""Peak RAM of a real crawl that discovers millions of distinct URLs (issue 24).

    .venv/bin/python -m benchmarks.memory_crawl --label after           # 2,500 pages x 2,048 links
    .venv/bin/python -m benchmarks.memory_crawl --label before --ours-commit main --resume-pages 50
    .venv/bin/python -m benchmarks.memory_crawl --pages 200 --links 512 --no-save   # a quick look

The site, served by a threaded Python server on 127.0.0.1 (a page is built
on request: nothing to generate or store first): page n, at /p/<n>.html,
links to 2,048 (--links) pages no other page links to, its children
n*L+1 .. n*L+L. So a breadth-first crawl whose --max-pages stops it after
P pages has discovered P*L+1 distinct URLs, every one of them queued (the
default --max-depth 3 lets level 3 be queued when P < 1 + L + L^2).

The crawl is `crawler crawl` with its defaults (--dedup, frontier, content
dedup, parser processes: what a user gets) but --delay 0, which decides
how long a one-host crawl takes, not what it keeps in memory. Its whole
process tree (the Controller and its parser processes) is sampled from
/proc every 0.2 s: the peak of the summed VmRSS, and the Controller's own
peak. A floor run (the same crawl with --max-pages 1: imports, parser
processes, one page's links) says what does not grow with the URLs.
With --resume-pages N the crawl is then resumed with a budget of N pages
more, measured the same way: what rebuilding the frontier and the
seen-set from the journal costs.

Stored: benchmarks/results/memory/<name>.json (each run, with its --label),
benchmarks/results/memory-crawl.md (a table of every stored run, which
report.render_results copies into RESULTS.md) and the same section in
benchmarks/RESULTS.md.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

if __package__ in (None, ""):   # run as a file: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import click

from benchmarks.redis_seen import put_section
from benchmarks.report import machine, stored_options
from benchmarks.run import _ours_source
from demosite import Response
from demosite.server import serve

BENCH_DIR = Path(__file__).resolve().parent
CRAWLER = (sys.executable, "-m", "controller")
SECTION_TITLE = "## Peak RAM of a crawl that discovers millions of URLs (issue 24)"
SAMPLE_SECONDS = 0.2
MB = 2**20
PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")


# -- the site ----------------------------------------------------------------------
def page(n: int, links: int) -> bytes:
    """Page n: its own title and heading (so no two pages' texts are equal:
    content dedup would not follow a copy's links), then its children."""
    first = n * links + 1
    anchors = "".join(f'<a href="/p/{c}.html">{c}</a> ' for c in range(first, first + links))
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>Page {n}</title></head>"
            f"<body><h1>Page {n}</h1><p>{anchors}</p></body></html>").encode()


def handler(links: int):
    def answer(request):
        path = request.path
        if path.startswith("/p/") and path.endswith(".html") and path[3:-5].isdigit():
            return Response(200, {"Content-Type": "text/html; charset=utf-8"},
                            page(int(path[3:-5]), links))
        return Response(404, {"Content-Type": "text/plain"}, b"not found")
    return answer


# -- sampling /proc ------------------------------------------------------------------
def process_tree(root: int) -> list[int]:
    """root and every process descended from it (parser processes, their helpers)."""
    parents: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                stat = Path(entry.path, "stat").read_text()
            except OSError:
                continue   # ended meanwhile
            ppid = int(stat.rpartition(")")[2].split()[1])
            parents.setdefault(ppid, []).append(int(entry.name))
    tree, todo = [], [root]
    while todo:
        pid = todo.pop()
        tree.append(pid)
        todo.extend(parents.get(pid, ()))
    return tree


def rss_bytes(pid: int) -> int:
    """Resident bytes of a process (statm's second field); 0 once it has ended."""
    try:
        return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE_SIZE
    except (OSError, IndexError, ValueError):
        return 0


class Sampler:
    """Peak summed RSS of a process tree, and of its root, every SAMPLE_SECONDS."""

    def __init__(self, root: int) -> None:
        self.root = root
        self.peak_sum = self.peak_main = self.samples = self.most_processes = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="rss-sampler", daemon=True)

    def __enter__(self) -> "Sampler":
        self._thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.is_set():
            tree = process_tree(self.root)
            self.peak_sum = max(self.peak_sum, sum(map(rss_bytes, tree)))
            self.peak_main = max(self.peak_main, rss_bytes(self.root))
            self.most_processes = max(self.most_processes, len(tree))
            self.samples += 1
            self._stop.wait(SAMPLE_SECONDS)


# -- one crawl -----------------------------------------------------------------------
def crawl_once(base: str, pages: int, out: Path, crawl_args: tuple[str, ...],
               source: Path | None, resume: bool = False) -> dict:
    """One crawl, of the working tree's crawler or of ``source`` (a git archive);
    ``resume``: the crawl in ``out`` resumed, with a budget of ``pages`` in all."""
    if not resume:
        shutil.rmtree(out, ignore_errors=True)
    command = [*CRAWLER, "crawl", base + "p/0.html", "--out", str(out), "--delay", "0",
               "--max-pages", str(pages), "--quiet", *crawl_args, *(["--resume"] if resume else [])]
    started = time.monotonic()
    with open(out.with_name(out.name + (".resume.log" if resume else ".log")), "w") as log:
        # Run from the work directory: `-m controller` would find the
        # working tree's packages first in the current directory.
        env = {**os.environ, "PYTHONPATH": str(source)} if source else None
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, cwd=out.parent,
                                   env=env, start_new_session=True)
        with Sampler(process.pid) as sampler:
            code = process.wait()
    wall = time.monotonic() - started
    if code != 0:
        raise click.ClickException(f"the crawl exited {code}; see {out}.log")
    stats = json.loads((out / "stats.json").read_text(encoding="utf-8"))
    return {"pages": stats["urls"], "discovered": stats["queue_total"], "wall_s": wall,
            "peak_sum_bytes": sampler.peak_sum, "peak_main_bytes": sampler.peak_main,
            "processes": sampler.most_processes, "samples": sampler.samples,
            "edges_bytes": (out / "edges.csv").stat().st_size,
            "journal_bytes": (out / "state" / "queue.log").stat().st_size}


# -- the table -------------------------------------------------------------------------
def row_of(result: dict) -> dict:
    run, floor = result["run"], result["floor"]
    urls = max(run["discovered"], 1)
    return {"label": result["label"], "commit": result["source"]["commit"]
            + ("+" if result["source"]["dirty"] else ""),
            "pages": run["pages"], "links": result["links"], "discovered": run["discovered"],
            "wall_s": run["wall_s"], "peak_sum_mb": run["peak_sum_bytes"] / MB,
            "peak_main_mb": run["peak_main_bytes"] / MB, "floor_mb": floor["peak_sum_bytes"] / MB,
            "bytes_per_url": run["peak_sum_bytes"] / urls,
            "above_floor_per_url": (run["peak_sum_bytes"] - floor["peak_sum_bytes"]) / urls,
            "resumed_mb": result["resumed"]["peak_sum_bytes"] / MB if result.get("resumed") else None}


def table(rows: list[dict]) -> str:
    lines = ["| run | commit | pages | links/page | URLs discovered | wall s | peak RSS summed MB "
             "| peak RSS Controller MB | floor MB | B per URL | B per URL above floor "
             "| peak RSS summed on --resume MB |",
             "|:---|:---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['label']} | `{r['commit']}` | {r['pages']:,} | {r['links']:,} "
                     f"| {r['discovered']:,} | {r['wall_s']:.0f} | {r['peak_sum_mb']:,.0f} "
                     f"| {r['peak_main_mb']:,.0f} | {r['floor_mb']:.0f} | {r['bytes_per_url']:.0f} "
                     f"| {r['above_floor_per_url']:.0f} "
                     f"| {'—' if r['resumed_mb'] is None else format(r['resumed_mb'], ',.0f')} |")
    return "\n".join(lines)


def section(results: list[dict]) -> str:
    latest = results[-1]
    m = latest["machine"]
    return "\n".join([
        SECTION_TITLE, "",
        f"- `.venv/bin/python -m benchmarks.memory_crawl --pages P --links L --label NAME`: "
        f"`crawler crawl http://127.0.0.1:PORT/p/0.html --delay 0 --max-pages P --quiet` "
        f"(every other option its default) of a site whose pages each link to L pages no other "
        f"page links to; the crawl's process tree sampled from /proc every {SAMPLE_SECONDS} s; "
        f"floor: the same crawl with --max-pages 1 (raw numbers: `benchmarks/results/memory/`)",
        f"- latest run {m['date']}; {m['cpu']}, {m['cores']} cores, {m['ram_gb']} GB, "
        f"Python {m['python']}; load average at start {' '.join(m['load_average'])}; "
        f"a commit with + is a working tree with uncommitted changes",
        "", table([row_of(r) for r in results]), "",
        "URLs discovered: stats.json's queue_total (every discovered URL is queued, none "
        "twice). B per URL: the peak summed RSS over the URLs discovered. The sum counts "
        "pages that the parser processes share with each other once per process. On --resume: "
        "the finished crawl resumed with a budget of N pages more (--resume-pages N), "
        "which rebuilds the frontier and the seen-set from state/queue.log.", ""])


def stored(results_dir: Path) -> list[dict]:
    folder = results_dir / "memory"
    found = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.json"))]
    return sorted(found, key=lambda r: r["started"])


def store(result: dict, results_dir: Path, results_md: Path) -> Path:
    raw = results_dir / "memory" / f"{result['name']}.json"
    raw.parent.mkdir(parents=True, exist_ok=True)
    raw.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    text = section(stored(results_dir))
    (results_dir / "memory-crawl.md").write_text(text, encoding="utf-8")
    put_section(results_md, SECTION_TITLE, text)
    return raw


@click.command()
@click.option("--pages", type=click.IntRange(min=2), default=2500, show_default=True,
              help="--max-pages of the crawl.")
@click.option("--links", type=click.IntRange(min=1), default=2048, show_default=True,
              help="New URLs each page links to.")
@click.option("--label", default="", help="Names the run in the table (e.g. before, after).")
@click.option("--resume-pages", type=click.IntRange(min=0), default=0, show_default=True,
              help="Then resume the crawl for this many pages more, measured the same way (0: no resume).")
@click.option("--crawl-args", default="", help="Extra options for `crawler crawl`, space-separated.")
@click.option("--ours-commit", default=None,
              help="Run the crawler as of this commit (exported with git archive), not the working tree.")
@stored_options
def main(pages, links, label, resume_pages, crawl_args, ours_commit, save, work, results_dir,
         results_md) -> None:
    """Peak RSS of a crawl discovering PAGES x LINKS distinct URLs."""
    progress = lambda line: click.echo(line, err=True)
    started = datetime.now(timezone.utc)
    extra = tuple(crawl_args.split())
    work.mkdir(parents=True, exist_ok=True)
    source, source_info = _ours_source(ours_commit, work)
    before = machine()   # the load average at the start
    with serve(handler(links)) as (base, _):
        progress(f"floor: crawling 1 page of {links:,} links ...")
        floor = crawl_once(base, 1, work / "memory-floor", extra, source)
        progress(f"crawling {pages:,} pages of {links:,} links ...")
        run = crawl_once(base, pages, work / "memory-crawl", extra, source)
        resumed = None
        if resume_pages:
            progress(f"resuming it for {resume_pages:,} pages more ...")
            resumed = crawl_once(base, pages + resume_pages, work / "memory-crawl", extra, source,
                                 resume=True)
    result = {"name": f"memory-crawl-{started:%Y%m%d-%H%M%S}", "started": started.isoformat(),
              "label": label or "(unlabelled)", "machine": before, "source": source_info,
              "links": links, "crawl_args": list(extra), "floor": floor, "run": run,
              "resumed": resumed}
    click.echo(table([row_of(result)]))
    click.echo(f"edges.csv {run['edges_bytes'] / MB:,.0f} MB, state/queue.log "
               f"{run['journal_bytes'] / MB:,.0f} MB; {run['samples']} samples, "
               f"{run['processes']} processes at the most", err=True)
    if save:
        click.echo(f"stored {store(result, results_dir, results_md)} and its section in "
                   f"{results_md}", err=True)


if __name__ == "__main__":
    main()

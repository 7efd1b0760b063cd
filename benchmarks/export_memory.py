"""Time and peak memory of `crawler export` on real crawls of 5,000 and 50,000 pages.

    .venv/bin/python -m benchmarks.export_memory                    # 5,000 and 50,000 pages, 3 rounds
    .venv/bin/python -m benchmarks.export_memory --sizes 300 --rounds 1 --no-save   # a quick look

For each size: the benchmark site (benchmarks/site.py, ~16 KB pages) is
generated under benchmarks/work/site-N, served by nginx on 127.0.0.1 and
crawled completely by `crawler crawl` into benchmarks/work/export-crawl-N
(kept: a later run reuses a crawl that finished with every page). Then each
export (JSON Lines and Parquet, without and with --html) runs in its own
process under /usr/bin/time -v, interleaved over rounds, into a file that
is checked (one record per saved page) and deleted. The floor is the peak
RSS of a process that only imports what the export imports (and, for
Parquet, writes a one-row file): what is above it is what the pages cost.

Stored: benchmarks/results/export/export-memory-<date>.json (every run),
benchmarks/results/export-memory.md (the table, which render_results copies
into RESULTS.md) and the same section in benchmarks/RESULTS.md.
"""
from __future__ import annotations

import json
import shutil
import statistics
import sys
from datetime import datetime, timezone
from pathlib import Path

if __package__ in (None, ""):   # run as a file: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import click

from benchmarks.measure import run_measured
from benchmarks.nginx import Nginx
from benchmarks.report import git_commit, machine, stored_options
from benchmarks.site import SiteSpec, ensure

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
CRAWLER = (sys.executable, "-m", "controller")
VARIANTS = {                      # name -> export arguments
    "jsonl": ("--format", "jsonl"),
    "jsonl --html": ("--format", "jsonl", "--html"),
    "parquet": ("--format", "parquet"),
    "parquet --html": ("--format", "parquet", "--html"),
}
# What every export costs before its first page: the imports, and for Parquet
# pyarrow's start-up on its first conversion.
FLOORS = {"jsonl": "import controller.cli",
          "parquet": "import controller.cli, io, pyarrow as pa, pyarrow.parquet as pq; "
                     "pq.write_table(pa.table({'x': ['x']}), io.BytesIO())"}
SECTION_TITLE = "## crawler export: time and peak memory (issue 13)"
MB = 2**20


# -- the crawls ----------------------------------------------------------------
def crawl_of(pages: int, work: Path, progress) -> Path:
    """A finished crawl of the benchmark site of ``pages`` pages, made once and kept."""
    out = work / f"export-crawl-{pages}"
    truth = ensure(SiteSpec(pages=pages), work / f"site-{pages}")
    if _complete(out, truth.total):
        return out
    shutil.rmtree(out, ignore_errors=True)
    progress(f"crawling the {pages:,}-page site into {out} ...")
    with Nginx(work / f"site-{pages}") as server:
        measured = run_measured([*CRAWLER, "crawl", server.url + "index.html", "--out", str(out),
                                 "--delay", "0", "--max-depth", "0", "--max-pages", "0", "--quiet"],
                                work / "runs" / f"export-crawl-{pages}", timeout=3600)
    if not _complete(out, truth.total):
        raise click.ClickException(f"the crawl of {pages:,} pages did not save every page "
                                   f"(exit {measured.exit_code}); see {work / 'runs'}")
    progress(f"crawled {truth.total:,} pages in {measured.wall_s:.0f} s")
    return out


def _complete(out: Path, pages: int) -> bool:
    try:
        stats = json.loads((out / "stats.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return stats.get("stop_reason") == "queue-empty" and stats.get("pages") == pages


def _warm(crawl: Path) -> int:
    """Read the crawl's files once (no run pays for a cold page cache); their bytes."""
    total = 0
    for path in crawl.rglob("*"):
        if path.is_file():
            total += len(path.read_bytes())
    return total


# -- one export ----------------------------------------------------------------
def export_once(crawl: Path, pages: int, variant: str, round_no: int, work: Path) -> dict:
    run_dir = work / "runs" / f"export-{pages}-{variant.replace(' --', '-')}"
    shutil.rmtree(run_dir, ignore_errors=True)
    run_dir.mkdir(parents=True)
    args = VARIANTS[variant]
    out = run_dir / f"pages.{args[1]}"
    measured = run_measured([*CRAWLER, "export", str(crawl), *args, "--out", str(out)],
                            run_dir / "logs", timeout=3600)
    if measured.exit_code != 0:
        raise click.ClickException(f"export {variant} of {crawl} failed (exit "
                                   f"{measured.exit_code}); see {run_dir / 'logs'}")
    records, groups = _records_in(out, args[1])
    if records != pages:
        raise click.ClickException(f"export {variant} of {crawl} holds {records} records, "
                                   f"not one per saved page ({pages})")
    row = {"pages": pages, "variant": variant, "round": round_no, "wall_s": measured.wall_s,
           "cpu_s": measured.usage.cpu_s, "max_rss_kb": measured.usage.max_rss_kb,
           "output_bytes": out.stat().st_size, "row_groups": groups}
    shutil.rmtree(run_dir)
    return row


def _records_in(out: Path, fmt: str) -> tuple[int, int | None]:
    """Records in the export, and its row groups (Parquet)."""
    if fmt == "jsonl":
        with open(out, "rb") as f:
            return sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(MB), b"")), None
    import pyarrow.parquet as pq
    metadata = pq.ParquetFile(out).metadata
    return metadata.num_rows, metadata.num_row_groups


def floor_kb(fmt: str, work: Path) -> int:
    """Peak RSS (KB) of a process that imports what the export imports and does nothing else
    (for Parquet, writes one row: pyarrow's one-time start-up)."""
    measured = run_measured([sys.executable, "-c", FLOORS[fmt]], work / "runs" / f"floor-{fmt}")
    return measured.usage.max_rss_kb


# -- the table -----------------------------------------------------------------
def summarize(runs: list[dict], floors: dict[str, int]) -> list[dict]:
    """One row per (size, variant): medians over rounds."""
    rows = []
    for pages in sorted({r["pages"] for r in runs}):
        for variant in VARIANTS:
            mine = [r for r in runs if r["pages"] == pages and r["variant"] == variant]
            if not mine:
                continue
            wall = statistics.median(r["wall_s"] for r in mine)
            rss = statistics.median(r["max_rss_kb"] for r in mine)
            rows.append({"pages": pages, "variant": variant, "wall_s": wall, "pages_per_s": pages / wall,
                         "cpu_s": statistics.median(r["cpu_s"] for r in mine), "rss_mb": rss / 1024,
                         "above_floor_mb": (rss - floors[variant.split()[0]]) / 1024,
                         "output_mb": mine[0]["output_bytes"] / MB,
                         "row_groups": mine[0]["row_groups"]})
    return rows


def table(rows: list[dict]) -> str:
    lines = ["| pages | export | wall s | pages/s | CPU s | peak RSS MB | above floor MB "
             "| output MB | row groups |",
             "|---:|:---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        groups = "—" if r["row_groups"] is None else f"{r['row_groups']:,}"
        lines.append(f"| {r['pages']:,} | {r['variant']} | {r['wall_s']:.2f} | {r['pages_per_s']:,.0f} "
                     f"| {r['cpu_s']:.2f} | {r['rss_mb']:.0f} | {round(r['above_floor_mb'])} "
                     f"| {r['output_mb']:,.0f} | {groups} |")
    return "\n".join(lines)


def section(result: dict) -> str:
    m, source = result["machine"], result["source"]
    floors = ", ".join(f"{fmt} {kb / 1024:.0f} MB" for fmt, kb in result["floors_kb"].items())
    crawls = ", ".join(f"{int(p):,} pages: {b / MB:,.0f} MB" for p, b in result["crawl_bytes"].items())
    return "\n".join([
        SECTION_TITLE, "",
        f"- {m['date']}; commit `{source['commit']}`"
        + (" (working tree with uncommitted changes)" if source["dirty"] else "")
        + f"; {m['cpu']}, {m['cores']} cores, Python {m['python']}; load average at start "
        f"{' '.join(m['load_average'])}",
        f"- `.venv/bin/python -m benchmarks.export_memory --sizes "
        f"{','.join(str(p) for p in result['sizes'])} --rounds {result['rounds']}`: each export "
        f"alone in its own process under `/usr/bin/time -v`, into a file on the same disk; "
        f"medians over {result['rounds']} interleaved round(s) "
        f"(raw numbers: `benchmarks/results/export/{result['name']}.json`)",
        f"- crawls (benchmarks/site.py, ~16 KB pages, every page saved): {crawls} on disk",
        f"- floor (peak RSS of a process that imports the export's modules and, for Parquet, "
        f"writes a one-row file): {floors}",
        "", table(result["rows"]), "", growth_line(result["rows"]), "",
        "Parquet holds one row group (1,000 pages, fewer when their text and html pass 64 MB) "
        "in memory at a time, and pyarrow needs several times the group's bytes to convert and "
        "encode it: what is above the floor follows the group, not the crawl. JSON Lines holds "
        "one page. Wall times include writing the output and its fsync, on a machine shared "
        "with other work (load average above); CPU s is the steadier measure.", ""])


def growth_line(rows: list[dict]) -> str:
    """Peak RSS at the smallest and the largest crawl, per export."""
    sizes = sorted({r["pages"] for r in rows})
    if len(sizes) < 2:
        return ""
    rss = {(r["pages"], r["variant"]): r["rss_mb"] for r in rows}
    parts = [f"{variant} {rss[sizes[0], variant]:.0f} → {rss[sizes[-1], variant]:.0f} MB"
             for variant in VARIANTS if (sizes[0], variant) in rss and (sizes[-1], variant) in rss]
    return (f"Peak RSS from {sizes[0]:,} to {sizes[-1]:,} pages ({sizes[-1] // sizes[0]}× the "
            f"pages): {', '.join(parts)}.")


# -- storing ---------------------------------------------------------------------
def store(result: dict, results_dir: Path, results_md: Path) -> Path:
    """The JSON, the Markdown section for render_results, and the section in RESULTS.md."""
    raw = results_dir / "export" / f"{result['name']}.json"
    raw.parent.mkdir(parents=True, exist_ok=True)
    raw.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    text = section(result)
    (results_dir / "export-memory.md").write_text(text, encoding="utf-8")
    replace_section(results_md, text)
    return raw


def replace_section(results_md: Path, text: str) -> None:
    """Put ``text`` in place of this benchmark's section (or after the last one),
    leaving every other section of RESULTS.md as it is."""
    old = results_md.read_text(encoding="utf-8") if results_md.exists() else ""
    start = old.find(SECTION_TITLE)
    if start < 0:
        new = old.rstrip("\n") + "\n\n" + text
    else:
        end = old.find("\n## ", start + len(SECTION_TITLE))
        new = old[:start] + text + ("" if end < 0 else "\n" + old[end + 1:])
    results_md.write_text(new, encoding="utf-8")


@click.command()
@click.option("--sizes", default="5000,50000", show_default=True,
              help="Comma-separated page counts of the crawls to export.")
@click.option("--rounds", type=click.IntRange(min=1), default=3, show_default=True)
@stored_options
def main(sizes, rounds, save, work, results_dir, results_md) -> None:
    """Time and peak RSS of `crawler export` (jsonl, parquet, with and without --html)."""
    progress = lambda line: click.echo(line, err=True)
    sizes = sorted({int(s) for s in sizes.split(",") if s.strip()})
    started = datetime.now(timezone.utc)
    crawls = {pages: crawl_of(pages, work, progress) for pages in sizes}
    crawl_bytes = {pages: _warm(crawl) for pages, crawl in crawls.items()}
    floors = {fmt: floor_kb(fmt, work) for fmt in FLOORS}
    runs = []
    for round_no in range(1, rounds + 1):
        for pages, crawl in crawls.items():
            for variant in VARIANTS:
                runs.append(export_once(crawl, pages, variant, round_no, work))
                r = runs[-1]
                progress(f"round {round_no}: {pages:,} pages, {variant}: {r['wall_s']:.2f} s, "
                         f"peak RSS {r['max_rss_kb'] / 1024:.0f} MB")
    result = {"name": f"export-memory-{started:%Y%m%d-%H%M%S}", "started": started.isoformat(),
              "machine": machine(), "source": git_commit(REPO), "sizes": sizes, "rounds": rounds,
              "floors_kb": floors, "crawl_bytes": crawl_bytes, "runs": runs,
              "rows": summarize(runs, floors)}
    click.echo(table(result["rows"]))
    if save:
        click.echo(f"stored {store(result, results_dir, results_md)} and its section in "
                   f"{results_md}", err=True)


if __name__ == "__main__":
    main()

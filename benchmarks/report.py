"""Benchmark records, their medians and ratios, and the tables and RESULTS.md made from them.

A `RunRecord` is one measured run of one peer in one round. `summarize`
turns the records of an interleaved comparison into one `PeerSummary` per
peer: medians over rounds, and ratios to Scrapy taken per round (same round,
same machine state) and then the median of those ratios. `compare_table`
and `scaling_table` format Markdown; `render_results` writes RESULTS.md from
every stored result (benchmarks/results/*.json), newest first.
"""
from __future__ import annotations

import json
import os
import platform
import subprocess
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path
from statistics import median

import click

from benchmarks.checks import SavedCheck, ServerCount
from experiments.report import cpu_model, memory_gb   # one machine description for both

REFERENCE = "scrapy"   # ratios are to this peer's numbers in the same round


@dataclass(frozen=True)
class RunRecord:
    peer: str
    round: int
    site_pages: int        # HTML pages the site has
    wall_s: float
    user_s: float
    sys_s: float
    max_rss_kb: int
    exit_code: int
    exit_ok: bool          # the peer's exit status was one it uses for success
    timed_out: bool
    server_cpu_s: float    # nginx master + worker CPU during the run
    server: ServerCount
    saved: SavedCheck
    other_cpu_s: float = 0.0   # CPU the rest of the machine used meanwhile (background load)

    @property
    def pages(self) -> int:
        """The work done: distinct site pages saved byte-identical."""
        return self.saved.identical

    @property
    def cpu_s(self) -> float:
        return self.user_s + self.sys_s

    @property
    def pages_per_s(self) -> float:
        return self.pages / self.wall_s if self.wall_s > 0 else 0.0

    @property
    def cpu_ms_per_page(self) -> float:
        return 1000 * self.cpu_s / self.pages if self.pages else float("inf")

    @property
    def other_cores(self) -> float:
        """Cores the rest of the machine kept busy on average during the run."""
        return self.other_cpu_s / self.wall_s if self.wall_s > 0 else 0.0

    @property
    def fetched_once(self) -> bool:
        return self.server.html_missed == 0 and self.server.html_duplicates == 0

    @property
    def saved_all_identical(self) -> bool:
        return self.saved.missing == 0 and self.saved.differ == 0

    def to_dict(self) -> dict:
        record = asdict(self)
        record.update(pages=self.pages, cpu_s=self.cpu_s, pages_per_s=self.pages_per_s,
                      cpu_ms_per_page=self.cpu_ms_per_page)
        return record

    @classmethod
    def from_dict(cls, record: dict) -> "RunRecord":
        fields = {k: v for k, v in record.items() if k in cls.__dataclass_fields__}
        fields["server"] = ServerCount(**record["server"])
        saved = dict(record["saved"])
        if saved.get("levels") is not None:
            saved["levels"] = tuple(saved["levels"])
        fields["saved"] = SavedCheck(**saved)
        return cls(**fields)


@dataclass(frozen=True)
class PeerSummary:
    peer: str
    rounds: int
    pages: float
    wall_s: float
    pages_per_s: float
    cpu_s: float
    cpu_ms_per_page: float
    max_rss_mb: float
    server_requests: float
    server_cpu_s: float
    speed_ratio: float | None   # median over rounds of pages/s ÷ Scrapy's pages/s
    cpu_ratio: float | None     # median over rounds of CPU ms/page ÷ Scrapy's CPU ms/page
    fetched_once: bool          # in every round: each site page requested exactly once
    saved_identical: bool       # in every round: each site page saved, byte-identical
    levels_exact: bool | None   # in every round: each page on its ground-truth level (None: not checked)
    all_exit_ok: bool


def summarize(records: list[RunRecord], truth_levels: tuple[int, ...] | None = None) -> list[PeerSummary]:
    """One summary per peer, in the order the peers first ran."""
    peers = list(dict.fromkeys(r.peer for r in records))
    reference = {r.round: r for r in records if r.peer == REFERENCE}
    return [_summary(peer, [r for r in records if r.peer == peer], reference, truth_levels)
            for peer in peers]


def _summary(peer, runs, reference, truth_levels) -> PeerSummary:
    speed = [r.pages_per_s / reference[r.round].pages_per_s for r in runs
             if r.round in reference and reference[r.round].pages_per_s > 0]
    cpu = [r.cpu_ms_per_page / reference[r.round].cpu_ms_per_page for r in runs
           if r.round in reference and 0 < reference[r.round].cpu_ms_per_page < float("inf")]
    checked = [r for r in runs if r.saved.wrong_level is not None]
    levels = None
    if checked:
        levels = all(r.saved.wrong_level == 0 and (truth_levels is None or r.saved.levels == tuple(truth_levels))
                     for r in checked)
    return PeerSummary(
        peer=peer, rounds=len(runs),
        pages=median(r.pages for r in runs), wall_s=median(r.wall_s for r in runs),
        pages_per_s=median(r.pages_per_s for r in runs), cpu_s=median(r.cpu_s for r in runs),
        cpu_ms_per_page=median(r.cpu_ms_per_page for r in runs),
        max_rss_mb=median(r.max_rss_kb for r in runs) / 1024,
        server_requests=median(r.server.requests for r in runs),
        server_cpu_s=median(r.server_cpu_s for r in runs),
        speed_ratio=median(speed) if speed else None, cpu_ratio=median(cpu) if cpu else None,
        fetched_once=all(r.fetched_once for r in runs),
        saved_identical=all(r.saved_all_identical for r in runs),
        levels_exact=levels, all_exit_ok=all(r.exit_ok and not r.timed_out for r in runs),
    )


# -- tables --------------------------------------------------------------------
COMPARE_COLUMNS = ("peer", "pages", "wall s", "pages/s", "CPU s", "CPU ms/page", "peak RSS MB",
                   "server requests", "server CPU s", "× Scrapy pages/s", "× Scrapy CPU ms/page",
                   "each page fetched once", "saved byte-identical", "levels exact")


def compare_table(summaries: list[PeerSummary]) -> str:
    rows = [(s.peer, f"{s.pages:.0f}", f"{s.wall_s:.2f}", f"{s.pages_per_s:.0f}", f"{s.cpu_s:.2f}",
             f"{s.cpu_ms_per_page:.2f}", f"{s.max_rss_mb:.0f}", f"{s.server_requests:.0f}",
             f"{s.server_cpu_s:.2f}", _ratio(s.speed_ratio), _ratio(s.cpu_ratio),
             _yes(s.fetched_once), _yes(s.saved_identical), _yes(s.levels_exact))
            for s in summaries]
    return markdown_table(COMPARE_COLUMNS, rows)


RUNS_COLUMNS = ("round", "peer", "exit", "pages", "wall s", "pages/s", "CPU s", "CPU ms/page",
                "peak RSS MB", "server requests", "connections", "missed", "duplicates",
                "server CPU s", "other load (cores)")


def runs_table(records: list[RunRecord]) -> str:
    rows = [(str(r.round), r.peer, str(r.exit_code), str(r.pages), f"{r.wall_s:.2f}",
             f"{r.pages_per_s:.0f}", f"{r.cpu_s:.2f}", f"{r.cpu_ms_per_page:.2f}",
             f"{r.max_rss_kb / 1024:.0f}", str(r.server.requests), str(r.server.connections),
             str(r.server.html_missed), str(r.server.html_duplicates), f"{r.server_cpu_s:.2f}",
             f"{r.other_cores:.2f}")
            for r in records]
    return markdown_table(RUNS_COLUMNS, rows, left=2)


SCALING_COLUMNS = ("site pages", "pages", "wall s", "pages/s", "pages/s ÷ at 5k", "CPU ms/page",
                   "peak RSS MB", "RSS growth B/page", "fetched once", "identical", "levels exact")


def scaling_table(records: list[RunRecord]) -> str:
    """One row per site size (median over its runs); RSS growth is from the previous size."""
    sizes = sorted({r.site_pages for r in records})
    by_size = {n: [r for r in records if r.site_pages == n] for n in sizes}
    speed = {n: median(r.pages_per_s for r in by_size[n]) for n in sizes}
    rss = {n: median(r.max_rss_kb for r in by_size[n]) * 1024 for n in sizes}
    base = speed.get(5000)
    rows, previous = [], None
    for n in sizes:
        runs = by_size[n]
        growth = "—" if previous is None else f"{(rss[n] - rss[previous]) / (n - previous):.0f}"
        levels = [r.saved.wrong_level == 0 for r in runs if r.saved.wrong_level is not None]
        rows.append((str(n), f"{median(r.pages for r in runs):.0f}", f"{median(r.wall_s for r in runs):.2f}",
                     f"{speed[n]:.0f}", _ratio(speed[n] / base if base else None),
                     f"{median(r.cpu_ms_per_page for r in runs):.2f}", f"{rss[n] / 2**20:.0f}", growth,
                     _yes(all(r.fetched_once for r in runs)), _yes(all(r.saved_all_identical for r in runs)),
                     _yes(all(levels) if levels else None)))
        previous = n
    return markdown_table(SCALING_COLUMNS, rows)


def rss_growth_per_page(records: list[RunRecord]) -> float | None:
    """Least-squares slope of peak RSS (bytes) over site pages, across all sizes."""
    points = [(r.site_pages, r.max_rss_kb * 1024) for r in records]
    if len({x for x, _ in points}) < 2:
        return None
    mx = sum(x for x, _ in points) / len(points)
    my = sum(y for _, y in points) / len(points)
    return (sum((x - mx) * (y - my) for x, y in points) / sum((x - mx) ** 2 for x, _ in points))


def markdown_table(columns: tuple[str, ...], rows: list[tuple[str, ...]], left: int = 1) -> str:
    """A Markdown table: the first `left` columns left-aligned (names), the rest right-aligned."""
    widths = [max(len(c), *(len(r[i]) for r in rows)) if rows else len(c) for i, c in enumerate(columns)]
    def line(cells):
        return "| " + " | ".join(cell.ljust(w) if i < left else cell.rjust(w)
                                 for i, (cell, w) in enumerate(zip(cells, widths))) + " |"
    rule = "|" + "|".join((":" + "-" * (w + 1)) if i < left else ("-" * (w + 1) + ":")
                          for i, w in enumerate(widths)) + "|"
    return "\n".join([line(columns), rule, *(line(r) for r in rows)])


def _ratio(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}×"


def _yes(value: bool | None) -> str:
    return "—" if value is None else ("yes" if value else "NO")


# -- machine and RESULTS.md ------------------------------------------------------
def machine() -> dict:
    """What the numbers were measured on."""
    return {
        "cpu": cpu_model(), "cores": os.cpu_count(), "ram_gb": round(memory_gb(), 1),
        "kernel": platform.release(), "python": platform.python_version(),
        "nginx": _version(["/usr/sbin/nginx", "-v"]),
        "wget": " ".join(_version(["wget", "--version"]).split()[:3]),
        "load_average": Path("/proc/loadavg").read_text().split()[:3] if Path("/proc/loadavg").exists() else [],
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
    }


def git_commit(repo: Path) -> dict:
    """HEAD's short hash and whether the working tree differs from it (read-only git calls)."""
    head = _run(["git", "-C", str(repo), "rev-parse", "--short", "HEAD"])
    status = _run(["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=no"])
    return {"commit": head, "dirty": bool(status)}


def render_results(results_dir: Path) -> str:
    """RESULTS.md text from every results/*.json (crawl benchmarks, newest
    first), then every results/*.md as it is (micro-benchmarks that write
    their own table, such as the URL_Filter one), so a crawl run keeps them."""
    results = []
    for file in sorted(Path(results_dir).glob("*.json")):
        result = json.loads(file.read_text(encoding="utf-8"))
        if isinstance(result, dict):   # a crawl benchmark's; others keep raw numbers beside their .md
            results.append(result)
    results.sort(key=lambda r: r.get("started", ""), reverse=True)
    parts = [RESULTS_HEADER]
    parts += [_section(r) for r in results]
    parts += [file.read_text(encoding="utf-8") for file in sorted(Path(results_dir).glob("*.md"))]
    return "\n".join(parts)


RESULTS_HEADER = """# Benchmark results

Written by `benchmarks/run.py` from `benchmarks/results/*.json` (newest first)
and `benchmarks/results/*.md` (micro-benchmarks, after them);
see benchmarks/README.md for what each column means and how to reproduce.
"""


def _section(result: dict) -> str:
    m, s = result["machine"], result["settings"]
    records = [RunRecord.from_dict(r) for r in result["runs"]]
    source = result.get("ours_source", {})
    head = [f"## {result.get('label') or result['kind']} — {result['kind']}, {m['date']}", "",
            f"- ours: commit `{source.get('commit', '?')}`" + (" (working tree with uncommitted changes)"
                                                           if source.get("dirty") else ""),
            f"- machine: {m['cpu']}, {m['cores']} cores, {m['ram_gb']} GB RAM, Linux {m['kernel']}, "
            f"Python {m['python']}; {m['nginx']}; {m['wget']}; Scrapy {m.get('scrapy') or '—'}; "
            f"load average at start {' '.join(m.get('load_average', [])) or '—'}",
            f"- site: {_site_line(result)}; rounds: {s['rounds']}; peers: {', '.join(s['peers'])};"
            f" ours extra args: `{s.get('ours_args') or '(none)'}`",
            f"- wall time of the whole benchmark: {result.get('elapsed_s', 0):.0f} s", ""]
    if result["kind"] == "scaling":
        growth = rss_growth_per_page(records)
        body = [scaling_table(records), "",
                f"RSS growth over all sizes (least squares): "
                f"{'—' if growth is None else f'{growth:.0f} bytes per page'}."]
    else:
        summaries = [PeerSummary(**x) for x in result["summary"]]
        body = ["Medians over rounds; ratios are per round, to Scrapy in the same round, then the median.",
                "", compare_table(summaries)]
    other = [r.other_cores for r in records]
    if other:
        body += ["", f"Background load: besides the peer and nginx, the rest of the machine kept "
                     f"{median(other):.2f} of its {m['cores']} cores busy during a run (median; max "
                     f"{max(other):.2f}); see the caveats in README.md."]
    body += ["", "<details><summary>every run</summary>", "", runs_table(records), "", "</details>", ""]
    return "\n".join(head + body)


def _site_line(result: dict) -> str:
    s, levels = result["settings"], result["site_levels"]
    page = f"pages of ~{s['page_bytes'] // 1000} KB, ~{s['links_per_page']} links each"
    if isinstance(levels, dict):   # scaling: one site per size
        per_size = "; ".join(f"{n}: {v}" for n, v in levels.items())
        return f"{', '.join(levels)} {page}, pages per level {per_size}"
    return f"{s['pages']} {page}, pages per level {levels}"


def _version(argv: list[str]) -> str:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    text = (done.stdout or done.stderr).strip().splitlines()
    return text[0].replace("nginx version: ", "") if text else ""


def _run(argv: list[str]) -> str:
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return ""


BENCH_DIR = Path(__file__).resolve().parent


def stored_options(func):
    """--save, --work, --results-dir, --results-md: where a benchmark that
    stores its results works and writes (benchmarks/export_memory.py,
    benchmarks/distributed.py)."""
    for option in reversed([
        click.option("--save/--no-save", default=True, show_default=True,
                     help="Store the result and put its section into RESULTS.md."),
        click.option("--work", type=click.Path(path_type=Path), default=BENCH_DIR / "work",
                     show_default=True),
        click.option("--results-dir", type=click.Path(path_type=Path),
                     default=BENCH_DIR / "results", show_default=True),
        click.option("--results-md", type=click.Path(path_type=Path),
                     default=BENCH_DIR / "RESULTS.md", show_default=True)]):
        func = option(func)
    return func

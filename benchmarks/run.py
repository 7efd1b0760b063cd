"""Run the benchmark: our crawler, Scrapy and wget on one generated site served by nginx.

    .venv/bin/python -m benchmarks.run                      # 5,000 pages, 3 rounds, all peers
    .venv/bin/python -m benchmarks.run --scaling 1000,5000,20000,50000
    .venv/bin/python -m benchmarks.run --quick              # 300 pages, 1 round, ours + wget

One comparison: generate (or reuse) the site and its ground truth under
benchmarks/work/, start nginx on 127.0.0.1, then run the peers interleaved,
A B C A B C ..., each under /usr/bin/time -v, with an access-log mark and the
server's CPU read before and after each run. Every run is checked (each page
fetched once, saved byte-identical; for ours, the levels too), its output
deleted, and the medians printed; the result is stored in
benchmarks/results/<name>.json and RESULTS.md is rewritten from all results.
"""
from __future__ import annotations

import io
import json
import os
import shlex
import shutil
import subprocess
import sys
import tarfile
import time
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path

if __package__ in (None, ""):   # run as a file: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import click

from benchmarks import peers as peer_registry
from benchmarks.checks import check_saved, count_server
from benchmarks.measure import run_measured, system_busy_seconds
from benchmarks.nginx import Nginx, NginxError
from benchmarks.report import (RunRecord, compare_table, git_commit, machine, render_results,
                               rss_growth_per_page, scaling_table, summarize)
from benchmarks.site import GroundTruth, SiteSpec, ensure

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent


@dataclass(frozen=True)
class Settings:
    pages: int = 5000                     # HTML pages of the site
    rounds: int = 3                       # interleaved rounds (each runs every peer once)
    peers: tuple[str, ...] = ("ours", "scrapy", "wget")
    ours_args: str = ""                   # extra arguments for `crawler crawl`
    page_bytes: int = 16_000              # site page size, bytes
    links_per_page: int = 27
    timeout_s: float = 1800.0             # per run; the run is killed after it
    keep_output: bool = False             # keep each run's output directory


# -- one run -------------------------------------------------------------------
def run_one(peer: peer_registry.Peer, server: Nginx, truth: GroundTruth, site_dir: Path,
            run_dir: Path, round_no: int, settings: Settings) -> RunRecord:
    """Run one peer once against the server and check what it did."""
    out = run_dir / "out"
    shutil.rmtree(run_dir, ignore_errors=True)
    run_dir.mkdir(parents=True)
    extra = tuple(shlex.split(settings.ours_args)) if peer.name == "ours" else ()
    argv = peer.command(server.url + "index.html", out, extra)
    env = {**os.environ, **peer.env, "no_proxy": "127.0.0.1,localhost", "NO_PROXY": "127.0.0.1,localhost"}
    mark, cpu_before, busy_before = server.mark(), server.cpu_seconds(), system_busy_seconds()
    measured = run_measured(argv, run_dir / "logs", timeout=settings.timeout_s, env=env, cwd=run_dir)
    busy = system_busy_seconds() - busy_before
    entries = server.requests_since(mark)
    server.mark()
    server_cpu = server.cpu_seconds() - cpu_before
    saved = peer.saved(out) if out.exists() else []
    record = RunRecord(
        peer=peer.name, round=round_no, site_pages=truth.total, wall_s=measured.wall_s,
        user_s=measured.usage.user_s, sys_s=measured.usage.sys_s, max_rss_kb=measured.usage.max_rss_kb,
        exit_code=measured.exit_code, exit_ok=measured.exit_code in peer.ok_exit_codes,
        timed_out=measured.timed_out, server_cpu_s=server_cpu,
        server=count_server(entries, truth),
        saved=check_saved(saved, truth, site_dir, check_levels=peer.records_levels),
        other_cpu_s=max(0.0, busy - measured.usage.cpu_s - server_cpu))
    if record.exit_ok and not settings.keep_output:
        shutil.rmtree(out, ignore_errors=True)
    return record


def compare(settings: Settings, work: Path, ours_source: Path | None = None,
            progress=lambda line: None) -> tuple[GroundTruth, list[RunRecord]]:
    """The interleaved comparison: every round runs every peer once, in the given order."""
    site_dir = work / f"site-{settings.pages}"
    truth = ensure(_spec(settings, settings.pages), site_dir)
    peers = [peer_registry.make_peer(name, ours_source=ours_source) for name in settings.peers]
    records = []
    with Nginx(site_dir) as server:
        _warm(site_dir)
        for round_no in range(1, settings.rounds + 1):
            for peer in peers:
                record = run_one(peer, server, truth, site_dir, work / "runs" / f"{peer.name}-{round_no}",
                                 round_no, settings)
                progress(_line(record, settings.rounds))
                records.append(record)
    return truth, records


def scaling(settings: Settings, sizes: list[int], work: Path, ours_source: Path | None = None,
            progress=lambda line: None) -> tuple[dict[int, GroundTruth], list[RunRecord]]:
    """Our crawler alone on sites of each size, `settings.rounds` runs per size."""
    peer = peer_registry.make_peer("ours", ours_source=ours_source)
    truths, records = {}, []
    for n in sizes:
        site_dir = work / f"site-{n}"
        truths[n] = truth = ensure(_spec(settings, n), site_dir)
        with Nginx(site_dir) as server:
            _warm(site_dir)
            for round_no in range(1, settings.rounds + 1):
                record = run_one(peer, server, truth, site_dir, work / "runs" / f"scaling-{n}-{round_no}",
                                 round_no, settings)
                progress(_line(record, settings.rounds))
                records.append(record)
    return truths, records


# -- the command line --------------------------------------------------------------
@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--pages", type=click.IntRange(min=1), default=5000, show_default=True,
              help="HTML pages of the generated site.")
@click.option("--rounds", type=click.IntRange(min=1), default=None,
              help="Interleaved rounds.  [default: 3; 1 with --scaling or --quick]")
@click.option("--peers", default="ours,scrapy,wget", show_default=True,
              help="Comma-separated peers, run in this order each round.")
@click.option("--ours-args", default="", help="Extra arguments for `crawler crawl`, e.g. '--processes 2'.")
@click.option("--ours-commit", default=None,
              help="Run our crawler as of this commit (exported with git archive), not the working tree.")
@click.option("--scaling", "scaling_sizes", default=None,
              help="Comma-separated site sizes: run our crawler alone at each, e.g. 1000,5000,20000,50000.")
@click.option("--quick", is_flag=True, help="Small run for CI: 300 pages, 1 round, ours + wget, not saved.")
@click.option("--label", default="", help="Title of this result in RESULTS.md, e.g. 'baseline, before optimisation'.")
@click.option("--name", default=None, help="File name of the result in --results-dir (without .json).")
@click.option("--save/--no-save", default=None, help="Store the result and rewrite RESULTS.md.  [default: save, unless --quick]")
@click.option("--work", type=click.Path(path_type=Path), default=BENCH_DIR / "work", show_default=True,
              help="Where sites and run outputs go (large: ~16 KB per page per copy).")
@click.option("--results-dir", type=click.Path(path_type=Path), default=BENCH_DIR / "results", show_default=True)
@click.option("--results-md", type=click.Path(path_type=Path), default=BENCH_DIR / "RESULTS.md", show_default=True)
@click.option("--timeout", type=click.FloatRange(min=1), default=1800.0, show_default=True,
              help="Seconds allowed per run.")
@click.option("--keep-output", is_flag=True, help="Keep each run's output directory under --work/runs.")
def main(pages, rounds, peers, ours_args, ours_commit, scaling_sizes, quick, label, name, save,
         work, results_dir, results_md, timeout, keep_output):
    """Benchmark our crawler against Scrapy and wget on a generated site served by nginx.

    Example: .venv/bin/python -m benchmarks.run --pages 5000 --rounds 3
    """
    if quick:
        pages, peers = 300, "ours,wget"
    peer_names = _peer_names(peers)
    sizes = _sizes(scaling_sizes)
    settings = Settings(pages=pages, rounds=rounds or (1 if (quick or sizes) else 3),
                        peers=("ours",) if sizes else peer_names, ours_args=ours_args,
                        timeout_s=timeout, keep_output=keep_output)
    save = (not quick) if save is None else save
    work.mkdir(parents=True, exist_ok=True)
    source, source_info = _ours_source(ours_commit, work)
    scrapy_version = ""
    if "scrapy" in settings.peers:
        click.echo("preparing Scrapy's environment (benchmarks/.venv-scrapy) ...", err=True)
        scrapy_version = peer_registry.ensure_scrapy()
    started = datetime.now(timezone.utc)
    before = machine()   # the load average before the benchmark adds its own
    clock = time.perf_counter()
    progress = lambda line: click.echo(line, err=True)   # noqa: E731
    try:
        records, levels, text, summary = _measure(settings, sizes, work, source, progress)
    except NginxError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(text)
    result = {
        "kind": "scaling" if sizes else "compare", "label": label,
        "started": started.isoformat(timespec="seconds"), "elapsed_s": time.perf_counter() - clock,
        "machine": {**before, "scrapy": scrapy_version}, "ours_source": source_info,
        "settings": {**asdict(settings), "peers": list(settings.peers), "sizes": sizes},
        "site_levels": levels, "runs": [r.to_dict() for r in records], "summary": summary,
    }
    if save:
        _store(result, name, results_dir, results_md, started)
    if not all(r.exit_ok and not r.timed_out for r in records):
        click.echo("some runs failed (see the exit column and --work/runs/*/logs)", err=True)
        sys.exit(1)


def _peer_names(peers: str) -> tuple[str, ...]:
    names = tuple(p.strip() for p in peers.split(",") if p.strip())
    for name in names:
        if name not in peer_registry.PEER_NAMES:
            raise click.BadParameter(f"unknown peer {name!r}; choose from {', '.join(peer_registry.PEER_NAMES)}",
                                     param_hint="--peers")
    return names


def _measure(settings: Settings, sizes: list[int], work: Path, source, progress):
    """Run the comparison (or the scaling run): records, site levels, table text, summaries."""
    if sizes:
        truths, records = scaling(settings, sizes, work, source, progress)
        growth = rss_growth_per_page(records)
        text = scaling_table(records) + "\n\nRSS growth (least squares over sizes): " + (
            "—" if growth is None else f"{growth:.0f} bytes/page")
        return records, {n: list(t.levels) for n, t in truths.items()}, text, []
    truth, records = compare(settings, work, source, progress)
    summaries = summarize(records, truth.levels)
    return records, list(truth.levels), compare_table(summaries), [asdict(s) for s in summaries]


def _store(result: dict, name: str | None, results_dir: Path, results_md: Path, started: datetime) -> None:
    results_dir.mkdir(parents=True, exist_ok=True)
    size = "-".join(map(str, result["settings"]["sizes"])) or str(result["settings"]["pages"])
    name = name or f"{result['kind']}-{size}-{started.strftime('%Y%m%d-%H%M%S')}"
    path = results_dir / f"{name}.json"
    path.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    results_md.write_text(render_results(results_dir), encoding="utf-8")
    click.echo(f"stored {path} and rewrote {results_md}", err=True)


def _ours_source(commit: str | None, work: Path) -> tuple[Path | None, dict]:
    """The source tree our crawler runs from: the working tree, or `git archive` of a commit."""
    if not commit:
        return None, git_commit(REPO)
    short = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", commit],
                           capture_output=True, text=True)
    if short.returncode:
        raise click.BadParameter(f"not a commit of this repository: {commit}", param_hint="--ours-commit")
    target = work / f"source-{short.stdout.strip()}"
    if not (target / "controller").is_dir():
        shutil.rmtree(target, ignore_errors=True)
        archive = subprocess.run(["git", "-C", str(REPO), "archive", "--format=tar", commit],
                                 capture_output=True, check=True)
        target.mkdir(parents=True)
        with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
            tar.extractall(target, filter="data")
    return target, {"commit": short.stdout.strip(), "dirty": False, "source": "git archive"}


def _sizes(text: str | None) -> list[int]:
    if not text:
        return []
    try:
        sizes = sorted({int(x) for x in text.split(",") if x.strip()})
    except ValueError:
        raise click.BadParameter(f"expected comma-separated page counts, got {text!r}",
                                 param_hint="--scaling") from None
    if not sizes or sizes[0] < 1:
        raise click.BadParameter("sizes must be positive", param_hint="--scaling")
    return sizes


def _spec(settings: Settings, pages: int) -> SiteSpec:
    return SiteSpec(pages=pages, page_bytes=settings.page_bytes, links_per_page=settings.links_per_page)


def _warm(site_dir: Path) -> None:
    """Read every site file once, so no peer pays for a cold page cache."""
    for folder, _, names in os.walk(site_dir):
        for name in names:
            with open(os.path.join(folder, name), "rb") as f:
                while f.read(1 << 20):
                    pass


def _line(r: RunRecord, rounds: int) -> str:
    flags = [] if r.exit_ok and not r.timed_out else [f"exit {r.exit_code}" + (" TIMEOUT" if r.timed_out else "")]
    if not r.fetched_once:
        flags.append(f"missed {r.server.html_missed} dup {r.server.html_duplicates}")
    if not r.saved_all_identical:
        flags.append(f"not saved {r.saved.missing} differ {r.saved.differ}")
    if r.saved.wrong_level:
        flags.append(f"wrong level {r.saved.wrong_level}")
    return (f"round {r.round}/{rounds} {r.peer:6} site {r.site_pages}: {r.pages} pages in {r.wall_s:.2f} s "
            f"({r.pages_per_s:.0f} pages/s, CPU {r.cpu_ms_per_page:.2f} ms/page, RSS {r.max_rss_kb / 1024:.0f} MB, "
            f"{r.server.requests} requests, server CPU {r.server_cpu_s:.2f} s)"
            + (" — " + "; ".join(flags) if flags else ""))


if __name__ == "__main__":
    main()

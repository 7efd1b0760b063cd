"""The politeness bound on real sites: eight Debian documentation sites crawled at once, with a timeline.

    .venv/bin/python -m benchmarks.real_sites --rounds 2                 # the docs at --delay 0.1
    .venv/bin/python -m benchmarks.real_sites --generated 40 --rounds 2  # polite.py's 40 sites at 0.2 s
    .venv/bin/python -m benchmarks.real_sites --ours-commit main --label before

Each documentation package of benchmarks/docs_sites.py (~900 pages in all)
is served by one nginx from its own loopback address, every site's start
page a seed, and crawled by our crawler (and, with --peers, by Scrapy) at
one request per host and a fixed delay, interleaved over rounds; or, with
--generated N, benchmarks/polite_site.py's N generated sites. Every run is
checked as benchmarks/polite.py checks it (each page once, saved
byte-identical, levels exact), and its wall time set against the
politeness bound of the host that needs the most requests. Then the
seconds above the bound are split along that host's timeline
(benchmarks/timeline.py: start-up, robots.txt, the level barrier, the
scheduler, the end). Results go to benchmarks/results/real_sites/<name>.json
and benchmarks/results/<name>.md, which report.render_results copies into
RESULTS.md.
"""
from __future__ import annotations

import json
import shlex
import shutil
import sys
import time
from dataclasses import asdict, dataclass, replace
from datetime import datetime, timezone
from pathlib import Path

if __package__ in (None, ""):   # run as a file: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import click

from benchmarks import docs_sites, peers as peer_registry, polite, timeline
from benchmarks.nginx import Nginx, NginxError, parse_log_line, BARRIER_PATH
from benchmarks.polite_site import SiteSet, SiteSetSpec, generate
from benchmarks.report import machine, markdown_table, render_results
from benchmarks.run import _ours_source

BENCH_DIR = Path(__file__).resolve().parent
PEERS = ("ours", "scrapy", "scrapy-aware")


@dataclass(frozen=True)
class Setting(polite.Setting):
    what: str = ""   # the sites, in words

    @property
    def name(self) -> str:
        return f"{self.what}, delay {self.delay_s:g} s"


def run_with_timeline(peer, server: Nginx, sites: SiteSet, setting: Setting, options: polite.Options,
                      run_dir: Path, round_no: int) -> tuple[polite.PoliteRun, timeline.Excess]:
    """One polite.run_one, and where its seconds above the bound went."""
    record = polite.run_one(peer, server, sites, setting, replace(options, keep_output=True),
                            run_dir, round_no)
    entries = [e for e in map(parse_log_line, (run_dir / "access.log").read_text().splitlines())
               if e is not None and e.path != BARRIER_PATH]
    out = run_dir / "out"
    bounding = max(sites.sites, key=lambda s: _needed(s))
    split = timeline.excess(entries, bounding.address, _needed(bounding), setting.delay_s, round(record.started_s * 1000),
                            record.wall_s, out / "trace.log")
    if record.exit_ok and not options.keep_output:
        shutil.rmtree(out, ignore_errors=True)
    return record, split


def _needed(site) -> int:
    """Requests the site needs: its pages and, on a real site, what else they link to."""
    return getattr(site.truth, "requests_needed", site.pages)


def measure(sites: SiteSet, setting: Setting, options: polite.Options, work: Path, source: Path | None,
            progress, against: tuple[str, Path] | None = None) -> list[tuple[polite.PoliteRun, timeline.Excess]]:
    """Every peer `rounds` times, interleaved; `against`: (name, source) of our crawler at
    another commit, run after ours in each round."""
    peers = [polite.make_peer(name, setting.delay_s, options, source) for name in options.peers]
    if against is not None:
        peers.insert(1, replace(polite.make_peer("ours", setting.delay_s, options, against[1]), name=against[0]))
    runs = []
    with Nginx({site.address: sites.root(site) for site in sites.sites}) as server:
        polite.warm_up(peers, server, sites, setting, options, work, progress)
        for round_no in range(1, setting.rounds + 1):
            for peer in peers:
                run_dir = work / "runs" / f"real-sites-{peer.name}-{round_no}"
                record, split = run_with_timeline(peer, server, sites, setting, options, run_dir, round_no)
                progress(polite._line(record, setting.rounds) + f"; above the bound {split.total():.2f} s")
                runs.append((record, split))
    return runs


def timeline_table(runs: list[tuple[polite.PoliteRun, timeline.Excess]]) -> str:
    """One column per run: the seconds above the bound, part by part."""
    columns = ("seconds above the bound", *(f"{r.peer} {r.round}" for r, _ in runs))
    rows = [(part, *(f"{s.parts[part]:.2f}" for _, s in runs)) for part in timeline.PARTS]
    rows += [("**total = wall − bound**", *(f"**{s.total():.2f}**" for _, s in runs)),
             ("wall − bound (check)", *(f"{r.wall_s - r.lower_bound_s:.2f}" for r, _ in runs)),
             (f"idle gaps > {timeline.IDLE_FACTOR:g} delays, all hosts: count",
              *(str(s.idle_gaps) for _, s in runs)),
             ("… their seconds beyond one delay", *(f"{s.idle_s:.2f}" for _, s in runs)),
             ("… of them with a level closing inside", *(str(s.idle_at_level_close) for _, s in runs))]
    return markdown_table(columns, rows, left=1)


def section(result: dict) -> str:
    m, o, s = result["machine"], result["options"], result["setting"]
    source = result["ours_source"]
    records = [polite._from_dict(r) for r in result["runs"]]
    splits = [timeline.Excess(**t) for t in result["timelines"]]
    return "\n".join([
        f"## The politeness bound on {s['what']} — {result.get('label') or 'real sites'}, {m['date']}", "",
        f"Written by `.venv/bin/python -m benchmarks.real_sites {result['argv']}` "
        f"(raw numbers: `benchmarks/results/real_sites/{result['name']}.json`); the bound is "
        f"(requests of the host that needs most − 1) × delay; the timeline (benchmarks/timeline.py) "
        f"splits the wall time above it along that host's requests, from nginx's log and trace.log.", "",
        f"- ours: commit `{source.get('commit', '?')}`"
        + (" (working tree with uncommitted changes)" if source.get("dirty") else "")
        + f", extra args `{o['ours_args'] or '(none)'}`"
        + (f"; ours@…: commit `{source['against'].get('commit', '?')}`, interleaved" if "against" in source else ""),
        f"- machine: {m['cpu']}, {m['cores']} cores, Python {m['python']}; {m['nginx']}; "
        f"load average at start {' '.join(m.get('load_average', [])) or '—'}",
        f"- {s['pages']} pages on {len(s['sizes'])} sites, requests needed per site {s['sizes']}; "
        f"delay {s['delay_s']:g} s; {s['rounds']} round(s)",
        f"- wall time of the whole benchmark: {result['elapsed_s']:.0f} s", "",
        polite.table(records), "", timeline_table(list(zip(records, splits))), ""])


def _load_sites(generated: int, work: Path) -> tuple[SiteSet, str]:
    if generated:
        site_dir = work / f"real-sites-generated-{generated}"
        shutil.rmtree(site_dir, ignore_errors=True)
        return generate(SiteSetSpec(sites=generated), site_dir), f"{generated} generated sites"
    missing = docs_sites.missing_packages()
    if missing:
        click.echo(f"the documentation sites are not installed; run: apt-get install -y {' '.join(missing)}",
                   err=True)
        sys.exit(2)
    return docs_sites.load(), "8 Debian documentation sites"


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--generated", type=click.IntRange(0, 250), default=0, show_default=True,
              help="Crawl this many generated sites (benchmarks/polite_site.py) instead of the docs.")
@click.option("--delay", type=click.FloatRange(min=0.01), default=None,
              help="Seconds between two request starts to one host.  [default: 0.1; 0.2 with --generated]")
@click.option("--rounds", type=click.IntRange(min=1), default=2, show_default=True, help="Interleaved rounds.")
@click.option("--peers", default="ours", show_default=True, help=f"Comma-separated, of: {', '.join(PEERS)}.")
@click.option("--ours-args", default="", help="Extra arguments for `crawler crawl`.")
@click.option("--ours-commit", default=None, help="Run our crawler as of this commit, not the working tree.")
@click.option("--against", default=None,
              help="Also run our crawler as of this commit (peer ours@COMMIT), interleaved with ours.")
@click.option("--label", default="", help="Title of this result in RESULTS.md, e.g. 'before'.")
@click.option("--name", default=None, help="File name of the result (without .json / .md).")
@click.option("--save/--no-save", default=True, show_default=True, help="Store the result and rewrite RESULTS.md.")
@polite.run_options
def main(generated, delay, rounds, peers, ours_args, ours_commit, against, label, name, save, work, results_dir,
         results_md, timeout, keep_output, warmup):
    """The politeness bound on eight real documentation sites (or generated ones), with a timeline."""
    names = tuple(p.strip() for p in peers.split(",") if p.strip())
    if not names or any(p not in PEERS for p in names):
        raise click.BadParameter(f"choose from {', '.join(PEERS)}", param_hint="--peers")
    delay = delay or (0.2 if generated else 0.1)
    work.mkdir(parents=True, exist_ok=True)
    sites, what = _load_sites(generated, work)
    setting = Setting(sites.spec, delay, rounds, what)
    options = polite.Options(peers=names, ours_args=ours_args, timeout_s=timeout, keep_output=keep_output,
                             warmup=warmup)
    source, source_info = _ours_source(ours_commit, work)
    if against:
        other, other_info = _ours_source(against, work)
        source_info = {**source_info, "against": other_info}
        against = (f"ours@{other_info.get('commit', against)[:7]}", other)
    scrapy_version = peer_registry.ensure_scrapy() if any(p.startswith("scrapy") for p in names) else ""
    started, before, clock = datetime.now(timezone.utc), machine(), time.perf_counter()
    try:
        runs = measure(sites, setting, options, work, source, lambda line: click.echo(line, err=True), against)
    except NginxError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(polite.table([r for r, _ in runs]) + "\n\n" + timeline_table(runs))
    result = {"kind": "real_sites", "label": label, "argv": shlex.join(sys.argv[1:]),
              "name": name or f"real-sites-{generated or 'docs'}-{started.strftime('%Y%m%d-%H%M%S')}",
              "started": started.isoformat(timespec="seconds"), "elapsed_s": time.perf_counter() - clock,
              "machine": {**before, "scrapy": scrapy_version}, "ours_source": source_info,
              "options": {**asdict(options), "peers": list(names)},
              "setting": {"what": what, "delay_s": delay, "rounds": rounds, "pages": sites.pages,
                          "sizes": sorted((_needed(s) for s in sites.sites), reverse=True)},
              "runs": [r.to_dict() for r, _ in runs], "timelines": [asdict(s) for _, s in runs]}
    if save:
        raw = results_dir / "real_sites" / f"{result['name']}.json"
        raw.parent.mkdir(parents=True, exist_ok=True)
        raw.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
        (results_dir / f"{result['name']}.md").write_text(section(result), encoding="utf-8")
        results_md.write_text(render_results(results_dir), encoding="utf-8")
        click.echo(f"stored {raw} and rewrote {results_md}", err=True)
    if not all(r.exit_ok and not r.timed_out for r, _ in runs):
        click.echo("some runs failed (see --work/runs/*/logs)", err=True)
        sys.exit(1)


if __name__ == "__main__":
    main()

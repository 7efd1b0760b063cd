"""How many pages a killed worker costs a shared crawl: kill -9 one of three
workers at a different moment in each round, read from Redis what it held
(its lease hash), start it again with its id, and count the pages the
sites were asked for twice. The claim under test (README, "Distributed
crawling"): only what the dead worker held is fetched again, and nothing
is lost.

    .venv/bin/python -m benchmarks.kill_refetch [--rounds 8]
    .venv/bin/python -m benchmarks.kill_refetch --mode shared --restart yes,no --rounds 4

Prints a table and writes benchmarks/results/distributed/kill-refetch.json.
The sites are the tests' many-host loopback sites (tests/manyhosts.py).

With --mode shared, a dead worker's cost in time is measured too: per
round, a crawl without a kill, then one kill per --restart value, each when the three
workers together have written the round's number of rows. `yes` starts the
victim again at once with its id; `no` leaves it dead, so the others reclaim
what it held once --lease-seconds pass (a dead victim is run once more after
the crawl, outside the wall time, to write the rows it had committed, as the
README says to do before merging). Per run: the wall time, pages fetched
again, pages lost, and the stall: the longest any host the victim was
serving went without a request across the kill (the hosts of the URLs in
its lease hash, read from Redis just before the kill).
Stored in results/distributed/kill-partition.json, results/kill-partition.md
and its section in RESULTS.md.
"""
from __future__ import annotations

import json
import os
import random
import shlex
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path
from urllib.parse import urlsplit

import click
import redis

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))   # the loopback sites and the Redis the tests use
if __package__ in (None, ""):   # run as a file: make `benchmarks` importable
    sys.path.insert(0, str(ROOT))

from manyhosts import many_hosts, truth  # noqa: E402
from redisserver import RedisServer  # noqa: E402

from benchmarks.redis_seen import put_section, redis_version  # noqa: E402
from benchmarks.report import git_commit, machine, markdown_table  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "distributed" / "kill-refetch.json"
COMPARED = ROOT / "benchmarks" / "results" / "distributed" / "kill-partition.json"
COMPARED_MD = ROOT / "benchmarks" / "results" / "kill-partition.md"
RESULTS_MD = ROOT / "benchmarks" / "RESULTS.md"
SECTION_TITLE = "## Distributed crawl: a worker killed, shared queue against host partitioning (issue 14)"
CRAWL_ID = "k"
PREFIX = f"crawl:{{{CRAWL_ID}}}:"
DELAY = 0.2
WAIT_S = 300   # for a crawl to end


def crawler(args, cwd, source: Path = ROOT):
    return subprocess.Popen([sys.executable, "-m", "controller", *args], cwd=cwd,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env={**os.environ, "PYTHONPATH": str(source)})


def rows(out: Path) -> list[str]:
    index = out / "index.csv"
    return index.read_text(encoding="utf-8").splitlines()[1:] if index.exists() else []


@dataclass
class Crawl:
    """Three workers on one Redis: the first creates the crawl, then the victim
    (worker id ``victim``) and one more join it."""
    procs: list            # the two workers that are never killed
    victim: subprocess.Popen
    victim_args: list[str]
    client: redis.Redis
    dirs: list[Path]

    @classmethod
    def start(cls, roots, url: str, work: Path, source: Path = ROOT, create=()) -> Crawl:
        dirs = [work / f"w{k}" for k in range(3)]
        first = crawler(["crawl", *roots, "--redis", url, "--crawl-id", CRAWL_ID, "--out", str(dirs[0]),
                         "--delay", f"{DELAY:g}", "--max-depth", "0", "--max-pages", "0", "--quiet",
                         *create], work, source)
        client = redis.Redis.from_url(url)
        while not client.exists(PREFIX + "state"):
            time.sleep(0.01)   # polling an observable condition
        victim_args = ["worker", "--redis", url, "--crawl-id", CRAWL_ID, "--out", str(dirs[1]), "--quiet",
                       "--worker-id", "victim"]
        victim = crawler(victim_args, work, source)
        other = crawler(["worker", "--redis", url, "--crawl-id", CRAWL_ID, "--out", str(dirs[2]),
                         "--quiet"], work, source)
        return cls([first, other], victim, victim_args, client, dirs)

    def kill_victim_when(self, written) -> float | None:
        """kill -9 the victim once ``written()`` holds; when (time.monotonic), or None if
        it had exited before."""
        while not written() and self.victim.poll() is None:
            time.sleep(0.005)   # polling an observable condition
        if self.victim.poll() is not None:
            return None
        self.victim.send_signal(signal.SIGKILL)
        killed = time.monotonic()
        self.victim.wait()
        return killed

    def lease_entries(self) -> list[str]:
        return [e.decode() for e in self.client.hvals(PREFIX + "lease:victim")]

    def wait(self, extra=()) -> None:
        for proc in self.procs + list(extra):
            proc.wait(timeout=WAIT_S)


def tally(roots, logs, dirs) -> dict:
    """Requests for a page beyond its first, and pages in no worker's index.csv."""
    requests = Counter((i, r.path) for i, log in enumerate(logs) for r in log.snapshot()
                       if r.path != "/robots.txt")
    found = {line.split(",")[1] for d in dirs for line in rows(d)}
    return {"fetched_again": sum(n - 1 for n in requests.values() if n > 1),
            "lost": len(set(truth(roots)) - found)}


def one_round(roots, logs, kill_after: int, work: Path, source: Path = ROOT) -> dict:
    for log in logs:
        log.clear()
    with RedisServer(work / "redis") as server:
        crawl = Crawl.start(roots, server.url, work, source)
        crawl.kill_victim_when(lambda: len(rows(crawl.dirs[1])) >= kill_after)
        held = len(crawl.lease_entries())
        again = crawler(crawl.victim_args, work, source)
        crawl.wait([again])
    return {"kill_after_rows": kill_after, "held_at_kill": held, **tally(roots, logs, crawl.dirs)}


# -- the time a death costs ---------------------------------------------------------------------
def has_header(out: Path) -> bool:
    """index.csv starts with its header (as every reader of it, `crawler merge` too, assumes)."""
    index = out / "index.csv"
    return not index.exists() or index.read_text(encoding="utf-8").startswith("id,")


def host_of(url: str) -> str:
    """The crawl's host key of a loopback URL ("127.0.0.x:port", getpage.politeness.host_key)."""
    return urlsplit(url).netloc.lower()


def entry_host(entry: str) -> str:
    return entry.split("\t")[3]


def serving(crawl: Crawl, roots) -> list[int]:
    """The sites (indexes into roots) the victim serves: those of the URLs it holds."""
    leased = {entry_host(e) for e in crawl.lease_entries()}
    return [i for i, root in enumerate(roots) if host_of(root) in leased]


def stall_s(logs, sites: list[int], killed: float) -> float | None:
    """The longest any of these sites went without a request across the kill: from its last
    request before (or the kill) to its first after. Sites with none after were done."""
    gaps = []
    for i in sites:
        times = sorted(r.time for r in logs[i].snapshot())
        after = [t for t in times if t > killed]
        if after:
            gaps.append(after[0] - max([t for t in times if t <= killed], default=killed))
    return max(gaps) if gaps else None


@dataclass
class ModeRun:
    mode: str               # shared
    restart: str            # "-" (no kill), yes, no
    round: int
    kill_at_rows: int
    wall_s: float = 0.0     # first worker started to the last one's exit
    killed_after_s: float | None = None   # from the start; None: the victim had exited
    held_at_kill: int = 0
    serving_sites: int = 0  # sites the victim served at its death (those of its leases)
    waiting_sites: int = 0  # of those, sites that still had requests after the kill
    stall_s: float | None = None
    fetched_again: int = 0
    lost: int = 0
    headerless: int = 0     # workers' index.csv files whose first line is a row, not the header


def mode_run(roots, logs, work: Path, source: Path, mode: str, restart: str, round_no: int,
             kill_at: int, lease_s: float) -> ModeRun:
    for log in logs:
        log.clear()
    run = ModeRun(mode, restart, round_no, kill_at)
    create = ("--lease-seconds", f"{lease_s:g}")
    with RedisServer(work / "redis") as server:
        started = time.monotonic()
        crawl = Crawl.start(roots, server.url, work, source, create)
        if restart == "-":
            crawl.wait([crawl.victim])
        else:
            watch(run, crawl, roots, logs, started, work, source)
        run.wall_s = time.monotonic() - started
        if restart == "no":
            crawler(crawl.victim_args, work, source).wait(timeout=WAIT_S)
    counted = tally(roots, logs, crawl.dirs)
    run.fetched_again, run.lost = counted["fetched_again"], counted["lost"]
    run.headerless = sum(1 for d in crawl.dirs if not has_header(d))
    return run


def watch(run: ModeRun, crawl: Crawl, roots, logs, started: float, work: Path,
          source: Path) -> None:
    """Kill the victim at the round's moment, read what it served, restart it or not, and
    wait for the crawl's end; then the stall."""
    sites = []

    def written() -> bool:
        nonlocal sites
        done = sum(len(rows(d)) for d in crawl.dirs) >= run.kill_at_rows
        if done:   # read just before the kill
            sites = serving(crawl, roots)
            run.held_at_kill = len(crawl.lease_entries())
        return done
    killed = crawl.kill_victim_when(written)
    again = [crawler(crawl.victim_args, work, source)] if killed and run.restart == "yes" else []
    crawl.wait(again)
    if killed is None:
        return
    run.killed_after_s = killed - started
    run.serving_sites = len(sites)
    run.stall_s = stall_s(logs, sites, killed)
    run.waiting_sites = sum(1 for i in sites if any(r.time > killed for r in logs[i].snapshot()))


def compare(roots, logs, modes: list[str], restarts: list[str], rounds: int,
            lease_s: float, source: Path, seed: int) -> list[ModeRun]:
    """Every (mode, restart) once per round, interleaved; one kill moment per round."""
    pick, runs = random.Random(seed), []
    pages = len(truth(roots))
    for n in range(1, rounds + 1):
        kill_at = pick.randint(pages // 5, pages // 2)
        for mode in modes:
            for restart in ["-", *restarts]:
                with tempfile.TemporaryDirectory() as work:
                    runs.append(mode_run(roots, logs, Path(work), source, mode, restart, n, kill_at,
                                         lease_s))
                click.echo(run_line(runs[-1]), err=True)
    return runs


def run_line(r: ModeRun) -> str:
    kill = ("no kill" if r.restart == "-" else
            f"killed at {r.kill_at_rows} rows ({_s(r.killed_after_s)} s), restart {r.restart}")
    return (f"round {r.round} {r.mode}, {kill}: wall {r.wall_s:.1f} s; serving {r.serving_sites} sites "
            f"({r.waiting_sites} not done), held {r.held_at_kill}; stall {_s(r.stall_s)} s; "
            f"fetched again {r.fetched_again}, lost {r.lost}"
            + (f" ({r.headerless} index.csv without its header)" if r.headerless else ""))


def _s(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def summarize(runs: list[ModeRun], lease_s: float) -> list[dict]:
    """Per (mode, restart): medians over rounds; wall time to the same mode's no-kill run in
    the same round (its median difference and ratio); stalls against the lease."""
    out = []
    for key in dict.fromkeys((r.mode, r.restart) for r in runs):
        mine = [r for r in runs if (r.mode, r.restart) == key]
        base = {r.round: r for r in runs if r.mode == key[0] and r.restart == "-"}
        stalls = [r.stall_s for r in mine if r.stall_s is not None]
        out.append({
            "mode": key[0], "restart": key[1], "rounds": len(mine),
            "wall_s": statistics.median(r.wall_s for r in mine),
            "wall_plus_s": statistics.median(r.wall_s - base[r.round].wall_s for r in mine),
            "wall_x": statistics.median(r.wall_s / base[r.round].wall_s for r in mine),
            "serving_sites": statistics.median(r.serving_sites for r in mine),
            "waiting_sites": statistics.median(r.waiting_sites for r in mine),
            "held": statistics.median(r.held_at_kill for r in mine),
            "stall_median_s": statistics.median(stalls) if stalls else None,
            "stall_max_s": max(stalls) if stalls else None,
            "stall_max_x_lease": max(stalls) / lease_s if stalls else None,
            "fetched_again": [r.fetched_again for r in mine],
            "lost": sum(r.lost for r in mine), "headerless": sum(r.headerless for r in mine)})
    return out


COLUMNS = ("mode", "killed", "rounds", "wall s", "wall − no kill s", "wall ÷ no kill", "sites served",
           "of them not done", "URLs held", "stall s (median)", "stall s (max)", "max stall ÷ lease",
           "fetched again", "lost", "index.csv without header")


def table(rows: list[dict]) -> str:
    restart = {"-": "no kill", "yes": "restarted at once", "no": "not restarted"}
    cells = [(r["mode"], restart[r["restart"]], str(r["rounds"]), f"{r['wall_s']:.1f}",
              "—" if r["restart"] == "-" else f"{r['wall_plus_s']:+.1f}",
              "—" if r["restart"] == "-" else f"{r['wall_x']:.2f}×",
              *(("—",) * 3 if r["restart"] == "-" else
                (f"{r['serving_sites']:g}", f"{r['waiting_sites']:g}", f"{r['held']:g}")),
              _s(r["stall_median_s"]), _s(r["stall_max_s"]), _s(r["stall_max_x_lease"]),
              " ".join(map(str, r["fetched_again"])), str(r["lost"]), str(r["headerless"]))
             for r in rows]
    return markdown_table(COLUMNS, cells, left=2)


def runs_table(runs: list[ModeRun]) -> str:
    columns = ("round", "mode", "restart", "kill at rows", "killed at s", "wall s", "sites served",
               "not done", "URLs held", "stall s", "fetched again", "lost", "index.csv without header")
    cells = [(str(r.round), r.mode, r.restart, str(r.kill_at_rows), _s(r.killed_after_s),
              f"{r.wall_s:.1f}", str(r.serving_sites), str(r.waiting_sites), str(r.held_at_kill),
              _s(r.stall_s), str(r.fetched_again), str(r.lost), str(r.headerless)) for r in runs]
    return markdown_table(columns, cells, left=3)


def section(result: dict) -> str:
    m, o = result["machine"], result["options"]
    source = result["source"]
    runs = [ModeRun(**r) for r in result["runs"]]
    return "\n".join([
        SECTION_TITLE, "",
        f"Written by `.venv/bin/python -m benchmarks.kill_refetch {result['argv']}` (raw numbers: "
        f"`benchmarks/results/distributed/kill-partition.json`).", "",
        f"- {m['date']}; crawler at commit `{source['commit']}`"
        + (" (with uncommitted changes)" if source["dirty"] else "")
        + f"; {m['cpu']}, {m['cores']} cores, Python {m['python']}; {result['redis']}; load average "
        f"at start {' '.join(m['load_average'])}; the whole benchmark {result['elapsed_s']:.0f} s",
        f"- the tests' six loopback sites (tests/manyhosts.py: {result['pages']} pages, 5 to 20 a site), "
        f"--delay {DELAY:g}, three workers (`crawler crawl --redis`, then the victim and one more "
        f"`crawler worker`), `--lease-seconds {o['lease_s']:g}`; {o['rounds']} interleaved round(s), each killing every run at the same "
        f"moment (when the workers together have written that round's rows)",
        "- stall: per site the victim served at its death, the time from its last request before "
        "the kill to its first after (sites with none after were done), the largest of them; a "
        "site's normal gap is the delay. wall − no kill: against the same mode's crawl without a "
        "kill in the same round, median; fetched again: every run's count; lost: pages in no "
        "worker's index.csv as a reader sees it (the first line taken as the header)", "",
        table(result["summary"]), "",
        "<details><summary>every run</summary>", "", runs_table(runs), "", "</details>", ""])


def store(result: dict, results_md: Path) -> None:
    COMPARED.parent.mkdir(parents=True, exist_ok=True)
    COMPARED.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    text = section(result)
    COMPARED_MD.write_text(text, encoding="utf-8")
    put_section(results_md, SECTION_TITLE + "\n", text)


def compare_main(modes, restarts, rounds, lease_s, source, seed, save, results_md) -> None:
    clock, before = time.perf_counter(), machine()
    with many_hosts(first_address=110) as (roots, logs):
        runs = compare(roots, logs, modes, restarts, rounds, lease_s, source, seed)
        pages = len(truth(roots))
    rows = summarize(runs, lease_s)
    result = {"argv": shlex.join(sys.argv[1:]), "machine": before, "redis": redis_version(),
              "source": git_commit(source), "elapsed_s": time.perf_counter() - clock, "pages": pages,
              "options": {"modes": modes, "restarts": restarts, "rounds": rounds,
                          "lease_s": lease_s, "seed": seed},
              "summary": rows, "runs": [asdict(r) for r in runs]}
    click.echo(table(rows))
    if save:
        store(result, results_md)
        click.echo(f"stored {COMPARED} and its section in {results_md}", err=True)
    if any(r["lost"] for r in rows):
        click.echo("pages were lost", err=True)
        sys.exit(1)


def _names(text: str, allowed: tuple[str, ...], hint: str) -> list[str]:
    names = [n for n in text.split(",") if n]
    if not names or any(n not in allowed for n in names):
        raise click.BadParameter(f"choose from {', '.join(allowed)}, comma-separated", param_hint=hint)
    return names


@click.command()
@click.option("--rounds", type=click.IntRange(min=1), default=8, show_default=True)
@click.option("--seed", default=14, show_default=True)
@click.option("--mode", "modes", default="",
              help="shared: also the time a death costs, per --restart (empty: the refetch count alone).")
@click.option("--restart", "restarts", default="yes", show_default=True,
              help="With --mode: yes (restart the victim at once with its id), no (leave it dead), or both.")
@click.option("--lease-seconds", "lease_s", type=click.FloatRange(min=1), default=5.0, show_default=True,
              help="With --mode: the crawl's --lease-seconds.")
@click.option("--ours", "source", type=click.Path(path_type=Path, file_okay=False, exists=True),
              default=ROOT, help="The crawler's source tree (PYTHONPATH of every worker), e.g. a "
              "git worktree that nobody edits meanwhile.  [default: this repository]")
@click.option("--save/--no-save", default=True, show_default=True,
              help="With --mode: store the result and put its section into RESULTS.md.")
@click.option("--results-md", type=click.Path(path_type=Path), default=RESULTS_MD, show_default=True)
def main(rounds: int, seed: int, modes: str, restarts: str, lease_s: float, source: Path,
         save: bool, results_md: Path) -> None:
    if modes:
        compare_main(_names(modes, ("shared",), "--mode"),
                     _names(restarts, ("yes", "no"), "--restart"), rounds, lease_s,
                     source.resolve(), seed, save, results_md)
        return
    pick = random.Random(seed)
    results = []
    with many_hosts(first_address=110) as (roots, logs):
        for n in range(rounds):
            with tempfile.TemporaryDirectory() as work:
                results.append(one_round(roots, logs, pick.randint(3, 18), Path(work), source.resolve()))
            r = results[-1]
            print(f"round {n + 1}: killed after {r['kill_after_rows']} rows; held "
                  f"{r['held_at_kill']}, fetched again {r['fetched_again']}, lost {r['lost']}")
    print("\n| round | killed after rows | held at kill | fetched again | lost |\n|---:|---:|---:|---:|---:|")
    for n, r in enumerate(results, 1):
        print(f"| {n} | {r['kill_after_rows']} | {r['held_at_kill']} | {r['fetched_again']} | {r['lost']} |")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps({"rounds": results, "seed": seed}, indent=2) + "\n",
                       encoding="utf-8")


if __name__ == "__main__":
    main()

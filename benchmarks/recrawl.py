"""What a recrawl costs (issue 16): our `crawler recrawl` against wget's and Scrapy's revalidation.

    .venv/bin/python -m benchmarks.recrawl --pages 1000 --rounds 3 \\
        --ours-source /tmp/wt-recrawl --work /tmp/recrawl-work

The benchmark site (benchmarks/site.py) as static files behind nginx on
127.0.0.1: nginx sends ETag and Last-Modified and answers conditional GETs
with 304 by itself. Every file's mtime is set 10 days back when a round
starts, so Last-Modified says the pages are old. Per round, interleaved
(each step runs every tool before the next step starts):

1. `first`: a first crawl;
2. `unchanged`: a revisit with nothing changed;
3. `changed`: a revisit after rewriting the bytes of 10 % of the HTML pages
   (a paragraph added, mtime now: a new ETag and Last-Modified).

The tools: `ours` (`crawler crawl` then `crawler recrawl`), `wget`
(`wget -r -N`, timestamping into the same mirror: a GET with
If-Modified-Since), `wget-head` (the same with `--no-if-modified-since`: a
HEAD, then a GET when the file is newer or its size differs), `scrapy` (its HTTP cache
with RFC2616Policy, every request sent with `Cache-Control: max-age=0` so
that every cached page is revalidated) and `scrapy-heuristic` (the same
without that header: RFC2616Policy then takes a page as fresh for a tenth
of its Last-Modified age, as browsers do, and asks nothing). All at delay 0
with one request in flight per host (ours `--delay 0`, its default
`--per-host 1`; Scrapy CONCURRENT_REQUESTS_PER_DOMAIN=1; wget is sequential),
all reading robots.txt.

What nginx saw comes from a second access log of its own, one JSON object a
line with the method, status, bytes sent and the request's If-None-Match,
If-Modified-Since and Cache-Control. Per tool and step: wall seconds, the
requests by answer (200, 304, HEAD, other), the bytes sent, how many changed
pages were fetched again in full and how many unchanged ones were, and how
many pages the tool holds byte-identical to the site afterwards. Results go
to benchmarks/results/recrawl/<name>.json (every run) and <name>.md (the
tables).
"""
from __future__ import annotations

import json
import os
import random
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path
from statistics import median

if __package__ in (None, ""):   # run as a file: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import click

from benchmarks import peers as peer_registry
from benchmarks.checks import check_saved
from benchmarks.measure import run_measured
from benchmarks.nginx import BARRIER_PATH, Nginx, NginxError
from benchmarks.polite import scrapy_settings
from benchmarks.report import git_commit, machine, markdown_table
from benchmarks.site import GroundTruth, SiteSpec, ensure

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
STEPS = ("first", "unchanged", "changed")
TOOLS = ("ours", "wget", "wget-head", "scrapy", "scrapy-heuristic")
PAGE_AGE_S = 10 * 86400          # the site's Last-Modified age when a round starts
PACKAGES = ("controller", "getpage", "textfilter", "urlfilter", "urllist")
SCRAPY_HEADERS = {"Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
                  "Accept-Language": "en"}   # Scrapy's own defaults, which the setting replaces
HEADER_LOG = "headers.log"
HEADER_LOG_FORMAT = (
    "log_format headers escape=json '{\"method\":\"$request_method\",\"uri\":\"$request_uri\","
    "\"status\":$status,\"bytes\":$bytes_sent,\"inm\":\"$http_if_none_match\","
    "\"ims\":\"$http_if_modified_since\",\"cc\":\"$http_cache_control\",\"conn\":$connection}';\n"
    "    access_log WORKDIR/" + HEADER_LOG + " headers;\n")


# -- the server: nginx with a log of the request headers ----------------------------
@dataclass(frozen=True)
class Heard:
    """One request as nginx logged it in the header log."""
    method: str
    uri: str
    status: int
    bytes: int                 # everything sent: status line, headers, body
    if_none_match: str
    if_modified_since: str
    cache_control: str
    connection: int

    @property
    def conditional(self) -> bool:
        return bool(self.if_none_match or self.if_modified_since)

    @property
    def answer(self) -> str:
        """200, 304, HEAD or other: how the step's requests are counted."""
        if self.method == "HEAD":
            return "HEAD"
        return str(self.status) if self.status in (200, 304) else "other"


def parse_heard(line: str) -> Heard | None:
    try:
        r = json.loads(line)
        return Heard(r["method"], r["uri"], int(r["status"]), int(r["bytes"]), r["inm"], r["ims"],
                     r["cc"], int(r["conn"]))
    except (ValueError, KeyError, TypeError):
        return None


class HeaderNginx(Nginx):
    """nginx.Nginx with a second access log recording the validators each request carried."""

    def extra_http(self) -> str:
        return "    " + HEADER_LOG_FORMAT.replace("WORKDIR", str(self.workdir))

    def header_mark(self) -> int:
        """A position in the header log after every request answered so far (see Nginx.mark)."""
        self.mark()
        return (self.workdir / HEADER_LOG).stat().st_size

    def header_log_since(self, mark: int) -> str:
        with open(self.workdir / HEADER_LOG, encoding="utf-8") as f:
            f.seek(mark)
            return f.read()


def heard(log: str) -> list[Heard]:
    """The requests of a header log's text, barrier requests left out."""
    entries = [parse_heard(line) for line in log.splitlines()]
    return [e for e in entries if e is not None and e.uri != BARRIER_PATH]


# -- the site: a pristine copy, the served copy, and its changes ------------------------
@dataclass(frozen=True)
class ServedSite:
    truth: GroundTruth
    pristine: Path
    served: Path

    def restore(self, now: float) -> None:
        """The served copy as generated, every file's mtime PAGE_AGE_S before `now`."""
        shutil.rmtree(self.served, ignore_errors=True)
        shutil.copytree(self.pristine, self.served)
        old = now - PAGE_AGE_S
        for folder, _, names in os.walk(self.served):
            for name in names:
                os.utime(os.path.join(folder, name), (old, old))

    def change(self, fraction: float, seed: int) -> tuple[str, ...]:
        """Rewrite `fraction` of the HTML pages (a paragraph more, mtime now); their paths."""
        paths = self.truth.html_paths()
        chosen = sorted(random.Random(seed).sample(paths, max(1, round(fraction * len(paths)))))
        for path in chosen:
            file = self.served / path.lstrip("/")
            body = file.read_bytes()
            file.write_bytes(body.replace(b"<footer>", f"<p>Revised, round {seed}.</p>\n<footer>".encode(), 1))
        return tuple(chosen)


def site(pages: int, work: Path) -> ServedSite:
    pristine = work / f"recrawl-site-{pages}"
    return ServedSite(ensure(SiteSpec(pages=pages), pristine), pristine, work / "recrawl-served")


# -- the tools ---------------------------------------------------------------------
@dataclass(frozen=True)
class Tool:
    name: str
    argv: Callable[[str, str, Path], list[str]]   # (step, seed, state dir) -> command line
    out: Callable[[str, Path], Path]              # (step, state dir) -> where the step's pages are
    saved: Callable[[Path], list[peer_registry.SavedPage]]
    env: dict[str, str]
    ok_exit_codes: frozenset[int]


def ours(source: Path | None, crawler: Path) -> Tool:
    peer = peer_registry.ours(crawler=crawler, source=source, delay=0.0)

    def argv(step: str, seed: str, state: Path) -> list[str]:
        if step == "first":
            return peer.command(seed, state / "crawl")
        return [str(crawler), "recrawl", str(state / "crawl"), "--quiet"]
    return Tool("ours", argv, lambda step, state: state / "crawl", peer.saved, peer.env, peer.ok_exit_codes)


def wget(head: bool) -> Tool:
    peer = peer_registry.wget()
    # robots=on after the peer's robots=off: every tool reads robots.txt.
    extra = ("--timestamping", "-e", "robots=on", *(("--no-if-modified-since",) if head else ()))
    return Tool("wget-head" if head else "wget",
                lambda step, seed, state: peer.command(seed, state / "mirror", extra),
                lambda step, state: state / "mirror", peer.saved, peer.env, peer.ok_exit_codes)


def scrapy(revalidate: bool) -> Tool:
    name = "scrapy" if revalidate else "scrapy-heuristic"

    def argv(step: str, seed: str, state: Path) -> list[str]:
        return peer_registry.scrapy(name=name, settings=scrapy_cache_settings(state / "cache", revalidate)
                                    ).command(seed, state / step)
    return Tool(name, argv, lambda step, state: state / step, peer_registry.saved_from_index_tsv, {},
                frozenset({0}))


def scrapy_cache_settings(cache: Path, revalidate: bool) -> dict[str, object]:
    """Polite at delay 0 (polite.py's), with the HTTP cache under RFC2616Policy."""
    settings = {**scrapy_settings(0.0, 16), "HTTPCACHE_ENABLED": True, "HTTPCACHE_DIR": str(cache),
                "HTTPCACHE_POLICY": "scrapy.extensions.httpcache.RFC2616Policy"}
    if revalidate:
        settings["DEFAULT_REQUEST_HEADERS"] = json.dumps({**SCRAPY_HEADERS, "Cache-Control": "max-age=0"})
    return settings


def make_tool(name: str, source: Path | None, crawler: Path) -> Tool:
    if name == "ours":
        return ours(source, crawler)
    if name in ("wget", "wget-head"):
        return wget(name == "wget-head")
    if name in ("scrapy", "scrapy-heuristic"):
        return scrapy(name == "scrapy")
    raise ValueError(f"unknown tool {name!r}; choose from {', '.join(TOOLS)}")


def imported_from(crawler: Path, env: dict[str, str], cwd: Path) -> dict[str, str]:
    """Where the crawler's interpreter, in this environment and directory, imports each package from."""
    code = ("import importlib, sys\n"
            "for name in sys.argv[1:]: print(name, importlib.import_module(name).__path__[0])")
    done = subprocess.run([str(crawler.parent / "python"), "-c", code, *PACKAGES], env={**os.environ, **env},
                          cwd=cwd, capture_output=True, text=True, check=True)
    return dict(line.split(" ", 1) for line in done.stdout.splitlines())


# -- one step ------------------------------------------------------------------------
@dataclass(frozen=True)
class StepRun:
    tool: str
    round: int
    step: str                  # first | unchanged | changed
    wall_s: float              # the command's start to its exit, harness clock
    cpu_s: float               # user + system, GNU time
    exit_code: int
    exit_ok: bool
    timed_out: bool
    requests: int              # every request nginx logged during the step
    ok_200: int                # GETs answered 200: full bodies
    not_modified: int          # answered 304
    head: int                  # HEAD requests
    other: int                 # any other answer (the site's 404 links, ...)
    conditional: int           # requests with If-None-Match or If-Modified-Since
    max_age_0: int             # requests with Cache-Control: max-age=0
    connections: int           # TCP connections they came on
    bytes_sent: int            # every byte nginx sent, headers included
    site_pages: int            # HTML pages of the site
    changed: int               # pages rewritten before this step
    changed_refetched: int     # of them, fetched in full (GET 200)
    unchanged_full: int        # unchanged pages fetched in full
    unasked: int               # site pages not requested at all
    saved_current: int         # site pages the tool holds afterwards, byte-identical to the site now

    @property
    def correct(self) -> bool:
        """Every changed page fetched again, no unchanged page fetched in full on a revisit,
        and the tool's copy equal to the site."""
        fresh = self.saved_current == self.site_pages
        if self.step == "first":
            return fresh
        return fresh and self.changed_refetched == self.changed and self.unchanged_full == 0


def count(requests: list[Heard], truth: GroundTruth, changed: tuple[str, ...]) -> dict[str, int]:
    """The step's StepRun fields that come from the header log."""
    pages, changed_set = set(truth.html_paths()), set(changed)
    full = {h.uri for h in requests if h.answer == "200"}
    answers = [h.answer for h in requests]
    return {"requests": len(requests), "ok_200": answers.count("200"), "not_modified": answers.count("304"),
            "head": answers.count("HEAD"), "other": answers.count("other"),
            "conditional": sum(h.conditional for h in requests),
            "max_age_0": sum("max-age=0" in h.cache_control for h in requests),
            "connections": len({h.connection for h in requests}), "bytes_sent": sum(h.bytes for h in requests),
            "site_pages": len(pages), "changed": len(changed_set),
            "changed_refetched": len(full & changed_set), "unchanged_full": len((full & pages) - changed_set),
            "unasked": len(pages - {h.uri for h in requests})}


def run_step(tool: Tool, step: str, server: HeaderNginx, served: ServedSite, state: Path,
             round_no: int, changed: tuple[str, ...], timeout_s: float) -> StepRun:
    env = {**os.environ, **tool.env, "no_proxy": "*", "NO_PROXY": "*"}   # loopback only: never a proxy
    mark = server.header_mark()
    measured = run_measured(tool.argv(step, server.url + "index.html", state), state / "logs" / step,
                            timeout=timeout_s, env=env, cwd=state)
    server.header_mark()   # a barrier: every request of the step is in the log after it
    log = server.header_log_since(mark)
    (state / "logs" / step / HEADER_LOG).write_text(log, encoding="utf-8")
    out = tool.out(step, state)
    saved = check_saved(tool.saved(out) if out.exists() else [], served.truth, served.served)
    return StepRun(tool=tool.name, round=round_no, step=step, wall_s=measured.wall_s,
                   cpu_s=measured.usage.cpu_s, exit_code=measured.exit_code,
                   exit_ok=measured.exit_code in tool.ok_exit_codes, timed_out=measured.timed_out,
                   **count(heard(log), served.truth, changed), saved_current=saved.identical)


# -- a round, interleaved ---------------------------------------------------------------
@dataclass(frozen=True)
class Options:
    tools: tuple[str, ...] = TOOLS
    pages: int = 1000                # HTML pages of the site
    rounds: int = 3
    change: float = 0.10             # fraction of the HTML pages rewritten before the last step
    timeout_s: float = 600.0         # per step; the step is killed after it


def run_round(tools: list[Tool], server: HeaderNginx, served: ServedSite, options: Options, work: Path,
              round_no: int, progress=lambda line: None) -> tuple[list[StepRun], tuple[str, ...]]:
    """Every step of every tool from a fresh state; the site changes before the last step.
    The records, and the pages changed."""
    served.restore(time.time())
    states = {tool.name: _fresh(work / "runs" / f"recrawl-{tool.name}-{round_no}") for tool in tools}
    records, changed = [], ()
    for step in STEPS:
        if step == "changed":
            changed = served.change(options.change, round_no)
        for tool in tools:
            record = run_step(tool, step, server, served, states[tool.name], round_no, changed, options.timeout_s)
            progress(_line(record, options.rounds))
            records.append(record)
    return records, changed


def measure(options: Options, work: Path, source: Path | None, crawler: Path,
            progress=lambda line: None) -> tuple[list[StepRun], dict[int, tuple[str, ...]]]:
    """Every round; the records, and the pages changed in each round."""
    served = site(options.pages, work)
    tools = [make_tool(name, source, crawler) for name in options.tools]
    records, changes = [], {}
    served.served.mkdir(parents=True, exist_ok=True)   # nginx reads its owner as it starts
    with HeaderNginx(served.served) as server:
        for round_no in range(1, options.rounds + 1):
            runs, changes[round_no] = run_round(tools, server, served, options, work, round_no, progress)
            records += runs
    return records, changes


def _fresh(path: Path) -> Path:
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    return path


# -- tables ---------------------------------------------------------------------------
COLUMNS = ("tool", "step", "wall s", "requests", "200", "304", "HEAD", "other", "conditional",
           "KB sent", "changed pages fetched again", "unchanged pages fetched in full", "copy = site")
RATIO_COLUMNS = ("step", "peer", "wall ours/peer", "requests ours/peer", "bytes ours/peer")


def table(records: list[StepRun]) -> str:
    """One row per tool and step: medians over rounds; the checks as their worst round."""
    rows = []
    for (tool, step), runs in _groups(records).items():
        mid = lambda field: median(getattr(r, field) for r in runs)   # noqa: E731
        rows.append((tool, step, f"{mid('wall_s'):.2f}", *(f"{mid(f):.0f}" for f in (
            "requests", "ok_200", "not_modified", "head", "other", "conditional")),
            f"{mid('bytes_sent') / 1000:,.0f}", *_checks(runs)))
    return markdown_table(COLUMNS, rows, left=2)


def _checks(runs: list[StepRun]) -> tuple[str, str, str]:
    pages = runs[0].site_pages
    copy = f"{min(r.saved_current for r in runs)}/{pages}"
    if runs[0].step == "first":
        return "—", "—", copy
    changed = f"{min(r.changed_refetched for r in runs)}/{runs[0].changed}" if runs[0].changed else "—"
    unchanged = max(r.unchanged_full for r in runs)
    return changed, f"{unchanged}/{pages - runs[0].changed}", copy


def ratio_table(records: list[StepRun]) -> str:
    """ours / peer per step: the median over rounds of the same round's ratio."""
    by_key = {(r.tool, r.round, r.step): r for r in records}
    peers = sorted({r.tool for r in records} - {"ours"}, key=TOOLS.index)
    rows = []
    for step in STEPS:
        for peer in peers:
            pairs = [(by_key[("ours", n, step)], by_key[(peer, n, step)]) for (tool, n, s) in by_key
                     if tool == peer and s == step and ("ours", n, step) in by_key]
            rows.append((step, peer, *(_ratio(pairs, field) for field in ("wall_s", "requests", "bytes_sent"))))
    return markdown_table(RATIO_COLUMNS, rows, left=2)


def _ratio(pairs: list[tuple[StepRun, StepRun]], field: str) -> str:
    ratios = [getattr(a, field) / getattr(b, field) for a, b in pairs if getattr(b, field)]
    return f"{median(ratios):.2f}" if ratios else "—"


def _groups(records: list[StepRun]) -> dict[tuple[str, str], list[StepRun]]:
    groups: dict[tuple[str, str], list[StepRun]] = {}
    for record in sorted(records, key=lambda r: (TOOLS.index(r.tool), STEPS.index(r.step))):
        groups.setdefault((record.tool, record.step), []).append(record)
    return groups


SETUP = ("- politeness: delay 0, one request in flight per host (ours `--delay 0 --per-host 1`, Scrapy "
         "CONCURRENT_REQUESTS_PER_DOMAIN=1, wget sequential); all read robots.txt",
         "- ours: `crawler crawl SEED --delay 0 --max-depth 0 --max-pages 0`, then `crawler recrawl DIR`; "
         "wget: `wget -r -N -e robots=on` into one mirror; wget-head: the same with `--no-if-modified-since`; "
         "scrapy: HTTPCACHE_POLICY RFC2616Policy, requests with `Cache-Control: max-age=0`; "
         "scrapy-heuristic: the same without that header")


def section(result: dict) -> str:
    """The Markdown section of one stored result, for RESULTS.md."""
    m, o = result["machine"], result["options"]
    records = [StepRun(**r) for r in result["runs"]]
    head = [f"## What a recrawl costs: ours, wget -N and Scrapy's HTTP cache (issue 16), {m['date']}", "",
            f"Written by `.venv/bin/python -m benchmarks.recrawl {result['argv']}` "
            f"(raw numbers: `benchmarks/results/recrawl/{result['name']}.json`).", "",
            _ours_line(result),
            f"- site: {o['pages']} HTML pages of ~16 KB (benchmarks/site.py) as static files behind nginx, "
            f"Last-Modified {PAGE_AGE_S // 86400} days old at each round's start; before `changed`, "
            f"{o['change']:.0%} of the pages rewritten (a paragraph more, mtime now); {o['rounds']} rounds, "
            "every step of every tool before the next step",
            *SETUP,
            f"- machine: {m['cpu']}, {m['cores']} cores, Python {m['python']}; {m['nginx']}; {m['wget']}; "
            f"Scrapy {m.get('scrapy') or '—'}; load average at start {' '.join(m.get('load_average', []))}",
            f"- wall time of the whole benchmark: {result['elapsed_s']:.0f} s", "",
            "Medians over rounds; the last three columns are the worst round. Requests and bytes are all "
            "nginx saw, robots.txt, the .pdf/.png files and the 404 links included.", ""]
    return "\n".join(head + [table(records), "", ratio_table(records), ""])


def _ours_line(result: dict) -> str:
    source = result["ours_source"]
    dirty = " (uncommitted changes)" if source.get("dirty") else ""
    tree = Path(result["ours_imports"].get("controller", "?")).parent
    return f"- ours: commit `{source.get('commit', '?')}`{dirty}, packages imported from `{tree}`"


def store(result: dict, results_dir: Path) -> Path:
    """Write the JSON (every run) and the Markdown section to results_dir/recrawl/."""
    folder = results_dir / "recrawl"
    folder.mkdir(parents=True, exist_ok=True)
    raw = folder / f"{result['name']}.json"
    raw.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    (folder / f"{result['name']}.md").write_text(section(result), encoding="utf-8")
    return raw


def _line(r: StepRun, rounds: int) -> str:
    return (f"round {r.round}/{rounds} {r.tool:16} {r.step:9}: {r.wall_s:.2f} s, {r.requests} requests "
            f"(200: {r.ok_200}, 304: {r.not_modified}, HEAD: {r.head}, other: {r.other}), "
            f"{r.bytes_sent / 1000:,.0f} KB; changed fetched {r.changed_refetched}/{r.changed}, "
            f"unchanged in full {r.unchanged_full}, copy = site {r.saved_current}/{r.site_pages}"
            + ("" if r.exit_ok and not r.timed_out else f" — exit {r.exit_code}"))


# -- the command line --------------------------------------------------------------------
@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--pages", type=click.IntRange(min=10), default=1000, show_default=True,
              help="HTML pages of the generated site.")
@click.option("--rounds", type=click.IntRange(min=1), default=3, show_default=True, help="Interleaved rounds.")
@click.option("--change", type=click.FloatRange(0, 1, min_open=True), default=0.10, show_default=True,
              help="Fraction of the HTML pages rewritten before the last step.")
@click.option("--tools", default=",".join(TOOLS), show_default=True,
              help="Comma-separated tools, run in this order in each step.")
@click.option("--ours-source", type=click.Path(exists=True, file_okay=False, path_type=Path), default=None,
              help="Run our crawler's packages from this source tree (PYTHONPATH), e.g. a git worktree.")
@click.option("--name", default=None, help="File name of the result (without .json / .md).")
@click.option("--save/--no-save", default=True, show_default=True,
              help="Store the result under --results-dir/recrawl/.")
@click.option("--work", type=click.Path(path_type=Path), default=BENCH_DIR / "work", show_default=True,
              help="Where the site and the tools' state go; the tools run with their cwd there.")
@click.option("--results-dir", type=click.Path(path_type=Path), default=BENCH_DIR / "results", show_default=True)
@click.option("--timeout", type=click.FloatRange(min=1), default=600.0, show_default=True,
              help="Seconds allowed per step.")
def main(pages, rounds, change, tools, ours_source, name, save, work, results_dir, timeout):
    """What a recrawl costs: ours, wget -N and Scrapy's HTTP cache, first crawl and two revisits.

    Example: .venv/bin/python -m benchmarks.recrawl --pages 1000 --rounds 3 --ours-source /tmp/wt-recrawl
    """
    options = Options(tools=_tool_names(tools), pages=pages, rounds=rounds, change=change, timeout_s=timeout)
    work = work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    crawler, source = REPO / ".venv" / "bin" / "crawler", ours_source.resolve() if ours_source else None
    imports = _check_imports(crawler, source, work) if "ours" in options.tools else {}
    scrapy_version = peer_registry.ensure_scrapy() if any(t.startswith("scrapy") for t in options.tools) else ""
    started, before, clock = datetime.now(timezone.utc), machine(), time.perf_counter()
    try:
        records, changes = measure(options, work, source, crawler, lambda line: click.echo(line, err=True))
    except NginxError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(table(records) + "\n\n" + ratio_table(records))
    result = {"kind": "recrawl", "argv": shlex.join(sys.argv[1:]),
              "name": name or f"recrawl-{pages}-{started.strftime('%Y%m%d-%H%M%S')}",
              "started": started.isoformat(timespec="seconds"), "elapsed_s": time.perf_counter() - clock,
              "machine": {**before, "scrapy": scrapy_version}, "ours_source": git_commit(source or REPO),
              "ours_imports": imports, "options": {**asdict(options), "tools": list(options.tools)},
              "changed_pages": {str(n): list(paths) for n, paths in changes.items()},
              "runs": [asdict(r) for r in records]}
    if save:
        click.echo(f"stored {store(result, results_dir)}", err=True)
    if not all(r.exit_ok and not r.timed_out for r in records):
        click.echo("some steps failed (see the exit code in the JSON and --work/runs/*/logs)", err=True)
        sys.exit(1)


def _check_imports(crawler: Path, source: Path | None, work: Path) -> dict[str, str]:
    """Where ours imports its packages from; refused unless all come from the tree asked for."""
    env = {"PYTHONPATH": str(source)} if source else {}
    imports = imported_from(crawler, env, work)
    tree = source or REPO
    wrong = {name: path for name, path in imports.items() if Path(path).parent != tree}
    if wrong or set(imports) != set(PACKAGES):
        raise click.ClickException(f"our crawler would import {wrong or imports} instead of from {tree}")
    return imports


def _tool_names(text: str) -> tuple[str, ...]:
    """The --tools list, each name one of TOOLS (click's Choice says which are)."""
    names = [t.strip() for t in text.split(",") if t.strip()] or [""]
    choice = click.Choice(TOOLS)
    try:
        return tuple(choice.convert(name, None, None) for name in names)
    except click.BadParameter as exc:
        raise click.BadParameter(exc.message, param_hint="--tools") from None


if __name__ == "__main__":
    main()

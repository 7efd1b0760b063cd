"""The crawlers under comparison: how to run each one and where it saved what.

A `Peer` is a command line (seed URLs, output directory, extra arguments →
argv) and a reader of its output (→ the pages it saved, as `SavedPage`s,
each with the host it came from), so the harness measures and checks every
peer the same way:

- `ours`: `crawler crawl SEED... --out DIR --delay D --max-depth 0
  --max-pages 0 --quiet` plus extra arguments (D = 0 unless given); saved
  pages from DIR/index.csv (rows with status 200 and an html_path), with
  their levels. It fetches robots.txt and skips the .pdf/.png links by
  extension (never requested).
- `scrapy`: benchmarks/scrapy_spider.py in its own virtual environment
  (benchmarks/.venv-scrapy, made by `ensure_scrapy`), with `-s NAME=VALUE`
  for any settings given; saved pages from DIR/index.tsv. With the spider's
  own settings it fetches and saves the .pdf/.png files, does not read
  robots.txt, and drops 404 bodies.
- `wget`: `wget --recursive --level=inf -e robots=off --no-verbose
  --no-host-directories --no-parent -P DIR SEED`; saved pages are DIR's files
  by path. It fetches and saves the .pdf/.png files; exit status 8 means
  "some server error response" (the site's 404 links) and is expected.
"""
from __future__ import annotations

import compileall
import csv
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping
from urllib.parse import unquote, urlsplit

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
SCRAPY_VENV = BENCH_DIR / ".venv-scrapy"
PACKAGES = ("controller", "getpage", "textfilter", "urlfilter", "urllist")   # our crawler's code
SCRAPY_REQUIREMENT = "scrapy>=2.13"   # the spider uses the async start() of 2.13
WGET = "wget"


@dataclass(frozen=True)
class SavedPage:
    path: str             # URL path on the site, e.g. /p/3/3456.html
    file: Path            # where the peer saved the body
    level: int | None     # the level the peer recorded, None when it records none


HostPage = tuple[str, SavedPage]   # (the host the page came from, '' when unknown; the page)


@dataclass(frozen=True)
class Peer:
    name: str
    argv: Callable[[tuple[str, ...], Path, tuple[str, ...]], list[str]]   # (seeds, out, extra) -> argv
    saved_by_host: Callable[[Path], list[HostPage]]                         # out -> saved pages
    ok_exit_codes: frozenset[int] = frozenset({0})
    records_levels: bool = False   # whether its levels are breadth-first levels to check
    env: dict[str, str] = field(default_factory=dict)             # added to the environment

    def command(self, seed: str, out: Path, extra: tuple[str, ...] = ()) -> list[str]:
        """The command line of a crawl from one seed."""
        return self.argv((seed,), out, extra)

    def saved(self, out: Path) -> list[SavedPage]:
        return pages_of(self.saved_by_host(out))


# -- ours ----------------------------------------------------------------------
def ours(crawler: Path = REPO / ".venv" / "bin" / "crawler", source: Path | None = None,
         delay: float = 0.0) -> Peer:
    """Our crawler; `source` runs the packages of another source tree (e.g. an older commit);
    `delay` is its --delay, seconds between two requests to one host."""
    compile_packages(source or REPO)
    def argv(seeds: tuple[str, ...], out: Path, extra: tuple[str, ...]) -> list[str]:
        return [str(crawler), "crawl", *seeds, "--out", str(out), "--delay", f"{delay:g}",
                "--max-depth", "0", "--max-pages", "0", "--quiet", *extra]
    env = {"PYTHONPATH": str(source)} if source else {}
    return Peer("ours", argv, index_csv_by_host, records_levels=True, env=env)


def compile_packages(root: Path) -> None:
    """Write our packages' bytecode, as installing a package does (Scrapy's was
    written by pip): where PYTHONDONTWRITEBYTECODE is set, every run would
    compile them again, ~0.2 s of each run's start."""
    for package in PACKAGES:
        compileall.compile_dir(root / package, quiet=1)


def index_csv_by_host(out: Path) -> list[HostPage]:
    pages = []
    with open(Path(out) / "index.csv", newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            if row["status"] == "200" and row["html_path"]:
                pages.append(_host_page(row["url"], Path(out) / row["html_path"], int(row["level"])))
    return pages


# -- scrapy ----------------------------------------------------------------------
def scrapy(venv: Path = SCRAPY_VENV, name: str = "scrapy", settings: Mapping[str, object] | None = None) -> Peer:
    """The Scrapy spider; `settings` override its own (`-s NAME=VALUE`, the command line's priority)."""
    overrides = tuple(arg for key, value in (settings or {}).items() for arg in ("-s", f"{key}={value}"))

    def argv(seeds: tuple[str, ...], out: Path, extra: tuple[str, ...]) -> list[str]:
        return [str(venv / "bin" / "scrapy"), "runspider", str(BENCH_DIR / "scrapy_spider.py"),
                "-a", f"start_url={' '.join(seeds)}", "-a", f"out={out}", *overrides, *extra]
    return Peer(name, argv, index_tsv_by_host)


def index_tsv_by_host(out: Path) -> list[HostPage]:
    pages = []
    with open(Path(out) / "index.tsv", encoding="utf-8") as f:
        for line in f:
            url, status, depth, name = line.rstrip("\n").split("\t")
            if status == "200":
                pages.append(_host_page(url, Path(out) / name, int(depth)))
    return pages


def saved_from_index_tsv(out: Path) -> list[SavedPage]:
    return pages_of(index_tsv_by_host(out))


def ensure_scrapy(venv: Path = SCRAPY_VENV, python: str = sys.executable) -> str:
    """Create the Scrapy environment when missing; returns Scrapy's version.

    `python3 -m venv` + `pip install scrapy`: Scrapy is the benchmark's tool,
    never a dependency of the project.
    """
    scrapy_bin = venv / "bin" / "scrapy"
    if not scrapy_bin.exists():
        subprocess.run([python, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(venv / "bin" / "pip"), "install", "-q", SCRAPY_REQUIREMENT], check=True)
    return scrapy_version(venv)


def scrapy_version(venv: Path = SCRAPY_VENV) -> str:
    try:
        done = subprocess.run([str(venv / "bin" / "scrapy"), "version"], capture_output=True,
                              text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stdout.strip().removeprefix("Scrapy ").strip()


# -- wget ------------------------------------------------------------------------
def wget() -> Peer:
    def argv(seeds: tuple[str, ...], out: Path, extra: tuple[str, ...]) -> list[str]:
        return [WGET, "--recursive", "--level=inf", "-e", "robots=off", "--no-verbose",
                "--no-host-directories", "--no-parent", "-P", str(out), *extra, *seeds]
    # The mirror has no host directories, so the host of its pages is unknown.
    return Peer("wget", argv, lambda out: [("", page) for page in saved_from_mirror(out)],
                ok_exit_codes=frozenset({0, 8}))


def saved_from_mirror(out: Path) -> list[SavedPage]:
    out = Path(out)
    pages = []
    for folder, _, names in os.walk(out):
        for name in names:
            file = Path(folder) / name
            pages.append(SavedPage("/" + file.relative_to(out).as_posix(), file, None))
    return pages


def make_peer(name: str, *, ours_source: Path | None = None) -> Peer:
    if name == "ours":
        return ours(source=ours_source)
    if name == "scrapy":
        return scrapy()
    if name == "wget":
        return wget()
    raise ValueError(f"unknown peer {name!r}; choose from ours, scrapy, wget")


PEER_NAMES = ("ours", "scrapy", "wget")


def pages_of(saved: list[HostPage]) -> list[SavedPage]:
    return [page for _, page in saved]


def _host_page(url: str, file: Path, level: int | None) -> HostPage:
    parts = urlsplit(url)
    return parts.hostname or "", SavedPage(unquote(parts.path), file, level)

"""The crawlers under comparison: how to run each one and where it saved what.

A `Peer` is a command line (seed URL, output directory, extra arguments →
argv) and a reader of its output (→ the pages it saved, as `SavedPage`s),
so the harness measures and checks every peer the same way:

- `ours`: `crawler crawl SEED --out DIR --delay 0 --max-depth 0 --max-pages 0
  --quiet` plus extra arguments; saved pages from DIR/index.csv (rows with
  status 200 and an html_path), with their levels. It fetches robots.txt
  and skips the .pdf/.png links by extension (never requested).
- `scrapy`: benchmarks/scrapy_spider.py in its own virtual environment
  (benchmarks/.venv-scrapy, made by `ensure_scrapy`); saved pages from
  DIR/index.tsv. It fetches and saves the .pdf/.png files, does not read
  robots.txt, and drops 404 bodies.
- `wget`: `wget --recursive --level=inf -e robots=off --no-verbose
  --no-host-directories --no-parent -P DIR SEED`; saved pages are DIR's files
  by path. It fetches and saves the .pdf/.png files; exit status 8 means
  "some server error response" (the site's 404 links) and is expected.
"""
from __future__ import annotations

import csv
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable
from urllib.parse import unquote, urlsplit

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
SCRAPY_VENV = BENCH_DIR / ".venv-scrapy"
SCRAPY_REQUIREMENT = "scrapy>=2.13"   # the spider uses the async start() of 2.13
WGET = "wget"


@dataclass(frozen=True)
class SavedPage:
    path: str             # URL path on the site, e.g. /p/3/3456.html
    file: Path            # where the peer saved the body
    level: int | None     # the level the peer recorded, None when it records none


@dataclass(frozen=True)
class Peer:
    name: str
    command: Callable[[str, Path, tuple[str, ...]], list[str]]   # (seed, out, extra) -> argv
    saved: Callable[[Path], list[SavedPage]]                      # out -> saved pages
    ok_exit_codes: frozenset[int] = frozenset({0})
    records_levels: bool = False   # whether its levels are breadth-first levels to check
    env: dict[str, str] = field(default_factory=dict)             # added to the environment


# -- ours ----------------------------------------------------------------------
def ours(crawler: Path = REPO / ".venv" / "bin" / "crawler", source: Path | None = None) -> Peer:
    """Our crawler; `source` runs the packages of another source tree (e.g. an older commit)."""
    def command(seed: str, out: Path, extra: tuple[str, ...]) -> list[str]:
        return [str(crawler), "crawl", seed, "--out", str(out), "--delay", "0",
                "--max-depth", "0", "--max-pages", "0", "--quiet", *extra]
    env = {"PYTHONPATH": str(source)} if source else {}
    return Peer("ours", command, saved_from_index_csv, records_levels=True, env=env)


def saved_from_index_csv(out: Path) -> list[SavedPage]:
    pages = []
    with open(Path(out) / "index.csv", newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            if row["status"] == "200" and row["html_path"]:
                pages.append(SavedPage(_path(row["url"]), Path(out) / row["html_path"], int(row["level"])))
    return pages


# -- scrapy ----------------------------------------------------------------------
def scrapy(venv: Path = SCRAPY_VENV) -> Peer:
    def command(seed: str, out: Path, extra: tuple[str, ...]) -> list[str]:
        return [str(venv / "bin" / "scrapy"), "runspider", str(BENCH_DIR / "scrapy_spider.py"),
                "-a", f"start_url={seed}", "-a", f"out={out}", *extra]
    return Peer("scrapy", command, saved_from_index_tsv)


def saved_from_index_tsv(out: Path) -> list[SavedPage]:
    pages = []
    with open(Path(out) / "index.tsv", encoding="utf-8") as f:
        for line in f:
            url, status, depth, name = line.rstrip("\n").split("\t")
            if status == "200":
                pages.append(SavedPage(_path(url), Path(out) / name, int(depth)))
    return pages


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
    def command(seed: str, out: Path, extra: tuple[str, ...]) -> list[str]:
        return [WGET, "--recursive", "--level=inf", "-e", "robots=off", "--no-verbose",
                "--no-host-directories", "--no-parent", "-P", str(out), *extra, seed]
    return Peer("wget", command, saved_from_mirror, ok_exit_codes=frozenset({0, 8}))


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


def _path(url: str) -> str:
    return unquote(urlsplit(url).path)

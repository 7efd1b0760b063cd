"""The polite benchmark's sites: many small generated sites, one per loopback address.

`generate(SiteSetSpec(sites=40), directory)` writes `directory/<address>/`
for the addresses 127.0.0.2, 127.0.0.3, ... (one per site) and returns a
`SiteSet`: each site's address, branching and ground truth (a `GroundTruth`
of benchmarks/site.py, so the same checks count its requests and pages).

Each site is a tree of HTML pages built with site.py's pieces: `/index.html`
is its root (level 0, a seed), every page of level k+1 has a tree parent on
level k, and besides home, parent and children a page links to a few
pseudo-random pages of levels <= k+1, so a page's BFS level from the root is
its tree level (the ground truth is still computed by a breadth-first walk
over the links). Sites never link to each other. No assets and no broken
links: every request but robots.txt is for a page, so the peers do the same
work. robots.txt disallows only a path nothing links to, and has no
Crawl-delay (the delay is the peer's setting alone).

Shapes (`SiteSetSpec.shape`):
- `own`: each site a tree of its own branching, 2..6 (pseudo-random), its
  levels 1, b, b², ... with the last one holding the rest; sizes Zipf-like,
  `10 + round(50 / rank)` pages (60, 35, 27, 22, ... 10 at the tail), the
  ranks shuffled over the addresses;
- `ternary`: the same sizes, every site branching 3;
- `barrier`: two sites of 48 pages, one wide at level 2 (levels 1, 2, 45),
  the other at level 3 (1, 1, 2, 44): a crawler that finishes level k on
  every host before level k+1 on any crawls them one after the other.

Deterministic: the same spec gives the same bytes.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

from benchmarks.site import (ROBOTS_DISALLOW, GroundTruth, Layout, SiteSpec, _paragraph_pool, _walk,
                             link_targets, page_path, render_page)

SHAPES = ("own", "ternary", "barrier")
BARRIER_LEVELS = ((1, 2, 45), (1, 1, 2, 44))
FIRST_ADDRESS = 2   # 127.0.0.1 is left to everything else on the machine


@dataclass(frozen=True)
class SiteSetSpec:
    sites: int = 40               # sites, one per address (the barrier shape has 2)
    shape: str = "own"            # own | ternary | barrier
    min_pages: int = 10           # the Zipf-like sizes: min_pages + round((max_pages - min_pages) / rank)
    max_pages: int = 60
    page_bytes: int = 3000        # target size of one HTML page, bytes
    links_per_page: int = 8       # in-site <a href> per page (more when a page has many children)
    seed: int = 12                # branchings, size ranks, links and texts

    def __post_init__(self):
        if self.shape not in SHAPES:
            raise ValueError(f"shape must be one of {', '.join(SHAPES)}, got {self.shape!r}")
        if not 1 <= self.sites <= 250 or not 1 <= self.min_pages <= self.max_pages:
            raise ValueError(f"invalid site set: {self}")

    @property
    def site_count(self) -> int:
        return len(BARRIER_LEVELS) if self.shape == "barrier" else self.sites


@dataclass(frozen=True)
class Site:
    address: str                # 127.0.0.x, where nginx serves it
    branching: int | None       # children per page of its tree; None for the barrier shapes
    truth: GroundTruth

    @property
    def pages(self) -> int:
        return self.truth.total


@dataclass(frozen=True)
class SiteSet:
    spec: SiteSetSpec
    directory: Path             # holds one folder per address
    sites: tuple[Site, ...]

    @property
    def largest(self) -> int:
        """Pages of the largest site: the one that bounds any polite crawl's time."""
        return max(site.pages for site in self.sites)

    @property
    def pages(self) -> int:
        return sum(site.pages for site in self.sites)

    def root(self, site: Site) -> Path:
        return self.directory / site.address

    def seed(self, site: Site) -> str:
        """The path of the site's page a crawl starts from."""
        return "/index.html"


def address(k: int) -> str:
    """The k-th site's loopback address, k = 0, 1, ...: 127.0.0.2, 127.0.0.3, ..."""
    return f"127.0.0.{FIRST_ADDRESS + k}"


def zipf_sizes(spec: SiteSetSpec, rng: random.Random) -> list[int]:
    """Pages per site in address order: the ranks' sizes, shuffled."""
    sizes = [spec.min_pages + round((spec.max_pages - spec.min_pages) / rank)
             for rank in range(1, spec.sites + 1)]
    rng.shuffle(sizes)
    return sizes


def tree_levels(pages: int, branching: int) -> tuple[int, ...]:
    """Level sizes 1, b, b², ... of a `pages`-page tree; the last level holds the rest."""
    levels, width = [], 1
    while sum(levels) + width < pages:
        levels.append(width)
        width *= branching
    return tuple(levels + [pages - sum(levels)])


def shapes(spec: SiteSetSpec) -> list[tuple[int | None, tuple[int, ...]]]:
    """(branching, level sizes) of each site, in address order."""
    if spec.shape == "barrier":
        return [(None, levels) for levels in BARRIER_LEVELS]
    rng = random.Random(spec.seed)
    sizes = zipf_sizes(spec, rng)
    branchings = [3 if spec.shape == "ternary" else 2 + int(rng.random() * 5) for _ in sizes]
    return [(b, tree_levels(n, b)) for b, n in zip(branchings, sizes)]


def generate(spec: SiteSetSpec, directory: Path) -> SiteSet:
    """Write every site into `directory` (existing files are replaced)."""
    directory = Path(directory)
    sites = tuple(Site(address(k), branching, generate_site(spec, levels, k, directory / address(k)))
                  for k, (branching, levels) in enumerate(shapes(spec)))
    return SiteSet(spec, directory, sites)


def generate_site(spec: SiteSetSpec, levels: tuple[int, ...], k: int, root: Path) -> GroundTruth:
    """One site, the k-th, with these level sizes: its files under `root`, and its ground truth."""
    site_spec = SiteSpec(pages=sum(levels), page_bytes=spec.page_bytes, links_per_page=spec.links_per_page,
                         depth=len(levels) - 1, seed=spec.seed * 1000 + k)
    rng = random.Random(site_spec.seed)
    targets = link_targets(site_spec, Layout(levels), rng)
    paragraphs = _paragraph_pool(rng)
    html_bytes = 0
    for page, links in enumerate(targets):
        body = render_page(page, links, [], paragraphs, spec.page_bytes, rng)
        html_bytes += len(body)
        _write(root / page_path(page)[1:], body)
    _write(root / "robots.txt", f"User-agent: *\nDisallow: {ROBOTS_DISALLOW}\n".encode())
    return _walk(site_spec, targets, (), (), html_bytes)


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)

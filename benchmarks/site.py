"""The benchmark site: a deterministic static website and its ground truth.

`generate(SiteSpec(pages=5000), directory)` writes a site that nginx serves as
plain files, and `ground_truth.json` beside it:

- HTML pages of about `page_bytes` bytes: `/index.html` (level 0) and
  `/p/<id // 1000>/<id>.html`, over levels 0..`depth`. Level sizes grow
  geometrically; every page of level k+1 has a tree parent on level k, so
  every page is reachable.
- About `links_per_page` in-site `<a href>` per page: home, the tree parent,
  the tree children, and pseudo-random pages on levels <= k+1, in four forms
  (`/p/3/3456.html`, `../3/3456.html` or `3456.html`, `./3456.html`, and
  `/p/3/3456.html#s2`). Since no link of a level-k page points deeper than
  k+1, a page's shortest link distance from `/index.html` is its tree level;
  the ground truth is still computed by a breadth-first walk over the links.
- One page in `RARE_EVERY` links to a PDF (`/files/doc-<n>.pdf`), one to a
  PNG (`/img/pic-<n>.png`) and one to a page that does not exist
  (`/p/missing-<id>.html`, a 404). Nothing links to `/private/`, the one path
  robots.txt disallows, so obeying robots.txt changes nothing.
- No URL aliases another (no links to `/`, no query strings), so "every page
  fetched exactly once" is well defined.

Deterministic: the same spec gives the same bytes on any Python (only
`random.Random(seed).random()`, whose sequence Python guarantees, is used).
"""
from __future__ import annotations

import json
import random
import struct
import zlib
from collections import deque
from dataclasses import asdict, dataclass
from pathlib import Path

GENERATOR_VERSION = 1   # bump when the bytes of a generated site change
RARE_EVERY = 125        # one page in this many links to a PDF, a PNG, a 404
ROBOTS_DISALLOW = "/private/"
TRUTH_FILE = "ground_truth.json"

WORDS = (
    "crawler breadth first level queue frontier page link robots delay text "
    "filter seen hash server request response header status content anchor "
    "index archive section article report network socket byte parse tree "
    "node edge graph depth width shortest distance visit fetch store save"
).split()


@dataclass(frozen=True)
class SiteSpec:
    pages: int = 5000            # HTML pages, index.html included
    page_bytes: int = 16_000     # target size of one HTML page, in bytes
    links_per_page: int = 27     # in-site <a href> per page (more when a page has many children)
    depth: int = 7               # deepest level below index.html (fewer when pages <= depth)
    seed: int = 5                # the pseudo-random links and texts

    def __post_init__(self):
        if self.pages < 1 or self.page_bytes < 1 or self.links_per_page < 1 or self.depth < 0:
            raise ValueError(f"invalid site spec: {self}")


@dataclass(frozen=True)
class Layout:
    """Which page sits on which level: page ids are in level order."""
    level_sizes: tuple[int, ...]

    @property
    def pages(self) -> int:
        return sum(self.level_sizes)

    def level_start(self, level: int) -> int:
        return sum(self.level_sizes[:level])

    def level_of(self, page: int) -> int:
        start = 0
        for level, size in enumerate(self.level_sizes):
            if page < start + size:
                return level
            start += size
        raise IndexError(page)

    def children(self, page: int) -> range:
        """Pages of the next level whose tree parent is `page` (a contiguous run)."""
        level = self.level_of(page)
        if level + 1 >= len(self.level_sizes):
            return range(0)
        here, below = self.level_sizes[level], self.level_sizes[level + 1]
        q, first = page - self.level_start(level), self.level_start(level + 1)
        return range(first + _ceil_div(q * below, here), first + _ceil_div((q + 1) * below, here))

    def parent(self, page: int) -> int | None:
        level = self.level_of(page)
        if level == 0:
            return None
        above, here = self.level_sizes[level - 1], self.level_sizes[level]
        p = page - self.level_start(level)
        return self.level_start(level - 1) + p * above // here


@dataclass(frozen=True)
class GroundTruth:
    spec: SiteSpec
    levels: tuple[int, ...]                   # HTML pages per BFS level from /index.html
    paths_by_level: tuple[tuple[str, ...], ...]
    assets: tuple[str, ...]                   # linked non-HTML files (.pdf, .png)
    broken: tuple[str, ...]                   # linked paths that do not exist (404)
    html_bytes: int                           # total size of the HTML pages

    @property
    def total(self) -> int:
        return sum(self.levels)

    def html_paths(self) -> list[str]:
        return [path for level in self.paths_by_level for path in level]

    def level_of_path(self) -> dict[str, int]:
        return {path: level for level, paths in enumerate(self.paths_by_level) for path in paths}


def layout(spec: SiteSpec) -> Layout:
    """Level sizes 1, r, r², ... (rounded) summing to spec.pages over depth+1 levels."""
    depth = min(spec.depth, spec.pages - 1)
    if depth == 0:
        return Layout((1,))
    low, high = 1.0, float(spec.pages)
    for _ in range(100):   # bisection for the ratio r
        r = (low + high) / 2
        low, high = (r, high) if sum(r ** k for k in range(depth + 1)) < spec.pages else (low, r)
    sizes = [max(1, round(high ** k)) for k in range(depth)]
    sizes[1:] = [max(s, prev) for prev, s in zip(sizes, sizes[1:])]
    last = spec.pages - sum(sizes)
    if last < sizes[-1]:   # rounding left too little for a growing last level: rebalance
        sizes = _spread(spec.pages, depth)
    else:
        sizes.append(last)
    return Layout(tuple(sizes))


def page_path(page: int) -> str:
    return "/index.html" if page == 0 else f"/p/{page // 1000}/{page}.html"


def asset_paths(spec: SiteSpec) -> tuple[list[str], list[str], list[str]]:
    """(pdfs, pngs, missing pages): one of each per RARE_EVERY pages, at least one."""
    n = max(1, spec.pages // RARE_EVERY)
    return ([f"/files/doc-{k}.pdf" for k in range(n)], [f"/img/pic-{k}.png" for k in range(n)],
            [f"/p/missing-{k}.html" for k in range(n)])


def link_targets(spec: SiteSpec, shape: Layout, rng: random.Random) -> list[list[int]]:
    """For each page, the ids of the pages it links to, in document order."""
    targets = []
    for page in range(shape.pages):
        reach = shape.level_start(shape.level_of(page) + 2)   # pages on levels <= k+1
        parent = shape.parent(page)
        fixed = [0] + ([parent] if parent is not None else []) + list(shape.children(page))
        extra = max(0, spec.links_per_page - len(fixed))
        targets.append(fixed + [int(rng.random() * reach) for _ in range(extra)])
    return targets


def href(source: int, target: int, form: int) -> str:
    """The href text on page `source` for page `target`, in one of four forms."""
    absolute = page_path(target)
    if form == 0 or target == 0 or source == 0:
        return absolute + ("#s2" if form == 3 else "")
    if form == 3:
        return absolute + "#s2"
    same_dir = source // 1000 == target // 1000
    name = f"{target}.html"
    if form == 1:
        return name if same_dir else f"../{target // 1000}/{name}"
    return f"./{name}" if same_dir else absolute


def generate(spec: SiteSpec, directory: Path) -> GroundTruth:
    """Write the site into `directory` (created; existing files are replaced)."""
    directory = Path(directory)
    shape = layout(spec)
    rng = random.Random(spec.seed)
    targets = link_targets(spec, shape, rng)
    pdfs, pngs, missing = asset_paths(spec)
    paragraphs = _paragraph_pool(rng)
    rare = _rare_links_by_page(shape.pages, pdfs, pngs, missing)
    html_bytes = 0
    for page in range(shape.pages):
        body = render_page(page, targets[page], rare.get(page, []), paragraphs, spec.page_bytes, rng)
        html_bytes += len(body)
        _write(directory / page_path(page)[1:], body)
    for k, path in enumerate(pdfs):
        _write(directory / path[1:], _pdf(k))
    for k, path in enumerate(pngs):
        _write(directory / path[1:], _png(k))
    _write(directory / "robots.txt", f"User-agent: *\nDisallow: {ROBOTS_DISALLOW}\n".encode())
    truth = _walk(spec, targets, tuple(pdfs + pngs), tuple(missing), html_bytes)
    write_truth(truth, directory)
    return truth


def render_page(page: int, targets: list[int], rare: list[str], paragraphs: list[str],
                size: int, rng: random.Random) -> bytes:
    anchors = [f'<a href="{href(page, t, int(rng.random() * 4))}">page {t}</a>' for t in targets]
    anchors += [f'<a href="{path}">{path.rsplit("/", 1)[1]}</a>' for path in rare]
    head = (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f"<title>Benchmark page {page}</title>\n"
            f"<style>body{{font-family:sans-serif}} .nav a{{margin:0 4px}}</style>\n"
            f"</head><body>\n<h1>Benchmark page {page}</h1>\n"
            f'<nav class="nav">{" ".join(anchors[:3])}</nav>\n')
    tail = "<footer><p>Generated for the crawler benchmark.</p></footer>\n</body></html>\n"
    parts, used = [head], len(head) + len(tail)
    rest, k = anchors[3:], 0
    while used < size:   # paragraphs until the page has its size, one link in each
        text = paragraphs[(page * 31 + k) % len(paragraphs)]
        link = f" {rest[k]}" if k < len(rest) else ""
        room = size - used - len(link) - 8
        if room < len(text):   # the last paragraph is cut at a word to land near the size
            text = text[:max(room, 40)].rsplit(" ", 1)[0] + "."
        part = f"<p>{text}{link}</p>\n"
        parts.append(part)
        used += len(part)
        k += 1
    if k < len(rest):    # a small page keeps all its links in a list at the end
        parts.append("<ul>" + "".join(f"<li>{a}</li>" for a in rest[k:]) + "</ul>\n")
    parts.append(tail)
    return "".join(parts).encode("ascii")


def write_truth(truth: GroundTruth, directory: Path) -> None:
    record = {"generator_version": GENERATOR_VERSION, "spec": asdict(truth.spec),
              "total": truth.total, "levels": list(truth.levels),
              "paths_by_level": [list(level) for level in truth.paths_by_level],
              "assets": list(truth.assets), "broken": list(truth.broken),
              "html_bytes": truth.html_bytes, "robots_disallow": ROBOTS_DISALLOW}
    (Path(directory) / TRUTH_FILE).write_text(json.dumps(record) + "\n", encoding="utf-8")


def read_truth(directory: Path) -> GroundTruth | None:
    """The ground truth stored in `directory`, or None when absent or from another generator."""
    try:
        record = json.loads((Path(directory) / TRUTH_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if record.get("generator_version") != GENERATOR_VERSION:
        return None
    return GroundTruth(SiteSpec(**record["spec"]), tuple(record["levels"]),
                       tuple(tuple(level) for level in record["paths_by_level"]),
                       tuple(record["assets"]), tuple(record["broken"]), record["html_bytes"])


def ensure(spec: SiteSpec, directory: Path) -> GroundTruth:
    """Reuse the site in `directory` when it was generated from `spec`; else generate it."""
    truth = read_truth(directory)
    if truth is not None and truth.spec == spec:
        return truth
    return generate(spec, directory)


# -- internals ------------------------------------------------------------
def _walk(spec, targets, assets, broken, html_bytes) -> GroundTruth:
    """Breadth-first from page 0 over the generated links: shortest distances."""
    level = {0: 0}
    queue = deque([0])
    while queue:
        page = queue.popleft()
        for t in targets[page]:
            if t not in level:
                level[t] = level[page] + 1
                queue.append(t)
    by_level: list[list[str]] = [[] for _ in range(max(level.values()) + 1)]
    for page in sorted(level):
        by_level[level[page]].append(page_path(page))
    return GroundTruth(spec, tuple(len(paths) for paths in by_level),
                       tuple(tuple(paths) for paths in by_level), assets, broken, html_bytes)


def _rare_links_by_page(pages: int, pdfs: list[str], pngs: list[str],
                        missing: list[str]) -> dict[int, list[str]]:
    """Page id -> the rare links it carries: the k-th of each kind near page k·RARE_EVERY."""
    found: dict[int, list[str]] = {}
    for offset, paths in ((7, pdfs), (63, pngs), (100, missing)):
        for k, path in enumerate(paths):
            found.setdefault((k * RARE_EVERY + offset) % pages, []).append(path)
    return found


def _paragraph_pool(rng: random.Random, count: int = 97) -> list[str]:
    pool = []
    for _ in range(count):
        words = [WORDS[int(rng.random() * len(WORDS))] for _ in range(60 + int(rng.random() * 40))]
        pool.append(" ".join(words).capitalize() + ".")
    return pool


def _spread(pages: int, depth: int) -> list[int]:
    """Fallback for tiny sites: one page per level, the rest on the last level."""
    return [1] * depth + [pages - depth]


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _write(path: Path, data: bytes) -> None:
    try:
        path.write_bytes(data)
    except FileNotFoundError:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def _pdf(k: int) -> bytes:
    filler = b"".join(b"%% benchmark asset %d line %d\n" % (k, i) for i in range(100))
    return b"%PDF-1.4\n" + filler + b"%%EOF\n"


def _png(k: int) -> bytes:
    """A valid 8x8 grey PNG whose shade depends on k."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    rows = b"".join(b"\x00" + bytes([k * 37 % 256]) * 8 for _ in range(8))
    header = struct.pack(">IIBBBBB", 8, 8, 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")

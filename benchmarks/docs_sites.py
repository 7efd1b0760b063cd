"""The real-sites benchmark's sites: Debian's HTML documentation packages, each its own site.

`load()` returns a `SiteSet` (benchmarks/polite_site.py's shape, so
benchmarks/polite.py's checks and runs take it as they are): one site per
package of `DOC_SITES`, its installed HTML folder served as the document root
on its own loopback address (127.0.0.2 ... 127.0.0.9), with a ground truth
found by a breadth-first walk over the links of its files from the seed page,
the way a crawler that follows every same-site `<a>`, `<area>`, `<frame>` and
`<iframe>` would.

These are real sites: manuals written by hand or by texinfo, DocBook,
asciidoc and Sphinx, with wide levels (a table of contents that links every
chapter), links to plain-text files, images and style sheets, a few links to
files that do not exist, and no robots.txt (the server answers 404, as many
sites do). The walk counts every URL a site's pages link to, so the bound
(`requests_needed`) covers what a polite crawler must ask each host for.

Install: `apt-get install -y ` + the names in `PACKAGES` (printed by
`missing_packages`' caller when one is absent).
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import quote, unquote, urldefrag, urljoin, urlsplit

from benchmarks.polite_site import SiteSet, SiteSetSpec, address
from benchmarks.site import GroundTruth, SiteSpec


@dataclass(frozen=True)
class DocSite:
    package: str     # the Debian package that installs it
    root: str        # its HTML folder: the site's document root
    seed: str        # the page a crawl starts from, a path under the root


DOC_SITES = (   # ~900 pages in all; the largest (git-doc) bounds the crawl
    DocSite("git-doc", "/usr/share/doc/git-doc", "/index.html"),
    DocSite("vim-doc", "/usr/share/doc/vim/html", "/index.html"),
    DocSite("flex-doc", "/usr/share/doc/flex-doc/html", "/index.html"),
    DocSite("debian-handbook", "/usr/share/doc/debian-handbook/html/en-US", "/index.html"),
    DocSite("m4-doc", "/usr/share/doc/m4", "/index.html"),
    DocSite("gettext-doc", "/usr/share/doc/gettext", "/index.html"),
    DocSite("debian-policy", "/usr/share/doc/debian-policy", "/policy.html/index.html"),
    DocSite("zsh-doc", "/usr/share/doc/zsh-common/html", "/index.html"),
)
PACKAGES = tuple(site.package for site in DOC_SITES)
HTML_SUFFIX = ".html"   # what the benchmark's nginx serves as text/html (benchmarks/nginx.py's types)
LINK_ATTRIBUTE = {"a": "href", "area": "href", "frame": "src", "iframe": "src"}


@dataclass(frozen=True)
class DocTruth(GroundTruth):
    seed: str = "/index.html"

    @property
    def requests_needed(self) -> int:
        """Every distinct URL of the site a crawler following all links asks for (robots.txt aside)."""
        return self.total + len(self.assets) + len(self.broken)


def missing_packages() -> list[str]:
    """The packages of DOC_SITES whose seed page is not installed."""
    return [site.package for site in DOC_SITES if not Path(site.root + site.seed).is_file()]


def load() -> SiteSet:
    """The installed documentation sites, their addresses and ground truths (files are only read)."""
    sites = tuple(_Site(address(k), None, walk(Path(doc.root), doc.seed), Path(doc.root))
                  for k, doc in enumerate(DOC_SITES))
    return _DocSiteSet(SiteSetSpec(sites=len(sites)), Path("/"), sites)


@dataclass(frozen=True)
class _Site:
    address: str
    branching: int | None
    truth: DocTruth
    directory: Path

    @property
    def pages(self) -> int:
        return self.truth.total


@dataclass(frozen=True)
class _DocSiteSet(SiteSet):
    def root(self, site: _Site) -> Path:
        return site.directory

    def seed(self, site: _Site) -> str:
        return site.truth.seed

    @property
    def largest(self) -> int:
        """Requests of the site that needs the most: what bounds a polite crawl's time."""
        return max(site.truth.requests_needed for site in self.sites)


class _Links(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.base: str | None = None
        self.links: list[str] = []

    def handle_starttag(self, tag, attrs):
        values = dict(attrs)
        if tag == "base" and self.base is None and values.get("href"):
            self.base = values["href"].strip()
        elif tag in LINK_ATTRIBUTE and values.get(LINK_ATTRIBUTE[tag]):
            self.links.append(values[LINK_ATTRIBUTE[tag]].strip())


def page_links(path: str, body: bytes) -> list[str]:
    """The same-site paths a page at `path` links to, fragments dropped, in document order."""
    parser = _Links()
    parser.feed(body.decode("utf-8", errors="replace"))
    base = urljoin("http://site" + path, parser.base) if parser.base else "http://site" + path
    found = []
    for link in parser.links:
        try:
            parts = urlsplit(urldefrag(urljoin(base, link)).url)
        except ValueError:   # not a URL (a bracketed host that is no address): no crawler follows it
            continue
        if parts.scheme == "http" and parts.netloc == "site" and not parts.query:
            found.append(quote(unquote(parts.path or "/"), safe="/~-._+:@!$&'()*,;="))
    return found


def walk(root: Path, seed: str) -> DocTruth:
    """Breadth-first from `seed` over the links of the files under `root`: shortest distances."""
    level = {seed: 0}
    queue, assets, broken = deque([seed]), set(), set()
    while queue:
        path = queue.popleft()
        file = _file(root, path)
        if file is None:
            broken.add(path)
            continue
        if not file.name.endswith(HTML_SUFFIX):
            assets.add(path)
            continue
        for link in page_links(path, file.read_bytes()):
            if link not in level:
                level[link] = level[path] + 1
                queue.append(link)
    pages = {p: k for p, k in level.items() if p not in assets and p not in broken}
    by_level = [sorted(p for p, k in pages.items() if k == depth) for depth in range(max(pages.values()) + 1)]
    html_bytes = sum(_file(root, p).stat().st_size for p in pages)
    return DocTruth(SiteSpec(pages=len(pages)), tuple(map(len, by_level)), tuple(map(tuple, by_level)),
                    tuple(sorted(assets)), tuple(sorted(broken)), html_bytes, seed)


def _file(root: Path, path: str) -> Path | None:
    """The file nginx answers `path` with (a folder's index.html), or None for a 404."""
    file = root / unquote(path).lstrip("/")
    if path.endswith("/"):
        file = file / "index.html"
    try:
        return file if file.resolve().is_file() and not file.is_dir() else None
    except OSError:
        return None

"""Check a crawl of a static site against an independent breadth-first walk.

The walk reads the site's files straight from its document root (no HTTP,
no crawler code): lxml finds <a href>/<area href>/<frame src>/<iframe src>,
urllib resolves them, and a plain BFS gives every URL's shortest level.
The crawl passes when index.csv holds exactly those URLs, each once, at
those levels, and every saved page is byte-identical to the file on disk.

    python experiments/check_bfs_coverage.py CRAWL_DIR DOCROOT BASE_URL --max-depth 3
"""
from __future__ import annotations

import csv
import sys
from collections import Counter, deque
from pathlib import Path
from urllib.parse import unquote, urldefrag, urljoin, urlsplit

import click
import lxml.html

LINK_XPATH = "//a/@href | //area/@href | //frame/@src | //iframe/@src"


def file_for(url: str, base: str, docroot: Path) -> Path | None:
    if not url.startswith(base):
        return None
    path = docroot / unquote(urlsplit(url).path[len(urlsplit(base).path):])
    if path.is_dir():
        path = path / "index.html"
    return path if path.is_file() else None


def links_of(path: Path, url: str) -> list[str]:
    if path.suffix not in (".html", ".htm"):
        return []
    tree = lxml.html.fromstring(path.read_bytes())
    found = []
    for href in tree.xpath(LINK_XPATH):
        href = href.strip()
        if not href or href.split(":", 1)[0].lower() in ("javascript", "mailto", "tel", "data"):
            continue
        found.append(urldefrag(urljoin(url, href))[0])
    return found


def bfs(base: str, docroot: Path, max_depth: int) -> dict[str, int]:
    levels = {base: 0}
    queue = deque([base])
    while queue:
        url = queue.popleft()
        path = file_for(url, base, docroot)
        if path is None or (max_depth and levels[url] >= max_depth):
            continue
        for link in links_of(path, url):
            if link.startswith(base) and link not in levels:
                levels[link] = levels[url] + 1
                queue.append(link)
    return levels


@click.command()
@click.argument("crawl_dir", type=click.Path(exists=True, path_type=Path))
@click.argument("docroot", type=click.Path(exists=True, path_type=Path))
@click.argument("base_url")
@click.option("--max-depth", type=int, default=3, show_default=True)
def main(crawl_dir: Path, docroot: Path, base_url: str, max_depth: int) -> None:
    expected = bfs(base_url, docroot, max_depth)
    with open(crawl_dir / "index.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    counts = Counter(row["url"] for row in rows)
    got = {row["url"]: int(row["level"]) for row in rows}
    missing = sorted(set(expected) - set(got))
    extra = sorted(set(got) - set(expected))
    wrong_level = sorted(u for u in got if u in expected and got[u] != expected[u])
    twice = sorted(u for u, n in counts.items() if n > 1)
    mismatched, empty_text = 0, 0
    for row in rows:
        path = file_for(row["url"], base_url, docroot)
        if row["html_path"] and path is not None:
            mismatched += (crawl_dir / row["html_path"]).read_bytes() != path.read_bytes()
            empty_text += not (crawl_dir / row["text_path"]).read_text(encoding="utf-8").strip()
    per_level = Counter(expected.values())
    print(f"expected URLs (BFS of the files): {len(expected)}; per level: "
          + ", ".join(f"{k}:{per_level[k]}" for k in sorted(per_level)))
    print(f"crawled URLs: {len(got)}; rows: {len(rows)}")
    for name, items in [("missing", missing), ("extra", extra), ("wrong level", wrong_level),
                        ("fetched more than once", twice)]:
        print(f"{name}: {len(items)}" + (f" e.g. {items[:3]}" if items else ""))
    print(f"saved pages differing from the file on disk: {mismatched}")
    print(f"saved pages with empty text: {empty_text}")
    ok = not (missing or extra or wrong_level or twice or mismatched)
    print("RESULT:", "PASS" if ok else "FAIL")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()

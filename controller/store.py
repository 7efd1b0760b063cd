"""The page store: the output directory other tools read.

Layout (the contract; columns are only ever added at the end):
  pages/<id>.html  raw response bytes      text/<id>.txt  TextFilter text, UTF-8
  index.csv        one row per fetched URL  edges.csv     from_id,from_url,to_url
                   (in_links is counted from edges.csv when the crawl stops:
                   see fill_in_links)
  stats.json       totals, written at the end (and on Ctrl-C)
File names come from ids, never from URL text, so no URL can write outside DIR.
Each row reaches the kernel in one write as it is made (WholeWrites), so a
killed crawl, or one whose disk filled, leaves readable files.
"""
from __future__ import annotations

import csv
import io
import json
import os
from contextlib import contextmanager
from pathlib import Path

from urllist.journal import WholeWrites

INDEX_COLUMNS = (
    "id", "url", "final_url", "level", "parent_id", "status", "content_type",
    "encoding", "bytes", "text_chars", "filtered_ratio", "out_links", "new_links",
    "fetched_at", "elapsed_ms", "html_path", "text_path", "error", "title",
    "content_md5", "body_md5", "simhash", "duplicate_of", "near_duplicate_of", "hamming",
    "in_links", "level_at_fetch", "relevance", "etag", "last_modified", "visits", "changes", "via",
    "robots_directives",
)
SITEMAP_COLUMNS = ("url", "lastmod", "sitemap")
EDGE_COLUMNS = ("from_id", "from_url", "to_url")


class OutputError(Exception):
    """The output directory cannot be used; the message says why and what to do."""


class PageStore:
    def __init__(self, out: Path, *, append: bool = False) -> None:
        self.out = Path(out)
        _prepare(self.out)
        mode = "a" if append else "w"
        # Each row goes to the kernel in one write, nothing buffered: a row
        # the disk has no room for is not on disk at all (WholeWrites).
        self._index_file = WholeWrites(self.out / "index.csv", mode)
        self._edges_file = WholeWrites(self.out / "edges.csv", mode)
        # A header on disk at once, and on an appended file that has none (a
        # process killed before its first row left it empty): else the next
        # run's first row would be read as the header, and lost.
        for file, header in ((self._index_file, INDEX_COLUMNS), (self._edges_file, EDGE_COLUMNS)):
            if file.tell() == 0:
                file.write(csv_lines([header]))

    def add_row(self, row: dict) -> None:
        """Write one index row: the commit mark of a page (see controller/resume.py)."""
        self._index_file.write(csv_lines([[cell(row.get(name)) for name in INDEX_COLUMNS]]))

    def sync(self) -> None:
        for f in (self._index_file, self._edges_file):
            f.sync()

    def add_edges(self, from_id: int, from_url: str, to_urls: list[str]) -> None:
        if to_urls:
            self._edges_file.write(csv_lines((from_id, from_url, to) for to in to_urls))

    def add_sitemap_urls(self, entries) -> None:
        """sitemaps.csv: what the sitemaps listed (url, lastmod in epoch seconds, sitemap)."""
        with replaced_whole(self.out / "sitemaps.csv") as tmp, \
                open(tmp, "w", newline="", encoding="utf-8") as f:
            writer = csv.writer(f)
            writer.writerow(SITEMAP_COLUMNS)
            writer.writerows((e.url, "" if e.lastmod is None else f"{e.lastmod:.0f}", e.sitemap)
                             for e in entries)

    def write_stats(self, stats: dict) -> None:
        # Write-then-rename: a crash or a full disk never leaves a
        # half-written stats.json (nor the part that was written).
        with replaced_whole(self.out / "stats.json") as tmp:
            tmp.write_text(json.dumps(stats, indent=2, sort_keys=False) + "\n", encoding="utf-8")

    def close(self) -> None:
        try:
            self.sync()
        finally:
            self._index_file.close()
            self._edges_file.close()

    def rows(self):
        """index.csv's complete rows, as dicts."""
        return index_rows(self.out)

    def fill_in_links(self, normalize=lambda url: url, levels=None) -> None:
        """Rewrite index.csv with each row's in_links: edges.csv lines of its
        committed pages that point at its url, plus those pointing at its
        final_url after a redirect (``normalize``d as links are). Only known
        when the crawl stops: later pages link to earlier ones. Counted from
        the files, for the fetched URLs alone, so RAM grows with the pages,
        not with the links. ``levels`` (id -> level), for a crawl order that
        corrects levels, sets each row's final level. Write-then-rename, so a
        kill here keeps the old file."""
        in_links = count_in_links(self.out, normalize)
        path = self.out / "index.csv"
        column, level_column = INDEX_COLUMNS.index("in_links"), INDEX_COLUMNS.index("level")
        with replaced_whole(path) as tmp, open(path, newline="", encoding="utf-8") as src, \
                open(tmp, "w", newline="", encoding="utf-8") as dst:
            reader, writer = csv.reader(src), csv.writer(dst)
            writer.writerow(next(reader))
            for row in reader:
                if len(row) == len(INDEX_COLUMNS):
                    url, final = row[1], _final(row, normalize)
                    count = in_links[url] + (in_links[final] if final and final != url else 0)
                    row[column] = str(count)
                    if levels is not None:
                        row[level_column] = str(levels[int(row[0])])
                writer.writerow(row)
            dst.flush()
            os.fsync(dst.fileno())


def count_in_links(out: Path, normalize=lambda url: url) -> dict[str, int]:
    """URL -> edges.csv lines pointing at it, for the URLs and normalized
    final URLs of out/index.csv's rows only; a line counts when the page it
    comes from has a row (a line without one was written by a fetch that
    was never committed). Read with csv.reader, ids as the text both files
    hold: a dict per row cost a crawl's end more than the counting."""
    committed: set[str] = set()
    in_links: dict[str, int] = {}
    with open(Path(out) / "index.csv", newline="", encoding="utf-8") as f:
        reader = csv.reader(f)
        width = len(next(reader, ()))
        for row in reader:
            if len(row) >= width:   # a complete row (index_rows' test)
                committed.add(row[0])
                in_links[row[1]] = 0
                if final := _final(row, normalize):
                    in_links[final] = 0
    with open(Path(out) / "edges.csv", newline="", encoding="utf-8") as f:
        reader = csv.reader(f)
        next(reader, None)
        for line in reader:
            if len(line) == 3 and line[2] in in_links and line[0] in committed:
                in_links[line[2]] += 1
    return in_links


def _final(row: list[str], normalize) -> str:
    """An index row's final URL normalized ("" for none): one equal to its
    url is that already (normalizing is idempotent), and most are."""
    url, final = row[1], row[2]
    return final if final == url else (final and normalize(final))


@contextmanager
def replaced_whole(path: Path):
    """Yield a temporary path beside ``path``; once the block ends without
    an error, it replaces ``path``. On an error (a full disk) the temporary
    file is removed, so a failure leaves the old file and takes no space."""
    tmp = path.with_name(path.name + ".tmp")
    try:
        yield tmp
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    os.replace(tmp, path)


def csv_lines(rows) -> str:
    """CSV rows as text, written to a file with one write (WholeWrites)."""
    buffer = io.StringIO()
    csv.writer(buffer).writerows(rows)
    return buffer.getvalue()


def index_rows(out: Path):
    """The complete rows of out/index.csv, as dicts."""
    with open(Path(out) / "index.csv", newline="", encoding="utf-8") as f:
        yield from (row for row in csv.DictReader(f) if None not in row.values())


def cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.4f}".rstrip("0").rstrip(".") if value else "0"
    # One row per line, always: resume cuts torn rows at line ends.
    return " ".join(str(value).split()) if isinstance(value, str) else str(value)


def _prepare(out: Path) -> None:
    try:
        out.mkdir(parents=True, exist_ok=True)
        (out / "pages").mkdir(exist_ok=True)
        (out / "text").mkdir(exist_ok=True)
        probe = out / ".write-test"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise OutputError(f"cannot write to output directory {out}: {reason}; "
                          f"choose another --out") from None

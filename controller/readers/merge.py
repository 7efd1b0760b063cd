"""`crawler merge`: the output directories of a distributed crawl's workers
as one ordinary crawl directory, which every reader takes unchanged.

Why in controller/readers/: like `crawler export`, a merge reads crawl
directories and writes something else, never into what it reads. It needs
the readers' tolerance (a worker killed by ``kill -9`` leaves a cut last
line and no stats.json: controller/readers/files.py) and their one-line
refusals, and it writes with the engine's own writers (store.PageStore and
its fill_in_links, Tally.count_row as --resume uses it, stats.build_stats),
so the result has exactly the layout of controller/store.py. The crawl
engine itself never needs a merge.

What a worker's directory holds (issue 14), and how each part is read:
- page ids are global: every id's row is in exactly one worker's index.csv
  (two rows with one id are refused);
- ghosts: a page a worker fetched but did not commit (it died, or lost the
  page's lease, and another worker committed it) can leave its files,
  edges.csv lines, extracted rows, WARC records and FETCH line behind. Only
  what belongs to a row of the same directory counts, and of that only the
  page's last attempt: its last ``out_links`` edges.csv lines (a row's
  out_links is the number of its lines), its last extracted row and FETCH
  line, its WARC records from its last request for its own URL on (every
  attempt starts with that request);
- a duplicate's text_path (and its html_path, when the bytes are equal)
  names its original's file, which lives with the original's row: file
  names come from ids, so a path is looked up in the directory of the row
  whose id it names.

The merged directory:
  index.csv      every row, sorted by id; in_links counted again over the
                 merged edges, as the engine counts them
  edges.csv      the committed pages' lines, worker by worker
  pages/, text/  each file a row names, hard-linked from its worker's
                 directory on the same filesystem, else copied
  extracted.csv  (and .jsonl) the committed pages' rows, by id: readers
                 join it with index.csv in index order
  crawl.warc.gz  the first worker's warcinfo record, then the committed
                 pages' records by page id (whole gzip members, byte for byte)
  trace.log      one START (the earliest, with the seeds), the committed
                 pages' FETCH lines in time order, a LEVEL line per level a
                 worker saw finished (at the earliest such time, its counts
                 from the rows, m the queue total then), one END (the last
                 worker's to end) with the merged totals
  stats.json     built by stats.build_stats from the merged rows; the
                 README (*crawler merge*) says which fields are the workers'
                 own counters added up, and which are per run
  state/settings.json  the crawl's settings, with out the merged directory
No END and no stats.json when no worker ended: the merge of killed workers
is a killed crawl. Nothing is written before every input is read and
checked; the directory is built beside --out and renamed onto it when whole.
"""
from __future__ import annotations

import csv
import itertools
import json
import os
import re
import secrets
import shutil
from collections import Counter, deque
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import datetime
from itertools import groupby
from pathlib import Path

from controller import wiring
from controller.config import ConfigError, CrawlConfig
from controller.digest import NOFOLLOW
from controller.extracted import CSV_FILE, JSONL_FILE, ExtractionTally
from controller.lock import holder
from controller.readers.files import (ReportError, check_is_crawl, complete_lines,
                                      read_index_cells, read_stats)
from controller.pace import merged as pace_merged
from controller.resume import (CRAWL_FILES, MUST_MATCH, SETTINGS_FILE, STATE_DIR, WARC_FILE,
                               lock_path, settings_of)
from controller.stats import TRAP_NOTE, TRAP_PATTERNS_KEPT, build_stats, trap_note
from controller.store import PageStore
from controller.tally import Tally
from controller.trace import HEADER

# The seen-set counters that add up over workers (operations); the others
# describe one worker's own structure (bytes, slots, chains, cache size).
DEDUP_OPERATIONS = ("adds", "new", "lookups", "probes", "cache_hits")
SAVED_FILE = re.compile(r"pages/(\d+)\.html|text/(\d+)\.txt")


class MergeError(Exception):
    """The directories cannot be merged into --out; the one-line message says why."""


@dataclass(frozen=True)
class Trace:
    """What a worker's trace.log says about the crawl (times: trace.log's UTC text)."""
    start: str | None = None                               # its first START line
    fetches: dict[int, str] = field(default_factory=dict)  # committed id -> its last FETCH line
    level_ends: dict[int, str] = field(default_factory=dict)  # level -> its first LEVEL line
    end: tuple[str, str] | None = None                     # (time, reason) of its last END line


@dataclass(frozen=True)
class Archive:
    """What the merge copies of a worker's crawl.warc.gz: (offset, length) of gzip members."""
    path: Path
    info: tuple[int, int] | None           # its first warcinfo record
    pages: dict[int, list[tuple[int, int]]]  # committed id -> the records of its last attempt


@dataclass
class Worker:
    path: Path
    settings: dict
    rows: list[dict]                       # complete index.csv rows, in file order
    ids: dict[int, str]                    # committed page id -> its URL
    stats: dict | None = None
    trace: Trace = field(default_factory=Trace)
    earlier_edges: dict[int, int] = field(default_factory=dict)  # id -> lines of earlier attempts
    # extracted.csv / .jsonl -> (its header line, committed id -> the page's last line)
    extracted: dict[str, tuple[str, dict[int, str]]] = field(default_factory=dict)
    archive: Archive | None = None
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Level:
    """A finished level of the merged crawl, as its LEVEL line says it."""
    level: int
    urls: int
    new_urls: int
    m: int            # queue total when it finished: the seeds and every new URL up to it
    time: str


@dataclass(frozen=True)
class Merged:
    """What `crawler merge` made."""
    out: Path
    workers: int
    urls: int
    pages: int
    linked: int       # files hard-linked from a worker's directory
    copied: int       # files copied (another filesystem)
    ended: bool       # an END line and stats.json: some worker ended
    notes: tuple[str, ...]


def merge_crawls(worker_dirs, out: Path, *, overwrite: bool = False) -> Merged:
    """Merge the workers' directories into ``out``; MergeError (one line,
    nothing written) when they are not one crawl's or ``out`` is not usable."""
    out = Path(out)
    try:
        workers, owners = _read_workers([Path(path) for path in worker_dirs], out, overwrite)
    except OSError as exc:
        raise MergeError(f"cannot read {exc.filename}: {exc.strerror or exc}") from None
    config = _config(workers[0].settings, out)
    final = out.resolve()
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = final.with_name(f".{final.name}.merging-{secrets.token_hex(4)}")
    try:
        merged = _write(config, workers, owners, tmp)
        _install(tmp, final)
    except OSError as exc:
        raise MergeError(f"cannot write {out}: {exc.strerror or exc}") from None
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)
    return merged


# -- reading and checking -----------------------------------------------------
def _read_workers(paths: list[Path], out: Path, overwrite: bool):
    """Every worker read and checked, alone and together; (workers, owners)."""
    workers = [_open_worker(path) for path in paths]
    if not workers:
        raise MergeError("give the worker directories to merge")
    _check_together(workers, out, overwrite)
    owners = _owners(workers)
    for worker in workers:
        _read_rest(worker, owners)
    _check_extracted_columns(workers)
    return workers, owners


def _open_worker(path: Path) -> Worker:
    """The cheap checks and the rows: is it a whole crawl directory, idle, readable."""
    try:
        check_is_crawl(path)
    except ReportError as exc:
        raise MergeError(str(exc)) from None
    held = holder(lock_path(path))
    if held is not None:
        raise MergeError(f"{path} is being crawled by process {held.pid or '?'}; merge once "
                         f"the workers have stopped")
    settings = _settings(path)
    for name in ("edges.csv", "trace.log", *_content_files(settings)):
        if not (path / name).is_file():
            raise MergeError(f"{path} has no {name}, which every worker of this crawl writes; "
                             f"give whole worker directories")
    notes: list[str] = []
    try:
        rows = read_index_cells(path / "index.csv", notes, _checked_row)[1]
    except ReportError as exc:
        raise MergeError(str(exc)) from None
    return Worker(path, settings, rows, {int(row["id"]): row["url"] for row in rows}, notes=notes)


def _settings(path: Path) -> dict:
    file = path / STATE_DIR / SETTINGS_FILE
    try:
        settings = json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise MergeError(f"{path} has no {STATE_DIR}/{SETTINGS_FILE}: not the output directory "
                         f"of a crawl or a worker") from None
    except (OSError, UnicodeError, ValueError) as exc:
        raise MergeError(f"{file} cannot be read ({exc})") from None
    if not isinstance(settings, dict) or not isinstance(settings.get("seeds"), list):
        raise MergeError(f"{file} is not a crawl's settings (no seeds list)")
    return settings


def _content_files(settings: dict) -> list[str]:
    """The files that --extract, --extract-jsonl and --warc add."""
    optional = ((CSV_FILE, "extract"), (JSONL_FILE, "extract_jsonl"), (WARC_FILE, "warc"))
    return [name for name, setting in optional if settings.get(setting)]


def _checked_row(cells: dict) -> dict:
    """A row whose numbers read as numbers (a ValueError leaves it out, as a cut row)."""
    for name in ("id", "level", "out_links"):
        int(cells[name] or 0)
    return cells


def _check_together(workers: list[Worker], out: Path, overwrite: bool) -> None:
    first, final = workers[0], out.resolve()
    paths = [worker.path.resolve() for worker in workers]
    for worker, path in zip(workers, paths):
        if paths.count(path) > 1:
            raise MergeError(f"{worker.path} is given twice")
        for name in MUST_MATCH:
            if worker.settings.get(name) != first.settings.get(name):
                raise MergeError(f"{worker.path} and {first.path} are not from the same crawl: "
                                 f"their {name} settings differ ({worker.settings.get(name)!r} "
                                 f"and {first.settings.get(name)!r})")
        if path == final or path in final.parents or final in path.parents:
            raise MergeError(f"--out {out} overlaps the worker directory {worker.path}; "
                             f"write the merged crawl elsewhere")
    _check_out(out, overwrite)


def _check_out(out: Path, overwrite: bool) -> None:
    """As `crawl` treats --out: new or empty, or replaced with --overwrite."""
    if out.exists() and not out.is_dir():
        raise MergeError(f"output directory {out} is a file, not a directory; choose another --out")
    if not out.is_dir() or not any(out.iterdir()):
        return
    if not overwrite:
        raise MergeError(f"output directory {out} is not empty; use --overwrite to replace it, "
                         f"or choose another --out")
    held = holder(lock_path(out))
    if held is not None:
        raise MergeError(f"{out} is being crawled by process {held.pid or '?'}; wait for it or "
                         f"stop it, or choose another --out")


def _owners(workers: list[Worker]) -> dict[int, Worker]:
    """Page id -> the worker whose index.csv holds its row."""
    owners: dict[int, Worker] = {}
    for worker in workers:
        for row in worker.rows:
            page_id = int(row["id"])
            if page_id in owners:
                raise MergeError(f"page id {page_id} has a row in {owners[page_id].path} and in "
                                 f"{worker.path}: each page is committed by one worker "
                                 f"(a directory of another crawl?)")
            owners[page_id] = worker
    return owners


def _read_rest(worker: Worker, owners: dict[int, Worker]) -> None:
    """Everything else the merge needs of a worker, each part checked."""
    ids = worker.ids
    _check_saved_files(worker, owners)
    worker.stats = read_stats(worker.path / "stats.json", [])   # a killed worker has none
    worker.trace = _read_trace(worker.path / "trace.log", ids, worker.notes)
    worker.earlier_edges = _earlier_edges(worker)
    for name in _content_files(worker.settings):
        if name == WARC_FILE:
            worker.archive = _read_archive(worker.path / WARC_FILE, ids)
        else:
            worker.extracted[name] = _read_extracted(worker.path / name, ids, worker.notes)


def _check_extracted_columns(workers: list[Worker]) -> None:
    first = workers[0]
    for worker in workers:
        for name, (header, _) in worker.extracted.items():
            if header != first.extracted[name][0]:
                raise MergeError(f"{worker.path}/{name} has other columns than "
                                 f"{first.path}/{name}: not the same --extract patterns")


def _check_saved_files(worker: Worker, owners: dict[int, Worker]) -> None:
    for row in worker.rows:
        for column in ("html_path", "text_path"):
            path = row[column]
            if not path:
                continue
            named = _named_id(path)
            if named is None:
                raise MergeError(f"{worker.path}: row {row['id']} has {column} {path}, which is "
                                 f"no pages/<id>.html or text/<id>.txt")
            if named not in owners:
                raise MergeError(f"{worker.path}: row {row['id']}'s {column} {path} names page "
                                 f"{named}, which no worker directory holds a row of")
            if not (owners[named].path / path).is_file():
                raise MergeError(f"{owners[named].path / path} is missing (row {row['id']}'s "
                                 f"{column}); the worker's files are incomplete")


def _named_id(path: str) -> int | None:
    match = SAVED_FILE.fullmatch(path)
    return int(match.group(1) or match.group(2)) if match else None


def _lines(path: Path, notes: list[str]):
    """The complete lines of a text file, newline kept (a cut last line is noted)."""
    with open(path, newline="", encoding="utf-8", errors="replace") as f:
        yield from complete_lines(f, path.name, notes)


def _read_trace(path: Path, ids: dict[int, str], notes: list[str]) -> Trace:
    starts, fetches, level_ends, end = [], {}, {}, None
    for line in _lines(path, notes):
        parts = line.rstrip("\n").split(" ")
        if line.startswith("#") or len(parts) < 3:
            continue
        time, event, first = parts[:3]
        if event == "START":
            starts.append(time)
        elif event == "FETCH" and len(parts) > 3 and parts[3].isdigit() and int(parts[3]) in ids:
            fetches[int(parts[3])] = line.rstrip("\n")
        elif event == "LEVEL" and first.isdigit():
            level_ends.setdefault(int(first), time)
        elif event == "END":
            end = (time, first)
    return Trace(starts[0] if starts else None, fetches, level_ends, end)


def _edge_lines(worker: Worker, notes: list[str]):
    """(id, from_url, to_url) of the edges.csv lines of the worker's committed pages."""
    ids = worker.ids
    for cells in csv.reader(_lines(worker.path / "edges.csv", notes)):
        if len(cells) == 3 and cells[0].isdigit() and int(cells[0]) in ids:
            yield int(cells[0]), cells[1], cells[2]


def _earlier_edges(worker: Worker) -> dict[int, int]:
    """Per committed page, how many of its lines come before its last attempt's."""
    counts = Counter(page_id for page_id, _, _ in _edge_lines(worker, worker.notes))
    earlier = {}
    for row in worker.rows:
        page_id, links = int(row["id"]), int(row["out_links"] or 0)
        if counts[page_id] < links:
            raise MergeError(f"{worker.path}/edges.csv has {counts[page_id]} lines of page "
                             f"{page_id}, whose row says out_links {links}; the worker's files "
                             f"are incomplete")
        earlier[page_id] = counts[page_id] - links
    return earlier


def _read_extracted(path: Path, ids: dict[int, str],
                    notes: list[str]) -> tuple[str, dict[int, str]]:
    """(header line, committed id -> its last line) of extracted.csv or extracted.jsonl."""
    lines = _lines(path, notes)
    header = next(lines, "") if path.name == CSV_FILE else ""
    kept = {}
    for line in lines:
        page_id = _extracted_id(line)
        if page_id in ids:
            kept[page_id] = line
    return header, kept


def _extracted_id(line: str) -> int | None:
    if line.startswith("{"):
        try:
            return json.loads(line).get("id")
        except (ValueError, AttributeError):
            return None
    first = line.partition(",")[0]   # a row is one line: cells never hold line breaks
    return int(first) if first.isdigit() else None


def _read_archive(path: Path, ids: dict[int, str]) -> Archive:
    from controller.warc import PAGE_ID   # warcio: loaded only for --warc
    info, pages = None, {}
    for kind, fields, member in _records(path):
        page = fields.get_header(PAGE_ID)
        if kind == "warcinfo" and info is None:
            info = member
        elif page is not None and page.isdigit() and int(page) in ids:
            if kind == "request" and fields.get_header("WARC-Target-URI") == ids[int(page)]:
                pages[int(page)] = []   # an attempt begins: earlier ones are ghosts
            pages.setdefault(int(page), []).append(member)
    return Archive(path, info, pages)


def _records(path: Path):
    """(type, WARC headers, (offset, length)) of each whole record; a record
    cut off at the end (a killed worker) is left out."""
    from warcio.archiveiterator import ArchiveIterator
    from warcio.exceptions import ArchiveLoadFailed
    from controller.readers.cdx import torn_tail
    whole_end = path.stat().st_size - torn_tail(path)
    with open(path, "rb") as f:
        records = ArchiveIterator(f)
        try:
            for record in records:
                offset = records.get_record_offset()
                if offset >= whole_end:
                    return
                records.read_to_end(record)
                yield record.rec_type, record.rec_headers, (offset, records.get_record_length())
        except ArchiveLoadFailed as exc:
            raise MergeError(f"{path}: {' '.join(str(exc).split())}") from None


# -- writing --------------------------------------------------------------------
def _write(config: CrawlConfig, workers: list[Worker], owners: dict[int, Worker],
           tmp: Path) -> Merged:
    rows = sorted((row for worker in workers for row in worker.rows),
                  key=lambda row: int(row["id"]))
    store = PageStore(tmp)
    for row in rows:
        store.add_row(row)
    _write_edges(store, workers)
    store.close()
    digester = wiring.digester(config, wiring.url_rules(config))
    final = _final_levels(rows, tmp) if config.order != "bfs" else None
    store.fill_in_links(lambda url: digester.normalize(url, None), levels=final)
    linked, copied = _place_files(rows, owners, tmp)
    for name in _content_files(workers[0].settings):
        if name == WARC_FILE:
            _write_warc(workers, tmp)
        else:
            _write_extracted(workers, name, tmp)
    levels = _levels(rows, workers)
    ended = _write_trace(tmp, config, workers, rows, levels)
    (tmp / STATE_DIR).mkdir()
    saved = _saved_settings(config, workers[0].settings)
    (tmp / STATE_DIR / SETTINGS_FILE).write_text(json.dumps(saved, indent=2) + "\n",
                                                 encoding="utf-8")
    if ended:
        store.write_stats(_stats(config, workers, rows, levels, tmp))
    notes = tuple(f"{worker.path}: {note}" for worker in workers for note in worker.notes)
    return Merged(config.out, len(workers), len(rows), sum(bool(row["html_path"]) for row in rows),
                  linked, copied, ended, notes)


# Settings a merge keeps as the workers saved them without using them: the
# secrets a crawl withheld, and the cookies file (read by a crawl, and
# perhaps only on the workers' machines, not by a merge).
_KEPT_AS_SAVED = ("load_cookies", "withheld")


def _saved_settings(config: CrawlConfig, settings: dict) -> dict:
    """The merged crawl's state/settings.json: ``config``'s, plus what the
    workers saved of _KEPT_AS_SAVED."""
    return {**settings_of(config), **{name: settings[name] for name in _KEPT_AS_SAVED
                                      if name in settings}}


def _config(settings: dict, out: Path) -> CrawlConfig:
    used = {name: value for name, value in settings.items() if name not in _KEPT_AS_SAVED}
    try:
        return CrawlConfig(**{**used, "out": out})
    except (ConfigError, TypeError) as exc:
        raise MergeError(f"the workers' {STATE_DIR}/{SETTINGS_FILE} is not a crawl's settings: "
                         f"{exc}") from None


def _write_edges(store: PageStore, workers: list[Worker]) -> None:
    """Each committed page's last attempt's lines (in_links are counted from them)."""
    for worker in workers:
        earlier = dict(worker.earlier_edges)
        last = (line for line in _edge_lines(worker, [])
                if not _passed_over(earlier, line[0]))
        for (page_id, from_url), lines in groupby(last, key=lambda line: line[:2]):
            targets = [to_url for _, _, to_url in lines]
            store.add_edges(page_id, from_url, targets)


def _final_levels(rows: list[dict], tmp: Path) -> dict[int, int]:
    """Another --order: each page's level as the single node's crawl ends
    with it, the shortest link distance from a seed over the committed pages'
    followed links (urllist/ordered.py); a worker's row says the level its
    page was leased at, the shortest path its partition had been offered by
    then. The rows are given their final levels too."""
    by_url = {row["url"]: int(row["id"]) for row in rows}
    nofollow = {int(row["id"]) for row in rows if NOFOLLOW in row["robots_directives"].split(",")}
    out: dict[int, list[int]] = {}
    with open(tmp / "edges.csv", newline="", encoding="utf-8") as f:
        for line in itertools.islice(csv.reader(f), 1, None):
            if len(line) == 3 and int(line[0]) not in nofollow and line[2] in by_url:
                out.setdefault(int(line[0]), []).append(by_url[line[2]])
    level = {int(row["id"]): 0 for row in rows if row["level"] == "0" and not row["parent_id"]}
    pending = deque(level)
    while pending:
        page = pending.popleft()
        for target in out.get(page, ()):
            if target not in level:
                level[target] = level[page] + 1
                pending.append(target)
    for row in rows:
        row["level"] = str(level.setdefault(int(row["id"]), int(row["level"])))
    return level


def _passed_over(earlier: dict[int, int], page_id: int) -> bool:
    if earlier[page_id]:
        earlier[page_id] -= 1
        return True
    return False


def _place_files(rows: list[dict], owners: dict[int, Worker], tmp: Path) -> tuple[int, int]:
    """Every file a row names, from its owner's directory: (linked, copied)."""
    placed: set[str] = set()
    linked = copied = 0
    for row in rows:
        for path in (row["html_path"], row["text_path"]):
            if path and path not in placed:
                placed.add(path)
                source, target = owners[_named_id(path)].path / path, tmp / path
                try:
                    os.link(source, target)
                    linked += 1
                except OSError:   # another filesystem (or links not allowed there)
                    shutil.copyfile(source, target)
                    copied += 1
    return linked, copied


def _write_extracted(workers: list[Worker], name: str, tmp: Path) -> None:
    header = workers[0].extracted[name][0]
    lines = {page_id: line for worker in workers
             for page_id, line in worker.extracted[name][1].items()}
    with open(tmp / name, "w", newline="", encoding="utf-8") as f:
        f.write(header)
        f.writelines(lines[page_id] for page_id in sorted(lines))


def _write_warc(workers: list[Worker], tmp: Path) -> None:
    members = [(page_id, worker.archive.path, member) for worker in workers
               for page_id, records in worker.archive.pages.items() for member in records]
    members.sort(key=lambda entry: entry[0])   # stable: a page's records keep their order
    info = next((worker.archive for worker in workers if worker.archive.info), None)
    with ExitStack() as stack, open(tmp / WARC_FILE, "wb") as out:
        files = {worker.archive.path: stack.enter_context(open(worker.archive.path, "rb"))
                 for worker in workers}
        if info is not None:
            _copy(files[info.path], info.info, out)
        for _, path, member in members:
            _copy(files[path], member, out)


def _copy(source, member: tuple[int, int], out) -> None:
    offset, length = member
    source.seek(offset)
    out.write(source.read(length))


# -- trace.log and stats.json ---------------------------------------------------
def _levels(rows: list[dict], workers: list[Worker]) -> list[Level]:
    """The levels some worker saw finished, counted from the merged rows."""
    urls, new = Counter(), Counter()
    for row in rows:
        urls[int(row["level"])] += 1
        new[int(row["level"])] += int(row["new_links"] or 0)
    times: dict[int, str] = {}
    for worker in workers:
        for k, time in worker.trace.level_ends.items():
            times[k] = min(time, times.get(k, time))
    return [Level(k, urls[k], new[k], urls[0] + sum(new[j] for j in range(k + 1)), times[k])
            for k in sorted(times)]


def _write_trace(tmp: Path, config: CrawlConfig, workers: list[Worker], rows: list[dict],
                 levels: list[Level]) -> bool:
    """Write trace.log (the line formats of controller/trace.py); whether it has an END."""
    fetches = [(line.split(" ", 1)[0], 0, page_id, line) for worker in workers
               for page_id, line in worker.trace.fetches.items()]
    finished = [(level.time, 1, level.level,
                 f"{level.time} LEVEL {level.level} {level.urls} {level.new_urls} {level.m}")
                for level in levels]
    start, end = _span(workers)
    with open(tmp / "trace.log", "w", encoding="utf-8") as f:
        f.write(HEADER)
        if start:
            f.write(f"{start} START {' '.join(config.seeds)}\n")
        f.writelines(line + "\n" for *_, line in sorted(fetches + finished))
        if end:
            seconds = _seconds(start or end[0], end[0])
            f.write(f"{end[0]} END {_stop_reason(end[1], workers)} {len(rows)} {seconds:.2f}\n")
    return end is not None


def _span(workers: list[Worker]) -> tuple[str | None, tuple[str, str] | None]:
    """The earliest START's time, and the last END's (time, reason)."""
    starts = [worker.trace.start for worker in workers if worker.trace.start]
    ends = [worker.trace.end for worker in workers if worker.trace.end]
    return min(starts, default=None), max(ends, default=None)


def _seconds(start: str, end: str) -> float:
    return (datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds()


def _stop_reason(last: str, workers: list[Worker]) -> str:
    """The last worker's reason; between the two a drained queue gives, as
    the engine decides it, from the depth counts of all workers."""
    if last in ("queue-empty", "max-depth"):
        return "max-depth" if _summed(workers, "skipped_links").get("depth") else "queue-empty"
    return last


def _summed(workers: list[Worker], section: str, names=None) -> dict:
    """The workers' stats.json counters of one section, added up."""
    total: Counter = Counter()
    for worker in workers:
        for name, value in ((worker.stats or {}).get(section) or {}).items():
            if isinstance(value, (int, float)) and not isinstance(value, bool) and \
                    (names is None or name in names):
                total[name] += value
    return dict(total)


def _seen_algorithm(workers: list[Worker]) -> dict:
    """The URL-seen algorithm the workers' stats.json name, when they agree
    (a shared crawl's is Redis's, whatever its settings say of --dedup)."""
    names = {((w.stats or {}).get("dedup") or {}).get("algorithm") for w in workers} - {None}
    return {"algorithm": names.pop()} if len(names) == 1 else {}


def _stats(config: CrawlConfig, workers: list[Worker], rows: list[dict], levels: list[Level],
           tmp: Path) -> dict:
    start, (end, last_reason) = _span(workers)
    extraction = ExtractionTally.read(tmp, _extracted_names(tmp)) if config.extract else None
    crawl = _MergedCrawl(config, workers, rows, levels, extraction)
    stats = build_stats(crawl, _stop_reason(last_reason, workers), _seconds(start or end, end))
    stats["finished_at"] = end   # when the crawl ended, not when it was merged
    return stats


def _extracted_names(tmp: Path) -> tuple[str, ...]:
    """The NAMEs of --extract, as extracted.csv's columns after id,url."""
    with open(tmp / CSV_FILE, newline="", encoding="utf-8") as f:
        return tuple(next(csv.reader(f), [])[2:])


class _MergedCrawl:
    """What build_stats reads of a Crawl, made from the merged rows and the
    workers' stats.json: counters come from the rows as --resume counts them
    (Tally.count_row); those the rows cannot give (links skipped, URL-seen
    operations, speculative fetches) are the workers' own, added up."""

    def __init__(self, config: CrawlConfig, workers: list[Worker], rows: list[dict],
                 levels: list[Level], extraction: ExtractionTally | None) -> None:
        self.config, self.workers = config, workers
        self.tally = Tally()
        for row in rows:
            self.tally.count_row(row)
        for level in levels:
            self.tally.level(level.level).m = level.m
        self.tally.skipped.update(_summed(workers, "skipped_links"))
        self.restored = Tally()   # one run: the rates cover the whole crawl
        self.seeds_failed = [{"url": row["url"], "error": row["error"]} for row in rows
                             if row["level"] == "0" and row["error"]]
        self.frontier = _Queue(levels, self.tally)
        self.seen = _Counters({**_seen_algorithm(workers),
                               **_summed(workers, "dedup", DEDUP_OPERATIONS)})
        self.extraction_tally = extraction

    def stop_detail(self, reason: str) -> str:
        """As Crawl.stop_detail words it; a parser's death in the words of that
        worker; the trap guard's patterns, all workers' together."""
        if reason == "max-depth":
            detail = (f"max-depth: {self.tally.skipped['depth']} URLs beyond depth "
                      f"{self.config.max_depth}")
        else:
            last = max((w for w in self.workers if w.trace.end), key=lambda w: w.trace.end)
            detail = ((last.stats or {}).get("stop_detail") or reason).partition(TRAP_NOTE)[0]
        return detail + trap_note(self.trap_patterns())

    def trap_patterns(self) -> dict[str, int]:
        summed = Counter(_summed(self.workers, "trap_patterns"))
        return dict(summed.most_common(TRAP_PATTERNS_KEPT))

    def speculation_stats(self) -> dict:
        return _summed(self.workers, "speculative")

    def pace(self) -> dict:
        return pace_merged([w.stats["pace"] for w in self.workers if (w.stats or {}).get("pace")])


class _Queue:
    """The merged crawl's total queue as build_stats reads a frontier: its length and
    level flags (the queue total when each level's URLs were all known, as
    urllist/hosts.py appends them)."""

    def __init__(self, levels: list[Level], tally: Tally) -> None:
        seeds = tally.level(0).urls if tally.levels else 0
        self._total = seeds + sum(level.new_urls for level in tally.levels)
        flags = [seeds]
        for level in levels:
            if level.m > flags[-1]:
                flags.append(level.m)
        self.level_flags = flags if seeds else []

    def __len__(self) -> int:
        return self._total


@dataclass(frozen=True)
class _Counters:
    counters: dict

    def stats(self) -> dict:
        return self.counters


def _install(tmp: Path, out: Path) -> None:
    """Rename the whole directory onto ``out``. A non-empty ``out`` (--overwrite)
    is moved aside first; files in it that are not the crawler's are kept."""
    if not out.is_dir() or not any(out.iterdir()):
        os.replace(tmp, out)
        return
    old = out.with_name(f".{out.name}.replaced-{secrets.token_hex(4)}")
    os.rename(out, old)
    os.rename(tmp, out)
    for entry in old.iterdir():
        if entry.name not in CRAWL_FILES:
            os.rename(entry, out / entry.name)
    shutil.rmtree(old)

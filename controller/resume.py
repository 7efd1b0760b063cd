"""Starting, refusing and resuming crawls in an output directory.

What is on disk after a kill, and why resuming from it is exact:
- ``state/queue.log`` (URL_List's journal) holds every queued URL; children
  are journaled before their parent's index row is written;
- an ``index.csv`` row is the commit mark of a page: a page whose row is
  there is never fetched again, one without a row is fetched again;
- ``edges.csv`` lines of uncommitted pages are dropped on resume, so the
  refetch does not list them twice; their ``pages/<id>.html`` and
  ``text/<id>.txt`` are removed (the refetch writes them again, if it can).
"""
from __future__ import annotations

import csv
import json
import os
import shutil
from dataclasses import asdict, dataclass
from pathlib import Path

from controller.config import CrawlConfig, public_settings
from controller.extracted import keep_rows_of as keep_extracted_rows_of
from controller.lock import CrawlLock, Holder, LockHeld, holder
from controller.store import INDEX_COLUMNS, OutputError, index_rows, replaced_whole
from urllist.journal import cut_torn_line, queued

STATE_DIR = "state"
SETTINGS_FILE = "settings.json"
JOURNAL_FILE = "queue.log"
LOCK_FILE = "lock"   # one crawl per directory: controller/lock.py
WARC_FILE = "crawl.warc.gz"
CRAWL_FILES = ("pages", "text", STATE_DIR, "index.csv", "edges.csv", "trace.log",
               "stats.json", "stats.json.tmp", "index.csv.tmp", WARC_FILE,
               "extracted.csv", "extracted.jsonl", "visits.csv", "sitemaps.csv")
# Settings that decide which URLs exist and at which level: a resumed crawl
# must use the same ones, or its result would match neither setting.
MUST_MATCH = ("seeds", "scope", "include", "exclude", "max_depth", "max_url_length",
              "max_path_repeats", "max_pages_per_host", "max_query_variants", "max_pattern_depth",
              "dedup",
              "bloom_capacity", "bloom_error", "extractor", "fold_www", "drop_query",
              "obey_robots", "drop_params", "content_dedup", "simhash_distance", "text_mode",
              "extract", "extract_from", "extract_exclude", "extract_jsonl", "warc",
              "order", "order_params", "topic")


@dataclass(frozen=True)
class PreviousCrawl:
    out: Path
    done_ids: set[int]
    warc_responses: dict    # page id -> its final WARC response, for revisits (see controller/warc.py)
    deepest: set = frozenset()   # committed pages at --max-depth: their links were seen, never queued
    pending: frozenset = frozenset()   # rows not in index.csv that may be committed (Mode.pending)

    def rows(self):
        return committed_rows(self.out)


def committed_rows(out: Path):
    """The committed index.csv rows, in file order, read as they are used:
    a crawl of many pages resumes without holding its index whole."""
    return (row for row in index_rows(out) if len(row) == len(INDEX_COLUMNS))


def prepare_out_dir(config: CrawlConfig, resume: bool, overwrite: bool) -> CrawlLock:
    """Lock the directory for this crawl, refuse one that would mix two crawls,
    and clear it for --overwrite. The lock comes first: while another crawl
    holds it, nothing in the directory is changed or removed. The caller
    keeps the lock for the whole run and releases it at the end."""
    out = config.out
    if resume and overwrite:
        raise OutputError("--resume continues the crawl in --out and --overwrite replaces it; "
                          "give only one of them")
    if out.exists() and not out.is_dir():
        raise OutputError(f"output directory {out} is a file, not a directory; choose another --out")
    lock = _lock(out, create=False)   # the lock file of a crawl already there, if any
    try:
        _refuse_mixing(config, resume, overwrite)
        lock = lock or _lock(out, create=True)
        if overwrite:
            _remove_crawl_files(out)
    except BaseException:
        if lock:
            lock.release()
        raise
    return lock


def finished_crawl(config: CrawlConfig) -> dict | None:
    """finished_stats, after the checks of --resume that change nothing
    (another crawl holds the directory, other settings): OutputError."""
    if not (config.out / STATE_DIR / SETTINGS_FILE).is_file():
        return None   # prepare_out_dir says what is missing
    refuse_if_locked(config.out)
    _refuse_mixing(config, True, False)
    return finished_stats(config)


FINISHED = ("queue-empty", "max-depth")   # stop reasons after which nothing is left to fetch


def finished_stats(config: CrawlConfig) -> dict | None:
    """The stats.json of the crawl in config.out if --resume with config
    would have nothing to do: it stopped with nothing left (or with its
    --max-pages budget spent, and config gives no larger one), and no run
    wrote a row after it (its URL count is index.csv's). Reads, never writes:
    a finished crawl stays as it is, verdict and files. None otherwise."""
    out = config.out
    try:
        stats = json.loads((out / "stats.json").read_text(encoding="utf-8"))
        reason, urls = stats["stop_reason"], stats["urls"]
        done = {int(row["id"]) for row in index_rows(out)}
        if reason == "max-pages":
            left = not config.max_pages or config.max_pages > len(done)
        else:   # a URL queued and not committed is left (a recrawl queues links it found)
            left = reason not in FINISHED or any(
                item.id not in done for item in queued(out / STATE_DIR / JOURNAL_FILE))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return stats if not left and urls == len(done) else None


def lock_path(out: Path) -> Path:
    return out / STATE_DIR / LOCK_FILE


def _lock(out: Path, *, create: bool) -> CrawlLock | None:
    try:
        return CrawlLock.take(lock_path(out), create=create)
    except LockHeld as held:
        raise OutputError(_held_message(out, held.holder)) from None
    except OSError as exc:
        raise OutputError(f"cannot write to output directory {out}: {exc.strerror or exc}; "
                          f"choose another --out") from None


def refuse_if_locked(out: Path) -> None:
    """OutputError when a crawl holds ``out``: a check for commands that start
    something first (the demo its server); Crawl() still takes the lock."""
    held_by = holder(lock_path(out))
    if held_by is not None:
        raise OutputError(_held_message(out, held_by))


def _held_message(out: Path, holder: Holder | None) -> str:
    if holder is None:
        return f"{out} is being read by another process at this instant (crawler report?); try again"
    if holder.pid is None:
        return f"{out} is being crawled by another process; wait for it or stop it, then --resume"
    started = f" (started {holder.started})" if holder.started else ""
    return (f"{out} is being crawled by process {holder.pid}{started}; wait for it or stop it "
            f"(kill {holder.pid}), then --resume")


def _refuse_mixing(config: CrawlConfig, resume: bool, overwrite: bool) -> None:
    out = config.out
    if resume:
        saved = out / STATE_DIR / SETTINGS_FILE
        if not saved.exists():
            raise OutputError(f"--resume: {out} holds no crawl to resume (no {STATE_DIR}/{SETTINGS_FILE}); "
                              f"drop --resume to start a new crawl")
        settings = json.loads(saved.read_text(encoding="utf-8"))
        difference = _difference(settings, config)
        if difference:
            raise OutputError(f"--resume: {difference}; resume with the crawl's own settings "
                              f"or start a new crawl in another --out")
        if missing := missing_secrets(settings, config):
            raise OutputError(f"--resume: {missing}")
    elif not overwrite and out.exists() and any(out.iterdir()):
        raise OutputError(f"output directory {out} is not empty; use --resume to continue the "
                          f"crawl in it, --overwrite to replace it, or choose another --out")


def _remove_crawl_files(out: Path) -> None:
    """The crawler's own files, except the lock file (see controller/lock.py)."""
    for name in CRAWL_FILES:
        if name != STATE_DIR:
            _remove(out / name)
    for path in (out / STATE_DIR).iterdir():
        if path.name != LOCK_FILE:
            _remove(path)


def save_settings(config: CrawlConfig) -> None:
    state = config.out / STATE_DIR
    state.mkdir(parents=True, exist_ok=True)
    with replaced_whole(state / SETTINGS_FILE) as tmp:   # whole or not there, on a full disk too
        tmp.write_text(json.dumps(settings_of(config), indent=2) + "\n", encoding="utf-8")


def settings_of(config: CrawlConfig) -> dict:
    """The crawl's settings as saved (state/settings.json, the WARC's
    warcinfo, Redis): every setting but the secrets (config.public_settings)."""
    settings = asdict(config)
    settings["out"] = str(config.out)
    for name in ("seeds", "include", "exclude", "drop_params", "extract", "extract_exclude",
                 "headers", "order_params"):
        settings[name] = list(settings[name])
    return public_settings(settings)


def missing_secrets(saved: dict, config: CrawlConfig) -> str:
    """The secrets a crawl started with (its saved ``withheld``) that
    ``config`` does not give again, as one line; "" if none is missing."""
    given = settings_of(config).get("withheld", [])
    missing = [name for name in saved.get("withheld", []) if name not in given]
    if not missing:
        return ""
    how = " (or --ask-password, or CRAWLER_HTTP_PASSWORD)" if "--http-password" in missing else ""
    return (f"this crawl used {', '.join(missing)}, which is never saved; give "
            f"{'it' if len(missing) == 1 else 'them'} again{how} to send "
            f"{'it' if len(missing) == 1 else 'them'}")


def load_previous(out: Path, max_depth: int = 0, pending: frozenset = frozenset()) -> PreviousCrawl:
    """Committed rows of index.csv (a torn last line is cut off) and edges of
    those rows; with ``max_depth``, the ids of the pages at that depth.
    ``pending``: pages whose rows are not in index.csv but may be committed
    (a shared crawl's worker learns which from Redis when it joins): their
    files, edges.csv lines, extracted rows and WARC records stay (those of
    a page Redis did not take are then a ghost, which a merge passes over;
    its files go at the join, remove_page_files)."""
    cut_torn_line(out / "index.csv")
    done, deepest = set(), set()
    for row in committed_rows(out):
        done.add(int(row["id"]))
        if max_depth and row["level"] == str(max_depth) and not row["duplicate_of"]:
            deepest.add(int(row["id"]))
    kept = done | pending
    _keep_edges_of(out / "edges.csv", kept)
    remove_page_files(out, lambda item_id: item_id not in kept)
    keep_extracted_rows_of(out, kept)
    warc_responses: dict = {}
    if (out / WARC_FILE).exists():
        from controller.warc import trim   # warcio: loaded only for --warc crawls
        trim(out / WARC_FILE, kept, warc_responses)
    return PreviousCrawl(out, done, warc_responses, deepest, frozenset(pending))


def _difference(saved: dict, config: CrawlConfig) -> str:
    now = settings_of(config)
    for name in MUST_MATCH:
        if name in saved and saved[name] != now[name]:
            option = "--" + name.replace("_", "-")
            return f"this crawl was started with {option} {_show(saved[name])}, not {_show(now[name])}"
    return ""


def _show(value) -> str:
    if isinstance(value, list):
        return " ".join(map(str, value)) or "(none)"
    return str(value)


def _keep_edges_of(path: Path, done: set[int]) -> None:
    """Keep the edges.csv lines of committed pages."""
    if not path.exists():
        return
    cut_torn_line(path)
    tmp = path.with_suffix(".csv.tmp")
    try:
        _copy_edges(path, tmp, done)
    except OSError:
        tmp.unlink(missing_ok=True)   # a full disk: the old file stays, the space is free
        raise
    os.replace(tmp, path)


def _copy_edges(path: Path, tmp: Path, done: set[int]) -> None:
    with open(path, newline="", encoding="utf-8") as src, \
            open(tmp, "w", newline="", encoding="utf-8") as dst:
        reader, writer = csv.reader(src), csv.writer(dst)
        writer.writerow(next(reader, ["from_id", "from_url", "to_url"]))
        for row in reader:
            if len(row) == 3 and int(row[0]) in done:
                writer.writerow(row)


def beyond_depth(out: Path, deepest: set[int]):
    """The links of the ``deepest`` pages (load_previous), read from edges.csv
    as they are used: URLs the depth limit kept out, seen but never queued."""
    path = out / "edges.csv"
    if not deepest or not path.exists():
        return
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.reader(f)
        next(reader, None)
        for row in reader:
            if len(row) == 3 and int(row[0]) in deepest:
                yield row[2]


PAGE_FILES = (("pages", ".html"), ("text", ".txt"))   # a page's files: folder, suffix


def remove_page_files(out: Path, uncommitted) -> None:
    """pages/<id>.html and text/<id>.txt of the pages ``uncommitted(id)``
    says have no row: a parser process wrote them before a kill. The
    refetch writes them again; if it fails instead, no file should be left
    that no row points at."""
    for folder, suffix in PAGE_FILES:
        for path in (out / folder).glob(f"*{suffix}"):
            if path.stem.isdigit() and uncommitted(int(path.stem)):
                path.unlink()


def remove_files_of(out: Path, ids) -> None:
    """The files of these pages, known to have no row (no scan of the folders)."""
    for item_id in ids:
        for folder, suffix in PAGE_FILES:
            (out / folder / f"{item_id}{suffix}").unlink(missing_ok=True)


def _remove(path: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path)
    elif path.exists():
        path.unlink()

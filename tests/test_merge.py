"""`crawler merge` on worker directories made by splitting a real crawl of the
demo site (over loopback) the way a distributed crawl leaves them: rows at
random among three workers, each page's files, edges, extracted row, WARC
records and FETCH line with its row, duplicates away from their originals,
ghosts of pages a worker did not commit, a killed worker. The merge must
give back the single-node crawl, read by the same tools."""
import csv
import hashlib
import json
import random
import re
import shutil
import subprocess
import sys
from collections import Counter, defaultdict
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from warcio.archiveiterator import ArchiveIterator

from controller import read_crawl
from controller.cli import main
from controller.config import CrawlConfig
from controller.engine import Crawl
from controller.lock import CrawlLock
from controller.readers import merge
from controller.readers.merge import MergeError, merge_crawls
from controller.readers.report import build_report
from controller.resume import lock_path
from controller.warc import PAGE_ID
from demosite import DemoServer

WORKERS = 3
SPLIT_SEED = 14
PER_RUN = {"finished_at", "elapsed_seconds", "urls_per_second", "pages_per_second",
           "kb_per_second", "dedup", "settings"}


@pytest.fixture(scope="module")
def original(tmp_path_factory, demo_site):
    """One single-node crawl of the demo site, with every optional output."""
    out = tmp_path_factory.mktemp("merge") / "single"
    with DemoServer(demo_site) as server:
        Crawl(CrawlConfig(seeds=(server.url,), out=out, max_depth=6, max_pages=0, workers=4,
                          per_host=4, delay=0, retry_backoff=0.05, progress=False, warc=True,
                          content_dedup="near", extract=("heading=css:h1",),
                          extract_from="/news/")).run()
    return out


@pytest.fixture(scope="module")
def workers(original, tmp_path_factory):
    return split(original, tmp_path_factory.mktemp("workers"))


@pytest.fixture(scope="module")
def merged(workers, tmp_path_factory):
    """`crawler merge` run as a user runs it; the workers' bytes before and after."""
    out = tmp_path_factory.mktemp("merged") / "crawl"
    before = fingerprint(workers)
    done = crawler("merge", "--out", out, *workers)
    assert done.returncode == 0, done.stderr
    return out, done, before, fingerprint(workers)


# -- splitting a crawl into workers ---------------------------------------------
def read_csv(path):
    """The whole rows (a killed worker's cut last row is short)."""
    with open(path, newline="", encoding="utf-8") as f:
        return [row for row in csv.DictReader(f) if None not in row.values()]


def lines_of(path):
    with open(path, newline="", encoding="utf-8") as f:
        return f.readlines()


def members(path):
    """(page id or None, record type, target URI, raw gzip member) of each WARC record."""
    data = path.read_bytes()
    found = []
    with open(path, "rb") as f:
        records = ArchiveIterator(f)
        for record in records:
            headers = record.rec_headers
            page = headers.get_header(PAGE_ID)
            records.read_to_end(record)
            offset, length = records.get_record_offset(), records.get_record_length()
            found.append((int(page) if page else None, record.rec_type,
                          headers.get_header("WARC-Target-URI"), data[offset:offset + length]))
    return found


def homes(rows):
    """Each id's worker: at random, but a duplicate never with its original."""
    rng = random.Random(SPLIT_SEED)
    home = {int(row["id"]): rng.randrange(WORKERS) for row in rows}
    for row in rows:
        page, original = int(row["id"]), row["duplicate_of"]
        if original and home[page] == home[int(original)]:
            home[page] = (home[page] + 1) % WORKERS
    return home


def later(line, milliseconds):
    """A trace line with its time moved (a worker's clock, or a later event)."""
    time, rest = line.split(" ", 1)
    moved = datetime.fromisoformat(time) + timedelta(milliseconds=milliseconds)
    return moved.isoformat(timespec="milliseconds").replace("+00:00", "Z") + " " + rest


def split(original, root):
    rows = read_csv(original / "index.csv")
    home = homes(rows)
    dirs = [root / f"w{k}" for k in range(WORKERS)]
    for k, d in enumerate(dirs):
        (d / "pages").mkdir(parents=True)
        (d / "text").mkdir()
        (d / "state").mkdir()
        settings = json.loads((original / "state/settings.json").read_text())
        (d / "state/settings.json").write_text(json.dumps({**settings, "out": str(d)}))
    by_file = {"index.csv": lambda line: line.partition(",")[0],
               "edges.csv": lambda line: line.partition(",")[0],
               "extracted.csv": lambda line: line.partition(",")[0]}
    for name, key in by_file.items():
        header, *body = lines_of(original / name)
        for k, d in enumerate(dirs):
            (d / name).write_text(header + "".join(line for line in body
                                                   if home[int(key(line))] == k), newline="")
    for folder in ("pages", "text"):
        for file in (original / folder).iterdir():
            shutil.copyfile(file, dirs[home[int(file.stem)]] / folder / file.name)
    for k, d in enumerate(dirs):
        (d / "crawl.warc.gz").write_bytes(b"".join(
            raw for page, _, _, raw in members(original / "crawl.warc.gz")
            if page is None or home[page] == k))
    split_trace(original, rows, home, dirs)
    split_stats(original, dirs)
    plant_ghosts(original, rows, home, dirs)
    kill(dirs[2])
    return dirs


def split_trace(original, rows, home, dirs):
    """FETCH lines with their pages; every worker its own LEVEL lines (its own
    counts, its clock a little behind) and END, but w2 was killed: no END."""
    header, start, *events = lines_of(original / "trace.log")
    for k, d in enumerate(dirs):
        lines = [header, later(start, k)]
        for line in events:
            time, event, *fields = line.split(" ")
            if event == "FETCH" and home[int(fields[1])] == k:
                lines.append(line)
            elif event == "LEVEL":
                mine = [row for row in rows if home[int(row["id"])] == k
                        and row["level"] == fields[0]]
                new = sum(int(row["new_links"]) for row in mine)
                lines.append(later(f"{time} LEVEL {fields[0]} {len(mine)} {new} {len(mine) + new}\n", k))
            elif event == "END" and k < 2:
                lines.append(later(line, -200 * k))
        (d / "trace.log").write_text("".join(lines))


def split_stats(original, dirs):
    """w0 keeps the crawl's counters, w1 has none of its own, w2 (killed) no stats.json."""
    stats = json.loads((original / "stats.json").read_text())
    (dirs[0] / "stats.json").write_text(json.dumps(stats))
    empty = {**stats, "skipped_links": {}, "speculative": {"fetches": 0, "used": 0, "kept_unused": 0},
             "dedup": {name: 0 for name in stats["dedup"]} | {"algorithm": stats["dedup"]["algorithm"]},
             "pace": {**stats["pace"], "hosts": 0, "governors": {}, "busiest": [], "held_off": 0}}
    (dirs[1] / "stats.json").write_text(json.dumps(empty))


def plant_ghosts(original, rows, home, dirs):
    """w1 holds ghosts of four pages other workers committed; w0 an earlier,
    abandoned attempt at one of its own pages, written before everything else."""
    extracted = {int(line.partition(",")[0]) for line in lines_of(original / "extracted.csv")[1:]}
    seed = rows[0]["url"]
    foreign = [row for row in rows if home[int(row["id"])] != 1 and row["html_path"]
               and int(row["id"]) in extracted][:4]
    for row in foreign:
        ghost(dirs[1], row, seed, original, f"pages/{row['id']}.html")
    own = next(row for row in rows if home[int(row["id"])] == 0 and int(row["id"]) in extracted
               and int(row["out_links"]) > 0)
    ghost(dirs[0], own, seed, original, None)


def ghost(d, row, seed, original, files):
    """A page's files and side records of an attempt that was never
    committed, before the worker's other records (after headers and START)."""
    page = int(row["id"])
    if files:
        (d / files).write_bytes(b"<p>a ghost's bytes</p>")
        (d / f"text/{page}.txt").write_text("a ghost's text")
    insert(d / "edges.csv", 1, [f"{page},{row['url']},{seed}\r\n"] * 2)
    insert(d / "extracted.csv", 1, [f"{page},{row['url']},a ghost's heading\r\n"])
    insert(d / "trace.log", 2, [later(f"{row['fetched_at']} FETCH {row['level']} {page} 0 0 9 "
                                      f"{row['url']} connection: lease lost\n", -1)])
    records = [raw for p, _, _, raw in members(original / "crawl.warc.gz") if p == page]
    warc = [raw for *_, raw in members(d / "crawl.warc.gz")]
    (d / "crawl.warc.gz").write_bytes(b"".join(warc[:1] + records + warc[1:]))


def insert(path, at, lines):
    old = lines_of(path)
    with open(path, "w", newline="", encoding="utf-8") as f:
        f.writelines(old[:at] + lines + old[at:])


def kill(d):
    """What kill -9 leaves: cut last lines, a cut WARC record, no stats.json."""
    for name in ("index.csv", "edges.csv"):
        with open(d / name, "a", encoding="utf-8") as f:
            f.write("99999,http://127.0.0.1/cut-")
    last = members(d / "crawl.warc.gz")[-1][3]
    with open(d / "crawl.warc.gz", "ab") as f:
        f.write(last[:len(last) // 2])


def fingerprint(dirs):
    return {path: hashlib.md5(path.read_bytes()).hexdigest()
            for d in dirs for path in sorted(d.rglob("*")) if path.is_file()}


def crawler(*args):
    return subprocess.run([sys.executable, "-m", "controller", *map(str, args)],
                          capture_output=True, text=True, timeout=120)


def by_id(rows):
    return sorted(rows, key=lambda row: int(row["id"]))


# -- the split is what a distributed crawl leaves ----------------------------------
def test_the_split_spreads_rows_puts_duplicates_away_from_originals_and_plants_ghosts(original,
                                                                                       workers):
    rows = [read_csv(d / "index.csv") for d in workers]
    assert sum(map(len, rows)) == len(read_csv(original / "index.csv"))
    assert all(len(part) > 100 for part in rows)
    home = {row["id"]: k for k, part in enumerate(rows) for row in part}
    away = [row for part in rows for row in part
            if row["duplicate_of"] and home[row["duplicate_of"]] != home[row["id"]]]
    assert len(away) == sum(bool(row["duplicate_of"]) for part in rows for row in part) > 10
    ghosts = [f for f in (workers[1] / "pages").iterdir() if home[f.stem] != 1]
    assert len(ghosts) == 4
    assert not (workers[2] / "stats.json").exists()


# -- the merge gives back the single-node crawl ---------------------------------------
def test_merge_reports_what_it_did_and_never_writes_into_the_workers(merged, original):
    out, done, before, after = merged
    assert after == before
    rows = read_csv(original / "index.csv")
    pages = sum(bool(row["html_path"]) for row in rows)
    assert done.stdout.startswith(f"merged 3 worker directories into {out}: {len(rows):,} URLs, "
                                  f"{pages:,} pages (")
    assert "w2: index.csv: the last line is cut off" in done.stderr


def test_index_rows_are_the_single_node_rows_sorted_by_id_in_links_included(merged, original):
    out = merged[0]
    assert read_csv(out / "index.csv") == by_id(read_csv(original / "index.csv"))


def test_every_rows_files_hold_the_originals_bytes_linked_from_the_worker_that_committed_them(
        merged, original, workers):
    out = merged[0]
    home = {row["id"]: d for d in workers for row in read_csv(d / "index.csv")}
    for row in read_csv(out / "index.csv"):
        for path in filter(None, (row["html_path"], row["text_path"])):
            assert (out / path).read_bytes() == (original / path).read_bytes(), path
            owner = home[Path(path).stem]
            assert (out / path).stat().st_ino == (owner / path).stat().st_ino
    assert {p.name for p in (out / "pages").iterdir()} == {p.name for p in (original / "pages").iterdir()}
    assert {p.name for p in (out / "text").iterdir()} == {p.name for p in (original / "text").iterdir()}


def test_edges_and_extracted_rows_are_those_of_committed_attempts(merged, original):
    out = merged[0]
    assert Counter(lines_of(out / "edges.csv")) == Counter(lines_of(original / "edges.csv"))
    header, *rows = lines_of(original / "extracted.csv")
    assert lines_of(out / "extracted.csv") == [header, *sorted(rows, key=lambda l: int(l.split(",")[0]))]


def test_trace_has_one_start_and_end_the_fetch_lines_and_the_level_lines_of_one_crawl(merged,
                                                                                        original):
    out = merged[0]
    mine, theirs = lines_of(out / "trace.log"), lines_of(original / "trace.log")
    assert mine[:2] == theirs[:2]   # the header, and START at the earliest time with the seeds
    events = [line.split(" ")[1] for line in mine[1:]]
    assert events.count("START") == 1 and events.count("END") == 1 and events[-1] == "END"
    assert sorted(l for l in mine if " FETCH " in l) == sorted(l for l in theirs if " FETCH " in l)
    assert [l for l in mine if " LEVEL " in l] == [l for l in theirs if " LEVEL " in l]
    times = [line.split(" ")[0] for line in mine[1:]]
    assert times == sorted(times)
    assert mine[-1].split(" ")[:4] == theirs[-1].split(" ")[:4]   # time, END, reason, URLs


def test_stats_are_the_single_node_stats_but_for_what_is_per_run(merged, original):
    out = merged[0]
    mine = json.loads((out / "stats.json").read_text())
    theirs = json.loads((original / "stats.json").read_text())
    assert list(mine) == list(theirs)
    assert {k: v for k, v in mine.items() if k not in PER_RUN} == \
        {k: v for k, v in theirs.items() if k not in PER_RUN}
    assert mine["dedup"] == {k: theirs["dedup"][k] for k in ["algorithm", *merge.DEDUP_OPERATIONS]}
    assert mine["settings"] == {**theirs["settings"], "out": str(out)}
    assert mine["settings"] == json.loads((out / "state/settings.json").read_text())


def test_report_is_the_single_node_report_but_for_speed(merged, original):
    mine, theirs = build_report(merged[0]), build_report(original)
    for name in ("finished", "stop_reason", "seeds", "started_at", "runs", "urls", "pages",
                 "errors", "robots_denied", "bytes", "levels", "status_codes", "content_types",
                 "filtered_ratio", "top_in_links", "top_out_links", "skipped_links", "content"):
        assert getattr(mine, name) == getattr(theirs, name), name
    assert mine.notes == ()
    text = crawler("report", merged[0]).stdout
    levels = text[text.index("Levels"):text.index("Speed")]
    single = crawler("report", original).stdout
    assert levels == single[single.index("Levels"):single.index("Speed")]


def cdx(out):
    done = crawler("warc-index", out)
    assert done.returncode == 0, done.stderr
    # Without length and offset: the merged archive holds the records in id order.
    return Counter(" ".join(line.split(" ")[:8]) for line in done.stdout.splitlines()[1:])


def test_warc_index_lists_every_page_once_with_the_same_payload_digests(merged, original):
    assert cdx(merged[0]) == cdx(original)


def test_the_archive_holds_one_warcinfo_and_each_pages_committed_records(merged, original):
    def records(out):
        pages = defaultdict(list)
        with open(out / "crawl.warc.gz", "rb") as f:
            for record in ArchiveIterator(f, check_digests=True):
                fields = record.rec_headers
                pages[fields.get_header(PAGE_ID)].append(
                    (record.rec_type, fields.get_header("WARC-Target-URI"),
                     fields.get_header("WARC-Payload-Digest"), fields.get_header("WARC-Record-ID")))
        return pages
    mine, theirs = records(merged[0]), records(original)
    assert len(mine.pop(None)) == 1 == len(theirs.pop(None))
    assert mine == theirs


def test_export_gives_the_single_node_records(merged, original):
    def exported(out):
        done = crawler("export", out)
        assert done.returncode == 0, done.stderr
        return [json.loads(line) for line in done.stdout.splitlines()]
    assert exported(merged[0]) == sorted(exported(original), key=lambda record: record["id"])


def test_read_crawl_reads_it_as_an_ended_crawl(merged, original):
    crawl = read_crawl(merged[0], pandas=False)
    assert crawl.index == by_id(read_crawl(original, pandas=False).index)
    assert crawl.state == "ended" and crawl.notes == []


# -- how the files get there ------------------------------------------------------------
def test_files_are_copied_when_they_cannot_be_linked(workers, original, tmp_path, monkeypatch):
    def no_link(source, target):
        raise OSError(18, "Invalid cross-device link")
    monkeypatch.setattr(merge.os, "link", no_link)
    done = merge_crawls(workers, tmp_path / "out")
    assert done.linked == 0 and done.copied > 900
    row = next(row for row in read_csv(tmp_path / "out/index.csv") if row["html_path"])
    copy = tmp_path / "out" / row["html_path"]
    assert copy.read_bytes() == (original / row["html_path"]).read_bytes()
    assert copy.stat().st_nlink == 1


def test_overwrite_replaces_the_crawl_files_and_keeps_the_users_own(workers, original, tmp_path):
    out = tmp_path / "out"
    (out / "state").mkdir(parents=True)
    (out / "index.csv").write_text("id,url\n")
    (out / "extracted.jsonl").write_text("{}\n")
    (out / "notes.txt").write_text("mine")
    done = crawler("merge", "--out", out, "--overwrite", *workers)
    assert done.returncode == 0, done.stderr
    assert read_csv(out / "index.csv") == by_id(read_csv(original / "index.csv"))
    assert (out / "notes.txt").read_text() == "mine"
    assert not (out / "extracted.jsonl").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_a_merge_that_fails_while_writing_leaves_no_directory(workers, tmp_path, monkeypatch):
    def full(*args):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(merge, "_write_warc", full)
    with pytest.raises(MergeError, match=r"^cannot write .*out: No space left on device$"):
        merge_crawls(workers, tmp_path / "out")
    assert list(tmp_path.iterdir()) == []


def test_workers_all_killed_merge_into_a_killed_crawl(workers, original, tmp_path):
    ws = copies(workers, tmp_path / "in")
    for d in ws[:2]:
        (d / "stats.json").unlink()
        (d / "trace.log").write_text("".join(l for l in lines_of(d / "trace.log") if " END " not in l))
    done = merge_crawls(ws, tmp_path / "out")
    assert not done.ended and not (tmp_path / "out/stats.json").exists()
    assert " END " not in (tmp_path / "out/trace.log").read_text()
    report = build_report(tmp_path / "out")
    assert not report.finished and report.levels == build_report(original).levels


# -- refusals: one line, exit 2, nothing written ---------------------------------------
def copies(workers, root):
    return [shutil.copytree(d, root / d.name) for d in workers]


def empty_worker(ws, root):
    ws[2] = root / "empty"
    ws[2].mkdir()


def id_twice(ws, root):
    row = lines_of(ws[0] / "index.csv")[1]
    with open(ws[1] / "index.csv", "a", newline="", encoding="utf-8") as f:
        f.write(row)


def other_settings(ws, root):
    path = ws[1] / "state/settings.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), "max_depth": 3}))


def no_settings(ws, root):
    (ws[1] / "state/settings.json").unlink()


def a_file_gone(ws, root):
    """A duplicate's text lives with its original, in another worker: that file is gone."""
    rows = {row["id"]: (d, row) for d in ws for row in read_csv(d / "index.csv")}
    d, row = next((d, row) for d, row in rows.values() if row["duplicate_of"])
    (rows[row["duplicate_of"]][0] / row["text_path"]).unlink()


def given_twice(ws, root):
    ws[2] = ws[0]


def out_inside_a_worker(ws, root):
    return ws[0] / "merged"


def out_not_empty(ws, root):
    (root / "out").mkdir()
    (root / "out/x").write_text("")


def running(ws, root):
    return CrawlLock.take(lock_path(ws[1]), create=True)


@pytest.mark.parametrize("spoil, message", [
    (empty_worker, r"empty\S* is empty"),
    (id_twice, r"page id \d+ has a row in \S+/w0 and in \S+/w1: each page is committed by one"),
    (other_settings, r"\S+/w1 and \S+/w0 are not from the same crawl: their max_depth settings "
                     r"differ \(3 and 6\)"),
    (no_settings, r"\S+/w1 has no state/settings.json"),
    (a_file_gone, r"\S+/text/\d+.txt is missing \(row \d+'s text_path\)"),
    (given_twice, r"\S+/w0 is given twice"),
    (out_inside_a_worker, r"--out \S+/merged overlaps the worker directory \S+/w0"),
    (out_not_empty, r"output directory \S+/out is not empty; use --overwrite to replace it"),
    (running, r"\S+/w1 is being crawled by process \d+; merge once the workers have stopped"),
])
def test_bad_input_is_one_line_exit_2_and_nothing_written(workers, tmp_path, capsys, spoil, message):
    ws = copies(workers, tmp_path / "in")
    spoilt = spoil(ws, tmp_path)   # a lock to hold, or the --out to give
    out = spoilt if isinstance(spoilt, Path) else tmp_path / "out"
    before = fingerprint(ws)
    with pytest.raises(SystemExit) as exit:
        main(["merge", "--out", str(out), *map(str, ws)])
    err = capsys.readouterr().err
    assert exit.value.code == 2
    assert err.count("\n") == 1 and err.startswith("crawler: error: "), err
    assert re.search(message, err), err
    assert out.exists() == (spoil is out_not_empty)
    assert not list(tmp_path.rglob(".*merging*"))
    assert fingerprint(ws) == before

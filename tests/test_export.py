"""Saved pages as records (controller/readers/pages.py) and `crawler export`,
on a real crawl of the demo site over loopback."""
import base64
import csv
import json
import math
import shutil
import subprocess
import sys

import pytest

from controller.config import CrawlConfig
from controller.engine import Crawl
from controller.readers import export
from controller.readers.files import ReportError
from controller.readers.pages import RECORD_KEYS, page_records
from controller.store import INDEX_COLUMNS

DEPTH = 6
EXTRACT = ("heading=css:h1", "missing=css:blink")
EXTRACT_FROM = r"/news/"


@pytest.fixture(scope="module")
def crawl(tmp_path_factory, demo_site):
    """The demo crawl, with extraction from the news section (and near duplicates marked)."""
    from demosite import DemoServer
    out = tmp_path_factory.mktemp("export") / "demo"
    with DemoServer(demo_site) as server:
        Crawl(CrawlConfig(seeds=(server.url,), out=out, max_depth=DEPTH, max_pages=0, workers=4,
                          per_host=4, delay=0, retry_backoff=0.05, progress=False,
                          content_dedup="near", extract=EXTRACT,
                          extract_from=EXTRACT_FROM)).run()
    return out


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def saved_rows(out):
    return [row for row in read_csv(out / "index.csv") if row["html_path"]]


def optional_int(cell):
    return int(cell) if cell else None


# -- page_records ------------------------------------------------------------
def test_one_record_per_saved_page_in_index_order_with_its_text(crawl):
    rows = saved_rows(crawl)
    records = list(page_records(crawl))
    assert len(records) == len(rows) > 400
    for row, record in zip(rows, records):
        assert (record["id"], record["url"], record["level"]) == \
            (int(row["id"]), row["url"], int(row["level"]))
        assert record["text"] == (crawl / row["text_path"]).read_text(encoding="utf-8")
        assert (record["status"], record["bytes"]) == (int(row["status"]), int(row["bytes"]))
        assert record["title"] == (row["title"] or None)
        assert record["fetched_at"] == row["fetched_at"]


def test_records_carry_typed_values_and_the_same_keys(crawl):
    records = list(page_records(crawl))
    assert all(tuple(record)[:len(RECORD_KEYS)] == RECORD_KEYS for record in records)
    assert all(set(record) == set(RECORD_KEYS) | {"extracted"} for record in records)
    for record in records:
        assert isinstance(record["id"], int) and isinstance(record["level"], int)
        assert record["duplicate_of"] is None or isinstance(record["duplicate_of"], int)
        assert record["content_type"].startswith("text/html")
    redirected = [r for r in records if r["final_url"] != r["url"]]
    assert redirected, "the demo site plants a redirect"


def test_duplicates_have_their_first_copys_text_and_their_own_bytes(crawl):
    rows = {int(row["id"]): row for row in saved_rows(crawl)}
    records = list(page_records(crawl, html=True))
    duplicates = [r for r in records if r["duplicate_of"] is not None]
    near = [r for r in records if r["near_duplicate_of"] is not None]
    assert duplicates and near
    by_id = {r["id"]: r for r in records}
    for record in duplicates:
        assert record["text"] == by_id[record["duplicate_of"]]["text"]
        assert not (crawl / f"text/{record['id']}.txt").exists()
    for record in records:
        assert record["html"] == (crawl / rows[record["id"]]["html_path"]).read_bytes()
        assert len(record["html"]) == record["bytes"]


def test_html_only_when_asked(crawl):
    assert all("html" not in record for record in page_records(crawl))


def test_extracted_fields_join_each_extracted_row_to_its_page(crawl):
    extracted = {int(row["id"]): row for row in read_csv(crawl / "extracted.csv")}
    records = list(page_records(crawl))
    joined = {r["id"]: r["extracted"] for r in records if r["extracted"] is not None}
    assert set(joined) == set(extracted) and len(joined) > 50
    for page_id, fields in joined.items():
        assert fields == {"heading": extracted[page_id]["heading"] or None, "missing": None}
    assert all("/news/" in r["final_url"] for r in records if r["extracted"] is not None)
    assert any(r["extracted"] is None for r in records)


def test_a_crawl_without_extract_has_no_extracted_key(crawl, tmp_path):
    copy = copy_crawl(crawl, tmp_path / "plain")
    (copy / "extracted.csv").unlink()
    assert all("extracted" not in record for record in page_records(copy))


# -- killed and running crawls -------------------------------------------------
def copy_crawl(source, target):
    shutil.copytree(source, target, ignore=shutil.ignore_patterns("state", "*.lock"))
    return target


def cut_last_line_in_half(path):
    data = path.read_bytes()
    start = data.rstrip(b"\n").rfind(b"\n") + 1
    path.write_bytes(data[:start + (len(data) - start) // 2])


def last_saved_row_last(path):
    """Move the last saved page's row to the end of index.csv, so cutting the
    last line cuts a saved page (the demo crawl ends with robots denials)."""
    header, *rows = path.read_text(encoding="utf-8").splitlines(keepends=True)
    saved = max(i for i, row in enumerate(rows) if ",pages/" in row)
    rows.append(rows.pop(saved))
    path.write_text(header + "".join(rows), encoding="utf-8")


def test_a_killed_crawls_cut_last_line_is_left_out_and_said(crawl, tmp_path):
    killed = copy_crawl(crawl, tmp_path / "killed")
    last_saved_row_last(killed / "index.csv")
    cut_last_line_in_half(killed / "index.csv")
    (killed / "stats.json").unlink()
    expected = [int(row["id"]) for row in saved_rows(killed)]
    notes = []
    records = list(page_records(killed, notes=notes))
    assert [r["id"] for r in records] == expected
    assert len(expected) == len(saved_rows(crawl)) - 1
    assert notes == ["index.csv: the last line is cut off (the crawl was writing it, "
                     "or was killed); it is left out"]


def test_an_extracted_row_whose_page_has_no_index_row_yet_is_not_joined(crawl, tmp_path):
    running = copy_crawl(crawl, tmp_path / "running")
    rows = read_csv(running / "extracted.csv")
    index = (running / "index.csv").read_text(encoding="utf-8").splitlines(keepends=True)
    last = next(i for i in range(len(index) - 1, 0, -1) if index[i].startswith(rows[-1]["id"] + ","))
    del index[last]   # the page's extracted row is written, its index row not yet
    (running / "index.csv").write_text("".join(index), encoding="utf-8")
    cut_last_line_in_half(running / "extracted.csv")   # and a torn row of the next page
    joined = [r["id"] for r in page_records(running) if r["extracted"] is not None]
    assert joined == [int(row["id"]) for row in rows[:-1]]


def test_an_index_with_only_a_header_or_nothing_has_no_records(tmp_path):
    (tmp_path / "index.csv").write_text(",".join(INDEX_COLUMNS) + "\n", encoding="utf-8")
    notes = []
    assert list(page_records(tmp_path, notes=notes)) == [] and notes == []
    (tmp_path / "index.csv").write_text("", encoding="utf-8")
    assert list(page_records(tmp_path, notes=notes)) == []
    assert notes == ["index.csv has no rows yet: the crawl has not recorded a page"]


@pytest.mark.parametrize("make, message", [
    (lambda d: d / "absent", "does not exist"),
    (lambda d: d, "is empty"),
    (lambda d: (d / "stats.json").write_text("{}") and d, "has no index.csv"),
    (lambda d: (d / "index.csv").write_text("name,price\nx,1\n") and d, "is not a crawler index"),
])
def test_a_directory_without_a_crawl_is_refused_at_the_call(tmp_path, make, message):
    with pytest.raises(ReportError, match=message):
        page_records(make(tmp_path))   # not only when the first record is asked for


def test_a_saved_page_whose_text_file_is_gone_is_a_one_line_error(crawl, tmp_path):
    pruned = copy_crawl(crawl, tmp_path / "pruned")
    shutil.rmtree(pruned / "text")
    with pytest.raises(ReportError, match=r"text/0\.txt is missing"):
        list(page_records(pruned))


# -- crawler export ------------------------------------------------------------
def crawler(*args, code=None):
    """Run `crawler ARGS` (or, with ``code``, Python code that runs it) in a subprocess."""
    start = ["-c", code] if code else ["-m", "controller"]
    return subprocess.run([sys.executable, *start, *map(str, args)], capture_output=True,
                          timeout=120)


def json_lines(data: bytes) -> list[dict]:
    assert data.endswith(b"\n")
    return [json.loads(line) for line in data.decode("utf-8").split("\n")[:-1]]


def test_every_saved_page_is_one_json_line_with_its_url_level_and_text(crawl):
    done = crawler("export", crawl)
    assert done.returncode == 0, done.stderr
    lines = json_lines(done.stdout)
    rows = saved_rows(crawl)
    assert [(r["id"], r["url"], r["level"]) for r in lines] == \
        [(int(row["id"]), row["url"], int(row["level"])) for row in rows]
    for row, line in zip(rows, lines):
        assert line["text"] == (crawl / row["text_path"]).read_text(encoding="utf-8")
    assert lines == list(page_records(crawl))
    assert done.stderr.decode() == f"exported {len(rows):,} pages to standard output (jsonl)\n"


def test_non_ascii_text_is_written_as_utf8_not_escaped(crawl):
    done = crawler("export", crawl)
    text = done.stdout.decode("utf-8")
    assert "\\u" not in text
    assert any(ord(char) > 0x2000 for char in text), "the demo site has GBK and Big5 pages"


def test_out_file_holds_the_same_lines_and_html_comes_base64_only_when_asked(crawl, tmp_path):
    out = tmp_path / "pages.jsonl"
    assert crawler("export", crawl, "--out", out).returncode == 0
    assert out.read_bytes() == crawler("export", crawl, "--out", "-").stdout
    assert all("html" not in line for line in json_lines(out.read_bytes()))
    assert crawler("export", crawl, "--out", out, "--html").returncode == 0
    rows = {int(row["id"]): row for row in saved_rows(crawl)}
    for line in json_lines(out.read_bytes()):
        assert base64.b64decode(line["html"]) == (crawl / rows[line["id"]]["html_path"]).read_bytes()
    assert [p.name for p in tmp_path.iterdir()] == ["pages.jsonl"]


def test_parquet_round_trips_to_the_same_records(crawl, tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    out = tmp_path / "pages.parquet"
    done = crawler("export", crawl, "--format", "parquet", "--out", out, "--html")
    assert done.returncode == 0, done.stderr
    assert pq.read_table(out).to_pylist() == list(page_records(crawl, html=True))
    schema = pq.read_schema(out)
    assert str(schema.field("html").type) == "binary"
    assert str(schema.field("extracted").type) == "struct<heading: string, missing: string>"


def test_parquet_is_written_in_row_groups(crawl, tmp_path, monkeypatch):
    pq = pytest.importorskip("pyarrow.parquet")
    monkeypatch.setattr(export, "ROW_GROUP_ROWS", 100)
    out = tmp_path / "pages.parquet"
    count = export.export_pages(crawl, "parquet", out)
    groups = pq.ParquetFile(out).metadata.num_row_groups
    assert count == len(saved_rows(crawl)) and groups == math.ceil(count / 100)


def test_parquet_without_pyarrow_says_how_to_install_it(crawl, tmp_path):
    blocked = ("import sys; sys.modules['pyarrow'] = None; "
               "from controller.cli import main; main()")
    out = tmp_path / "pages.parquet"
    done = crawler("export", crawl, "--format", "parquet", "--out", out, code=blocked)
    assert done.returncode == 2
    message = done.stderr.decode()
    assert message.count("\n") == 1 and "needs pyarrow" in message
    assert "pip install -e '.[parquet]'" in message
    assert list(tmp_path.iterdir()) == []


OUT = ("--out", "{tmp}/pages.jsonl")


@pytest.mark.parametrize("args, message", [
    (("{tmp}/absent", *OUT), "absent does not exist"),
    (("{tmp}", *OUT), "is empty"),
    (("{crawl}", "--format", "parquet"), "--format parquet writes a file: give it with --out"),
    (("{crawl}", "--format", "csv", *OUT), "Invalid value for '--format'"),
    (("{crawl}", "--out", "{tmp}"), "is a directory"),
    (("{crawl}", "--out", "{tmp}/no/such/dir.jsonl"), "cannot write"),
])
def test_bad_input_is_one_line_exit_2_and_no_file(crawl, tmp_path, args, message):
    done = crawler("export", *(arg.format(tmp=tmp_path, crawl=crawl) for arg in args))
    stderr = done.stderr.decode()
    assert done.returncode == 2 and stderr.count("\n") == 1 and message in stderr, stderr
    assert done.stdout == b""
    assert list(tmp_path.iterdir()) == []


def test_a_failed_export_leaves_an_existing_file_as_it_was(crawl, tmp_path):
    pruned = copy_crawl(crawl, tmp_path / "pruned")
    last = saved_rows(pruned)[-1]
    (pruned / last["text_path"]).unlink()   # fails at the last page, after the others are written
    out = tmp_path / "pages.jsonl"
    out.write_text("an earlier export\n")
    done = crawler("export", pruned, "--out", out)
    assert done.returncode == 2 and "is missing" in done.stderr.decode()
    assert out.read_text() == "an earlier export\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pages.jsonl", "pruned"]


def test_a_killed_crawl_is_exported_up_to_its_cut_line_and_says_so(crawl, tmp_path):
    killed = copy_crawl(crawl, tmp_path / "killed")
    last_saved_row_last(killed / "index.csv")
    cut_last_line_in_half(killed / "index.csv")
    done = crawler("export", killed)
    assert len(json_lines(done.stdout)) == len(saved_rows(crawl)) - 1
    assert done.stderr.decode().startswith("export: index.csv: the last line is cut off")


def test_a_reader_that_stops_early_ends_it_quietly_with_0(crawl):
    """As report and every other printing command (tests/test_pipes.py)."""
    proc = subprocess.Popen([sys.executable, "-m", "controller", "export", str(crawl)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    first = proc.stdout.readline()
    proc.stdout.close()   # as `| head -1` does
    stderr = proc.stderr.read()
    assert proc.wait(timeout=60) == 0
    assert json.loads(first)["id"] == 0 and stderr == b""

"""index.csv and edges.csv have their header on disk from the start, so a
process killed before its first row cannot make the next run's first row
the header (and lose it)."""
import csv

from controller.store import EDGE_COLUMNS, INDEX_COLUMNS, PageStore


def lines(path):
    return path.read_text(encoding="utf-8").splitlines()


def test_the_header_is_on_disk_before_any_row(tmp_path):
    store = PageStore(tmp_path)   # not closed: as a kill -9 would leave it
    assert lines(tmp_path / "index.csv") == [",".join(INDEX_COLUMNS)]
    assert lines(tmp_path / "edges.csv") == [",".join(EDGE_COLUMNS)]
    store.close()


def test_appending_to_a_file_a_kill_left_empty_writes_the_header_first(tmp_path):
    (tmp_path / "index.csv").write_text("", encoding="utf-8")
    (tmp_path / "edges.csv").write_text("", encoding="utf-8")
    store = PageStore(tmp_path, append=True)
    store.add_row({"id": 7, "url": "http://127.0.0.1/a", "level": 1})
    store.add_edges(7, "http://127.0.0.1/a", ["http://127.0.0.1/b"])
    store.close()
    with open(tmp_path / "index.csv", encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [(r["id"], r["url"]) for r in rows] == [("7", "http://127.0.0.1/a")]
    assert lines(tmp_path / "edges.csv") == [",".join(EDGE_COLUMNS), "7,http://127.0.0.1/a,http://127.0.0.1/b"]


def test_appending_to_a_file_with_rows_adds_no_second_header(tmp_path):
    first = PageStore(tmp_path)
    first.add_row({"id": 0, "url": "http://127.0.0.1/", "level": 0})
    first.close()
    again = PageStore(tmp_path, append=True)
    again.add_row({"id": 1, "url": "http://127.0.0.1/x", "level": 1})
    again.close()
    assert [line.split(",")[0] for line in lines(tmp_path / "index.csv")] == ["id", "0", "1"]

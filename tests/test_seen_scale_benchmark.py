"""The stores benchmarks/seen_scale.py compares answer like a set on its own
stream, so its table compares right answers; one child run counts its adds."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # the repository root holds benchmarks/

from benchmarks import seen_scale as ss  # noqa: E402

STORES = [name for name in ("sieve", "sqlite", "rocksdb", "lmdb", "stringhash") if ss.available(name)]


@pytest.mark.parametrize("name", STORES)
def test_each_store_answers_like_a_set_on_the_benchmark_stream(tmp_path, name):
    store = ss.open_store(name, tmp_path, 2000)
    reference: set[str] = set()
    for url in ss.stream(2000):
        assert store.add(url) == (url not in reference), url
        reference.add(url)
    assert len(reference) == 2000


@pytest.mark.skipif(not ss.available("rocksdb-batch"), reason="rocksdict is not installed")
def test_the_batch_store_answers_a_repeat_inside_one_batch(tmp_path):
    store = ss.open_store("rocksdb-batch", tmp_path, 10)
    assert store.add_many(["http://h/a", "http://h/b", "http://h/a"]) == [True, True, False]
    assert store.add_many(["http://h/b", "http://h/c"]) == [False, True]


def test_a_child_run_counts_every_add_and_every_new_url(tmp_path):
    run = ss.run_child("sieve", 5000, tmp_path)
    assert run["adds"] == 10_000 and run["new"] == 5000
    assert len(run["tenths"]) == len(run["cpu_tenths"]) == ss.TENTHS
    assert run["peak_rss"] > 0 and run["structure_bytes"] > 0
    assert ss.row(run).startswith("| sieve | 5,000 |")

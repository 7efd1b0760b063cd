"""Micro-benchmarks of single URL-seen operations and of the hashes behind them (pytest-benchmark).

One add of a new URL, one add of a duplicate, one lookup of an absent URL,
for every algorithm on a table already holding 20,000 URLs; then each key
function alone, the C-level ones (sum of bytes, md5, blake2b) beside the
Python-level ones (MPQ, Java hashCode) in their fast and textbook forms.

Run:  .venv/bin/python -m pytest benchmarks/test_bench_seen_ops.py --benchmark-enable
Without --benchmark-enable (the project's default) each runs once, as a test.
"""
from __future__ import annotations

import hashlib
import itertools

import pytest

from urlfilter import SEEN_ALGORITHMS, make_seen
from urlfilter.intstring import java_hashcode, java_hashcode_reference
from urlfilter.stringhash import mpq_hash_reference, mpq_hashes

FILLED = 20_000
URL = "https://news.example.com/world/2026/11/29/council-votes-new-river-plan-4817263.html"


def url_number(i: int) -> str:
    return f"https://news.example.com/world/2026/11/{i % 28 + 1:02d}/story-{i}.html"


def filled(name: str):
    seen = make_seen(name, capacity=4 * FILLED)
    for i in range(FILLED):
        seen.add(url_number(i))
    return seen


@pytest.mark.parametrize("name", list(SEEN_ALGORITHMS))
def test_add_new_url(benchmark, name):
    seen = filled(name)
    fresh = map(url_number, itertools.count(FILLED))   # each round adds a URL never seen
    answers = benchmark.pedantic(lambda: seen.add(next(fresh)), rounds=2000, iterations=1)
    assert answers is True or name == "bloom"


@pytest.mark.parametrize("name", list(SEEN_ALGORITHMS))
def test_add_duplicate(benchmark, name):
    seen = filled(name)
    duplicate = url_number(FILLED // 2)
    assert benchmark(seen.add, duplicate) is False


@pytest.mark.parametrize("name", list(SEEN_ALGORITHMS))
def test_lookup_absent_url(benchmark, name):
    seen = filled(name)
    absent = url_number(10 * FILLED)
    assert benchmark(seen.__contains__, absent) is False


KEY_FUNCTIONS = {
    "ascii sum(bytes) [C]": lambda url: sum(url.encode()),
    "md5 digest [C]": lambda url: hashlib.md5(url.encode()).digest(),
    "blake2b-16 digest [C]": lambda url: hashlib.blake2b(url.encode(), digest_size=16).digest(),
    "mpq three hashes, packed lanes": lambda url: mpq_hashes(url.encode()),
    "mpq three hashes, textbook loop": lambda url: tuple(mpq_hash_reference(url.encode(), t)
                                                         for t in (0, 1, 2)),
    "java hashCode, dot product": java_hashcode,
    "java hashCode, textbook loop": java_hashcode_reference,
}


@pytest.mark.parametrize("label", list(KEY_FUNCTIONS))
def test_key_function(benchmark, label):
    function = KEY_FUNCTIONS[label]
    assert benchmark(function, URL) == function(URL)

"""Micro-benchmark of the content fingerprints of one 10 KB English page (textfilter/fingerprint.py).

Run:  .venv/bin/python -m pytest benchmarks/test_bench_simhash.py --benchmark-enable \\
          --benchmark-columns=median,iqr,rounds
Without --benchmark-enable (the project's default) each runs once, as a test.
"""
from __future__ import annotations

import random

import pytest

from textfilter.fingerprint import simhash, text_md5


def english_page(size: int = 10_000) -> str:
    rng = random.Random(3)
    words = ["".join(rng.choices("abcdefghijklmnopqrstuvwxyz", k=rng.randint(2, 9))) for _ in range(3000)]
    text = " ".join(rng.choice(words) + rng.choice(["", "", "", ",", ".\n"]) for _ in range(size // 4))
    return text[:size]


@pytest.mark.parametrize("page", ["ascii", "non-ascii"])
def test_simhash_10kb_page(benchmark, page):
    text = english_page() if page == "ascii" else english_page()[:-1] + "\u2014"
    assert benchmark(simhash, text) == simhash(text)


def test_text_md5_10kb_page(benchmark):
    assert len(benchmark(text_md5, english_page())) == 32

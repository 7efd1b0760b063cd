"""Micro-benchmarks of URL_Filter's hot paths (pytest-benchmark).

Run:  .venv/bin/python -m pytest benchmarks/ --benchmark-enable
They are timed only when asked; a normal test run executes each once.
"""
import pytest

from urlfilter import SEEN_ALGORITHMS, make_seen, normalize

BASE = "https://www.example.com/a/b/index.html"
HREFS = [f"../section/{i}/article-{i * 7}.html?ref=home&page={i}" for i in range(1000)]


def test_normalize_relative_links(benchmark):
    result = benchmark(lambda: [normalize(h, BASE) for h in HREFS])
    assert result[0] == "https://www.example.com/a/section/0/article-0.html?ref=home&page=0"


@pytest.mark.parametrize("name", sorted(SEEN_ALGORITHMS))
def test_seen_add_and_lookup(benchmark, name):
    urls = [f"https://news.example.com/2026/11/{i % 28 + 1:02d}/story-{i}.html" for i in range(2000)]

    def run():
        seen = make_seen(name, capacity=4000)
        return sum(seen.add(u) for u in urls) + sum(seen.add(u) for u in urls)

    assert benchmark(run) == len(urls)

"""ContentSeen: exact and near-duplicate verdicts, the permuted-block index against brute force,
and SimHash on generated pages with known near-duplicate pairs (experiments/compare_near_dup.py)."""
from __future__ import annotations

import random
import sys
from pathlib import Path

import numpy as np
import pytest

from textfilter.duplicates import ContentSeen, ContentVerdict, NearIndex
from textfilter.fingerprint import simhash, text_md5

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "experiments"))   # the page generator
import compare_near_dup  # noqa: E402

MASK = (1 << 64) - 1


def verdicts(seen: ContentSeen, texts: list[str]) -> list[ContentVerdict]:
    return [seen.check(page_id, text_md5(text), simhash(text)) for page_id, text in enumerate(texts)]


def test_exact_duplicate_names_the_first_page_with_that_text():
    texts = ["Home\nNews  today", "Other page", "  Home News\ttoday\n", "Home News today"]
    result = verdicts(ContentSeen(near=False), texts)
    assert [v.duplicate_of for v in result] == [None, None, 0, 0]
    assert all(v.near_duplicate_of is None and v.hamming is None for v in result)
    assert [v.is_new for v in result] == [True, True, False, False]


def test_exact_mode_never_gives_near_verdicts():
    seen = ContentSeen(near=False)
    assert seen.check(1, "a", 0b1111).is_new
    assert seen.check(2, "b", 0b1110) == ContentVerdict(None, None, None)
    assert seen.candidates_examined == 0


def test_near_verdict_is_the_closest_earlier_page_ties_to_the_smallest_id():
    seen = ContentSeen(near=True, distance=3)
    base = 0xF0F0_F0F0_F0F0_F0F0
    assert seen.check(10, "a", base ^ 0b111).is_new
    assert seen.check(11, "b", base ^ 0b1).near_duplicate_of == 10   # distance 2 to page 10
    assert seen.check(12, "c", base ^ (1 << 40)) == ContentVerdict(None, 11, 2)
    assert seen.check(13, "d", base) == ContentVerdict(None, 11, 1)   # 11 and 12 both at 1: smallest id
    assert seen.check(14, "e", base ^ 0xFFFF).is_new                  # 12+ bits from everything
    assert seen.check(15, "d", base ^ 0xFFFF) == ContentVerdict(13, None, None)   # md5 wins


def test_exact_duplicates_stay_out_of_the_near_index_and_near_duplicates_go_in():
    seen = ContentSeen(near=True, distance=1)
    seen.check(1, "a", 0b0000)
    assert seen.check(2, "a", 0b0011).duplicate_of == 1    # its hash is not indexed
    assert seen.check(3, "b", 0b0111).is_new               # 3 bits from page 1; page 2 is not there
    assert seen.check(4, "c", 0b1111).near_duplicate_of == 3
    assert seen.check(5, "e", 0b11111).near_duplicate_of == 4   # a chain of small edits is followed


def test_remember_rebuilds_the_same_state_as_check():
    rng = random.Random(5)
    rows = [(i, f"md5-{rng.randrange(30)}", rng.getrandbits(64) if i % 3 else rng.choice([0, 1, 3, 7]))
            for i in range(200)]
    original, rebuilt = ContentSeen(near=True), ContentSeen(near=True)
    for row in rows:
        original.check(*row)
        rebuilt.remember(*row)
    probes = [(1000 + i, f"new-{i}", value) for i, value in enumerate([0, 2, 15, rows[7][2] ^ 4])]
    assert [original.check(*p) for p in probes] == [rebuilt.check(*p) for p in probes]
    assert len(original) == len(rebuilt) == 30 + 4   # md5-0..29 plus the probes' md5s


def test_pages_without_a_fingerprint_take_part_in_exact_detection_only():
    seen = ContentSeen(near=True)
    assert seen.check(1, "a", None).is_new
    assert seen.check(2, "a", None).duplicate_of == 1
    assert seen.check(3, "b", 0).is_new


@pytest.mark.parametrize("distance", [-1, 64])
def test_distance_is_validated(distance):
    with pytest.raises(ValueError):
        ContentSeen(near=True, distance=distance)


def brute_force_closest(values: np.ndarray, count: int, query: int, distance: int) -> tuple[int, int] | None:
    """(index, distance) of the closest of values[:count] within distance, ties to the smallest index."""
    distances = np.bitwise_count(values[:count] ^ np.uint64(query))
    if count == 0 or distances.min() > distance:
        return None
    best = int(distances.argmin())   # argmin returns the first, i.e. smallest index, of the minima
    return best, int(distances[best])


@pytest.mark.parametrize("distance", [0, 3, 5])
def test_index_finds_exactly_what_brute_force_finds(distance):
    rng = random.Random(distance)
    hashes: list[int] = []
    for _ in range(20_000):
        if hashes and rng.random() < 0.3:   # planted: a near copy of an earlier hash
            flipped = rng.sample(range(64), rng.randint(0, distance + 2))
            hashes.append(rng.choice(hashes) ^ sum(1 << bit for bit in flipped))
        else:
            hashes.append(rng.getrandbits(64))
    values = np.array(hashes, dtype=np.uint64)
    index = NearIndex(distance)
    within = 0
    for page_id, value in enumerate(hashes):
        expected = brute_force_closest(values, page_id, value, distance)
        assert index.closest(value) == expected, page_id
        index.add(page_id, value)
        within += expected is not None
    assert within > 1_500   # the planted pairs were really there to be found


@pytest.mark.parametrize("distance, tables, most", [
    (3, 4, 10),    # 4 tables of 16-bit blocks: 50,000 * 4 / 2**16 = 3.05 expected
    (5, 21, 20),   # 21 tables keyed by 2 of 7 blocks (18-19 bits); k+1 = 6 tables of
                   # 10-11-bit blocks would meet about 50,000 * 6 / 2**10.7 = 190
])
def test_a_lookup_examines_far_fewer_than_n_candidates(distance, tables, most):
    rng = random.Random(1)
    index = NearIndex(distance)
    for page_id in range(50_000):
        index.add(page_id, rng.getrandbits(64))
    index.candidates_examined = 0
    for _ in range(1000):
        index.closest(rng.getrandbits(64))
    assert index.tables == tables
    assert 1 < index.candidates_examined / 1000 < most


def near_verdict(first: str, second: str, distance: int = 3) -> ContentVerdict:
    seen = ContentSeen(near=True, distance=distance)
    seen.check(0, text_md5(first), simhash(first))
    return seen.check(1, text_md5(second), simhash(second))


@pytest.mark.parametrize("language", ["en", "zh"])
def test_a_numeric_date_line_change_is_a_near_duplicate_at_distance_zero(language):
    words = compare_near_dup.Language(language, random.Random(3))
    header, footer = words.boilerplate(0)
    body = words.paragraphs(topic=1, size=300)
    first, second = ("\n".join([header, f"Updated {date}", *body, footer])
                     for date in ("2024-03-12 08:15", "2019-11-02 17:40"))
    assert near_verdict(first, second) == ContentVerdict(None, 0, 0)


@pytest.mark.parametrize("language", ["en", "zh"])
def test_different_articles_on_one_topic_are_not_near_duplicates(language):
    words = compare_near_dup.Language(language, random.Random(6))
    header, footer = words.boilerplate(0)
    size = 150 if language == "en" else 300   # the shortest articles share the most with each other
    # English pages with the site's boilerplate; Chinese articles alone (with 600 characters of
    # boilerplate around 300 of article, SimHash over the whole page puts them within 3 bits:
    # experiments/README.md, "Near-duplicate detection").
    pages = ["\n".join([header, *words.paragraphs(topic=0, size=size), footer]) if language == "en"
             else "\n".join(words.paragraphs(topic=0, size=size)) for _ in range(30)]
    seen = ContentSeen(near=True, distance=3)
    assert all(v.is_new for v in verdicts(seen, pages))


def test_generated_pairs_precision_and_recall_as_measured():
    """The experiment's first seed (results.md): date-line, ad-block and byline twins on 1,200 pages.
    Token features find more twins at k=3 than shingles alone; k=5 reaches 0.95 on both."""
    pages = compare_near_dup.generate_pages(600, seed=2026)
    rows = {(r.variant, r.k): r for variant in ("shingles", compare_near_dup.DEFAULT_VARIANT)
            for r in compare_near_dup.measure(pages, "page", variant, seed=2026) if r.language == "all"}
    default = {k: rows[compare_near_dup.DEFAULT_VARIANT, k] for k in (3, 5)}
    assert default[3].precision >= 0.99 and default[3].stream_precision >= 0.99
    assert default[3].recall_date >= 0.9 and default[3].recall_byline >= 0.9 and default[3].recall_ad >= 0.65
    assert default[3].recall > rows["shingles", 3].recall
    assert default[5].precision >= 0.95 and default[5].recall >= 0.95

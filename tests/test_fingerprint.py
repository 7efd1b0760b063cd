"""Content fingerprints: what "the same text" means, MD5s, SimHash tokens, determinism across processes."""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys

import random
from pathlib import Path

import pytest

from textfilter.fingerprint import UNIGRAM_WEIGHT, body_md5, hamming, normalized_text, simhash, text_md5, tokens

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "experiments"))   # the page generator
import compare_near_dup  # noqa: E402

ARTICLE = ("The harbour council met on Tuesday to discuss the new ferry timetable. Residents asked "
           "why the evening boats had been cut, and the council promised a review before summer. "
           "Fishermen said the quay needs repairs after the winter storms damaged two moorings. ") * 6


@pytest.mark.parametrize("raw, expected", [
    ("  Hello \n\n world\t ", "Hello world"),
    ("a\u00a0b\u3000c", "a b c"),            # no-break and ideographic spaces are white space
    ("ｆｕｌｌ　ｗｉｄｔｈ", "full width"),      # NFKC folds full-width forms
    ("ﬁne", "fine"),                          # and ligatures
    ("Case Kept", "Case Kept"),
    ("", ""),
])
def test_normalized_text(raw, expected):
    assert normalized_text(raw) == expected
    assert normalized_text(normalized_text(raw)) == normalized_text(raw)


def test_text_md5_ignores_whitespace_only_differences_but_not_case():
    assert text_md5("Title\nline one   two\n") == text_md5("  Title line\tone\n\ntwo")
    assert text_md5("Title") != text_md5("title")
    assert text_md5("abc") == hashlib.md5(b"abc").hexdigest()


def test_body_md5_is_the_md5_of_the_bytes_as_received():
    assert body_md5(b"") == "d41d8cd98f00b204e9800998ecf8427e"
    assert body_md5(b"<p>a</p>") != body_md5(b"<p>a</p>\n")


def test_hamming_counts_differing_bits():
    assert hamming(0, 0) == 0
    assert hamming(0, (1 << 64) - 1) == 64
    assert hamming(0b1011, 0b0110) == 3


def test_tokens_split_words_and_each_cjk_character_and_drop_digits():
    assert tokens("Hello, WORLD! it's 2024-03-12") == ["hello", "world", "it", "s"]
    assert tokens("新闻ニュース뉴스 ok") == ["新", "闻", "ニ", "ュ", "ー", "ス", "뉴", "스", "ok"]
    assert tokens("snake_case x2y") == ["snake_case", "x", "y"]


def test_simhash_of_text_without_tokens_is_zero():
    assert simhash("") == 0
    assert simhash(" 2024 -- 12:30 ") == 0


def test_simhash_is_a_64_bit_value_that_changes_with_the_text():
    value = simhash(ARTICLE)
    assert 0 < value < 2**64
    assert hamming(value, simhash(ARTICLE.replace("ferry", "train"))) > 0
    assert hamming(value, simhash("A completely different text about mountain railways and tunnels.")) > 10


def test_simhash_ignores_case_digits_and_punctuation():
    assert simhash(ARTICLE) == simhash(ARTICLE.upper())
    assert simhash("Published 12 March 2024 " + ARTICLE) == simhash("Published 3 March 1999 " + ARTICLE)
    assert simhash(ARTICLE) == simhash(ARTICLE.replace(",", " ;; "))


def test_ascii_fast_path_gives_the_same_hash_as_the_general_path():
    # An em dash is not a word character: the tokens stay the same, but the text is no longer ASCII.
    for text in (ARTICLE, "snake_case and CamelCase words", "one"):
        assert simhash(text) == simhash(text + " \u2014")
        assert simhash(text, 1, 1) == simhash(text + " \u2014", 1, 1)


def test_short_texts_still_get_a_fingerprint():
    assert simhash("one two") != 0
    assert simhash("one two") != simhash("two one")
    assert simhash("中文") != simhash("文中")


def test_shingle_sizes_and_unigram_weight_are_validated():
    with pytest.raises(ValueError):
        simhash("text", word_shingle=0)
    with pytest.raises(ValueError):
        simhash("text", cjk_ngram=9)
    with pytest.raises(ValueError):
        simhash("text", unigram_weight=-1)


def test_unigram_weight_sets_how_much_word_order_counts():
    words = ARTICLE.split()
    shuffled = " ".join(random.Random(4).sample(words, len(words)))
    # Shingles see a shuffled text as new; heavily weighted unigrams (a bag of words) barely move.
    assert hamming(simhash(ARTICLE, unigram_weight=0), simhash(shuffled, unigram_weight=0)) > 15
    assert hamming(simhash(ARTICLE, unigram_weight=1000), simhash(shuffled, unigram_weight=1000)) <= 2
    assert simhash(ARTICLE) not in (simhash(ARTICLE, unigram_weight=0), simhash(ARTICLE, unigram_weight=1000))


@pytest.mark.parametrize("language", ["en", "zh"])
def test_unigram_features_bring_an_inserted_sentence_twin_closer(language):
    # The measured reason for the default weight (experiments/compare_near_dup.py): an inserted
    # sentence adds new shingles, but most of its words are already on the page.
    words = compare_near_dup.Language(language, random.Random(8))
    header, footer = words.boilerplate(0)
    distances = {0: [], UNIGRAM_WEIGHT: []}
    for _ in range(100):   # distances are noisy: Binomial(64, angle / pi)
        body = words.paragraphs(topic=1, size=400 if language == "en" else 700)
        twin = [*body[:1], words.ad(), *body[1:]]
        first, second = ("\n".join([header, *paragraphs, footer]) for paragraphs in (body, twin))
        for weight, found in distances.items():
            found.append(hamming(simhash(first, unigram_weight=weight), simhash(second, unigram_weight=weight)))
    assert sum(distances[UNIGRAM_WEIGHT]) < 0.9 * sum(distances[0])
    within_3 = {weight: sum(d <= 3 for d in found) for weight, found in distances.items()}
    assert within_3[UNIGRAM_WEIGHT] > within_3[0]


def test_simhash_is_the_same_in_processes_with_different_hash_seeds():
    texts = [ARTICLE, "中文文本没有空格，这是一个关于港口和渡轮的测试。", "mixed 日本語 text", ""]
    expected = [simhash(text) for text in texts]
    code = ("import sys, json; from textfilter.fingerprint import simhash; "
            "print(json.dumps([simhash(t) for t in json.loads(sys.stdin.read())]))")
    for seed in ("1", "4242"):
        result = subprocess.run([sys.executable, "-c", code], input=json.dumps(texts), capture_output=True,
                                text=True, check=True, env={**os.environ, "PYTHONHASHSEED": seed})
        assert json.loads(result.stdout) == expected

"""URL-seen structures: one contract test over every exact algorithm, plus each algorithm's own facts."""
from __future__ import annotations

import gc
import math
import random
import tracemalloc
from array import array

import pytest

import urlfilter.sieve as sieve
import urlfilter.stringhash as stringhash
from urlfilter import SEEN_ALGORITHMS, UrlSeen, make_seen
from urlfilter.bloom import BloomSeen
from urlfilter.intstring import java_hashcode, java_hashcode_reference
from urlfilter.sieve import SieveSeen
from urlfilter.stringhash import (CRYPT_TABLE, StringHashSeen, mpq_hash_reference,
                                  mpq_hashes)

EXACT = ["set", "ascii", "intstring", "stringhash", "md5", "sieve"]
STATS_KEYS = {"adds", "new", "lookups", "probes", "max_chain", "distinct_keys", "bytes"}


def random_urls(rng: random.Random, count: int) -> list[str]:
    hosts = ["http://example.com", "https://www.example.org", "http://127.0.0.1:8080"]
    words = ["a", "news", "item", "Page", "x1", "2024", "%C3%A9", "~user", "q=1&r=2"]
    urls = []
    for _ in range(count):
        path = "/".join(rng.choice(words) for _ in range(rng.randint(0, 5)))
        query = f"?id={rng.randint(0, 500)}" if rng.random() < 0.5 else ""
        urls.append(f"{rng.choice(hosts)}/{path}{query}")
    return urls


def adversarial_urls(rng: random.Random) -> list[str]:
    """URLs whose ASCII sums collide (permutations) and whose Java hashCodes collide."""
    urls = []
    stem = "http://example.com/catalog/item"
    for _ in range(60):
        letters = list("abcdef123")
        rng.shuffle(letters)
        urls.append(f"{stem}/{''.join(letters)}")          # same sum, many orders
    for left in ("Aa", "BB"):
        for right in ("Aa", "BB"):
            for tail in ("", "/x", "?p=AaBB"):
                urls.append(f"http://example.com/{left}{right}{tail}")   # equal hashCode per tail
    urls += ["http://example.com/ac", "http://example.com/bb", "http://example.com/ca"]  # equal sums
    return urls


def interleave_duplicates(rng: random.Random, urls: list[str]) -> list[str]:
    stream = []
    for url in urls:
        stream.append(url)
        if rng.random() < 0.4:
            stream.append(rng.choice(stream))
    return stream


def assert_behaves_like_a_set(seen: UrlSeen, stream: list[str]) -> None:
    reference: set[str] = set()
    for url in stream:
        assert (url in seen) == (url in reference), url
        assert seen.add(url) == (url not in reference), url
        reference.add(url)
        assert url in seen
        assert len(seen) == len(reference)


@pytest.mark.parametrize("name", EXACT)
def test_exact_structures_answer_like_a_set(name):
    rng = random.Random(7)
    stream = interleave_duplicates(rng, random_urls(rng, 3000) + adversarial_urls(rng))
    rng.shuffle(stream)
    seen = make_seen(name)
    assert_behaves_like_a_set(seen, stream)
    stats = seen.stats()
    assert STATS_KEYS <= stats.keys()
    assert stats["adds"] == len(stream)
    assert stats["new"] == len(set(stream)) == len(seen)
    assert stats["lookups"] == 2 * len(stream)


@pytest.mark.parametrize("name", sorted(SEEN_ALGORITHMS))
def test_registry_builds_named_protocol_instances(name):
    seen = make_seen(name, capacity=1000)
    assert isinstance(seen, UrlSeen)
    assert seen.name == name
    assert len(seen) == 0 and "http://example.com/" not in seen
    assert seen.add("http://example.com/") is True
    assert seen.add("http://example.com/") is False
    assert len(seen) == 1


def test_make_seen_rejects_unknown_name_listing_valid_ones():
    with pytest.raises(ValueError) as error:
        make_seen("sha1")
    message = str(error.value)
    assert "'sha1'" in message
    for name in ("set", "ascii", "intstring", "stringhash", "md5", "bloom", "sieve"):
        assert name in message


def test_contains_does_not_record():
    for name in SEEN_ALGORITHMS:
        seen = make_seen(name, capacity=100)
        assert "http://example.com/a" not in seen
        assert len(seen) == 0
        assert seen.add("http://example.com/a") is True


# -- ASCII sum -------------------------------------------------------------

def test_ascii_sum_chains_permutations_and_counts_comparisons():
    seen = make_seen("ascii")
    urls = ["http://h/abc", "http://h/acb", "http://h/bac", "http://h/cba"]
    for url in urls:
        seen.add(url)
    stats = seen.stats()
    assert stats["distinct_keys"] == 1
    assert stats["max_chain"] == 4
    assert stats["probes"] == 0 + 1 + 2 + 3          # each new URL compared with the whole chain
    assert "http://h/cba" in seen
    assert seen.stats()["probes"] == 6 + 4
    assert "http://h/bca" not in seen                  # same sum, absent: compared with all four
    assert seen.stats()["probes"] == 10 + 4
    assert "http://h/zzz" not in seen                  # empty row: the flag answers, no comparison
    assert seen.stats()["probes"] == 14


# -- IntString / Java hashCode ------------------------------------------------

@pytest.mark.parametrize("text, expected", [
    ("", 0), ("Aa", 2112), ("BB", 2112), ("hello", 99162322),
    ("hello world", 1794106052), ("Hello", 69609650),
])
def test_java_hashcode_known_values(text, expected):
    assert java_hashcode_reference(text) == expected
    assert java_hashcode(text) == expected


def test_java_hashcode_fast_equals_reference():
    rng = random.Random(11)
    alphabet = "abcXYZ/:?=&%09~é€中\U0001f600\U00010348"   # astral characters are surrogate pairs
    samples = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 200))) for _ in range(500)]
    samples += ["x" * 4096, "y" * 4097, "é" * 9000 + "\U0001f600", "http://h/" + "Aa" * 3000]
    for text in samples:
        assert java_hashcode(text) == java_hashcode_reference(text), text[:40]
    assert all(-2**31 <= java_hashcode(text) < 2**31 for text in samples)


def test_intstring_separates_hashcode_collisions():
    seen = make_seen("intstring")
    urls = [f"http://example.com/{a}{b}" for a in ("Aa", "BB") for b in ("Aa", "BB")]
    assert len({java_hashcode(url) for url in urls}) == 1
    assert [seen.add(url) for url in urls] == [True] * 4
    assert all(url in seen for url in urls)
    stats = seen.stats()
    assert stats["distinct_keys"] == 1 and stats["max_chain"] == 4
    assert stats["probes"] == (0 + 1 + 2 + 3) + (1 + 2 + 3 + 4)


# -- StringHash (MPQ) ---------------------------------------------------------

def test_mpq_known_values():
    assert mpq_hash_reference(b"UNIT\\NEUTRAL\\ACRITTER.GRP", 0) == 0xA26067F3
    assert mpq_hashes(b"UNIT\\NEUTRAL\\ACRITTER.GRP")[0] == 0xA26067F3
    assert len(CRYPT_TABLE) == 0x500
    assert CRYPT_TABLE[:2] == (0x55C636E2, 0x02BE0170)


def test_mpq_does_not_fold_case():
    assert mpq_hashes(b"http://h/Page") != mpq_hashes(b"http://h/page")


def test_mpq_fast_equals_reference():
    rng = random.Random(3)
    samples = [bytes(range(256)), b"", b"\xff" * 300]
    samples += [rng.randbytes(rng.randint(1, 120)) for _ in range(300)]
    for data in samples:
        expected = tuple(mpq_hash_reference(data, hash_type) for hash_type in (0, 1, 2))
        assert mpq_hashes(data) == expected


def test_stringhash_keeps_answers_through_rehashes():
    seen = StringHashSeen(initial_slots=8)
    urls = random_urls(random.Random(5), 6000)
    assert_behaves_like_a_set(seen, urls)
    stats = seen.stats()
    assert stats["rehashes"] >= 8
    assert stats["slots"] >= 2 * len(seen)
    assert stats["slots"] & (stats["slots"] - 1) == 0      # a power of two
    assert all(url in seen for url in urls)


def test_stringhash_linear_probing_wraps_and_survives_growth(monkeypatch):
    # Every URL gets the last slot as home, so runs wrap past the end and a
    # lookup compares checks along one long cluster.
    real = stringhash.mpq_hashes
    monkeypatch.setattr(stringhash, "mpq_hashes", lambda data: (0xFFFFFFFF, *real(data)[1:]))
    seen = StringHashSeen(initial_slots=8)
    urls = [f"http://example.com/{i}" for i in range(100)]
    assert_behaves_like_a_set(seen, urls + urls[::3])
    stats = seen.stats()
    assert stats["max_chain"] == 100                       # the last URL, found at the end of the run
    assert stats["rehashes"] == 5                          # 8 -> 256 slots for 100 URLs


def test_stringhash_identifies_urls_by_both_checks_only(monkeypatch):
    # What a 64-bit collision would do: equal (A, B) means "seen", whatever the text.
    monkeypatch.setattr(stringhash, "mpq_hashes", lambda data: (len(data), 1, 2 if b"b" in data else 3))
    seen = StringHashSeen()
    assert seen.add("http://h/a") is True
    assert seen.add("http://h/c") is False                 # same checks: a false positive
    assert seen.add("http://h/b") is True                  # check B differs
    assert len(seen) == 2


# -- Bloom ----------------------------------------------------------------------

def test_bloom_sizing_follows_the_formulas():
    seen = make_seen("bloom", capacity=10_000, error_rate=0.01)
    stats = seen.stats()
    m = math.ceil(-10_000 * math.log(0.01) / math.log(2) ** 2)
    assert stats["bits"] == m
    assert stats["hashes"] == round(m / 10_000 * math.log(2)) == 7
    assert stats["bytes"] >= m // 8
    with pytest.raises(ValueError, match="capacity"):
        BloomSeen(capacity=0)
    with pytest.raises(ValueError, match="error_rate"):
        BloomSeen(error_rate=1.0)


def test_bloom_has_no_false_negatives_and_about_the_target_false_positive_rate():
    n, p = 100_000, 1e-3
    seen = make_seen("bloom", capacity=n, error_rate=p)
    added = [f"http://example.com/page/{i}?ref={i * 31 % 977}" for i in range(n)]
    new_answers = sum(seen.add(url) for url in added)
    assert all(url in seen for url in added)                # no false negatives
    assert n - new_answers <= 2 * p * n                     # adds wrongly called duplicates
    assert len(seen) == new_answers
    others = (f"http://example.org/other/{i}" for i in range(n))
    false_positives = sum(url in seen for url in others)
    assert p / 2 * n <= false_positives <= 2 * p * n


# -- Sieve (RAM buffers over a sorted file) -------------------------------------

def sieve_file(directory) -> list[int]:
    [path] = directory.glob("keys.*")
    keys = array("Q")
    keys.frombytes(path.read_bytes())
    return keys.tolist()


def test_sieve_answers_like_a_set_through_every_level(tmp_path):
    # Tiny levels: the buffer is sorted into the RAM run every 16 new URLs and
    # the run merged into the file every 64, so answers come from all three.
    rng = random.Random(9)
    stream = interleave_duplicates(rng, random_urls(rng, 3000) + adversarial_urls(rng))
    seen = SieveSeen(tmp_path, buffer_size=16, run_size=64)
    assert_behaves_like_a_set(seen, stream)
    stats = seen.stats()
    assert stats["flushes"] >= len(seen) // 64 - 1
    assert stats["disk_reads"] > len(stream) // 2
    keys = sieve_file(tmp_path)
    assert keys == sorted(set(keys)) and len(keys) == stats["disk_bytes"] // 8
    assert {sieve.fingerprint(url) for url in stream} >= set(keys)
    seen.flush()
    assert len(sieve_file(tmp_path)) == len(seen) == len(set(stream))
    assert all(url in seen for url in stream)


def test_sieve_lookup_reads_one_block_at_most(tmp_path):
    seen = SieveSeen(tmp_path, buffer_size=8, run_size=8)
    urls = [f"http://h.test/{i}" for i in range(5000)]
    for url in urls:
        seen.add(url)
    seen.flush()
    before = seen.stats()["disk_reads"]
    assert all(url in seen for url in urls[::50])
    assert seen.stats()["disk_reads"] - before == len(urls[::50])
    assert len(sieve_file(tmp_path)) > 2 * sieve.BLOCK_KEYS     # more than one block to choose from


def test_sieve_merges_into_its_file_without_holding_the_file_in_ram(tmp_path, monkeypatch):
    monkeypatch.setattr(sieve, "MERGE_CHUNK", 1024)           # the file is merged in 8 KiB chunks
    seen = SieveSeen(tmp_path, buffer_size=1024, run_size=4096)
    for i in range(70_000):
        seen.add(f"http://h.test/{i}")
    file_bytes = seen.stats()["disk_bytes"]
    assert file_bytes >= 8 * 65_536                           # 512 KiB on disk, 64 chunks
    tracemalloc.start()
    try:
        seen.flush()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < file_bytes / 4, (peak, file_bytes)
    assert len(sieve_file(tmp_path)) == len(seen) == 70_000


def test_sieve_writes_nothing_before_its_first_flush(tmp_path):
    seen = SieveSeen(tmp_path / "seen", buffer_size=100, run_size=1000)
    for i in range(999):
        seen.add(f"http://h.test/{i}")
    assert not (tmp_path / "seen").exists()
    seen.add("http://h.test/last")
    assert [p.name.startswith("keys.") for p in (tmp_path / "seen").iterdir()] == [True]


def test_sieve_starts_empty_over_files_a_killed_crawl_left(tmp_path):
    first = SieveSeen(tmp_path, buffer_size=4, run_size=4)
    for url in ("http://h.test/a", "http://h.test/b", "http://h.test/c", "http://h.test/d"):
        first.add(url)
    first._closer.detach()              # as a kill -9 would: the file stays
    assert len(list(tmp_path.glob("keys.*"))) == 1
    second = SieveSeen(tmp_path, buffer_size=4, run_size=4)
    assert list(tmp_path.glob("keys.*")) == []
    assert len(second) == 0 and "http://h.test/a" not in second
    assert second.add("http://h.test/a") is True


def test_sieve_removes_its_files_when_closed_or_collected(tmp_path):
    seen = SieveSeen(tmp_path / "one", buffer_size=2, run_size=2)
    seen.add("http://h.test/a"), seen.add("http://h.test/b")
    assert (tmp_path / "one").is_dir()
    seen.close()
    assert not (tmp_path / "one").exists() and len(seen) == 0
    assert seen.add("http://h.test/a") is True
    other = SieveSeen(tmp_path / "two", buffer_size=2, run_size=2)
    other.add("http://h.test/a"), other.add("http://h.test/b")
    del other
    gc.collect()
    assert not (tmp_path / "two").exists()


def test_sieve_keeps_its_file_when_a_later_sieve_of_the_directory_is_collected(tmp_path):
    # A crawl restarted in one process: the old sieve goes after the new one began.
    old = SieveSeen(tmp_path, buffer_size=2, run_size=2)
    old.add("http://h.test/old"), old.add("http://h.test/older")
    new = SieveSeen(tmp_path, buffer_size=2, run_size=2)
    new.add("http://h.test/a"), new.add("http://h.test/b")
    del old
    gc.collect()
    new.add("http://h.test/c"), new.add("http://h.test/d")      # merges with its file
    assert all(f"http://h.test/{x}" in new for x in "abcd") and len(new) == 4


def test_sieve_without_a_directory_uses_a_temporary_one(tmp_path):
    seen = make_seen("sieve")
    assert seen.directory is None
    small = SieveSeen(buffer_size=1, run_size=1)
    small.add("http://h.test/a")
    directory = small.directory
    assert directory.is_dir()
    small.close()
    assert not directory.exists()


def test_sieve_identifies_urls_by_fingerprint_only(tmp_path, monkeypatch):
    # What a 64-bit collision would do, in RAM and on disk alike.
    monkeypatch.setattr(sieve, "fingerprint", lambda url: len(url))
    seen = SieveSeen(tmp_path, buffer_size=2, run_size=2)
    assert seen.add("http://h/a") is True
    assert seen.add("http://h/c") is False                 # same fingerprint: a false positive
    assert seen.add("http://h/bb") is True                 # flushed to the file
    assert seen.add("http://h/zz") is False and seen.add("http://h/c") is False
    assert seen.stats()["disk_reads"] >= 2


def test_sieve_sizes_must_nest():
    with pytest.raises(ValueError, match="buffer_size"):
        SieveSeen(buffer_size=0)
    with pytest.raises(ValueError, match="run_size"):
        SieveSeen(buffer_size=8, run_size=4)


# -- memory accounting ------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(SEEN_ALGORITHMS))
def test_reported_bytes_match_measured_allocations(name):
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        seen = make_seen(name)
        for i in range(20_000):
            # URLs are built here and kept only if the structure keeps them.
            seen.add(f"http://example.com/section/{i % 97}/article-{i}.html?ref={i * 7}")
        measured = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    reported = seen.stats()["bytes"]
    assert 0.8 * measured <= reported <= 1.25 * measured, (reported, measured)

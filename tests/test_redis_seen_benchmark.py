"""The Redis URL-seen scripts of benchmarks/redis_seen.py answer "added; was it new?"
right on a real redis-server, and the benchmark stores what it measured.

The acknowledgement script of the distributed crawl takes its seen-set snippet
from there, so its answers are checked here, not only timed.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # the repository root holds benchmarks/

from benchmarks import redis_seen as rs  # noqa: E402

VARIANTS = rs.all_variants(raised=2048)


def scripts(client, variant):
    return client.register_script(variant.add_lua), client.register_script(variant.check_lua)


def answers(script, variant, fps, client):
    keys, args = variant.call(fps)
    return script(keys=keys, args=args, client=client)


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: v.name)
def test_a_fingerprint_is_new_once_even_twice_in_one_batch(redis_server, variant):
    client = redis_server.client()
    add, check = scripts(client, variant)
    variant.prepare(client, 1000)
    a, b, c = rs.fingerprints(0, 3)
    assert answers(check, variant, [a, b], client) == [0, 0]
    assert answers(add, variant, [a, b, a], client) == [1, 1, 0]
    assert answers(add, variant, [c, b], client) == [1, 0]
    assert answers(check, variant, [a, b, c], client) == [1, 1, 1]


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: v.name)
def test_the_check_script_writes_nothing(redis_server, variant):
    client = redis_server.client()
    add, check = scripts(client, variant)
    variant.prepare(client, 1000)
    before = client.dbsize(), client.info("persistence")["aof_current_size"]
    answers(check, variant, rs.fingerprints(0, 40), client)
    assert (client.dbsize(), client.info("persistence")["aof_current_size"]) == before


def test_fingerprints_with_the_top_bit_set_are_negative_intset_members(redis_server):
    client = redis_server.client()
    variant = rs.IntsetBuckets(2)
    fps = [bytes([0x80]) + bytes(7), bytes([0xFF]) * 8, bytes(8)]
    keys, args = variant.call(fps)
    assert args == [-2**63, -1, 0]
    assert keys == ["{crawl}:seen:1", "{crawl}:seen:1", "{crawl}:seen:0"]
    add, _ = scripts(client, variant)
    assert answers(add, variant, fps, client) == [1, 1, 1]
    assert client.object("encoding", "{crawl}:seen:1") == b"intset"


def test_a_bucket_past_the_intset_limit_becomes_a_hashtable(redis_server):
    client = redis_server.client()
    one, raised = rs.IntsetBuckets(1), rs.IntsetBuckets(1, intset_entries=1000)
    add, _ = scripts(client, one)
    answers(add, one, rs.fingerprints(0, 512), client)
    assert client.object("encoding", "{crawl}:seen:0") == b"intset"
    answers(add, one, rs.fingerprints(512, 1), client)   # 513 > the default 512
    assert client.object("encoding", "{crawl}:seen:0") == b"hashtable"
    client.delete("{crawl}:seen:0")
    raised.prepare(client, 1000)
    answers(add, raised, rs.fingerprints(0, 1000), client)
    assert client.object("encoding", "{crawl}:seen:0") == b"intset"


def test_the_bloom_filter_keeps_near_its_false_positive_rate(redis_server):
    client = redis_server.client()
    bloom = rs.BloomBitfield(0.01)
    add, check = scripts(client, bloom)
    bloom.prepare(client, 4000)
    assert client.strlen(bloom.key) == (bloom.bits + 7) // 8
    fill = rs.fingerprints(0, 4000)
    for i in range(0, 4000, 40):
        answers(add, bloom, fill[i:i + 40], client)
    fresh = rs.fingerprints(4000, 4000)
    false_positives = sum(sum(answers(check, bloom, fresh[i:i + 40], client)) for i in range(0, 4000, 40))
    assert 0.002 <= false_positives / 4000 <= 0.03   # p = 0.01: about 40 of 4,000
    assert sum(answers(check, bloom, fill[:40], client)) == 40   # no false negatives


def test_the_benchmark_stores_its_runs_and_one_section(tmp_path):
    results_md = tmp_path / "RESULTS.md"
    results_md.write_text("# Benchmark results\n\n## another benchmark\n\nits table\n", encoding="utf-8")
    conclusion = tmp_path / "conclusion.md"
    conclusion.write_text("The reading.\n", encoding="utf-8")
    args = ["--sizes", "2000", "--rounds", "1", "--probe-urls", "50", "--variants", "set",
            "--results-dir", str(tmp_path), "--results-md", str(results_md), "--conclusion", str(conclusion)]
    for _ in range(2):
        result = CliRunner().invoke(rs.main, args)
        assert result.exit_code == 0, result.output
    stored = json.loads((tmp_path / "redis" / "seen.json").read_text(encoding="utf-8"))
    (row,) = stored["rows"]
    assert row["n"] == 2000 and row["variant"] == "set" and row["encodings"] == {"hashtable": 1}
    assert row["bytes_per_url"] > 8 and row["false_positive_rate"] == 0
    text = results_md.read_text(encoding="utf-8")
    assert text.count(rs.SECTION_TITLE) == 1 and "## another benchmark" in text
    assert "The reading." in text and "| 2,000 | set |" in text
    assert (tmp_path / "redis-seen.md").read_text(encoding="utf-8") in text

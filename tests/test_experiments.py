"""The experiments: corpora, compare_dedup.py and compare_extractors.py run on tiny inputs and
write what they promise; plus the URL-seen counters the dedup experiment reads."""
from __future__ import annotations

import csv
import json
import os
import random
import struct
import subprocess
import sys
import zlib
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from urlfilter import make_seen
from urlfilter.intstring import java_hashcode_reference
from urlfilter.stringhash import StringHashSeen

ROOT = Path(__file__).resolve().parent.parent
EXPERIMENTS = ROOT / "experiments"
sys.path.insert(0, str(EXPERIMENTS))   # the scripts import their siblings by plain name

import compare_dedup  # noqa: E402
import compare_extractors  # noqa: E402
import corpora  # noqa: E402

EXACT = ("set", "ascii", "intstring", "stringhash", "md5")
DEDUP_COLUMNS = ["algorithm", "n", "unique", "ns_per_op", "probes_per_op", "bytes_per_url",
                 "max_chain", "mean_chain", "distinct_keys", "false_positives", "false_negatives"]
DEDUP_TABLE_HEADER = ("| algorithm | n | unique | ns/op | probes/op | bytes/URL | traced bytes/URL | "
                      "max chain | mean chain | distinct keys | FP | FN | held-out FP rate | "
                      "held-out probes |")


def read_csv(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    with path.open(newline="", encoding="utf-8") as file:
        reader = csv.DictReader(file)
        return list(reader.fieldnames or []), list(reader)


def assert_valid_png(path: Path) -> tuple[int, int]:
    """Signature, an IHDR chunk with a sane size and a correct CRC, and an IEND at the end."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", path
    length, kind = struct.unpack(">I4s", data[8:16])
    assert (length, kind) == (13, b"IHDR"), path
    width, height = struct.unpack(">II", data[16:24])
    assert 300 <= width <= 2000 and 200 <= height <= 1500, (path, width, height)
    assert zlib.crc32(data[12:29]) == struct.unpack(">I", data[29:33])[0], path
    assert data[-8:-4] == b"IEND", path
    assert len(data) < 300_000, (path, len(data))      # commit-sized
    return width, height


# -- corpora -----------------------------------------------------------------------------

def test_generated_corpus_is_deterministic_and_grows_by_prefix():
    stream = corpora.generate_urls(3000, seed=5)
    assert stream == corpora.generate_urls(3000, seed=5)
    assert stream[:700] == corpora.generate_urls(700, seed=5)
    assert stream != corpora.generate_urls(3000, seed=6)
    assert all(url.startswith(("http://", "https://")) for url in stream)


def test_generated_corpus_in_a_process_with_another_hash_seed_is_the_same():
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import corpora, hashlib; "
            "print(hashlib.sha256('\\n'.join(corpora.generate_urls(2000)).encode()).hexdigest())")
    digests = set()
    for hash_seed in ("1", "12345"):
        result = subprocess.run([sys.executable, "-c", code, str(EXPERIMENTS)], capture_output=True,
                                text=True, env={**os.environ, "PYTHONHASHSEED": hash_seed}, check=True)
        digests.add(result.stdout.strip())
    assert len(digests) == 1


@pytest.mark.parametrize("ratio", [0.0, 0.3, 0.8])
def test_generated_corpus_has_the_chosen_duplicate_ratio(ratio):
    stream = corpora.generate_urls(20_000, seed=1, duplicate_ratio=ratio)
    duplicates = len(stream) - len(set(stream))
    assert abs(duplicates / len(stream) - ratio) < 0.02


def test_generated_corpus_holds_trap_twins_with_equal_byte_sums():
    stream = corpora.generate_urls(5000, seed=3, duplicate_ratio=0.0, trap_ratio=0.5)
    by_bytes = Counter("".join(sorted(url)) for url in stream)
    in_anagram_groups = sum(count for count in by_bytes.values() if count > 1)
    assert in_anagram_groups > 0.4 * len(stream)
    none_wanted = corpora.generate_urls(5000, seed=3, duplicate_ratio=0.0, trap_ratio=0.0)
    assert sum(c for c in Counter("".join(sorted(u)) for u in none_wanted).values() if c > 1) < 0.05 * 5000


def test_trap_twin_permutes_bytes_and_never_returns_the_same_url():
    rng = random.Random(9)
    url = "https://shop.example.com/products/toys/red-fast-car?id=4381&color=red&size=7"
    twins = {corpora.trap_twin(rng, url) for _ in range(200)} - {None}
    assert len(twins) > 10 and url not in twins
    assert all(sorted(twin) == sorted(url) for twin in twins)
    assert corpora.trap_twin(rng, "http://h/") is None


def write_crawl_dir(directory: Path) -> None:
    directory.mkdir()
    (directory / "index.csv").write_text(
        "id,url,final_url,level,parent_id,status,content_type,encoding,bytes,text_chars,"
        "filtered_ratio,out_links,new_links,fetched_at,elapsed_ms,html_path,text_path,error,title\n"
        "0,http://h/,http://h/,0,,200,text/html,utf-8,10,1,0,2,2,t,1,pages/0.html,text/0.txt,,Home\n"
        "1,http://h/a,http://h/a,1,0,200,text/html,utf-8,10,1,0,2,1,t,1,pages/1.html,text/1.txt,,A\n"
        "2,http://h/b,http://h/b,1,0,404,text/html,utf-8,10,1,0,0,0,t,1,,,http 404,\n",
        encoding="utf-8")
    (directory / "edges.csv").write_text(
        "from_id,from_url,to_url\n0,http://h/,http://h/a\n0,http://h/,http://h/b\n"
        "1,http://h/a,http://h/\n1,http://h/a,\"http://h/c?x=1,2\"\n", encoding="utf-8")


def test_crawl_corpus_is_seeds_then_edges_in_discovery_order(tmp_path):
    write_crawl_dir(tmp_path / "crawl")
    assert corpora.crawl_urls(tmp_path / "crawl") == [
        "http://h/", "http://h/a", "http://h/b", "http://h/", "http://h/c?x=1,2"]
    corpus = corpora.load_corpus(f"crawl:{tmp_path / 'crawl'}", 3)
    assert corpus.urls == ("http://h/", "http://h/a", "http://h/b")
    assert "3 URLs" in corpus.description and corpus.seed is None


def test_file_corpus_skips_blank_lines_and_comments_and_keeps_duplicates(tmp_path):
    path = tmp_path / "urls.txt"
    path.write_bytes(b"# exported\nhttp://h/1\n\n  http://h/2  \nhttp://h/1\nhttp://h/\xff\n")
    assert corpora.file_urls(path) == ["http://h/1", "http://h/2", "http://h/1", "http://h/\ufffd"]


def test_bad_corpus_specs_say_what_is_wrong(tmp_path):
    with pytest.raises(ValueError, match="use generated, crawl:DIR or file:PATH"):
        corpora.load_corpus("crawl:", 10)
    with pytest.raises(ValueError, match="has no edges.csv"):
        corpora.load_corpus(f"crawl:{tmp_path}", 10)
    with pytest.raises(ValueError, match="cannot read URL file"):
        corpora.load_corpus(f"file:{tmp_path / 'missing.txt'}", 10)


# -- the counters compare_dedup reads ------------------------------------------------

def test_stringhash_mean_chain_is_the_probes_a_stored_url_costs_to_find():
    seen = StringHashSeen(initial_slots=8)                 # forces rehashes on the way
    urls = corpora.generate_urls(6000, seed=2, duplicate_ratio=0.0)
    for url in urls:
        seen.add(url)
    stats = seen.stats()
    assert stats["rehashes"] >= 9
    for url in urls:
        assert url in seen
    measured = (seen.stats()["probes"] - stats["probes"]) / len(urls)
    assert stats["mean_chain"] == pytest.approx(measured)
    assert 1.0 < stats["mean_chain"] < 2.0


def test_ascii_chain_lengths_and_mean_chain_describe_the_rows():
    seen = make_seen("ascii")
    urls = ["http://h/abc", "http://h/acb", "http://h/bca", "http://h/x", "http://h/y"]
    for url in urls:
        seen.add(url)
    lengths = seen.chain_lengths()
    assert lengths == {sum(b"http://h/abc"): 3, sum(b"http://h/x"): 1, sum(b"http://h/y"): 1}
    assert list(lengths) == sorted(lengths)
    assert seen.stats()["mean_chain"] == pytest.approx(5 / 3)


def test_intstring_mean_chain_counts_urls_per_hashcode():
    seen = make_seen("intstring")
    for url in [f"http://example.com/{a}{b}" for a in ("Aa", "BB") for b in ("Aa", "BB")]:
        seen.add(url)
    seen.add("http://example.com/other")
    assert seen.stats()["mean_chain"] == pytest.approx(5 / 2)


# -- compare_dedup.py ---------------------------------------------------------------------

def test_compare_dedup_script_fixes_the_hash_seed_and_writes_table_csv_and_plots(tmp_path):
    out = tmp_path / "out"
    env = {key: value for key, value in os.environ.items() if key != "PYTHONHASHSEED"}
    result = subprocess.run(
        [sys.executable, str(EXPERIMENTS / "compare_dedup.py"), "--sizes", "300,2e3", "--repeat", "2",
         "--heldout", "4000", "--bloom-error", "0.05", "--out", str(out)],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert result.returncode == 0, result.stderr
    assert DEDUP_TABLE_HEADER in result.stdout
    assert "**PYTHONHASHSEED**: 0" in result.stdout

    columns, rows = read_csv(out / "results.csv")
    assert columns[:len(DEDUP_COLUMNS)] == DEDUP_COLUMNS
    assert [(row["algorithm"], row["n"]) for row in rows] == [
        (name, n) for n in ("300", "2000")
        for name in ("set", "ascii", "intstring", "stringhash", "md5", "bloom", "sieve")]
    stream = corpora.generate_urls(2000)
    for row in rows:
        n = int(row["n"])
        assert int(row["unique"]) == len(set(stream[:n]))
        assert float(row["ns_per_op"]) > 0 and float(row["bytes_per_url"]) > 0
        assert float(row["traced_bytes_per_url"]) > 0            # n is under --trace-memory-up-to
        assert int(row["heldout_lookups"]) > 3500
    for row in rows:
        if row["algorithm"] in EXACT:
            assert (row["false_positives"], row["false_negatives"], row["heldout_false_positives"]) == (
                "0", "0", "0"), row
    bloom = next(row for row in rows if row["algorithm"] == "bloom" and row["n"] == "2000")
    assert bloom["false_negatives"] == "0" and bloom["distinct_keys"] == ""
    assert 0.025 <= int(bloom["heldout_false_positives"]) / int(bloom["heldout_lookups"]) <= 0.1
    assert float(bloom["bytes_per_url"]) < 1                     # -ln(0.05)/ln(2)**2 bits = 0.78 bytes

    table = (out / "results.md").read_text(encoding="utf-8")
    assert DEDUP_TABLE_HEADER in table and table.count("\n| ") == 1 + len(rows)
    info = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert info["hash_seed"] == "0" and info["seed"] == 2026
    assert "generated: 2,000 URLs, seed 2026" in info["corpus"]
    assert {"date", "machine", "python", "seconds"} <= info.keys()
    for name in ("time_per_op", "bytes_per_url", "probes_per_op", "ascii_chains"):
        assert_valid_png(out / f"{name}.png")
    _, chains = read_csv(out / "ascii_chains.csv")
    ascii_largest = next(row for row in rows if row["algorithm"] == "ascii" and row["n"] == "2000")
    assert sum(int(row["chain_length"]) for row in chains) == int(ascii_largest["unique"])
    assert len(chains) == int(ascii_largest["distinct_keys"])


def test_compare_dedup_counts_every_comparison_on_urls_with_one_byte_sum(tmp_path):
    rng = random.Random(4)
    letters = list("abcdefgh")
    permutations = []
    while len(permutations) < 150:
        rng.shuffle(letters)
        url = "http://example.com/" + "".join(letters)
        if url not in permutations:
            permutations.append(url)
    stream = permutations + [rng.choice(permutations) for _ in range(100)]
    path = tmp_path / "urls.txt"
    path.write_text("\n".join(stream) + "\n", encoding="utf-8")

    result = CliRunner().invoke(compare_dedup.main, [
        "--corpus", f"file:{path}", "--sizes", "1e6", "--algorithms", "ascii,intstring,set",
        "--repeat", "1", "--heldout", "0", "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    rows = {row["algorithm"]: row for row in read_csv(tmp_path / "out" / "results.csv")[1]}
    ascii_row = rows["ascii"]
    assert (ascii_row["n"], ascii_row["unique"]) == ("250", "150")       # capped at the file's length
    assert (ascii_row["distinct_keys"], ascii_row["max_chain"]) == ("1", "150")
    assert float(ascii_row["mean_chain"]) == 150
    # A new URL is compared with the whole chain; a duplicate with the chain up to itself.
    expected = sum(range(150)) + sum(permutations.index(url) + 1 for url in stream[150:])
    assert float(ascii_row["probes_per_op"]) == pytest.approx(expected / 250)
    keys = {java_hashcode_reference(url) for url in permutations}
    assert rows["intstring"]["distinct_keys"] == str(len(keys))
    assert rows["set"]["max_chain"] == rows["set"]["mean_chain"] == ""   # not observable in C


@pytest.mark.parametrize("arguments, message", [
    (["--algorithms", "set,sha1"], "unknown sha1; choose from set,ascii"),
    (["--sizes", "1e3,lots"], "give comma-separated numbers"),
    (["--sizes", "0"], "sizes must be at least 1"),
    (["--heldout", "-5"], "give a whole number >= 0"),
    (["--corpus", "ftp:x"], "unknown corpus 'ftp:x'"),
])
def test_compare_dedup_rejects_bad_options_with_a_reason(tmp_path, arguments, message):
    result = CliRunner().invoke(compare_dedup.main, [*arguments, "--out", str(tmp_path / "out")])
    assert result.exit_code in (1, 2)
    assert message in result.output
    assert not (tmp_path / "out").exists()


# -- compare_extractors.py -------------------------------------------------------------

DISAGREEMENT = ("<script><!--<script>document.write('</script><a href=/inner>')</script>--></script>"
                "<a href=/outer>x</a>")


def write_page_crawl(directory: Path) -> None:
    (directory / "pages").mkdir(parents=True)
    pages = {
        "pages/0.html": ("text/html; charset=utf-8", f"<html><body>{DISAGREEMENT}</body></html>".encode()),
        "pages/1.html": ("text/html; charset=gbk",
                         "<p><a href='/新闻/1.html'>a</a> <a href=b.html>b</a> <a href=b.html>c</a>"
                         "<!-- <a href=/commented> --> <a href='mailto:x@y'>m</a></p>".encode("gbk")),
    }
    rows = ["id,url,level,content_type,html_path"]
    for number, (path, (content_type, body)) in enumerate(pages.items()):
        (directory / path).write_bytes(body)
        rows.append(f'{number},http://h/{number},0,"{content_type}",{path}')
    (directory / "index.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")


def test_compare_extractors_scores_the_regex_against_the_parser(tmp_path):
    crawl = tmp_path / "crawl"
    write_page_crawl(crawl)
    out = tmp_path / "out"
    result = CliRunner().invoke(compare_extractors.main, [
        "--corpus", "demo", "--corpus", f"crawl:{crawl}", "--limit", "25", "--repeat", "1",
        "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "| pages from | extractor | pages |" in result.output

    columns, rows = read_csv(out / "results.csv")
    assert columns[:10] == ["corpus", "extractor", "pages", "ms_per_page", "links", "reference_links",
                            "matched", "precision", "recall", "identical_pages"]
    by_key = {(row["corpus"], row["extractor"]): row for row in rows}
    assert set(by_key) == {(corpus, name) for corpus in ("demo", f"crawl:{crawl}")
                           for name in ("regex", "bs4", "bs4-html.parser", "lxml")}
    demo_bs4 = by_key[("demo", "bs4")]
    assert demo_bs4["pages"] == "25" and float(demo_bs4["precision"]) == 1.0
    assert int(demo_bs4["links"]) > 100
    # Page 0: the regex also reports /inner; page 1: the three links every extractor finds.
    regex = by_key[(f"crawl:{crawl}", "regex")]
    assert (regex["links"], regex["reference_links"], regex["matched"]) == ("5", "4", "4")
    assert (float(regex["precision"]), float(regex["recall"])) == (0.8, 1.0)
    assert regex["identical_pages"] == "1"
    lxml_row = by_key[(f"crawl:{crawl}", "lxml")]
    assert (lxml_row["links"], lxml_row["identical_pages"]) == ("4", "2")
    assert all(float(row["ms_per_page"]) > 0 for row in rows)

    differences = (out / "differences.md").read_text(encoding="utf-8")
    assert "`pages/0.html`: extra `/inner`" in differences
    info = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert "demo site, seed 2026: 25 pages" in info["corpus"] and "2 pages" in info["corpus"]
    assert_valid_png(out / "ms_per_page.png")


def test_compare_extractors_decodes_pages_by_the_recorded_charset(tmp_path):
    write_page_crawl(tmp_path / "crawl")
    pages = compare_extractors.crawl_pages(tmp_path / "crawl")
    assert [page.name for page in pages] == ["pages/0.html", "pages/1.html"]
    links = compare_extractors.CANDIDATES["regex"](pages[1].html)[1]
    assert links == ("/新闻/1.html", "b.html", "b.html")


def test_compare_extractors_rejects_an_unknown_corpus(tmp_path):
    result = CliRunner().invoke(compare_extractors.main, ["--corpus", "web", "--out", str(tmp_path / "o")])
    assert result.exit_code == 1
    assert "unknown page corpus 'web'; use demo or crawl:DIR" in result.output

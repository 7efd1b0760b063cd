"""compare_charsets.py on a subset of its languages: it writes what it promises, and the bar holds."""
from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

from click.testing import CliRunner

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "experiments"))   # the scripts import their siblings by plain name

import charset_corpus  # noqa: E402
import compare_charsets  # noqa: E402

SUBSET = "fr,nl,sv,pl,cs,el,tr,ru,uk,ja,zh-Hans"


def test_subset_run_writes_its_files_and_meets_the_bar(tmp_path):
    out = tmp_path / "charsets"
    result = CliRunner().invoke(compare_charsets.main, ["--languages", SUBSET, "--out", str(out)])
    assert result.exit_code == 0, result.output
    with (out / "results.csv").open(newline="", encoding="utf-8") as file:
        rows = list(csv.DictReader(file))
    assert {row["language"] for row in rows} == set(SUBSET.split(","))
    assert {row["declaration"] for row in rows} == set(charset_corpus.DECLARATIONS)
    assert {"ours_right", "normalizer_right", "chardet_right", "ours_codec_reproduces"} <= set(rows[0])
    run = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert run["bar"]["holds"], run["bar"]
    assert all(row["ours_codec_reproduces"] == "True" for row in rows)
    report = (out / "results.md").read_text(encoding="utf-8")
    assert "| declared in | pages | ours | charset-normalizer alone | chardet alone |" in report
    assert ": holds." in report


def test_every_case_of_the_matrix_is_counted_once():
    languages = [language for language in charset_corpus.LANGUAGES if language.code in ("fr", "ru")]
    cases = compare_charsets.cases(languages, stress=False)
    # fr: windows-1252, UTF-8, UTF-8 + BOM, UTF-16LE, UTF-16BE; ru: + KOI8-R and windows-1251
    pairs = 5 + 6
    assert len(cases) == pairs * len(charset_corpus.DECLARATIONS) * 4
    assert len({(c.language, c.codec, c.declaration, c.text) for c in cases}) == len(cases)


def test_a_wrong_decoding_is_scored_wrong():
    """The score is on the text: a page decoded with a code page that changes it is wrong."""
    language = next(language for language in charset_corpus.LANGUAGES if language.code == "fr")
    case = compare_charsets._case(language, "cp1252", "none", "short", language.sentences[0])
    rows = compare_charsets.measure([case], {"ours": compare_charsets.ours,
                                             "cp1250": lambda body, _: (body.decode("cp1250"), "cp1250")})
    assert (rows[0]["ours_right"], rows[0]["cp1250_right"]) == (True, False)

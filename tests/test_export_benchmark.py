"""benchmarks/export_memory.py end to end on a small site: it crawls, exports,
checks and stores, and its RESULTS.md section replaces only itself."""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # the repository root holds benchmarks/

from benchmarks.export_memory import SECTION_TITLE, VARIANTS, main, replace_section  # noqa: E402
from benchmarks.nginx import find_nginx  # noqa: E402

pytestmark = [
    pytest.mark.skipif(find_nginx() is None, reason="nginx not installed (apt-get install -y nginx)"),
    pytest.mark.skipif(not os.access("/usr/bin/time", os.X_OK), reason="GNU time not installed"),
]
OTHERS = "# Benchmark results\n\n## compare, before\n\nA table.\n\n## URL_Filter per link\n\nAnother.\n"


def run(tmp_path):
    args = ["--sizes", "120", "--rounds", "1", "--work", tmp_path / "work",
            "--results-dir", tmp_path / "results", "--results-md", tmp_path / "RESULTS.md"]
    done = CliRunner().invoke(main, [str(a) for a in args])
    assert done.exit_code == 0, done.output
    return done


def test_the_benchmark_measures_every_export_and_replaces_only_its_own_section(tmp_path):
    old = f"{SECTION_TITLE}\n\nold numbers\n"
    after = "## Polite crawling, later\n\nA third.\n"
    (tmp_path / "RESULTS.md").write_text(f"{OTHERS}\n{old}\n{after}", encoding="utf-8")
    run(tmp_path)
    raw, = (tmp_path / "results" / "export").glob("export-memory-*.json")
    result = json.loads(raw.read_text(encoding="utf-8"))
    assert [(r["pages"], r["variant"]) for r in result["rows"]] == [(120, v) for v in VARIANTS]
    assert all(r["rss_mb"] > 10 and r["wall_s"] > 0 and r["output_mb"] > 0 for r in result["rows"])
    assert [r["row_groups"] for r in result["rows"]] == [None, None, 1, 1]
    assert (tmp_path / "work" / "export-crawl-120" / "stats.json").is_file()   # kept for reuse
    assert not list((tmp_path / "work" / "runs").glob("export-120-*"))        # outputs deleted
    section = (tmp_path / "results" / "export-memory.md").read_text(encoding="utf-8")
    assert section.startswith(SECTION_TITLE) and "| 120 | parquet --html |" in section
    assert (tmp_path / "RESULTS.md").read_text(encoding="utf-8") == f"{OTHERS}\n{section}\n{after}"


def test_a_first_section_goes_after_the_others(tmp_path):
    results_md = tmp_path / "RESULTS.md"
    results_md.write_text(OTHERS, encoding="utf-8")
    replace_section(results_md, f"{SECTION_TITLE}\n\nnumbers\n")
    assert results_md.read_text(encoding="utf-8") == f"{OTHERS}\n{SECTION_TITLE}\n\nnumbers\n"

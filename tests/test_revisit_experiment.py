"""compare_revisits.py: its simulated server and meter measure what the model predicts, the two
controllers follow their source's rules, and a quick run writes its tables and keeps the budget."""
from __future__ import annotations

import csv
import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "experiments"))   # the scripts import their siblings by plain name

import compare_revisits as cr  # noqa: E402
from urllist.revisit import DAY, freshness  # noqa: E402


def test_the_server_answers_304_exactly_until_the_page_changes():
    site = cr.Site(np.array([1.0]), seed=3)
    site.crawl(0, 0.0)
    change = site.next_change[0]
    assert site.answer(0, change - 1) == (False, site.modified[0])
    changed, modified = site.answer(0, change + 10)
    assert changed and change <= modified <= change + 10
    assert site.next_change[0] > change + 10              # the next change comes after this copy


def test_the_meter_integrates_freshness_and_age_over_its_window():
    meter = cr.Meter(start=10.0, end=20.0, pages=1, sizes=[1000])
    meter.copy_held(0, taken=5.0, first_change=14.0, until=18.0)   # fresh 10..14, stale 14..18
    meter.copy_held(0, taken=18.0, first_change=30.0, until=20.0)  # fresh to the window's end
    assert meter.fresh[0] == pytest.approx(4 + 2)
    assert meter.age[0] == pytest.approx(4 ** 2 / 2)
    assert meter.summary()["freshness"] == pytest.approx(0.6)


def test_the_simulated_site_keeps_the_freshness_the_model_predicts():
    pages = 2000
    site = cr.Site(np.full(pages, 1.0), seed=5)
    policy = cr.Policy("uniform", pages, 1.0, (0.0, math.inf), known=[1.0 / DAY] * pages)
    meter = cr.simulate(site, policy, warmup_days=2, measure_days=20, seed=6)
    summary = meter.summary()
    # one change per interval: 1 - 1/e; per page sd over 20 intervals ~0.07, the mean's ~0.002
    assert summary["freshness"] == pytest.approx(freshness(1.0, 1.0), abs=0.01)
    assert summary["revisits_per_page_day"] == pytest.approx(1.0, abs=0.01)
    assert summary["share_304"] == pytest.approx(math.exp(-1), abs=0.02)


def test_nutch_multiplies_and_syncs_to_the_last_modified_date():
    nutch = cr.Nutch(1, initial=DAY)
    assert nutch.visited(0, 10 * DAY, changed=True, modified=None) == pytest.approx(10 * DAY + 0.8 * DAY)
    assert nutch.visited(0, 11 * DAY, changed=False, modified=None) == pytest.approx(11 * DAY + 0.96 * DAY)
    # unchanged since 5 days: the interval rises to that delta, the next fetch 0.2 delta earlier
    assert nutch.visited(0, 20 * DAY, changed=False, modified=15 * DAY) == pytest.approx(20 * DAY - DAY + 5 * DAY)
    assert nutch.interval[0] == pytest.approx(5 * DAY)
    bounded = cr.Nutch(1, min_interval=0.9 * DAY, initial=DAY)
    assert bounded.visited(0, 0.0, changed=True, modified=None) == pytest.approx(0.9 * DAY)


def test_stormcrawler_moves_towards_its_minimum_and_caps_at_its_maximum():
    storm = cr.StormCrawler(1)
    assert storm.start(0, 0.0, None) == 1440 * 60
    assert storm.visited(0, 0.0, changed=True, modified=None) == (1440 + 60) // 2 * 60
    assert storm.visited(0, 0.0, changed=False, modified=None) == int(750 * 1.5) * 60
    for _ in range(10):
        storm.visited(0, 0.0, changed=False, modified=None)
    assert storm.minutes[0] == 20_160


def test_the_classical_figures_come_out_of_the_allocation():
    closed = cr.closed_forms()
    assert closed["uniform"] == pytest.approx(0.715, abs=0.01)
    assert closed["proportional"] == pytest.approx(0.527, abs=0.01)
    assert cr.integrated("uniform")["freshness"] == pytest.approx(closed["uniform"], abs=1e-9)
    assert cr.integrated("optimal")["freshness"] == pytest.approx(0.752, abs=0.01)


def test_a_quick_run_writes_its_tables_and_spends_the_budget(tmp_path):
    out = tmp_path / "revisits"
    result = CliRunner().invoke(cr.main, ["--quick", "--distributions", "log-uniform", "--out", str(out)])
    assert result.exit_code == 0, result.output
    with (out / "classical.csv").open(newline="", encoding="utf-8") as file:
        classical = {row["policy"]: row for row in csv.DictReader(file)}
    for policy, row in classical.items():
        assert float(row["integrated"]) == pytest.approx(cr.PUBLISHED[policy], abs=0.01)
        # 2,000 pages drawn: the mean's sd from the draw alone is about 0.006
        assert float(row["simulated"]) == pytest.approx(cr.PUBLISHED[policy], abs=0.03)
    with (out / "results.csv").open(newline="", encoding="utf-8") as file:
        rows = list(csv.DictReader(file))
    assert {row["last_modified"] for row in rows} == {"True", "False"}
    assert len(rows) == 2 * (4 + 4)
    for row in rows:
        assert 0 <= float(row["freshness"]) <= 1 and 0 <= float(row["share_304"]) <= 1
        if row["setting"] != "defaults":                 # ours by allocation, the controllers by tuning
            assert float(row["revisits_per_page_day"]) == pytest.approx(1.0, rel=0.05), row
    assert "| optimal |" in (out / "results.md").read_text(encoding="utf-8")
    assert json.loads((out / "run.json").read_text(encoding="utf-8"))["pages"] == cr.QUICK["pages"]

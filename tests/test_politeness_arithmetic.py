"""The politeness-arithmetic experiment at a small size: Little's law holds on the real scheduler
and gate (start-to-start period, threads as the other bound), and with Zipf host sizes the rate
falls as the hosts run out, at one page per host with work per period."""
from __future__ import annotations

import csv
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

EXPERIMENTS = Path(__file__).resolve().parent.parent / "experiments"
sys.path.insert(0, str(EXPERIMENTS))   # the scripts import their siblings by plain name

import politeness_arithmetic as pa  # noqa: E402

POLITE = pa.Setup(delay=30.0, fetch=0.5, threads=200, jitter=0.5)
TOLERANCE = 0.10


@pytest.mark.parametrize("hosts", [30, 300, 1000])
def test_the_rate_is_hosts_over_the_delay_when_threads_are_plenty(hosts):
    row = pa.littles_law_row("series", hosts, 6, POLITE)
    assert row["limit"] == "politeness"
    assert row["predicted"] == pytest.approx(hosts / 30)
    assert row["measured"] == pytest.approx(row["predicted"], rel=TOLERANCE)
    assert row["smallest_gap"] >= 30 - 1e-9
    assert row["pages"] == hosts * 6


def test_threads_are_the_bound_when_they_are_few():
    row = pa.littles_law_row("threads", 1000, 6, pa.Setup(30.0, 0.5, 5, jitter=0.5))
    assert row["limit"] == "threads" and row["predicted"] == pytest.approx(10)
    assert row["measured"] == pytest.approx(10, rel=TOLERANCE)
    assert row["measured"] < 1000 / 30 / 2           # far below what politeness would allow


@pytest.mark.parametrize("delay, fetch", [(1.0, 0.5), (1.0, 2.0)])
def test_a_host_starts_one_page_per_max_of_delay_and_fetch_not_delay_plus_fetch(delay, fetch):
    setup = pa.Setup(delay, fetch, 2000, jitter=0.5)
    row = pa.littles_law_row("contrast", 200, 8, setup)
    assert row["measured"] == pytest.approx(200 / max(delay, fetch), rel=TOLERANCE)
    assert row["measured"] > 1.3 * row["end_to_start"]
    assert row["smallest_gap"] >= delay - 1e-9


def test_zipf_sizes_follow_the_rank_size_law():
    sizes = np.array(pa.zipf_sizes(20_000, 1.0, 10_000, seed=3))
    for x in (2, 10, 100):
        assert np.mean(sizes >= x) == pytest.approx(1 / x, rel=0.15)
    assert sizes.min() == 1 and sizes.max() <= 10_000
    assert pa.zipf_sizes(100, 1.0, 50, seed=3) == pa.zipf_sizes(100, 1.0, 50, seed=3)


@pytest.fixture(scope="module")
def zipf():
    sizes = pa.zipf_sizes(1500, 1.0, 400, seed=11)
    return sizes, pa.zipf_runs(sizes, 20, POLITE, [10, 25])


def test_zipf_rate_falls_as_hosts_run_out_and_follows_the_hosts_with_work(zipf):
    sizes, result = zipf
    whole = [row for row in result["rate"] if row["run"] == "no budget"]
    assert whole[0]["rate"] == pytest.approx(1500 / 30)          # every root in the first period
    assert whole[-1]["rate"] < whole[0]["rate"] / 20
    assert whole[-1]["hosts_with_work"] <= sum(size > 100 for size in sizes)
    rates = [row["rate"] for row in whole]
    assert all(later <= earlier * 1.05 for earlier, later in zip(rates, rates[1:]))
    for run in result["runs"]:
        assert run["host_use"] >= 0.99 and run["smallest_gap"] >= 30 - 1e-9
    assert result["runs"][0]["end"] >= (max(sizes) - 1) * 30


def test_the_rate_falls_below_a_target_when_the_hosts_with_work_do(zipf):
    _, result = zipf
    for row in result["targets"]:
        assert row["hosts_with_work"] <= row["hosts_needed"] < row["rate_before"] * 30
        assert 0 < row["share_done"] < 1


def test_a_per_host_budget_cuts_the_tail(zipf):
    sizes, result = zipf
    whole, budget = result["runs"]
    assert budget["pages"] == sum(min(size, 20) for size in sizes) < whole["pages"]
    assert budget["end"] <= 20 * 30 + 30                   # the budget's pages at one per delay, and a fetch
    assert budget["mean_rate"] > 10 * whole["mean_rate"]


def test_the_quick_run_writes_its_tables_and_plots(tmp_path):
    result = CliRunner().invoke(pa.main, ["--quick", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    with (tmp_path / "results.csv").open(newline="", encoding="utf-8") as file:
        rows = list(csv.DictReader(file))
    assert [int(row["hosts"]) for row in rows] == [30, 300, 3000] + [case[1] for case in pa.CONTRASTS]
    assert all(abs(float(row["measured"]) / float(row["predicted"]) - 1) < TOLERANCE for row in rows)
    for name in ("zipf_runs.csv", "zipf_targets.csv", "zipf_rate.csv", "results.md", "run.json"):
        assert (tmp_path / name).stat().st_size > 0, name
    for name in ("littles_law.png", "zipf_rate.png"):
        assert (tmp_path / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", name
    assert "## Hosts the queue must hold for a target rate" in result.output

"""The experiment scripts after the README's first command, `pip install -e .`, which brings no
matplotlib (only the `experiments` extra does): each script runs at its smallest size and writes
its tables and CSV; a script that draws plots says so in one line on stderr before it measures,
with the command that installs matplotlib; none ends in a traceback."""
from __future__ import annotations

import csv
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXPERIMENTS = ROOT / "experiments"
sys.path.insert(0, str(EXPERIMENTS))   # the scripts import their siblings by plain name

import report  # noqa: E402

# Run at start-up by every Python process with its directory on PYTHONPATH, the scripts' own
# re-run with PYTHONHASHSEED=0 included.  None in sys.modules is the import system's documented
# "no such module": `import matplotlib` raises ModuleNotFoundError and find_spec returns None.
SITECUSTOMIZE = 'import sys\nsys.modules["matplotlib"] = None\n'


@dataclass(frozen=True)
class Run:
    script: str
    arguments: tuple[str, ...]        # the smallest run the script supports; {tmp}: the test's directory
    outputs: tuple[str, ...]          # written with or without matplotlib
    plots: tuple[str, ...] = ()       # drawn only with matplotlib


RUNS = (
    Run("compare_dedup.py", ("--sizes", "300", "--repeat", "1", "--heldout", "100"),
        ("results.csv", "results.md", "run.json", "ascii_chains.csv"),
        ("time_per_op.png", "bytes_per_url.png", "probes_per_op.png", "ascii_chains.png")),
    Run("compare_extractors.py", ("--limit", "5", "--repeat", "1"),
        ("results.csv", "results.md", "run.json", "differences.md"), ("ms_per_page.png",)),
    Run("compare_near_dup.py", ("--articles", "20", "--seeds", "1", "--index-pages", "1000"),
        ("results.csv", "results.md", "run.json")),
    Run("compare_text_filters.py", ("--repeat", "1", "--no-trafilatura", "--pgdocs", "{tmp}/no-manual"),
        ("results.csv", "results.md", "run.json")),
    Run("compare_charsets.py", ("--languages", "en"), ("results.csv", "results.md", "run.json")),
    Run("politeness_arithmetic.py", ("--quick",), ("results.csv", "results.md", "run.json", "zipf_runs.csv",
        "zipf_targets.csv", "zipf_rate.csv"), ("littles_law.png", "zipf_rate.png")),
    Run("compare_orders.py", ("--quick", "--orders", "bfs", "--part", "importance"),
        ("results.csv", "results.md", "run.json"), ("importance.png",)),
    Run("compare_revisits.py", ("--quick",),
        ("results.csv", "classical.csv", "estimators.csv", "results.md", "run.json"), ("revisits.png",)),
    Run("compare_pacing.py", ("--quick",), ("results.csv", "results.md", "run.json")),
)
CHECKS = ("check_bfs_coverage.py",)   # reads a crawl and prints PASS or FAIL: no tables, no plots
# Conformance comparisons: print their table of rows right per parser, write
# nothing (tests/test_prescan.py and tests/test_robots_rfc9309.py check the rows).
COMPARISONS = ("compare_prescans.py", "compare_robots_parsers.py")


@pytest.fixture(scope="module")
def no_matplotlib(tmp_path_factory) -> dict[str, str]:
    """An environment in which Python processes find no matplotlib."""
    directory = tmp_path_factory.mktemp("no-matplotlib")
    (directory / "sitecustomize.py").write_text(SITECUSTOMIZE, encoding="utf-8")
    paths = [str(directory), *filter(None, [os.environ.get("PYTHONPATH")])]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}


def run_python(arguments: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *arguments], capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=120)


def matplotlib_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "matplotlib" in line]


def test_the_environment_really_has_no_matplotlib(no_matplotlib, tmp_path):
    probe = "import importlib.util; print(importlib.util.find_spec('matplotlib')); import matplotlib"
    result = run_python(["-c", probe], no_matplotlib, tmp_path)
    assert result.stdout == "None\n"
    assert "ModuleNotFoundError" in result.stderr
    assert run_python(["-c", "import matplotlib"], dict(os.environ), tmp_path).returncode == 0


@pytest.mark.parametrize("run", RUNS, ids=lambda run: run.script)
def test_script_without_matplotlib_writes_its_tables_and_says_how_to_get_the_plots(run, no_matplotlib,
                                                                                   tmp_path):
    out = tmp_path / "out"
    arguments = [argument.format(tmp=tmp_path) for argument in run.arguments]
    result = run_python([str(EXPERIMENTS / run.script), *arguments, "--out", str(out)], no_matplotlib,
                        tmp_path)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    for name in run.outputs:
        assert (out / name).stat().st_size > 0, name
    with (out / "results.csv").open(newline="", encoding="utf-8") as file:
        assert len(list(csv.reader(file))) >= 2              # a header and at least one row
    assert "\n|---|" in result.stdout                        # the table is printed too
    assert sorted(out.glob("*.png")) == []
    if run.plots:
        assert matplotlib_lines(result.stderr) == [report.PLOT_HINT]
        assert result.stderr.splitlines()[0] == report.PLOT_HINT   # said before any measuring
    else:
        assert matplotlib_lines(result.stderr) == []


def write_site_and_its_crawl(docroot: Path, crawl: Path, base: str) -> None:
    """A three-page static site and a crawl of it at the levels a BFS gives (0, 1, 2)."""
    pages = {"index.html": '<a href="a.html">a</a> <a href="sub/">sub</a>',
             "a.html": '<a href="sub/b.html">b</a> <a href="./">home</a>',
             "sub/index.html": "<p>no links</p>", "sub/b.html": "<p>end</p>"}
    levels = {"": 0, "a.html": 1, "sub/": 1, "sub/b.html": 2}
    for name, body in pages.items():
        (docroot / name).parent.mkdir(parents=True, exist_ok=True)
        (docroot / name).write_text(f"<html><body>{body}</body></html>", encoding="utf-8")
    (crawl / "pages").mkdir(parents=True)
    (crawl / "text").mkdir()
    rows = ["url,level,html_path,text_path"]
    for number, (path, level) in enumerate(levels.items()):
        source = docroot / (path + "index.html" if path.endswith("/") or not path else path)
        (crawl / f"pages/{number}.html").write_bytes(source.read_bytes())
        (crawl / f"text/{number}.txt").write_text("some text\n", encoding="utf-8")
        rows.append(f"{base}{path},{level},pages/{number}.html,text/{number}.txt")
    (crawl / "index.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")


def test_bfs_coverage_check_runs_without_matplotlib(no_matplotlib, tmp_path):
    base = "http://127.0.0.1:8000/"   # only compared as text: the check reads files, not the network
    write_site_and_its_crawl(tmp_path / "site", tmp_path / "crawl", base)
    result = run_python([str(EXPERIMENTS / "check_bfs_coverage.py"), str(tmp_path / "crawl"),
                         str(tmp_path / "site"), base, "--max-depth", "0"], no_matplotlib, tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "expected URLs (BFS of the files): 4; per level: 0:1, 1:2, 2:1" in result.stdout
    assert result.stdout.endswith("RESULT: PASS\n")
    assert result.stderr == ""


@pytest.mark.parametrize("script", COMPARISONS)
def test_a_conformance_comparison_runs_without_matplotlib(script, no_matplotlib, tmp_path):
    result = run_python([str(EXPERIMENTS / script)], no_matplotlib, tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert any(line.startswith("ours ") for line in result.stdout.splitlines())
    assert matplotlib_lines(result.stderr) == []


def test_every_script_is_run_here_and_listed_in_the_experiments_readme():
    scripts = {path.name for path in EXPERIMENTS.glob("*.py")
               if 'if __name__ == "__main__":' in path.read_text(encoding="utf-8")}
    assert scripts == {run.script for run in RUNS} | set(CHECKS) | set(COMPARISONS)
    readme = (EXPERIMENTS / "README.md").read_text(encoding="utf-8")
    assert [script for script in sorted(scripts) if f"`{script}`" not in readme] == []


def test_plotting_available_is_silent_when_matplotlib_is_installed(capsys):
    assert report.plotting_available() is True
    assert capsys.readouterr().err == ""


def test_plotting_available_without_matplotlib_writes_the_hint_once(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    assert report.plotting_available() is False
    assert capsys.readouterr().err == report.PLOT_HINT + "\n"
    assert "pip install -e '.[experiments]'" in report.PLOT_HINT and "\n" not in report.PLOT_HINT

"""The experiments' output conventions: run metadata, results.csv, Markdown tables, plot styling.

Every experiment writes into one directory: ``results.csv`` (one row per
measurement, numbers unformatted), ``results.md`` (what was run, where and
when, then the table), ``run.json`` (the same metadata, machine-readable) and
its PNG plots.  This module owns the parts they share: ``RunInfo`` (machine,
Python, date, hash seed, corpus, seed, command), the writers, and the check
for matplotlib, which only the ``experiments`` extra installs: without it a
run still writes its tables and CSV and skips the plots.
"""
from __future__ import annotations

import csv
import importlib.util
import json
import os
import platform
import shlex
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path

__all__ = ["PLOT_HINT", "Column", "RunInfo", "cpu_model", "fix_hash_seed", "markdown_table", "memory_gb",
           "peak_memory_mb", "plotting_available", "run_info", "write_csv", "write_json", "write_markdown"]

PLOT_HINT = ("plots skipped: matplotlib is not installed; to draw them, from the repository: "
             ".venv/bin/pip install -e '.[experiments]' (or: pip install matplotlib)")


@dataclass(frozen=True)
class RunInfo:
    """Where, when and on what an experiment ran; written at the top of every output."""
    experiment: str
    command: str
    date: str          # ISO 8601, UTC, to the second
    machine: str       # CPU model, logical cores, memory
    system: str        # operating system and architecture
    python: str        # implementation, version, compiler
    hash_seed: str     # PYTHONHASHSEED as the process saw it
    load: str          # the machine's load average when the run started (other work skews timings)
    corpus: str        # what was measured: source, size and seed in words
    seed: int | None

    def markdown(self) -> str:
        """The metadata as a Markdown bullet list."""
        fields = (("date", self.date), ("machine", self.machine), ("system", self.system),
                  ("python", self.python), ("PYTHONHASHSEED", self.hash_seed),
                  ("load at start", self.load),
                  ("corpus", self.corpus), ("seed", "—" if self.seed is None else str(self.seed)),
                  ("command", f"`{self.command}`"))
        return "\n".join(f"- **{name}**: {value}" for name, value in fields)


def fix_hash_seed() -> None:
    """Re-run the current script with PYTHONHASHSEED=0 unless the caller chose a value.

    str hashes -- and with them the layout of every set and dict, their
    probe sequences and the order a set is iterated in -- are randomised per
    process, so two runs of the same command would time the set baselines on
    different layouts.  With the seed fixed, a run is repeatable.  Call it
    only from a script's ``__main__`` block: it replaces the process.
    """
    if "PYTHONHASHSEED" not in os.environ:
        os.execve(sys.executable, [sys.executable, *sys.argv], {**os.environ, "PYTHONHASHSEED": "0"})


def plotting_available() -> bool:
    """True when matplotlib is installed; otherwise write PLOT_HINT as one line on stderr.

    A script calls it before measuring anything, so that a run without the
    ``experiments`` extra says at once that it will skip the plots, then
    writes its tables and CSV, instead of ending in a traceback at the first
    plot after all the work.  It looks matplotlib up without importing it:
    an import this early would put its objects on the heap that the timed
    runs' garbage collections walk, and into the run's peak memory.
    """
    if importlib.util.find_spec("matplotlib") is None:
        print(PLOT_HINT, file=sys.stderr)
        return False
    return True


def run_info(experiment: str, corpus: str, seed: int | None) -> RunInfo:
    """RunInfo for the current process."""
    return RunInfo(
        experiment=experiment,
        command=shlex.join(["python", *sys.argv]),
        date=datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        machine=_machine(),
        system=f"{platform.system()} {platform.release()} {platform.machine()}",
        python=f"{platform.python_implementation()} {platform.python_version()} "
               f"({platform.python_compiler()})",
        hash_seed=os.environ.get("PYTHONHASHSEED", "not set (random per process)"),
        load=_load(),
        corpus=corpus,
        seed=seed,
    )


def _machine() -> str:
    cores = os.cpu_count() or 0
    return f"{cpu_model()}, {cores} logical cores, {memory_gb():.0f} GB RAM"


def _load() -> str:
    try:
        one, five, _ = os.getloadavg()
    except OSError:   # not every platform keeps one
        return "unknown"
    return f"{one:.2f} (1 min), {five:.2f} (5 min)"


def cpu_model() -> str:
    """The CPU's model name (Linux /proc/cpuinfo), else what the platform says.
    Also used by benchmarks/report.py, so both describe a machine alike."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def memory_gb() -> float:
    """Installed memory in GB (Linux /proc/meminfo); 0.0 where unknown."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) / 2**20
    except OSError:
        pass
    return 0.0


def peak_memory_mb() -> float | None:
    """Peak resident memory of this process in MB, None where the platform does not say."""
    try:
        import resource
    except ImportError:
        return None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 2**20 if sys.platform == "darwin" else peak / 2**10   # bytes on macOS, KB elsewhere


@dataclass(frozen=True)
class Column:
    """One column of a results table: the row key, its Markdown header and how to show a value."""
    key: str
    header: str
    show: Callable[[object], str] = str


def write_csv(path: Path, keys: Sequence[str], rows: Iterable[Mapping[str, object]]) -> None:
    """rows as CSV with a header of keys; None is written as an empty cell."""
    with path.open("w", newline="", encoding="utf-8") as file:
        writer = csv.writer(file)
        writer.writerow(keys)
        for row in rows:
            writer.writerow(["" if row[key] is None else row[key] for key in keys])


def markdown_table(columns: Sequence[Column], rows: Iterable[Mapping[str, object]]) -> str:
    """A GitHub Markdown table; None shows as "—"."""
    lines = ["| " + " | ".join(column.header for column in columns) + " |",
             "|" + "|".join("---" if i == 0 else "---:" for i in range(len(columns))) + "|"]
    for row in rows:
        cells = ("—" if row[c.key] is None else c.show(row[c.key]) for c in columns)
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def write_markdown(path: Path, title: str, info: RunInfo, body: str) -> None:
    path.write_text(f"# {title}\n\n{info.markdown()}\n\n{body}\n", encoding="utf-8")


def write_json(path: Path, info: RunInfo, extra: Mapping[str, object]) -> None:
    path.write_text(json.dumps({**asdict(info), **extra}, indent=2) + "\n", encoding="utf-8")

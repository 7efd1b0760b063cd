"""One measured run of a command: wall time from the harness, CPU and peak RSS from GNU time.

`run_measured(argv, log_dir)` runs `/usr/bin/time -v -o <file> argv...` in a
new session, waits for it (killing the whole session on timeout), and returns
a `Measured` value. CPU and peak RSS come from the kernel's rusage of the
command as GNU time reports it: user and system seconds include every child
the command waited for (worker processes too), and the peak RSS is the
largest of the command and those children, not their sum.
"""
from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

GNU_TIME = "/usr/bin/time"
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Usage:
    user_s: float
    sys_s: float
    max_rss_kb: int
    exit_status: int | None   # as GNU time saw it; None when it did not say

    @property
    def cpu_s(self) -> float:
        return self.user_s + self.sys_s


@dataclass(frozen=True)
class Measured:
    argv: tuple[str, ...]
    exit_code: int            # of /usr/bin/time: the command's own status, or -signal
    wall_s: float             # harness clock, start of exec to exit
    usage: Usage
    timed_out: bool = False
    started_s: float = 0.0    # when the command was started, seconds since the epoch


_FIELDS = {
    "user_s": re.compile(r"^\s*User time \(seconds\):\s*([\d.]+)", re.M),
    "sys_s": re.compile(r"^\s*System time \(seconds\):\s*([\d.]+)", re.M),
    "max_rss_kb": re.compile(r"^\s*Maximum resident set size \(kbytes\):\s*(\d+)", re.M),
    "exit_status": re.compile(r"^\s*Exit status:\s*(\d+)", re.M),
}


def parse_time_v(text: str) -> Usage:
    """The fields the harness uses from `/usr/bin/time -v` output; missing ones are 0 / None."""
    found = {name: pattern.search(text) for name, pattern in _FIELDS.items()}
    number = {name: (m.group(1) if m else None) for name, m in found.items()}
    return Usage(float(number["user_s"] or 0), float(number["sys_s"] or 0),
                 int(number["max_rss_kb"] or 0),
                 int(number["exit_status"]) if number["exit_status"] is not None else None)


def run_measured(argv: list[str], log_dir: Path, *, timeout: float = 3600.0,
                 env: dict | None = None, cwd: Path | None = None) -> Measured:
    """Run argv under GNU time; stdout, stderr and time's report go to files in log_dir."""
    log_dir = Path(log_dir)
    log_dir.mkdir(parents=True, exist_ok=True)
    time_file = log_dir / "time.txt"
    with open(log_dir / "stdout.txt", "wb") as out, open(log_dir / "stderr.txt", "wb") as err:
        start, started_s = time.perf_counter(), time.time()
        proc = subprocess.Popen([GNU_TIME, "-v", "-o", str(time_file), *argv],
                                stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                env=env, cwd=cwd, start_new_session=True)
        timed_out = _wait(proc, timeout)
        wall = time.perf_counter() - start
    usage = parse_time_v(time_file.read_text() if time_file.exists() else "")
    return Measured(tuple(argv), proc.returncode, wall, usage, timed_out, started_s)


def system_busy_seconds() -> float:
    """CPU seconds the whole machine has spent busy since boot (all cores), from /proc/stat."""
    with open("/proc/stat") as f:
        fields = [int(v) for v in f.readline().split()[1:]]
    # user nice system idle iowait irq softirq steal (guest time is already in user)
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    return (sum(fields[:8]) - idle) / _CLOCK_TICKS


def _wait(proc: subprocess.Popen, timeout: float) -> bool:
    """Wait for proc; on timeout kill its session (the command and its children).
    A blocking wait and a timer, not a wait with a timeout: that one polls, with
    sleeps growing to 50 ms, and would see an exit up to 50 ms late."""
    expired = threading.Event()

    def kill() -> None:
        expired.set()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)

    timer = threading.Timer(timeout, kill)
    timer.start()
    try:
        proc.wait()
    except BaseException:   # Ctrl-C in the harness: leave nothing running
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        raise
    finally:
        timer.cancel()
    return expired.is_set()

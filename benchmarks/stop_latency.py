"""How long a stop takes: SIGTERM and SIGINT to the crawler's process group,
and --max-seconds, with --delay 2 and 8 fetch threads, on one host (where a
thread holding a URL for the host could otherwise wait 7 x 2 s) and on 20
hosts (127.0.0.30 ...).

    .venv/bin/python -m benchmarks.stop_latency

Prints one line per stop: exit status and seconds from the signal (or from
the start, for --max-seconds 3) to exit.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

from demosite.server import serve

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
import bigsite  # noqa: E402  (the generated site of the resume tests)


def crawl(urls: list[str], out: Path, *extra: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "controller", "crawl", *urls, "--out", str(out),
                             "--delay", "2", "--workers", "8", "--max-depth", "0",
                             "--max-pages", "0", "--quiet", *extra],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)


def rows(out: Path) -> int:
    index = out / "index.csv"
    return index.read_bytes().count(b"\n") - 1 if index.exists() else 0


def measure(label: str, urls: list[str], work: Path) -> None:
    for sig in (signal.SIGTERM, signal.SIGINT):
        out = work / f"{label}-{sig.name}"
        proc = crawl(urls, out)
        deadline = time.monotonic() + 30
        while rows(out) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)   # until the crawl is under way
        sent = time.monotonic()
        os.killpg(proc.pid, sig)
        proc.wait()
        print(f"{label}: {sig.name} to the group: exit {proc.returncode}, "
              f"{time.monotonic() - sent:.2f} s from the signal to exit")
    started = time.monotonic()
    proc = crawl(urls, work / f"{label}-max", "--max-seconds", "3")
    proc.wait()
    print(f"{label}: --max-seconds 3: exit {proc.returncode}, "
          f"{time.monotonic() - started:.2f} s from start to exit")


def main() -> int:
    with ExitStack() as stack:
        work = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        bases = [stack.enter_context(serve(bigsite.handler(1500), host=f"127.0.0.{30 + k}"))[0]
                 for k in range(20)]
        measure("1 host", [bases[0] + "p/0.html"], work)
        measure("20 hosts", [base + "p/0.html" for base in bases], work)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

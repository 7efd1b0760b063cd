"""Bytes per host of the scheduler (urllist.hosts.HostFrontier): 10^5 URLs on
10^5 hosts against the same 10^5 URLs on one host, with tracemalloc; what is
left over is what a host costs (its chain ends, its heap entry, its slot in
the schedule; the URLs themselves cost the same either way).

    .venv/bin/python -m benchmarks.host_memory [--urls 100000]
"""
from __future__ import annotations

import argparse
import gc
import tracemalloc

from getpage.politeness import PolitenessGate, host_key
from urllist import HostFrontier, QueuedUrl


def queued_bytes(urls: list[str]) -> int:
    """Bytes allocated by a frontier holding these URLs (the strings excluded)."""
    gate = PolitenessGate(1.0, 1)
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    frontier = HostFrontier(host_key, gate)
    frontier.push(QueuedUrl(i, url, 0, None) for i, url in enumerate(urls))
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    del frontier
    return after - before


def main(argv: list[str] | None = None) -> int:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--urls", type=int, default=100_000)
    n = options.parse_args(argv).urls
    many = [f"http://h{i}.example/" for i in range(n)]
    one = [f"http://h.example/{i}" for i in range(n)]
    spread, single = queued_bytes(many), queued_bytes(one)
    print("| URLs queued | hosts | bytes | bytes per URL |")
    print("|---:|---:|---:|---:|")
    print(f"| {n:,} | 1 | {single:,} | {single / n:.0f} |")
    print(f"| {n:,} | {n:,} | {spread:,} | {spread / n:.0f} |")
    print(f"\nper host (the difference): {(spread - single) / (n - 1):.0f} bytes "
          f"(the host key strings included: {sum(map(len, many)) / n + 49:.0f} bytes of them)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

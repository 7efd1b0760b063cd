"""Requests lost to kept-alive connections the other side closed: how many
GETs through a real forward proxy fail without the resend, and with it.

tinyproxy answers in HTTP/1.1 without ``Connection: close`` and then closes
the connection. A client that takes the pooled connection in the instant
before the close arrives sends its next request into a dead socket and
gets a reset. GetPage's transport sends such a request once more on a new
connection (getpage/transport.py); a plain urllib3 pool with the retry
policy the transport gives it (``Retry(0, read=False)``, what GetPage did
before) reports the reset as the request's failure.

Each round makes REQUESTS sequential GETs through one tinyproxy to a
loopback site, once with each client, clients interleaved round by round:

- ``urllib3 ProxyManager``: a plain pool, the behaviour without the resend;
- ``Fetcher.fetch``: GetPage with ``retries=0`` and robots.txt off, so every
  failure is a request that failed.

For each, the failures and the requests the proxy logged. The proxy never
logs a lost request (it had closed that connection), so "received" equal to
REQUESTS with no failure means that every request reached the proxy once,
the lost ones through their second sending. The loss rate depends on the
machine's load (the race is narrow), so the load average is printed with
each run.

    .venv/bin/python -m benchmarks.stale_connections            # results/stale-connections.md and RESULTS.md
    .venv/bin/python -m benchmarks.stale_connections --no-save  # prints it only
"""
from __future__ import annotations

import os
import platform
import sys
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

import click
import urllib3

REPO = Path(__file__).resolve().parent.parent
if __package__ in (None, ""):
    sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))   # tests/proxyserver.py starts tinyproxy

from benchmarks.report import git_commit, render_results, stored_options  # noqa: E402
from demosite.server import serve  # noqa: E402
from getpage import FetchConfig, Fetcher  # noqa: E402
from proxyserver import TinyProxy  # noqa: E402

RESULT_NAME = "stale-connections.md"   # in --results-dir
ROUNDS, REQUESTS = 3, 2000
PAGE = b"<html><body><p>x</p></body></html>"


def page(request):
    return 200, {"Content-Type": "text/html"}, PAGE


def plain_pool(proxy_url: str) -> tuple[Callable[[str], bool], Callable[[], None]]:
    """GET through urllib3's own ProxyManager: True if the page came back."""
    manager = urllib3.ProxyManager(proxy_url, retries=urllib3.Retry(0, read=False))

    def get(url: str) -> bool:
        try:
            response = manager.request("GET", url)
        except urllib3.exceptions.HTTPError:
            return False
        return response.status == 200 and response.data == PAGE
    return get, manager.clear


def fetcher(proxy_url: str) -> tuple[Callable[[str], bool], Callable[[], None]]:
    """GET with GetPage's Fetcher: True if the page came back."""
    config = FetchConfig(user_agent="bench/1", delay=0, retries=0, obey_robots=False,
                         allowed_addresses={"public", "loopback"})
    client = Fetcher(config, environ={"http_proxy": proxy_url})

    def get(url: str) -> bool:
        result = client.fetch(url)
        return result.ok and result.body == PAGE
    return get, client.close


CLIENTS = {"urllib3 ProxyManager, Retry(0, read=False)": plain_pool,
           "Fetcher.fetch, retries=0": fetcher}


def one_run(make: Callable[[str], tuple[Callable[[str], bool], Callable[[], None]]],
            folder: Path) -> tuple[int, int]:
    """(failed GETs, requests the proxy received) for REQUESTS GETs."""
    with TinyProxy(folder) as proxy, serve(page) as (url, _):
        get, close = make(proxy.url)
        try:
            failed = sum(not get(f"{url}p{n}") for n in range(REQUESTS))
        finally:
            close()
        return failed, len(proxy.requests())


def measure(rounds: int, work: Path) -> list[tuple[int, str, float, int, int]]:
    """(round, client, load average, failed, received) per run; each run's
    tinyproxy config and log in its own folder under ``work``."""
    runs = []
    for round_number in range(1, rounds + 1):
        for name, make in CLIENTS.items():
            load = os.getloadavg()[0]
            folder = work / "stale-connections" / f"run-{len(runs) + 1}"
            runs.append((round_number, name, load, *one_run(make, folder)))
    return runs


def report(runs: list[tuple[int, str, float, int, int]]) -> str:
    source = git_commit(REPO)
    when = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    dirty = " (working tree with uncommitted changes)" if source["dirty"] else ""
    lines = ["## Stale kept-alive connections through a proxy (issue 25)", "",
             "Written by `.venv/bin/python -m benchmarks.stale_connections`.", "",
             f"{when}, commit `{source['commit']}`{dirty}; {platform.machine()}, "
             f"{os.cpu_count()} cores, Python {platform.python_version()}.", "",
             f"{REQUESTS:,} sequential GETs per run through Debian's tinyproxy (which closes each "
             "connection after its response without `Connection: close`) to a loopback site; "
             "clients interleaved round by round. A lost request never reaches the proxy.", "",
             "| round | client | load average (1 min) | failed GETs | requests the proxy received |",
             "|---:|:---|---:|---:|---:|"]
    lines += [f"| {number} | {name} | {load:.2f} | {failed} | {received} |"
              for number, name, load, failed, received in runs]
    return "\n".join(lines) + "\n"


@click.command()
@click.option("--rounds", default=ROUNDS, show_default=True, help="Runs of each client, interleaved.")
@stored_options
def main(rounds, save, work, results_dir, results_md) -> None:
    """Failed GETs through tinyproxy: a plain urllib3 pool against the Fetcher."""
    text = report(measure(rounds, work))
    click.echo(text)
    if save:
        (results_dir / RESULT_NAME).write_text(text, encoding="utf-8")
        results_md.write_text(render_results(results_dir), encoding="utf-8")
        click.echo(f"wrote {results_dir / RESULT_NAME} and {results_md}", err=True)


if __name__ == "__main__":
    main()

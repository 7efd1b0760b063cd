"""What proxy support costs a request (issue 23): the proxy is chosen once per
origin, with the origin's connection pool key, so a request should pay
nothing for it, proxy variables set or not.

    .venv/bin/python -m benchmarks.proxy_resolution            # results/proxy-resolution.md and RESULTS.md
    .venv/bin/python -m benchmarks.proxy_resolution --no-save  # prints it only

Measured in CPU time (``time.process_time``) per call, no network:

- ``Transport._pool(url)``: what every GET does to find its pool (URL parse,
  the remembered route, the pool manager's lookup), for a crawl with no
  proxy, with ``http_proxy`` set (the origin goes through the proxy), and
  with ``http_proxy`` and a ``no_proxy`` that exempts the origin;
- ``ProxyRules.for_origin``: the decision itself, made once per origin
  (a typical five-entry ``no_proxy``, the origin matched by none of them);
- for scale, requests' own per-request reading of the environment
  (``requests.utils.get_environ_proxies``: what ``trust_env = True`` would
  do on every GET, with the same variables).

Each figure is the median of ROUNDS rounds of CALLS calls, variants
interleaved round by round.
"""
from __future__ import annotations

import os
import platform
import statistics
import subprocess
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from unittest import mock

import click
import requests.utils

from getpage.addresses import AddressGuard
from getpage.proxies import ProxyRules
from getpage.transport import Transport

RESULT = Path(__file__).parent / "results" / "proxy-resolution.md"
ROUNDS, CALLS = 7, 20_000
URL = "http://127.0.0.1:8080/level/3/page-123.html"
PROXY = "http://127.0.0.1:3128"
NO_PROXY = "localhost,.example.internal,10.0.0.0/8,192.168.0.0/16,intranet.test"


def per_call_us(call: Callable[[], object], calls: int = CALLS) -> float:
    started = time.process_time()
    for _ in range(calls):
        call()
    return (time.process_time() - started) / calls * 1e6


def transport(environ: dict[str, str]) -> Transport:
    guard = AddressGuard(frozenset({"public", "loopback"}))
    return Transport("bench/1", 1, guard, 10.0, proxies=ProxyRules.resolve(environ=environ))


def variants() -> dict[str, tuple[Callable[[], object], dict[str, str] | None]]:
    """name -> (the call, the environment it needs set while it runs, if any)."""
    direct = transport({})
    proxied = transport({"http_proxy": PROXY, "no_proxy": NO_PROXY})
    exempt = transport({"http_proxy": PROXY, "no_proxy": NO_PROXY + ",127.0.0.1"})
    for each in (direct, proxied, exempt):
        each._pool(URL)   # the origin's first request: decided and remembered
    assert proxied._pool_key(("http", "127.0.0.1", 8080, True, None)).proxy is not None
    assert exempt._pool_key(("http", "127.0.0.1", 8080, True, None)).proxy is None
    environ = {"http_proxy": PROXY, "no_proxy": NO_PROXY}
    rules = ProxyRules.resolve(environ=environ)
    return {
        "Transport._pool per GET, no proxy variables": (lambda: direct._pool(URL), None),
        "Transport._pool per GET, http_proxy set (through the proxy)": (lambda: proxied._pool(URL), None),
        "Transport._pool per GET, http_proxy set, no_proxy exempts the origin":
            (lambda: exempt._pool(URL), None),
        "ProxyRules.for_origin, once per origin (5-entry no_proxy, no match)":
            (lambda: rules.for_origin("http", "127.0.0.1"), None),
        "requests' get_environ_proxies, what trust_env would cost per GET":
            (lambda: requests.utils.get_environ_proxies(URL), environ),
    }


def measure() -> dict[str, float]:
    calls = variants()
    samples: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(ROUNDS):
        for name, (call, environ) in calls.items():
            if environ is None:
                samples[name].append(per_call_us(call))
                continue
            with mock.patch.dict(os.environ, environ):
                samples[name].append(per_call_us(call, CALLS // 10))
    return {name: statistics.median(values) for name, values in samples.items()}


def report(medians: dict[str, float]) -> str:
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True).stdout.strip()
    when = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = ["## Proxy resolution: CPU per request (issue 23)", "",
             "Written by `.venv/bin/python -m benchmarks.proxy_resolution`.", "",
             f"{when}, commit `{commit}`{' (working tree with uncommitted changes)' if dirty else ''}; "
             f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python "
             f"{platform.python_version()}; load average at start "
             f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}.", "",
             f"CPU time per call, median of {ROUNDS} interleaved rounds of {CALLS:,} calls "
             f"({CALLS // 10:,} for requests' lookup). URL {URL}; proxy {PROXY}; "
             f"no_proxy `{NO_PROXY}`.", "",
             "| what | µs per call |", "|:---|---:|"]
    lines += [f"| {name} | {value:.2f} |" for name, value in medians.items()]
    return "\n".join(lines) + "\n"


@click.command()
@click.option("--save/--no-save", default=True, help=f"Write {RESULT.name} and rewrite RESULTS.md.")
def main(save: bool) -> None:
    text = report(measure())
    click.echo(text)
    if save:
        RESULT.write_text(text, encoding="utf-8")
        results_md = RESULT.parent.parent / "RESULTS.md"
        results_md.write_text(with_section(results_md.read_text(encoding="utf-8"), text),
                              encoding="utf-8")
        click.echo(f"wrote {RESULT} and its section of {results_md}", err=True)


def with_section(document: str, section: str) -> str:
    """``document`` with ``section`` (a "## " heading and its text) in place of
    the section of the same heading, or at the end; the other sections stay
    as they are."""
    heading = section.splitlines()[0]
    lines = document.splitlines(keepends=True)
    starts = [n for n, line in enumerate(lines) if line.rstrip("\n") == heading]
    if not starts:
        return document.rstrip("\n") + "\n\n" + section
    start = starts[0]
    end = next((n for n in range(start + 1, len(lines)) if lines[n].startswith("## ")), len(lines))
    tail = "\n" + "".join(lines[end:]) if end < len(lines) else ""
    return "".join(lines[:start]) + section + tail


if __name__ == "__main__":
    main()

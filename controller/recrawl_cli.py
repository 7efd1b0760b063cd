"""`crawler recrawl DIR`: the command line of controller/revisits.py."""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import click

from controller.cli import (EXIT_FOR_STOP, PROXY_TLS_OPTIONS, DelayType, Progress,
                            fixed_delay_drops_bounds, make_config,
                            refuse_missing_secrets, run_crawl, say, secrets_again, secrets_given,
                            stop_signals)
from controller.config import CrawlConfig
from controller.revisits import OUTCOMES, RevisitPlan, Revisits
from controller.visits import recrawl_state, save_state
from controller.resume import SETTINGS_FILE, STATE_DIR
from controller.store import OutputError
from urllist.revisit import POLICIES, Budget

UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
# Politeness and speed: what a recrawl may be given anew (None: the crawl's).
SPEED = ("delay", "min_delay", "max_delay", "workers", "per_host", "timeout")
DURATION = re.compile(r"^(\d+(?:\.\d+)?)([smhd]?)$")


@click.command()
@click.argument("crawl_dir", metavar="DIR", type=click.Path(path_type=Path))
@click.option("--policy", type=click.Choice(POLICIES), default="uniform", show_default=True,
              help="How revisits are shared among pages: uniform (all alike), proportional (to "
                   "each page's estimated change rate), capped-proportional (the same, rates "
                   "capped at --max-rate), optimal (the freshness-optimal allocation: pages that "
                   "change too fast for the budget are left alone).")
@click.option("--budget", metavar="N | N/day", default=None,
              help="Revisits: N pages at most this pass (the N most overdue), or N/day spread "
                   "over the pages by --policy (the pages due now). Default: every page.")
@click.option("--max-rate", type=click.FloatRange(min=0, min_open=True), metavar="R", default=None,
              help="capped-proportional: a page counts as changing at most R times a day.")
@click.option("--min-interval", metavar="DURATION", default="0",
              help="Never revisit a page sooner than this (e.g. 30m, 6h, 1d).")
@click.option("--max-interval", metavar="DURATION", default="30d", show_default=True,
              help="Revisit every page at least this often: a page seen unchanged is estimated "
                   "to change never, and without a limit proportional and optimal would never "
                   "revisit it; 0 = no limit.")
@click.option("--delay", type=DelayType(), default=None,
              help="Seconds between two requests to one host, or auto (default: the crawl's).")
@click.option("--min-delay", type=click.FloatRange(min=0), default=None,
              help="--delay auto: never less than this, seconds (default: the crawl's).")
@click.option("--max-delay", type=click.FloatRange(min=0), default=None,
              help="--delay auto: never more than this, seconds (default: the crawl's).")
@click.option("--workers", type=click.IntRange(min=1, max=256), default=None,
              help="Fetching threads (default: the crawl's).")
@click.option("--per-host", type=click.IntRange(min=1), default=None,
              help="Requests in flight to one host at most (default: the crawl's).")
@click.option("--timeout", type=click.FloatRange(min=0.1), default=None,
              help="Seconds allowed per request (default: the crawl's).")
@click.option("--quiet", "-q", is_flag=True, help="No progress display.")
@secrets_again
@PROXY_TLS_OPTIONS[0]
@PROXY_TLS_OPTIONS[1]
@PROXY_TLS_OPTIONS[2]
@PROXY_TLS_OPTIONS[3]
def recrawl(crawl_dir, policy, budget, max_rate, min_interval, max_interval, quiet,
            **given) -> None:
    """Revisit the pages of the crawl in DIR with conditional GETs (the
    stored ETag and Last-Modified): a 304 or the same bytes is recorded as
    unchanged, new bytes are saved as the page's new version (every visit
    in visits.csv, every version in crawl.warc.gz with --warc); links new
    to the crawl are then crawled as the crawl would. A recrawl stopped or
    killed goes on where it was when run again.

    \b
    Examples:
      crawler recrawl site                          (every page, once)
      crawler recrawl site --budget 500             (the 500 most overdue)
      crawler recrawl site --policy optimal --budget 2000/day --max-interval 30d
      crawler recrawl site --delay 0.2 --workers 4    (politeness and speed anew)
    """
    summary = recrawl_from(crawl_dir, policy, budget, max_rate, min_interval, max_interval, quiet,
                           **given)
    stopped = summary["stopped"] or summary.get("crawl_stopped", "")
    if stopped in EXIT_FOR_STOP:
        say(f"to go on with this recrawl: crawler recrawl {crawl_dir}", err=True)
        sys.exit(EXIT_FOR_STOP[stopped])


def recrawl_from(crawl_dir, policy, budget, max_rate, min_interval, max_interval, quiet,
                 headers=(), http_password="", ask_password=False, **network) -> dict:
    """One pass, as the command line asks it (the Python API's recrawl() comes
    in here too): the pass's summary, with the crawl step's stop reason.
    ``network``: the proxy, TLS, politeness and speed options given, which win
    over the crawl's (as with --resume)."""
    how = RevisitPlan(policy, _budget(budget), _seconds(min_interval, "--min-interval"),
                      _seconds(max_interval, "--max-interval") or float("inf"),
                      max_rate / 86400 if max_rate else None)
    if how.min_interval > how.max_interval:
        raise click.UsageError("--min-interval is longer than --max-interval; give a smaller "
                               "--min-interval")
    config = _config_of(crawl_dir, quiet, (headers, http_password, ask_password), network)
    summary = _revisit(config, how)
    if summary["stopped"]:
        return summary
    if summary["crawl_step"]:
        summary["crawl_stopped"] = run_crawl(config, resume=True)["stop_reason"]
        if summary["crawl_stopped"] in EXIT_FOR_STOP:
            return summary
    _close_pass(config.out)
    return summary


def _revisit(config: CrawlConfig, how: RevisitPlan) -> dict:
    progress = None if not config.progress else Progress()
    try:
        revisits = Revisits(config, how)
    except OutputError as exc:
        raise click.UsageError(str(exc)) from None
    if revisits.open_pass["state"] == "crawling":   # a killed recrawl's crawl step
        revisits.lock.release()
        return {"pass": revisits.pass_no, **revisits.open_pass["summary"]}
    with stop_signals(revisits, progress):
        summary = revisits.run()
    counts = ", ".join(f"{summary[k]} {k}" for k in OUTCOMES)
    say(f"recrawl pass {summary['pass']}: {summary['asked']} pages asked again: {counts}")
    if summary["new_links_queued"] or summary["new_links_not_queued"]:
        say(f"links new to the crawl on changed pages: {summary['new_links_queued']} queued"
                   + (f", {summary['new_links_not_queued']} not queued (beyond --max-depth, "
                      f"after a level with none, or the crawl stopped with URLs still queued: "
                      f"see the README, Keeping a crawl fresh)"
                      if summary["new_links_not_queued"] else ""))
    return summary


def _close_pass(out: Path) -> None:
    state = recrawl_state(out)
    if state["passes"] and state["passes"][-1]["state"] == "crawling":
        state["passes"][-1]["state"] = "done"
        save_state(out, state)


def _config_of(out: Path, quiet: bool, secrets: tuple = ((), "", False),
               network: dict | None = None) -> CrawlConfig:
    """The crawl's own settings (state/settings.json), as --resume reads them,
    with ``secrets`` (headers, http_password, ask_password) given again; the
    proxy and TLS options given in ``network`` win."""
    saved_file = out / STATE_DIR / SETTINGS_FILE
    if not (out / "index.csv").is_file() or not saved_file.is_file():
        raise click.UsageError(f"{out} holds no crawl (no index.csv or {STATE_DIR}/{SETTINGS_FILE}); "
                               f"crawl it first: crawler crawl SEED --out {out}")
    try:
        saved = json.loads(saved_file.read_text(encoding="utf-8"))
        options = {name: tuple(value) if isinstance(value, list) else value
                   for name, value in saved.items() if name not in ("seeds", "out", "progress")}
    except (OSError, UnicodeError, json.JSONDecodeError, AttributeError) as exc:
        raise click.UsageError(f"{saved_file} cannot be read ({exc}); restore it") from None
    options["quiet"] = quiet
    options["ignore_robots"] = not options.pop("obey_robots", True)
    options["no_cookies"] = not options.pop("cookies", True)
    options.pop("withheld", None)
    options.update(secrets_given(saved, *secrets))
    given = {name: value for name, value in (network or {}).items()
             if value or (name in SPEED and value is not None)}
    if "proxy" in given or "no_proxy" in given:   # one given now replaces the other one saved
        options.update(proxy="", no_proxy=False)
    options.update(given)
    fixed_delay_drops_bounds(options, given)
    config = make_config(tuple(saved.get("seeds", ())), out, options)
    refuse_missing_secrets(saved, config)
    return config


def _budget(text: str | None) -> Budget | None:
    if text is None:
        return None
    number, _, unit = text.partition("/")
    try:
        if unit in ("day", "d"):
            return Budget(per_day=float(number))
        if not unit:
            return Budget(per_pass=int(number))
    except ValueError:
        pass
    raise click.UsageError(f"--budget {text}: give a number of pages (500) or of pages a day "
                           f"(2000/day)")


def _seconds(text: str, option: str) -> float:
    match = DURATION.match(text.strip())
    if not match:
        raise click.UsageError(f"{option} {text}: give a duration such as 90s, 30m, 6h or 7d")
    return float(match[1]) * UNITS[match[2] or "s"]

"""The command line: thin click commands over the Controller.

Every usage error ends in ONE line on stderr that says what is wrong and
how to fix it, with exit status 2 and no traceback. A reader that stops
reading (``| head``, a pager quit early, a closed terminal) never changes
how a command ends: a crawl goes on to its end and its own exit status,
and a command that only prints (report, export, config ...) ends quietly
with status 0.
"""
from __future__ import annotations

import errno
import importlib
import json
import os
import signal
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import click
from click.core import ParameterSource

from controller.configfile import InputError, read_config, read_seed_file, settings_as_toml
from controller.config import (AUTO_DELAY, CONTENT_DEDUP_MODES, DEFAULT_USER_AGENT,
                               MAX_SIMHASH_DISTANCE, ORDER_NAMES, TEXT_MODES, VERSION, ConfigError, CrawlConfig,
                               ca_bundle_problem, default_processes, order_refusal)
from controller.engine import Crawl
from controller.localfailure import EXIT_LOCAL, LocalFailureError
from controller.resume import (SETTINGS_FILE, STATE_DIR, WARC_FILE, missing_secrets,
                               refuse_if_locked)
from controller.progress import Progress, closed_output, in_force
from controller.readers import EXPORT_FORMATS, REPORT_FORMATS, TOP_LINKS
from controller.readers.summary import level_table, summary_lines
from controller.store import OutputError
from getpage.pacing import DEFAULT_MAX_DELAY, DEFAULT_MIN_DELAY
from getpage.proxies import ProxyRules
from getpage.tlsbundle import CA_BUNDLE_VARIABLES, tls_verification
from textfilter import EXTRACTORS
from urlfilter import SEEN_ALGORITHMS

EXIT_FAILED = 1   # the crawl ran but could not do its job (every seed failed, a parser died)
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130

# The signals that stop a crawl cleanly, the stop_reason each leaves in
# stats.json, and its exit status: 128 + the signal's number, as a shell
# reports a process the signal ended (SIGHUP: a closed terminal, a dropped ssh).
SIGNAL_STOPS = {signal.SIGINT: "interrupted", signal.SIGTERM: "terminated",
                signal.SIGHUP: "hangup"}
EXIT_FOR_STOP = {reason: 128 + sig for sig, reason in SIGNAL_STOPS.items()}
# A signal this soon after the first is the same stop delivered twice (GNU
# timeout and kill -- -PGID reach the crawler and then its group), not a
# second Ctrl-C; a person's second Ctrl-C comes later.
REPEAT_SECONDS = 0.5
WAIT_FOR_CRAWL_POLL = 0.02   # how often a worker given --wait-for-crawl looks for its crawl


# The commands that only read and print: their job is done when nobody reads on.
PRINTING_COMMANDS = frozenset({"report", "export", "warc-index", "config", "status", "merge"})
# Commands in modules of their own, loaded when named (or listed by --help):
# a crawl's start does not load them.
LAZY_COMMANDS = {"recrawl": "controller.recrawl_cli"}


class Commands(click.Group):
    """The crawler's commands. When nobody reads the output of a printing
    command any more (``crawler export DIR | head -1``), it ends quietly with
    status 0, as `head` expects of a writer; click's own handling would exit
    1. A crawl drops the lines itself (``say``, Progress) and goes on."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except OSError as exc:
            if exc.errno not in (errno.EPIPE, errno.EIO) \
                    or ctx.invoked_subcommand not in PRINTING_COMMANDS:
                raise
            gone = [closed_output(stream) for stream in (sys.stdout, sys.stderr)]
            if not any(gone):
                raise
            ctx.exit(0)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *LAZY_COMMANDS})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in LAZY_COMMANDS and name not in self.commands:
            # The module builds on this one's functions: it can only load once this one has.
            self.add_command(getattr(importlib.import_module(LAZY_COMMANDS[name]), name))
        return super().get_command(ctx, name)


def say(message: str = "", *, err: bool = False, nl: bool = True) -> None:
    """click.echo for a line that must not decide how a crawl ends: when
    nobody reads the stream any more, the line is dropped."""
    try:
        click.echo(message, err=err, nl=nl)
    except OSError:
        if not closed_output(sys.stderr if err else sys.stdout):
            raise


@click.group(cls=Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(VERSION, prog_name="crawler")
def cli() -> None:
    """A polite, readable breadth-first web crawler (six-module design).

    \b
    crawler demo                       crawl the bundled demo site
    crawler crawl http://host/ --out DIR
    """


# How much to crawl.
LIMIT_OPTIONS = [
    click.option("--max-depth", type=click.IntRange(min=0), default=3, show_default=True,
                 help="Deepest level to fetch (seeds are level 0); 0 = no limit."),
    click.option("--max-pages", type=click.IntRange(min=0), default=1000, show_default=True,
                 help="Fetch at most this many URLs; 0 = no limit."),
    click.option("--max-seconds", type=click.FloatRange(min=0), default=0, show_default=True,
                 help="Stop handing out URLs after this many seconds; 0 = no limit."),
]

class DelayType(click.ParamType):
    """--delay: seconds (>= 0) or "auto"."""

    name = "SECONDS|auto"

    def convert(self, value, param, ctx):
        if value == AUTO_DELAY or isinstance(value, (int, float)) and not isinstance(value, bool):
            return value
        try:
            seconds = float(value)
        except ValueError:
            seconds = -1.0
        if not seconds >= 0:
            self.fail(f"{value!r} is neither a number of seconds >= 0 nor auto", param, ctx)
        return seconds


# How to fetch: parallelism, politeness, per-request caps, identity.
FETCH_OPTIONS = [
    click.option("--workers", type=click.IntRange(min=1, max=256), default=8, show_default=True,
                 help="Fetching threads."),
    click.option("--processes", type=click.IntRange(min=0, max=64), default=default_processes(),
                 show_default="cores - 1, at least 1",
                 help="Parser processes (parse, filter links, save); 0 = parse in the fetch threads."),
    click.option("--per-host", type=click.IntRange(min=1), default=1, show_default=True,
                 help="Requests in flight to one host at most."),
    click.option("--delay", type=DelayType(), default=1.0, show_default=True,
                 help="Seconds between two requests to one host (robots Crawl-delay wins if "
                      "larger), or auto: set per host from its response times, longer after "
                      "429/503/timeouts (README, Adaptive politeness)."),
    click.option("--min-delay", type=click.FloatRange(min=0), default=DEFAULT_MIN_DELAY,
                 show_default=True, help="--delay auto: never less than this, seconds."),
    click.option("--max-delay", type=click.FloatRange(min=0), default=DEFAULT_MAX_DELAY,
                 show_default=True,
                 help="--delay auto: never more than this, seconds (robots Crawl-delay wins)."),
    click.option("--timeout", type=click.FloatRange(min=0.1), default=10.0, show_default=True,
                 help="Seconds allowed per request, connect and whole body."),
    click.option("--max-bytes", type=click.IntRange(min=1), default=10_000_000, show_default=True,
                 help="Largest page body kept, in bytes (after decompression)."),
    click.option("--max-redirects", type=click.IntRange(min=0), default=10, show_default=True,
                 help="Longer redirect chains are recorded as errors."),
    click.option("--user-agent", default=DEFAULT_USER_AGENT, show_default=True,
                 help="User-Agent header: NAME/VERSION first, then comments, e.g. "
                      "'mybot/1.0 (+https://example.org/bot)'; robots.txt groups, "
                      "<meta name=NAME> and 'X-Robots-Tag: NAME: ...' match NAME."),
    click.option("--ignore-robots", is_flag=True,
                 help="Do not read or obey robots.txt, nor the noindex and nofollow of "
                      "<meta name=robots> and X-Robots-Tag (meta refreshes are still followed)."),
    click.option("--retries", type=click.IntRange(min=0), default=2, show_default=True,
                 help="Extra attempts after connection errors, timeouts, 429 and 5xx."),
    click.option("--allow-private", is_flag=True,
                 help="Follow links to private, loopback and link-local addresses even from public seeds."),
]

# Which links to follow: scope, patterns and spider-trap limits.
SCOPE_OPTIONS = [
    click.option("--scope", type=click.Choice(["host", "domain", "any"]), default="host",
                 show_default=True, help="Follow links on the seeds' hosts, their domains, or anywhere."),
    click.option("--include", multiple=True, metavar="REGEX",
                 help="Only follow URLs matching REGEX (repeatable)."),
    click.option("--exclude", multiple=True, metavar="REGEX",
                 help="Never follow URLs matching REGEX (repeatable)."),
    click.option("--max-url-length", type=click.IntRange(min=0), default=2048, show_default=True,
                 help="Skip longer URLs (spider traps); 0 = no limit."),
    click.option("--max-path-repeats", type=click.IntRange(min=0), default=2, show_default=True,
                 help="Skip URLs whose path repeats a run of segments back to back more often "
                      "(/a/b/a/b/a/b); 0 = no limit."),
    click.option("--max-pages-per-host", type=click.IntRange(min=0), default=0, show_default=True,
                 help="Queue at most this many URLs per host; 0 = no limit."),
    click.option("--max-query-variants", type=click.IntRange(min=0), default=100, show_default=True,
                 help="Queue at most this many query strings per path (calendars, search); 0 = no limit."),
    click.option("--max-pattern-depth", type=click.IntRange(min=0), default=10, show_default=True,
                 help="Skip URLs more than this many levels below the level where their pattern "
                      "(the path with digits as <n>: /calendar/<n>/<n>/) first appeared: endless "
                      "calendars and next-page chains; 0 = no limit."),
    click.option("--fold-www", is_flag=True, help="Treat www.host and host as the same host."),
    click.option("--drop-query", is_flag=True, help="Drop query strings from URLs."),
    click.option("--drop-param", "drop_params", multiple=True, metavar="NAME",
                 help="Remove query parameters with this name before dedup; a glob such as "
                      "utm_* or sessionid (repeatable)."),
    click.option("--sitemaps", is_flag=True,
                 help="Also crawl the pages listed by the sitemaps in the seeds' robots.txt "
                      "(Sitemap: lines), at level 1."),
    click.option("--sitemap", "sitemap_urls", multiple=True, metavar="URL",
                 help="Also crawl the pages this sitemap (or sitemap index) lists, at level 1 "
                      "(repeatable)."),
]

# What to keep of a page: duplicates, text, extraction patterns, the archive.
CONTENT_OPTIONS = [
    click.option("--content-dedup", type=click.Choice(CONTENT_DEDUP_MODES), default="exact",
                 show_default=True,
                 help="exact: a page with the same text as an earlier one is marked duplicate_of, "
                      "not saved again, its links not followed; near: also mark pages within "
                      "--simhash-distance (kept and followed); off: neither."),
    click.option("--simhash-distance", type=click.IntRange(min=0, max=MAX_SIMHASH_DISTANCE),
                 default=5, show_default=True,
                 help="Largest Hamming distance between 64-bit SimHashes that counts as a near "
                      "duplicate (5: the smallest that catches 95% of ad-block and date-line "
                      "copies, measured)."),
    click.option("--text", "text_mode", type=click.Choice(TEXT_MODES), default="plain",
                 show_default=True,
                 help="plain: all visible text; main: the main content block only (no menus, "
                      "sidebars, footers)."),
    click.option("--extract", multiple=True, metavar="NAME=SELECTOR",
                 help="Write matches to extracted.csv, one column per NAME; SELECTOR is "
                      "css:h1.title or xpath://div[@class='post'] (repeatable)."),
    click.option("--extract-from", default="", metavar="REGEX",
                 help="Extract only from pages whose URL matches REGEX (detail pages)."),
    click.option("--extract-exclude", multiple=True, metavar="SELECTOR",
                 help="Drop these sub-nodes before extracting, e.g. css:div.ad (repeatable)."),
    click.option("--extract-jsonl", is_flag=True,
                 help="Also write extracted.jsonl, with every match as a list."),
    click.option("--warc", is_flag=True,
                 help="Also write crawl.warc.gz: request and response records as received."),
]

# URL-seen algorithm, page reader, output.
PARSE_OPTIONS = [
    click.option("--dedup", type=click.Choice(sorted(SEEN_ALGORITHMS)), default="sieve",
                 show_default=True, help="URL-seen algorithm (sieve: exact, RAM bounded, "
                                         "spills to the crawl's state/ directory). Not with "
                                         "--redis (the seen-set is Redis's)."),
    click.option("--seen-cache", type=click.IntRange(min=0), default=16_384, show_default=True,
                 help="Recently seen URLs answered before the --dedup structure (exact; "
                      "saves hashing repeated links); 0 = every link goes to the structure. "
                      "Not with --redis."),
    click.option("--frontier-ram", type=click.IntRange(min=1), default=256, show_default=True,
                 metavar="MB", help="Queued URLs kept in RAM, in MB; past it they wait on disk "
                                    "(in --out's state/, freed as they are fetched). Not with "
                                    "--redis (the queue is in Redis)."),
    click.option("--bloom-capacity", type=click.IntRange(min=1), default=1_000_000, show_default=True,
                 help="Expected number of URLs, for --dedup bloom. Not with --redis."),
    click.option("--bloom-error", type=click.FloatRange(min=0, max=1, min_open=True, max_open=True),
                 default=1e-3, show_default=True,
                 help="Target false-positive rate, for --dedup bloom. Not with --redis."),
    click.option("--extractor", type=click.Choice(sorted(EXTRACTORS)), default="lxml",
                 show_default=True,
                 help="Page reader: lxml (fast; same text and links as bs4), bs4 (the readable "
                      "BeautifulSoup reference), regex (the design paper's regex links, bs4 text)."),
    click.option("--quiet", "-q", is_flag=True, help="No progress lines, only the summary."),
]


# Which URL goes next (urllist/orders.py); politeness decides when, for every order.
ORDER_OPTIONS = [
    click.option("--order", type=click.Choice(ORDER_NAMES), default="bfs", show_default=True,
                 help="bfs: level by level (exact levels as they are fetched); importance, opic: "
                      "important pages first; best-first, best-n-first, shark, aco: pages on "
                      "--topic first (README, Other crawl orders)."),
    click.option("--order-param", "order_params", multiple=True, metavar="KEY=VALUE",
                 help="A parameter of the order, e.g. a=2 for importance, h1=0.7 for best-first "
                      "(repeatable; README lists each order's)."),
    click.option("--topic", default="", metavar="TEXT",
                 help="What the focused orders look for: keywords or a sample text."),
    click.option("--topic-file", type=click.Path(path_type=Path), metavar="FILE",
                 help="Read --topic from FILE (UTF-8 text)."),
]

# What requests show besides the User-Agent (getpage/identity.py): every one
# of them goes with robots.txt and sitemap requests too, as in wget.
PASSWORD_ENV = "CRAWLER_HTTP_PASSWORD"
SECRET_OPTIONS = [
    click.option("--header", "headers", multiple=True, metavar="'NAME: VALUE'",
                 help="Send this header with every request, robots.txt included (repeatable); "
                      "it replaces the crawler's own (User-Agent, Accept) as in wget, but "
                      "robots.txt groups still match --user-agent. A secret header "
                      "(Authorization, Cookie, names with auth/token/key/session/secret...) goes "
                      "to the seeds' origins only and is saved nowhere."),
    click.option("--no-cookies", is_flag=True,
                 help="Send no cookies and keep none. By default the crawl keeps the cookies "
                      "servers set (in memory, one jar per crawl or worker) and sends them back "
                      "to their hosts, robots.txt requests included."),
    click.option("--load-cookies", default="", metavar="FILE",
                 help="Start with the cookies of FILE (Netscape cookies.txt, as wget "
                      "--save-cookies, curl -c or a browser export writes it); read again by "
                      "--resume."),
    click.option("--http-user", default="", metavar="USER",
                 help="User for HTTP Basic or Digest authentication, sent to the seeds' "
                      "origins only (scheme, host, port), after their 401 challenge (robots.txt "
                      "included), never to another origin or across a redirect. The answer to a "
                      "challenge goes out at once, on the same politeness slot."),
    click.option("--http-password", default="", metavar="PASSWORD", envvar=PASSWORD_ENV,
                 help=f"Password for --http-user; better from ${PASSWORD_ENV} or "
                      f"--ask-password (a command line stays in the shell's history). Saved "
                      f"nowhere (nor in Redis): --resume, recrawl and each worker of a shared "
                      f"crawl need it again."),
    click.option("--ask-password", is_flag=True,
                 help="Prompt for --http-user's password (not echoed)."),
    click.option("--auth-no-challenge", is_flag=True,
                 help="Send Basic credentials with the first request to the seeds' origins, "
                      "without waiting for a 401 challenge (wget's option)."),
]

# The secrets again, for commands that run a crawl from its saved settings
# (crawler worker, crawler recrawl): they are never saved.
SECRETS_AGAIN = [
    click.option("--header", "headers", multiple=True, metavar="'NAME: VALUE'",
                 help="A secret header the crawl was started with (settings never hold one); "
                      "repeatable."),
    click.option("--http-password", default="", metavar="PASSWORD", envvar=PASSWORD_ENV,
                 help=f"The crawl's --http-password (never saved); better from ${PASSWORD_ENV}."),
    click.option("--ask-password", is_flag=True, help="Prompt for the crawl's --http-password."),
]


def secrets_again(func):
    for option in reversed(SECRETS_AGAIN):
        func = option(func)
    return func


def secrets_given(saved: dict, headers: tuple, http_password: str, ask_password: bool) -> dict:
    """The headers and http_password of a crawl run again from its ``saved``
    settings: its saved --header lines with ``headers`` given again, and the
    password given again (prompted for with ``ask_password``)."""
    given = {"http_user": saved.get("http_user", ""), "http_password": http_password,
             "ask_password": ask_password}
    _ask_password(given)
    return {"headers": _saved_headers(saved, headers), "http_password": given["http_password"]}


def refuse_missing_secrets(saved: dict, config: CrawlConfig) -> None:
    """A usage error when ``config`` lacks a secret the saved crawl used."""
    if missing := missing_secrets(saved, config):
        raise click.UsageError(missing)


# Which way requests go and whom they trust: proxies and TLS (getpage/proxies.py).
PROXY_TLS_OPTIONS = [
    click.option("--proxy", default="", metavar="URL",
                 help="Send every request (robots.txt and sitemaps too) through this http:// proxy, "
                      "http://[USER:PASSWORD@]HOST:PORT, instead of the one http_proxy / "
                      "https_proxy / ALL_PROXY name; NO_PROXY still exempts hosts, as in curl; "
                      "https:// URLs go through it with CONNECT. Politeness stays per target "
                      "host; a shared crawl's workers each use their own (crawler worker "
                      "--proxy). The password is never saved."),
    click.option("--no-proxy", is_flag=True,
                 help="Ignore the proxy variables of the environment: connect directly."),
    click.option("--ca-certificate", default="", metavar="FILE",
                 help="Trust the CAs in this PEM file instead of the usual ones (default: "
                      "certifi's, or the bundle REQUESTS_CA_BUNDLE, CURL_CA_BUNDLE or "
                      "SSL_CERT_FILE names)."),
    click.option("--no-check-certificate", is_flag=True,
                 help="Do not verify TLS certificates (a server's identity is then unchecked)."),
]

# How `crawl --help` groups the options: a title, then the options' lists.
# One crawl, many workers: the shared state in Redis (controller/shared.py).
SHARED_OPTIONS = [
    click.option("--redis", "redis_url", metavar="redis://HOST:PORT/DB", multiple=True,
                 help="Share this crawl through Redis: other machines join it with crawler "
                      "worker. May be repeated: the crawl is partitioned by host over the "
                      "servers (every worker gives the same list, in the same order); one "
                      "node's URL of a Redis Cluster spreads it over the cluster's masters. Its "
                      "URL-seen set is the 64-bit fingerprint set in Redis, so --dedup, "
                      "--bloom-capacity, --bloom-error, --seen-cache and --frontier-ram are "
                      "refused with it."),
    click.option("--crawl-id", metavar="NAME", default="crawl", show_default=True,
                 help="The shared crawl's name in Redis (one Redis holds many crawls; "
                      "crawler forget frees a finished one's name). Needs --redis."),
    click.option("--lease-seconds", type=click.FloatRange(min=1), default=60.0, show_default=True,
                 help="A worker silent this long has died: the URLs it held go to the others. "
                      "Needs --redis."),
]

OPTION_GROUPS = (("Input and output", None), ("Limits", LIMIT_OPTIONS),
                 ("Fetching and politeness", FETCH_OPTIONS),
                 ("Headers, cookies and login", SECRET_OPTIONS),
                 ("Proxies and TLS", PROXY_TLS_OPTIONS), ("Scope and traps", SCOPE_OPTIONS),
                 ("Content", CONTENT_OPTIONS), ("Crawl order", ORDER_OPTIONS),
                 ("Dedup, reader, display", PARSE_OPTIONS), ("Distributed (Redis)", SHARED_OPTIONS))


def crawl_options(func):
    """The options of `crawl`, each with its unit and default (`--help` lists
    them in this order, in OPTION_GROUPS)."""
    for option in reversed(LIMIT_OPTIONS + FETCH_OPTIONS + SECRET_OPTIONS + PROXY_TLS_OPTIONS
                           + SCOPE_OPTIONS + CONTENT_OPTIONS + ORDER_OPTIONS + PARSE_OPTIONS
                           + SHARED_OPTIONS):
        func = option(func)
    return func


class GroupedCommand(click.Command):
    """A command whose --help shows its options under the OPTION_GROUPS titles."""

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        grouped = {param.name: title for title, options in OPTION_GROUPS[1:]
                   for param in _params_of(options)}
        sections: dict[str, list] = {title: [] for title, _ in OPTION_GROUPS}
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is not None:
                sections[grouped.get(param.name, OPTION_GROUPS[0][0])].append(record)
        for title, records in sections.items():
            if records:
                with formatter.section(title):
                    formatter.write_dl(records)


def _params_of(options) -> list[click.Parameter]:
    """The parameters a list of click.option(...) decorators makes."""
    probe = lambda **kwargs: None   # noqa: E731 (decorated only to read its parameters)
    for option in options:
        probe = option(probe)
    return probe.__click_params__


@cli.command(cls=GroupedCommand)
@click.argument("seeds", nargs=-1, metavar="SEED...")
@click.option("--out", "-o", type=click.Path(path_type=Path), default=Path("crawl-out"),
              show_default=True, help="Output directory.")
@click.option("--resume", is_flag=True,
              help="Continue the crawl in --out (after Ctrl-C, a kill, a crash or a full disk); "
                   "seeds and URL rules are taken from it unless given. A finished crawl is "
                   "left as it is.")
@click.option("--overwrite", is_flag=True, help="Replace the crawl files in a non-empty --out.")
@click.option("--input-file", "-i", "seed_files", multiple=True, metavar="FILE",
              help="Also read seeds from FILE, one URL a line (# comments); - reads standard "
                   "input (repeatable).")
@click.option("--config", "config_file", type=click.Path(path_type=Path), metavar="FILE.toml",
              help="Read options (and seeds) from a TOML file, by the options' names "
                   "(max-depth = 2); options given here win. crawler config DIR writes one.")
@crawl_options
@click.pass_context
def crawl(ctx, **params) -> None:
    """Crawl breadth-first from SEED URLs and save pages, text, index and trace in --out.

    \b
    Examples:
      crawler crawl https://example.org/ --out example --max-depth 2 --delay 2
      crawler crawl -i seeds.txt --config course.toml --out example
      crawler crawl --out example --resume        (continue it after a stop)
    """
    _exit_for(crawl_from(ctx, **params))


def crawl_from(ctx, seeds, out, resume, overwrite, seed_files, config_file, **options) -> dict:
    """Run the crawl a parsed `crawl` command line asks for; its stats (the
    Python API's crawl() comes in here too, with its keywords as options)."""
    seeds, out, from_file = _seeds_and_config(ctx, seeds, out, seed_files, config_file, options)
    _read_topic_file(options)
    options["redis_url"] = redis_servers(options["redis_url"])
    _refuse_unused(ctx, options, from_file)
    if options["redis_url"] and (refusal := order_refusal(
            options["order"], "--redis", options["order_params"])):
        raise click.UsageError(refusal)
    if _given(ctx, "frontier_ram", options, from_file) and (
            refusal := order_refusal(options["order"], "--frontier-ram")):
        raise click.UsageError(refusal)
    redis_url, crawl_id, lease = (
        options.pop(name) for name in ("redis_url", "crawl_id", "lease_seconds"))
    if redis_url:
        if options["sitemaps"] or options["sitemap_urls"]:
            raise click.UsageError("--sitemaps and --sitemap work in a crawl of one machine; a "
                                   "shared crawl reads no sitemaps (so far)")
        if resume:
            raise click.UsageError("--resume continues a crawl of one machine; a shared crawl "
                                   "goes on with: crawler worker --redis URL --crawl-id NAME --out DIR")
        if not seeds:
            raise click.UsageError("Missing argument 'SEED...': a shared crawl starts from seeds; "
                                   "to join one, run crawler worker")
        _ask_password(options)
        return _start_shared(make_config(seeds, out, options), redis_url, crawl_id, lease,
                             overwrite)
    if resume:
        seeds, options = _saved_settings(ctx, out, seeds, options, from_file)
    elif not seeds:
        raise click.UsageError("Missing argument 'SEED...': give at least one start URL, "
                               "or --resume to continue a crawl")
    _ask_password(options)   # after --resume has read the saved --http-user
    config = make_config(seeds, out, options)
    return run_crawl(config, resume=resume, overwrite=overwrite)


# Options only a shared crawl has: without --redis they would do nothing.
SHARED_ONLY = ("crawl_id", "lease_seconds")


def redis_servers(urls: tuple[str, ...]) -> tuple[str, ...] | None:
    """The --redis URLs (None: not given); one given twice is a usage error
    (it would hold two partitions' keys under one name)."""
    twice = sorted({url for url in urls if urls.count(url) > 1})
    if twice:
        shown = _redisqueue().shown_url(twice[0])
        raise click.UsageError(f"--redis {shown} given twice: give each Redis server once")
    return tuple(urls) or None


def _redisqueue():
    """urllist.redisqueue, or a usage error saying what to install."""
    try:
        from urllist import redisqueue
    except ImportError:
        raise click.UsageError("a shared crawl needs redis-py: pip install -e '.[redis]' "
                               "(or: pip install redis hiredis)") from None
    return redisqueue


def _refuse_unused(ctx, options: dict, from_file: set) -> None:
    """An option given explicitly that this kind of crawl would not use is
    a usage error, not silently ignored: a single-node one with --redis, a
    shared-crawl one without."""
    from controller.shared import SINGLE_NODE_ONLY
    if options["redis_url"]:
        for name, instead in SINGLE_NODE_ONLY.items():
            if _given(ctx, name, options, from_file):
                raise click.UsageError(f"{_option_of(name)} does not apply to a shared crawl "
                                       f"(--redis): {instead}; leave {_option_of(name)} out")
        return
    for name in SHARED_ONLY:
        if _given(ctx, name, options, from_file):
            raise click.UsageError(f"{_option_of(name)} is for a crawl shared through Redis: "
                                   f"give --redis URL too, or leave {_option_of(name)} out")


def _given(ctx, name: str, options: dict, from_file: set) -> bool:
    """Whether the user set option ``name``: on the command line, or in
    --config to a value other than its default (`crawler config DIR` writes
    every option, so a default there asks for nothing)."""
    if name in from_file:
        default = next(param.default for param in ctx.command.params if param.name == name)
        return options[name] != default
    return ctx.get_parameter_source(name) not in (None, ParameterSource.DEFAULT)


def _seeds_and_config(ctx, seeds, out: Path, seed_files, config_file, options: dict):
    """Seeds from the command line, -i files and --config, merged in that order;
    --config's options where the command line gave none. (seeds, out, the
    names the config file set.)"""
    try:
        file_seeds = [seed for name in seed_files for seed in read_seed_file(name)]
        values = read_config(config_file, ctx.command, ctx) if config_file else {}
    except InputError as exc:
        raise click.UsageError(str(exc)) from None
    config_seeds = values.pop("seeds", [])
    set_here = set()
    for name, value in values.items():
        if ctx.get_parameter_source(name) == ParameterSource.DEFAULT:
            set_here.add(name)
            if name == "out":
                out = value
            else:
                options[name] = value
    return (*seeds, *file_seeds, *config_seeds), out, set_here


def _start_shared(config: CrawlConfig, redis_url: tuple[str, ...], crawl_id: str, lease: float,
                  overwrite: bool) -> dict:
    """Create the shared crawl in Redis, then work on it as its first worker."""
    from controller.shared import create, default_worker_id
    crawl = _shared_crawl(redis_url, crawl_id)
    if crawl.exists():
        where = crawl.address()
        raise click.UsageError(f"--crawl-id {crawl_id}: Redis at {where} holds a crawl of "
                               f"that name already; join it with crawler worker --redis "
                               f"{where} --crawl-id {crawl_id} --out DIR, forget it once it is "
                               f"finished (crawler forget --redis {where} --crawl-id "
                               f"{crawl_id}), or pick another name")
    def create_it():
        if not create(crawl, config, lease):
            raise click.UsageError(f"--crawl-id {crawl_id}: Redis holds part of a crawl of that "
                                   f"name (another crawler crawl is creating it, or one died "
                                   f"while creating it: crawler forget --redis {crawl.address()} "
                                   f"--crawl-id {crawl_id} --force removes it); or pick another name")
    return run_crawl(config, overwrite=overwrite, shared_id=default_worker_id(config.out),
                     shared_crawl=crawl, before_run=create_it)


def _shared_crawl(redis_url: tuple[str, ...], crawl_id: str):
    from controller.shared import shared_crawl
    if "{" in crawl_id or "}" in crawl_id:
        # The id is the keys' hash tag, crawl:{ID}:, which must end at its first "}".
        raise click.UsageError(f"--crawl-id {crawl_id}: a crawl's name cannot contain {{ or }}")
    errors = _redisqueue().RedisStateError
    try:
        return shared_crawl(redis_url, crawl_id)
    except errors as exc:
        raise click.UsageError(str(exc)) from None


def _settings_within(crawl, seconds: float) -> dict | None:
    """The crawl's settings, waited for up to ``seconds`` while it is not
    made yet (a worker need not be started after its maker: all of them
    start fetching together)."""
    deadline = time.monotonic() + seconds
    while True:
        settings = crawl.settings()
        if settings is not None or time.monotonic() >= deadline:
            return settings
        time.sleep(WAIT_FOR_CRAWL_POLL)


def _same_partitions(crawl) -> None:
    """A worker must give the servers the crawl was made over (its partitions')."""
    from urllist.redisqueue import RedisStateError
    try:
        crawl.check_partitions()
    except RedisStateError as exc:
        raise click.UsageError(str(exc)) from None


def _saved_settings(ctx, out: Path, seeds, options: dict, from_file: set = frozenset()):
    """For --resume: every setting the user did not give comes from the crawl in
    --out (its --delay and --max-pages too, not the defaults), so
    `crawler crawl --out DIR --resume` continues the crawl as it was started;
    given ones are checked later (MUST_MATCH) or simply used (limits, speed)."""
    saved_file = out / STATE_DIR / SETTINGS_FILE
    if not saved_file.exists():
        return seeds, options   # Crawl() explains what is missing
    try:
        saved = json.loads(saved_file.read_text(encoding="utf-8"))
    except (OSError, UnicodeError, json.JSONDecodeError) as exc:
        raise click.UsageError(f"{saved_file} cannot be read ({exc}); it is what --resume "
                               f"continues from: restore it, or start anew with --overwrite") from None
    if not isinstance(saved, dict) or not isinstance(saved.get("seeds"), list):
        raise click.UsageError(f"{saved_file} is not a crawl's settings (no seeds list); restore "
                               f"it, or start anew with --overwrite")
    def default(name: str) -> bool:
        return ctx.get_parameter_source(name) == ParameterSource.DEFAULT and name not in from_file

    for name in options:
        if name in saved and default(name):
            options[name] = tuple(saved[name]) if isinstance(saved[name], list) else saved[name]
    if "obey_robots" in saved and default("ignore_robots"):
        options["ignore_robots"] = not saved["obey_robots"]
    if "cookies" in saved and default("no_cookies"):
        options["no_cookies"] = not saved["cookies"]
    options["headers"] = _saved_headers(saved, () if default("headers") else options["headers"])
    _given_proxy_wins(options, default)
    fixed_delay_drops_bounds(options, {name for name in options if not default(name)})
    return seeds or tuple(saved["seeds"]), options


def fixed_delay_drops_bounds(options: dict, given) -> None:
    """A fixed --delay given anew, over a crawl saved with --delay auto: the
    saved --min-delay/--max-delay, which bound auto only, go (unless given)."""
    if "delay" in given and options["delay"] != AUTO_DELAY:
        for name, value in (("min_delay", DEFAULT_MIN_DELAY), ("max_delay", DEFAULT_MAX_DELAY)):
            if name not in given:
                options[name] = value


def _ask_password(options: dict) -> None:
    """--ask-password: the password from the terminal, before anything is written."""
    if not options.pop("ask_password", False):
        return
    if options.get("http_password"):
        raise click.UsageError(f"give --http-password (or ${PASSWORD_ENV}) or --ask-password, "
                               f"not both")
    if not options.get("http_user"):
        raise click.UsageError("--ask-password asks for --http-user's password: give "
                               "--http-user too")
    options["http_password"] = click.prompt(f"Password for {options['http_user']}",
                                            hide_input=True, err=True)


def _saved_headers(saved: dict, given: tuple) -> tuple:
    """--resume: the crawl's saved --header lines (its secret ones are never
    saved) and those given again; a name given again replaces the saved one."""
    names = {line.partition(":")[0].strip().lower() for line in given}
    kept = [line for line in saved.get("headers", [])
            if line.partition(":")[0].strip().lower() not in names]
    return (*kept, *given)


def _given_proxy_wins(options: dict, default) -> None:
    """--proxy or --no-proxy given now replaces the other one saved."""
    if not default("proxy") and default("no_proxy"):
        options["no_proxy"] = False
    if not default("no_proxy") and default("proxy"):
        options["proxy"] = ""


def _read_topic_file(options: dict) -> None:
    path = options.pop("topic_file", None)
    if path is None:
        return
    if options.get("topic"):
        raise click.UsageError("give --topic or --topic-file, not both")
    try:
        options["topic"] = path.read_text(encoding="utf-8")
    except (OSError, UnicodeError) as exc:
        raise click.UsageError(f"--topic-file {path}: cannot be read ({exc}); give a UTF-8 "
                               f"text file") from None


def make_config(seeds, out: Path, options: dict) -> CrawlConfig:
    """The crawl's config from the command line; CrawlConfig checks every value
    (before --out is touched) and its ConfigError becomes a usage error."""
    quiet = options.pop("quiet")
    options["obey_robots"] = not options.pop("ignore_robots")
    options["cookies"] = not options.pop("no_cookies")
    try:
        return CrawlConfig(seeds=tuple(seeds), out=out, progress=not quiet, **options)
    except ConfigError as exc:
        raise click.UsageError(exc.problem if exc.named else
                               f"{_option_of(exc.field)}: {exc.problem}") from None


# Config fields whose command-line spelling is not "--" + the field's name.
OPTION_NAMES = {"seeds": "seed", "obey_robots": "--ignore-robots", "text_mode": "--text",
                "drop_params": "--drop-param", "progress": "--quiet", "order_params": "--order-param",
                "sitemap_urls": "--sitemap", "headers": "--header", "cookies": "--no-cookies"}


def _option_of(field_name: str) -> str:
    return OPTION_NAMES.get(field_name, "--" + field_name.replace("_", "-"))


def run_crawl(config: CrawlConfig, expected=None, *, resume=False, overwrite=False,
              shared_crawl=None, shared_id: str = "", before_run=None) -> dict:
    """Run one crawl with Ctrl-C / SIGTERM / SIGHUP as a clean stop; print the summary.
    With ``shared_crawl``, as worker ``shared_id`` of a crawl in Redis;
    ``before_run`` runs once the output directory is known to be usable."""
    from controller.shared import Shared, in_force_shared
    proxies = _proxy_line(config)   # before anything is written: a bad variable is a usage error
    progress = Progress() if config.progress else None
    shared = Shared(shared_crawl, shared_id) if shared_crawl is not None else None
    try:
        crawl = Crawl(config, on_level=progress.on_level if progress else None,
                      on_progress=progress.on_progress if progress else None,
                      resume=resume, overwrite=overwrite, shared=shared)
    except OutputError as exc:
        raise click.UsageError(str(exc)) from None
    except LocalFailureError as exc:
        raise LocalFailureExit(str(exc)) from None
    if crawl.finished is not None:
        click.echo(f"crawler: {nothing_to_resume(crawl.finished, config.out)}", err=True)
        return {**crawl.finished, "nothing_to_resume": True}
    if before_run is not None:
        before_run()
    if progress:
        progress.echo(in_force(config))
        if shared is not None:
            progress.echo(in_force_shared(shared, config))
        if proxies:
            progress.echo(proxies)
    try:
        with stop_signals(crawl, progress):
            stats = crawl.run()
    except _shared_errors(shared) as exc:
        # Lost Redis for good, or fenced: the rows written so far stay, and
        # Redis keeps what this worker committed until it runs again.
        raise click.ClickException(_forgotten(shared, config) or str(exc)) from None
    say(level_table(stats, expected))
    for line in summary_lines(stats, config.out):
        say(line)
    if shared is not None:
        say(share_line(shared))
    return stats


def share_line(shared) -> str:
    """A worker's last line: its counts are its share, and where the whole is."""
    crawl, worker = shared.crawl, shared.worker
    return (f"shared: these counts are worker {worker}'s share of crawl {crawl.crawl_id}; the "
            f"whole crawl: crawler status --redis {crawl.address()} --crawl-id {crawl.crawl_id}, "
            f"and once every worker has ended, crawler merge --out DIR with every worker's "
            f"--out (crawler status lists them)")


def _proxy_line(config: CrawlConfig) -> str:
    """The proxies this process will use, in one line ("" for none); a proxy
    or CA bundle variable of the environment that cannot be used is a usage
    error (the Fetcher reads the same environment)."""
    try:
        rules = ProxyRules.resolve(config.proxy, config.no_proxy, os.environ)
    except ValueError as exc:
        raise click.UsageError(f"{exc} (or --no-proxy to ignore the proxy variables)") from None
    if not config.ca_certificate and not config.no_check_certificate:
        bundle = tls_verification(True, "", os.environ)
        if isinstance(bundle, str) and (problem := ca_bundle_problem(bundle)):
            names = "/".join(CA_BUNDLE_VARIABLES)
            raise click.UsageError(f"the CA bundle of the environment ({names}): {problem}")
    return rules.describe()


@contextmanager
def stop_signals(crawl: Crawl, progress: Progress | None):
    """Ctrl-C, SIGTERM and SIGHUP stop the crawl cleanly while it runs; a
    second Ctrl-C quits at once. SIGHUP stays ignored when the crawler was
    started ignoring it (nohup): that is how a crawl outlives its terminal."""
    previous = {}
    if threading.current_thread() is threading.main_thread():   # signals reach no other thread
        stop = _stopper(crawl, progress)
        previous = {sig: signal.signal(sig, stop) for sig in SIGNAL_STOPS
                    if not (sig == signal.SIGHUP and signal.getsignal(sig) == signal.SIG_IGN)}
    try:
        yield
    finally:
        if progress:
            progress.close()
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _forgotten(shared, config: CrawlConfig) -> str | None:
    """Why a worker was refused if its crawl was removed (crawler forget
    --force) while it ran, else None."""
    import redis
    try:
        if shared.crawl.exists():
            return None
    except redis.exceptions.RedisError:
        return None   # Redis is away: the error itself says so
    return (f"crawl {shared.crawl.crawl_id} was removed from Redis (crawler forget --force) "
            f"while worker {shared.worker} ran; its rows so far are in {config.out}")


def _shared_errors(shared) -> tuple[type[Exception], ...]:
    """What ends a shared crawl's worker with one line: () for a crawl of one."""
    if shared is None:
        return ()
    from urllist.redisqueue import RedisStateError
    return (RedisStateError,)


def _stopper(crawl: Crawl, progress: Progress | None):
    """The handler of the stop signals: the first one stops the crawl; only
    a Ctrl-C that comes REPEAT_SECONDS later or more quits at once."""
    first: list[float] = []   # when the stop began

    def stop(signum, frame):
        if first:
            if signum == signal.SIGINT and time.monotonic() - first[0] >= REPEAT_SECONDS:
                raise KeyboardInterrupt  # stop now: the files are flushed row by row
            return   # the same stop, delivered again
        first.append(time.monotonic())
        crawl.request_stop(SIGNAL_STOPS[signum])
        message = "stopping: finishing the requests in flight (press Ctrl-C again to quit now)"
        try:
            progress.echo(message) if progress else say(message, err=True)
        except RuntimeError:   # "reentrant call": the signal came while stderr was being written
            pass
    return stop


def failure(stats: dict) -> str | None:
    """Why a crawl that ran could not do its job (exit status 1), or None."""
    out = stats["settings"]["out"]
    if stats.get("local_failure"):
        return stats["local_failure"]
    if stats["stop_reason"] == "parser-died":
        return (f"a parser process died ({stats['stop_detail']}); the pages it held were not "
                f"recorded: crawler crawl --out {out} --resume fetches them")
    if stats["seeds_failed"] and len(stats["seeds_failed"]) == stats["levels"][0]["urls"]:
        first = stats["seeds_failed"][0]
        return (f"every seed failed ({first['url']}: {first['error']}); "
                f"{_seed_failure_hint(first['error'])} (index.csv has each seed's error)")
    return None


def nothing_to_resume(stats: dict, out: Path) -> str:
    reason = stats["stop_reason"]
    if reason == "max-pages":
        return (f"the crawl in {out} is finished (stop reason max-pages, {stats['urls']:,} URLs); "
                f"nothing to resume: give a larger --max-pages to go on")
    return f"the crawl in {out} is finished (stop reason {reason}); nothing to resume"


class LocalFailureExit(click.ClickException):
    """This machine could not write the crawl's files: one line, exit 3."""
    exit_code = EXIT_LOCAL


def _seed_failure_hint(error: str) -> str:
    """What to check after every seed failed with ``error``."""
    if "certificate verify failed" in error:
        return ("to trust the server's CA give --ca-certificate FILE (or --no-check-certificate "
                "to skip the check)")
    if "proxy" in error.partition(":")[2]:
        return "check the proxy (--proxy, http_proxy, https_proxy; --no-proxy to go direct)"
    return "check the URL and that the server is up"


def _exit_for(stats: dict) -> None:
    reason, out = stats["stop_reason"], stats["settings"]["out"]
    if stats.get("nothing_to_resume"):
        return
    if stats.get("local_failure"):   # the line says how to go on (controller/localfailure.py)
        raise LocalFailureExit(stats["local_failure"])
    problem = failure(stats)
    if problem:
        say(f"crawler: error: {problem}", err=True)
        sys.exit(EXIT_FAILED)
    shared = stats.get("shared")
    if shared:
        if reason in (*EXIT_FOR_STOP, "max-seconds"):
            say(f"to go on with the shared crawl: crawler worker --redis URL --crawl-id "
                f"{shared['crawl_id']} --out {out}", err=True)
    elif reason in (*EXIT_FOR_STOP, "max-seconds", "max-pages"):
        say(f"to continue this crawl: crawler crawl --out {out} --resume"
            + (" --max-pages N" if reason == "max-pages" else ""), err=True)
    if reason in EXIT_FOR_STOP:
        sys.exit(EXIT_FOR_STOP[reason])


def main(argv: list[str] | None = None) -> None:
    """Entry point: click with one-line errors instead of its usage block."""
    try:
        result = cli.main(args=argv, prog_name="crawler", standalone_mode=False)
    except click.exceptions.Abort:
        say("crawler: aborted", err=True)
        sys.exit(EXIT_INTERRUPTED)
    except click.ClickException as exc:
        say(f"crawler: error: {one_line(exc)}", err=True)
        sys.exit(EXIT_USAGE if isinstance(exc, click.UsageError) else exc.exit_code)
    sys.exit(result if isinstance(result, int) else 0)


def one_line(exc: click.ClickException) -> str:
    message = " ".join(exc.format_message().split())
    if isinstance(exc, click.UsageError) and exc.ctx is not None:
        message += f" (see '{exc.ctx.command_path} --help')"
    return message


@cli.command()
@click.argument("crawl_dir", metavar="DIR", type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice((*REPORT_FORMATS, "html")), default="text",
              show_default=True,
              help="text for the terminal, markdown for notes and issues, json for scripts, html "
                   "for a browser (one self-contained file: tables to sort, figures, settings).")
@click.option("--top", type=click.IntRange(min=1), default=TOP_LINKS, show_default=True,
              help="How many pages to list by in-links and by out-links.")
@click.option("--plot", "plot_png", type=click.Path(dir_okay=False, path_type=Path), metavar="OUT.png",
              help="Also draw the crawl into this PNG (needs matplotlib: pip install -e '.[plot]').")
def report(crawl_dir, fmt, top, plot_png) -> None:
    """Summarize the crawl in DIR: levels, speed, status codes, errors, filtered
    ratio, top pages by links, dedup counters. Works on a finished crawl, one
    still running, or one that was killed (and says which). Needs no network.

    \b
    Examples:
      crawler report demo-crawl
      crawler report demo-crawl --format markdown > report.md
      crawler report demo-crawl --format html > report.html
      crawler report demo-crawl --plot demo-crawl.png
    """
    # Here, and export's in export: a crawl's start does not wait for the readers.
    from controller.readers.report import ReportError, build_report, render_report
    try:
        if plot_png is not None:
            from controller.readers.plot import check_plotting
            check_plotting()   # before anything is printed
        result = build_report(crawl_dir, top=top)
        if fmt == "html":
            from controller.readers.html import render_html
        # say: a reader that stops early (| head) does not keep the plot from being drawn
        say(render_html(result) if fmt == "html" else render_report(result, fmt), nl=False)
        if plot_png is not None:
            from controller.readers.plot import write_plot
            write_plot(result, plot_png)
            say(f"plot written to {plot_png}", err=True)
    except ReportError as exc:
        raise click.UsageError(str(exc)) from None



@cli.command()
@click.argument("crawl_dir", metavar="DIR", type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(EXPORT_FORMATS), default="jsonl",
              show_default=True,
              help="jsonl: one JSON object per page and line; parquet: a table for large corpora "
                   "(needs pyarrow: pip install -e '.[parquet]').")
@click.option("--out", "-o", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE",
              help="Write to FILE, replacing it only once the export is whole; default: "
                   "standard output (jsonl only).")
@click.option("--html", is_flag=True,
              help="Also export each page's raw bytes as html (base64 in jsonl, binary in parquet).")
def export(crawl_dir, fmt, out, html) -> None:
    """Write one record per saved page of the crawl in DIR (id, url, final_url,
    level, status, title, text, fetched_at, content_md5, duplicate_of ...), in
    index order. Streams, so memory does not grow with the crawl; works on a
    finished crawl, one still running, or one that was killed.

    \b
    Examples:
      crawler export demo-crawl > pages.jsonl
      crawler export demo-crawl --format parquet --out pages.parquet
    """
    if out is not None and str(out) == "-":
        out = None
    from controller.readers.export import export_pages
    from controller.readers.files import ReportError
    notes: list[str] = []
    try:
        count = export_pages(crawl_dir, fmt, out, html=html, stdout=sys.stdout.buffer, notes=notes)
    except ReportError as exc:
        raise click.UsageError(str(exc)) from None
    for note in notes:
        click.echo(f"export: {note}", err=True)
    click.echo(f"exported {count:,} pages to {out or 'standard output'} ({fmt})", err=True)


@cli.command()
@click.argument("worker_dirs", nargs=-1, required=True, metavar="WORKER_DIR...",
                type=click.Path(path_type=Path))
@click.option("--out", "-o", type=click.Path(path_type=Path), required=True,
              help="The merged crawl directory: new or empty, unless --overwrite.")
@click.option("--overwrite", is_flag=True, help="Replace the crawl files in a non-empty --out.")
def merge(worker_dirs, out, overwrite) -> None:
    """Merge the output directories of a shared crawl's workers into one
    crawl directory, which report, export, warc-index and read_crawl read as
    any other. Needs no network and never writes into the workers' directories.

    \b
    Example:
      crawler merge --out site w1 w2 w3
      crawler report site
    """
    from controller.readers.merge import MergeError, merge_crawls
    try:
        merged = merge_crawls(worker_dirs, out, overwrite=overwrite)
    except MergeError as exc:
        raise click.UsageError(str(exc)) from None
    for note in merged.notes:
        click.echo(f"merge: {note}", err=True)
    ended = "" if merged.ended else "; no worker ended, so it is a killed crawl (no stats.json)"
    click.echo(f"merged {merged.workers} worker directories into {out}: {merged.urls:,} URLs, "
               f"{merged.pages:,} pages ({merged.linked:,} files hard-linked, {merged.copied:,} "
               f"copied){ended}")

DEMO_DEPTH = 6  # the demo site's levels are 0..6; deeper levels hold only the calendar trap


@cli.command()
@click.option("--out", "-o", type=click.Path(path_type=Path), default=Path("demo-crawl"),
              show_default=True, help="Output directory.")
@click.option("--port", type=click.IntRange(min=0, max=65535), default=0,
              help="Port for the demo site on 127.0.0.1 (default: any free port).")
@click.option("--max-depth", type=click.IntRange(min=1), default=DEMO_DEPTH, show_default=True)
@click.option("--workers", type=click.IntRange(min=1, max=256), default=4, show_default=True)
@click.option("--delay", type=click.FloatRange(min=0), default=0.0, show_default=True,
              help="Seconds between two requests (the demo site is local, so 0 is polite enough).")
@click.option("--dedup", type=click.Choice(sorted(SEEN_ALGORITHMS)), default="sieve",
              show_default=True)
@click.option("--content-dedup", type=click.Choice(CONTENT_DEDUP_MODES), default="near",
              show_default=True, help="Which duplicate pages to mark (the site plants both kinds).")
@click.option("--warc", is_flag=True, help="Also write crawl.warc.gz.")
@click.option("--ignore-robots", is_flag=True)
@click.option("--quiet", "-q", is_flag=True)
def demo(out, port, max_depth, workers, delay, dedup, content_dedup, warc, ignore_robots,
         quiet) -> None:
    """Serve the bundled demo site on 127.0.0.1 and crawl it breadth-first.

    The table at the end compares every level with the site's own ground
    truth (URLs / pages); the exit status is 1 if any level differs.
    """
    from demosite import DemoSite

    try:
        refuse_if_locked(out)   # before the demo server starts and says so
    except OutputError as exc:
        raise click.UsageError(str(exc)) from None
    site = DemoSite()
    truth = site.ground_truth(max_depth, obey_robots=not ignore_robots)
    expected = [(level.urls, level.pages) for level in truth.levels]
    with _serving(site, port) as server:
        say(f"demo site: {server.url} ({len(site.paths())} pages, plus a calendar trap)", err=True)
        config = CrawlConfig(seeds=(server.url,), out=out, max_depth=max_depth, max_pages=0,
                             workers=workers, per_host=workers, delay=delay, dedup=dedup,
                             content_dedup=content_dedup, warc=warc,
                             obey_robots=not ignore_robots, progress=not quiet,
                             no_proxy=True)   # the demo site is on this machine
        stats = run_crawl(config, expected, overwrite=True)   # the demo's own directory
    got = [(row["urls"], row["pages"]) for row in stats["levels"]]
    if stats["stop_reason"] in EXIT_FOR_STOP or stats.get("local_failure"):
        _exit_for(stats)
    if got != expected:
        say("demo: the crawl does NOT match the demo site's ground truth", err=True)
        sys.exit(1)
    say(f"demo: every level matches the demo site's ground truth; next: "
        f"less {out}/trace.log, crawler report {out}, crawler report {out} --plot {out}.png")


@cli.command("serve-demo")
@click.option("--port", type=click.IntRange(min=0, max=65535), default=8000, show_default=True,
              help="Port on 127.0.0.1 (0 = any free port).")
@click.option("--site", "site_name", type=click.Choice(["news", "blog"]), default="news",
              show_default=True,
              help="news: the demo site `crawler demo` crawls; blog: 1,000 pages (800 posts with "
                   "a title and a post, 200 menu pages) for --extract.")
def serve_demo(port, site_name) -> None:
    """Serve a bundled demo site on 127.0.0.1 until Ctrl-C.

    \b
    Example (extraction from the blog site's 800 posts):
      crawler serve-demo --site blog --port 8000 &
      crawler crawl http://127.0.0.1:8000/ --out blog --max-pages 0 --delay 0 \\
        --extract title=css:h1.post-title --extract post=css:div.post-body \\
        --extract-exclude css:div.ad --extract-from '/\\d{4}/\\d{2}/\\d{2}/[^/?#]+\\.html$'
    """
    site = None
    if site_name == "blog":
        from demosite.blog import BlogSite
        site = BlogSite()
    server = _demo_server(site, port)
    click.echo(f"serving the {site_name} demo site at {server.url} (Ctrl-C stops)")
    server.serve_forever()   # returns on Ctrl-C
    click.echo("stopped")


REDIS_OF_CRAWL = click.option("--redis", "redis_url", required=True, multiple=True,
                              metavar="redis://HOST:PORT/DB",
                              help="The Redis that holds the shared crawl; repeated for a "
                                   "crawl over several servers (the list it was made with, in "
                                   "the same order).")


@cli.command()
@REDIS_OF_CRAWL
@click.option("--crawl-id", default="crawl", show_default=True, metavar="NAME",
              help="The shared crawl's name (as given to crawler crawl --redis).")
@click.option("--out", "-o", type=click.Path(path_type=Path), required=True,
              help="This worker's own output directory (crawler merge joins them).")
@click.option("--workers", type=click.IntRange(min=1, max=256), default=8, show_default=True,
              help="Fetching threads.")
@click.option("--processes", type=click.IntRange(min=0, max=64), default=default_processes(),
              show_default="cores - 1, at least 1",
              help="Parser processes; 0 = parse in the fetch threads.")
@click.option("--worker-id", metavar="ID",
              help="Stable name of this worker (default: host name and --out): a restarted "
                   "worker with the same id gives back what it held at once.")
@click.option("--wait-for-crawl", type=click.FloatRange(min=0), default=0.0, show_default=True,
              metavar="SECONDS",
              help="If the crawl is not in Redis yet, wait this long for it (workers "
                   "started together with the crawler crawl that makes it).")
@click.option("--quiet", "-q", is_flag=True, help="No progress display.")
@click.option("--proxy", default="", metavar="URL",
              help="This worker's proxy (as for crawl; default: its own environment's).")
@click.option("--no-proxy", is_flag=True, help="Ignore this worker's proxy variables.")
@click.option("--ca-certificate", default="", metavar="FILE",
              help="Trust the CAs in this PEM file on this worker.")
@click.option("--no-check-certificate", is_flag=True,
              help="Do not verify TLS certificates on this worker.")
@secrets_again
def worker(redis_url, crawl_id, out, workers, processes, worker_id, wait_for_crawl, quiet, headers,
           http_password, ask_password, **network) -> None:
    """Join a shared crawl in Redis and work on it until it is done.

    Every setting that decides which URLs the crawl has comes from Redis;
    only the threads, processes, output directory, network (proxies, from
    this worker's environment or --proxy, and TLS trust) and cookie jar are
    this worker's. Redis holds no secret: a crawl started with
    --http-password or a secret --header needs them again here.
    Run it again with the same --out after a crash: it picks up its files.
    Its summary and stats.json count its own pages, its share of the crawl
    (crawler status and crawler merge show the whole).

    \b
    Example:
      crawler crawl http://site/ --redis redis://10.0.0.5:6379/0 --crawl-id site --out w1
      crawler worker --redis redis://10.0.0.5:6379/0 --crawl-id site --out w2   (elsewhere)
    """
    from controller.shared import default_worker_id, worker_config
    crawl = _shared_crawl(redis_servers(redis_url), crawl_id)
    settings = _settings_within(crawl, wait_for_crawl)
    if settings is None:
        where = crawl.address()
        raise click.UsageError(f"--crawl-id {crawl_id}: no such crawl in Redis at {where}; "
                               f"start it with crawler crawl SEED --redis {where} "
                               f"--crawl-id {crawl_id} --out DIR")
    _same_partitions(crawl)
    secrets = secrets_given(settings, headers, http_password, ask_password)
    try:
        config = worker_config(settings, out, workers=workers, processes=processes,
                               progress=not quiet, **secrets, **network)
    except ConfigError as exc:
        raise click.UsageError(f"the settings in Redis cannot be used: {exc}") from None
    refuse_missing_secrets(settings, config)
    resume = (out / "index.csv").is_file()   # this worker was here before: go on from its files
    stats = run_crawl(config, resume=resume, shared_crawl=crawl,
                      shared_id=worker_id or default_worker_id(out))
    if stats["stop_reason"] in EXIT_FOR_STOP:
        sys.exit(EXIT_FOR_STOP[stats["stop_reason"]])


@cli.command()
@REDIS_OF_CRAWL
@click.option("--crawl-id", default="crawl", show_default=True, metavar="NAME",
              help="The shared crawl's name.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True, help="text for people, json for scripts.")
def status(redis_url, crawl_id, fmt) -> None:
    """Show a shared crawl: its open level, queue, leases, each worker's
    speed (pages per minute over the last 2 minutes, the weight that decides
    how many URLs it may hold), and where every worker that joined writes
    (its host and --out: the directories crawler merge needs). Reads only;
    safe while the crawl runs."""
    crawl = _shared_crawl(redis_servers(redis_url), crawl_id)
    if not crawl.exists():
        raise click.UsageError(f"--crawl-id {crawl_id}: no such crawl in Redis at "
                               f"{crawl.address()}")
    shown = with_places(crawl.status(), crawl.places())
    if fmt == "json":
        click.echo(json.dumps(shown, indent=2))
        return
    for line in status_lines(shown):
        click.echo(line)


@cli.command()
@REDIS_OF_CRAWL
@click.option("--crawl-id", required=True, metavar="NAME",
              help="The shared crawl to remove (no default: name it).")
@click.option("--force", is_flag=True,
              help="Also remove a crawl that is unfinished or has live workers (each such "
                   "worker is refused at its next call to Redis and stops with one line).")
def forget(redis_url, crawl_id, force) -> None:
    """Remove a shared crawl's keys from Redis, so that its id can be used
    again. Refused while the crawl is unfinished or a worker is live, unless
    --force. Keys are found with SCAN and removed with UNLINK in batches
    (never KEYS, which would block Redis); other crawls' keys are not
    touched, nor the workers' output directories.

    \b
    Example:
      crawler status --redis redis://10.0.0.5:6379/0 --crawl-id site   (finished?)
      crawler forget --redis redis://10.0.0.5:6379/0 --crawl-id site
    """
    crawl = _shared_crawl(redis_servers(redis_url), crawl_id)
    where = crawl.address()
    if not crawl.exists() and not crawl.leftover():
        raise click.UsageError(f"--crawl-id {crawl_id}: no such crawl in Redis at {where}")
    if crawl.exists() and not force:
        _refuse_to_forget(crawl)
    removed = crawl.forget()
    if left := crawl.leftover():
        raise click.ClickException(f"crawl {crawl_id}: {removed:,} keys removed, but a worker "
                                   f"still running wrote {left:,} since; run crawler forget "
                                   f"again once it has stopped")
    click.echo(f"forgot crawl {crawl_id} at {where}: {removed:,} keys removed; the id can be "
               f"used again (the workers' output directories are kept)")


def _refuse_to_forget(crawl) -> None:
    """A usage error while ``crawl`` has live workers or is unfinished."""
    name = crawl.crawl_id
    if live := crawl.live_workers():
        raise click.UsageError(f"--crawl-id {name}: live workers ({', '.join(live)}); "
                               f"wait for them to end (crawler status), or give --force")
    if not crawl.finished():
        shown = crawl.status()
        raise click.UsageError(f"--crawl-id {name}: unfinished ({shown['processed']:,} of "
                               f"{shown['queue_total']:,} URLs processed); finish it with "
                               f"crawler worker, or give --force to forget it as it is")


def with_places(shown: dict, places: dict[str, dict]) -> dict:
    """The status with where each worker writes: its host and --out on each
    live worker's entry, and every worker that ever joined under "places"."""
    working = {w["worker"] for w in shown["workers"]}
    for w in shown["workers"]:
        w.update(places.get(w["worker"], {"host": "", "out": ""}))
    shown["places"] = [{"worker": name, **place, "left": name not in working}
                       for name, place in sorted(places.items())]
    return shown


def status_lines(shown: dict) -> list[str]:
    state = "finished" if shown["finished"] else f"open level {shown['open_level']}"
    if shown["partitions"] > 1:
        state += f" (partitioned by host over {shown['partitions']} partitions)"
    lines = [f"crawl {shown['crawl_id']}: {state}; {shown['queue_total']:,} URLs queued in all, "
             f"{shown['processed']:,} processed, {shown['leased']:,} leased, "
             f"{shown['reclaimed']:,} reclaimed from workers that went silent",
             f"waiting: {shown['queued_open_level']:,} URLs of the open level, "
             f"{shown['queued_next_level']:,} of the next, on {shown['hosts_with_work']:,} hosts",
             f"{'worker':<28} {'leased':>7} {'pages/min':>10} {'silent':>8} {'rows to write':>14}"
             f"  writes to"]
    for w in shown["workers"]:
        lines.append(f"{w['worker']:<28} {w['leased']:>7} {w['pages_per_minute']:>10.1f} "
                     f"{w['silent_for_seconds']:>7.1f}s {w['rows_unconfirmed']:>14}  {_place(w)}")
    if shown["places"]:
        lines.append("every worker that joined, and its --out (crawler merge --out DIR takes "
                     "them all):")
        lines += [f"  {p['worker']:<28} {_place(p)}{' (left)' if p['left'] else ''}"
                  for p in shown["places"]]
    return lines


def _place(worker: dict) -> str:
    return f"{worker['host']}:{worker['out']}" if worker["out"] else "(not recorded)"


@contextmanager
def _serving(site=None, port: int = 0):
    """A running demo server; a busy port is a one-line usage error."""
    server = _demo_server(site, port)
    server.start()
    try:
        yield server
    finally:
        server.stop()


def _demo_server(site, port: int):
    from demosite import DemoServer

    try:
        return DemoServer(site, port=port)   # binds the port here
    except OSError as exc:
        raise click.UsageError(f"cannot start the demo site on port {port}: "
                               f"{exc.strerror or exc}; choose another --port") from None


@cli.command("config")
@click.argument("crawl_dir", metavar="DIR", type=click.Path(path_type=Path))
def config_of(crawl_dir) -> None:
    """Print the crawl in DIR's settings as a config file for crawl --config.

    \b
    Example (the same crawl again, into another directory):
      crawler config study-1 > study.toml
      crawler crawl --config study.toml --out study-2
    """
    saved_file = crawl_dir / STATE_DIR / SETTINGS_FILE
    try:
        saved = json.loads(saved_file.read_text(encoding="utf-8"))
    except (OSError, UnicodeError, json.JSONDecodeError) as exc:
        raise click.UsageError(f"{saved_file} cannot be read ({exc}); give a crawl directory "
                               f"(one that crawler crawl --out wrote)") from None
    click.echo(settings_as_toml(saved, crawl), nl=False)


@cli.command("warc-index")
@click.argument("path", metavar="DIR", type=click.Path(path_type=Path))
def warc_index(path) -> None:
    """Print a CDX index (one line per response or revisit record, keyed and
    sorted as pywb and OpenWayback look URLs up) of the crawl.warc.gz in DIR
    (or of a .warc.gz file): a pywb collection indexed with it replays the crawl.

    \b
    Example:
      crawler crawl http://127.0.0.1:8000/ --out site --warc
      crawler warc-index site > site.cdx
    """
    from controller.readers.cdx import WarcError, cdx_lines, torn_tail
    warc = path / WARC_FILE if path.is_dir() else path
    if not warc.is_file():
        raise click.UsageError(f"{warc} does not exist: give a crawl directory made with --warc "
                               f"(or a .warc.gz file)")
    torn = torn_tail(warc)
    try:
        header, *lines = cdx_lines(warc, whole_end=warc.stat().st_size - torn)
    except WarcError as exc:
        raise click.UsageError(f"{warc}: {exc}") from None
    # Sorted by SURT key (code point order = LC_ALL=C byte order), as replay tools look it up.
    click.echo("\n".join([header, *sorted(lines)]))
    if torn:
        click.echo(f"warc-index: the last {torn} bytes of {warc} are a record cut off (a killed "
                   f"crawl); the index lists the whole records before it; crawler crawl --out "
                   f"DIR --resume removes it", err=True)


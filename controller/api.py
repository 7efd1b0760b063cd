"""The Python API: ``crawl()`` for a notebook or a script, the door beside the CLI.

``crawl(seeds, out=..., **options)`` runs the crawl ``crawler crawl`` would
run: each keyword is a crawl option, spelled with ``_`` for ``-``
(``max_depth=2``, ``ignore_robots=True``, ``extract=["title=css:h1"]``,
``config_file="course.toml"``, ``seed_files=["seeds.txt"]``), and goes
through the command line's own parser. So a keyword is checked exactly as
the option is, with the same defaults, ``--config`` and ``--resume``
rules and the same one-line message, raised as ``UsageError`` before
anything is written. Ctrl-C (a notebook's interrupt) stops the crawl
cleanly, as on the command line, when crawl() runs in the main thread.
"""
from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import click

from controller import cli
from controller.readers.crawl_data import CrawlData, read_crawl

__all__ = ["CrawlResult", "UsageError", "crawl", "recrawl", "read_crawl", "CrawlData"]


class UsageError(ValueError):
    """A seed or an option crawl() cannot use; the message says what to change."""


@dataclass(frozen=True)
class CrawlResult:
    out: Path
    stats: dict                  # stats.json of the crawl, as written
    problem: str | None          # why the crawl could not do its job (the CLI's exit 1), or None

    @property
    def stop_reason(self) -> str:
        return self.stats["stop_reason"]

    def read(self) -> CrawlData:
        """The crawl's files as Python objects (read_crawl(out))."""
        return read_crawl(self.out)


def crawl(seeds: str | Iterable[str] = (), *, out: str | Path = "crawl-out",
          **options) -> CrawlResult:
    """Crawl breadth-first from ``seeds`` into ``out``; see the module docstring."""
    args = command_line(cli.crawl, [seeds] if isinstance(seeds, str) else list(seeds), out,
                        options)
    try:
        with cli.crawl.make_context("crawl", args) as ctx:
            stats = cli.crawl_from(ctx, **ctx.params)
    except click.ClickException as exc:
        raise UsageError(_message(exc)) from None
    stats = json.loads(json.dumps(stats))   # as stats.json holds it: lists, not tuples
    return CrawlResult(Path(stats["settings"]["out"]), stats, cli.failure(stats))


def command_line(command: click.Command, seeds: list[str], out: str | Path | None,
                 options: dict) -> list[str]:
    """The arguments of ``crawler crawl`` (or ``recrawl``, without ``out``)
    that say what the keywords say."""
    params = _keyword_params(command)
    args = [] if out is None else ["--out", str(out)]
    for keyword, value in options.items():
        param = params.get(keyword)
        if param is None:
            raise UsageError(f"{command.name}() got an unknown option {keyword!r}: the options are "
                             f"those of `crawler {command.name} --help` with _ for - "
                             f"(max_depth=2, ignore_robots=True)")
        flag = _long_name(param)
        if param.is_flag:
            if not isinstance(value, bool):
                raise UsageError(f"{keyword}={value!r}: give True or False")
            args += [flag] if value else []
            continue
        many = param.multiple and isinstance(value, (list, tuple))
        for item in value if many else [value]:
            args += [flag, str(item)]
    return args + ["--", *map(str, seeds)]   # after --, a seed is never read as an option


def _keyword_params(command: click.Command) -> dict[str, click.Option]:
    """Keyword -> option: the parameter's own name (text_mode) and its long
    name with _ for - (text), so both spellings work."""
    found = {}
    for param in command.params:
        if isinstance(param, click.Option):
            found[param.name] = param
            found[_long_name(param)[2:].replace("-", "_")] = param
    found.pop("out", None)   # a keyword of crawl() itself
    return found


def _long_name(param: click.Option) -> str:
    return next(opt for opt in param.opts if opt.startswith("--"))


def _message(exc: click.ClickException) -> str:
    """The CLI's one-line message, less its pointer to a --help Python has not."""
    return cli.one_line(exc).replace(" (see 'crawl --help')", "")


def recrawl(out: str | Path, **options) -> dict:
    """One revisit pass over the crawl in ``out``, as ``crawler recrawl``
    runs it (keywords: ``policy``, ``budget``, ``max_rate``, ``min_interval``,
    ``max_interval``, ``quiet``); the pass's summary: pages asked, counts by
    outcome, links new to the crawl queued, ``stopped``."""
    from controller.recrawl_cli import recrawl as command, recrawl_from
    args = command_line(command, [str(out)], None, options)
    try:
        with command.make_context("recrawl", args) as ctx:
            return recrawl_from(**ctx.params)
    except click.ClickException as exc:
        raise UsageError(_message(exc)) from None

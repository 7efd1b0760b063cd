"""Seed files and config files: what `crawl -i FILE` and `crawl --config FILE.toml`
read, and what `crawler config DIR` writes back.

A config file uses the options' own names (``max-depth = 2``, ``delay =
1.5``, ``extract = ["title=css:h1"]``, ``ignore-robots = true``) plus
``seeds``; a name given on the command line wins. The file is read with the
standard library's ``tomllib``; ``crawler config DIR`` writes one from a
crawl's ``state/settings.json``, so a study can run the same crawl again.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from urlfilter import normalize

from .config import shown, typed_url_problem


class InputError(Exception):
    """A seed or config file that cannot be used: the one-line reason."""


def read_seed_file(name: str) -> list[str]:
    """Seeds from FILE (``-``: standard input): one per line, blank lines and
    ``#`` comments skipped; a line that is no http(s) URL names its number."""
    try:
        text = sys.stdin.read() if name == "-" else Path(name).read_text(encoding="utf-8")
    except (OSError, UnicodeError) as exc:
        raise InputError(f"-i {name}: cannot read it ({exc}); give a text file, one URL a line")
    seeds = []
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):   # a '#' later in a line is a URL's fragment
            continue
        problem = typed_url_problem(line) or (normalize(line) is None and "is not an http(s) URL")
        if problem:
            raise InputError(f"-i {'stdin' if name == '-' else name} line {number}: {shown(line)!r} {problem} "
                             f"(one seed a line, like http://host/path)")
        seeds.append(line)
    return seeds


def option_params(command: click.Command) -> dict[str, click.Parameter]:
    """Option name without dashes (``max-depth``) -> its click parameter."""
    found = {}
    for param in command.params:
        if isinstance(param, click.Option):
            for opt in param.opts:
                if opt.startswith("--"):
                    found[opt[2:]] = param
    return found


def read_config(path: Path, command: click.Command, ctx: click.Context) -> dict[str, object]:
    """Parameter name -> value from a TOML file, converted and checked by the
    options' own types; ``seeds`` as a list of URLs."""
    import tomllib   # loaded only for --config
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeError) as exc:
        raise InputError(f"--config {path}: cannot read it ({exc})")
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"--config {path}: not valid TOML ({exc})")
    params = option_params(command)
    values: dict[str, object] = {}
    for key, value in data.items():
        if key == "seeds":
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise InputError(f"--config {path}: seeds must be a list of URLs, like "
                                 f'seeds = ["http://host/"]')
            values["seeds"] = list(value)
            continue
        param = params.get(key)
        if param is None or key in NOT_IN_FILES:
            raise InputError(f"--config {path}: unknown key {key!r}; keys are the crawl "
                             f"options' names without dashes, e.g. max-depth = 2")
        if param.multiple and not isinstance(value, list):
            value = [value]
        try:
            values[param.name] = param.type_cast_value(ctx, value)
        except click.BadParameter as exc:
            raise InputError(f"--config {path}: {key} = {value!r}: {exc.message}")
    return values


# Options that say how to run this command, not which crawl: not in config files.
NOT_IN_FILES = ("resume", "overwrite", "config", "input-file", "help")


def settings_as_toml(settings: dict, command: click.Command) -> str:
    """A config file for the crawl whose state/settings.json is ``settings``."""
    params = option_params(command)
    by_name = {param.name: key for key, param in params.items() if key not in NOT_IN_FILES}
    lines = ["# crawler crawl --config THIS-FILE --out NEW-DIR   (the settings of a crawl, from",
             "# its state/settings.json; every option named here, so the crawl runs the same)",
             f"seeds = {_toml(settings['seeds'])}"]
    for field, value in settings.items():
        if field == "out":
            continue   # a rerun goes to a directory of its own
        if field == "obey_robots":
            field, value = "ignore_robots", not value
        elif field == "progress":
            field, value = "quiet", not value
        elif field == "cookies":
            field, value = "no_cookies", not value
        key = by_name.get(field)
        if key is None or field == "seeds":
            continue   # settings without an option (retry_backoff ...) keep their defaults
        lines.append(f"{key} = {_toml(value)}")
    if settings.get("withheld"):
        lines.append(f"# the crawl also used {', '.join(settings['withheld'])}: secrets are never "
                     f"saved; give them on the command line")
    return "\n".join(lines) + "\n"


def _toml(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return json.dumps(str(value), ensure_ascii=False)   # a TOML basic string

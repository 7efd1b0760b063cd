"""robots.txt parsers against the RFC 9309 conformance table, and their speed.

The table is tests/test_robots_rfc9309.py's TABLE (RFC 9309 section by
section, with the cases of Google's robots_test.cc the RFC decides). Each
parser gets the robots.txt text (a leading BOM removed, as the crawler's
``rules_for_response`` removes it) and answers "may bfsbot fetch this URL?".

Parsers, each when it is installed (``pip install protego robotspy
fast-robotstxt gpyrobotstxt``):

- ours: ``getpage.robots.rules_for_response``, protego with the crawler's
  corrections, what the crawler runs;
- protego: ``Protego.parse(text).can_fetch(url, token)`` alone;
- robotspy: ``robots.RobotsParser.from_string(text).can_fetch(token, url)``;
- fast-robotstxt: Python bindings of Google's C++ parser,
  ``RobotsMatcher().is_allowed(text, token, url)`` (parses on every call);
- gpyrobotstxt: a pure-Python port of Google's parser,
  ``RobotsMatcher().allowed_by_robots(text, [token], url)`` (the same).

Speed: one robots.txt of 200 groups, 2,000 URL checks against it after one
parse (the crawler's use: one parse per origin, a check per URL); for the
Google-style parsers that parse per check, that parse is in each check. The best of 5 runs.

    python experiments/compare_robots_parsers.py
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from test_robots_rfc9309 import SITE, TABLE, TOKEN  # noqa: E402

from getpage.robots import rules_for_response  # noqa: E402


def _ours():
    def parse(text):
        rules = rules_for_response(200, text.encode("utf-8"), TOKEN)
        return lambda url: rules.allows(url)
    return parse


def _protego():
    from protego import Protego

    def parse(text):
        parser = Protego.parse(text)
        return lambda url: parser.can_fetch(url, TOKEN)
    return parse


def _robotspy():
    import robots

    def parse(text):
        parser = robots.RobotsParser.from_string(text)
        return lambda url: parser.can_fetch(TOKEN, url)
    return parse


def _fast_robotstxt():
    from robotstxt import RobotsMatcher

    def parse(text):
        return lambda url: RobotsMatcher().is_allowed(text, TOKEN, url)
    return parse


def _gpyrobotstxt():
    from gpyrobotstxt.robots_cc import RobotsMatcher

    def parse(text):
        return lambda url: RobotsMatcher().allowed_by_robots(text, [TOKEN], url)
    return parse


PARSERS = {"ours": _ours, "protego": _protego, "robotspy": _robotspy,
           "fast-robotstxt": _fast_robotstxt, "gpyrobotstxt": _gpyrobotstxt}


def conformance(parse) -> list[str]:
    """The steps of the table this parser gets wrong."""
    wrong = []
    for step, robots, path, allowed in TABLE:
        try:
            verdict = parse(robots.removeprefix("\ufeff"))(SITE + path)
        except Exception as exc:  # noqa: BLE001 -- a crash is a wrong answer here
            verdict = f"raised {type(exc).__name__}"
        if verdict is not allowed:
            wrong.append(step)
    return wrong


def speed(parse) -> float:
    """Microseconds per URL check, the parse included once; the best of 5 runs."""
    groups = "".join(f"User-agent: bot{n}\nDisallow: /private{n}/\nAllow: /private{n}/public\n\n"
                     for n in range(199))
    text = groups + f"User-agent: {TOKEN}\nDisallow: /*.php$\nDisallow: /tmp/\nAllow: /tmp/ok\n"
    urls = [f"{SITE}/dir{n % 37}/page{n}.{'php' if n % 3 else 'html'}" for n in range(2000)]
    times = []
    for _ in range(5):
        start = time.perf_counter()
        check = parse(text)
        for url in urls:
            check(url)
        times.append(time.perf_counter() - start)
    return min(times) / len(urls) * 1e6


def main() -> None:
    print(f"{'parser':16} {'rows right':>11} {'µs/check':>9}  wrong rows")
    for name, make in PARSERS.items():
        try:
            parse = make()
        except ImportError:
            print(f"{name:16} not installed")
            continue
        wrong = conformance(parse)
        print(f"{name:16} {len(TABLE) - len(wrong):>5}/{len(TABLE):<5} {speed(parse):>9.1f}  "
              + "; ".join(wrong))


if __name__ == "__main__":
    main()

"""Encoding prescans against the HTML Standard's conformance table, and their speed.

The table is tests/test_prescan.py's TABLE: each row a step of the HTML
Standard's "prescan a byte stream to determine its encoding", the bytes,
and the encoding the standard's prescan returns (or none). Each prescan
gets the bytes and answers with an encoding; answers are compared as the
Python codec they decode with (getpage.charset's mapping), so a library
that names encodings Python's way is not counted wrong for the name.

Prescans, each when it is installed (``pip install html5lib w3lib``):

- ours: ``getpage.prescan.prescan``, the standard's steps;
- html5lib: ``html5lib._inputstream.EncodingParser(data[:1024]).getEncoding()``,
  html5lib's prescan (it uses webencodings' labels);
- w3lib: ``w3lib.encoding.html_body_declared_encoding(data)``, a regular
  expression over the first 4 KB, Scrapy's.

Speed: one 43 KB page with a long head and no declaration, the worst case
for a scan (best of 5 runs of 2,000 calls).

    python experiments/compare_prescans.py
"""
from __future__ import annotations

import codecs
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from test_prescan import TABLE  # noqa: E402

from getpage.charset import _python_codec  # noqa: E402
from getpage.prescan import get_encoding, prescan  # noqa: E402


def _ours(data: bytes) -> str | None:
    return _python_codec(prescan(data))


def _html5lib(data: bytes) -> str | None:
    from html5lib._inputstream import EncodingParser

    found = EncodingParser(data[:1024]).getEncoding()
    return _python_codec(found.name) if found else None


def _w3lib(data: bytes) -> str | None:
    from w3lib.encoding import html_body_declared_encoding

    found = html_body_declared_encoding(data)
    if not found:
        return None
    try:
        return codecs.lookup(found).name
    except LookupError:
        return _python_codec(get_encoding(found))


PRESCANS = {"ours": _ours, "html5lib": _html5lib, "w3lib": _w3lib}


def conformance(scan) -> list[str]:
    """The steps of the table this prescan gets wrong."""
    wrong = []
    for step, data, encoding in TABLE:
        try:
            found = scan(data)
        except Exception as exc:  # noqa: BLE001 -- a crash is a wrong answer here
            found = f"raised {type(exc).__name__}"
        if found != _python_codec(encoding):
            wrong.append(step)
    return wrong


def speed(scan) -> float:
    """Microseconds per call on a 43 KB page with no declaration."""
    head = ('<!DOCTYPE html><html><head><meta name="viewport" content="width=device-width">'
            + "".join(f'<link rel="stylesheet" href="/s{i}.css" media="all">' for i in range(10))
            + "<style>" + "p { margin: 0 }\n" * 300 + "</style></head>")
    page = (head + "<body>" + "<div><a href='/x'>link</a> text</div>" * 1000 + "</body></html>").encode()
    times = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(2000):
            scan(page)
        times.append(time.perf_counter() - start)
    return min(times) / 2000 * 1e6


def main() -> None:
    print(f"{'prescan':10} {'rows right':>11} {'µs/call':>8}  wrong rows")
    for name, scan in PRESCANS.items():
        try:
            scan(b"<meta charset=utf-8>")
        except ImportError:
            print(f"{name:10} not installed")
            continue
        wrong = conformance(scan)
        print(f"{name:10} {len(TABLE) - len(wrong):>5}/{len(TABLE):<5} {speed(scan):>8.1f}  " + "; ".join(wrong))


if __name__ == "__main__":
    main()

"""Links resolve as browsers resolve them: the URL Standard's own test data as a table.

The data is web-platform-tests' (tests/data/whatwg/README.md says which
commit).  A case applies to the crawler when its base is an http(s) URL or
absent: the crawler reads links on http(s) pages, and seeds and redirect
targets come without a base.  For each applicable case:

- ``whatwg.parse`` gives the standard's ``href`` exactly (fragment and all),
  or None where the standard fails or the result is not http(s);
- ``normalize`` and ``normalize_reference`` give the canonical form of that
  ``href``: the crawler's canonical step (fragment and empty query dropped,
  escapes normalized: ``normalize_reference``'s docstring) applied to the
  expected ``href`` too.  ``href`` is a fixed point of the parser (checked),
  so canonicalizing it applies nothing but that step, and the step changes
  nothing but escapes (checked: both sides percent-decode alike).

Every applicable case passes; there are no exceptions.  Then the full path
the links travel: the same cases as <base href> and <a href> in a page, read
by textfilter's extractors, resolved with ``document_base``.  And, beyond
the table, the parser against ada-url (an independent C++ implementation of
the standard) on random links.
"""
from __future__ import annotations

import html
import json
import random
import unicodedata
from pathlib import Path
from urllib.parse import unquote

import ada_url
import pytest

from test_normalize import BASES, PLAIN_PIECES, TRICKY_PIECES, random_base, random_href
from textfilter.links import extract_links
from urlfilter import normalize, whatwg
from urlfilter.normalize import document_base, normalize_reference

DATA = Path(__file__).parent / "data" / "whatwg"
IMPLEMENTATIONS = pytest.mark.parametrize("implementation", [normalize, normalize_reference],
                                          ids=["fast", "reference"])


def _is_http(url: str) -> bool:
    return url.startswith(("http:", "https:"))


def _entries(name: str) -> list[dict]:
    return [entry for entry in json.loads((DATA / name).read_text(encoding="utf-8")) if isinstance(entry, dict)]


def _applicable() -> list[tuple[str, str | None, str | None]]:
    """(input, base, expected href or None) of every case with an http(s) base or none."""
    cases = []
    for entry in _entries("urltestdata.json"):
        if entry["base"] is None or _is_http(entry["base"]):
            failed = entry.get("failure") or not _is_http(entry["href"])
            cases.append((entry["input"], entry["base"], None if failed else entry["href"]))
    return cases


CASES = _applicable()
WITH_BASE = [case for case in CASES if case[1] is not None]
CASE_IDS = [f"{index}:{url[:40]!r}" for index, (url, _, _) in enumerate(CASES)]


def test_the_table_is_the_one_vendored():
    """A truncated or swapped file would make every other test here pass on less."""
    kinds = {"http(s) base, http(s) href": 0, "no base, http(s) href": 0, "failure or other scheme": 0}
    for _, base, expected in CASES:
        key = "failure or other scheme" if expected is None else \
            "http(s) base, http(s) href" if base else "no base, http(s) href"
        kinds[key] += 1
    assert kinds == {"http(s) base, http(s) href": 114, "no base, http(s) href": 133, "failure or other scheme": 510}


@pytest.mark.parametrize("url, base, expected", CASES, ids=CASE_IDS)
def test_parser_gives_the_standards_href(url, base, expected):
    parsed_base = whatwg.parse(base) if base is not None else None
    assert base is None or parsed_base is not None
    parsed = whatwg.parse(url, parsed_base)
    assert (parsed.href if parsed else None) == expected


@IMPLEMENTATIONS
@pytest.mark.parametrize("url, base, expected", CASES, ids=CASE_IDS)
def test_normalize_gives_the_canonical_href(implementation, url, base, expected):
    if expected is None:
        assert implementation(url, base) is None
        return
    assert whatwg.parse(expected).href == expected
    canonical = normalize_reference(expected)
    assert unquote(canonical) == unquote(expected.partition("#")[0].removesuffix("?"))
    assert implementation(url, base) == canonical


@pytest.mark.parametrize("entry", _entries("toascii.json"), ids=lambda entry: repr(entry["input"])[:40])
def test_hosts_go_to_ascii_as_the_standard_says(entry):
    parsed = whatwg.parse(f"https://{entry['input']}/x")
    assert (parsed.host if parsed else None) == entry["output"]


# The standard's percent-encode sets, each built on the one before as it defines them.
_C0_CONTROL_SET = {chr(c) for c in range(0x20)} | {chr(c) for c in range(0x7F, 0x110000)}
_FRAGMENT = _C0_CONTROL_SET | set(' "<>`')
_QUERY = _C0_CONTROL_SET | set(' "#<>')
_SPECIAL_QUERY = _QUERY | {"'"}
_PATH = _QUERY | set("?^`{}")
_USERINFO = _PATH | set("/:;=@[\\]^|")
ALL_CODE_POINTS = "".join(map(chr, range(0x110000)))


@pytest.mark.parametrize("pattern, encoded", [
    (whatwg._FRAGMENT_SET, _FRAGMENT), (whatwg._SPECIAL_QUERY_SET, _SPECIAL_QUERY),
    (whatwg._PATH_SET, _PATH), (whatwg._USERINFO_SET, _USERINFO)],
    ids=["fragment", "special-query", "path", "userinfo"])
def test_percent_encode_sets_are_the_standards(pattern, encoded):
    """Over every code point, each set's pattern matches exactly what the set encodes."""
    assert pattern.sub("", ALL_CODE_POINTS) == "".join(c for c in ALL_CODE_POINTS if c not in encoded)


def test_fast_path_equals_reference_on_the_standards_inputs():
    """Every input of the table (whatever its own base) on the random-links test's bases."""
    inputs = sorted({entry["input"] for entry in _entries("urltestdata.json")})
    for url in inputs:
        for base in BASES:
            assert normalize(url, base) == normalize_reference(url, base), (url, base)


# --- the full path: <base href> and <a href> in a page -----------------------------------

PAGE_URL = "http://page.test/dir/page.html"
EXTRACTORS = ["bs4", "lxml", "regex"]


def _page(base_href: str, href: str) -> str:
    return (f'<!DOCTYPE html><html><head><base href="{html.escape(base_href)}"></head>'
            f'<body><a href="{html.escape(href)}">link</a></body></html>')


def _links_in_page(base_href: str, href: str, page_url: str, extractor: str) -> list[str | None]:
    """What the crawler makes of the page's one link: textfilter reads the raw
    values, URL_Filter resolves the base and then the link."""
    raw_base, links = extract_links(_page(base_href, href), extractor)
    base = document_base(page_url, raw_base)
    return [normalize(link, base) for link in links]


@pytest.mark.parametrize("extractor", EXTRACTORS)
@pytest.mark.parametrize("url, base, expected", WITH_BASE)
def test_a_link_in_a_page_resolves_as_in_a_browser(extractor, url, base, expected):
    """Empty and blank hrefs too: by the standard they name the base itself,
    which with a <base href> need not be the page."""
    found = _links_in_page(base, url, PAGE_URL, extractor)
    if expected is None:
        # textfilter skips javascript:, mailto:, tel: and data: links itself.
        assert found in ([], [None])
    else:
        assert found == [normalize_reference(expected)]


@pytest.mark.parametrize("url, base, expected", WITH_BASE)
def test_base_href_resolves_as_in_a_browser(url, base, expected):
    """The case's input as <base href> on a page at the case's base, and a "#x"
    link: the link names the document's base URL.  That is the page's URL
    when the <base href> fails to parse, and (the crawler's choice) when it is
    not http(s): a browser would resolve the page's links against a mailto:
    base, and follow none of them."""
    found = _links_in_page(url, "#x", base, "lxml")
    assert found == [normalize_reference(expected if expected is not None else base)]


# --- beyond the table: against ada-url on random links -----------------------------------

HOST_PIECES = ["\u3002", "\uff0e", "\uff10", "\uff58", "\u00df", "\u200d", "\u00ad", "xn--", "0x", "0", "255",
               "256", "1.2.3.4", "o", "_", "+", "%2e", "%00", "%41", "%5B", "[", "]", "::", "@", ":", "\\",
               "\u0661"]
RIGHT_TO_LEFT = {"R", "AL", "AN"}


def _ada_href(url: str, base: str | None) -> str | None:
    # The binding encodes to UTF-8 strictly; a browser turns lone surrogates into U+FFFD first.
    url, base = (None if s is None else s.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
                 for s in (url, base))
    try:
        href = (ada_url.URL(url, base) if base is not None else ada_url.URL(url)).href
    except ValueError:
        return None
    return href if _is_http(href) else None


def _random_link(rng: random.Random) -> str:
    if rng.random() < 0.5:
        return random_href(rng)
    head = rng.choice(["http://", "https://", "", "//", "http:", "HTTP:/", "\\\\"])
    pieces = HOST_PIECES + TRICKY_PIECES + PLAIN_PIECES
    return head + "".join(rng.choice(pieces) for _ in range(rng.randint(0, 10)))


def test_parser_agrees_with_ada_on_random_links():
    """30,000 random links on random bases: the same href, or both fail.

    Left out: right-to-left hosts.  ada applies the Bidi rule to right-to-left
    labels only; UTS #46 (and ICU, Chrome's IDNA) to every label of a
    domain with a right-to-left label, so "0.\u0628" fails here and passes in ada.
    And bases the standard rejects, which ada rejects with all their links,
    while normalize still reads absolute links without them.
    """
    rng = random.Random(11)
    checked = 0
    for _ in range(30_000):
        url, base = _random_link(rng), rng.choice(BASES[:-3] + [random_base(rng), None])
        parsed_base = whatwg.parse(base) if base is not None else None
        if base is not None and parsed_base is None:
            continue
        if any(unicodedata.bidirectional(c) in RIGHT_TO_LEFT for c in url):
            continue
        parsed = whatwg.parse(url, parsed_base)
        assert (parsed.href if parsed else None) == _ada_href(url, base), (url, base)
        checked += 1
    assert checked > 25_000


NUMBER_PIECES = ["0x", "0X", "0", "1", "7", "8", "f", "x", "o", "_", "+", "-", " ", ".", ".", "255", "256",
                 "4294967295", "%2e", "%30", "\uff10", "\uff0e", "\u3002", "a"]
IPV6_PIECES = ["0", "1", "ffff", "FFFF", "00000", "12345", "abcd", ":", "::", ":::", ".", "1.2.3.4", "01", "256",
               "g", "%25", "%31", " "]


@pytest.mark.parametrize("kind, pieces", [("IPv4 numbers", NUMBER_PIECES), ("IPv6", IPV6_PIECES)])
def test_hosts_agree_with_ada(kind, pieces):
    """20,000 random hosts made of what IPv4 numbers and IPv6 addresses are made of
    (whole hosts, which random links seldom give the number parser)."""
    rng = random.Random(kind)
    for _ in range(20_000):
        host = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 10)))
        url = f"http://[{host}]/" if kind == "IPv6" else f"http://{host}/"
        parsed = whatwg.parse(url)
        assert (parsed.href if parsed else None) == _ada_href(url, None), url

"""--drop-param: normalize(..., drop_params=globs) removes query and path parameters by name.

Tables of (input, expected) run through both the fast path and the reference;
the fast path must also equal the reference on random links with random
parameters, and check_drop_param must reject unusable patterns with one line.
"""
from __future__ import annotations

import pickle
import random
import sys
from dataclasses import dataclass

import pytest

from test_normalize import BASES, count_reference_calls, random_base, random_href
from urlfilter import check_drop_param, normalize
from urlfilter.normalize import normalize_reference

IMPLEMENTATIONS = pytest.mark.parametrize("implementation", [normalize, normalize_reference],
                                          ids=["fast", "reference"])
TRACKING = ("utm_*", "sessionid", "jsessionid", "fbclid")
PAGE = "http://h.test/dir/page.html?utm_source=feed&id=7"

# (href, base, expected) with drop_params=TRACKING
CASES = [
    # utm_* wherever it stands in the query, in every shape of link
    ("http://h.test/a?utm_source=x", None, "http://h.test/a"),
    ("http://h.test/a?utm_source=x&id=1", None, "http://h.test/a?id=1"),
    ("http://h.test/a?id=1&utm_source=x", None, "http://h.test/a?id=1"),
    ("http://h.test/a?id=1&utm_source=x&p=2", None, "http://h.test/a?id=1&p=2"),
    ("http://h.test/a?utm_source=x&utm_medium=y&utm_campaign=z", None, "http://h.test/a"),
    ("http://h.test/a?utm_=1&utm_x", None, "http://h.test/a"),
    ("https://H.Test:443/a/./b?utm_source=x", None, "https://h.test/a/b"),
    ("http://h.test:8080?utm_source=x", None, "http://h.test:8080/"),
    ("page2.html?utm_source=x&n=2", PAGE, "http://h.test/dir/page2.html?n=2"),
    ("../up.html?utm_source=x", PAGE, "http://h.test/up.html"),
    ("/root?n=1&utm_term=x", PAGE, "http://h.test/root?n=1"),
    ("?utm_source=x", PAGE, "http://h.test/dir/page.html"),
    ("//cdn.test/x?utm_source=a&v=3", PAGE, "http://cdn.test/x?v=3"),
    # an empty href or a bare fragment means the base, whose query is filtered too
    ("", PAGE, "http://h.test/dir/page.html?id=7"),
    ("#top", PAGE, "http://h.test/dir/page.html?id=7"),
    # the fragment goes as always, whether or not parameters went
    ("http://h.test/a?utm_source=x#frag", None, "http://h.test/a"),
    ("http://h.test/a?id=1&utm_source=x#f?utm_y=2", None, "http://h.test/a?id=1"),
    ("http://h.test/a#?utm_source=x&b=1", None, "http://h.test/a"),
    # a parameter without '=' matches by its name; only names match, not values
    ("http://h.test/a?sessionid", None, "http://h.test/a"),
    ("http://h.test/a?sessionid&b", None, "http://h.test/a?b"),
    ("http://h.test/a?sessionid=&b=", None, "http://h.test/a?b="),
    ("http://h.test/a?ref=sessionid&x=utm_source", None, "http://h.test/a?ref=sessionid&x=utm_source"),
    ("http://h.test/a?sessionid=a=b&c=d", None, "http://h.test/a?c=d"),
    ("http://h.test/a?sessionids=1&my_sessionid=2", None, "http://h.test/a?sessionids=1&my_sessionid=2"),
    # the order and spelling of what stays are kept, repeats and empty pieces too
    ("http://h.test/a?z=1&utm_a=2&b=3&utm_b=4&a=5&b=3", None, "http://h.test/a?z=1&b=3&a=5&b=3"),
    ("http://h.test/a?x=1&&utm_a=2&", None, "http://h.test/a?x=1&&"),
    ("http://h.test/a?x=[1]&utm_a=%7e", None, "http://h.test/a?x=%5B1%5D"),
    # names are read percent-decoded (and case-sensitively)
    ("http://h.test/a?utm%5Fsource=x&k=1", None, "http://h.test/a?k=1"),
    ("http://h.test/a?%75tm_source=x&k=1", None, "http://h.test/a?k=1"),
    ("http://h.test/a?session%69d=1&k=1", None, "http://h.test/a?k=1"),
    ("http://h.test/a?UTM_source=x&Sessionid=1", None, "http://h.test/a?UTM_source=x&Sessionid=1"),
    # ';jsessionid=' in the path (Java servlet URL rewriting), before or without a query
    ("http://h.test/shop/cart;jsessionid=0AF3?item=2", None, "http://h.test/shop/cart?item=2"),
    ("http://h.test/shop/cart;jsessionid=0AF3", None, "http://h.test/shop/cart"),
    ("http://h.test/a;jsessionid=1/b;v=2;jsessionid=3/c", None, "http://h.test/a/b;v=2/c"),
    ("cart;jsessionid=0AF3?utm_source=x", PAGE, "http://h.test/dir/cart"),
    ("http://h.test/a/..;jsessionid=1/b", None, "http://h.test/b"),
    ("http://h.test/d;jsessionid;p", None, "http://h.test/d;jsessionid;p"),
    ("http://h.test/d;p?jsessionid=1", None, "http://h.test/d;p"),
    ("http://h.test/shop/cart;JSESSIONID=0AF3", None, "http://h.test/shop/cart;JSESSIONID=0AF3"),
    ("http://h.test/a%3Bjsessionid=1", None, "http://h.test/a%3Bjsessionid=1"),
]

# (href, drop_params, fold_www, drop_query, expected)
FLAG_CASES = [
    ("http://h.test/a?b=1&c=2", (), False, False, "http://h.test/a?b=1&c=2"),
    ("http://h.test/a?b=1&c=2", ("*",), False, False, "http://h.test/a"),
    ("http://h.test/d;p;k=v?b=1", ("*",), False, False, "http://h.test/d;p"),
    ("http://h.test/a?ab=1&ac=2&b=3&a=4", ("a?",), False, False, "http://h.test/a?b=3&a=4"),
    ("http://h.test/a?a1=1&b2=2&c3=3", ("[ab]*",), False, False, "http://h.test/a?c3=3"),
    ("http://h.test/a?a1=1&b2=2&c3=3", ("[!ab]*",), False, False, "http://h.test/a?a1=1&b2=2"),
    ("http://h.test/a?caf%C3%A9=1&cafe=2", ("café",), False, False, "http://h.test/a?cafe=2"),
    ("http://h.test/a?caf\u00e9=1&cafe=2", ("caf?",), False, False, "http://h.test/a"),
    ("http://h.test/a?a%20b=1&a+b=2", ("a b",), False, False, "http://h.test/a?a+b=2"),
    ("http://h.test/a?a%26b=1&a=2", ("a&b",), False, False, "http://h.test/a?a=2"),
    ("http://h.test/a?%ZZ=1&%=2&k=3", ("%*",), False, False, "http://h.test/a?k=3"),
    # drop_query wins over drop_params; the path rule still applies
    ("http://h.test/a;jsessionid=1?b=1&utm_x=2", TRACKING, False, True, "http://h.test/a"),
    ("http://h.test/a?b=1", ("c",), False, True, "http://h.test/a"),
    # fold_www composes
    ("http://www.h.test/a?utm_x=1&b=2", TRACKING, True, False, "http://h.test/a?b=2"),
    ("http://WWW.h.test/a;jsessionid=9?utm_x=1", TRACKING, True, False, "http://h.test/a"),
    ("http://www.h.test/a?utm_x=1", TRACKING, True, True, "http://h.test/a"),
]


@IMPLEMENTATIONS
@pytest.mark.parametrize("href, base, expected", CASES)
def test_drop_tracking_params(implementation, href, base, expected):
    assert implementation(href, base, drop_params=TRACKING) == expected


@IMPLEMENTATIONS
@pytest.mark.parametrize("href, drop_params, fold_www, drop_query, expected", FLAG_CASES)
def test_patterns_and_flags(implementation, href, drop_params, fold_www, drop_query, expected):
    assert implementation(href, fold_www=fold_www, drop_query=drop_query, drop_params=drop_params) == expected


@IMPLEMENTATIONS
@pytest.mark.parametrize("href, base, expected", CASES)
def test_idempotent(implementation, href, base, expected):
    assert implementation(expected, drop_params=TRACKING) == expected
    assert implementation(expected, "http://other.test/x;jsessionid=1/y?q", drop_params=TRACKING) == expected


@IMPLEMENTATIONS
def test_without_drop_params_nothing_is_dropped(implementation):
    url = "http://h.test/a;jsessionid=1?utm_source=x&sessionid"
    assert implementation(url) == url
    assert implementation(url, drop_params=()) == url


def test_variants_of_one_page_dedup_to_one_url():
    variants = ["http://h.test/p?id=3",
                "http://h.test/p?utm_source=news&id=3",
                "http://h.test/p?id=3&utm_medium=mail&utm_campaign=x#top",
                "http://h.test/p;jsessionid=A1B2?id=3&sessionid=77",
                "/p?fbclid=Iw0&id=3"]
    assert {normalize(v, "http://h.test/", drop_params=TRACKING) for v in variants} == {"http://h.test/p?id=3"}


def test_drop_params_travel_in_a_frozen_dataclass():
    """The crawl config carries the globs to parser processes: a pickled copy gives the same answers."""
    config = pickle.loads(pickle.dumps(_Config(drop_params=TRACKING)))
    assert normalize("/a?utm_x=1&b=2", "http://h.test/", drop_params=config.drop_params) == "http://h.test/a?b=2"


@dataclass(frozen=True)
class _Config:
    drop_params: tuple[str, ...] = ()


# --- the fast path against the reference ----------------------------------------------

PLAIN_NAMES = ["utm_source", "utm_", "utm", "a", "b", "ab", "sessionid", "jsessionid", "Sessionid", "a+b", "",
               "x.html", "~k"]
# Names that send a link to the reference (escapes, non-ASCII) or whose escapes decode to a match.
TRICKY_NAMES = ["utm%5Fx", "%75tm_y", "caf%C3%A9", "caf\u00e9", "a%20b", "%zz", "%", "a%26b"]
PATTERN_SETS = [("utm_*",), ("utm_*", "sessionid", "jsessionid"), ("a",), ("a?", "[!a]*"), ("*",),
                ("caf\u00e9", "a b"), ("~*", "x.*"), ("S*",), ("?",)]


def random_params(rng: random.Random, separator: str) -> str:
    """Some "name=value" or bare "name" pieces, each led by ``separator``."""
    pieces = []
    for _ in range(rng.randint(1, 4)):
        name = rng.choice(TRICKY_NAMES if rng.random() < 0.15 else PLAIN_NAMES)
        pieces.append(separator + (name if rng.random() < 0.3 else f"{name}={rng.choice(['1', '', 'x=y', 'a'])}"))
    return "".join(pieces)


def random_href_with_params(rng: random.Random) -> str:
    """A random link of test_normalize, with query parameters and sometimes ';' path parameters."""
    href = random_href(rng)
    path, hash_mark, fragment = href.partition("#")
    if rng.random() < 0.1:
        path += random_params(rng, ";")
    if rng.random() < 0.7:
        path += "?" + random_params(rng, "&")[1:]
    return path + hash_mark + fragment


def test_fast_path_equals_reference_on_random_links(monkeypatch):
    """40,000 random links with random parameters, each on two fixed bases and a
    random one, with random globs and flags: the fast path answers as the reference."""
    module = sys.modules["urlfilter.normalize"]
    fallbacks = count_reference_calls(monkeypatch)
    rng = random.Random(7)
    checks = changed = semicolons = 0
    for _ in range(40_000):
        url = random_href_with_params(rng)
        flags = {"fold_www": rng.random() < 0.3, "drop_query": rng.random() < 0.1,
                 "drop_params": rng.choice(PATTERN_SETS)}
        for base in rng.sample(BASES, 2) + [random_base(rng) + rng.choice(["", "", "?utm_a=1&b", ";jsessionid=1"])]:
            expected = normalize_reference(url, base, **flags)
            assert module.normalize(url, base, **flags) == expected, (url, base, flags)
            changed += expected != normalize_reference(url, base, fold_www=flags["fold_www"],
                                                       drop_query=flags["drop_query"])
            semicolons += ";" in url or ";" in (base or "")
            checks += 1
    assert checks == 120_000
    # Parameters were really dropped, and both halves of normalize were exercised.
    assert changed > 0.1 * checks, changed
    assert 0.1 * checks < fallbacks() < 0.9 * checks, fallbacks()
    assert semicolons > 0.1 * checks, semicolons


def test_random_results_are_idempotent():
    rng = random.Random(11)
    for _ in range(5000):
        url = random_href_with_params(rng)
        patterns = rng.choice(PATTERN_SETS)
        result = normalize(url, rng.choice(BASES), drop_params=patterns)
        if result is not None:
            assert normalize(result, drop_params=patterns) == result, (url, result)
            assert normalize_reference(result, drop_params=patterns) == result, (url, result)


@pytest.mark.parametrize("href", ["/p/3/17.html?utm_source=x&id=2", "../4/21.html?sessionid=9", "./25.html",
                                  "25.html?a=1", "#s2", "", "?page=2&utm_medium=m",
                                  "http://127.0.0.1:8080/p/1/1.html?utm_x=1"])
def test_plain_links_with_drop_params_stay_on_the_fast_path(monkeypatch, href):
    def no_reference(*args, **kwargs):
        raise AssertionError("the reference was asked")

    module = sys.modules["urlfilter.normalize"]
    base = "http://127.0.0.1:8080/p/3/3002.html?utm_source=feed"
    expected = normalize_reference(href, base, drop_params=TRACKING)
    monkeypatch.setattr(module, "normalize_reference", no_reference)
    assert module.normalize(href, base, drop_params=TRACKING) == expected


# --- check_drop_param ---------------------------------------------------------------------

@pytest.mark.parametrize("pattern", ["utm_*", "sessionid", "jsessionid", "*", "?", "[Ss]ession[Ii][Dd]",
                                     "caf\u00e9", "a b", "x.y", "a%b", "%", "100%z"])
def test_check_drop_param_accepts_names_and_globs(pattern):
    assert check_drop_param(pattern) == pattern


@pytest.mark.parametrize("pattern, words", [
    ("", "empty"),
    ("utm_source=google", "no '=' or '&'"),
    ("a&b", "no '=' or '&'"),
    ("=", "no '=' or '&'"),
    ("utm%5Fsource", "percent-decoding"),
    ("caf%c3%a9", "percent-decoding"),
    ("a\tb", "control characters"),
    ("a\nb", "control characters"),
    (" sessionid", "spaces"),
    ("utm_* ", "spaces"),
])
def test_check_drop_param_rejects_with_one_line(pattern, words):
    with pytest.raises(ValueError) as error:
        check_drop_param(pattern)
    message = str(error.value)
    assert words in message
    assert "\n" not in message
    assert "--drop-param" in message

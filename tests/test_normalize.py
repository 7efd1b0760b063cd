"""normalize(url, base): tables of (input, base, expected), idempotence, robustness,
and the fast path's identity with the reference on every table and on random links.

Links resolve as browsers resolve them (the WHATWG URL Standard; its own test
data is tests/test_whatwg_urls.py); where RFC 3986, or this module before it
followed the standard, said otherwise, WHATWG_WINS says what changed."""
from __future__ import annotations

import random
import sys

import pytest

from urlfilter import normalize
from urlfilter.normalize import normalize_reference

# Every table runs through both: the fast path must give the reference's answers.
IMPLEMENTATIONS = pytest.mark.parametrize("implementation", [normalize, normalize_reference],
                                          ids=["fast", "reference"])

RFC_BASE = "http://a/b/c/d;p?q"

# RFC 3986 section 5.4, with the fragment dropped and "http://g" given its "/" path.
# The WHATWG URL Standard resolves every one of them as RFC 3986 does.
RFC_EXAMPLES = [
    ("g:h", None),
    ("g", "http://a/b/c/g"),
    ("./g", "http://a/b/c/g"),
    ("g/", "http://a/b/c/g/"),
    ("/g", "http://a/g"),
    ("//g", "http://g/"),
    ("?y", "http://a/b/c/d;p?y"),
    ("g?y", "http://a/b/c/g?y"),
    ("#s", "http://a/b/c/d;p?q"),
    ("g#s", "http://a/b/c/g"),
    ("g?y#s", "http://a/b/c/g?y"),
    (";x", "http://a/b/c/;x"),
    ("g;x", "http://a/b/c/g;x"),
    ("g;x?y#s", "http://a/b/c/g;x?y"),
    ("", "http://a/b/c/d;p?q"),
    (".", "http://a/b/c/"),
    ("./", "http://a/b/c/"),
    ("..", "http://a/b/"),
    ("../", "http://a/b/"),
    ("../g", "http://a/b/g"),
    ("../..", "http://a/"),
    ("../../", "http://a/"),
    ("../../g", "http://a/g"),
    ("../../../g", "http://a/g"),
    ("../../../../g", "http://a/g"),
    ("/./g", "http://a/g"),
    ("/../g", "http://a/g"),
    ("g.", "http://a/b/c/g."),
    (".g", "http://a/b/c/.g"),
    ("g..", "http://a/b/c/g.."),
    ("..g", "http://a/b/c/..g"),
    ("./../g", "http://a/b/g"),
    ("./g/.", "http://a/b/c/g/"),
    ("g/./h", "http://a/b/c/g/h"),
    ("g/../h", "http://a/b/c/h"),
    ("g;x=1/./y", "http://a/b/c/g;x=1/y"),
    ("g;x=1/../y", "http://a/b/c/y"),
    ("g?y/./x", "http://a/b/c/g?y/./x"),
    ("g?y/../x", "http://a/b/c/g?y/../x"),
    ("g#s/./x", "http://a/b/c/g"),
    ("g#s/../x", "http://a/b/c/g"),
    ("http:g", "http://a/b/c/g"),          # RFC 3986's non-strict rule; the standard's too
]

# (input, base, expected)
CASES = [
    # scheme and host case, default ports, empty path, fragment
    ("HTTP://Example.COM", None, "http://example.com/"),
    ("http://example.com:80/a", None, "http://example.com/a"),
    ("https://example.com:443/a", None, "https://example.com/a"),
    ("http://example.com:443/a", None, "http://example.com:443/a"),
    ("https://example.com:80/a", None, "https://example.com:80/a"),
    ("http://example.com:08080/a", None, "http://example.com:8080/a"),
    ("http://example.com:/a", None, "http://example.com/a"),
    ("http://example.com/a#frag", None, "http://example.com/a"),
    ("http://example.com/a?#frag", None, "http://example.com/a"),
    ("http://example.com/A/B", None, "http://example.com/A/B"),
    ("http://example.com./a", None, "http://example.com./a"),
    # dot segments in absolute URLs, percent-encoded dots included
    ("http://example.com/a/./b/../c", None, "http://example.com/a/c"),
    ("http://example.com/../../a", None, "http://example.com/a"),
    ("http://example.com/a/%2e%2E/b", None, "http://example.com/b"),
    ("http://example.com/a/.%2e", None, "http://example.com/"),
    ("http://example.com/a//../b", None, "http://example.com/a/b"),
    ("http://example.com/a/.b/c.", None, "http://example.com/a/.b/c."),
    # percent-encoding: unreserved decoded, others upper-cased, raw ones escaped
    ("http://example.com/%7Euser/%41%62%2d%5f%2E", None, "http://example.com/~user/Ab-_."),
    ("http://example.com/a%2fb%3a%3F", None, "http://example.com/a%2Fb%3A%3F"),
    ("http://example.com/a b", None, "http://example.com/a%20b"),
    ("http://example.com/caf\u00e9?q=\u00e9t\u00e9", None, "http://example.com/caf%C3%A9?q=%C3%A9t%C3%A9"),
    ("http://example.com/\U0001f600", None, "http://example.com/%F0%9F%98%80"),
    ("http://example.com/100%", None, "http://example.com/100%25"),
    ("http://example.com/%zz%4", None, "http://example.com/%25zz%254"),
    ('http://example.com/<"a">{|}^`', None, "http://example.com/%3C%22a%22%3E%7B%7C%7D%5E%60"),
    ("http://example.com/a?q=[1]&r=x y", None, "http://example.com/a?q=%5B1%5D&r=x%20y"),
    ("http://example.com/!$&'()*+,;=:@", None, "http://example.com/!$&'()*+,;=:@"),
    ("http://example.com/a?b=1&a=2&b=1", None, "http://example.com/a?b=1&a=2&b=1"),
    ("http://example.com/a?x=%7e%2f?/", None, "http://example.com/a?x=~%2F?/"),
    # whitespace, as browsers treat it
    ("  http://example.com/a  ", None, "http://example.com/a"),
    ("\thttp://exa\nmple.com/a\r\nb\x00", None, "http://example.com/ab"),
    ("\n ../x \t", "http://example.com/a/b", "http://example.com/x"),
    # backslashes read as slashes before the query only
    ("\\\\example.org\\a\\b?c\\d", "http://example.com/", "http://example.org/a/b?c%5Cd"),
    ("..\\x", "http://example.com/a/b/c", "http://example.com/a/x"),
    # relative references
    ("page.html", "http://example.com/dir/index.html", "http://example.com/dir/page.html"),
    ("page.html", "http://example.com", "http://example.com/page.html"),
    ("?p=2", "http://example.com/list?p=1#top", "http://example.com/list?p=2"),
    ("//cdn.example.com/x", "https://example.com/", "https://cdn.example.com/x"),
    ("", "http://Example.com/a/./b#f", "http://example.com/a/b"),
    ("#", "http://example.com/a", "http://example.com/a"),
    ("https://other.org/x", "http://example.com/", "https://other.org/x"),
    ("https://other.org/x", "mailto:x@y", "https://other.org/x"),
    # hosts: IDN to punycode, IPv4, IPv6, userinfo, underscores
    ("http://B\u00fccher.de/", None, "http://xn--bcher-kva.de/"),
    ("http://\u4f8b\u3048.\u30c6\u30b9\u30c8/", None, "http://xn--r8jz45g.xn--zckzah/"),
    ("http://xn--bcher-kva.de/", None, "http://xn--bcher-kva.de/"),
    ("http://127.0.0.1:8000/a", None, "http://127.0.0.1:8000/a"),
    ("http://[0:0::0001]:80/", None, "http://[::1]/"),
    ("http://[2001:DB8:0:0::1]:8080/x", None, "http://[2001:db8::1]:8080/x"),
    ("http://User:P%61ss@Example.com/", None, "http://User:Pass@example.com/"),
    ("http://a@b@example.com/", None, "http://a%40b@example.com/"),
    ("http://my_host.example.com/", None, "http://my_host.example.com/"),
    # what the standard decides where RFC 3986 is silent
    ("http://0x7f.1/", None, "http://127.0.0.1/"),               # IPv4 numbers in any form
    ("http://2130706433/", None, "http://127.0.0.1/"),
    ("http://0xffffffff", None, "http://255.255.255.255/"),
    ("http://256", None, "http://0.0.1.0/"),
    ("http://1.2.3.4./", None, "http://1.2.3.4/"),
    ("http://0x0x1/", None, "http://0x0x1/"),                    # not a number: a name
    ("http://00o7/", None, "http://00o7/"),
    ("http://\uff10\uff38\uff43\uff10\uff0e\uff10\uff12\uff15\uff10\uff0e\uff10\uff11", None,
     "http://192.168.0.1/"),                                     # full-width, mapped by UTS #46, then IPv4
    ("http://fa\u00df.de/", None, "http://xn--fa-hia.de/"),        # UTS #46 nontransitional, not IDNA 2003
    ("http://%e2%98%83/", None, "http://xn--n3h/"),               # hosts are percent-decoded first
    ("https:example.com/", None, "https://example.com/"),        # no base: "https:" then the authority
    ("https:example.com/", "http://example.org/", "https://example.com/"),
    ("///test", "http://example.org/", "http://test/"),           # any number of slashes starts an authority
    ("/\\/\\//example.org/../path", "http://example.org/", "http://example.org/path"),
    ("http://example.com/a\\..\\b", None, "http://example.com/b"),  # '\\' is '/', also before dot segments
    ("http://example.com/a?", None, "http://example.com/a"),     # the standard keeps the empty "?"; we drop it
    ("http://example.com/[x]?[y]", None, "http://example.com/%5Bx%5D?%5By%5D"),  # raw in the standard
    ("http://host/?'", None, "http://host/?%27"),                # the standard escapes ' in queries
    ("http://test:@test", None, "http://test@test/"),            # an empty password is no password
]

# Where RFC 3986 or the DNS rules for names give another answer: browsers
# follow the standard, so the standard wins.
# (input, base, expected, what the standard says)
WHATWG_WINS = [
    ("https:g", "http://a/b/", "https://g/", "another scheme with no '//': the slashes are optional"),
    ("http:///a", None, "http://a/", "any number of slashes before the host"),
    ("http://exa%6dple.com/", None, "http://example.com/", "a host is percent-decoded"),
    ("http://a..b/", None, "http://a..b/", "no DNS length rules: empty labels are allowed"),
    ("http://" + "a" * 64 + ".com/", None, "http://" + "a" * 64 + ".com/", "labels longer than 63 too"),
    ("http://b\u00fccher..de/", None, "http://xn--bcher-kva..de/", "and in IDNA hosts"),
    ("http://example.com:0/", None, "http://example.com:0/", "port 0 is a port"),
    ("http://example.com/\ud800", None, "http://example.com/%EF%BF%BD", "a lone surrogate reads as U+FFFD"),
]

FLAG_CASES = [
    # (input, fold_www, drop_query, expected)
    ("http://www.example.com/a?x=1", True, False, "http://example.com/a?x=1"),
    ("http://WWW.Example.com:8080/a", True, False, "http://example.com:8080/a"),
    ("http://www.www.example.com/", True, False, "http://example.com/"),
    ("http://www.com/", True, False, "http://www.com/"),
    ("http://www.com./", True, False, "http://www.com./"),
    ("http://wwwx.example.com/", True, False, "http://wwwx.example.com/"),
    ("http://www.example.com/a?x=1#f", False, True, "http://www.example.com/a"),
    ("http://www.example.com/a?x=1", True, True, "http://example.com/a"),
]

REJECTED = [
    ("mailto:someone@example.com", None),
    ("javascript:void(0)", "http://example.com/"),
    ("JavaScript:alert(1)", "http://example.com/"),
    ("tel:+123", "http://example.com/"),
    ("data:text/html,<a>", "http://example.com/"),
    ("ftp://example.com/file", None),
    ("file:///etc/passwd", None),
    ("about:blank", "http://example.com/"),
    ("", None),
    ("   \t\n", None),
    ("page.html", None),                       # relative without a base
    ("page.html", "mailto:x@y"),               # relative against a non-http base
    ("page.html", "not a url"),
    ("/a", "ftp://example.com/"),
    ("http://", None),
    ("http://:80/", None),
    ("http://exa mple.com/", None),
    ("http://example.com:65536/", None),
    ("http://example.com:-1/", None),
    ("http://example.com:8o/", None),
    ("http://example.com:80:80/", None),
    ("http://[::1/", None),
    ("http://[zz::1]/", None),
    ("http://[::1]x/", None),
    ("http://[::%31]/", None),                  # no zone ids
    ("http://1.2.3.4.5/", None),                # ends in a number, so it must be an IPv4 address
    ("http://256.256.256.256/", None),
    ("http://foo.09/", None),
    ("http://0x100000000/", None),
    ("http://user@/x", None),                   # userinfo and no host
    ("http://ex%00ample.com/", None),            # forbidden code points, also percent-encoded
    ("http://\u00ad/", None),                   # a host that UTS #46 maps to nothing
    ("//example.com/a", None),
]


@IMPLEMENTATIONS
@pytest.mark.parametrize("url, expected", RFC_EXAMPLES)
def test_rfc3986_reference_resolution(implementation, url, expected):
    assert implementation(url, RFC_BASE) == expected


@IMPLEMENTATIONS
@pytest.mark.parametrize("url, base, expected", CASES)
def test_normalize_table(implementation, url, base, expected):
    assert implementation(url, base) == expected


@IMPLEMENTATIONS
@pytest.mark.parametrize("url, base, expected, rule", WHATWG_WINS)
def test_where_the_standard_differs_from_rfc3986(implementation, url, base, expected, rule):
    assert implementation(url, base) == expected, rule


@IMPLEMENTATIONS
@pytest.mark.parametrize("url, fold_www, drop_query, expected", FLAG_CASES)
def test_flags(implementation, url, fold_www, drop_query, expected):
    assert implementation(url, fold_www=fold_www, drop_query=drop_query) == expected


@IMPLEMENTATIONS
@pytest.mark.parametrize("url, base", REJECTED)
def test_rejected_inputs_give_none(implementation, url, base):
    assert implementation(url, base) is None


def _all_outputs():
    outputs = [expected for _, expected in RFC_EXAMPLES if expected]
    outputs += [expected for _, _, expected in CASES]
    outputs += [expected for _, _, expected, _ in WHATWG_WINS]
    outputs += [expected for *_, expected in FLAG_CASES]
    return outputs


@IMPLEMENTATIONS
@pytest.mark.parametrize("url", _all_outputs())
def test_idempotent_and_plain_ascii(implementation, url):
    assert implementation(url) == url
    assert implementation(url, "http://unrelated.example/x/y") == url
    assert url.isascii() and " " not in url and "#" not in url


@IMPLEMENTATIONS
@pytest.mark.parametrize("url, fold_www, drop_query, expected", FLAG_CASES)
def test_flags_idempotent(implementation, url, fold_www, drop_query, expected):
    assert implementation(expected, fold_www=fold_www, drop_query=drop_query) == expected


def test_random_inputs_never_raise_and_stay_idempotent():
    rng = random.Random(20240601)
    pieces = ["http://", "https://", "HTTP://", "//", "/", "./", "../", ".", "..", "?", "#", "%",
              "%2e", "%41", "%zz", "a", "B", "é", "€", "\U0001f600", " ", "\t", ":", "@", "[", "]",
              "::1", "80", ":8080", "www.", "example.com", "\\", ";", "=", "&", "~", "\x00",
              "mailto:", "javascript:", "xn--", "-", "_"]
    base = "http://base.example/dir/page?q=1"
    for _ in range(5000):
        url = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 12)))
        for flags in ({}, {"fold_www": True, "drop_query": True}):
            result = normalize(url, base, **flags)
            if result is None:
                continue
            assert result.isascii() and result.startswith(("http://", "https://")), (url, result)
            assert normalize(result, **flags) == result, (url, result)


# --- the fast path against the reference ----------------------------------------------

# Pieces of hrefs: plain ones (the fast path's) and every kind of thing that
# must send a link to the reference, or that the fast path must get right.
PLAIN_PIECES = ["a", "b", "Z", "09", "page", "x.html", "-", "_", "~", ".", "..", "./", "../", "/", "//",
                "?", "=", "&", ";", "!", "$", "'", "(", ")", "*", "+", ",", "@", "#", "#s2", ".g", "g.",
                "...", "index.html"]
TRICKY_PIECES = ["%", "%2e", "%2E", "%41", "%7e", "%zz", "%2F", ":", "::1", "[", "]", "\\", " ", "\t",
                 "\n", "\x00", "\x7f", "é", "€", "\U0001f600", "\ud800", '"', "<", "|", "^", "`", "{",
                 "http:", "https:", "HTTP://", "Http://", "http://", "https://", "mailto:", "javascript:",
                 "ftp://", "www.", "WWW.", ":80", ":443", ":8080", ":0", ":65536", ":08", ":",
                 "u:p@", "[::1]", "[2001:DB8::1]", "xn--bcher-kva", "bücher", "a..b", "h.test"]
HOSTS = ["h.test", "H.Test", "www.h.test", "www.com", "127.0.0.1", "a_b.test", "x-y.h.test", "h.test.",
         "-bad.test", "a..b", "www.www.h.test", "1.2.3.4.5", "h"]
PORTS = ["", ":", ":80", ":443", ":8080", ":08080", ":0", ":65536", ":99999"]
BASES = [
    "http://h.test/a/b/c.html",
    "https://www.h.test:443/dir/sub/",
    "http://h.test",
    "http://H.TEST:8080/A/B?Q=1",
    "http://h.test/a/./b/../c?q=1#f",           # dot segments: its relative links go to the reference
    "http://h.test/%7Ea/b%2e/c?x=%41&y",        # escapes in the base
    "http://[::1]:8080/x/y",
    "http://u:p@h.test/a;p/b?q",
    "http://h.test/a//b/",
    "  http://h.test/x\ty/z ",                  # what a browser would clean
    "http://www.h.test/",
    "http://h.test:99999/a/",                   # a base whose port is invalid
    "mailto:x@y",
    "http:relative",
    None,
]


def random_href(rng: random.Random) -> str:
    """A link: often absolute with a random host and port, usually plain, sometimes not."""
    tricky = rng.random() < 0.3
    pieces = PLAIN_PIECES + TRICKY_PIECES if tricky else PLAIN_PIECES
    head = ""
    if rng.random() < 0.2:
        scheme = rng.choice(["http://", "https://", "http://", "HTTPS://", "//", "http:", "ftp://"])
        head = scheme + rng.choice(HOSTS) + rng.choice(PORTS) + rng.choice(["/", "", "?", "#"])
    return head + "".join(rng.choice(pieces) for _ in range(rng.randint(0, 9)))


def random_base(rng: random.Random) -> str:
    """A page URL: usually plain, sometimes with dot segments, escapes or a bad port."""
    head = rng.choice(["http://", "https://"]) + rng.choice(HOSTS) + rng.choice(PORTS) + "/"
    pieces = PLAIN_PIECES + TRICKY_PIECES[:8] if rng.random() < 0.2 else PLAIN_PIECES
    return head + "".join(rng.choice(pieces) for _ in range(rng.randint(0, 8)))


def count_reference_calls(monkeypatch):
    """Make urlfilter.normalize count the links its fast path hands to the
    reference; returns a function that tells how many so far."""
    calls = 0

    def counted_reference(*args, **kwargs):
        nonlocal calls
        calls += 1
        return normalize_reference(*args, **kwargs)

    monkeypatch.setattr(sys.modules["urlfilter.normalize"], "normalize_reference", counted_reference)
    return lambda: calls


def test_fast_path_equals_reference_on_random_links(monkeypatch):
    """100,000 random links, each on three of the fixed bases and on a random
    one, with random flags: the fast path answers exactly as the reference."""
    module = sys.modules["urlfilter.normalize"]
    fallbacks = count_reference_calls(monkeypatch)
    rng = random.Random(5)
    checks = 0
    for _ in range(100_000):
        url = random_href(rng)
        flags = {"fold_www": rng.random() < 0.3, "drop_query": rng.random() < 0.2}
        for base in rng.sample(BASES, 3) + [random_base(rng)]:
            assert module.normalize(url, base, **flags) == normalize_reference(url, base, **flags), (url, base, flags)
            checks += 1
    assert checks == 400_000
    # Both halves were exercised: the plain links and the ones handed on.
    assert 0.2 * checks < fallbacks() < 0.8 * checks, fallbacks()


@pytest.mark.parametrize("href", ["/p/3/17.html", "/p/3/17.html#s2", "../4/21.html", "./25.html",
                                  "25.html", "#s2", "", "?page=2", "/index.html",
                                  "http://127.0.0.1:8080/p/1/1.html", "../../../../x", "a/./b/../c"])
@pytest.mark.parametrize("base", ["http://127.0.0.1:8080/p/3/3002.html", "http://127.0.0.1:8080/",
                                  "http://127.0.0.1:8080"])
def test_fast_path_takes_the_benchmark_sites_links(monkeypatch, href, base):
    """The links of the benchmark site never need the reference."""
    def no_reference(*args, **kwargs):
        raise AssertionError("the reference was asked")

    module = sys.modules["urlfilter.normalize"]
    expected = normalize_reference(href, base)
    monkeypatch.setattr(module, "normalize_reference", no_reference)
    assert module.normalize(href, base) == expected

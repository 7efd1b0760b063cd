"""UrlRules: scope, include/exclude, extensions, length, the reason given,
and the fast reject_reason's identity with the step-by-step reference."""
from __future__ import annotations

import dataclasses
import random
import re

import pytest

from urlfilter import DEFAULT_DENY_EXTENSIONS, UrlRules, normalize

SEEDS = ["http://www.example.com/", "http://127.0.0.1:8080/start", "http://[::1]:9000/"]


def reason(url, scope="host", seeds=SEEDS, **options):
    """The reason given, checked to be the reference's too."""
    rules = UrlRules.from_seeds(seeds, scope, **options)
    answer = rules.reject_reason(url)
    assert answer == rules.reject_reason_reference(url), url
    return answer


@pytest.mark.parametrize("url, expected", [
    ("http://www.example.com/a", None),
    ("https://www.example.com/a", None),                  # scheme is not part of the host
    ("http://user:pw@www.example.com/a", None),           # nor is userinfo
    ("http://example.com/a", "scope"),
    ("http://sub.www.example.com/a", "scope"),
    ("http://www.example.com:8080/a", "scope"),
    ("http://127.0.0.1:8080/other", None),
    ("http://127.0.0.1/other", "scope"),
    ("http://127.0.0.1:8081/other", "scope"),
    ("http://[::1]:9000/x", None),
    ("http://[::1]/x", "scope"),
    ("http://other.org/", "scope"),
])
def test_host_scope_is_exact_host_and_port(url, expected):
    assert reason(url, "host") == expected


@pytest.mark.parametrize("url, expected", [
    ("http://example.com/", None),
    ("http://www.example.com/", None),
    ("https://blog.example.com:8443/", None),              # port ignored in domain scope
    ("http://a.b.example.com/", None),
    ("http://example.com./", None),
    ("http://notexample.com/", "scope"),
    ("http://example.com.evil.org/", "scope"),
    ("http://com/", "scope"),
    ("http://127.0.0.1:9999/", None),                     # an IP seed admits that IP, any port
    ("http://10.127.0.0.1/", "scope"),
    ("http://1.127.0.0.1/", "scope"),                     # no "subdomains" of an IP
    ("http://[::1]:1234/", None),
    ("http://[::2]:9000/", "scope"),
])
def test_domain_scope_is_seed_domain_and_subdomains(url, expected):
    assert reason(url, "domain") == expected


def test_domain_scope_keeps_a_non_www_seed_host_whole():
    rules = UrlRules.from_seeds(["http://shop.example.com/"], "domain")
    assert rules.reject_reason("http://eu.shop.example.com/") is None
    assert rules.reject_reason("http://example.com/") == "scope"
    assert rules.reject_reason("http://blog.example.com/") == "scope"


def test_any_scope_accepts_every_host():
    assert reason("http://anything.invalid:81/x", "any") is None
    assert reason("https://[2001:db8::1]/", "any") is None


def test_seed_hosts_are_host_and_port_as_in_normalized_urls():
    rules = UrlRules.from_seeds(SEEDS)
    assert rules.seed_hosts == frozenset({"www.example.com", "127.0.0.1:8080", "[::1]:9000"})


@pytest.mark.parametrize("path, expected", [
    ("/photo.jpg", "extension"),
    ("/photo.JPG", "extension"),
    ("/a/b/archive.tar.gz", "extension"),
    ("/doc.pdf;jsessionid=ABC", "extension"),
    ("/api/data.json", "extension"),
    ("/export.csv", "extension"),
    ("/style.css", "extension"),
    ("/app.js", "extension"),
    ("/font.woff2", "extension"),
    ("/sitemap.xml", None),
    ("/page.html", None),
    ("/notes.txt", None),
    ("/", None),
    ("/images.jpg/", None),                               # the last segment is empty
    ("/download?file=photo.jpg", None),                   # the query is not the path
    ("/.jpg", None),                                      # a dot file, not an extension
    ("/jpg", None),
])
def test_denied_extensions_by_last_path_segment(path, expected):
    assert reason("http://www.example.com" + path) == expected


def test_default_deny_list_contents():
    for extension in ("png", "mp4", "zip", "docx", "exe", "ttf", "json", "csv"):
        assert extension in DEFAULT_DENY_EXTENSIONS
    for extension in ("xml", "html", "htm", "php", "txt"):
        assert extension not in DEFAULT_DENY_EXTENSIONS


def test_custom_deny_extensions():
    rules = dataclasses.replace(UrlRules.from_seeds(SEEDS), deny_extensions=frozenset({"php"}))
    assert rules.reject_reason("http://www.example.com/index.php") == "extension"
    assert rules.reject_reason("http://www.example.com/photo.jpg") is None


def test_include_requires_one_match_and_exclude_rejects_any():
    rules = UrlRules.from_seeds(SEEDS, include=[r"/docs/", r"/blog/"], exclude=[r"\?.*sort=", "/private"])
    assert rules.reject_reason("http://www.example.com/docs/a") is None
    assert rules.reject_reason("http://www.example.com/blog/b?page=2") is None
    assert rules.reject_reason("http://www.example.com/shop/") == "include"
    assert rules.reject_reason("http://www.example.com/docs/a?sort=asc") == "exclude"
    assert rules.reject_reason("http://www.example.com/blog/private") == "exclude"


def test_compiled_patterns_are_accepted():
    rules = UrlRules.from_seeds(SEEDS, include=[re.compile("DOCS", re.I)])
    assert rules.reject_reason("http://www.example.com/docs/") is None


@pytest.mark.parametrize("kind", ["include", "exclude"])
def test_bad_regex_is_a_readable_value_error(kind):
    with pytest.raises(ValueError, match=rf"bad {kind} pattern '\(unclosed': missing \)"):
        UrlRules.from_seeds(SEEDS, **{kind: ["fine", "(unclosed"]})


def test_length_limit():
    base = "http://www.example.com/"
    assert reason(base + "a" * (2048 - len(base))) is None
    assert reason(base + "a" * (2049 - len(base))) == "length"
    assert reason(base + "a" * 10, max_url_length=20) == "length"
    assert reason(base + "a" * 5000, max_url_length=0) is None


def test_reasons_are_checked_cheapest_first():
    rules = UrlRules.from_seeds(SEEDS, include=["nomatch"], exclude=[r"/x\."], max_url_length=60)
    assert rules.reject_reason("http://other.org/x.jpg" + "a" * 60) == "length"
    assert rules.reject_reason("http://other.org/x.jpg") == "scope"
    assert rules.reject_reason("http://www.example.com/x.jpg") == "extension"
    assert rules.reject_reason("http://www.example.com/x.html") == "exclude"
    assert rules.reject_reason("http://www.example.com/y.html") == "include"


def test_invalid_settings_raise():
    with pytest.raises(ValueError, match="unknown scope 'site'; valid scopes: host, domain, any"):
        UrlRules.from_seeds(SEEDS, "site")
    with pytest.raises(ValueError, match="max_url_length"):
        UrlRules.from_seeds(SEEDS, max_url_length=-1)


def test_rules_are_frozen_values():
    rules = UrlRules.from_seeds(SEEDS)
    with pytest.raises(dataclasses.FrozenInstanceError):
        rules.scope = "any"
    assert rules == UrlRules.from_seeds(list(reversed(SEEDS)))


# --- spider traps -----------------------------------------------------------

from urlfilter import TrapGuard
from urlfilter.traps import pattern_of
from urlfilter.rules import repeats_too_often


@pytest.mark.parametrize("path, limit, expected", [
    ("/a/b/a/b/a/b", 2, True),
    ("/a/b/a/b", 2, False),
    ("/a/a/a", 2, True),
    ("/x/a/b/a/b/a/b/y", 2, True),        # the run need not start the path
    ("/a/b/c/a/b/c/a/b/c", 2, True),
    ("/a/b/c/a/b/c", 2, False),
    ("/docs/docs/x", 2, False),
    ("/q/a/b/a/b/c/a/b", 2, False),       # repeats, but not back to back three times
    ("/a/b/a/b/a/b", 3, False),
    ("/a//a//a/", 2, True),               # empty segments do not hide a run
])
def test_repeated_path_runs(path, limit, expected):
    assert repeats_too_often(path, limit) is expected


def test_rules_reject_repeating_paths_with_their_own_reason():
    rules = UrlRules.from_seeds(["http://h.test/"])
    assert rules.reject_reason("http://h.test/a/b/a/b/a/b/page.html") == "repeats"
    assert rules.reject_reason("http://h.test/a/b/a/b/page.html") is None
    off = UrlRules.from_seeds(["http://h.test/"], max_path_repeats=0)
    assert off.reject_reason("http://h.test/a/a/a/a") is None


def test_trap_guard_limits_query_variants_per_path():
    guard = TrapGuard(max_query_variants=3)
    answers = [guard.admit(f"http://h.test/search?q={i}", 1) for i in range(5)]
    assert answers == [None, None, None, "query-variants", "query-variants"]
    assert guard.admit("http://h.test/other?q=1", 1) is None
    assert guard.admit("http://h.test/search", 1) is None      # no query: not a variant


def test_trap_guard_limits_urls_per_host():
    guard = TrapGuard(max_pages_per_host=2, max_query_variants=0)
    assert [guard.admit(f"http://a.test/{i}", 1) for i in range(3)] == [None, None, "host-pages"]
    assert guard.admit("http://b.test:8080/", 1) is None


@pytest.mark.parametrize("url, pattern", [
    ("http://h.test/calendar/2026/11/", "h.test/calendar/<n>/<n>/"),
    ("http://h.test:81/events/2026-11-28.html?x=3#f", "h.test:81/events/<n>-<n>-<n>.html"),
    ("http://h.test/news/story-12.html", "h.test/news/story-<n>.html"),
    ("http://h.test/news/world/", None),          # no digit: one page, not a family
    ("http://h.test/list?page=7", None),          # the query is query-variants' business
    ("http://h.test", None),
])
def test_pattern_generalizes_the_paths_digit_runs(url, pattern):
    assert pattern_of(url) == pattern


def calendar_crawl(guard: TrapGuard, start: int, levels: int) -> dict[int, list[str]]:
    """What a BFS of an endless month chain queues: level -> admitted URLs.
    The first month is found at ``start``; each month links the month before
    and after it, so two new months appear one level deeper."""
    admitted = {start: [u for u in ["http://h.test/calendar/2026/11/"] if guard.admit(u, start) is None]}
    low, high = (2026, 11), (2026, 11)
    for level in range(start + 1, start + levels):
        low = (low[0], low[1] - 1) if low[1] > 1 else (low[0] - 1, 12)
        high = (high[0], high[1] + 1) if high[1] < 12 else (high[0] + 1, 1)
        urls = ["http://h.test/calendar/%04d/%02d/" % month for month in (low, high)]
        admitted[level] = [url for url in urls if guard.admit(url, level) is None]
    return admitted


def test_pattern_depth_stops_a_chain_of_one_pattern_past_its_first_level():
    guard = TrapGuard(max_pattern_depth=5)
    admitted = calendar_crawl(guard, start=3, levels=40)
    assert [level for level, urls in admitted.items() if urls] == list(range(3, 9))
    assert sum(map(len, admitted.values())) == 1 + 2 * 5
    assert [guard.admit("http://h.test/calendar/1990/01/", 9), guard.admit("http://h.test/c/1/", 9)] \
        == ["pattern-depth", None]   # another pattern's first URL sets its own first level


def test_pattern_depth_lets_a_wide_family_found_on_few_levels_through():
    """A site's 1,000 articles linked from lists a few levels apart: a family,
    not a chain; nothing of it is refused, and another host's is separate."""
    guard = TrapGuard(max_pattern_depth=2, max_query_variants=0)
    answers = [guard.admit(f"http://h.test/a/{i}.html", 1 + i % 3) for i in range(1000)]
    assert set(answers) == {None}
    assert guard.admit("http://h.test/a/1001.html", 4) == "pattern-depth"
    assert guard.admit("http://other.test/a/1.html", 40) is None
    assert guard.admit("http://h.test/plain/page.html", 90) is None   # no digits: no pattern


def test_pattern_depth_zero_is_off_and_would_admit_counts_nothing():
    assert sum(map(len, calendar_crawl(TrapGuard(max_pattern_depth=0), 0, 100).values())) == 199
    guard = TrapGuard(max_pattern_depth=1)
    assert guard.would_admit("http://h.test/c/1/", 7)
    assert guard.admit("http://h.test/c/1/", 0) is None
    assert not guard.would_admit("http://h.test/c/2/", 2)
    assert guard.admit("http://h.test/c/2/", 1) is None   # would_admit counted nothing



# --- the fast reject_reason against the reference -------------------------------------

SEGMENTS = ["a", "b", "a", "p", "3", "17.html", "x.JPG", "y.tar.gz", "doc.pdf;jsessionid=1", ".jpg", "c.",
            "", "..", ".", "index.php", "data.json", "sitemap.xml", "a;b", "a;b.png", "%2E", "é"]
HOST_PARTS = ["www.example.com", "example.com", "blog.example.com", "127.0.0.1:8080", "127.0.0.1",
              "[::1]:9000", "[::1]", "other.org", "example.com.", "u:p@www.example.com", "a@b@example.com",
              "WWW.Example.com", "www.example.com:8080", ""]
JUNK = ["://", "@", "?", "#", ";", ".", "/", ":", "[", "]", "http", "HTTP", "s", "x", "jpg"]


def random_url(rng: random.Random) -> str:
    """Mostly normalized-looking URLs with repeated segments and extensions; some raw junk."""
    roll = rng.random()
    if roll < 0.1:
        return "".join(rng.choice(JUNK) for _ in range(rng.randint(0, 12)))
    scheme = rng.choice(["http://", "https://", "http://", "ftp://", "HTTP://", "http:/", ""])
    path = "/".join(rng.choice(SEGMENTS[:6] if roll < 0.6 else SEGMENTS) for _ in range(rng.randint(0, 9)))
    url = scheme + rng.choice(HOST_PARTS) + rng.choice(["/", "/", "", "?"]) + path
    if rng.random() < 0.2:
        url += rng.choice(["?q=1", "?a/b.jpg", "?", "#f", "#x/y.png", "?q#f", "@x"])
    if roll > 0.9:
        url = normalize(url) or url
    return url


RULE_VARIANTS = [
    UrlRules.from_seeds(SEEDS),
    UrlRules.from_seeds(SEEDS, "domain", max_path_repeats=1),
    UrlRules.from_seeds(SEEDS, "any", max_path_repeats=3, max_url_length=40),
    UrlRules.from_seeds(["http://u@example.com:80/"], "host", max_path_repeats=0, max_url_length=0),
    UrlRules.from_seeds(SEEDS, "domain", include=["a/b", "php"], exclude=[r"\?", "17"]),
    UrlRules.from_seeds(SEEDS, "host", include=["/a/"]),
    dataclasses.replace(UrlRules.from_seeds(SEEDS, "any"), deny_extensions=frozenset({"", "php", "html", "gz"})),
]


def test_fast_reject_reason_equals_reference_on_random_urls():
    """100,000 random URLs, each under several rule sets: the same reason."""
    rng = random.Random(7)
    reasons = set()
    for _ in range(100_000):
        url = random_url(rng)
        for rules in rng.sample(RULE_VARIANTS, 3):
            answer = rules.reject_reason(url)
            assert answer == rules.reject_reason_reference(url), (url, rules)
            reasons.add(answer)
    # Every reason was given, so every branch was compared.
    assert reasons == {None, "length", "scope", "extension", "repeats", "exclude", "include"}

"""robots.txt per RFC 9309: matching rules (no network), the cache, and the
fetch rules checked against real servers on 127.0.0.1."""
import socket
import threading

import pytest
from getpage_stub import FakeTime, StubServer, local_config, page, redirect, send

from getpage import FetchConfig, Fetcher
from getpage.robots import (
    MAX_ROBOTS_BYTES,
    RobotsCache,
    RobotsRules,
    origin_of,
    parse_robots,
    product_token,
    rules_for_response,
)

UA = "BfsBot/0.1 (+http://example.org/bot)"
TOKEN = "bfsbot"
SITE = "http://site.test"

# (case, robots.txt, path, allowed) — RFC 9309 §2.2 unless said otherwise.
RULES = [
    # longest match wins, whichever order the rules come in
    ("longest allow", "User-agent: *\nDisallow: /\nAllow: /pub", "/pub/a", True),
    ("longest disallow", "User-agent: *\nAllow: /\nDisallow: /pub/private", "/pub/private/x", False),
    ("longest, sibling", "User-agent: *\nAllow: /\nDisallow: /pub/private", "/pub/other", True),
    ("rfc example dir", "User-agent: *\nAllow: /example/page/\nDisallow: /example/page/disallowed.gif",
     "/example/page/", True),
    ("rfc example file", "User-agent: *\nAllow: /example/page/\nDisallow: /example/page/disallowed.gif",
     "/example/page/disallowed.gif", False),
    # on equal length, allow wins (§2.2.2: "SHOULD use the least restrictive")
    ("tie allow first", "User-agent: *\nAllow: /page\nDisallow: /page", "/page", True),
    ("tie disallow first", "User-agent: *\nDisallow: /page\nAllow: /page", "/page", True),
    ("tie wildcard", "User-agent: *\nDisallow: /*.html\nAllow: /a.html", "/a.html", True),
    # "*" matches any sequence, "$" anchors the end (§2.2.3)
    ("star", "User-agent: *\nDisallow: /*.php", "/dir/index.php", False),
    ("star with query", "User-agent: *\nDisallow: /*.php", "/index.php?x=1", False),
    ("star no match", "User-agent: *\nDisallow: /*.php", "/index.html", True),
    ("star middle", "User-agent: *\nDisallow: /fish*.php", "/fishheads/catfish.php", False),
    ("paths are case sensitive", "User-agent: *\nDisallow: /fish*.php", "/Fish.PHP", True),
    ("dollar", "User-agent: *\nDisallow: /*.php$", "/filename.php", False),
    ("dollar, query", "User-agent: *\nDisallow: /*.php$", "/filename.php?params", True),
    ("dollar, longer path", "User-agent: *\nDisallow: /*.php$", "/filename.php/", True),
    ("dollar root only", "User-agent: *\nDisallow: /$", "/", False),
    ("dollar root only, other", "User-agent: *\nDisallow: /$", "/a", True),
    ("query string", "User-agent: *\nDisallow: /search?q=", "/search?q=cats", False),
    # percent-encoding (§2.2.2): unreserved characters compare decoded,
    # non-ASCII compares as percent-encoded UTF-8, reserved stay encoded
    ("pct rule, plain url", "User-agent: *\nDisallow: /%7Efoo", "/~foo", False),
    ("plain rule, pct url", "User-agent: *\nDisallow: /~foo", "/%7efoo", False),
    ("pct letters", "User-agent: *\nDisallow: /foo/bar/%62%61%7A", "/foo/bar/baz", False),
    ("utf-8 rule, encoded url", "User-agent: *\nDisallow: /foo/bar/ツ", "/foo/bar/%E3%83%84", False),
    ("encoded rule, encoded url", "User-agent: *\nDisallow: /foo/bar/%E3%83%84", "/foo/bar/%e3%83%84", False),
    ("reserved slash stays encoded", "User-agent: *\nDisallow: /a%2Fb", "/a/b", True),
    ("reserved slash, same", "User-agent: *\nDisallow: /a%2Fb", "/a%2Fb", False),
    # groups (§2.2.1): exact product token, case-insensitive; merging; "*" fallback
    ("own group over star", "User-agent: *\nDisallow: /\n\nUser-agent: bfsbot\nDisallow: /x", "/a", True),
    ("own group rules", "User-agent: *\nDisallow: /\n\nUser-agent: bfsbot\nDisallow: /x", "/x", False),
    ("case insensitive agent", "User-agent: BFSBOT\nDisallow: /x", "/x", False),
    ("agent with version", "User-agent: BfsBot/2.0\nDisallow: /x", "/x", False),
    ("several agents, one group", "User-agent: other\nUser-agent: bfsbot\nDisallow: /x", "/x", False),
    ("merged groups, first", "User-agent: bfsbot\nDisallow: /a\n\nUser-agent: other\nDisallow: /\n\n"
     "User-agent: bfsbot\nDisallow: /b", "/a", False),
    ("merged groups, second", "User-agent: bfsbot\nDisallow: /a\n\nUser-agent: other\nDisallow: /\n\n"
     "User-agent: bfsbot\nDisallow: /b", "/b", False),
    ("merged groups, neither", "User-agent: bfsbot\nDisallow: /a\n\nUser-agent: other\nDisallow: /\n\n"
     "User-agent: bfsbot\nDisallow: /b", "/c", True),
    ("other group ignored", "User-agent: other\nDisallow: /", "/a", True),
    ("star fallback", "User-agent: other\nAllow: /\n\nUser-agent: *\nDisallow: /", "/a", False),
    ("prefix agent is not ours", "User-agent: bfs\nDisallow: /\n\nUser-agent: *\nAllow: /", "/a", True),
    ("longer agent is not ours", "User-agent: bfsbot-images\nDisallow: /", "/a", True),
    ("one-letter agent is not ours", "User-agent: b\nDisallow: /\n\nUser-agent: *\nDisallow: /x", "/a", True),
    ("merged star groups", "User-agent: *\nDisallow: /a\n\nUser-agent: other\nAllow: /\n\n"
     "User-agent: *\nDisallow: /b", "/b", False),
    # empty values and odd files
    ("empty disallow allows all", "User-agent: bfsbot\nDisallow:\n\nUser-agent: *\nDisallow: /", "/a", True),
    ("robots.txt always allowed", "User-agent: *\nDisallow: /", "/robots.txt", True),
    ("no groups", "Disallow: /\n# nothing else", "/a", True),
    ("empty file", "", "/a", True),
    ("comments", "User-agent: * # all\nDisallow: /a # not /a\n", "/a/b", False),
    ("crlf line ends", "User-agent: *\r\nDisallow: /a\r\n", "/a", False),
]


@pytest.mark.parametrize("case, robots, path, allowed", RULES, ids=[r[0] for r in RULES])
def test_rfc9309_matching(case, robots, path, allowed):
    assert parse_robots(robots, TOKEN).allows(SITE + path) is allowed


@pytest.mark.parametrize("robots, delay", [
    ("User-agent: *\nCrawl-delay: 2.5", 2.5),
    ("User-agent: bfsbot\nCrawl-delay: 3\n\nUser-agent: *\nCrawl-delay: 9", 3.0),
    ("User-agent: other\nCrawl-delay: 9", None),
    ("User-agent: *\nCrawl-delay: soon", None),
    ("User-agent: *\nDisallow: /", None),
])
def test_crawl_delay_comes_from_the_matching_group(robots, delay):
    assert parse_robots(robots, TOKEN).crawl_delay == delay


@pytest.mark.parametrize("user_agent, token", [
    ("BfsBot/0.1 (+http://example.org/bot)", "bfsbot"),
    ("bfs-bot", "bfs-bot"),
    ("my_bot/2", "my_bot"),
    ("  Crawler 1.0", "crawler"),
])
def test_product_token(user_agent, token):
    assert product_token(user_agent) == token


def test_user_agent_without_token_is_rejected():
    with pytest.raises(ValueError):
        product_token("/1.0")
    with pytest.raises(ValueError):
        FetchConfig(user_agent="(bot)")


@pytest.mark.parametrize("url, origin", [
    ("http://Example.COM/a?b", "http://example.com"),
    ("http://example.com:80/a", "http://example.com"),
    ("https://example.com:443/", "https://example.com"),
    ("https://example.com:8443/", "https://example.com:8443"),
    ("http://127.0.0.1:8080/x", "http://127.0.0.1:8080"),
    ("http://[::1]:8080/x", "http://[::1]:8080"),
])
def test_origin_is_scheme_host_and_port(url, origin):
    assert origin_of(url) == origin


@pytest.mark.parametrize("status, allowed", [
    (404, True), (401, True), (403, True), (410, True), (400, True),
    (429, False), (500, False), (503, False),
])
def test_status_without_robots_body(status, allowed):
    rules = rules_for_response(status, b"User-agent: *\nAllow: /", TOKEN)
    assert rules.allows(SITE + "/page") is allowed
    assert rules.allows(SITE + "/robots.txt")


def test_2xx_is_parsed_and_only_the_first_500_kib_counts():
    early = b"User-agent: *\nDisallow: /early\n"
    filler = b"# filler\n" * (MAX_ROBOTS_BYTES // 9)
    rules = rules_for_response(200, early + filler + b"Disallow: /late\n", TOKEN)
    assert not rules.allows(SITE + "/early")
    assert rules.allows(SITE + "/late")


def test_a_rule_cut_by_the_500_kib_limit_is_dropped():
    head = b"User-agent: *\n" + b"#" * (MAX_ROBOTS_BYTES - 30) + b"\n"
    cut = head + b"Disallow: /a-long-path-that-is-cut-off\n"
    rules = rules_for_response(200, cut, TOKEN)
    assert rules.allows(SITE + "/a")  # not "Disallow: /a" from half a line


def test_utf8_bom_and_bad_bytes_are_tolerated():
    rules = rules_for_response(200, b"\xef\xbb\xbfUser-agent: *\nDisallow: /x\xff\nDisallow: /y\n", TOKEN)
    assert not rules.allows(SITE + "/y")


def test_cache_loads_each_origin_once_for_concurrent_callers():
    calls = []
    release = threading.Event()

    def load(origin):
        calls.append(origin)
        release.wait(5)
        return RobotsRules.unavailable()

    cache = RobotsCache(load)
    results = []
    threads = [threading.Thread(target=lambda: results.append(cache.rules("http://a"))) for _ in range(8)]
    for thread in threads:
        thread.start()
    release.set()
    for thread in threads:
        thread.join(5)
    assert calls == ["http://a"]
    assert len(results) == 8 and all(r.source == "unavailable" for r in results)
    cache.rules("http://b")
    assert calls == ["http://a", "http://b"]


def test_cache_does_not_keep_a_failed_load():
    attempts = []

    def load(origin):
        attempts.append(origin)
        if len(attempts) == 1:
            raise RuntimeError("bug")
        return RobotsRules.unavailable()

    cache = RobotsCache(load)
    with pytest.raises(RuntimeError):
        cache.rules("http://a")
    assert cache.rules("http://a").source == "unavailable"
    assert len(attempts) == 2


# -- against real servers ------------------------------------------------------


@pytest.fixture
def server():
    stub = StubServer()
    yield stub
    stub.close()


@pytest.fixture
def fetcher():
    with Fetcher(local_config(UA, delay=0, timeout=2)) as instance:
        yield instance


def test_missing_robots_txt_allows_everything(server, fetcher):
    server.routes["/page"] = page("<html>ok</html>")
    result = fetcher.fetch(server.url("/page"))
    assert result.ok and result.error == ""
    assert server.paths() == ["/robots.txt", "/page"]


def test_robots_txt_is_fetched_with_our_user_agent(server, fetcher):
    fetcher.fetch(server.url("/page"))
    assert server.received[0].path == "/robots.txt"
    assert server.received[0].headers["user-agent"] == UA


@pytest.mark.parametrize("status", [500, 503, 429])
def test_server_error_on_robots_txt_disallows_everything(server, fetcher, status):
    server.routes["/robots.txt"] = page("oops", "text/plain", status=status)
    server.routes["/page"] = page("<html>ok</html>")
    result = fetcher.fetch(server.url("/page"))
    assert result.error == f"robots: robots.txt unreachable (http {status})"
    assert result.status == 0 and result.final_url == ""
    assert server.paths() == ["/robots.txt"]


def test_unreachable_host_is_a_connection_error_without_a_page_request(fetcher):
    """RFC 9309 §2.3.1.4: no robots.txt answer, so the page is not fetched; but
    the error names what failed (the connection), not a robots.txt verdict."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    result = fetcher.fetch(f"http://127.0.0.1:{port}/page")
    assert result.error == "connection: refused"
    assert (result.status, result.final_url, result.attempts) == (0, "", 1)


def test_robots_txt_closed_without_answer_is_the_pages_connection_error(server, fetcher):
    """The server takes the robots.txt request and hangs up: the page gets that
    connection error (not a robots verdict) and is still never requested."""
    server.routes["/robots.txt"] = lambda handler: setattr(handler, "close_connection", True)
    server.routes["/page"] = page("<html>ok</html>")
    result = fetcher.fetch(server.url("/page"))
    assert result.error in ("connection: closed without a response", "connection: reset by peer")
    assert server.paths() == ["/robots.txt"]


def test_robots_txt_answering_5xx_is_still_a_robots_error(server, fetcher):
    server.routes["/robots.txt"] = page("busy", "text/plain", status=503)
    assert fetcher.fetch(server.url("/page")).error == "robots: robots.txt unreachable (http 503)"


def test_disallowed_page_is_never_requested(server, fetcher):
    server.routes["/robots.txt"] = page("User-agent: bfsbot\nDisallow: /private\n", "text/plain")
    server.routes["/private/page"] = page("<html>secret</html>")
    server.routes["/public"] = page("<html>ok</html>")
    denied = fetcher.fetch(server.url("/private/page"))
    allowed = fetcher.fetch(server.url("/public"))
    assert denied.error == "robots: disallowed by robots.txt"
    assert (denied.status, denied.final_url, denied.body) == (0, "", b"")
    assert allowed.ok
    assert server.paths() == ["/robots.txt", "/public"]


def test_robots_txt_is_fetched_once_with_many_concurrent_fetches(server):
    arrived, release = threading.Event(), threading.Event()

    def robots(handler):
        arrived.set()
        release.wait(5)
        send(handler, 200, b"User-agent: *\nDisallow: /no\n", {"Content-Type": "text/plain"})

    server.routes["/robots.txt"] = robots
    for n in range(16):
        server.routes[f"/p{n}"] = page(f"<html>{n}</html>")
    config = local_config(UA, delay=0, per_host=4, timeout=5)
    with Fetcher(config) as fetcher:
        start = threading.Barrier(17)
        results = {}

        def work(n):
            start.wait(5)
            results[n] = fetcher.fetch(server.url(f"/p{n}"))

        threads = [threading.Thread(target=work, args=(n,)) for n in range(16)]
        for thread in threads:
            thread.start()
        start.wait(5)
        assert arrived.wait(5)
        release.set()
        for thread in threads:
            thread.join(10)
    assert all(results[n].ok for n in range(16))
    assert server.paths().count("/robots.txt") == 1
    assert sorted(server.paths()) == sorted(["/robots.txt"] + [f"/p{n}" for n in range(16)])


def test_robots_txt_redirects_are_followed_up_to_five(server, fetcher):
    server.routes["/robots.txt"] = redirect("/r1")
    for n in range(1, 5):
        server.routes[f"/r{n}"] = redirect(f"/r{n + 1}")
    server.routes["/r5"] = page("User-agent: *\nDisallow: /\n", "text/plain")
    result = fetcher.fetch(server.url("/page"))
    assert result.error == "robots: disallowed by robots.txt"
    assert server.paths() == ["/robots.txt", "/r1", "/r2", "/r3", "/r4", "/r5"]


def test_more_than_five_robots_redirects_mean_unavailable(server, fetcher):
    server.routes["/robots.txt"] = redirect("/r1")
    for n in range(1, 6):
        server.routes[f"/r{n}"] = redirect(f"/r{n + 1}")
    server.routes["/r6"] = page("User-agent: *\nDisallow: /\n", "text/plain")
    server.routes["/page"] = page("<html>ok</html>")
    result = fetcher.fetch(server.url("/page"))
    assert result.ok
    assert "/r6" not in server.paths()


def test_robots_txt_redirect_to_another_origin_applies_here(server, fetcher):
    other = StubServer()
    try:
        other.routes["/shared-robots.txt"] = page("User-agent: *\nDisallow: /x\n", "text/plain")
        server.routes["/robots.txt"] = redirect(other.url("/shared-robots.txt"), 301)
        result = fetcher.fetch(server.url("/x/page"))
    finally:
        other.close()
    assert result.error == "robots: disallowed by robots.txt"
    assert server.paths() == ["/robots.txt"]


def test_crawl_delay_is_exposed_per_origin(server, fetcher):
    server.routes["/robots.txt"] = page("User-agent: *\nCrawl-delay: 0.25\n", "text/plain")
    other = StubServer()
    try:
        assert fetcher.robots_delay(server.url("/any")) == 0.25
        assert fetcher.robots_delay(other.url("/any")) is None
        assert fetcher.robots_delay(server.url("/again")) == 0.25
    finally:
        other.close()
    assert server.paths() == ["/robots.txt"]
    assert fetcher.robots_delay("not a url") is None


def test_robots_ignored_when_not_obeyed(server):
    server.routes["/robots.txt"] = page("User-agent: *\nDisallow: /\n", "text/plain")
    server.routes["/page"] = page("<html>ok</html>")
    with Fetcher(local_config(UA, delay=0, obey_robots=False)) as fetcher:
        assert fetcher.fetch(server.url("/page")).ok
        assert fetcher.robots_delay(server.url("/page")) is None
    assert server.paths() == ["/page"]


# -- retries and blocked hosts -------------------------------------------------




def retrying(clock, **settings):
    return Fetcher(local_config(UA, **{"delay": 0, "timeout": 2, "retries": 2, **settings}),
                   clock=clock.clock, sleep=clock.sleep)


def flaky_robots(server, statuses, headers=None):
    """robots.txt answers ``statuses`` in turn, then "Disallow: /private"."""
    answers = iter(statuses)

    def robots(handler):
        status = next(answers, 200)
        body = b"User-agent: *\nDisallow: /private\n" if status == 200 else b"busy"
        send(handler, status, body, {"Content-Type": "text/plain", **(headers or {})})

    server.routes["/robots.txt"] = robots


def test_a_transient_robots_failure_does_not_block_the_host(server):
    flaky_robots(server, [503, 500])
    server.routes["/public"] = page("<html>ok</html>")
    clock = FakeTime()
    with retrying(clock) as fetcher:
        assert fetcher.fetch(server.url("/public")).ok
        assert fetcher.fetch(server.url("/private/x")).error == "robots: disallowed by robots.txt"
    assert server.paths() == ["/robots.txt"] * 3 + ["/public"]
    assert len(clock.sleeps) == 2


def test_robots_retry_after_holds_the_host(server):
    flaky_robots(server, [429], {"Retry-After": "4"})
    server.routes["/public"] = page("<html>ok</html>")
    clock = FakeTime()
    with retrying(clock) as fetcher:
        assert fetcher.fetch(server.url("/public")).ok
    assert clock.sleeps == [4.0]


def test_robots_failing_every_try_disallows_the_host(server):
    flaky_robots(server, [503] * 10)
    clock = FakeTime()
    with retrying(clock) as fetcher:
        result = fetcher.fetch(server.url("/page"))
    assert result.error == "robots: robots.txt unreachable (http 503)"
    assert server.paths() == ["/robots.txt"] * 3


def test_robots_404_is_not_retried(server):
    server.routes["/page"] = page("<html>ok</html>")
    clock = FakeTime()
    with retrying(clock) as fetcher:
        assert fetcher.fetch(server.url("/page")).ok
    assert server.paths() == ["/robots.txt", "/page"]
    assert clock.sleeps == []


def test_robots_redirect_into_a_blocked_address_is_not_followed(server):
    intranet = StubServer(host="127.0.0.2")
    try:
        intranet.routes["/robots.txt"] = page("User-agent: *\nAllow: /\n", "text/plain")
        server.routes["/robots.txt"] = redirect(intranet.url("/robots.txt"))
        config = local_config(UA, delay=0, allowed_addresses=frozenset({"public"}))
        categories = {"127.0.0.1": "public", "127.0.0.2": "private"}
        with Fetcher(config, classify=categories.__getitem__) as fetcher:
            result = fetcher.fetch(server.url("/page"))
        assert result.error == ("robots: robots.txt unreachable "
                                "(blocked: 127.0.0.2 resolves to private address 127.0.0.2)")
        assert server.paths() == ["/robots.txt"]
        assert intranet.received == []
    finally:
        intranet.close()


def test_robots_txt_is_asked_again_once_its_answer_is_a_day_old(server):
    """RFC 9309 §2.4: an answer is kept 24 hours at most; a new one applies."""
    server.routes["/robots.txt"] = page("User-agent: *\nDisallow: /private\n", "text/plain")
    server.routes["/private"] = page("<p>secret</p>")
    clock = FakeTime()
    with Fetcher(local_config("BfsBot/0.1", delay=0), clock=clock.clock, sleep=clock.sleep) as fetcher:
        assert fetcher.fetch(server.url("/private")).error == "robots: disallowed by robots.txt"
        clock.now += 24 * 3600 - 1
        assert fetcher.fetch(server.url("/private")).error == "robots: disallowed by robots.txt"
        assert server.paths() == ["/robots.txt"]
        server.routes["/robots.txt"] = page("User-agent: *\nDisallow:\n", "text/plain")
        clock.now += 1
        assert fetcher.fetch(server.url("/private")).ok
    assert server.paths() == ["/robots.txt", "/robots.txt", "/private"]

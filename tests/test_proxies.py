"""Proxy selection by curl's rules (getpage/proxies.py): pure, no network.

The crawls through a real proxy are in tests/test_proxy_crawl.py."""
import pytest

from getpage.proxies import (
    Proxy,
    ProxyRules,
    missing_password,
    no_proxy_matches,
    parse_proxy,
    without_password,
)

# (host as a URL gives it, NO_PROXY, exempt?) -- curl's lib/noproxy.c and its
# CURLOPT_NOPROXY documentation.
NO_PROXY = [
    # no list, or an empty one: nothing is exempt, loopback included
    ("localhost", "", False),
    ("127.0.0.1", "", False),
    # "*" alone: every host
    ("example.com", "*", True),
    ("127.0.0.1", "*", True),
    ("::1", "*", True),
    # a "*" in a list is not a wildcard, only a name nobody has
    ("example.com", "*,other.org", False),
    ("example.com", "*.example.com", False),
    # a name: itself, and every name under it, case-insensitively
    ("example.com", "example.com", True),
    ("www.example.com", "example.com", True),
    ("a.b.example.com", "example.com", True),
    ("notexample.com", "example.com", False),
    ("example.com.org", "example.com", False),
    ("www.example.com", "EXAMPLE.com", True),
    # a leading dot changes nothing: ".example.com" matches example.com too
    ("www.example.com", ".example.com", True),
    ("example.com", ".example.com", True),
    ("notexample.com", ".example.com", False),
    # trailing dots, on either side, are ignored
    ("example.com.", "example.com", True),
    ("www.example.com", "example.com.", True),
    # a longer entry never matches a shorter name
    ("example.com", "www.example.com", False),
    # lists: commas, blanks around entries, empty entries
    ("b.org", "a.org,b.org", True),
    ("b.org", "a.org, b.org", True),
    ("b.org", " a.org ,, b.org ", True),
    ("c.org", "a.org,b.org", False),
    # a blank inside an entry ends the list (curl stops reading there)
    ("b.org", "a.org b.org", False),
    # an entry with a port matches nothing: hosts are matched without ports
    ("example.com", "example.com:8080", False),
    # names and addresses never match each other: loopback needs its address
    ("127.0.0.1", "localhost", False),
    ("localhost", "127.0.0.1", False),
    ("localhost", "localhost", True),
    # IPv4: the address, or a CIDR network
    ("127.0.0.1", "127.0.0.1", True),
    ("127.0.0.2", "127.0.0.1", False),
    ("127.0.0.2", "127.0.0.0/8", True),
    ("10.1.2.3", "10.0.0.0/8", True),
    ("11.1.2.3", "10.0.0.0/8", False),
    ("192.168.5.9", "192.168.0.0/16", True),
    ("192.169.5.9", "192.168.0.0/16", False),
    ("192.168.1.1", "192.168.1.1/32", True),
    ("192.168.1.2", "192.168.1.1/32", False),
    # bits as C's atoi reads them: /0 and /x compare the whole address, > 32 none
    ("10.1.2.3", "10.0.0.0/0", False),
    ("10.0.0.0", "10.0.0.0/0", True),
    ("10.1.2.3", "10.0.0.0/33", False),
    # an IPv4 entry in a suffix form is not a network: "0.0.1" is no address
    ("127.0.0.1", ".0.0.1", False),
    # IPv6, entered without brackets
    ("::1", "::1", True),
    ("::1", "[::1]", False),
    ("2001:db8::5", "2001:db8::/32", True),
    ("2001:db9::5", "2001:db8::/32", False),
    ("2001:db8::5", "2001:db8::/125", True),
    ("2001:db8::9", "2001:db8::/125", False),
    ("::1", "127.0.0.1", False),
    ("127.0.0.1", "::1", False),
]


@pytest.mark.parametrize("host, no_proxy, exempt", NO_PROXY)
def test_no_proxy_matches_as_curl_does(host, no_proxy, exempt):
    assert no_proxy_matches(host, no_proxy) is exempt


def rules(environ=None, **given):
    return ProxyRules.resolve(environ=environ or {}, **given)


def chosen(found, scheme, host="site.test"):
    proxy = found.for_origin(scheme, host)
    return None if proxy is None else (proxy.url, proxy.source)


def test_no_variables_no_proxy():
    assert chosen(rules(), "http") is None and chosen(rules(), "https") is None
    assert rules().describe() == ""


@pytest.mark.parametrize("environ, http, https", [
    ({"http_proxy": "http://p:3128"}, ("http://p:3128", "http_proxy"), None),
    ({"HTTP_PROXY": "http://p:3128"}, ("http://p:3128", "HTTP_PROXY"), None),
    ({"https_proxy": "p:8080"}, None, ("http://p:8080", "https_proxy")),
    ({"HTTPS_PROXY": "http://p:8080/"}, None, ("http://p:8080", "HTTPS_PROXY")),
    # lower case wins over upper case
    ({"http_proxy": "http://low:1", "HTTP_PROXY": "http://up:2"}, ("http://low:1", "http_proxy"), None),
    # all_proxy for the schemes without their own
    ({"ALL_PROXY": "http://all:3", "https_proxy": "http://s:4"},
     ("http://all:3", "ALL_PROXY"), ("http://s:4", "https_proxy")),
    ({"all_proxy": "http://a:1", "ALL_PROXY": "http://b:2"}, ("http://a:1", "all_proxy"),
     ("http://a:1", "all_proxy")),
    # a variable set but empty means no proxy, and ends the search
    ({"http_proxy": "", "ALL_PROXY": "http://all:3"}, None, ("http://all:3", "ALL_PROXY")),
    # no port: curl's 1080
    ({"http_proxy": "http://p"}, ("http://p:1080", "http_proxy"), None),
    # in a CGI program HTTP_PROXY may come from a request's Proxy: header: ignored
    ({"HTTP_PROXY": "http://evil:1", "REQUEST_METHOD": "GET"}, None, None),
    ({"http_proxy": "http://p:1", "REQUEST_METHOD": "GET"}, ("http://p:1", "http_proxy"), None),
])
def test_the_variables_curl_reads(environ, http, https):
    found = rules(environ)
    assert (chosen(found, "http"), chosen(found, "https")) == (http, https)


def test_no_proxy_exempts_hosts_and_loopback_is_not_exempt_by_default():
    found = rules({"http_proxy": "http://p:1", "https_proxy": "http://p:1",
                   "NO_PROXY": "internal.test,10.0.0.0/8"})
    assert chosen(found, "http", "www.internal.test") is None
    assert chosen(found, "https", "10.2.3.4") is None
    assert chosen(found, "http", "127.0.0.1") == ("http://p:1", "http_proxy")
    assert chosen(found, "http", "localhost") == ("http://p:1", "http_proxy")
    assert rules({"http_proxy": "http://p:1", "no_proxy": "a", "NO_PROXY": "site.test"}) \
        .for_origin("http", "site.test") is not None   # lower case wins here too


def test_proxy_option_wins_for_every_scheme_and_no_proxy_still_applies():
    environ = {"http_proxy": "http://env:1", "https_proxy": "http://env:2", "no_proxy": "direct.test"}
    found = rules(environ, proxy="http://given:3")
    assert chosen(found, "http") == ("http://given:3", "--proxy")
    assert chosen(found, "https") == ("http://given:3", "--proxy")
    assert chosen(found, "https", "direct.test") is None


def test_no_proxy_option_ignores_the_environment():
    found = rules({"http_proxy": "http://env:1", "ALL_PROXY": "http://env:2"}, ignore_environment=True)
    assert chosen(found, "http") is None and chosen(found, "https") is None
    with pytest.raises(ValueError, match="not both"):
        rules(proxy="http://p:1", ignore_environment=True)


@pytest.mark.parametrize("value, message", [
    ("socks5://user:secret@p:1080", "SOCKS proxies are not supported"),
    ("https://p:443", "a proxy reached over TLS"),
    ("ftp://p:21", "a ftp:// proxy is not supported"),
    ("http://p:notaport", "not a proxy URL"),
    ("http://:3128", "no host"),
])
def test_unusable_proxy_urls_are_one_line_without_the_password(value, message):
    with pytest.raises(ValueError, match=message) as raised:
        rules({"ALL_PROXY": value})
    assert "secret" not in str(raised.value) and "\n" not in str(raised.value)
    assert str(raised.value).startswith("ALL_PROXY=")


def test_credentials_are_decoded_kept_out_of_the_url_and_shown_nowhere():
    proxy = parse_proxy("http://al%40ice:p%3Ass@proxy.test:3128", "--proxy")
    assert (proxy.username, proxy.password) == ("al@ice", "p:ss")
    assert proxy.url == "http://proxy.test:3128"
    assert proxy.url_with_credentials == "http://al%40ice:p%3Ass@proxy.test:3128"
    assert "p:ss" not in repr(proxy) and "p%3Ass" not in repr(proxy)
    assert "p%3Ass" not in rules(proxy="http://al%40ice:p%3Ass@proxy.test:3128").describe()
    assert Proxy("::1", 8, "x").url == "http://[::1]:8"


@pytest.mark.parametrize("url, kept, missing", [
    ("http://user:secret@p:3128", "http://user@p:3128", False),
    ("http://user:secret@p:3128/x", "http://user@p:3128/x", False),
    ("user:secret@p:3128", "user@p:3128", False),
    ("http://user:@p:3128", "http://user@p:3128", False),
    ("http://p:3128", "http://p:3128", False),
    ("http://user@p:3128", "http://user@p:3128", True),
    ("", "", False),
])
def test_without_password_keeps_the_user_and_marks_the_password_as_missing(url, kept, missing):
    assert without_password(url) == kept
    assert missing_password(url) is missing
    assert missing_password(kept) is (kept != url or missing)


def test_describe_names_the_proxy_and_where_it_came_from():
    found = rules({"http_proxy": "http://u:pw@p:1", "https_proxy": "http://u:pw@p:1",
                   "no_proxy": "localhost"})
    assert found.describe() == ("proxy: http through http://p:1 (from http_proxy), https through "
                                "http://p:1 (from https_proxy); not for no_proxy=localhost")
    assert rules(proxy="http://u:pw@p:2").describe() == \
        "proxy: http and https through http://p:2 (from --proxy)"

"""SURT keys are the ones pywb looks URLs up by: urlfilter.surt against the
``surt`` package itself (what pywb calls), on a table of the cases that
matter to a crawler and on thousands of random URLs built from awkward parts.

The surt package asks the system resolver to read IPv4 spellings
(socket.gethostbyname_ex); the tests hand it the C library's inet_aton
instead, which answers the same for the digit-and-dot names it asks about
and never sends a query anywhere.
"""
from __future__ import annotations

import random
import socket

import pytest
import surt as surt_package

from urlfilter.surt import surt

KEYS = [
    # IP hosts: reversed like names; any inet_aton spelling of IPv4; IPv6 unbracketed
    ("http://127.0.0.1:8000/p.html", "1,0,0,127:8000)/p.html"),
    ("http://127.0.0.1/", "1,0,0,127)/"),
    ("http://10.0.0.1:80/", "1,0,0,10)/"),
    ("http://2130706433/", "1,0,0,127)/"),
    ("http://017.0.0.1/", "1,0,0,15)/"),
    ("http://1.2.3/", "3,0,2,1)/"),
    ("http://1.2.3.256/", "256,3,2,1)/"),
    ("http://0x7f.0.0.1/", "1,0,0,0x7f)/"),
    ("http://[::1]:8080/x", "::1:8080)/x"),
    ("http://[2001:DB8::A]/", "2001:db8::a)/"),
    ("http://[::ffff:127.0.0.1]/", "1,0,0,::ffff:127)/"),
    # ports: only the scheme's own default is dropped
    ("http://example.org:80/", "org,example)/"),
    ("https://example.org:443/", "org,example)/"),
    ("http://example.org:443/", "org,example:443)/"),
    ("https://example.org:80/", "org,example:80)/"),
    ("https://example.org:8443/x", "org,example:8443)/x"),
    ("ftp://example.org:21/", "org,example:21)/"),
    ("http://example.org:/", "org,example)/"),
    # www: one leading www., www1. ... dropped
    ("http://www.example.org/", "org,example)/"),
    ("http://WWW.Example.org/", "org,example)/"),
    ("http://www1.example.org/", "org,example)/"),
    ("http://www12.example.org/", "org,example)/"),
    ("http://wwwx.example.org/", "org,example,wwwx)/"),
    ("http://www.www.example.org/", "org,example,www)/"),
    ("http://example.www.org/", "org,www,example)/"),
    # query: lower case, arguments sorted, session ids and an empty query dropped
    ("http://example.org/?b=2&a=1", "org,example)/?a=1&b=2"),
    ("http://example.org/?a=2&a=1", "org,example)/?a=1&a=2"),
    ("http://example.org/?a&a=", "org,example)/?a&a="),
    ("http://example.org/?a=1&A=2", "org,example)/?a=1&a=2"),
    ("http://example.org/?", "org,example)/"),
    ("http://example.org/p?x=%26y&b", "org,example)/p?b&x=&y"),
    ("http://example.org/?jsessionid=0123456789abcdef0123456789ABCDEF&q=1", "org,example)/?q=1"),
    ("http://example.org/?q=a+b", "org,example)/?q=a+b"),
    # case
    ("HTTP://EXAMPLE.ORG/Path/File.HTML?Q=V", "org,example)/path/file.html?q=v"),
    # fragments dropped
    ("http://example.org/a#top", "org,example)/a"),
    ("http://example.org/a?b=1#top", "org,example)/a?b=1"),
    ("http://example.org/#", "org,example)/"),
    # percent-encoding: decoded until stable, then escaped once; IDNA hosts
    ("http://example.org/%7Euser/", "org,example)/~user"),
    ("http://example.org/a%2Fb", "org,example)/a/b"),
    ("http://example.org/%2541", "org,example)/a"),
    ("http://example.org/a b", "org,example)/a%20b"),
    ("http://example.org/%zz", "org,example)/%25zz"),
    ("http://example.org/caf%C3%A9", "org,example)/caf%c3%a9"),
    ("http://example.org/café", "org,example)/caf%c3%a9"),
    ("http://b%C3%BCcher.de/", "de,xn--bcher-kva)/"),
    ("http://bücher.de/", "de,xn--bcher-kva)/"),
    ("http://xn--bcher-kva.de/", "de,xn--bcher-kva)/"),
    # user info dropped
    ("http://user:secret@example.org/", "org,example)/"),
    ("http://user@www.example.org:8080/", "org,example:8080)/"),
    # trailing slash: one dropped, except the root's; dot segments resolved
    ("http://example.org", "org,example)/"),
    ("http://example.org/", "org,example)/"),
    ("http://example.org/a/", "org,example)/a"),
    ("http://example.org/a//", "org,example)/a"),
    ("http://example.org/a/./b/../c/", "org,example)/a/c"),
    # not http
    ("mailto:Someone@Example.org", "mailto:someone@example.org"),
    ("filedesc:crawl.arc", "filedesc:crawl.arc"),
]

SCHEMES = ["http://", "https://", "HTTP://", "ftp://", "", "http://http://", "http:///", "dns:", "urn:"]
USER_INFO = ["", "user@", "u:p@", "a%40b:c@", "@"]
HOSTS = ["example.org", "www.Example.ORG", "www1.ex.com", "WWW12.a.b.c", "wwwx.org", "ex.com.",
         ".ex..com", "a...b", "127.0.0.1", "1.2.3", "017.0.0.1", "2130706433", "0", "1.2.3.256",
         "1.08.0.1", "0x7f.0.0.1", "999999999999", "01.17.0.9", "1.16777215", "1.16777216",
         "[::1]", "[2001:DB8::A]", "[fe80::1%25eth0]", "bücher.de", "xn--bcher-kva.de", "%65x.com",
         "e%2578.com", "www.%E4%BE%8B.jp", "例.jp", "a_b.com", "", "h%2fx.com"]
PORTS = ["", ":80", ":443", ":8080", ":0", ":", ":65535", ":00080"]
SEGMENTS = ["a", "B", ".", "..", "", "%41", "%2541", "%2F", "a b", "%zz", "é", "x.ASPX",
            "(12345678901234567890abcd)", "(s(abcdefghijklmnopqrstuvwx))", "~u", "%7E", "a#b", "a\tb"]
ARGUMENTS = ["a=1", "B=2", "a", "a=", "=x", "c=%26d", "e=%3D", "Z=z", "q=a+b", "q=%20", "x=é",
             "jsessionid=0123456789abcdef0123456789ABCDEF", "sid=0123456789abcdef0123456789abcdef",
             "PHPSESSID=0123456789abcdef0123456789abcdef", "cfid=1&cftoken=2",
             "ASPSESSIONIDabcdefgh=abcdefghijklmnopqrstuvwx", "utm_source=n"]
FRAGMENTS = ["", "#", "#top", "#a?b"]


@pytest.fixture(autouse=True)
def no_resolver(monkeypatch):
    """The surt package reads IPv4 spellings through the resolver: give it
    inet_aton, which never leaves the machine."""
    def read_address(name: bytes | str):
        name = name.decode("ascii") if isinstance(name, bytes) else name
        try:
            return name, [], [socket.inet_ntoa(socket.inet_aton(name))]
        except OSError:
            raise socket.gaierror(socket.EAI_NONAME, "not an address") from None
    monkeypatch.setattr(socket, "gethostbyname_ex", read_address)


@pytest.mark.parametrize("url, key", KEYS)
def test_key(url, key):
    assert surt(url) == key


@pytest.mark.parametrize("url, key", KEYS)
def test_the_table_holds_the_surt_packages_keys(url, key):
    assert surt_package.surt(url) == key


def test_random_urls_have_the_surt_packages_keys():
    rng = random.Random(13)
    urls = [random_url(rng) for _ in range(4000)]
    differ = [(url, surt(url), surt_package.surt(url)) for url in urls
              if surt(url) != surt_package.surt(url)]
    assert differ == []


@pytest.mark.parametrize("url", ["http://example.org:99999/", "http://example.org:8a/"])
def test_a_port_that_is_no_number_keys_the_url_as_it_is(url):
    with pytest.raises(ValueError):
        surt_package.surt(url)   # so pywb cannot look it up at all
    assert surt(url) == url


def test_an_empty_url_keys_as_a_dash():
    assert surt("") == surt_package.surt("") == "-"


def random_url(rng: random.Random) -> str:
    path = "".join("/" + rng.choice(SEGMENTS) for _ in range(rng.randint(0, 4)))
    path += "/" if rng.random() < 0.3 else ""
    query = ""
    if rng.random() < 0.6:
        query = "?" + "&".join(rng.choice(ARGUMENTS) for _ in range(rng.randint(0, 4)))
    return (rng.choice(SCHEMES) + rng.choice(USER_INFO) + rng.choice(HOSTS) + rng.choice(PORTS)
            + path + query + rng.choice(FRAGMENTS))

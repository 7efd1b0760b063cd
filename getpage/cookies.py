"""A crawl's cookies: the standard library's jar (``http.cookiejar``, the
RFC 6265 rules of which cookie goes back to which host and path), filled
from a Netscape cookies.txt file and from the servers' Set-Cookie headers.

Owns loading a cookies file, the Cookie header for a URL, and storing a
response's cookies. The jar lives in memory only: it is never written.

Cost: a crawl makes one request per page and most sites set no cookie, so
the jar is asked only about hosts it may hold a cookie for. The domains of
the cookies stored so far are kept in a set; a host can get a cookie only
if it, or a parent domain of it, is in that set (a cookie's domain matches
a host only so), which costs a few set lookups. A response without a
Set-Cookie header costs one header lookup.

Threads: fetch threads share one Cookies; its lock serialises the jar's
calls (the jar itself is not safe to iterate while another thread changes
it), and only requests to hosts with cookies take it.
"""
from __future__ import annotations

import http.cookiejar
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import urllib3
from requests.cookies import MockRequest, MockResponse

from .addresses import url_authority


def load_cookie_file(path: str | Path) -> http.cookiejar.MozillaCookieJar:
    """The cookies of a Netscape cookies.txt file (as wget --save-cookies,
    curl -c and browser exports write it), session cookies (expiry 0)
    included, expired ones dropped. Raises ValueError with a one-line reason."""
    jar = http.cookiejar.MozillaCookieJar()
    try:
        # Expiry 0 marks a session cookie in the files wget and curl write,
        # which the jar would read as long expired: those are kept here.
        jar.load(str(path), ignore_discard=True, ignore_expires=True)
    except http.cookiejar.LoadError as exc:
        raise ValueError(f"--load-cookies {path}: not a Netscape cookies.txt file ({exc}); it "
                         f"starts with '# Netscape HTTP Cookie File' and has a line of 7 "
                         f"tab-separated fields per cookie, as wget and curl write it") from None
    except (OSError, UnicodeError) as exc:
        raise ValueError(f"--load-cookies {path}: cannot read it "
                         f"({getattr(exc, 'strerror', None) or exc})") from None
    now = time.time()
    for cookie in list(jar):
        if cookie.expires == 0:
            cookie.expires, cookie.discard = None, True
        elif cookie.is_expired(now):
            jar.clear(cookie.domain, cookie.path, cookie.name)
    return jar


class Cookies:
    """The cookie jar of one crawl. Thread-safe."""

    def __init__(self, jar: http.cookiejar.CookieJar | None = None) -> None:
        self._jar = jar if jar is not None else http.cookiejar.CookieJar()
        self._policy = http.cookiejar.DefaultCookiePolicy()   # RFC 6265 as the jar knows it
        self._jar.set_policy(self._policy)
        self._lock = threading.Lock()
        self._domains = frozenset(_domain(cookie.domain) for cookie in self._jar)

    def header(self, url: str) -> str | None:
        """The Cookie header value for a GET of ``url``, None when no cookie goes there."""
        if not self._domains or not self._may_hold(url):
            return None
        request = MockRequest(SimpleNamespace(url=url, headers={}))
        with self._lock:
            self._jar.add_cookie_header(request)
        return request.get_new_headers().get("Cookie")

    def store(self, url: str, response: urllib3.BaseHTTPResponse) -> None:
        """Keep the cookies ``response`` (to a GET of ``url``) sets, as the jar's policy allows."""
        if "set-cookie" not in response.headers and "set-cookie2" not in response.headers:
            return
        message = getattr(getattr(response, "_original_response", None), "msg", None)
        if message is None:
            return
        request = MockRequest(SimpleNamespace(url=url, headers={}))
        with self._lock:
            # What CookieJar.extract_cookies does, noting each stored cookie's domain.
            jar, stored = self._jar, set()
            for cookie in jar.make_cookies(MockResponse(message), request):
                if self._policy.set_ok(cookie, request):
                    jar.set_cookie(cookie)
                    stored.add(_domain(cookie.domain))
            if not stored <= self._domains:
                self._domains = self._domains | stored

    def __len__(self) -> int:
        with self._lock:
            return len(self._jar)

    def _may_hold(self, url: str) -> bool:
        """Whether the jar may hold a cookie for ``url``'s host: the host or one
        of its parent domains is the domain of a cookie stored."""
        host = url_authority(url)[1]
        domains = self._domains
        if "." not in host:
            # The jar files a dotless host's cookies under host + ".local".
            return host in domains or f"{host}.local" in domains
        while True:
            if host in domains:
                return True
            _, dot, host = host.partition(".")
            if not dot:
                return False


def _domain(domain: str) -> str:
    return domain.lstrip(".").lower()

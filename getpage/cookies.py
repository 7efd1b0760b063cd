"""A crawl's cookies: the standard library's jar (``http.cookiejar``, the
RFC 6265 rules of which cookie goes back to which host and path), filled
from a Netscape cookies.txt file and from the servers' Set-Cookie headers.

Owns loading a cookies file, the Cookie header for a URL, and storing a
response's cookies. The jar lives in memory only: it is never written.

Cost: a crawl makes one request per page and most sites set no cookie,
while a crawl of many hosts may gather cookies from thousands of them, and
the standard library's jar looks at every domain it holds for every
request. So the crawl's cookies are kept in one jar per site key, the last
two labels of a host name (``www.example.org`` -> ``example.org``): a
cookie reaches a host only if its domain is the host or a parent domain of
it with an embedded dot (the jar's policy refuses the others), so it lies
in the jar of the host's own key. A host without a jar costs one dict
lookup; one with a jar pays ``add_cookie_header`` over that jar only. A
response without a Set-Cookie header costs one header lookup.

Threads: fetch threads share one Cookies; its lock serialises the jars'
calls (a jar is not safe to iterate while another thread changes it), and
only requests to hosts with cookies take it.
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
    """The cookie jars of one crawl. Thread-safe."""

    def __init__(self, jar: http.cookiejar.CookieJar | None = None) -> None:
        self._policy = http.cookiejar.DefaultCookiePolicy()   # RFC 6265 as the jar knows it
        self._jars: dict[str, http.cookiejar.CookieJar] = {}
        self._lock = threading.Lock()
        for cookie in jar or ():
            self._jar_for(_domain(cookie.domain)).set_cookie(cookie)

    def header(self, url: str) -> str | None:
        """The Cookie header value for a GET of ``url``, None when no cookie goes there."""
        jar = self._jars.get(_site_key(url_authority(url)[1])) if self._jars else None
        if jar is None:
            return None
        request = MockRequest(SimpleNamespace(url=url, headers={}))
        with self._lock:
            jar.add_cookie_header(request)
        return request.get_new_headers().get("Cookie")

    def store(self, url: str, response: urllib3.BaseHTTPResponse) -> None:
        """Keep the cookies ``response`` (to a GET of ``url``) sets, as the policy allows."""
        if "set-cookie" not in response.headers and "set-cookie2" not in response.headers:
            return
        message = getattr(getattr(response, "_original_response", None), "msg", None)
        if message is None:
            return
        request = MockRequest(SimpleNamespace(url=url, headers={}))
        with self._lock:
            jar = self._jar_for(url_authority(url)[1])
            # What CookieJar.extract_cookies does; the policy checks that each
            # cookie's domain matches the host, so it belongs in this jar.
            for cookie in jar.make_cookies(MockResponse(message), request):
                if self._policy.set_ok(cookie, request):
                    jar.set_cookie(cookie)

    def __len__(self) -> int:
        with self._lock:
            return sum(len(jar) for jar in self._jars.values())

    def _jar_for(self, host: str) -> http.cookiejar.CookieJar:
        key = _site_key(host)
        jar = self._jars.get(key)
        if jar is None:
            jar = http.cookiejar.CookieJar(self._policy)
            self._jars = {**self._jars, key: jar}   # readers see the old dict or the new
        return jar


def _site_key(host: str) -> str:
    """The last two labels of ``host`` (lower case); a dotless host is
    filed as the jar files it, with ".local" added."""
    if "." not in host:
        host += ".local"
    return ".".join(host.rsplit(".", 2)[-2:])


def _domain(domain: str) -> str:
    return domain.lstrip(".").lower()

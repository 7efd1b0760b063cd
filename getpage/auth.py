"""HTTP authentication (``--http-user``/``--http-password``): Basic and
Digest, for the seeds' origins only.

Owns when credentials are sent and how the Authorization header is made.
As wget does by default, nothing is sent until an origin asks: a 401 with
a ``WWW-Authenticate`` challenge from one of the seeds' origins (scheme,
host and port) is answered at once with the credentials, Digest when the
server offers it, else Basic. After a Basic answer the origin gets Basic
on every later request without asking again (wget does the same); a
Digest answer needs the server's nonce, kept per fetch thread by
requests' ``HTTPDigestAuth``, so each thread meets one challenge per
origin. ``challenge_first=False`` (``--auth-no-challenge``) sends Basic
from the first request.

A request to any other origin, a redirect's target included, never
carries the credentials.
"""
from __future__ import annotations

import base64
import re
import threading
from dataclasses import dataclass, field

import urllib3
from requests.auth import HTTPDigestAuth
from requests.utils import parse_dict_header

_DIGEST = re.compile(r"\bdigest\s+", re.IGNORECASE)
_BASIC = re.compile(r"\bbasic\b", re.IGNORECASE)


@dataclass(frozen=True)
class Credentials:
    """A user name and password for ``origins`` ("scheme://host[:port]", as
    robots.origin_of writes them)."""

    user: str
    password: str = field(repr=False)
    origins: frozenset[str] = frozenset()
    challenge_first: bool = True   # False: Basic on every request, unasked


class Authenticator:
    """Makes the Authorization headers of one crawl. Thread-safe."""

    def __init__(self, credentials: Credentials) -> None:
        self._credentials = credentials
        self._basic = basic_authorization(credentials.user, credentials.password)
        self._basic_origins: set[str] = set()   # origins that took Basic
        self._digests: dict[str, HTTPDigestAuth] = {}
        self._lock = threading.Lock()

    def covers(self, origin: str) -> bool:
        return origin in self._credentials.origins

    def header(self, url: str, origin: str) -> str | None:
        """The Authorization to send unasked with a GET of ``url``, or None."""
        if origin not in self._credentials.origins:
            return None
        if not self._credentials.challenge_first or origin in self._basic_origins:
            return self._basic
        digest = self._digests.get(origin)
        if digest is not None:
            digest.init_per_thread_state()
            if digest._thread_local.chal:   # this thread has met the origin's challenge
                return digest.build_digest_header("GET", url)
        return None

    def answer(self, url: str, origin: str, response: urllib3.BaseHTTPResponse) -> str | None:
        """The Authorization answering ``response``, a 401 to a GET of ``url``;
        None when it is no challenge this crawl can answer."""
        if origin not in self._credentials.origins:
            return None
        challenge = response.headers.get("www-authenticate", "")
        digest_at = _DIGEST.search(challenge)
        if digest_at is not None:
            digest = self._digest(origin)
            digest.init_per_thread_state()
            # What HTTPDigestAuth.handle_401 does with a challenge; that hook
            # needs a requests Response, which the transport does not make.
            digest._thread_local.chal = parse_dict_header(challenge[digest_at.end():])
            return digest.build_digest_header("GET", url)
        if _BASIC.search(challenge):
            with self._lock:
                self._basic_origins.add(origin)
            return self._basic
        return None

    def _digest(self, origin: str) -> HTTPDigestAuth:
        with self._lock:
            digest = self._digests.get(origin)
            if digest is None:
                credentials = self._credentials
                digest = self._digests[origin] = HTTPDigestAuth(credentials.user,
                                                                credentials.password)
            return digest


def basic_authorization(user: str, password: str) -> str:
    """The Basic Authorization value (RFC 7617, in UTF-8)."""
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode("ascii")

"""What the crawler shows each server besides its User-Agent: the
``--header`` headers, its cookies and its credentials.

Owns which of them goes with which request, in one place that every
request passes (``Transport.get``: pages, redirect hops, robots.txt and
sitemaps alike):
- a header whose value is not a secret goes with every request (as wget
  sends ``--header``), and replaces a header of the same name the crawler
  would send (User-Agent, Accept), as in wget;
- a secret header (``headers.is_secret_header``: Authorization, Cookie ...)
  and the HTTP credentials go only to the seeds' origins;
- cookies go where the jar's rules send them (``cookies``);
- a 401 challenge from a seed's origin is answered at once with the
  credentials (``auth``), on the same politeness slot: the answer is part
  of the request that was challenged, as in browsers and wget.
"""
from __future__ import annotations

from collections.abc import Callable

import urllib3

from .auth import Authenticator
from .cookies import Cookies
from .headers import is_secret_header
from .robots import origin_of

# A challenge's body up to this size is read so the connection is reused
# for the answer; a larger one is dropped with its connection.
CHALLENGE_BODY_BYTES = 16 * 1024

Send = Callable[[str, "dict[str, str] | None"], urllib3.BaseHTTPResponse]


class Identity:
    """Headers, cookies and credentials of one crawl. Thread-safe.

    ``headers``: (name, value) pairs of ``--header``; ``origins``: the
    seeds' origins, where secret headers and credentials may go.
    """

    def __init__(self, headers: tuple[tuple[str, str], ...] = (), cookies: Cookies | None = None,
                 auth: Authenticator | None = None, origins: frozenset[str] = frozenset()) -> None:
        self.everywhere = {name: value for name, value in headers if not is_secret_header(name)}
        self._secret = {name: value for name, value in headers if is_secret_header(name)}
        self._cookies = cookies
        self._auth = auth
        self._origins = origins if (self._secret or auth is not None) else frozenset()

    def get(self, send: Send, url: str, headers: dict[str, str] | None) -> urllib3.BaseHTTPResponse:
        """``send(url, headers)`` with the headers this identity adds for ``url``;
        a 401 challenge it can answer is answered, and that answer's
        response returned instead. Cookies set by either are kept."""
        origin = origin_of(url) if self._origins else ""
        extra = self._headers(url, origin, headers)
        response = send(url, extra)
        if self._cookies is not None:
            self._cookies.store(url, response)
        if response.status != 401 or origin not in self._origins or self._auth is None:
            return response
        answer = self._auth.answer(url, origin, response)
        if answer is None:
            return response
        _discard(response)
        response = send(url, _with(extra, "Authorization", answer))
        if self._cookies is not None:
            self._cookies.store(url, response)
        return response

    def _headers(self, url: str, origin: str, headers: dict[str, str] | None
                 ) -> dict[str, str] | None:
        """``headers`` plus this identity's for ``url`` (None if there are none)."""
        added: dict[str, str] = {}
        if origin in self._origins:
            added.update(self._secret)
            if self._auth is not None and (authorization := self._auth.header(url, origin)):
                added = _with(added, "Authorization", authorization)
        if self._cookies is not None and (cookie := self._cookies.header(url)):
            given = next((value for name, value in added.items() if name.lower() == "cookie"), "")
            added = _with(added, "Cookie", f"{given}; {cookie}" if given else cookie)
        if not added:
            return headers
        return added if headers is None else {**added, **headers}


def _with(headers: dict[str, str] | None, name: str, value: str) -> dict[str, str]:
    """``headers`` with ``name`` set to ``value``, replacing it in any case spelling."""
    kept = {key: old for key, old in (headers or {}).items() if key.lower() != name.lower()}
    kept[name] = value
    return kept


def _discard(response: urllib3.BaseHTTPResponse) -> None:
    """Read a small body to its end (the connection goes back to the pool),
    or drop the connection; release the response either way."""
    length = response.headers.get("content-length", "")
    try:
        if length.isdigit() and int(length) <= CHALLENGE_BODY_BYTES:
            response.read(decode_content=False)
    except (urllib3.exceptions.HTTPError, OSError):
        pass   # the connection is dropped on close; the answer goes on a new one
    finally:
        response.close()
        response.release_conn()

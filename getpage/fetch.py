"""The Fetcher: one URL in, one FetchResult out.

Owns the order of steps for one fetch (robots check, politeness gate, GET,
retries, redirects, body, binary check, charset), the size and time limits
on a body, and the translation of network exceptions into error values (in
``_describe``, and nowhere else).

Its helpers each own one rule: ``transport`` the session, how a GET is
sent and where a connection may go, ``addresses`` the address categories,
``retry`` which failures are tried again and how long to wait, ``sniff``
what a body really is, ``robots`` and ``politeness`` what the site and
good manners allow.

Retries wrap ``_request``, the one network round trip: every attempt waits
for the politeness gate again, and every new connection is vetted by the
address guard again.

CPU per page matters (issue 5 wants the whole crawler under 1.6 ms of CPU
per page, and a crawl makes one fetch per page): the common path builds one
FetchResult per response and one for the caller, reads robots rules without
a lock once loaded, and sends the GET with ``Transport.get``, which skips
requests' per-request machinery (see ``transport``).

Recording (``record_exchanges``, for WARC output): each response also
becomes an ``Exchange`` with its body as it came over the wire. Such a
body is read undecoded (``decode_content=False``) and decoded here by
urllib3's own content decoders (``_Tap``), at most CHUNK_BYTES of output at
a time, so ``FetchResult.body`` and the max_bytes check on the decoded size
are exactly what they are without recording.
"""
from __future__ import annotations

import http.client
import os
import random
import ssl
import socket
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from http import HTTPStatus
from urllib.parse import urldefrag, urljoin

import requests
import urllib3
import urllib3.exceptions
import urllib3.response
from urllib3.exceptions import ConnectTimeoutError, MaxRetryError, NewConnectionError

from .addresses import (
    ADDRESS_CATEGORIES,
    AddressGuard,
    BlockedAddress,
    Classifier,
    Resolver,
    address_category,
    resolve_host,
    url_authority,
)
from .auth import Authenticator, Credentials
from .charset import decode_html
from .cookies import Cookies, load_cookie_file
from .headers import parse_header
from .identity import Identity
from .pacing import Observation
from .politeness import Cancelled, PolitenessGate, host_key
from .result import Ask, Continuation, Exchange, FetchResult, SentRequest
from .retry import backoff_wait, is_transient, retry_after
from .robots import (
    MAX_ROBOTS_BYTES,
    MAX_ROBOTS_REDIRECTS,
    ROBOTS_TTL_SECONDS,
    RobotsCache,
    RobotsRules,
    origin_of,
    product_token,
    robots_url,
    rules_for_response,
)
from .proxies import ProxyRules
from .sniff import SNIFF_BYTES, binary_bytes, binary_text, looks_like_html
from .tlsbundle import tls_verification
from .transport import Transport, heard_ago

CHUNK_BYTES = 64 * 1024
# Bodies of redirects and error pages up to this size are read and thrown
# away so their connection goes back to the pool; larger ones are cut off.
DRAIN_BYTES = 16 * 1024
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
# How soon a scheduled fetch asks again when another one is loading its
# host's robots.txt (only while that load waits out a retry).
ROBOTS_RECHECK_SECONDS = 0.1
# Error kinds of a request that got no answer: when robots.txt fails so,
# the page's error names that failure, not robots.txt.
_NETWORK_KINDS = frozenset({"connection", "timeout"})


@dataclass(frozen=True)
class FetchConfig:
    """Everything that shapes how pages are fetched. Validated on creation."""

    user_agent: str                 # full User-Agent header; robots.txt groups match its product token
    timeout: float = 10.0           # seconds: connect timeout, and deadline for a whole response from request start
    max_redirects: int = 10         # redirects followed per fetch; one more is an error
    max_bytes: int = 10_000_000     # cap on the decoded body, bytes; past it the body is dropped
    delay: float = 1.0              # seconds between the starts of two requests to one host (Crawl-delay may raise it)
    per_host: int = 1               # requests in flight to one host at most
    obey_robots: bool = True        # False: robots.txt is neither fetched nor obeyed
    html_types: tuple[str, ...] = ("text/html", "application/xhtml+xml")  # media types whose body is read
    retries: int = 2                # extra attempts after a transient failure (retry.py); 0 = none
    retry_backoff: float = 0.5      # seconds; after failed attempt n wait random in [0, backoff * 2**(n-1)]
    max_retry_after: float = 30.0   # seconds; a 429/503 asking for a longer Retry-After is given up at once
    # Address categories (addresses.ADDRESS_CATEGORIES) a connection may go
    # to; a host with any address outside them is "blocked".
    allowed_addresses: frozenset[str] = frozenset({"public"})
    # Keep every response as it came over the wire (FetchResult.exchanges),
    # for WARC output; off, fetching costs nothing extra.
    record_exchanges: bool = False
    robots_ttl: float = ROBOTS_TTL_SECONDS   # seconds a robots.txt answer is kept (RFC 9309 §2.4: 24 h at most)
    # What the crawler shows servers besides its User-Agent (see identity.py):
    # (name, value) sent with every request; secret ones to credential_origins only
    headers: tuple[tuple[str, str], ...] = ()
    cookies: bool = True                     # keep the cookies servers set and send them back (RFC 6265)
    cookie_file: str = ""                    # Netscape cookies.txt loaded into the jar first ("" = none)
    http_user: str = ""                      # HTTP authentication (Basic or Digest) for credential_origins
    http_password: str = field(default="", repr=False)
    auth_no_challenge: bool = False          # True: Basic on every request to them, unasked
    credential_origins: frozenset[str] = frozenset()  # "scheme://host[:port]" that get credentials
    # Proxies (getpage.proxies): this proxy URL for every scheme ("" = the
    # environment's); no_proxy: ignore the environment, go direct.
    proxy: str = field(default="", repr=False)   # may hold a password
    no_proxy: bool = False
    # TLS: trust the CAs in this PEM file ("" = certifi's, or a bundle the
    # environment names, see transport.tls_verification); or verify nothing.
    ca_certificate: str = ""
    check_certificate: bool = True

    def __post_init__(self) -> None:
        product_token(self.user_agent)  # raises ValueError if there is none
        if self.timeout <= 0 or self.max_bytes <= 0:
            raise ValueError("timeout and max_bytes must be positive")
        if self.max_redirects < 0 or self.delay < 0 or self.per_host < 1:
            raise ValueError("need max_redirects >= 0, delay >= 0, per_host >= 1")
        if self.retries < 0 or self.retry_backoff < 0 or self.max_retry_after < 0:
            raise ValueError("need retries >= 0, retry_backoff >= 0, max_retry_after >= 0")
        # A set passed by a caller would make the frozen config unhashable.
        object.__setattr__(self, "allowed_addresses", frozenset(self.allowed_addresses))
        object.__setattr__(self, "credential_origins", frozenset(self.credential_origins))
        object.__setattr__(self, "headers", tuple((name, value) for name, value in self.headers))
        for name, value in self.headers:
            parse_header(f"{name}: {value}")   # raises ValueError for a malformed one
        if self.cookie_file and not self.cookies:
            raise ValueError("cookie_file needs cookies=True")
        if unknown := self.allowed_addresses - set(ADDRESS_CATEGORIES):
            raise ValueError(f"unknown address categories {sorted(unknown)}; "
                             f"choose from {', '.join(ADDRESS_CATEGORIES)}")


def identity_of(config: FetchConfig) -> Identity | None:
    """The headers, cookies and credentials ``config`` asks for; None when
    it asks for none of them (nothing is added to a request then)."""
    cookies = None
    if config.cookies:
        cookies = Cookies(load_cookie_file(config.cookie_file) if config.cookie_file else None)
    auth = None
    if config.http_user or config.http_password:
        auth = Authenticator(Credentials(config.http_user, config.http_password,
                                         config.credential_origins,
                                         challenge_first=not config.auth_no_challenge))
    if not config.headers and cookies is None and auth is None:
        return None
    return Identity(config.headers, cookies, auth, config.credential_origins)


class _NotNow(Exception):
    """A scheduled fetch cannot start its next request now (see Fetcher.fetch)."""

    def __init__(self, not_before: float | None = None, attempts: int | None = None,
                 continuation: Continuation | None = None) -> None:
        super().__init__()
        self.not_before = not_before
        self.attempts = attempts
        self.continuation = continuation


@dataclass
class _Slots:
    """The request slots of one scheduled fetch (one thread): the host whose
    slot the scheduler reserved, until a request uses it; may_wait while
    robots.txt retries are allowed to wait at the gate."""

    reserved: str | None
    may_wait: bool = False


class _ThreadState(threading.local):
    slots: _Slots | None = None   # the scheduled fetch this thread is in, if any
    ask: Ask | None = None        # what the fetch in this thread asks for beyond a page
    poured: bool = False          # its sink has had a chunk of the body


def _host_or_none(url: str) -> str | None:
    try:
        return host_key(url)
    except ValueError:
        return None


class _Failure(Exception):
    """Carries an error value out of the body-reading code to ``_hop``."""

    def __init__(self, error: str) -> None:
        super().__init__(error)
        self.error = error


@dataclass(frozen=True)
class _Hop:
    """One URL's outcome: the response as a result, where it redirects, and
    how many requests it took."""

    result: FetchResult
    location: str | None = None
    attempts: int = 1
    exchange: Exchange | None = None  # only when recording


class Fetcher:
    """Fetches pages politely. Thread-safe: share one Fetcher among workers.

    ``redirect_check(url)`` is asked about every redirect target (absolute,
    without fragment) before it is followed; a returned string is the
    reason to stop there. ``clock`` and ``sleep`` drive the politeness gate
    and the waits between retries; ``rng`` draws the backoff jitter.
    ``resolve(host, port)`` lists a host's addresses and ``classify(ip)``
    names an address's category (see ``addresses``); tests replace them to
    map made-up names onto local addresses. ``environ`` is where the proxy
    variables and CA bundle variables are read, once, here (default:
    ``os.environ``); a proxy URL that cannot be used raises ValueError.
    """

    def __init__(
        self,
        config: FetchConfig,
        *,
        redirect_check: Callable[[str], str | None] | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] | None = None,
        resolve: Resolver = resolve_host,
        classify: Classifier = address_category,
        rng: random.Random | None = None,
        gate: PolitenessGate | None = None,
        robots_store=None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self._config = config
        self._redirect_check = redirect_check
        self._rng = rng or random.Random()
        self._token = product_token(config.user_agent)
        self._html_types = frozenset(media.lower() for media in config.html_types)
        guard = AddressGuard(config.allowed_addresses, resolve, classify)
        environ = os.environ if environ is None else environ
        self._transport = Transport(
            config.user_agent, config.per_host, guard, config.timeout,
            record=config.record_exchanges, identity=identity_of(config),
            proxies=ProxyRules.resolve(config.proxy, config.no_proxy, environ),
            verify=tls_verification(config.check_certificate, config.ca_certificate, environ))
        self._session = self._transport.session  # owns the connection pools
        self._gate = gate or PolitenessGate(config.delay, config.per_host, clock=clock, sleep=sleep)
        self._robots = RobotsCache(self._load_robots, ttl=config.robots_ttl, clock=clock)
        # Shared robots.txt answers (a crawl of many workers): get(origin),
        # claim(origin) -> bool, put(origin, record); see _robots_denial.
        self._robots_store = robots_store
        self._local = _ThreadState()

    def fetch(self, url: str, *, reserved: bool = False, resume: Continuation | None = None,
              speculative: bool = False, ask: Ask | None = None) -> FetchResult:
        """Fetch ``url``; never raises for network, HTTP or robots failures.

        Failures are in ``error`` as "kind: detail", kind one of robots,
        timeout, connection, redirect, too-large, http, invalid, blocked
        (the host resolves to an address that is not allowed), garbage
        (binary data labelled as HTML) and refused (an ``Ask``'s sink
        refused the body). ``status``, ``final_url`` and
        ``headers`` describe the last response received (a redirect
        response when following it was refused); ``attempts`` counts the
        requests made for ``final_url``. ``exchanges`` (when recording) holds
        one Exchange per response received, redirect hops included, in order.

        After ``cancel_waiting()``, a fetch that had not sent its request
        yet (or was waiting to retry) comes back ``cancelled``, with nothing
        else in it: the caller should treat the URL as never handed out.

        ``reserved=True`` is how a scheduler calls it: the caller already
        holds a request slot on the host of ``url`` (or of ``resume.url``),
        taken with the gate's ``try_start``, and the fetch never waits.
        Where it would have to (another request to a host that is not ready:
        a redirect hop, the page after its robots.txt, a retry after its
        backoff) it stops and comes back ``pending``: a Continuation saying
        where it goes on and not before when; call ``fetch(url,
        reserved=True, resume=pending)`` once that host is ready again.

        ``speculative=True`` (with ``reserved``): the URL is not queued yet,
        so a redirect it meets is not followed, nor is its target checked
        (``redirect_check``, which marks targets seen): it comes back
        pending at the target, to be checked and followed if the URL is
        queued after all.

        ``ask``: a conditional GET (a 304 comes back as status 304, no
        body, no error) and documents that are not HTML (a sitemap), kept
        or handed to a sink as they arrive; pass it again with ``resume``.
        """
        started = time.perf_counter()
        self._local.ask = ask
        try:
            result = self._fetch_once(url, reserved, resume, speculative)
        finally:
            self._local.ask = None
            if ask is not None:
                self._local.poured = False
        elapsed = (resume.elapsed_ms if resume else 0.0) + (time.perf_counter() - started) * 1000
        if result.pending is not None:   # the time spent so far goes on with it
            return replace(result, pending=replace(result.pending, elapsed_ms=elapsed))
        return replace(result, elapsed_ms=elapsed)

    def _fetch_once(self, url: str, reserved: bool, resume: Continuation | None,
                    speculative: bool) -> FetchResult:
        """fetch() but for the time: the redirect chain, with this call's slots."""
        resume_host = host_key(resume.url) if resume else None
        slots = _Slots(reserved=(resume_host or _host_or_none(url)) if reserved else None)
        self._local.slots = slots if reserved else None
        try:
            hop, redirects, refusal, exchanges = self._follow(url, resume, speculative)
        except Cancelled:
            return FetchResult(url=url, final_url="", cancelled=True,
                               error="cancelled: the crawl stopped before the request was sent")
        except _NotNow as wait:
            return FetchResult(url=url, final_url="", pending=wait.continuation)
        finally:
            self._local.slots = None
            if slots.reserved is not None:   # the reservation was not needed after all
                self._gate.release(slots.reserved)
        return replace(hop.result, url=url, redirects=redirects, attempts=hop.attempts,
                       error=refusal or hop.result.error, exchanges=exchanges)

    @property
    def gate(self) -> PolitenessGate:
        """The politeness state this Fetcher obeys (a scheduler reads it too)."""
        return self._gate

    def sitemaps(self, url: str) -> list[str]:
        """The sitemap URLs that ``url``'s origin's robots.txt lists
        (``Sitemap:`` lines, resolved against it, each once, in order).

        Fetches that robots.txt if it is not cached yet; [] without
        fetching when robots.txt is not obeyed or the URL is bad.
        """
        if not self._config.obey_robots or _invalid_reason(url):
            return []
        origin = origin_of(url)
        base = robots_url(origin)
        found = (_resolve(base, line) for line in self._robots.rules(origin).sitemaps)
        return list(dict.fromkeys(found))

    def robots_delay(self, url: str) -> float | None:
        """Crawl-delay in seconds for ``url``'s origin, None if none.

        Fetches that origin's robots.txt if it is not cached yet; None
        without fetching when robots.txt is not obeyed or the URL is bad.
        """
        if not self._config.obey_robots or _invalid_reason(url):
            return None
        return self._robots.rules(origin_of(url)).crawl_delay

    def cancel_waiting(self) -> None:
        """Stop now: fetches waiting for their host (or for a retry) give up.
        Requests already sent finish within ``timeout``."""
        self._gate.cancel()

    def close(self) -> None:
        """Close pooled connections. The Fetcher must not be used afterwards."""
        self._transport.close()

    def __enter__(self) -> Fetcher:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- one fetch: the redirect chain ------------------------------------

    def _follow(self, url: str, resume: Continuation | None = None, speculative: bool = False
                ) -> tuple[_Hop, tuple[str, ...], str, tuple[Exchange, ...]]:
        """The last hop, the URLs visited before it, why its redirect was
        refused ("" when it was not a redirect), and the exchanges recorded.
        Raises _NotNow (scheduled fetches) with where to go on."""
        if resume is None:
            if reason := _invalid_reason(url):
                return _Hop(FetchResult(url=url, final_url="", error=f"invalid: {reason}")), (), "", ()
            current, visited, exchanges = (urldefrag(url).url if "#" in url else url), [], []
            last, attempt = None, 1
        else:
            current, visited, exchanges = resume.url, list(resume.visited), list(resume.exchanges)
            last, attempt = resume.last_hop, resume.attempts
            if resume.unchecked and (refusal := self._refuse_redirect(visited[-1], current,
                                                                      visited[:-1])):
                return last, tuple(visited[:-1]), refusal, tuple(exchanges)
        while True:
            try:
                if denial := self._robots_denial(current):
                    if last is None:
                        return _Hop(FetchResult(url=url, final_url="", error=denial)), (), "", ()
                    return last, tuple(visited[:-1]), f"{denial} {current}", tuple(exchanges)
                hop = self._retrying(current, self._request, attempt)
            except _NotNow as wait:
                raise _NotNow(continuation=Continuation(
                    url=current, not_before=wait.not_before, visited=tuple(visited),
                    exchanges=tuple(exchanges), attempts=wait.attempts or attempt,
                    last_hop=last)) from None
            attempt = 1
            if hop.exchange is not None:
                exchanges.append(hop.exchange)
            if hop.location is None:
                return hop, tuple(visited), "", tuple(exchanges)
            target = _resolve(current, hop.location)
            if speculative and not (refusal := self._plain_refusal(current, target, visited)):
                raise _NotNow(continuation=Continuation(
                    url=target, visited=(*visited, current), exchanges=tuple(exchanges),
                    last_hop=hop, unchecked=True))
            if refusal := self._refuse_redirect(current, target, visited):
                return hop, tuple(visited), refusal, tuple(exchanges)
            visited.append(current)
            current, last = target, hop

    def _refuse_redirect(self, current: str, target: str, visited: list[str]) -> str:
        """Why the redirect from ``current`` to ``target`` is not followed, or ""
        (robots.txt is asked at the top of the next hop)."""
        if refusal := self._plain_refusal(current, target, visited):
            return refusal
        ask = self._local.ask
        checked = ask is None or ask.check_redirects
        if self._redirect_check and checked and (reason := self._redirect_check(target)):
            return f"redirect: {reason} {target}"
        return ""

    def _plain_refusal(self, current: str, target: str, visited: list[str]) -> str:
        """The reasons to refuse a redirect that need no crawl state (and mark nothing)."""
        if _invalid_reason(target):
            return f"redirect: invalid location {target}"
        if target == current or target in visited:
            return "redirect: loop"
        if len(visited) + 1 > self._config.max_redirects:
            return f"redirect: too many redirects (>{self._config.max_redirects})"
        return ""

    def _robots_denial(self, url: str) -> str:
        """The robots error for ``url``, or "" if it may be fetched."""
        if not self._config.obey_robots:
            return ""
        origin = origin_of(url)
        slots = self._local.slots
        if slots is not None and not self._robots.known(origin):
            if slots.reserved != host_key(url):
                # Loading it is a request to that host, which this fetch holds
                # no slot on: go on once the scheduler reserves one.
                raise _NotNow()
            if self._robots.loading_elsewhere(origin) or self._loading_in_another_worker(origin):
                # Another fetch is loading it (waiting out a retry, say): waiting
                # for it here, on this host's slot, could hold up that very
                # retry. Give the slot back and ask again a little later.
                raise _NotNow(not_before=self._gate.clock() + ROBOTS_RECHECK_SECONDS)
        rules = self._robots.rules(origin)
        if rules.allows(url):
            return ""
        if rules.source == "blocked":
            return rules.reason
        if rules.source == "unreachable":
            if _kind(rules.reason) in _NETWORK_KINDS:
                # The host could not be reached at all: the page's error is
                # the connection's (RFC 9309 §2.3.1.4 still forbids the page).
                return rules.reason
            # Say why: "disallowed" would hide a failing server.
            return f"robots: robots.txt unreachable ({rules.reason})"
        return "robots: disallowed by robots.txt"

    # -- one URL: a request and its retries ----------------------------------

    def _retrying(self, url: str, request: Callable[[str], _Hop], attempt: int = 1) -> _Hop:
        """``request(url)``, repeated while it fails transiently and retries are
        left; ``attempt`` is the number of the first request (a resumed retry)."""
        hop = request(url)
        while (attempt <= self._config.retries and is_transient(hop.result.error, hop.result.status)
               and not self._local.poured):
            asked = retry_after(hop.result.status, hop.result.headers, time.time())
            if asked is not None and asked > self._config.max_retry_after:
                over = f" (Retry-After {asked:.0f} s over the {self._config.max_retry_after:g} s cap)"
                return replace(hop, result=replace(hop.result, error=hop.result.error + over),
                               location=None, attempts=attempt)
            self._pause(url, attempt, asked)
            hop, attempt = request(url), attempt + 1
        return hop if attempt == 1 else replace(hop, attempts=attempt)

    def _pause(self, url: str, attempt: int, asked: float | None) -> None:
        """Wait before retry ``attempt + 1``; a scheduled fetch instead goes
        back to the scheduler with "not before" that time (_NotNow)."""
        wait = None
        if asked is None:
            wait = backoff_wait(attempt, self._config.retry_backoff, self._rng)
        else:
            # The server spoke for the whole host: hold every request to it,
            # this retry included, at the politeness gate.
            self._gate.hold_off(host_key(url), asked)
        slots = self._local.slots
        if slots is not None and not slots.may_wait:
            not_before = None if wait is None else self._gate.clock() + wait
            raise _NotNow(not_before=not_before, attempts=attempt + 1)
        if wait is not None:
            self._gate.wait(wait)

    def _take_slot(self, host: str) -> float:
        """A request slot on ``host``: the one the scheduler reserved, or the
        gate's (blocking, outside a scheduled fetch), or _NotNow. Returns
        the seconds the request is to be held before it leaves (a slot
        reserved ahead of its time: ``PolitenessGate.started``)."""
        slots = self._local.slots
        if slots is not None and slots.reserved == host:
            slots.reserved = None
            return self._gate.started(host)
        if slots is None or slots.may_wait:
            self._gate.acquire(host)
        elif not self._gate.try_start(host):
            raise _NotNow()
        return 0.0

    def _request(self, url: str) -> _Hop:
        """One politeness-gated GET of ``url``, its body read if it is HTML."""
        host = host_key(url)
        hold = self._take_slot(host)
        try:
            deadline = time.monotonic() + hold + self._config.timeout
            sent, seen, heard = self._gate.clock() + hold, None, None
            try:
                ask = self._local.ask
                response = self._transport.get(url, ask and ask.headers_for(url), hold=hold)
                heard = self._gate.clock() - heard_ago(response)
                seen = Observation(self._gate.clock() - sent, response.status)
            except BlockedAddress as exc:
                return _Hop(FetchResult(url=url, final_url=url, error=str(exc)))
            except (requests.RequestException, urllib3.exceptions.HTTPError, OSError) as exc:
                error = self._describe(exc)
                seen = Observation(self._gate.clock() - sent, error_kind=_kind(error))
                return _Hop(FetchResult(url=url, final_url=url, error=error))
            finally:
                # the next request's interval counts from the answer too, as the policy sets it
                self._gate.answered(host, seen, heard)
            tap = self._tap(response)
            try:
                hop = self._read(url, response, deadline, tap)
            except (urllib3.exceptions.HTTPError, http.client.HTTPException, OSError) as exc:
                hop = _Hop(_response_result(url, response, error=self._describe(exc)))
            except _Failure as failure:
                hop = _Hop(_response_result(url, response, error=failure.error))
            finally:
                _close(response)
            return hop if tap is None else replace(hop, exchange=tap.exchange(url, response, hop.result))
        finally:
            self._gate.release(host)

    def _tap(self, response: urllib3.BaseHTTPResponse) -> _Tap | None:
        """A tap on ``response``'s body if exchanges are recorded, else None
        (nor for a body handed to a sink: kept for a record, it would be
        held whole after all)."""
        ask = self._local.ask
        if not self._config.record_exchanges or (ask is not None and ask.sink is not None):
            return None
        sent = self._transport.sent(response)
        return None if sent is None else _Tap(sent, response)

    def _read(self, url: str, response: urllib3.BaseHTTPResponse, deadline: float,
              tap: _Tap | None = None) -> _Hop:
        status = response.status
        headers = _header_dict(response)
        declared = _media_type(headers.get("content-type", ""))
        if status in REDIRECT_STATUSES and "location" in headers:
            self._drain(response, headers, deadline, tap)
            result = FetchResult(url=url, final_url=url, status=status, headers=headers,
                                 content_type=declared)
            return _Hop(result, _header_text(headers["location"]))
        if status >= 400:
            self._drain(response, headers, deadline, tap)
            return _Hop(FetchResult(url=url, final_url=url, status=status, headers=headers,
                                    content_type=declared, error=f"http: {status} {_reason(response)}"))
        ask = self._local.ask
        if ask is not None and ask.document_types and (not declared or declared in ask.document_types):
            limit = ask.max_bytes or self._config.max_bytes
            if ask.sink is None:
                body = self._body(response, deadline, False, tap, limit)
            else:
                body = self._pour(response, deadline, tap, limit, ask.sink)
            return _Hop(FetchResult(url=url, final_url=url, status=status, headers=headers,
                                    content_type=declared, body=body))
        if not declared or declared in self._html_types:
            body = self._body(response, deadline, not declared, tap, self._config.max_bytes)
            if body is not None:
                page = _page(url, status, headers, declared or "text/html", body)
                return _Hop(replace(page, robots_tags=tuple(response.headers.getlist("x-robots-tag"))))
        # Not HTML (by its label, or unlabelled and not looking like it): a
        # labelled body is never downloaded.
        return _Hop(FetchResult(url=url, final_url=url, status=status, headers=headers,
                                content_type=declared))

    def _body(self, response: urllib3.BaseHTTPResponse, deadline: float, sniff: bool,
              tap: _Tap | None, limit: int) -> bytes | None:
        """The decoded body, or None if ``sniff`` finds it is not HTML."""
        chunks: list[bytes] = []
        size = 0
        for chunk in self._stream(response, deadline, tap):
            size += len(chunk)
            if size > limit:
                raise _Failure(f"too-large: body over {limit} bytes")
            chunks.append(chunk)
            if sniff and size >= SNIFF_BYTES:
                if not looks_like_html(b"".join(chunks)):
                    return None
                sniff = False
        body = b"".join(chunks)
        return None if sniff and not looks_like_html(body) else body

    def _pour(self, response: urllib3.BaseHTTPResponse, deadline: float, tap: _Tap | None,
              limit: int, sink: Callable[[bytes], None]) -> bytes:
        """The decoded body handed to ``sink`` as it arrives; b"" (nothing kept)."""
        size = 0
        for chunk in self._stream(response, deadline, tap):
            size += len(chunk)
            if size > limit:
                raise _Failure(f"too-large: body over {limit} bytes")
            self._local.poured = True
            try:
                sink(chunk)
            except ValueError as refusal:
                raise _Failure(f"refused: {refusal}") from None
        return b""

    def _stream(self, response: urllib3.BaseHTTPResponse, deadline: float,
                tap: _Tap | None = None) -> Iterator[bytes]:
        """Decoded body chunks as they arrive, until the end or the deadline;
        the body as received goes into ``tap`` too, if there is one."""
        if tap is None:
            return self._chunks(response, deadline, decode=True)
        return tap.decoded(self._chunks(response, deadline, decode=False))

    def _chunks(self, response: urllib3.BaseHTTPResponse, deadline: float,
                decode: bool) -> Iterator[bytes]:
        """Body chunks as they arrive (content-decoded if ``decode``), until
        the end or the deadline.

        ``read1`` returns whatever one socket read brings, and each socket
        wait is cut to the time left, so a server trickling bytes cannot
        keep the worker past the deadline.
        """
        # A body sent as it is (no Content-Encoding) is complete once its
        # Content-Length has come, without one more call to find the end.
        plain = not decode or "content-encoding" not in response.headers
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise _Failure(f"timeout: read {self._config.timeout:g}s")
            _limit_socket_wait(response, min(left, self._config.timeout))
            chunk = response.read1(CHUNK_BYTES, decode_content=decode)
            if not chunk:
                return
            yield chunk
            if plain and response.length_remaining == 0:
                return

    def _drain(self, response: urllib3.BaseHTTPResponse, headers: dict[str, str],
               deadline: float, tap: _Tap | None = None) -> None:
        """Read a small unwanted body to the end, so its connection is reused."""
        length = headers.get("content-length", "")
        if not length.isdigit() or int(length) > DRAIN_BYTES:
            return  # closing the response drops the connection instead
        try:
            for _ in self._stream(response, deadline, tap):
                pass
        except (urllib3.exceptions.HTTPError, http.client.HTTPException, OSError, _Failure):
            pass  # the connection is dropped on close; the response is already known

    def _describe(self, exc: BaseException) -> str:
        """The error value for a network exception: "kind: detail"."""
        timeout = self._config.timeout
        # A GET sent straight to the pool reports a failed connect inside
        # urllib3's MaxRetryError, which requests' adapter would have turned
        # into ConnectTimeout or ConnectionError; a GET whose URL requests
        # prepared raises requests' own exceptions.
        reason = exc.reason if isinstance(exc, MaxRetryError) and exc.reason else exc
        if isinstance(reason, urllib3.exceptions.ProxyError) or isinstance(
                exc, requests.exceptions.ProxyError):
            return f"connection: {_proxy_cause(exc)}"
        if isinstance(exc, requests.ConnectTimeout) or (
                isinstance(reason, ConnectTimeoutError) and not isinstance(reason, NewConnectionError)):
            return f"timeout: connect {timeout:g}s"
        if isinstance(reason, NewConnectionError):
            return f"connection: {_root_cause(exc)}"
        if isinstance(exc, (requests.Timeout, urllib3.exceptions.TimeoutError, socket.timeout)):
            return f"timeout: read {timeout:g}s"
        if isinstance(exc, (requests.exceptions.InvalidURL, requests.exceptions.InvalidSchema,
                            requests.exceptions.MissingSchema, urllib3.exceptions.LocationValueError)):
            return f"invalid: {exc}"
        return f"connection: {_root_cause(exc)}"

    # -- robots.txt -------------------------------------------------------

    def _loading_in_another_worker(self, origin: str) -> bool:
        """In a shared crawl, robots.txt is asked once per origin for all
        workers: unless the answer is stored, one worker claims the load and
        the others wait for it (a claim lapses if its worker dies)."""
        store = self._robots_store
        return store is not None and self._stored_robots(origin) is None and not store.claim(origin)

    def _stored_robots(self, origin: str) -> dict | None:
        """The shared answer for origin, unless it is older than robots_ttl
        (wall-clock time: the workers share no other clock)."""
        record = self._robots_store.get(origin)
        if record is None or time.time() - record.get("fetched_at", 0.0) >= self._config.robots_ttl:
            return None
        return record

    def _load_robots(self, origin: str) -> RobotsRules:
        """Fetch and interpret ``origin``'s robots.txt (RFC 9309 §2.3), or
        take the answer another worker of a shared crawl stored."""
        store = self._robots_store
        record = self._stored_robots(origin) if store is not None else None
        if record is not None:
            rules = RobotsRules.from_record(record, self._token)
        else:
            rules = self._robots_rules(robots_url(origin))
            if store is not None:
                store.put(origin, {**rules.record(), "fetched_at": time.time()})
        if rules.crawl_delay is not None:
            self._gate.raise_interval(host_key(origin), rules.crawl_delay)
        return rules

    def _robots_rules(self, url: str) -> RobotsRules:
        """In a scheduled fetch the first request uses the reservation; its
        retries and redirects wait at the gate in this thread. That is rare
        (a failing robots.txt, once per origin and crawl) and bounded by
        --retries, while scheduling them would need the load's state kept
        across fetches."""
        slots = self._local.slots
        if slots is not None:
            slots.may_wait = True
        try:
            return self._robots_rules_loaded(url)
        finally:
            if slots is not None:
                slots.may_wait = False

    def _robots_rules_loaded(self, url: str) -> RobotsRules:
        for redirects in range(MAX_ROBOTS_REDIRECTS + 1):
            hop = self._retrying(url, self._robots_request)
            kind = _kind(hop.result.error)
            if kind == "blocked" and redirects == 0:
                return RobotsRules.blocked(hop.result.error)
            if kind not in ("", "http"):
                # No usable answer; a robots.txt redirect into a blocked
                # address lands here too, and counts against this origin
                # only as an unreachable robots.txt.
                return RobotsRules.unreachable(hop.result.error)
            if hop.location is None:
                return rules_for_response(hop.result.status, hop.result.body, self._token)
            url = _resolve(url, hop.location)
            if _invalid_reason(url):
                return RobotsRules.unavailable()
        return RobotsRules.unavailable()  # RFC 9309 §2.3.1.2: too many redirects

    def _robots_request(self, url: str) -> _Hop:
        """One politeness-gated GET of a robots.txt: its status, the first
        500 KiB of a 2xx body, and where a redirect points; or the error that
        kept an answer from coming."""
        host = host_key(url)
        hold = self._take_slot(host)
        sent, seen, heard = self._gate.clock() + hold, None, None
        try:
            deadline = time.monotonic() + hold + self._config.timeout
            try:
                response = self._transport.get(url, hold=hold)
                heard = self._gate.clock() - heard_ago(response)
                seen = Observation(self._gate.clock() - sent, response.status)
                try:
                    return self._robots_answer(url, response, deadline)
                finally:
                    _close(response)
            except BlockedAddress as exc:
                return _Hop(FetchResult(url=url, final_url=url, error=str(exc)))
            except (requests.RequestException, urllib3.exceptions.HTTPError,
                    http.client.HTTPException, OSError) as exc:
                error = self._describe(exc)
                seen = seen or Observation(self._gate.clock() - sent, error_kind=_kind(error))
                return _Hop(FetchResult(url=url, final_url=url, error=error))
            except _Failure as failure:
                return _Hop(FetchResult(url=url, final_url=url, error=failure.error))
        finally:
            self._gate.answered(host, seen, heard)
            self._gate.release(host)

    def _robots_answer(self, url: str, response: urllib3.BaseHTTPResponse, deadline: float) -> _Hop:
        result = _response_result(url, response)
        status = response.status
        if 200 <= status < 300:
            return _Hop(replace(result, body=self._robots_body(response, deadline)))
        self._drain(response, result.headers, deadline)
        location = result.headers.get("location") if status in REDIRECT_STATUSES else None
        if location:
            return _Hop(result, _header_text(location))
        if status >= 400:  # an error value, so that 429 and 5xx are retried
            return _Hop(replace(result, error=f"http: {status} {_reason(response)}"))
        return _Hop(result)

    def _robots_body(self, response: urllib3.BaseHTTPResponse, deadline: float) -> bytes:
        body = bytearray()
        for chunk in self._stream(response, deadline):
            body += chunk
            if len(body) > MAX_ROBOTS_BYTES:
                break  # the rest is never parsed, so never read
        return bytes(body)


class _Tap:
    """The body of one response as it came over the wire, collected while it
    is read, and the Exchange it makes. Not thread-safe: one per response.

    Memory: the chunks are kept until the Exchange is made; without a
    content coding they are the very chunks the body is joined from.
    """

    __slots__ = ("sent", "chunks", "coding", "decoder", "complete")

    def __init__(self, sent: SentRequest, response: urllib3.BaseHTTPResponse) -> None:
        self.sent = sent
        self.chunks: list[bytes] = []
        self.coding = response.headers.get("content-encoding", "")
        self.decoder: urllib3.response.ContentDecoder | None = None
        self.complete = False  # the body was read to its end

    def decoded(self, wire: Iterator[bytes]) -> Iterator[bytes]:
        """The decoded chunks of the ``wire`` chunks, which are kept.

        At most CHUNK_BYTES come out of one decoder call, so a compression
        bomb is stopped by the caller's size limit before it is inflated.
        The decoder is made here, while the body is read: a Content-Encoding
        urllib3 refuses (a chain of six codings) then fails as a read does,
        into an error value, not out of the fetch.
        """
        decoder = self.decoder = _content_decoder(self.coding)
        for raw in wire:
            self.chunks.append(raw)
            if decoder is None:
                yield raw
                continue
            chunk = _decompress(decoder, raw)
            while chunk:
                yield chunk
                chunk = _decompress(decoder, b"") if decoder.has_unconsumed_tail else b""
        if decoder is not None and (rest := _decompress(decoder, b"", final=True)):
            yield rest
        self.complete = True

    def exchange(self, url: str, response: urllib3.BaseHTTPResponse,
                 result: FetchResult) -> Exchange:
        """The Exchange for ``response``, whose outcome is ``result``."""
        if self.decoder is None and self.complete and result.body:
            payload = result.body  # the same bytes: joined from the same chunks
        else:
            payload = b"".join(self.chunks)
        truncated = "" if self.complete else _truncation(result.error)
        return Exchange(url=url, request=self.sent,
                        version=_HTTP_VERSIONS.get(response.version, "HTTP/1.1"),
                        status=response.status, reason=response.reason or "",
                        headers=_raw_headers(response), payload=payload, truncated=truncated)


# WARC-Truncated reasons for a body cut short by an error of this kind.
_TRUNCATIONS = {"too-large": "length", "timeout": "time", "connection": "disconnect"}


def _truncation(error: str) -> str:
    """Why a body that was not read to its end stopped, as WARC-Truncated says it."""
    if error.endswith("bad content encoding"):
        return "unspecified"  # the connection was fine; the coding was not
    return _TRUNCATIONS.get(_kind(error), "unspecified")
_HTTP_VERSIONS = {9: "HTTP/0.9", 10: "HTTP/1.0", 11: "HTTP/1.1"}


def _content_decoder(content_encoding: str) -> urllib3.response.ContentDecoder | None:
    """The decoder urllib3 would use for this Content-Encoding (same rule as
    its ``_init_decoder``), or None when urllib3 would not decode."""
    mode = content_encoding.lower()
    known = urllib3.response.BaseHTTPResponse.CONTENT_DECODERS
    if mode in known or ("," in mode and any(part.strip() in known for part in mode.split(","))):
        return urllib3.response.MultiDecoder(mode)
    return None


def _decompress(decoder: urllib3.response.ContentDecoder, data: bytes,
                final: bool = False) -> bytes:
    """Up to CHUNK_BYTES decoded from ``data`` (all that is left if ``final``);
    a broken coding raises urllib3's DecodeError, as urllib3's reads do."""
    try:
        if final:
            return decoder.decompress(b"") + decoder.flush()
        return decoder.decompress(data, max_length=CHUNK_BYTES)
    except urllib3.response.BaseHTTPResponse.DECODER_ERROR_CLASSES as exc:
        raise urllib3.exceptions.DecodeError("bad content encoding", exc) from exc


def _raw_headers(response: urllib3.BaseHTTPResponse) -> tuple[tuple[str, str], ...]:
    """Response headers as received: names as sent, order and repeats kept.
    urllib3's header dict groups repeats, so read http.client's message."""
    original = getattr(response, "_original_response", None)
    message = getattr(original, "msg", None)
    items = message.items() if message is not None else response.headers.items()
    return tuple(items)


def _response_result(url: str, response: urllib3.BaseHTTPResponse, error: str = "") -> FetchResult:
    headers = _header_dict(response)
    return FetchResult(
        url=url,
        final_url=url,
        status=response.status,
        headers=headers,
        content_type=_media_type(headers.get("content-type", "")),
        error=error,
    )


def _header_dict(response: urllib3.BaseHTTPResponse) -> dict[str, str]:
    """Response headers with lower-case names; a repeated header's values
    joined with ", " (as requests shows them)."""
    return {name.lower(): value for name, value in response.headers.items()}


def _close(response: urllib3.BaseHTTPResponse) -> None:
    """What requests' Response.close does: drop the connection unless the body
    was read to the end (then it is back in the pool already), and give the
    pool its slot back."""
    response.close()
    response.release_conn()


def _media_type(content_type: str) -> str:
    return content_type.partition(";")[0].strip().lower()


def _reason(response: urllib3.BaseHTTPResponse) -> str:
    if response.reason:
        return response.reason
    try:
        return HTTPStatus(response.status).phrase
    except ValueError:
        return "error"


def _header_text(value: str) -> str:
    """A header value as the server meant it: http.client decodes as Latin-1,
    but servers send non-ASCII Locations as UTF-8."""
    try:
        return value.encode("latin-1").decode("utf-8")
    except UnicodeError:
        return value


def _resolve(current: str, location: str) -> str:
    return urldefrag(urljoin(current, location.strip())).url


def _invalid_reason(url: str) -> str:
    """Why ``url`` cannot be fetched, or "" if it can be tried."""
    try:
        scheme, host, port = url_authority(url)
    except ValueError as exc:
        return str(exc)
    if scheme not in ("http", "https"):
        return f"not an http(s) URL: {url!r}"
    if not host:
        return f"no host in {url!r}"
    if port == 0:
        # A valid URL (the URL Standard keeps ":0"), but no server listens
        # there, browsers refuse it (Fetch's bad ports), and urllib3 would
        # drop it and ask port 80 instead.
        return f"port 0 cannot be fetched: {url!r}"
    return ""


def _page(url: str, status: int, headers: dict[str, str], content_type: str,
          body: bytes) -> FetchResult:
    """The result for an HTML body: decoded, unless it is binary garbage; then
    an error, and neither the body nor any text is kept."""
    header = headers.get("content-type", "")
    if not binary_bytes(body, header):
        text, encoding = decode_html(body, header)
        if not binary_text(text):
            return FetchResult(url=url, final_url=url, status=status, headers=headers,
                               content_type=content_type, body=body, text=text, encoding=encoding)
    return FetchResult(url=url, final_url=url, status=status, headers=headers,
                       content_type=content_type,
                       error=f"garbage: binary content served as {content_type}")


def _kind(error: str) -> str:
    """The kind of an error value "kind: detail" ("" for no error)."""
    return error.partition(":")[0]


def _limit_socket_wait(response: urllib3.BaseHTTPResponse, seconds: float) -> None:
    connection = response.connection
    sock = getattr(connection, "sock", None)
    if sock is not None:
        sock.settimeout(max(seconds, 0.001))


# Nearest match first: RemoteDisconnected is both a ConnectionResetError and
# a BadStatusLine, but means the server hung up before answering.
_CAUSES: tuple[tuple[type[BaseException], str], ...] = (
    (ConnectionRefusedError, "refused"),
    (http.client.RemoteDisconnected, "closed without a response"),
    (ConnectionResetError, "reset by peer"),
    (socket.gaierror, "host name not resolved"),
    (http.client.IncompleteRead, "closed before the body was complete"),
    (urllib3.exceptions.DecodeError, "bad content encoding"),
    (urllib3.exceptions.SSLError, "TLS failure"),
)


def _root_cause(exc: BaseException) -> str:
    """A short name for what went wrong under the wrappers of requests and urllib3."""
    for cause in _causes(exc):
        if isinstance(cause, ssl.SSLCertVerificationError):
            # OpenSSL's reason: "self-signed certificate", "unable to get local
            # issuer certificate", "Hostname mismatch, ..."
            reason = cause.verify_message or cause.reason or "unknown reason"
            return f"certificate verify failed: {reason}"
    for cause in _causes(exc):
        for kind, name in _CAUSES:
            if isinstance(cause, kind):
                return name
        if isinstance(cause, http.client.BadStatusLine):
            return f"not an HTTP response (status line {_status_line(cause)!r})"
    return str(exc)[:200] or type(exc).__name__


def _status_line(exc: http.client.BadStatusLine) -> str:
    """The first line the server sent, as http.client kept it, cut short."""
    line = exc.line if isinstance(exc.line, str) else repr(exc.line)
    return line.strip()[:80]


def _proxy_cause(exc: BaseException) -> str:
    """What went wrong with the proxy, in words that never hold its URL (nor
    the password in it): it could not be reached, or it refused the tunnel."""
    for cause in _causes(exc):
        text = str(cause) if type(cause) is OSError else ""
        if text.startswith("Tunnel connection failed: "):
            return f"proxy refused the CONNECT tunnel ({text.removeprefix('Tunnel connection failed: ')})"
    for cause in _causes(exc):
        for kind, name in _CAUSES:
            if isinstance(cause, kind):
                return f"proxy unreachable ({name})"
    if any(isinstance(cause, (TimeoutError, socket.timeout)) for cause in _causes(exc)):
        return "proxy unreachable (timed out)"
    return "proxy failed"


def _causes(exc: BaseException) -> Iterator[BaseException]:
    """``exc`` and every exception it wraps, nearest first."""
    pending, seen = [exc], set()
    while pending:
        current = pending.pop(0)
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        wrapped = [current.__cause__, current.__context__, getattr(current, "reason", None),
                   *current.args]
        pending.extend(item for item in wrapped if isinstance(item, BaseException))

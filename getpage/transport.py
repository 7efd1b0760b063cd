"""The HTTP transport: GETs over a ``requests.Session`` whose connections go
only where the ``AddressGuard`` allows.

Owns the session's settings (no proxies from requests' own reading of the
environment, no cookies of its own: a crawl's cookies are its ``identity``'s,
headers, TLS verification, connection pools), the one place where a TCP
connection is opened (``_GuardedConnection._new_conn``), and ``Transport.get``,
the one place a request is sent.

The address guard: ``_new_conn`` asks the guard for the host's vetted
addresses and connects to one of them, so the address that was checked is
the address connected to. Everything above the socket is urllib3's own code
and keeps working on the host name: the Host header, TLS SNI and the
certificate's host name check. A refused host surfaces as
``BlockedAddress``, which neither urllib3 nor requests catches or wraps.

Why most GETs bypass requests' request model: the session owns the
connection pools (its mounted guarded adapter), but a ``Session.get`` costs
about twice the CPU of the urllib3 round trip it wraps (merging settings,
PreparedRequest, hooks, CaseInsensitiveDict, a Response, redirect
bookkeeping even with redirects off), and a crawler makes one GET per page.
So ``Transport.get`` sends a URL that is already in wire form (ASCII, no
user info, nothing requests would re-quote or normalise: every URL that
URL_Filter produces) straight through the adapter's urllib3 pool, with the
very arguments requests' adapter would pass: the session's headers, its TLS
settings, the adapter's retry policy, no redirects, the body left unread.
Any other URL (non-ASCII host or path, credentials, spaces, dot segments,
escapes requests would rewrite ...) is prepared by the session
(``Session.prepare_request``) and sent by the adapter, so requests' URL
preparation applies to it unchanged. Both ways use the same pools and
return the same thing: urllib3's streaming response. Neither goes through
``Session.send``, which reads the whole body of a redirect even when
redirects are not followed; the Fetcher follows redirects itself and reads
at most a small body of one.

Proxies (``proxies``, getpage.proxies): an origin that goes through a proxy
gets its pool from a urllib3 ProxyManager for that proxy, as requests'
adapter makes it (``proxy_manager_for``): http:// URLs go in absolute form
over connections to the proxy (one pool for all of them), https:// URLs
through a CONNECT tunnel per target host, TLS and its certificate check
end to end. Which proxy an origin uses is decided once, with its pool key,
so a request pays nothing for it. The address guard does not vet the
proxy (the user named it; it is often on the LAN or on loopback), and the
proxy, not this machine, resolves the target's name: through a proxy the
guard can only refuse URLs whose host is an IP address it does not allow.

Kept-alive connections the other side has closed: a server or proxy may
close an idle connection at any moment (a keep-alive timeout; tinyproxy
closes each one after its response without saying ``Connection: close``).
urllib3 drops a pooled connection whose close has already arrived, but one
taken in the instant before gets the request sent into a dead socket, and
the answer is a reset or nothing. As Go's net/http, curl and browsers do,
such a request is sent once more, on a new connection, when it is
idempotent (every GET), the connection had already carried a response, and
not one byte of this request's answer arrived (``_FirstByteResponse``
waits for that byte before parsing). It is not one of the Fetcher's
``--retries``: nothing was answered, and the server most likely never saw
the request. A new connection that fails the same way is an error as
before, and so is every failure after the answer began.

Recording (``record=True``, for WARC output): the connections remember the
request head as urllib3 and http.client write it (``putrequest`` and
``putheader``, so the Host and any header the libraries add are included),
when it was sent and the address connected to; ``Transport.sent(response)``
hands it over as a ``SentRequest``. Without recording the connection classes
are the plain guarded ones, so an ordinary crawl pays nothing for this.
"""
from __future__ import annotations

import http.client
import http.cookiejar
import os
import re
import socket
import threading
import time
from datetime import datetime, timezone
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import requests
import urllib3.connection
import urllib3.connectionpool
from requests.adapters import HTTPAdapter
from urllib3.connectionpool import port_by_scheme
from urllib3.exceptions import ConnectTimeoutError, NameResolutionError, NewConnectionError
from urllib3.util import SKIP_HEADER
from urllib3.util.connection import create_connection

from .addresses import AddressGuard, BlockedAddress, url_authority
from .proxies import Proxy, ProxyRules
from .result import SentRequest

if TYPE_CHECKING:
    from .identity import Identity

ACCEPT = "text/html,application/xhtml+xml;q=0.9,*/*;q=0.5"
# How many (scheme, host, port, TLS settings) a Transport remembers the
# connection pool key of; past that it forgets them all and starts again.
MAX_POOL_KEYS = 512
# Connections kept to one proxy: every fetch thread (256 at most) may have a
# request in flight through it, and past the pool's size urllib3 would drop
# each returned connection (and log a warning for each).
PROXY_CONNECTIONS = 256
# Methods whose request may be sent twice with the effect of once (RFC 9110
# §9.2.2): only these are sent again after a stale kept-alive connection.
IDEMPOTENT_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE"})
# Where a CA bundle may come from besides --ca-certificate, in this order:
# requests' own two variables, then OpenSSL's (curl reads it, and so does
# wget through OpenSSL).
# A path and query that requests and urllib3 send as they are: RFC 3986
# unreserved characters and sub-delims, ":", "@", "/", "?", and escapes in
# upper case (both libraries upper-case the hex digits) ...
_WIRE_PATH = re.compile(r"(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/?]|%[0-9A-F]{2})*").fullmatch
# ... except escapes of unreserved characters, which requests decodes.
_UNRESERVED_ESCAPE = re.compile(r"%(?:3[0-9]|[46][1-9A-F]|[57][0-9A]|2[DE]|5F|7E)").search
# "." and ".." segments, which requests removes.
_DOT_SEGMENT = re.compile(r"/\.\.?(?:/|$)").search
# Host names requests leaves as they are (lower-case ASCII, not starting
# with "." or "*"), and IPv6 literals.
_WIRE_HOST = re.compile(r"[a-z0-9_-][a-z0-9._-]*|[0-9a-f:.]*:[0-9a-f:.]*").fullmatch


class Transport:
    """Sends GETs through one session's guarded connection pools.

    Thread-safe, as the session's pools are. ``session`` is the
    ``requests.Session`` that owns the pools; its ``verify`` and ``cert``
    are read on every request, its headers once, here. ``record``: keep
    each request head for ``sent``. ``proxies``: which origins go through
    which proxy (default: none). ``verify``: the session's TLS verification
    (True: certifi's CAs, a path: that CA bundle, False: none).
    """

    def __init__(self, user_agent: str, per_host: int, guard: AddressGuard, timeout: float,
                 *, record: bool = False, identity: Identity | None = None,
                 proxies: ProxyRules | None = None, verify: bool | str = True) -> None:
        self.session = new_session(user_agent, per_host, guard, record=record)
        self.session.verify = verify
        self._guard = guard
        self._proxies = proxies or ProxyRules.direct()
        self._identity = identity
        if identity is not None:
            self.session.headers.update(identity.everywhere)
        self._adapter: HTTPAdapter = self.session.get_adapter("http://")
        self._headers = dict(self.session.headers)
        self._timeout = (timeout, timeout)
        self._pool_timeout = urllib3.Timeout(connect=timeout, read=timeout)
        self._pool_keys: dict[tuple, _Route] = {}

    def get(self, url: str, headers: dict[str, str] | None = None,
            hold: float = 0.0) -> urllib3.BaseHTTPResponse:
        """GET ``url`` (absolute http(s), no fragment) with the session's
        headers and ``headers``; the response's body is unread. ``hold``:
        seconds from now before the request's first byte may leave (it is
        built meanwhile).

        Read the body from the response (``read1``), then ``close`` it and
        ``release_conn`` it. Raises what requests or urllib3 raise for
        network failures, and ``BlockedAddress``.

        With an ``identity``, its headers, cookies and credentials go along
        (see ``identity``); without one, nothing is added.
        """
        _held.until = time.monotonic() + hold if hold > 0 else None
        try:
            if self._identity is not None:
                return self._identity.get(self._send, url, headers)
            return self._send(url, headers)
        finally:
            _held.until = None

    def _send(self, url: str, headers: dict[str, str] | None = None) -> urllib3.BaseHTTPResponse:
        """One GET as ``get`` describes it, with exactly ``headers`` added."""
        target = wire_target(url)
        if target is None:
            return self._prepared_get(url, headers)
        pool, absolute = self._pool(url)
        if absolute:   # to a proxy: the request target is the whole URL
            target = _absolute_form(url, target)
        # The arguments requests' HTTPAdapter.send passes for a GET.
        sent = self._headers if headers is None else {**self._headers, **headers}
        return pool.urlopen("GET", target, body=None, headers=sent, redirect=False,
                            assert_same_host=False, preload_content=False, decode_content=False,
                            retries=self._adapter.max_retries, timeout=self._pool_timeout,
                            chunked=False)

    @staticmethod
    def sent(response: urllib3.BaseHTTPResponse) -> SentRequest | None:
        """The request head that produced ``response``, if this Transport
        records; None otherwise. Ask before the response is released (its
        connection is forgotten then)."""
        return getattr(response.connection, "sent_request", None)

    def close(self) -> None:
        """Close pooled connections. The Transport must not be used afterwards."""
        self.session.close()

    def __enter__(self) -> Transport:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _prepared_get(self, url: str, headers: dict[str, str] | None = None
                      ) -> urllib3.BaseHTTPResponse:
        """GET ``url`` as prepared by requests (IDNA host, re-quoted path,
        credentials from the URL, the session's headers), sent by the
        adapter with the settings ``Session.get`` would give it. Not by
        ``Session.send``: even with redirects off, that reads a redirect's
        whole body (to look for the next request), however large."""
        session = self.session
        request = session.prepare_request(requests.Request("GET", url, headers=headers))
        response = self._adapter.send(request, stream=True, timeout=self._timeout,
                                      verify=session.verify, cert=session.cert,
                                      proxies=self._proxies_for(url))
        return response.raw

    def _proxies_for(self, url: str) -> dict[str, str]:
        """The ``proxies`` argument of requests' adapter for ``url`` (rare
        URLs only: not remembered)."""
        scheme, host, _ = url_authority(url)
        proxy = self._proxies.for_origin(scheme, host)
        if proxy is None:
            return {}
        if refusal := self._guard.literal_refusal(host):
            raise BlockedAddress(refusal)
        return {scheme: proxy.url_with_credentials}

    def _pool(self, url: str) -> tuple[urllib3.connectionpool.HTTPConnectionPool, bool]:
        """The pool ``Session.get`` would use for this URL (with this
        Transport's proxies), configured the way it would be; and whether
        the request target must be the absolute URL (a proxy's pool)."""
        verify, cert = self.session.verify, self.session.cert
        scheme, host, port = url_authority(url)
        route = self._pool_key((scheme, host, port, verify, cert))
        if route.refusal:
            raise BlockedAddress(route.refusal)
        # A copy: the pool manager consumes the context when it makes a pool.
        pool = route.manager.connection_from_pool_key(route.key, request_context=dict(route.context))
        if scheme == "https":
            self._adapter.cert_verify(pool, url, verify, cert)
        return pool, route.absolute

    def _pool_key(self, where: tuple) -> _Route:
        """The pool manager, its key and pool settings for ``where`` = (scheme,
        host, port, verify, cert), as its ``connection_from_host`` computes
        them for the arguments requests' adapter passes; the proxy decision
        is made here, with them.

        Remembered, because computing a key costs several times the lookup
        it serves; at most MAX_POOL_KEYS are kept.
        """
        known = self._pool_keys.get(where)
        if known is None:
            scheme, host, port, verify, cert = where
            port = port if port is not None else port_by_scheme.get(scheme, 80)
            proxy = self._proxies.for_origin(scheme, host)
            manager, at = self._adapter.poolmanager, (scheme, host, port)
            if proxy is not None:
                manager = self._adapter.proxy_manager_for(proxy.url_with_credentials)
                if scheme == "http":   # ProxyManager.connection_from_host: the proxy's pool
                    at = ("http", proxy.host, proxy.port)
            context = {**manager.connection_pool_kw, **_tls_settings(verify, cert),
                       "scheme": at[0], "host": at[1], "port": at[2]}
            refusal = self._guard.literal_refusal(host) if proxy is not None else ""
            if len(self._pool_keys) >= MAX_POOL_KEYS:
                self._pool_keys.clear()
            known = self._pool_keys[where] = _Route(
                manager.key_fn_by_scheme[at[0]](context), context, manager,
                absolute=proxy is not None and scheme == "http", refusal=refusal, proxy=proxy)
        return known


class _Route:
    """How requests to one origin go: the pool manager, the pool's key and
    settings, whether the request target is the absolute URL (through a
    proxy), and why the guard refuses the origin ("" if it does not)."""

    __slots__ = ("key", "context", "manager", "absolute", "refusal", "proxy")

    def __init__(self, key: tuple, context: dict[str, object], manager: urllib3.PoolManager, *,
                 absolute: bool = False, refusal: str = "", proxy: Proxy | None = None) -> None:
        self.key, self.context, self.manager = key, context, manager
        self.absolute, self.refusal, self.proxy = absolute, refusal, proxy


def _absolute_form(url: str, target: str) -> str:
    """The request target for a proxy (RFC 9112 §3.2.2): scheme, authority,
    then the path and query in wire form."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}{target}"


def wire_target(url: str) -> str | None:
    """The request target (path and query) of an absolute http(s) URL without
    fragment that is already in wire form, i.e. that requests would send
    unchanged; None otherwise."""
    parts = urlsplit(url)
    if "@" in parts.netloc or not _WIRE_HOST(url_authority(url)[1]):
        return None
    path, query = parts.path or "/", parts.query
    target = f"{path}?{query}" if query else path
    if not _WIRE_PATH(target) or _DOT_SEGMENT(path):
        return None
    if "%" in target and _UNRESERVED_ESCAPE(target):
        return None
    return target


def _tls_settings(verify: bool | str, cert: object) -> dict[str, object]:
    """The connection pool settings requests derives from ``verify`` and ``cert``
    (requests.adapters._urllib3_request_context); the same settings select
    the same pool, so both ways of sending share connections."""
    settings: dict[str, object] = {"cert_reqs": "CERT_NONE" if verify is False else "CERT_REQUIRED"}
    if isinstance(verify, str):
        settings["ca_cert_dir" if os.path.isdir(verify) else "ca_certs"] = verify
    if isinstance(cert, tuple) and len(cert) == 2:
        settings["cert_file"], settings["key_file"] = cert
    elif cert is not None:
        settings["cert_file"] = cert
    return settings


def new_session(user_agent: str, per_host: int, guard: AddressGuard, *,
                record: bool = False) -> requests.Session:
    """A session whose every connection goes through ``guard`` (and records
    its request heads if ``record``)."""
    session = requests.Session()
    # Without this, every request looks up proxy settings and .netrc in the
    # environment: about a third of requests' CPU time per GET. The proxy
    # variables are read once instead (getpage.proxies), by curl's rules
    # rather than requests' (which also ask the OS and bypass some hosts).
    session.trust_env = False
    # The crawl's cookies are its Identity's, added per request on both ways
    # of sending; the session's own jar stays empty so it never adds others.
    session.cookies.set_policy(_NoCookies())
    session.headers.update({"User-Agent": user_agent, "Accept": ACCEPT})
    # Keep idle connections for many hosts (breadth-first crawls switch
    # hosts often), and as many per host as may be in flight.
    adapter = _GuardedAdapter(guard, record, pool_connections=64, pool_maxsize=per_host,
                              max_retries=0)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    return session


class _NoCookies(http.cookiejar.DefaultCookiePolicy):
    def set_ok(self, cookie: object, request: object) -> bool:
        return False


class _GuardedConnection:
    """Mixin for urllib3 connections: open the socket to a vetted address."""

    guard: AddressGuard  # set on the subclasses made by ``_pool_classes``
    address = ""  # the address of the open socket; read by recording connections

    # The signature and the exceptions raised are those of urllib3's own
    # HTTPConnection._new_conn, which this replaces.
    def _new_conn(self) -> socket.socket:
        try:
            addresses = self.guard.addresses(self.host, self.port)
        except socket.gaierror as exc:
            raise NameResolutionError(self.host, self, exc) from exc
        failure: NewConnectionError | None = None
        for address in addresses:
            try:
                return self._open(address)
            except NewConnectionError as exc:
                failure = exc  # refused or unreachable at once: try the next address
        assert failure is not None  # the guard never returns an empty list
        raise failure

    def _open(self, address: str) -> socket.socket:
        """Connect to one address. A timeout is not followed by another
        address, so connecting never takes longer than one timeout."""
        try:
            sock = create_connection((address, self.port), self.timeout,
                                     source_address=self.source_address,
                                     socket_options=self.socket_options)
            self.address = address
            return sock
        except TimeoutError as exc:
            raise ConnectTimeoutError(
                self, f"Connection to {self.host} ({address}) timed out. "
                      f"(connect timeout={self.timeout})") from exc
        except OSError as exc:
            raise NewConnectionError(
                self, f"Failed to establish a new connection to {address}: {exc}") from exc


class _RecordingConnection:
    """Mixin for urllib3 connections: remember the request head being sent.

    ``putrequest`` starts a head and ``putheader`` adds to it; http.client
    itself calls ``putheader`` for the Host (and Accept-Encoding) it adds,
    and urllib3 calls it for every header, so the list is what went on the
    wire. The finished head is ``sent_request``.
    """

    address = ""   # a guarded connection sets it; through a proxy it stays unknown
    _http_vsn_str: str
    sent_request: SentRequest | None = None

    def putrequest(self, method: str, url: str, skip_host: bool = False,
                   skip_accept_encoding: bool = False) -> None:
        self._sent_headers: list[tuple[str, str]] = []
        super().putrequest(method, url, skip_host=skip_host,  # type: ignore[misc]
                           skip_accept_encoding=skip_accept_encoding)
        self._pending = (method, url)

    def putheader(self, header: str | bytes, *values: object) -> None:
        super().putheader(header, *values)  # type: ignore[misc]
        if SKIP_HEADER in values:
            return  # urllib3 sent nothing for this header
        if _text(header).lower() == "proxy-authorization":
            return  # the proxy's password: never written to a record
        self._sent_headers.append((_text(header), "\r\n\t".join(_text(v) for v in values)))

    def endheaders(self, *args: object, **kwargs: object) -> None:
        self.sent_request = None
        # Sending may open the socket, and with it fix the address; it may
        # also wait out a hold (Transport.get): the time is taken once sent.
        super().endheaders(*args, **kwargs)  # type: ignore[misc]
        sent_at = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        method, target = self._pending
        self.sent_request = SentRequest(method, target, self._http_vsn_str,
                                        tuple(self._sent_headers), self.address, sent_at)


def _text(value: object) -> str:
    """A header name or value as http.client writes it (str, bytes or int)."""
    if isinstance(value, bytes):
        return value.decode("latin-1")
    return str(value)


class _Unanswered(ConnectionError):
    """The connection ended before the first byte of an answer; the
    failure that ended it (a reset, or http.client's RemoteDisconnected
    for a plain close) is the ``__cause__``."""


class _StaleConnection(Exception):
    """A request lost to a reused connection that the other side had
    closed: nothing of an answer arrived. Not an OSError, so that urllib3
    neither wraps it nor counts it against the retry policy; the pool
    (``_FreshRetryPool``) catches it and never lets it out."""


class _FirstByteResponse(http.client.HTTPResponse):
    """http.client's response, which waits for the answer's first byte
    before parsing, so that a connection that ended before any byte can be
    told from one cut off in the middle (which is never sent again), and
    notes when that byte came (``heard_ago``).

    No extra read: the byte is peeked into the buffer the status line is
    then read from."""

    first_byte_at: float | None = None   # time.monotonic()

    def begin(self) -> None:
        try:
            received = self.fp.peek(1)
        except ConnectionError as exc:
            raise _Unanswered() from exc
        if not received:
            raise _Unanswered() from http.client.RemoteDisconnected(
                "Remote end closed connection without response")
        self.first_byte_at = time.monotonic()
        super().begin()


def heard_ago(response: urllib3.BaseHTTPResponse) -> float:
    """Seconds since the first byte of ``response`` arrived (0.0 if unknown):
    the earliest moment the server is known to have had the request, before
    the status line and headers were parsed."""
    first = getattr(getattr(response, "_original_response", None), "first_byte_at", None)
    return 0.0 if first is None else max(0.0, time.monotonic() - first)


# Set by Transport.get for the request being made in this thread: the
# time.monotonic() before which its first byte may not leave (None: now).
_held = threading.local()


class _ReuseAwareConnection:
    """Mixin for urllib3 connections: an idempotent request that got nothing
    back on a connection that had already carried a response raises
    ``_StaleConnection``; any other request, and any request on a new
    connection, the failure as it was. Its first ``send`` waits for the
    hold Transport.get was given (a new plain connection opens after it;
    urllib3 opens an HTTPS one, its TLS handshake too, before)."""

    _method: str   # http.client's: the method of the request being sent

    response_class = _FirstByteResponse
    _answered = 0   # responses received on the current socket

    def connect(self) -> None:
        self._answered = 0
        super().connect()  # type: ignore[misc]

    def send(self, data) -> None:
        until = getattr(_held, "until", None)
        if until is not None:
            _held.until = None
            pause = until - time.monotonic()
            if pause > 0:
                time.sleep(pause)
        super().send(data)  # type: ignore[misc]

    def getresponse(self) -> urllib3.response.HTTPResponse:
        reused = self._answered > 0
        try:
            response = super().getresponse()  # type: ignore[misc]
        except _Unanswered as exc:
            if reused and self._method in IDEMPOTENT_METHODS:
                raise _StaleConnection() from exc.__cause__
            raise exc.__cause__ from None
        self._answered += 1
        return response


# Set while a pool sends a request again after a stale connection: the
# connection it takes must be a new one. Per thread, as pools are shared.
_fresh = threading.local()


class _FreshRetryPool:
    """Mixin for urllib3 pools: an idempotent request lost to a stale
    kept-alive connection is sent once more, on a new connection."""

    def urlopen(self, method: str, url: str, *args: object, **kwargs: object
                ) -> urllib3.BaseHTTPResponse:
        try:
            return super().urlopen(method, url, *args, **kwargs)  # type: ignore[misc]
        except _StaleConnection:
            pass
        _fresh.only = True
        try:
            return super().urlopen(method, url, *args, **kwargs)  # type: ignore[misc]
        finally:
            _fresh.only = False

    def _get_conn(self, timeout: float | None = None) -> urllib3.connection.HTTPConnection:
        connection = super()._get_conn(timeout)  # type: ignore[misc]
        if getattr(_fresh, "only", False):
            connection.close()   # opened again, to the same place, as it sends
        return connection


def _pool_classes(guard: AddressGuard | None,
                  record: bool = False) -> dict[str, type[urllib3.connectionpool.HTTPConnectionPool]]:
    """urllib3 pool classes for http and https whose connections use ``guard``
    (none: connections to a proxy), remember their request heads if
    ``record``, and send a request lost to a stale connection again.

    Classes rather than constructor arguments, because urllib3's pool
    manager refuses keyword arguments it does not know.
    """
    mixins: tuple[type, ...] = ((_RecordingConnection,) if record else ()) + \
        ((_GuardedConnection,) if guard is not None else ()) + (_ReuseAwareConnection,)
    http_connection = type("GuardedHTTPConnection",
                           (*mixins, urllib3.connection.HTTPConnection), {"guard": guard})
    https_connection = type("GuardedHTTPSConnection",
                            (*mixins, urllib3.connection.HTTPSConnection), {"guard": guard})
    return {
        "http": type("GuardedHTTPConnectionPool",
                     (_FreshRetryPool, urllib3.connectionpool.HTTPConnectionPool),
                     {"ConnectionCls": http_connection}),
        "https": type("GuardedHTTPSConnectionPool",
                      (_FreshRetryPool, urllib3.connectionpool.HTTPSConnectionPool),
                      {"ConnectionCls": https_connection}),
    }


class _GuardedAdapter(HTTPAdapter):
    def __init__(self, guard: AddressGuard, record: bool, **kwargs) -> None:
        self._pool_classes = _pool_classes(guard, record)
        self._proxied_pool_classes = _pool_classes(None, record)
        super().__init__(**kwargs)

    def init_poolmanager(self, *args, **kwargs) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = self._pool_classes

    def proxy_manager_for(self, proxy: str, **proxy_kwargs) -> urllib3.ProxyManager:
        """requests' ProxyManager for ``proxy`` (a URL, with credentials if
        any), with connections that record but are not guarded, and room for
        every fetch thread's connection to the proxy."""
        manager = self.proxy_manager.get(proxy)
        if manager is None:
            manager = urllib3.ProxyManager(proxy, proxy_headers=self.proxy_headers(proxy),
                                           num_pools=self._pool_connections,
                                           maxsize=max(self._pool_maxsize, PROXY_CONNECTIONS),
                                           block=self._pool_block, **proxy_kwargs)
            manager.pool_classes_by_scheme = self._proxied_pool_classes
            self.proxy_manager[proxy] = manager
        return manager

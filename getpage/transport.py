"""The HTTP transport: a ``requests.Session`` that connects only where the
``AddressGuard`` allows.

Owns the session's settings (no proxies from the environment, no cookies,
headers, connection pools) and the one place where a TCP connection is
opened: ``_GuardedConnection._new_conn``. It asks the guard for the host's
vetted addresses and connects to one of them, so the address that was
checked is the address connected to. Everything above the socket is
urllib3's own code and keeps working on the host name: the Host header,
TLS SNI and the certificate's host name check.

A refused host surfaces from ``Session.get`` as ``BlockedAddress``, which
neither urllib3 nor requests catches or wraps.
"""
from __future__ import annotations

import http.cookiejar
import socket

import requests
import urllib3.connection
import urllib3.connectionpool
from requests.adapters import HTTPAdapter
from urllib3.exceptions import ConnectTimeoutError, NameResolutionError, NewConnectionError
from urllib3.util.connection import create_connection

from .addresses import AddressGuard

ACCEPT = "text/html,application/xhtml+xml;q=0.9,*/*;q=0.5"


def new_session(user_agent: str, per_host: int, guard: AddressGuard) -> requests.Session:
    """A session for one Fetcher: every connection it opens goes through ``guard``."""
    session = requests.Session()
    # Without this, every request looks up proxy settings and .netrc in the
    # environment: about a third of requests' CPU time per GET, for nothing
    # on a crawler that is configured explicitly. A proxy would also
    # resolve names itself, out of the guard's reach.
    session.trust_env = False
    # A crawler fetches each page once and should see what any visitor
    # sees; cookies would make fetches depend on their order.
    session.cookies.set_policy(_NoCookies())
    session.headers.update({"User-Agent": user_agent, "Accept": ACCEPT})
    # Keep idle connections for many hosts (breadth-first crawls switch
    # hosts often), and as many per host as may be in flight.
    adapter = _GuardedAdapter(guard, pool_connections=64, pool_maxsize=per_host, max_retries=0)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    return session


class _NoCookies(http.cookiejar.DefaultCookiePolicy):
    def set_ok(self, cookie: object, request: object) -> bool:
        return False


class _GuardedConnection:
    """Mixin for urllib3 connections: open the socket to a vetted address."""

    guard: AddressGuard  # set on the subclasses made by ``_pool_classes``

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
            return create_connection((address, self.port), self.timeout,
                                     source_address=self.source_address,
                                     socket_options=self.socket_options)
        except TimeoutError as exc:
            raise ConnectTimeoutError(
                self, f"Connection to {self.host} ({address}) timed out. "
                      f"(connect timeout={self.timeout})") from exc
        except OSError as exc:
            raise NewConnectionError(
                self, f"Failed to establish a new connection to {address}: {exc}") from exc


def _pool_classes(guard: AddressGuard) -> dict[str, type[urllib3.connectionpool.HTTPConnectionPool]]:
    """urllib3 pool classes for http and https whose connections use ``guard``.

    Classes rather than constructor arguments, because urllib3's pool
    manager refuses keyword arguments it does not know.
    """
    http_connection = type("GuardedHTTPConnection",
                           (_GuardedConnection, urllib3.connection.HTTPConnection), {"guard": guard})
    https_connection = type("GuardedHTTPSConnection",
                            (_GuardedConnection, urllib3.connection.HTTPSConnection), {"guard": guard})
    return {
        "http": type("GuardedHTTPConnectionPool", (urllib3.connectionpool.HTTPConnectionPool,),
                     {"ConnectionCls": http_connection}),
        "https": type("GuardedHTTPSConnectionPool", (urllib3.connectionpool.HTTPSConnectionPool,),
                      {"ConnectionCls": https_connection}),
    }


class _GuardedAdapter(HTTPAdapter):
    def __init__(self, guard: AddressGuard, **kwargs) -> None:
        self._pool_classes = _pool_classes(guard)
        super().__init__(**kwargs)

    def init_poolmanager(self, *args, **kwargs) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = self._pool_classes

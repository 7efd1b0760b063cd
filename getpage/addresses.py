"""Which network addresses the crawler may connect to.

Owns the address categories ("public", "loopback", "private",
"link-local", "multicast", "reserved"), the resolution of a host name to
its addresses, and ``AddressGuard``: the rule that a connection is opened
only to an address whose category is allowed. The rule keeps a page on a
public site from steering the crawler, by a link or a redirect, into the
user's LAN, a router's admin page or a cloud metadata endpoint
(169.254.169.254).

The guard is asked for the addresses of a host at the moment a connection
is opened (see ``getpage.transport``), and the connection goes to one of
exactly the addresses it checked. Checking a URL's host first and letting
the HTTP library resolve the name again to connect would leave a gap (DNS
rebinding): a name can answer a public address to the check and a private
one to the connect. A kept-alive connection is reused without a new
resolution; it goes to an address that was checked when it was opened.

Pure apart from ``resolve_host``, which asks the system resolver.
"""
from __future__ import annotations

import functools
import ipaddress
import socket
from collections.abc import Callable, Iterable
from urllib.parse import urlsplit

# Every category ``address_category`` returns; allowing all of them
# switches the rule off.
ADDRESS_CATEGORIES = ("public", "loopback", "private", "link-local", "multicast", "reserved")

# RFC 6598 shared address space (carrier-grade NAT). Python counts it as
# neither private nor global; it is internal to a provider's network, and
# one cloud's metadata endpoint (100.100.100.200) lives in it.
_SHARED_ADDRESS_SPACE = ipaddress.ip_network("100.64.0.0/10")
DEFAULT_PORTS = {"http": 80, "https": 443}   # the one table; politeness and robots use it too

Resolver = Callable[[str, int], list[str]]
Classifier = Callable[[str], str]


class BlockedAddress(Exception):
    """A connection the address rule forbids; ``str(exc)`` is the error value,
    "blocked: <host> resolves to <category> address <ip>"."""


def address_category(ip: str) -> str:
    """The category of an IP address given as text (IPv4 or IPv6).

    An IPv4-mapped IPv6 address (::ffff:10.0.0.1) is judged as the IPv4
    address it carries, since that is where a connection to it goes. The
    checks run from the most specific to the most general, because Python
    counts loopback and link-local addresses as private too. Addresses
    that are neither private nor globally routable (0.0.0.0, 240.0.0.0/4,
    ::/8 ...) are "reserved". Raises ValueError for text that is not an IP
    address.
    """
    address = ipaddress.ip_address(ip)
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
        address = address.ipv4_mapped
    if address.is_loopback:
        return "loopback"
    if address.is_link_local:
        return "link-local"
    if address.is_multicast:
        return "multicast"
    if address.is_unspecified or address.is_reserved:
        return "reserved"
    if address.is_private or address in _SHARED_ADDRESS_SPACE:
        return "private"
    if not address.is_global:
        return "reserved"
    return "public"


@functools.lru_cache(maxsize=256)
def url_authority(url: str) -> tuple[str, str, int | None]:
    """(scheme, host, port) of a URL: scheme and host in lower case, host ""
    when there is none, port None when none is given. Raises ValueError for
    a bad port or a malformed IPv6 literal.

    One fetch asks this of the same URL several times (is it valid, its
    politeness key, its robots origin, its connection pool), and each
    answer costs two parses of the netloc; the cache is small and bounded.
    """
    parts = urlsplit(url)
    return parts.scheme.lower(), parts.hostname or "", parts.port


def resolve_host(host: str, port: int) -> list[str]:
    """Every address of ``host`` for a TCP connection, in the resolver's
    order, without repeats. Raises socket.gaierror when the name does not
    resolve."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def address_categories(urls: Iterable[str], resolve: Resolver = resolve_host,
                       classify: Classifier = address_category) -> frozenset[str]:
    """The categories of the addresses the hosts of ``urls`` resolve to.

    Meant for seeds: a crawl may go where its own seeds are (a crawl of a
    site on 127.0.0.1 must reach loopback). URLs without a host, with a bad
    port, or whose host does not resolve add nothing.
    """
    found: set[str] = set()
    for url in urls:
        try:
            parts = urlsplit(url)
            host, port = parts.hostname, parts.port or DEFAULT_PORTS.get(parts.scheme.lower(), 0)
        except ValueError:
            continue
        if not host:
            continue
        try:
            found.update(classify(ip) for ip in resolve(host, port))
        except OSError:
            continue
    return frozenset(found)


class AddressGuard:
    """Resolves a host and vets every address it has.

    Thread-safe (holds no mutable state). ``allowed`` is a set of
    categories from ``ADDRESS_CATEGORIES``; ``resolve`` and ``classify``
    are injectable so tests can map made-up names to local addresses and
    call them anything.
    """

    def __init__(self, allowed: frozenset[str], resolve: Resolver = resolve_host,
                 classify: Classifier = address_category) -> None:
        unknown = set(allowed) - set(ADDRESS_CATEGORIES)
        if unknown:
            raise ValueError(f"unknown address categories {sorted(unknown)}; "
                             f"choose from {', '.join(ADDRESS_CATEGORIES)}")
        self.allowed = frozenset(allowed)
        self._resolve = resolve
        self._classify = classify

    def literal_refusal(self, host: str) -> str:
        """The "blocked: ..." error for a host that is an IP address of a
        category not allowed; "" for an allowed address or a name. For
        requests through a proxy, which resolves names itself."""
        try:
            category = self._classify(host)
        except ValueError:
            return ""   # a name, not an address
        if category in self.allowed:
            return ""
        return f"blocked: {host} is a {category} address"

    def addresses(self, host: str, port: int) -> list[str]:
        """The addresses a connection to ``host`` may use: all of them allowed.

        A host is refused if ANY of its addresses is not allowed, so which
        answer a connection ends up using cannot matter. Raises
        BlockedAddress for a refused host, socket.gaierror when the name
        does not resolve.
        """
        found = self._resolve(host, port)
        if not found:
            raise socket.gaierror(socket.EAI_NONAME, f"no address for {host}")
        for ip in found:
            category = self._classify(ip)
            if category not in self.allowed:
                raise BlockedAddress(f"blocked: {host} resolves to {category} address {ip}")
        return found

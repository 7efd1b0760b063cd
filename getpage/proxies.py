"""Which proxy a request goes through, by curl's rules.

Owns the reading of the proxy settings (``--proxy``, ``--no-proxy`` and
the environment: ``http_proxy``, ``https_proxy``, ``all_proxy`` and
``no_proxy``), the NO_PROXY match (``no_proxy_matches``) and
``ProxyRules.for_origin``, the answer for one origin. Pure: the
environment is an argument. The transport asks once per origin and
remembers the answer with the origin's connection pool, so a request pays
nothing for proxies.

The rules are curl's (lib/url.c, lib/noproxy.c), with one deliberate
difference:

* a URL's scheme picks ``<scheme>_proxy`` (lower case first, then upper
  case), else ``all_proxy``/``ALL_PROXY``; a variable that is set but empty
  means "no proxy" and ends the search. curl ignores upper-case
  ``HTTP_PROXY`` (in a CGI program it can be set by a request's ``Proxy:``
  header); this crawler reads it, as Python's urllib, requests and Go do,
  except when ``REQUEST_METHOD`` is set (a CGI environment), as they do;
* ``--proxy URL`` replaces the ``*_proxy`` variables for every scheme;
  ``no_proxy`` still applies to it, as in curl; ``--no-proxy`` (wget's
  option) ignores the environment and uses no proxy;
* ``no_proxy`` is a comma-separated list: ``*`` alone matches every host;
  a name matches itself and every name under it (``example.com`` and
  ``.example.com`` both match ``example.com`` and ``www.example.com``, not
  ``notexample.com``), case-insensitively, trailing dots ignored; an IP
  address matches that address, or with ``/bits`` (CIDR) its network; a
  name never matches an address (``localhost`` does not exempt
  127.0.0.1), and an entry with a port matches nothing. So loopback goes
  through the proxy unless no_proxy names it, as in curl;
* a proxy URL without a scheme is ``http://``; without a port, 1080 (curl's
  default). Only ``http://`` proxies are supported (HTTPS through them
  with CONNECT); ``https://`` and SOCKS proxies are refused with a line
  that says so.
"""
from __future__ import annotations

import ipaddress
import socket
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import quote, unquote, urlsplit

DEFAULT_PROXY_PORT = 1080   # curl's, for a proxy URL without a port


@dataclass(frozen=True)
class Proxy:
    """One forward proxy: where it is, its credentials, and where it was named."""

    host: str                                 # lower case; an IPv6 literal without brackets
    port: int
    source: str                               # "--proxy", "https_proxy", "ALL_PROXY" ...
    username: str = field(default="", repr=False)   # percent-decoded
    password: str = field(default="", repr=False)

    @property
    def url(self) -> str:
        """The proxy's URL without credentials: safe to show and to log."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    @property
    def url_with_credentials(self) -> str:
        """The URL the connection code needs (a secret when it has a password)."""
        if not self.username and not self.password:
            return self.url
        userinfo = f"{quote(self.username, safe='')}:{quote(self.password, safe='')}"
        return self.url.replace("http://", f"http://{userinfo}@", 1)


def parse_proxy(value: str, source: str) -> Proxy:
    """The Proxy a ``--proxy`` value or a proxy variable names.

    Raises ValueError with a one-line message (the password never in it)
    for a URL that is not an http:// proxy."""
    text = value.strip()
    shown = f"{source}={without_password(text)}" if source != "--proxy" else \
        f"--proxy {without_password(text)}"
    if "://" not in text:
        text = "http://" + text
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError as exc:
        raise ValueError(f"{shown}: not a proxy URL ({exc}); write http://HOST:PORT") from None
    scheme = parts.scheme.lower()
    if scheme != "http":
        what = "SOCKS proxies are" if scheme.startswith("socks") else \
            "a proxy reached over TLS (https://) is" if scheme == "https" else \
            f"a {scheme}:// proxy is"
        raise ValueError(f"{shown}: {what} not supported; give an http:// proxy (it carries "
                         f"https:// URLs too, with CONNECT), e.g. http://HOST:PORT")
    if not parts.hostname:
        raise ValueError(f"{shown}: no host in it; write http://HOST:PORT")
    return Proxy(parts.hostname, port or DEFAULT_PROXY_PORT, source,
                 unquote(parts.username or ""), unquote(parts.password or ""))


def without_password(url: str) -> str:
    """``url`` with the password of its user info removed (the user name
    kept): what a crawl saves, shows and exports of a proxy URL."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        scheme, rest = "", url
    authority, slash, path = rest.partition("/")
    userinfo, at, hostport = authority.rpartition("@")
    if not at or ":" not in userinfo:
        return url
    user = userinfo.partition(":")[0]
    return f"{scheme}{sep}{user}@{hostport}{slash}{path}"


def missing_password(url: str) -> bool:
    """True for a proxy URL with a user name and no password at all
    (``http://user@host``): what ``without_password`` leaves of one that had
    a password, so a resumed crawl asks for it again."""
    authority = url.partition("://")[2] if "://" in url else url
    userinfo, at, _ = authority.partition("/")[0].rpartition("@")
    return bool(at) and ":" not in userinfo


def no_proxy_matches(host: str, no_proxy: str) -> bool:
    """Does the ``no_proxy`` list exempt ``host`` (a URL's host: lower case,
    an IPv6 literal without brackets) from the proxy? curl's rules, see the
    module's docstring."""
    if not host or not no_proxy:
        return False
    if no_proxy == "*":
        return True
    address = _ip(host)
    name = host if address is not None else host.removesuffix(".")
    for token in _no_proxy_tokens(no_proxy):
        if address is not None:
            if _address_matches(address, token):
                return True
            continue
        token = token.removesuffix(".")
        token = token[1:] if token.startswith(".") else token
        token = token.lower()
        if token and (name == token or name.endswith("." + token)):
            return True
    return False


def _no_proxy_tokens(no_proxy: str) -> list[str]:
    """The entries of a no_proxy list as curl reads them: separated by
    commas, blanks around an entry skipped; a blank inside one ends the list."""
    tokens, at, end = [], 0, len(no_proxy)
    while at < end:
        while at < end and no_proxy[at] in " \t":
            at += 1
        start = at
        while at < end and no_proxy[at] not in " \t,":
            at += 1
        if at > start:
            tokens.append(no_proxy[start:at])
        while at < end and no_proxy[at] in " \t":
            at += 1
        if at >= end or no_proxy[at] != ",":
            break
        while at < end and no_proxy[at] == ",":
            at += 1
    return tokens


def _ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """An IPv4 address in the strict dotted form inet_pton takes, or an IPv6 literal."""
    try:
        if ":" in text:
            return ipaddress.IPv6Address(text)
        socket.inet_pton(socket.AF_INET, text)
        return ipaddress.IPv4Address(text)
    except (OSError, ValueError):
        return None


def _address_matches(address: ipaddress.IPv4Address | ipaddress.IPv6Address, token: str) -> bool:
    """``token`` is an address, or an address/bits network (bits read as C's
    atoi reads them, as curl does: "/0" and "/x" compare the whole address)."""
    text, _, bits_text = token.partition("/")
    network = _ip(text)
    if network is None or network.version != address.version:
        return False
    digits = len(bits_text) - len(bits_text.lstrip("0123456789"))
    bits = int(bits_text[:digits]) if digits else 0
    width = network.max_prefixlen
    if bits > width:
        return False
    if bits == 0:
        bits = width
    shift = width - bits
    return int(address) >> shift == int(network) >> shift


# Where each URL scheme's proxy is looked for, in order (curl's order).
_VARIABLES = {
    "http": ("http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"),
    "https": ("https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"),
}


@dataclass(frozen=True)
class ProxyRules:
    """The proxy settings of one crawler process: the proxy per URL scheme
    (None: direct) and the no_proxy list that exempts hosts from them."""

    by_scheme: tuple[tuple[str, Proxy | None], ...] = ()
    no_proxy: str = ""

    @classmethod
    def direct(cls) -> ProxyRules:
        return cls()

    @classmethod
    def resolve(cls, proxy: str = "", ignore_environment: bool = False,
                environ: Mapping[str, str] | None = None) -> ProxyRules:
        """The rules for ``--proxy`` (``proxy``), ``--no-proxy``
        (``ignore_environment``) and the environment ``environ``.

        Raises ValueError with a one-line message for a proxy URL that
        cannot be used (given or in a variable)."""
        if ignore_environment:
            if proxy:
                raise ValueError("give --proxy URL or --no-proxy, not both")
            return cls.direct()
        environ = {} if environ is None else environ
        no_proxy = _variable(environ, ("no_proxy", "NO_PROXY"))[1] or ""
        if proxy:
            given = parse_proxy(proxy, "--proxy")
            return cls((("http", given), ("https", given)), no_proxy)
        by_scheme = []
        for scheme, names in _VARIABLES.items():
            if "REQUEST_METHOD" in environ:   # CGI: HTTP_PROXY may come from a request header
                names = tuple(name for name in names if name != "HTTP_PROXY")
            name, value = _variable(environ, names)
            by_scheme.append((scheme, parse_proxy(value, name) if value else None))
        return cls(tuple(by_scheme), no_proxy)

    def for_origin(self, scheme: str, host: str) -> Proxy | None:
        """The proxy a request to ``scheme://host`` goes through; None: direct."""
        proxy = dict(self.by_scheme).get(scheme)
        if proxy is None or no_proxy_matches(host, self.no_proxy):
            return None
        return proxy

    def describe(self) -> str:
        """One line for the start of a crawl ("" when every request goes direct)."""
        used: dict[str, list[str]] = {}
        for scheme, proxy in self.by_scheme:
            if proxy is not None:
                used.setdefault(f"{proxy.url} (from {proxy.source})", []).append(scheme)
        if not used:
            return ""
        parts = [f"{' and '.join(schemes)} through {where}" for where, schemes in used.items()]
        exempt = f"; not for no_proxy={self.no_proxy}" if self.no_proxy else ""
        return "proxy: " + ", ".join(parts) + exempt


def _variable(environ: Mapping[str, str], names: tuple[str, ...]) -> tuple[str, str | None]:
    """The first of ``names`` that is set (even empty), and its value."""
    for name in names:
        value = environ.get(name)
        if value is not None:
            return name, value.strip()
    return "", None

"""SURT keys: where wayback machines file a URL in a CDX index.

A replay tool finds a capture by the SURT key (Sort-friendly URI Reordering
Transform) of the URL it is asked for, so an index is only as good as its
keys: pywb keys every URL with the ``surt`` package (the Internet Archive's
Python port of webarchive-commons' WaybackURLKeyMaker, the canonicalizer of
OpenWayback), and a CDX line filed under any other key is never found.
``surt(url)`` gives that key, byte for byte, in these steps:

1. Split: ASCII white space at the ends, and tabs and line breaks anywhere,
   removed; "http://" put before a URL that has no scheme, and a repeated
   "http://http://" cut to one; user info and fragment dropped; an IPv6 host
   loses its brackets. A port that is not a number (0-65535) makes the URL
   its own key: pywb cannot look such a URL up at all.
2. Host: percent-decoded until nothing changes; a non-ASCII name turned into
   IDNA (punycode); ".." made "."; dots at the ends removed; an IPv4 address
   in any spelling inet_aton reads (one decimal number, octal parts, fewer
   than four parts) written as a dotted quad; else lower case, escaped once;
   a leading "www." ("www1.", "www2." ...) dropped.
3. Port: dropped when it is the scheme's default (80 for http, 443 for https).
4. Path: percent-decoded until nothing changes; "." and ".." segments
   resolved and empty ones dropped; escaped once (space, "%", "#", control
   and non-ASCII bytes); lower case; an ASP.NET session segment removed; one
   trailing slash dropped ("/" stays).
5. Query: decoded and escaped as the path; a jsessionid, phpsessid, sid,
   ASPSESSIONID or cfid/cftoken argument removed; lower case; arguments
   sorted by name, then value; an empty query dropped.
6. Key: host labels reversed and joined by commas (an IPv4 address too:
   ``1,0,0,127``), ":port" if kept, ")", the path, "?" and the query.

``http://www.Example.org:80/A/?b=2&a=1#top`` -> ``org,example)/a?a=1&b=2``.

Pure: no sockets, no files. (The surt package asks the system resolver to
read IPv4 spellings; this module reads them itself, with the same answers.)
"""
from __future__ import annotations

import re
from urllib.parse import quote_from_bytes, unquote_to_bytes

__all__ = ["surt"]

_HAS_SCHEME = re.compile(rb"[a-zA-Z][a-zA-Z0-9+\-.]*:")
_REPEATED_SCHEME = re.compile(rb"^(https?://)+")
_TABS_AND_BREAKS = re.compile(rb"[\n\r\t]")
# RFC 2396, appendix B: scheme, authority, path, query (fragment dropped).
_PARTS = re.compile(rb"(?:([a-zA-Z][a-zA-Z0-9+.-]*):)?(?:(?://([^/?#]*))?([^?#]*)(?:\?([^#]*))?)?(?:#.*)?")
_DEFAULT_PORTS = {b"http": 80, b"https": 443}
_WWW = re.compile(rb"www\d*\.")
_DECIMAL_IP = re.compile(rb"[1-9][0-9]*(?:\.[0-9]+){0,3}")
_OCTAL_IP = re.compile(rb"0[0-7]*(?:\.[0-7]+){0,3}")
# Characters escaping leaves alone, besides letters, digits and "_.-~".
_SAFE = b"!\"$&'()*+,-./:;<=>?@[\\]^_`{|}~"
_PATH_SESSIONS = [re.compile(pattern, re.IGNORECASE) for pattern in (
    rb"(.*/)\((?:[a-z]\([0-9a-z]{24}\))+\)/([^?]+\.aspx.*)",
    rb"(.*/)\([0-9a-z]{24}\)/([^?]+\.aspx.*)",
)]
_QUERY_SESSIONS = [re.compile(pattern, re.IGNORECASE) for pattern in (
    rb"(.*)jsessionid=[0-9a-zA-Z]{32}(?:&(.*))?",
    rb"(.*)phpsessid=[0-9a-zA-Z]{32}(?:&(.*))?",
    rb"(.*)sid=[0-9a-zA-Z]{32}(?:&(.*))?",
    rb"(.*)ASPSESSIONID[a-zA-Z]{8}=[a-zA-Z]{24}(?:&(.*))?",
    rb"(.*)cfid=[^&]+&cftoken=[^&]+(?:&(.*))?",
)]


def surt(url: str) -> str:
    """The SURT key pywb and OpenWayback file ``url`` under (see the module
    docstring for the steps); "-" for an empty URL."""
    raw = url.encode("utf-8")
    if not raw.strip():
        return "-"
    if raw.startswith(b"filedesc"):
        return url
    try:
        scheme, host, port, path, query = _split(raw)
    except ValueError:
        return url
    host = _host(host, scheme) if host else b""
    if port == _DEFAULT_PORTS.get(scheme.lower()):
        port = None
    path = _path(path, resolve_dots=bool(host))
    query = _query(query) if query else b""
    return _key(scheme, host, port, path, query).decode("ascii")


def _split(url: bytes) -> tuple[bytes, bytes, int | None, bytes, bytes]:
    """(scheme, host, port, path, query) as surt reads them; ValueError for
    a port that is not a number."""
    url = _TABS_AND_BREAKS.sub(b"", url.strip())
    if not _HAS_SCHEME.match(url):
        url = b"http://" + url
    url = _REPEATED_SCHEME.sub(lambda match: match.group(1), url)
    scheme, netloc, path, query = _PARTS.fullmatch(url).groups(default=b"")
    host, port = _host_and_port(netloc.rstrip(b":"))
    if not host and scheme.startswith(b"http") and path:
        # "http:////example.org/a": the host hides in the path.
        host, _, rest = path.lstrip(b"/").partition(b"/")
        path = b"/" + rest
    return scheme, host, port, path, query


def _host_and_port(netloc: bytes) -> tuple[bytes, int | None]:
    """Host and port of a netloc as Python's urlsplit reads them (port 0
    counts as none)."""
    hostinfo = netloc.rpartition(b"@")[2]
    _, bracket, inside = hostinfo.partition(b"[")
    if bracket:
        host, _, after = inside.partition(b"]")
        port = after.partition(b":")[2]
    else:
        host, _, port = hostinfo.partition(b":")
    if port and not (port.isdigit() and int(port) <= 65535):
        raise ValueError(f"port {port!r} is not a number from 0 to 65535")
    return host, int(port) or None if port else None


def _host(host: bytes, scheme: bytes) -> bytes:
    host = _unescape(host)
    if not host.isascii():
        try:
            host = host.decode("utf-8", "ignore").encode("idna")
        except UnicodeError:
            pass  # kept as it is, and escaped below
    host = host.replace(b"..", b".").strip(b".")
    host = _ipv4(host) or _escape(host.lower())
    if scheme != b"dns" and (www := _WWW.match(host)):
        host = host[www.end():]
    return host


def _ipv4(host: bytes) -> bytes | None:
    """``host`` as a dotted quad, if it is an IPv4 address in a spelling
    surt tries (digits and dots); None otherwise."""
    if host.isdigit():
        number = int(host) & 0xFFFFFFFF  # surt keeps the low 32 bits
    elif _DECIMAL_IP.fullmatch(host) or _OCTAL_IP.fullmatch(host):
        number = _inet_aton(host)
        if number is None:
            return None
    else:
        return None
    return b".".join(b"%d" % (number >> shift & 0xFF) for shift in (24, 16, 8, 0))


def _inet_aton(host: bytes) -> int | None:
    """The address inet_aton(3) reads in 1 to 4 dot-separated numbers (a
    leading 0 means octal; the last number fills the remaining bytes)."""
    try:
        numbers = [int(part, 8 if part.startswith(b"0") else 10) for part in host.split(b".")]
    except ValueError:
        return None
    *head, last = numbers
    if any(number > 0xFF for number in head) or last >= 256 ** (5 - len(numbers)):
        return None
    return sum(number << 8 * (3 - index) for index, number in enumerate(head)) + last


def _path(path: bytes, *, resolve_dots: bool) -> bytes:
    path = _unescape(path)
    if resolve_dots:
        path = _resolve_dots(path)
    path = _escape(path).lower()
    for pattern in _PATH_SESSIONS:
        if match := pattern.fullmatch(path):
            path = match.group(1) + match.group(2)
    return path[:-1] if len(path) > 1 and path.endswith(b"/") else path


def _resolve_dots(path: bytes) -> bytes:
    """"." and ".." segments applied, empty segments dropped except a last
    one (a trailing slash); a ".." above the root is kept."""
    kept: list[bytes] = []
    for segment in path.split(b"/")[1:]:
        if segment == b"..":
            if kept:
                kept.pop()
            else:
                kept.append(segment)
        elif segment != b".":
            kept.append(segment)
    if not kept:
        return b"/"
    return b"/" + b"".join(segment + b"/" for segment in kept[:-1] if segment) + kept[-1]


def _query(query: bytes) -> bytes:
    query = _escape(_unescape(query))
    for pattern in _QUERY_SESSIONS:
        if match := pattern.fullmatch(query):
            query = match.group(1) + (match.group(2) or b"")
    return _sorted_arguments(query.lower())


def _sorted_arguments(query: bytes) -> bytes:
    """Arguments sorted by name, then value; an argument without "=" sorts
    before the same name with one."""
    if len(query) <= 1:
        return query
    arguments = sorted(tuple(argument.split(b"=", 1)) for argument in query.split(b"&"))
    return b"&".join(b"=".join(argument) for argument in arguments)


def _key(scheme: bytes, host: bytes, port: int | None, path: bytes, query: bytes) -> bytes:
    if host:
        head = b",".join(reversed(host.split(b".")))
        head += b"" if port is None else b":%d" % port
        head += b")"
    else:
        head = scheme + b":"
    return head + (path or (b"/" if query else b"")) + (b"?" + query if query else b"")


def _unescape(text: bytes) -> bytes:
    """Percent-decoded until nothing changes ("%2541" -> "%41" -> "A")."""
    while (decoded := unquote_to_bytes(text)) != text:
        text = decoded
    return text


def _escape(text: bytes) -> bytes:
    return quote_from_bytes(text, safe=_SAFE).encode("ascii")

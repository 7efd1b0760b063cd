"""URL normalization: one canonical absolute http(s) URL per resource.

This module owns ``normalize(url, base)``: it resolves a link against the page
it was found on (RFC 3986 section 5.2) and rewrites the result into the one
spelling the crawler uses for dedup, scope rules and fetching.  It is pure: no
sockets, no files, no growing caches (the few caches are small and bounded).

Two implementations give the same answers: ``normalize_reference`` follows the
steps one by one for any input; ``normalize`` first tries a fast path for the
links real pages are made of (plain relative paths, "../x", "./x", "/x", "?q",
"#f", and absolute http(s) URLs with a plain host) and hands everything else to
the reference.  Every link of a crawled page goes through here, so the fast
path is where a crawl spends its URL_Filter time.

Both can drop named parameters (``drop_params``, the CLI's ``--drop-param``,
the R crawler's ignoreUrlParams) so that "?utm_source=x" or ";jsessionid=y"
variants of a page dedup to one URL; ``check_drop_param`` validates a pattern.
"""
from __future__ import annotations

import fnmatch
import functools
import ipaddress
import re
from collections.abc import Callable
from urllib.parse import unquote, urlsplit

__all__ = ["check_drop_param", "normalize", "normalize_reference"]

_DEFAULT_PORTS = {"http": "80", "https": "443"}

# WHATWG strips C0 controls and space around a URL and deletes tab/CR/LF inside it.
_SURROUNDING_JUNK = "".join(map(chr, range(0x21)))
_DELETE_INSIDE = str.maketrans("", "", "\t\n\r")

_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_SUB_DELIMS = "!$&'()*+,;="

# Characters that may stay raw.  Path and query share one set: '?' can never
# reach a path after splitting, so allowing it keeps one fast check for both.
_PATH_QUERY_CLEAN = re.compile(r"[A-Za-z0-9\-._~" + re.escape(_SUB_DELIMS) + r":@/?]*").fullmatch
_USERINFO_CLEAN = re.compile(r"[A-Za-z0-9\-._~" + re.escape(_SUB_DELIMS) + r":]*").fullmatch
# An escape, a stray '%', or a run of characters that must be escaped.
_PATH_QUERY_FIX = re.compile(
    r"%[0-9A-Fa-f]{2}|%|[^A-Za-z0-9\-._~" + re.escape(_SUB_DELIMS) + r":@/?%]+").sub
_USERINFO_FIX = re.compile(
    r"%[0-9A-Fa-f]{2}|%|[^A-Za-z0-9\-._~" + re.escape(_SUB_DELIMS) + r":%]+").sub

# A registered name after lower-casing: labels of 1-63 characters, optional
# final dot.  '_' is not DNS-legal but real hosts use it, so it is tolerated.
_HOST_NAME = re.compile(r"[a-z0-9_-]{1,63}(?:\.[a-z0-9_-]{1,63})*\.?").fullmatch


def _escape_table() -> dict[str, str]:
    """Every spelling of every %XX escape -> its normal form (decoded or upper hex)."""
    table = {}
    for byte in range(256):
        char = chr(byte)
        normal = char if char in _UNRESERVED else f"%{byte:02X}"
        high, low = f"{byte:02x}"
        for h in {high, high.upper()}:
            for l in {low, low.upper()}:
                table[f"%{h}{l}"] = normal
    return table


_ESCAPES = _escape_table()


def _fix_match(match: re.Match) -> str:
    text = match.group()
    normal = _ESCAPES.get(text)
    if normal is not None:
        return normal
    if text == "%":
        return "%25"
    return "".join([f"%{b:02X}" for b in text.encode("utf-8")])


def _normalize_escapes(component: str, clean, fix) -> str:
    """Decode escaped unreserved characters, upper-case other escapes, escape what may not be raw."""
    if clean(component):
        return component
    return fix(_fix_match, component)


def remove_dot_segments(path: str) -> str:
    """RFC 3986 section 5.2.4 for a path that is empty or starts with '/'."""
    if "/." not in path:
        return path
    segments = path.split("/")
    kept: list[str] = []
    for segment in segments[1:]:
        if segment == "..":
            if kept:
                kept.pop()
        elif segment != ".":
            kept.append(segment)
    if segments[-1] in (".", ".."):
        kept.append("")
    return "/" + "/".join(kept)


def _clean_input(url: str) -> str:
    """What a browser does to an href before parsing it."""
    url = url.strip(_SURROUNDING_JUNK)
    if "\t" in url or "\n" in url or "\r" in url:
        url = url.translate(_DELETE_INSIDE)
    if "\\" in url:
        url = _backslashes_to_slashes(url)
    return url


def _backslashes_to_slashes(url: str) -> str:
    # Browsers read '\' as '/' in http(s) URLs, but only before the query.
    cut = len(url)
    for delimiter in "?#":
        found = url.find(delimiter)
        if 0 <= found < cut:
            cut = found
    return url[:cut].replace("\\", "/") + url[cut:]


@functools.lru_cache(maxsize=64)
def _split_base(base: str) -> tuple[str, str, str, str] | None:
    """(scheme, netloc, path, query) of an absolute http(s) base, else None.

    Cached because every link of a page shares one base; the cache is bounded.
    """
    try:
        scheme, netloc, path, query, _ = urlsplit(_clean_input(base))
    except ValueError:
        return None
    if scheme not in _DEFAULT_PORTS or not netloc:
        return None
    return scheme, netloc, path, query


def _has_authority(rest: str) -> bool:
    return rest.startswith("//")


def _resolve(url: str, base: str | None) -> tuple[str, str, str, str] | None:
    """RFC 3986 section 5.2.2 (with its non-strict same-scheme rule): (scheme, netloc, path, query)."""
    scheme, netloc, path, query, _ = urlsplit(url)
    if scheme:
        rest = url[len(scheme) + 1:]
        if _has_authority(rest) or scheme not in _DEFAULT_PORTS:
            return scheme, netloc, path, query
        # "http:page" written on an http page: browsers and RFC 3986's
        # non-strict parser read it as relative.
        url = rest
    target = _split_base(base) if base is not None else None
    if target is None:
        return None
    base_scheme, base_netloc, base_path, base_query = target
    if scheme and scheme != base_scheme:
        return None
    if _has_authority(url):
        return base_scheme, netloc, path, query
    if not path:
        has_query = "?" in url.partition("#")[0]
        return base_scheme, base_netloc, base_path, query if has_query else base_query
    if path[0] != "/":
        path = base_path[:base_path.rfind("/") + 1] + path if base_path else "/" + path
    return base_scheme, base_netloc, path, query


def _normalize_host(host: str) -> str | None:
    """Lower-case name, punycode for IDN, compressed IPv6 in brackets; None if invalid."""
    if host.startswith("["):
        return _normalize_ipv6(host)
    if not host.isascii():
        try:
            host = host.encode("idna").decode("ascii")
        except UnicodeError:
            return None
    host = host.lower()
    if len(host) > 254 or not _HOST_NAME(host):
        return None
    return host


def _normalize_ipv6(host: str) -> str | None:
    if not host.endswith("]"):
        return None
    try:
        address = ipaddress.IPv6Address(host[1:-1])
    except ValueError:
        return None
    return f"[{address.compressed}]"


def _split_netloc(netloc: str) -> tuple[str, str, str]:
    """(userinfo, host, port) with the delimiters removed."""
    userinfo, at, hostport = netloc.rpartition("@")
    if hostport.startswith("["):
        host, bracket, port = hostport.partition("]")
        return userinfo, host + bracket, port[1:] if port.startswith(":") else port
    host, _, port = hostport.partition(":")
    return userinfo, host, port


def _fold_www(host: str) -> str:
    # A loop, so that the result is itself folded (idempotence).
    while host.startswith("www.") and "." in host[4:-1]:
        host = host[4:]
    return host


def _normalize_port(scheme: str, port: str) -> str | None:
    """'' for the scheme's default (or an empty port), the decimal number else, None if invalid."""
    if not port:
        return ""
    if not (port.isascii() and port.isdigit()):
        return None
    number = int(port)
    if not 0 < number < 65536:
        return None
    port = str(number)
    return "" if port == _DEFAULT_PORTS[scheme] else port


def _normalize_authority(scheme: str, netloc: str, fold_www: bool) -> str | None:
    userinfo, host, port = _split_netloc(netloc)
    host = _normalize_host(host)
    port = _normalize_port(scheme, port)
    if host is None or port is None:
        return None
    if fold_www:
        host = _fold_www(host)
    authority = host + ":" + port if port else host
    if userinfo:
        authority = _normalize_escapes(userinfo, _USERINFO_CLEAN, _USERINFO_FIX) + "@" + authority
    return authority


# -- dropping parameters (--drop-param) ---------------------------------------------------

_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}").search
_CONTROL = re.compile(r"[\x00-\x1f\x7f]").search


def check_drop_param(pattern: str) -> str:
    """``pattern`` unchanged if it is usable as a --drop-param glob, else ValueError.

    The message is one line saying what is wrong.  A pattern is a glob over
    one parameter NAME (``*``, ``?``, ``[seq]``, ``[!seq]``; case-sensitive),
    matched against the percent-decoded name, so it may not be empty, hold
    '=' or '&' (that would be a value or a second parameter), hold a %XX
    escape (write the decoded name), control characters, or surrounding
    spaces (almost always a quoting slip).
    """
    if not pattern:
        raise ValueError("empty --drop-param pattern: give a parameter name or a glob such as utm_*")
    if "=" in pattern or "&" in pattern:
        raise ValueError(f"--drop-param {pattern!r}: give a parameter name only (no '=' or '&'), "
                         "e.g. utm_* or sessionid")
    if _ESCAPE(pattern):
        raise ValueError(f"--drop-param {pattern!r}: names are matched after percent-decoding; write the decoded name")
    if _CONTROL(pattern):
        raise ValueError(f"--drop-param {pattern!r}: control characters cannot be part of a parameter name")
    if pattern != pattern.strip():
        raise ValueError(f"--drop-param {pattern!r}: leading or trailing spaces (a quoting slip?)")
    return pattern


@functools.lru_cache(maxsize=16)
def _param_matcher(patterns: tuple[str, ...]) -> Callable[[str], re.Match | None]:
    """One compiled full-match test for all globs.  Cached: a crawl has one tuple."""
    return re.compile("|".join(f"(?:{fnmatch.translate(pattern)})" for pattern in patterns)).match


def _param_name(piece: str) -> str:
    """The name of one "name=value" (or bare "name") piece, percent-decoded as a server reads it."""
    name = piece.partition("=")[0]
    return unquote(name) if "%" in name else name


def _drop_query_params(query: str, matches: Callable[[str], re.Match | None]) -> str:
    """The query without the '&'-separated pieces whose name matches; order kept."""
    return "&".join([piece for piece in query.split("&") if not matches(_param_name(piece))])


def _drop_path_params(path: str, matches: Callable[[str], re.Match | None]) -> str:
    """The path without the ";name=value" pieces of any segment whose name matches.

    Only pieces with '=' count as parameters: in a path, ';' is more often
    plain data ("/d;p") than the key=value convention (";jsessionid=...").
    """
    segments = []
    for segment in path.split("/"):
        if ";" in segment:
            first, *pieces = segment.split(";")
            segment = ";".join([first] + [piece for piece in pieces
                                          if "=" not in piece or not matches(_param_name(piece))])
        segments.append(segment)
    return "/".join(segments)


def normalize_reference(url: str, base: str | None = None, *,
                        fold_www: bool = False, drop_query: bool = False,
                        drop_params: tuple[str, ...] = ()) -> str | None:
    """The canonical absolute http(s) form of ``url`` read on page ``base``, or None.

    Steps, in order:

    1. Strip surrounding C0 controls and spaces, delete tab/CR/LF inside, and
       read '\\' as '/' before the query (what browsers do to an href).
    2. Resolve against ``base`` (RFC 3986 section 5.2.2; "http:x" on an http
       page counts as relative, as in browsers).  An empty ``url`` means the
       base itself.
    3. Keep only http and https; lower-case the scheme.
    4. Host: lower-case; non-ASCII names to punycode (stdlib "idna" codec,
       IDNA 2003); IPv6 in compressed form; an empty or malformed host means
       None.  ``fold_www`` drops a leading "www." when at least two labels
       remain ("www.com" stays).  Userinfo is kept (escapes normalized).
    5. Port: decimal without leading zeros, 1-65535 else None; the scheme's
       default (80 / 443) and an empty port are dropped.
    6. Path and query: decode escapes of unreserved characters (ALPHA DIGIT
       - . _ ~), upper-case the hex of all other escapes, escape as UTF-8 %XX
       every character that may not appear raw (space, non-ASCII, '"<>[]^`{|}',
       a '%' that starts no escape), so the result is plain ASCII.
    7. Remove dot segments (after step 6, so "%2E%2E" counts as ".."); an
       empty path becomes "/".
    8. Drop the fragment, an empty query ("?"), and with ``drop_query`` the
       whole query.  The query is otherwise kept as written (not sorted).

    ``drop_params`` (a tuple of globs, see ``check_drop_param``) removes
    parameters by name from the path and the query: see _reference_path and
    _reference_query.

    Returns None for anything that is not http(s) after resolution (mailto:,
    javascript:, data:, ftp: ...), for a relative or empty ``url`` without a
    usable ``base``, and for unparsable input.  Idempotent:
    ``normalize(normalize(u)) == normalize(u)``.
    """
    url = _clean_input(url)
    if not url and base is None:
        return None
    try:
        target = _resolve(url, base)
        if target is None:
            return None
        scheme, netloc, path, query = target
        if scheme not in _DEFAULT_PORTS:
            return None
        authority = _normalize_authority(scheme, netloc, fold_www)
        if authority is None:
            return None
        path = _reference_path(path, drop_params)
        query = "" if drop_query else _reference_query(query, drop_params)
        return f"{scheme}://{authority}{path}?{query}" if query else f"{scheme}://{authority}{path}"
    except (ValueError, UnicodeError):
        # urlsplit rejects broken brackets; lone surrogates cannot become UTF-8.
        return None


def _reference_path(path: str, drop_params: tuple[str, ...]) -> str:
    """Steps 6 and 7 for the path, with ``drop_params`` between them: every
    ";name=value" piece of a segment whose name matches a glob goes
    (";jsessionid=" of Java servers); pieces without '=' stay.  Between the
    steps, so "..;jsessionid=1" becomes a dot segment, as servers that strip
    path parameters read it."""
    path = _normalize_escapes(path, _PATH_QUERY_CLEAN, _PATH_QUERY_FIX)
    if drop_params and ";" in path:
        path = _drop_path_params(path, _param_matcher(drop_params))
    return remove_dot_segments(path) or "/"


def _reference_query(query: str, drop_params: tuple[str, ...]) -> str:
    """Step 6 for the query, then ``drop_params``: every '&'-separated piece
    whose name (the text before its first '=', or the whole piece:
    "?sessionid" counts) matches, after percent-decoding, one glob
    (``fnmatch.fnmatchcase``: case-sensitive, as servers read names) goes;
    the others keep their order and spelling.  '+' is not read as a space
    and ';' does not separate query parameters.  "" when nothing is left
    (the '?' then goes too)."""
    if not query:
        return ""
    query = _normalize_escapes(query, _PATH_QUERY_CLEAN, _PATH_QUERY_FIX)
    return _drop_query_params(query, _param_matcher(drop_params)) if drop_params else query


# -- the fast path -----------------------------------------------------------------------
#
# Most links on real pages are plain: ASCII letters, digits and a few marks,
# no escapes, no whitespace, no authority of their own or a plain one.  For
# them every step of normalize_reference but dot-segment removal is the
# identity, so they can skip urlsplit and the escape and host rules.  Anything
# else goes to the reference, so the two can only differ if this block is wrong
# (tests compare them on the reference's whole table and on random links).
# The caches below are keyed by base or host, not by link, and bounded.

# Characters that every step leaves as they are.  No '%' (escapes are the
# reference's job) and, in a relative path, no ':' (it could start a scheme).
_PLAIN_PATH = r"A-Za-z0-9\-._~!$&'()*+,;=@/"
_PLAIN_QUERY = _PLAIN_PATH + ":?"
# Groups: scheme, host[:port] and path of an absolute URL; a path from the
# root ("/x", not "//x", which would start an authority); the leading "./" and
# "../" of a relative path and the rest of it; the query.  The match stops at
# '#': the fragment is dropped, and nothing in it changes the result.
_PLAIN_LINK = re.compile(
    rf"(?:(https?)://([A-Za-z0-9.\-]+(?::[0-9]*)?)(/[{_PLAIN_PATH}:]*)?"
    rf"|(/(?!/)[{_PLAIN_PATH}:]*)|(?!/)((?:\.\.?/)*)([{_PLAIN_PATH}]*))"
    rf"(?:\?([{_PLAIN_QUERY}]*))?(?:#|\Z)").match


def normalize(url: str, base: str | None = None, *,
              fold_www: bool = False, drop_query: bool = False,
              drop_params: tuple[str, ...] = ()) -> str | None:
    """The canonical absolute http(s) form of ``url`` read on page ``base``, or None.

    Same contract and same answers as ``normalize_reference`` (its docstring
    lists the steps); faster on plain links.  ``drop_params`` must be hashable
    (a tuple, as in the crawl's frozen config): its compiled form is cached.
    """
    if drop_params:
        return _normalize_dropping(url, base, fold_www, drop_query, drop_params)
    link = _PLAIN_LINK(url)
    if link is not None:
        scheme, netloc, absolute_path, rooted_path, dots, path, query = link.groups()
        if scheme:
            return _normalize_plain_absolute(scheme, netloc, absolute_path, query, fold_www, drop_query)
        target = _plain_base(base, fold_www) if base is not None else None
        if target is not None:
            # Written out rather than split into helpers: this runs for every link.
            origin, base_path, base_query, directory = target
            if rooted_path:
                path = remove_dot_segments(rooted_path) if "/." in rooted_path else rooted_path
            elif dots and path[:1] != "." and "/." not in path:
                ups = dots.count("..")
                # Each leading "../" drops the directory's last segment, "./" nothing.
                path = (directory.rsplit("/", ups + 1)[0] + "/" if ups else directory) + path
            elif not (dots or path):
                path = base_path
                if query is None:
                    query = base_query
            elif dots or path[0] == "." or "/." in path:
                # Dot segments past the leading ones: the general rule.
                path = remove_dot_segments(directory + dots + path)
            else:
                path = directory + path
            if query and not drop_query:
                return f"{origin}{path}?{query}"
            return origin + path
    return normalize_reference(url, base, fold_www=fold_www, drop_query=drop_query)


def _normalize_dropping(url: str, base: str | None, fold_www: bool, drop_query: bool,
                        drop_params: tuple[str, ...]) -> str | None:
    """``normalize`` with ``drop_params``: the URL without them, then its query filtered.

    Equal to the reference because, with no ';' in the link or its base, the
    path has no parameters to drop (an escaped ";" stays "%3B"), and the
    query of a normalized URL is the normalized query the reference filters.
    A ';' sends the link to the reference: dropping a path piece can make a
    dot segment, so it must come before dot-segment removal.
    """
    if ";" in url or (base is not None and ";" in base):
        return normalize_reference(url, base, fold_www=fold_www, drop_query=drop_query, drop_params=drop_params)
    result = normalize(url, base, fold_www=fold_www, drop_query=drop_query)
    if result is None or "?" not in result:
        return result
    head, _, query = result.partition("?")
    query = _drop_query_params(query, _param_matcher(drop_params))
    return f"{head}?{query}" if query else head


def _normalize_plain_absolute(scheme: str, netloc: str, path: str | None, query: str | None,
                              fold_www: bool, drop_query: bool) -> str | None:
    authority = _plain_authority(scheme, netloc, fold_www)
    if authority is None:
        return None
    if not path:
        path = "/"
    elif "/." in path:
        path = remove_dot_segments(path)
    if query and not drop_query:
        return f"{scheme}://{authority}{path}?{query}"
    return f"{scheme}://{authority}{path}"


@functools.lru_cache(maxsize=256)
def _plain_authority(scheme: str, netloc: str, fold_www: bool) -> str | None:
    # Cached: a page's absolute links mostly name its own host.  Bounded.
    return _normalize_authority(scheme, netloc, fold_www)


@functools.lru_cache(maxsize=64)
def _plain_base(base: str, fold_www: bool) -> tuple[str, str, str, str] | None:
    """What relative links need from ``base``, worked out once per page.

    (scheme://authority, normalized path, normalized query, directory), where
    directory is the base path up to its last '/'.  None when the base is not
    usable or its directory is not plain (escapes, dot segments), so that
    merging a plain relative path needs no escape rules: the reference then
    handles the page's relative links.
    """
    link = _PLAIN_LINK(base)
    if link is not None and link.group(1):
        # A plain absolute base (the usual page URL): no urlsplit, no escape rules.
        scheme, netloc, path, query = link.group(1, 2, 3, 7)
        path, query = path or "", query or ""
        authority = _plain_authority(scheme, netloc, fold_www)
        normal_path, normal_query = remove_dot_segments(path) or "/", query
    else:
        target = _split_base(base)
        if target is None:
            return None
        scheme, netloc, path, query = target
        try:
            authority = _normalize_authority(scheme, netloc, fold_www)
            normal_path = remove_dot_segments(_normalize_escapes(path, _PATH_QUERY_CLEAN, _PATH_QUERY_FIX)) or "/"
            normal_query = _normalize_escapes(query, _PATH_QUERY_CLEAN, _PATH_QUERY_FIX)
        except (ValueError, UnicodeError):
            return None
    directory = path[:path.rfind("/") + 1] or "/"
    if authority is None or not _PATH_QUERY_CLEAN(directory) or "/." in directory:
        return None
    return f"{scheme}://{authority}", normal_path, normal_query, directory

"""URL normalization: one canonical absolute http(s) URL per resource.

This module owns ``normalize(url, base)``: it resolves a link against the page
it was found on as browsers do (the WHATWG URL Standard, urlfilter/whatwg.py)
and rewrites the result into the one spelling the crawler uses for dedup,
scope rules and fetching.  It is pure: no sockets, no files, no growing caches
(the few caches are small and bounded).

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
import re
from collections.abc import Callable
from urllib.parse import unquote

from urlfilter import whatwg

__all__ = ["canonical", "check_drop_param", "document_base", "normalize", "normalize_reference"]

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


def _fold_www(host: str) -> str:
    # A loop, so that the result is itself folded (idempotence).
    while host.startswith("www.") and "." in host[4:-1]:
        host = host[4:]
    return host


def _canonical_authority(username: str, password: str, host: str, port: str, fold_www: bool) -> str:
    if fold_www:
        host = _fold_www(host)
    authority = host + ":" + port if port else host
    userinfo = username + ":" + password if password else username
    if userinfo:
        authority = _normalize_escapes(userinfo, _USERINFO_CLEAN, _USERINFO_FIX) + "@" + authority
    return authority


@functools.lru_cache(maxsize=64)
def _parsed_base(base: str) -> whatwg.Url | None:
    # Cached because every link of a page shares one base; the cache is bounded.
    return whatwg.parse(base)


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

    1. Parse ``url`` against ``base`` as a browser does (the WHATWG URL
       Standard, ``whatwg.parse``; its docstring lists the standard's steps):
       surrounding spaces and controls go, tab/CR/LF inside go, '\\' is '/'
       before the query, "http:x" on an http page is relative, an empty
       ``url`` means the base itself, hosts are lower-cased, IDNA (UTS #46)
       names become punycode, IPv4 numbers in any form become dotted decimal
       ("0x7f.1" is 127.0.0.1), IPv6 is compressed, the scheme's default
       port goes, dot segments (also "%2e") are resolved, and what may not
       stay raw is percent-encoded as UTF-8.
    2. Keep only http and https: anything else, a failure of the standard's
       parser, a relative ``url`` without a usable http(s) ``base``: None.
    3. ``fold_www`` drops a leading "www." when at least two labels remain
       ("www.com" stays).  Userinfo is kept (escapes normalized as in 4).
    4. Path and query, beyond the standard (which leaves escapes as written):
       decode escapes of unreserved characters (ALPHA DIGIT - . _ ~),
       upper-case the hex of all other escapes, and escape the characters the
       standard leaves raw but RFC 3986 does not allow ('[]^`{|}\\' and a '%'
       that starts no escape), so that path and query are plain ASCII as
       RFC 3986 allows them, one spelling per resource.  (Hosts stay as the
       standard has them: it allows some characters no DNS name has, as in
       'http://a{b/'; such a link fails when fetched, as in a browser.)
    5. Drop the fragment, an empty query ("?"), and with ``drop_query`` the
       whole query.  The query is otherwise kept as written (not sorted).

    ``drop_params`` (a tuple of globs, see ``check_drop_param``) removes
    parameters by name from the path and the query: see _reference_path and
    _reference_query.

    Idempotent: ``normalize(normalize(u)) == normalize(u)``.
    """
    parsed = whatwg.parse(url, _parsed_base(base) if base is not None else None)
    if parsed is None:
        return None
    return canonical(parsed, fold_www=fold_www, drop_query=drop_query, drop_params=drop_params)


def canonical(parsed: whatwg.Url, *, fold_www: bool = False, drop_query: bool = False,
              drop_params: tuple[str, ...] = ()) -> str:
    """Steps 3 to 5 of ``normalize_reference``: the crawler's spelling of a URL
    the standard's parser gave."""
    authority = _canonical_authority(parsed.username, parsed.password, parsed.host, parsed.port, fold_www)
    path = _reference_path(parsed.path, drop_params)
    query = "" if drop_query or not parsed.query else _reference_query(parsed.query, drop_params)
    return f"{parsed.scheme}://{authority}{path}?{query}" if query else f"{parsed.scheme}://{authority}{path}"


def document_base(page_url: str, base_href: str | None) -> str:
    """The URL a page's relative links resolve against, as HTML defines it.

    ``base_href`` (the first <base href> of the page, or None) parsed against
    ``page_url`` by the URL Standard; ``page_url`` itself when there is none,
    or when it fails to parse or is not http(s) (a crawler can follow no
    relative link of a "javascript:" base).  The standard's serialization,
    not the canonical form: the base for ``normalize``.
    """
    if base_href is None:
        return page_url
    parsed = whatwg.parse(base_href, _parsed_base(page_url))
    return page_url if parsed is None else parsed.href


def _reference_path(path: str, drop_params: tuple[str, ...]) -> str:
    """Step 4 for the path, then ``drop_params``: every ";name=value" piece of
    a segment whose name matches a glob goes (";jsessionid=" of Java
    servers); pieces without '=' stay.  Dot segments are resolved again
    after that, so "..;jsessionid=1" becomes a dot segment, as servers that
    strip path parameters read it."""
    path = _normalize_escapes(path, _PATH_QUERY_CLEAN, _PATH_QUERY_FIX)
    if drop_params and ";" in path:
        path = remove_dot_segments(_drop_path_params(path, _param_matcher(drop_params)))
    return path


def _reference_query(query: str, drop_params: tuple[str, ...]) -> str:
    """Step 4 for the query, then ``drop_params``: every '&'-separated piece
    whose name (the text before its first '=', or the whole piece:
    "?sessionid" counts) matches, after percent-decoding, one glob
    (``fnmatch.fnmatchcase``: case-sensitive, as servers read names) goes;
    the others keep their order and spelling.  '+' is not read as a space
    and ';' does not separate query parameters.  "" when nothing is left
    (the '?' then goes too)."""
    query = _normalize_escapes(query, _PATH_QUERY_CLEAN, _PATH_QUERY_FIX)
    return _drop_query_params(query, _param_matcher(drop_params)) if drop_params else query


# -- the fast path -----------------------------------------------------------------------
#
# Most links on real pages are plain: ASCII letters, digits and a few marks,
# no escapes, no whitespace, no authority of their own or a plain one.  For
# them every step of normalize_reference but dot-segment removal is the
# identity, so they can skip the parser's escape and host rules.  Anything
# else goes to the reference, so the two can only differ if this block is wrong
# (tests compare them on the reference's whole table, on the WHATWG test data
# and on random links).  The caches below are keyed by base or host, not by
# link, and bounded.

# Characters that every step leaves as they are.  No '%' (escapes are the
# reference's job), in a relative path no ':' (it could start a scheme), and
# in the query no "'" (the standard escapes it there).
_PLAIN_PATH = r"A-Za-z0-9\-._~!$&'()*+,;=@/"
_PLAIN_QUERY = r"A-Za-z0-9\-._~!$&()*+,;=@/:?"
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
    host_text, _, port_text = netloc.partition(":")
    host, port = whatwg.parse_host(host_text), whatwg.parse_port(scheme, port_text)
    if host is None or port is None:
        return None
    return _canonical_authority("", "", host, port, fold_www)


@functools.lru_cache(maxsize=64)
def _plain_base(base: str, fold_www: bool) -> tuple[str, str, str, str] | None:
    """What relative links need from ``base``, worked out once per page.

    (scheme://authority, canonical path, canonical query, directory), where
    directory is the canonical path up to its last '/'; None when the base is
    not a usable http(s) URL.  A plain relative path appended to a canonical
    directory is canonical: escapes are normalized character by character and
    never make or remove a '/', so the merge needs no escape rules.
    """
    link = _PLAIN_LINK(base)
    if link is not None and link.group(1):
        # A plain absolute base (the usual page URL): no parser, no escape rules.
        scheme, netloc, path, query = link.group(1, 2, 3, 7)
        authority = _plain_authority(scheme, netloc, fold_www)
        if authority is None:
            return None
        origin, path, query = f"{scheme}://{authority}", remove_dot_segments(path or "/"), query or ""
    else:
        parsed = _parsed_base(base)
        if parsed is None:
            return None
        origin = parsed.scheme + "://" + _canonical_authority(parsed.username, parsed.password, parsed.host,
                                                              parsed.port, fold_www)
        path, query = _reference_path(parsed.path, ()), _reference_query(parsed.query or "", ())
    return origin, path, query, path[:path.rfind("/") + 1]

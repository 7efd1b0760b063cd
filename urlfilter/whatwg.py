"""The WHATWG URL Standard's parser, for the two schemes a crawler follows.

Browsers resolve every href with the basic URL parser of the URL Standard
(https://url.spec.whatwg.org/#concept-basic-url-parser), not with RFC 3986;
a crawler that wants to follow the links a browser follows resolves them the
same way.  ``parse(text, base)`` implements the standard's steps for http and
https (the "special" schemes a crawler fetches) and answers None for every
other result: another scheme, or an input the standard rejects ("failure").

The standard writes the parser as a state machine over code points; here
each group of states is one function working on whole substrings, in the
order the standard visits them:

1. ``_clean``: strip C0 controls and spaces from both ends, delete tab, LF
   and CR everywhere, and read a lone surrogate as U+FFFD (an href is a
   scalar-value string).
2. ``parse``: the scheme ("HTTP:" counts; not http(s): None).  Then, as in
   the scheme, no-scheme, special-relative-or-authority and
   special-authority-slashes states: "http:x" on an http(s) page of the same
   scheme is relative; otherwise the slashes after "http:" (any number,
   '/' or '\\') are skipped and an authority follows.
3. ``_relative``: the relative and relative-slash states: "//" or "\\\\"
   (any mix) starts an authority, "/" a path from the root, "?" a new query,
   "#" only a new fragment, anything else a path merged with the base's.
4. ``_authority``: userinfo before the last '@' (the first ':' splits it),
   host and port up to the first '/', '\\', '?' or '#'; ``parse_host`` is the
   host parser: "[...]" is IPv6, anything else is percent-decoded, goes through
   UTS #46 ToASCII (``_domain_to_ascii``; an ASCII domain is just lower-cased)
   and, when its last label is a number, the IPv4 parser (``_ipv4``:
   "0x7f.1", "2130706433" and "127.0.0.1." are all 127.0.0.1).  The port is
   decimal digits up to 65535; the scheme's default becomes "".
5. ``_path``: segments split on '/' and '\\'; ".", "..", and their "%2e"
   spellings are resolved as they are met; each segment is percent-encoded
   (UTF-8) with the path percent-encode set.
6. The query and the fragment: percent-encoded with the special-query and the
   fragment percent-encode sets, as UTF-8.  (A browser encodes the query of a
   link on a page in another encoding, GBK say, in the page's encoding; this
   parser does not know the page.)

The answer is a ``Url`` record whose ``href`` is the standard's serialization,
byte for byte what a browser's ``a.href`` gives (tests/test_whatwg_urls.py
checks it on the standard's own test data).  Pure: no sockets, no files, no
caches.
"""
from __future__ import annotations

import ipaddress
import re
import unicodedata
from typing import NamedTuple
from urllib.parse import unquote

import idna

__all__ = ["DEFAULT_PORTS", "Url", "parse", "parse_host", "parse_port"]

DEFAULT_PORTS = {"http": "80", "https": "443"}


class Url(NamedTuple):
    """A parsed http(s) URL, each part serialized as the standard serializes it."""
    scheme: str              # "http" or "https"
    username: str            # percent-encoded; "" when absent
    password: str            # percent-encoded; "" when absent
    host: str                # lower-case ASCII domain, dotted-decimal IPv4, or "[compressed IPv6]"
    port: str                # decimal without leading zeros; "" for none or the scheme's default
    path: str                # percent-encoded, starts with "/"
    query: str | None        # percent-encoded, without its "?"; None when there is none
    fragment: str | None     # percent-encoded, without its "#"; None when there is none

    @property
    def href(self) -> str:
        """The standard's URL serializer."""
        userinfo = self.username + (":" + self.password if self.password else "")
        authority = self.host + (":" + self.port if self.port else "")
        if userinfo:
            authority = userinfo + "@" + authority
        href = f"{self.scheme}://{authority}{self.path}"
        if self.query is not None:
            href += "?" + self.query
        if self.fragment is not None:
            href += "#" + self.fragment
        return href


# -- percent-encode sets (https://url.spec.whatwg.org/#percent-encoded-bytes) --------------
# Each pattern matches a run of code points its set encodes: the C0 controls,
# space and everything above U+007E, plus the set's own ASCII characters.
def _encode_set(own: str) -> re.Pattern:
    # Written as the printable ASCII the set leaves alone: that class compiles
    # in microseconds, one holding the range up to U+10FFFF in milliseconds
    # (of every start-up).
    kept = "".join(c for c in map(chr, range(0x21, 0x7F)) if c not in own)
    return re.compile(f"[^{re.escape(kept)}]+")


_FRAGMENT_SET = _encode_set('"<>`')
_SPECIAL_QUERY_SET = _encode_set("\"#<>'")
_PATH_SET = _encode_set('"#<>?^`{}')
_USERINFO_SET = _encode_set('"#<>?^`{}/:;=@[\\]|')


def _utf8_escapes(match: re.Match) -> str:
    return "".join([f"%{byte:02X}" for byte in match.group().encode("utf-8")])


def _encode(text: str, encode_set: re.Pattern) -> str:
    return encode_set.sub(_utf8_escapes, text) if encode_set.search(text) else text


# -- 1. the input ------------------------------------------------------------------------
_C0_AND_SPACE = "".join(map(chr, range(0x21)))
_TAB_AND_NEWLINES = str.maketrans("", "", "\t\n\r")
_SURROGATE = re.compile("[\ud800-\udfff]").search


def _clean(text: str) -> str:
    text = text.strip(_C0_AND_SPACE)
    if "\t" in text or "\n" in text or "\r" in text:
        text = text.translate(_TAB_AND_NEWLINES)
    if not text.isascii() and _SURROGATE(text):
        # What turning a string into a USVString does: pairs joined, the rest U+FFFD.
        text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


# -- 2. the scheme -----------------------------------------------------------------------
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+\-.]*:").match
_SLASHES = "/\\"


def parse(text: str, base: Url | None = None) -> Url | None:
    """``text`` parsed against ``base`` as the URL Standard says; None if the
    result is a failure or not http(s).  ``base`` is a parsed http(s) URL
    (``parse(page_url)``) or None."""
    text = _clean(text)
    scheme = _SCHEME(text)
    if scheme is None:
        return _relative(text, base) if base is not None else None
    name = scheme.group()[:-1].lower()
    if name not in DEFAULT_PORTS:
        return None
    rest = text[scheme.end():]
    if base is not None and base.scheme == name and not rest.startswith("//"):
        return _relative(rest, base)
    return _authority(name, rest.lstrip(_SLASHES))


# -- 3. relative references --------------------------------------------------------------
def _relative(rest: str, base: Url) -> Url | None:
    if rest.startswith(("/", "\\")):
        if rest[1:2] in ("/", "\\"):
            return _authority(base.scheme, rest.lstrip(_SLASHES))
        return _with_path(base, [], rest[1:])
    if not rest or rest[0] == "#":
        return base._replace(fragment=_fragment(rest))
    if rest[0] == "?":
        return _with_path(base, None, rest)
    return _with_path(base, base.path.split("/")[1:-1], rest)


def _with_path(base: Url, segments: list[str] | None, rest: str) -> Url:
    """``base`` with the path, query and fragment of ``rest``; ``segments`` are
    the base path's segments the path continues from (None: the base's path)."""
    path, query, fragment = _split_tail(rest)
    return base._replace(path=base.path if segments is None else _path(segments, path),
                         query=query, fragment=fragment)


def _split_tail(rest: str) -> tuple[str, str | None, str | None]:
    """(path text, encoded query or None, encoded fragment or None)."""
    rest, hash_sign, fragment = rest.partition("#")
    path, question_mark, query = rest.partition("?")
    return (path, _encode(query, _SPECIAL_QUERY_SET) if question_mark else None,
            _encode(fragment, _FRAGMENT_SET) if hash_sign else None)


def _fragment(rest: str) -> str | None:
    return _encode(rest[1:], _FRAGMENT_SET) if rest else None


# -- 4. the authority --------------------------------------------------------------------
_AUTHORITY_END = re.compile(r"[/\\?#]").search
# The host runs to the first ':' outside brackets ("[::1]:8080").
_HOST_TEXT = re.compile(r"(?:[^:\[]|\[[^\]]*\]?)*").match


def _authority(scheme: str, rest: str) -> Url | None:
    end = _AUTHORITY_END(rest)
    authority, tail = (rest[:end.start()], rest[end.start():]) if end else (rest, "")
    userinfo, at_sign, host_and_port = authority.rpartition("@")
    if at_sign and not host_and_port:
        return None
    host_text = _HOST_TEXT(host_and_port).group()
    if not host_text:
        return None
    host, port = parse_host(host_text), parse_port(scheme, host_and_port[len(host_text) + 1:])
    if host is None or port is None:
        return None
    username, _, password = userinfo.partition(":")
    path, query, fragment = _split_tail(tail)
    return Url(scheme, _encode(username, _USERINFO_SET), _encode(password, _USERINFO_SET),
               host, port, _path([], path[1:]), query, fragment)


def parse_port(scheme: str, digits: str) -> str | None:
    """The port as serialized ("" for none or the default), None if invalid."""
    if not digits:
        return ""
    if not (digits.isascii() and digits.isdigit()) or int(digits) > 65535:
        return None
    port = str(int(digits))
    return "" if port == DEFAULT_PORTS[scheme] else port


# The forbidden domain code points: the forbidden host code points, the C0 controls, '%' and DEL.
_FORBIDDEN_IN_DOMAIN = re.compile(r"[\x00-\x20#%/:<>?@\[\\\]^|\x7f]").search


def parse_host(text: str) -> str | None:
    """The host parser for a special scheme: the serialized host, None if invalid."""
    if text.startswith("["):
        return _ipv6(text[1:-1]) if text.endswith("]") and len(text) > 1 else None
    domain = unquote(text, errors="replace") if "%" in text else text
    domain = domain.lower() if domain.isascii() else _domain_to_ascii(domain)
    if not domain or _FORBIDDEN_IN_DOMAIN(domain):
        return None
    return _ipv4(domain) if _ends_in_number(domain) else domain


_IPV6_TEXT = re.compile(r"[0-9A-Fa-f:.]+").fullmatch


def _ipv6(text: str) -> str | None:
    # ipaddress reads what the standard's IPv6 parser reads, but for zone ids
    # ("%eth0"), which the standard refuses; the character check shuts them out.
    if not _IPV6_TEXT(text):
        return None
    try:
        return f"[{ipaddress.IPv6Address(text).compressed}]"
    except ValueError:
        return None


# -- the IPv4 parser ---------------------------------------------------------------------
def _ends_in_number(domain: str) -> bool:
    labels = domain.split(".")
    if labels[-1] == "" and len(labels) > 1:
        labels.pop()
    last = labels[-1]
    return bool(last) and (last.isdigit() or _ipv4_number(last) is not None)


# The digits of each radix, checked before int(), which would also take "0x1" in
# base 16, "0o7" in base 8, signs, spaces and underscores.
_DIGITS = {10: re.compile("[0-9]+").fullmatch, 8: re.compile("[0-7]+").fullmatch,
           16: re.compile("[0-9A-Fa-f]+").fullmatch}


def _ipv4_number(text: str) -> int | None:
    """One part of an IPv4 address: decimal, "0x" hex or "0" octal; None if not a number."""
    if not text:
        return None
    radix = 10
    if text[:2] in ("0x", "0X"):
        text, radix = text[2:], 16
    elif len(text) > 1 and text[0] == "0":
        text, radix = text[1:], 8
    if not text:
        return 0
    return int(text, radix) if _DIGITS[radix](text) else None


def _ipv4(domain: str) -> str | None:
    parts = domain.split(".")
    if parts[-1] == "" and len(parts) > 1:
        parts.pop()
    numbers = [_ipv4_number(part) for part in parts]
    if len(numbers) > 4 or None in numbers or any(number > 255 for number in numbers[:-1]):
        return None
    if numbers[-1] >= 256 ** (5 - len(numbers)):
        return None
    address = numbers[-1]
    for index, number in enumerate(numbers[:-1]):
        address += number << (8 * (3 - index))
    return ".".join(str(address >> shift & 255) for shift in (24, 16, 8, 0))


# -- UTS #46 ToASCII, with the standard's options -----------------------------------------
# CheckHyphens, UseSTD3ASCIIRules and VerifyDnsLength off; CheckBidi,
# CheckJoiners and nontransitional processing on.  The mapping table and the
# joiner and bidi rules come from the idna package.
_RIGHT_TO_LEFT = frozenset(("R", "AL", "AN"))


def _domain_to_ascii(domain: str) -> str | None:
    try:
        labels = idna.uts46_remap(domain, std3_rules=False).split(".")
        decoded = [_decode_label(label) for label in labels]
        if None in decoded or not all(_valid_label(label) for label in decoded):
            return None
        if any(unicodedata.bidirectional(c) in _RIGHT_TO_LEFT for label in decoded for c in label):
            for label in filter(None, decoded):
                idna.check_bidi(label, check_ltr=True)
    except (idna.IDNAError, UnicodeError, ValueError):
        return None
    return ".".join(label if label.isascii() else "xn--" + label.encode("punycode").decode("ascii")
                    for label in labels)


def _decode_label(label: str) -> str | None:
    """A label as Unicode: an "xn--" label decoded (None if that fails or decodes to ASCII)."""
    if not label.startswith("xn--"):
        return label
    if not label.isascii():
        return None
    decoded = label[4:].encode("ascii").decode("punycode")
    return decoded if decoded and not decoded.isascii() else None


def _valid_label(label: str) -> bool:
    """UTS #46 section 4.1, the validity criteria, for the standard's options."""
    if not label:
        return True
    if label.startswith("xn--") or "." in label or unicodedata.category(label[0]).startswith("M"):
        return False
    if not unicodedata.is_normalized("NFC", label) or idna.uts46_remap(label, std3_rules=False) != label:
        return False
    return all(idna.valid_contextj(label, i) for i, c in enumerate(label) if c in "\u200c\u200d")


# -- 5. the path -------------------------------------------------------------------------
_SEGMENTS = re.compile(r"[/\\]").split
_SINGLE_DOT = frozenset((".", "%2e"))
_DOUBLE_DOT = frozenset(("..", ".%2e", "%2e.", "%2e%2e"))


def _path(segments: list[str], text: str) -> str:
    """The path state: ``text``'s segments appended to ``segments``, serialized."""
    parts = _SEGMENTS(text)
    last = len(parts) - 1
    for index, part in enumerate(parts):
        dots = part.lower() if len(part) <= 6 and part[:1] in ".%" else ""
        if dots in _DOUBLE_DOT:
            if segments:
                segments.pop()
            if index == last:
                segments.append("")
        elif dots in _SINGLE_DOT:
            if index == last:
                segments.append("")
        else:
            segments.append(_encode(part, _PATH_SET))
    return "/" + "/".join(segments)

"""The encoding a page declares in its first bytes, found as the HTML
Standard finds it.

Owns the HTML Standard's "prescan a byte stream to determine its encoding"
(https://html.spec.whatwg.org/#prescan-a-byte-stream-to-determine-its-encoding),
step by step, with its "get an attribute", "get an XML encoding" and
"algorithm for extracting a character encoding from a meta element", and
the Encoding Standard's "get an encoding" (its table of labels, as the
webencodings package carries it). ``prescan`` is the standard's algorithm
alone, over the first 1024 bytes (the standard lets a user agent stop
there, and browsers do).

``declared_encoding`` is what the crawler uses: the prescan's steps, and
one step of the crawler's own after them. A ``<meta>`` past the first 1024
bytes is read as long as only tags allowed in ``<head>`` came before it
(as Blink reads it), skipping the content of ``<script>``, ``<style>``,
``<title>`` ...: the standard honours such a late ``<meta>`` by decoding
the page again when its parser meets it ("change the encoding"), which
gives the same answer, and pages with long heads (inline styles, scripts,
social-media tags) put their ``<meta charset>`` there.

Pure: bytes in, an encoding name of the Encoding Standard out
("windows-1252", "utf-8", "shift_jis" ...), or None.
"""
from __future__ import annotations

import re
from typing import NamedTuple

from webencodings.labels import LABELS

# How far the standard's prescan reads.
PRESCAN_BYTES = 1024

_WHITESPACE = frozenset(b"\t\n\x0c\r ")
_WHITESPACE_OR_SLASH = _WHITESPACE | {0x2F}
_LETTERS = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_UTF16 = frozenset({"utf-16be", "utf-16le"})
# Tags allowed in <head> (as Blink lists them): the crawler's scan goes on
# past the first 1024 bytes only while every tag seen is one of these.
_HEAD_TAGS = frozenset({b"html", b"head", b"meta", b"link", b"script", b"noscript", b"style", b"title",
                        b"base", b"object"})
# Elements whose content is text, not markup: a "<meta" inside them is not a
# tag (the crawler's step; the standard's prescan reads it).
_RAW_TEXT = frozenset({b"script", b"style", b"title", b"noscript", b"textarea", b"xmp"})
# The markup the crawler's head scan reads: a comment, a tag (its name, and
# the rest up to ">"), or markup that is neither (<!DOCTYPE ...>, </ ...>).
_MARKUP = re.compile(rb"<!--.*?-->|<(/?)([A-Za-z][^\t\n\x0c\r />]*)[^>]*>|<[!/?][^>]*>", re.DOTALL)
_CHARSET = re.compile("charset", re.IGNORECASE)
_TAG_NAME = re.compile(rb"[^\t\n\x0c\r >]*")
# "Get an attribute": whitespace and slashes skipped, then a ">" (no
# attribute) or a name (whose first byte may be "=") and, after optional
# whitespace, an "=", optional whitespace and a value: quoted, or up to
# whitespace or ">" (without an "=", the whitespace after the name is
# read, as the standard's "spaces" step reads it). A quote that is never
# closed takes the rest of the bytes, where the standard runs out of them.
# Atomic groups and possessive quantifiers keep the expression from
# backtracking into a reading the standard's steps would not make.
_NAME = rb"[^\t\n\x0c\r />][^\t\n\x0c\r /=>]*+"
_VALUE = rb"""(?:"(?P<double>[^"]*+)"|'(?P<single>[^']*+)'|(?P<open>["'].*)|(?P<unquoted>[^\t\n\x0c\r >]*+))"""
_ATTRIBUTE = re.compile(rb"[\t\n\x0c\r /]*+(?:(?P<gt>>)|(?P<name>" + _NAME + rb")(?>[\t\n\x0c\r ]*+=[\t\n\x0c\r ]*+"
                        + _VALUE + rb"|[\t\n\x0c\r ]*+))", re.DOTALL)
# A tag's attributes, all of them up to its ">" (the value's groups unnamed).
_ATTRIBUTES = re.compile(rb"(?>[\t\n\x0c\r /]*+" + _NAME + rb"(?>[\t\n\x0c\r ]*+=[\t\n\x0c\r ]*+"
                         + re.sub(rb"\?P<\w+>", b"", _VALUE) + rb"|[\t\n\x0c\r ]*+))*+[\t\n\x0c\r /]*+>", re.DOTALL)


class Declaration(NamedTuple):
    encoding: str   # the Encoding Standard's name of the encoding
    label: str      # the label as written in the page ("" for UTF-16 XML bytes)


class _OutOfBytes(Exception):
    """The prescan ran out of bytes: it ends there (the standard's "abort")."""


def get_encoding(label: str) -> str | None:
    """The Encoding Standard's "get an encoding": the encoding a label names,
    or None (failure)."""
    return LABELS.get(label.strip("\t\n\x0c\r ").translate(_ASCII_LOWER))


def prescan(data: bytes) -> str | None:
    """The HTML Standard's prescan of the first 1024 bytes: a UTF-16 XML
    declaration's bytes, the first <meta> that declares an encoding the
    standard knows, else an XML declaration's encoding."""
    head = data[:PRESCAN_BYTES]
    found = utf16_xml_declaration(head) or _scan(head)
    return found.encoding if found else xml_encoding(head)


def declared_encoding(data: bytes) -> str | None:
    """The prescan's answer, with the crawler's scan of the rest of the
    <head> before the XML declaration step (see the module docstring)."""
    found = find_meta(data)
    if found:
        return found.encoding
    return xml_encoding(data[:PRESCAN_BYTES])


def find_meta(data: bytes) -> Declaration | None:
    """The declaration that counts, before the XML declaration step: UTF-16
    XML bytes, the prescan's <meta> in the first 1024 bytes, else a <meta>
    later in the <head>."""
    head = data[:PRESCAN_BYTES]
    found = utf16_xml_declaration(head) or _scan(head)
    if found is None and len(data) > PRESCAN_BYTES:
        found = _scan_head(data)
    return found


def utf16_xml_declaration(data: bytes) -> Declaration | None:
    """Step "prescan for UTF-16 XML declarations": "<?x" in UTF-16 without a BOM."""
    if data.startswith(b"<\x00?\x00x\x00"):
        return Declaration("utf-16le", "")
    if data.startswith(b"\x00<\x00?\x00x"):
        return Declaration("utf-16be", "")
    return None


def _scan(data: bytes) -> Declaration | None:
    """The prescan's loop, until a <meta> declares an encoding or the bytes
    run out."""
    position = 0
    try:
        while (position := data.find(b"<", position)) >= 0:  # other bytes: do nothing
            found, position = _at_less_than(data, position)
            if found:
                return found
            position += 1  # "next byte"
    except _OutOfBytes:
        pass
    return None


def _scan_head(data: bytes) -> Declaration | None:
    """The crawler's step: a <meta> anywhere while only head tags were seen,
    past the first 1024 bytes too. Markup is found by one regular
    expression (comments, tags, and <!...>, </...>, <?...>), the content of
    raw-text elements skipped; a <meta> is read by the prescan's steps, so
    an unknown label is skipped here too."""
    position, in_head = 0, True
    while (token := _MARKUP.search(data, position)) is not None:
        if not in_head and token.start() >= PRESCAN_BYTES:
            return None
        position = token.end()
        closing, name = token.group(1), (token.group(2) or b"").lower()
        if name == b"meta" and not closing:
            try:
                found, end = _meta(data, token.start() + 5)
            except _OutOfBytes:
                return None
            if found:
                return found
            position = max(position, end + 1)
        elif name in _RAW_TEXT and not closing:
            end = re.compile(rb"</" + name + rb"[\s/>]", re.IGNORECASE).search(data, position)
            position = end.start() if end else len(data)
        if name and name not in _HEAD_TAGS:
            in_head = False
    return None


def _at_less_than(data: bytes, position: int) -> tuple[Declaration | None, int]:
    """One step of the loop at a "<": (declaration found, where the step
    left the position)."""
    if data.startswith(b"<!--", position):
        end = data.find(b"-->", position + 2)  # "<!-->" ends at its own ">"
        if end < 0:
            raise _OutOfBytes
        return None, end + 2
    if data[position + 1:position + 5].lower() == b"meta" and data[position + 5:position + 6] \
            and data[position + 5] in _WHITESPACE_OR_SLASH:
        return _meta(data, position + 5)
    following = data[position + 1:position + 3]
    if following[:1] and following[0] in _LETTERS or \
            following[:1] == b"/" and following[1:2] and following[1] in _LETTERS:
        return None, _skip_tag(data, position)
    if following[:1] in (b"!", b"/", b"?"):
        end = data.find(b">", position + 1)
        if end < 0:
            raise _OutOfBytes
        return None, end
    return None, position


def _skip_tag(data: bytes, position: int) -> int:
    """Another tag: its name up to whitespace or ">", then its attributes
    (the standard's "get an attribute" until there is none): the position
    of its ">"."""
    name = _TAG_NAME.match(data, position + 1)
    attributes = _ATTRIBUTES.match(data, name.end())
    if attributes is None:
        raise _OutOfBytes
    return attributes.end() - 1


def _meta(data: bytes, position: int) -> tuple[Declaration | None, int]:
    """A "<meta" followed by whitespace or "/": its attributes, then the
    standard's "processing" steps (need pragma, got pragma, charset)."""
    seen: set[str] = set()
    got_pragma, need_pragma = False, None
    charset: Declaration | None = None
    charset_set = False
    while (attribute := _get_attribute(data, position))[0] is not None:
        name, value, position = attribute
        if name in seen:
            continue
        seen.add(name)
        if name == "http-equiv":
            got_pragma = got_pragma or value.translate(_ASCII_LOWER) == "content-type"
        elif name == "content":
            found = extract_meta_charset(value)
            if found and not charset_set:
                charset, charset_set, need_pragma = found, True, True
        elif name == "charset":
            encoding = get_encoding(value)
            charset = Declaration(encoding, value) if encoding else None
            charset_set, need_pragma = True, False
    position = attribute[2]
    if need_pragma is None or (need_pragma and not got_pragma) or charset is None:
        return None, position
    if charset.encoding in _UTF16:
        return charset._replace(encoding="utf-8"), position
    if charset.encoding == "x-user-defined":
        return charset._replace(encoding="windows-1252"), position
    return charset, position


def _get_attribute(data: bytes, position: int) -> tuple[str | None, str, int]:
    """The standard's "get an attribute": (name, value, position after it),
    or (None, "", position) when there is none (a ">" was reached).

    One regular expression reads the bytes the standard's byte-by-byte steps
    read (tests/test_prescan.py checks the two agree on random bytes). Where
    the standard would read past the end it runs out of bytes: a match that
    reaches the end other than by a closing quote (a quote with no closing
    quote takes the rest)."""
    found = _ATTRIBUTE.match(data, position)
    if found is None:  # only whitespace and slashes were left
        raise _OutOfBytes
    if found.group("gt"):
        return None, "", found.end() - 1
    value = found.group("double")
    if value is None:
        value = found.group("single")
    if value is None:  # not a closed quote: the standard reads one byte past what matched
        if found.end() >= len(data):
            raise _OutOfBytes
        value = found.group("unquoted") or b""
    return _attribute(found.group("name"), value, found.end())


def _attribute(name: bytes, value: bytes, position: int) -> tuple[str, str, int]:
    # Names are lower-cased as the standard says; values keep their case,
    # which changes nothing the prescan compares (it compares them
    # case-insensitively) and lets the label be reported as written.
    return name.decode("latin-1").translate(_ASCII_LOWER), value.decode("latin-1"), position


def extract_meta_charset(content: str) -> Declaration | None:
    """The standard's "algorithm for extracting a character encoding from a
    meta element", given a content attribute's value."""
    position = 0
    while (match := _CHARSET.search(content, position)) is not None:
        position = match.end()
        while content[position:position + 1] in ("\t", "\n", "\x0c", "\r", " ") and position < len(content):
            position += 1
        if content[position:position + 1] != "=":
            continue
        position += 1
        while content[position:position + 1] in ("\t", "\n", "\x0c", "\r", " ") and position < len(content):
            position += 1
        if position >= len(content):
            return None
        if content[position] in "\"'":
            end = content.find(content[position], position + 1)
            if end < 0:
                return None
            label = content[position + 1:end]
        else:
            label = re.match(r"[^\t\n\x0c\r ;]*", content[position:]).group()
        encoding = get_encoding(label)
        return Declaration(encoding, label) if encoding else None
    return None


def xml_encoding(data: bytes) -> str | None:
    """The standard's "get an XML encoding": the encoding a leading
    <?xml ... encoding="..."?> names (UTF-16 read as UTF-8), or None."""
    if not data.startswith(b"<?xml"):
        return None
    end = data.find(b">")
    found = data.find(b"encoding", 0, end)
    if end < 0 or found < 0:
        return None
    position = found + len(b"encoding")
    while position < len(data) and data[position] <= 0x20:
        position += 1
    if data[position:position + 1] != b"=":
        return None
    position += 1
    while position < len(data) and data[position] <= 0x20:
        position += 1
    quote = data[position:position + 1]
    if quote not in (b'"', b"'"):
        return None
    close = data.find(quote, position + 1)
    if close < 0:
        return None
    encoding = get_encoding(data[position + 1:close].decode("latin-1"))
    return "utf-8" if encoding in _UTF16 else encoding

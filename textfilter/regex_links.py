"""The design paper's GetURLs: link attributes found by regular expressions.

`scan(html, wanted)` reads the raw source once, left to right, the way an HTML
tokenizer does: at each "<" it recognises a comment, a doctype or other bogus
comment, or a tag, and steps over the bodies of raw-text elements (script,
style, title, textarea, iframe ...). So a link written inside a comment or a
script is not reported, because the scan never looks inside them. Attribute
values are decoded by the HTML rules for attributes (quoted with " or ', or
unquoted; character references decoded, except a legacy named reference such
as "&copy" directly followed by "=" or a letter or digit, as in "?a=1&copy=2").

What the regular expressions cannot do:
- see links written by JavaScript (document.write, innerHTML); no extractor
  in this package sees them;
- follow the "escaped" states inside <script>: there "<!--" followed by
  "<script>" hides a "</script>" from an HTML parser, but not from this scan,
  so a link written after that "</script>" inside the script is reported.
The disagreements with the bs4 extractor found so far are listed, with what
each extractor answers, in tests/test_links.py (KNOWN_DISAGREEMENTS).
Like libxml2 (but unlike a browser) the scan knows nothing of SVG and MathML:
their CDATA sections are bogus comments ending at the first ">".
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from html import unescape
from html.entities import html5 as _ENTITIES

# HTML's own white space: no-break space and friends are ordinary characters in markup.
_WS = r"\t\n\f\r "
_NAME = rf"[^{_WS}/>][^{_WS}/>=]*+"
# A quote left open runs to the end of the file, which then ends inside the tag.
_VALUE = rf""""[^"]*+"?|'[^']*+'?|[^{_WS}>"'][^{_WS}>]*+"""
_ATTRIBUTE = rf"({_NAME})(?:[{_WS}]*+=[{_WS}]*+({_VALUE})?)?"
# Possessive quantifiers keep every alternative linear: a tag that never closes
# is read to the end of the file once, not re-tried from each of its characters.
_TOKEN = re.compile(
    r"<!--(?:-?>|.*?--!?>|.*)"                   # comment; an unclosed one runs to the end
    r"|<(?:[!?]|/(?![A-Za-z]))[^>]*+>?"          # doctype, CDATA, <?...?>: bogus comments
    rf"|<(?P<end>/?)(?P<tag>[A-Za-z][^{_WS}/>]*+)"
    rf"(?P<attributes>(?:[{_WS}/]++|{_ATTRIBUTE})*+)"
    r"(?P<closed>>?)",                           # empty: the file ended inside the tag
    re.DOTALL,
)
_ATTRIBUTE_PARTS = re.compile(_ATTRIBUTE)
_RAW_TEXT = ("script", "style", "title", "textarea", "xmp", "iframe", "noembed", "noframes")
_RAW_TEXT_END = {
    name: re.compile(rf"</{name}(?=[{_WS}/>])", re.IGNORECASE | re.ASCII) for name in _RAW_TEXT
}
_CHARACTER_REFERENCE = re.compile(
    r"&(?:#[0-9]+;?|#[xX][0-9A-Fa-f]+;?|(?P<named>[A-Za-z][A-Za-z0-9]*)(?P<semicolon>;?))"
)


def scan(html: str, wanted: Mapping[str, str]) -> list[tuple[str, str]]:
    """(tag, value) for each start tag named in wanted that carries the attribute
    wanted[tag], in source order. Tag names are lower case; values decoded, not stripped."""
    found: list[tuple[str, str]] = []
    position = 0
    while (token := _TOKEN.search(html, position)) is not None:
        position = token.end()
        tag = (token["tag"] or "").lower()
        if not tag or token["end"] or not token["closed"]:
            continue
        if tag in wanted:
            value = _attribute(token["attributes"], wanted[tag])
            if value is not None:
                found.append((tag, value))
        position = _after_content(html, tag, position)
    return found


def _after_content(html: str, tag: str, position: int) -> int:
    """Where markup resumes after the start tag that ends at position."""
    if tag == "plaintext":
        return len(html)
    end = _RAW_TEXT_END.get(tag)
    if end is None:
        return position
    closing = end.search(html, position)
    return len(html) if closing is None else closing.start()


def _attribute(attributes: str, name: str) -> str | None:
    """The decoded value of the first attribute called name ("" if it has none)."""
    for part in _ATTRIBUTE_PARTS.finditer(attributes):
        if part[1].lower() == name:
            raw = part[2] or ""
            if raw[:1] in ("'", '"'):
                raw = raw[1:-1]
            return _decode(raw)
    return None


def _decode(raw: str) -> str:
    """An attribute value as a parser delivers it: references decoded, NUL and
    carriage returns normalised as the HTML input stream does."""
    value = raw.replace("\r\n", "\n").replace("\r", "\n").replace("\0", "\ufffd")
    if "&" not in value:
        return value
    return _CHARACTER_REFERENCE.sub(_decode_reference, value)


def _decode_reference(reference: re.Match[str]) -> str:
    text = reference[0]
    name = reference["named"]
    if name is None:
        return unescape(text)
    if reference["semicolon"]:
        return _ENTITIES.get(name + ";", text)
    following = reference.string[reference.end():reference.end() + 1]
    # Only legacy names ("amp", "copy" ...) may omit the ";", and inside an
    # attribute not when "=" follows: "?a=1&copy=2" stays as written.
    if name in _ENTITIES and following != "=":
        return _ENTITIES[name]
    return text

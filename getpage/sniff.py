"""What a body really is, judged from its bytes rather than its label.

Owns two tests: whether an unlabelled body is HTML (the WHATWG MIME
Sniffing standard's rule), and whether a body labelled as HTML is binary
data: an image, an archive, compressed or random bytes. Parsing such a body
would turn megabytes of noise into millions of "words" and bogus links.

The binary test, two steps:

1. before decoding: a NUL byte in the first 4 KiB, unless the page is
   UTF-16 by its byte order mark, its Content-Type charset or the UTF-16
   bytes of "<?x" it opens with (the HTML Standard's prescan reads these) (UTF-16 gives
   every ASCII character a NUL byte). No text encoding a web page uses
   otherwise has NUL bytes, while nearly every binary format does (it is
   also what git and grep test for); 4 KiB of random bytes lack one with
   probability (255/256)**4096, about 1 in 9 million;
2. after decoding: more than 8% of the first 4096 characters are control
   characters other than tab, line feed, form feed and carriage return.
   This catches noise that step 1 let through because it has no NUL byte:
   random bytes decode to about 11% controls in any 8-bit encoding and in
   UTF-8 (29 of 255 byte values), more than seven standard deviations
   above the line for a 4096-character sample; real pages have next to
   none.

U+FFFD replacement characters do not count: a page in GBK mislabelled as
UTF-8 decodes to mostly U+FFFD, yet its links are worth having.

Known limit: noise that carries a UTF-16 byte order mark or charset label
decodes to random characters of every script with almost no controls, and
passes. It is harmless to parse (it has no markup and no spaces, so it
yields no links and few words), and servers label binary files UTF-16
about never.

Pure: bytes in, a verdict out.
"""
from __future__ import annotations

import codecs

from . import prescan
from .charset import codec_for_label, header_charset

# How many leading bytes decide whether an unlabelled body is HTML
# (the WHATWG MIME Sniffing standard's resource header size).
SNIFF_BYTES = 512
# How much of a body the binary test looks at, in bytes and then characters.
BINARY_SAMPLE = 4096
MAX_CONTROL_SHARE = 0.08

_UTF16_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)
_CONTROL_BYTES = bytes([*range(0x00, 0x09), 0x0B, *range(0x0E, 0x20), 0x7F])

# WHATWG MIME Sniffing §7.1: tags that mark an unlabelled resource as HTML
# when they open it (after whitespace) and are followed by space or ">".
_HTML_OPENINGS = tuple(
    tag.encode()
    for tag in ("<!doctype html", "<html", "<head", "<script", "<iframe", "<h1",
                "<div", "<font", "<table", "<a", "<style", "<title", "<b",
                "<body", "<br", "<p", "<!--")
)


def looks_like_html(head: bytes) -> bool:
    """WHATWG MIME Sniffing's test for HTML on the first bytes of a body."""
    start = head.removeprefix(codecs.BOM_UTF8).lstrip(b" \t\n\r\x0c").lower()
    for tag in _HTML_OPENINGS:
        if start.startswith(tag):
            after = start[len(tag):len(tag) + 1]
            if tag == b"<!--" or after in (b" ", b">"):
                return True
    return False


def binary_bytes(body: bytes, content_type: str) -> bool:
    """Step 1, before decoding: a NUL byte early in a body that is not UTF-16.

    ``content_type`` is the raw Content-Type header value ("" if absent).
    """
    if body.startswith(_UTF16_BOMS) or prescan.utf16_xml_declaration(body) is not None:
        return False  # a BOM, or "<?x" in UTF-16 (the prescan's first step)
    codec = codec_for_label(header_charset(content_type)) or ""
    if codec.startswith("utf-16"):
        return False
    return b"\x00" in body[:BINARY_SAMPLE]


def binary_text(text: str) -> bool:
    """Step 2, after decoding: too many control characters early in the text."""
    sample = text[:BINARY_SAMPLE]
    return bool(sample) and control_count(sample) > MAX_CONTROL_SHARE * len(sample)


def control_count(text: str) -> int:
    """How many characters of ``text`` are controls other than tab, line
    feed, form feed and carriage return.

    Counted on the UTF-8 encoding, where bytes below 0x80 stand only for
    themselves (every byte of a multi-byte character is 0x80 or above), so
    each control byte is one control character; ``bytes.translate`` counts
    them several times faster than a regular expression over the text.
    """
    data = text.encode("utf-8", "surrogatepass")
    return len(data) - len(data.translate(None, _CONTROL_BYTES))

"""Turning the bytes of an HTML page into text, the way a browser would.

Owns the choice of character encoding for a page and the mapping of
encoding labels to Python codecs. Pure: bytes in, text out.

The order of evidence follows the WHATWG HTML and Encoding standards:

1. a byte order mark (UTF-8, UTF-16LE, UTF-16BE);
2. the ``charset`` parameter of the HTTP Content-Type header;
3. a ``<meta charset=...>`` or ``<meta http-equiv="Content-Type"
   content="...; charset=...">`` in the first 4 KiB;
4. detection (strict UTF-8 first, then charset-normalizer);
5. UTF-8.

The BOM comes before the header because that is what browsers do (the
Encoding Standard's "decode" lets a BOM override any label): a BOM is
almost never wrong, while a server-wide default charset often is.

Labels map the way browsers map them, which is not always the way Python
does: ``gb2312`` pages are really GBK (decoded here with gb18030, its
superset), ``iso-8859-1`` pages are really windows-1252, ``shift_jis``
pages are really Microsoft's cp932, and so on. A label nobody knows is
ignored and the next step decides.
"""
from __future__ import annotations

import codecs
import re

from charset_normalizer import from_bytes

# Where the HTML standard's prescan looks for a <meta> charset.
META_SCAN_BYTES = 4096
# Enough text for detection to be confident, small enough to keep it cheap
# on large pages (charset-normalizer's cost grows with its input).
DETECT_BYTES = 64 * 1024
FALLBACK = "utf-8"

_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)

# Labels whose browser meaning differs from Python's, from the WHATWG
# Encoding Standard's table of labels.
_BROWSER_LABELS = {
    **dict.fromkeys(
        ("gb2312", "gbk", "x-gbk", "chinese", "csgb2312", "csiso58gb231280",
         "gb_2312", "gb_2312-80", "iso-ir-58", "gb18030", "cp936", "ms936",
         "windows-936"),
        "gb18030",
    ),
    **dict.fromkeys(
        ("big5", "big5-hkscs", "cn-big5", "csbig5", "x-x-big5", "cp950"),
        "big5hkscs",
    ),
    **dict.fromkeys(
        ("shift_jis", "shift-jis", "sjis", "x-sjis", "ms_kanji", "csshiftjis",
         "ms932", "windows-31j", "cp932"),
        "cp932",
    ),
    **dict.fromkeys(
        ("iso-8859-1", "iso8859-1", "iso_8859-1", "iso88591", "latin1", "l1",
         "cp819", "ibm819", "csisolatin1", "iso-ir-100", "us-ascii", "ascii",
         "ansi_x3.4-1968", "windows-1252", "cp1252", "x-cp1252"),
        "cp1252",
    ),
    **dict.fromkeys(
        ("euc-kr", "ks_c_5601-1987", "ks_c_5601-1989", "ksc5601", "ksc_5601",
         "korean", "csksc56011987", "iso-ir-149", "windows-949", "cp949"),
        "cp949",
    ),
    **dict.fromkeys(
        ("iso-8859-9", "iso8859-9", "latin5", "l5", "windows-1254", "cp1254"),
        "cp1254",
    ),
    **dict.fromkeys(
        ("tis-620", "iso-8859-11", "iso8859-11", "windows-874", "dos-874"),
        "cp874",
    ),
    **dict.fromkeys(("utf-16", "utf-16le"), "utf-16-le"),
    "utf-16be": "utf-16-be",
}
# Labels browsers refuse: UTF-7 enables script injection, and the others
# are not text encodings a page can be written in.
_REFUSED_LABELS = frozenset({"utf-7", "unicode-1-1-utf-7", "x-user-defined", "replacement"})

_CHARSET_PARAM = re.compile(r"""charset\s*=\s*["']?\s*([^"';\s]+)""", re.IGNORECASE)
_META_CHARSET = re.compile(
    rb"""<meta\b[^>]*?\bcharset\s*=\s*["']?\s*([A-Za-z0-9_.:()-]+)""", re.IGNORECASE
)


def decode_html(body: bytes, content_type: str) -> tuple[str, str]:
    """Decode an HTML body; return (text, codec name).

    ``content_type`` is the raw Content-Type header value ("" if absent).
    The codec name is Python's canonical name for the codec used, e.g.
    "utf-8", "gb18030", "cp932". Undecodable bytes become U+FFFD; this
    never raises.
    """
    for bom, codec in _BOMS:
        if body.startswith(bom):
            return body[len(bom):].decode(codec, errors="replace"), codec
    codec = (
        codec_for_label(header_charset(content_type))
        or _meta_codec(body)
        or detect_codec(body)
    )
    return body.decode(codec, errors="replace"), codec


def header_charset(content_type: str) -> str:
    """The charset parameter of a Content-Type value, or ""."""
    match = _CHARSET_PARAM.search(content_type)
    return match.group(1) if match else ""


def codec_for_label(label: str) -> str | None:
    """Python codec name for an encoding label as a browser reads it.

    None for an empty, unknown or refused label, so the caller moves on to
    the next piece of evidence.
    """
    label = label.strip().strip("\"'").lower()
    if not label or label in _REFUSED_LABELS:
        return None
    name = _BROWSER_LABELS.get(label, label)
    try:
        # Decoding a byte raises LookupError for unknown codecs and for
        # codecs that are not text encodings (base64, rot13 ...).
        b"a".decode(name, errors="ignore")
    except LookupError:
        return None
    return codecs.lookup(name).name


def _meta_codec(body: bytes) -> str | None:
    match = _META_CHARSET.search(body[:META_SCAN_BYTES])
    if not match:
        return None
    codec = codec_for_label(match.group(1).decode("ascii"))
    # A page whose <meta> could be read as ASCII is not UTF-16, whatever it
    # claims; the HTML standard says to read it as UTF-8.
    if codec and codec.startswith("utf-16"):
        return "utf-8"
    return codec


def detect_codec(body: bytes) -> str:
    """Best guess for unlabelled bytes: UTF-8 if they are valid UTF-8.

    Valid UTF-8 with non-ASCII bytes is almost never anything else, and the
    check is far cheaper than statistical detection, which runs only when
    it fails.
    """
    sample = body[:DETECT_BYTES]
    if _is_utf8(sample, truncated=len(body) > len(sample)):
        return FALLBACK
    best = from_bytes(sample).best()
    if best is None:
        return FALLBACK
    return codec_for_label(best.encoding) or FALLBACK


def _is_utf8(sample: bytes, truncated: bool) -> bool:
    try:
        sample.decode("utf-8")
    except UnicodeDecodeError as exc:
        # A cut through the last character of a truncated sample is not
        # evidence against UTF-8.
        return truncated and exc.start >= len(sample) - 3 and exc.reason == "unexpected end of data"
    return True

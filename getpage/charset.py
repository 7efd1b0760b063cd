"""Turning the bytes of an HTML page into text, the way a browser would.

Owns the choice of character encoding for a page and the mapping of
encoding labels to Python codecs. Pure: bytes in, text out.

The order of evidence follows the WHATWG HTML and Encoding standards:

1. a byte order mark (UTF-8, UTF-16LE, UTF-16BE);
2. the ``charset`` parameter of the HTTP Content-Type header;
3. what the page declares in its first bytes, found by the HTML
   Standard's prescan (``getpage.prescan``): a ``<meta charset=...>`` or
   ``<meta http-equiv="Content-Type" content="...; charset=...">`` in the
   first 1024 bytes (a label the Encoding Standard does not know is
   skipped and the scan goes on), then, the crawler's own step, a
   ``<meta>`` later in the ``<head>``, then an ``<?xml ... encoding=...?>``;
4. detection: strict UTF-8 first, then chardet, restricted to the
   encodings web pages are written in, with windows-1252 preferred for
   Western Latin text (``detect_codec``);
5. windows-1252, the Encoding Standard's fallback for undeclared pages.

The BOM comes before the header because that is what browsers do (the
Encoding Standard's "decode" lets a BOM override any label): a BOM is
almost never wrong, while a server-wide default charset often is.

Labels map the way browsers map them, by the Encoding Standard's table
of labels, which is not always the way Python does: ``gb2312`` pages are
really GBK (decoded here with gb18030, its superset), ``iso-8859-1`` pages
are really windows-1252, ``shift_jis`` pages are really Microsoft's cp932,
and so on. A label the table does not have (``utf-32``, ``utf-7``,
``latin-1``) is ignored and the next step decides.

The codec name returned (``FetchResult.encoding``, the ``encoding`` column
of index.csv) is Python's canonical name of the codec the text was decoded
with: "utf-8", "cp1252", "iso8859-7", "gb18030" ...
"""
from __future__ import annotations

import codecs
import re

from .prescan import declared_encoding, find_meta, get_encoding

# Enough text for detection to be confident, small enough to keep it cheap
# on large pages (detection's cost grows with its input).
DETECT_BYTES = 64 * 1024
WHATWG_FALLBACK = "cp1252"
# windows-1252 wins over another Latin code page when the detector scores it
# at least this share of the winner's confidence and the text reads as
# Western Latin (experiments/README.md, "Charsets").
WESTERN_MARGIN = 0.9

_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)

# The Encoding Standard's encodings (by their names in its label table,
# which webencodings carries) and the Python codec each is decoded with.
# GBK is decoded as gb18030, its superset, as the standard's GBK decoder
# does; Big5 as big5hkscs, Shift_JIS as cp932, EUC-KR as cp949, the
# Microsoft supersets the standard's decoders are. Two of the standard's
# encodings are missing, so a label of theirs counts as unknown:
# "replacement" (the labels of ISO-2022-KR, HZ and other encodings browsers
# refuse, which a browser decodes as one U+FFFD: nothing a crawler can use)
# and x-user-defined (binary data in disguise; in a <meta> the prescan turns
# it into windows-1252).
_PYTHON_CODECS = {
    "utf-8": "utf-8", "ibm866": "cp866", "koi8-r": "koi8-r", "koi8-u": "koi8-u",
    **{f"iso-8859-{n}": f"iso8859-{n}" for n in (2, 3, 4, 5, 6, 7, 8, 10, 13, 14, 15, 16)},
    "iso-8859-8-i": "iso8859-8", "macintosh": "mac-roman", "x-mac-cyrillic": "mac-cyrillic",
    "windows-874": "cp874", **{f"windows-{n}": f"cp{n}" for n in range(1250, 1259)},
    "gbk": "gb18030", "gb18030": "gb18030", "big5": "big5hkscs", "euc-jp": "euc_jp",
    "iso-2022-jp": "iso2022_jp", "shift_jis": "cp932", "euc-kr": "cp949",
    "utf-16be": "utf-16-be", "utf-16le": "utf-16-le",
}

_CHARSET_PARAM = re.compile(r"""charset\s*=\s*["']?\s*([^"';\s]+)""", re.IGNORECASE)

# Latin code pages the detector may prefer over windows-1252 on short or
# ambiguous text (the WESTERN_MARGIN rule).
_LATIN = frozenset({"cp1250", "iso8859-2", "cp1254", "cp1257", "iso8859-13", "iso8859-15", "cp1258"})
# What the detector may answer: the Encoding Standard's encodings that pages
# were written in, without the Mac and rare ISO code pages, which it
# otherwise picks for short Western text. Names as chardet spells them.
_DETECTABLE = (
    "cp1250", "cp1251", "cp1252", "cp1253", "cp1254", "cp1255", "cp1256", "cp1257", "cp1258", "cp874",
    "koi8-r", "koi8-u", "iso8859-2", "iso8859-5", "iso8859-6", "iso8859-7", "iso8859-8", "iso8859-13",
    "iso8859-15", "gb18030", "big5hkscs", "cp932", "shift_jis_2004", "euc_jis_2004", "euc_kr", "cp949",
    "iso2022_jp_2", "utf-16", "utf-16-le", "utf-16-be",
)
# windows-1252's five unassigned bytes.
_CP1252_UNDEFINED = re.compile(rb"[\x81\x8d\x8f\x90\x9d]")
# Non-ASCII characters that sit inside words in real text: apostrophes,
# hyphens, the Catalan middle dot.
_IN_WORD_MARKS = frozenset("’‘‐‑·ʼ")
_NON_ASCII = re.compile(r"[^\x00-\x7f]")
# The non-ASCII letters of languages written in windows-1252, one alphabet
# each (lower case). Text in another code page, read as windows-1252,
# mixes letters no one of them has: Latvian "ā š ē" become "â ð ç".
_WESTERN_ALPHABETS = tuple(frozenset(letters) for letters in (
    "àâæçéèêëîïôœùûüÿ",     # French
    "äöüßéà",               # German
    "áéíñóúü",              # Spanish, Galician
    "áâãàçéêíóôõú",         # Portuguese
    "àèéìíîòóùú",           # Italian
    "áàéèëïíóöúüêô",        # Dutch, Afrikaans
    "åäöéü",                # Swedish
    "æøåéèóòôü",            # Danish, Norwegian
    "äöåšž",                # Finnish
    "äöõüšž",               # Estonian
    "àçéèíïòóúü",           # Catalan
    "áðéíóúýþæö",           # Icelandic
    "áíóúýæøð",             # Faroese
    "áéíóú",                # Irish
    "ëç",                   # Albanian
    "ñ",                    # Basque
))


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
        or meta_codec(body)
        or detect_codec(body)
    )
    return body.decode(codec, errors="replace"), codec


def header_charset(content_type: str) -> str:
    """The charset parameter of a Content-Type value, or ""."""
    match = _CHARSET_PARAM.search(content_type)
    return match.group(1) if match else ""


def codec_for_label(label: str) -> str | None:
    """Python codec name for an encoding label as a browser reads it: the
    Encoding Standard's table of labels.

    None for an empty or unknown label, and for the labels of
    "replacement" and x-user-defined (see _PYTHON_CODECS), so the caller
    moves on to the next piece of evidence.
    """
    return _python_codec(get_encoding(label.strip().strip("\"'")))


def meta_codec(body: bytes) -> str | None:
    """The codec a page declares in its first bytes (``getpage.prescan``):
    the HTML Standard's prescan, with the crawler's scan of the rest of the
    ``<head>`` before its XML declaration step."""
    encoding = declared_encoding(body)
    # An XML declaration naming x-user-defined is read as the prescan reads
    # a <meta> naming it.
    return _python_codec("windows-1252" if encoding == "x-user-defined" else encoding)


def find_meta_charset(body: bytes) -> str:
    """The charset label of the ``<meta>`` that declares the page's encoding,
    as written, or "" (see ``getpage.prescan.find_meta``)."""
    found = find_meta(body)
    return found.label if found else ""


def _python_codec(encoding: str | None) -> str | None:
    name = _PYTHON_CODECS.get(encoding) if encoding else None
    return codecs.lookup(name).name if name else None


def _detected_codec(name: str) -> str | None:
    """Python codec for a name chardet answers: a label of the Encoding
    Standard ("ISO-8859-1" is windows-1252 there), else Python's own name
    ("shift_jis_2004", "cp949")."""
    codec = codec_for_label(name)
    if codec:
        return codec
    try:
        return codecs.lookup(name).name
    except LookupError:
        return None


def detect_codec(body: bytes, western_margin: float = WESTERN_MARGIN) -> str:
    """Best guess for unlabelled bytes.

    UTF-8 if they are valid UTF-8: valid UTF-8 with non-ASCII bytes is
    almost never anything else, and the check is far cheaper than
    statistical detection. Otherwise chardet's best among the encodings web
    pages are written in, except that windows-1252 -- the web's most common
    legacy encoding and the Encoding Standard's default for Western pages
    -- wins over another Latin code page when chardet scores the two close
    and the text reads as Western Latin (see ``reads_as_western``). Short
    Catalan, French or Dutch text scores close to windows-1250, whose
    letters sit on the same bytes. windows-1252 when chardet has no answer.
    ``western_margin`` is that closeness (a share of chardet's best score).
    """
    sample = body[:DETECT_BYTES]
    if _is_utf8(sample, truncated=len(body) > len(sample)):
        return "utf-8"
    scores = _detector_scores(sample)
    if not scores:
        return WHATWG_FALLBACK
    best, confidence = next(iter(scores.items()))
    if (best in _LATIN and scores.get("cp1252", 0.0) >= western_margin * confidence
            and reads_as_western(sample)):
        return "cp1252"
    return best


def _detector_scores(sample: bytes) -> dict[str, float]:
    """chardet's candidates as {codec: confidence}, best first, named as
    codec_for_label names them (its "ISO-8859-1" is windows-1252)."""
    import chardet   # imported on the first page that needs it: ~30 MB of models

    scores: dict[str, float] = {}
    for guess in chardet.detect_all(sample, include_encodings=_DETECTABLE):
        codec = _detected_codec(guess["encoding"] or "")
        if codec and codec not in scores:
            scores[codec] = guess["confidence"]
    return scores


def reads_as_western(sample: bytes) -> bool:
    """Whether the bytes, read as windows-1252, look like text in one Western
    language: none of its unassigned bytes, no symbol or sign between two
    letters (where other code pages put letters: Polish "ł" is
    windows-1252's "³"), and non-ASCII letters all from one alphabet of
    _WESTERN_ALPHABETS."""
    if _CP1252_UNDEFINED.search(sample):
        return False
    text = sample.decode("cp1252")
    letters = set()
    for match in _NON_ASCII.finditer(text):
        index, char = match.start(), match.group()
        if char.isalpha():
            letters.add(char.lower())
        elif char not in _IN_WORD_MARKS and 0 < index < len(text) - 1 \
                and text[index - 1].isalpha() and text[index + 1].isalpha():
            return False
    return any(letters <= alphabet for alphabet in _WESTERN_ALPHABETS)


def _is_utf8(sample: bytes, truncated: bool) -> bool:
    try:
        sample.decode("utf-8")
    except UnicodeDecodeError as exc:
        # A cut through the last character of a truncated sample is not
        # evidence against UTF-8.
        return truncated and exc.start >= len(sample) - 3 and exc.reason == "unexpected end of data"
    return True

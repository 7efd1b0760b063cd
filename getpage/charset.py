"""Turning the bytes of an HTML page into text, the way a browser would.

Owns the choice of character encoding for a page and the mapping of
encoding labels to Python codecs. Pure: bytes in, text out.

The order of evidence follows the WHATWG HTML and Encoding standards:

1. a byte order mark (UTF-8, UTF-16LE, UTF-16BE);
2. the ``charset`` parameter of the HTTP Content-Type header;
3. a ``<meta charset=...>`` or ``<meta http-equiv="Content-Type"
   content="...; charset=...">`` (``find_meta_charset``: the first
   1024 bytes and the rest of the ``<head>``);
4. detection: strict UTF-8 first, then chardet, restricted to the
   encodings web pages are written in, with windows-1252 preferred for
   Western Latin text (``detect_codec``);
5. windows-1252, the Encoding Standard's fallback for undeclared pages.

The BOM comes before the header because that is what browsers do (the
Encoding Standard's "decode" lets a BOM override any label): a BOM is
almost never wrong, while a server-wide default charset often is.

Labels map the way browsers map them, which is not always the way Python
does: ``gb2312`` pages are really GBK (decoded here with gb18030, its
superset), ``iso-8859-1`` pages are really windows-1252, ``shift_jis``
pages are really Microsoft's cp932, and so on. A label nobody knows is
ignored and the next step decides.

The codec name returned (``FetchResult.encoding``, the ``encoding`` column
of index.csv) is Python's canonical name of the codec the text was decoded
with: "utf-8", "cp1252", "iso8859-7", "gb18030" ...
"""
from __future__ import annotations

import codecs
import re

# The HTML standard's prescan reads this many bytes; a <meta> later in the
# <head> is honoured too (see find_meta_charset).
META_PRESCAN_BYTES = 1024
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
    **dict.fromkeys(("iso-8859-8-i", "iso_8859-8-i", "csiso88598i", "logical", "visual",
                     "iso-8859-8", "iso8859-8", "iso_8859-8", "hebrew", "csisolatinhebrew"), "iso8859-8"),
    **dict.fromkeys(("koi8-ru", "koi8-u"), "koi8-u"),
    **dict.fromkeys(("macintosh", "mac", "x-mac-roman", "csmacintosh"), "mac-roman"),
    "x-mac-cyrillic": "mac-cyrillic", "x-mac-ukrainian": "mac-cyrillic",
    **dict.fromkeys(("utf-16", "utf-16le"), "utf-16-le"),
    "utf-16be": "utf-16-be",
}
# Labels browsers refuse: UTF-7 enables script injection, and the others
# are not text encodings a page can be written in.
_REFUSED_LABELS = frozenset({"utf-7", "unicode-1-1-utf-7", "x-user-defined", "replacement"})

_CHARSET_PARAM = re.compile(r"""charset\s*=\s*["']?\s*([^"';\s]+)""", re.IGNORECASE)

# The tokens find_meta_charset reads: a comment, a tag (name and the rest up
# to ">"), or markup that is neither (<!DOCTYPE ...>, </ ...>, <?xml ...?>).
_MARKUP = re.compile(rb"<!--.*?-->|<(/?)([A-Za-z][^\s/>]*)([^>]*)>|<[!/?][^>]*>", re.DOTALL)
_ATTRIBUTE = re.compile(rb"""([^\s"'=/>]+)(?:\s*=\s*("[^"]*"|'[^']*'|[^\s>]+))?""")
# Tags allowed in <head> (as Blink lists them): the scan goes on past the
# prescan's 1024 bytes only while every tag seen is one of these.
_HEAD_TAGS = frozenset({b"html", b"head", b"meta", b"link", b"script", b"noscript", b"style", b"title",
                        b"base", b"object"})
# Elements whose content is text, not markup: a "<meta" inside them is not a tag.
_RAW_TEXT = frozenset({b"script", b"style", b"title", b"noscript", b"textarea", b"xmp"})
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


def meta_codec(body: bytes) -> str | None:
    """The codec a page's ``<meta>`` declares, or None."""
    codec = codec_for_label(find_meta_charset(body))
    # A page whose <meta> could be read as ASCII is not UTF-16, whatever it
    # claims; the HTML standard says to read it as UTF-8.
    if codec and codec.startswith("utf-16"):
        return "utf-8"
    return codec


def find_meta_charset(body: bytes) -> str:
    """The charset label of the first ``<meta>`` that declares one, or "".

    Read the way Blink reads it: every tag in the first 1024 bytes (the
    HTML standard's prescan), and after them, as long as only tags allowed
    in ``<head>`` were seen. The standard itself honours a later ``<meta>``
    by decoding the page again ("change the encoding"); scanning the head
    gives a crawler the same answer without a second parse, and pages with
    long heads (inline styles, scripts, social-media tags) put their
    ``<meta charset>`` past the first KiB. Comments and the content of
    ``<script>``, ``<style>``, ``<title>`` ... are skipped, so a "<meta" in
    them is not read.
    """
    position, in_head = 0, True
    while (token := _MARKUP.search(body, position)) is not None:
        if not in_head and token.start() >= META_PRESCAN_BYTES:
            return ""
        position = token.end()
        closing, name = token.group(1), (token.group(2) or b"").lower()
        if name == b"meta" and not closing and (label := _meta_label(token.group(3))):
            return label
        if name in _RAW_TEXT and not closing:
            end = re.compile(rb"</" + name + rb"[\s/>]", re.IGNORECASE).search(body, position)
            position = end.start() if end else len(body)
        if name and name not in _HEAD_TAGS:
            in_head = False
    return ""


def _meta_label(attributes: bytes) -> str:
    """The label a <meta>'s attributes declare: its charset, or the charset in
    the content of an http-equiv="content-type" (the HTML standard's rules)."""
    values = {}
    for match in _ATTRIBUTE.finditer(attributes):
        name = match.group(1).lower().decode("ascii", "replace")
        values.setdefault(name, (match.group(2) or b"").strip(b"\"'").decode("ascii", "replace"))
    if values.get("charset"):
        return values["charset"]
    if values.get("http-equiv", "").strip().lower() == "content-type":
        return header_charset(values.get("content", ""))
    return ""


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
        codec = codec_for_label(guess["encoding"] or "")
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

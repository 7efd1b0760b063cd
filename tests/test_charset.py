"""charset.decode_html: the encoding of a page chosen the way browsers choose it;
and sniff's binary test, which must pass every real page in every encoding."""
import codecs
import gzip
import random
import re
import sys
from pathlib import Path

import pytest
from getpage_stub import local_config

from demosite import Response
from getpage import Fetcher
from getpage.charset import (codec_for_label, decode_html, detect_codec, find_meta_charset, header_charset,
                             reads_as_western)
from getpage.sniff import binary_bytes, binary_text, control_count

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "experiments"))
from charset_corpus import LANGUAGES, short_excerpts  # noqa: E402

CHINESE = "北京是中华人民共和国的首都，也是全国的政治、文化和国际交往中心。长城是中国古代的军事防御工程，绵延数千公里。"
TRADITIONAL = "臺灣是位於東亞的島嶼，首都是臺北市。這裡的夜市文化非常有名，每年吸引許多觀光客前來品嚐小吃。"
JAPANESE = "日本の首都は東京です。富士山は日本で一番高い山で、桜の季節にはたくさんの人が花見を楽しみます。"
# 𠮷 and 䶵 are outside GBK: only GB18030's four-byte sequences encode them.
GB18030_ONLY = "吉野家的“𠮷”字和䶵字只有GB18030能编码。"


def html(sentence, head=""):
    return f"<!DOCTYPE html><html><head>{head}<title>t</title></head><body><p>{sentence}</p></body></html>"


CASES = [  # (name, text, python codec used to encode, header label, codec expected)
    ("gbk", CHINESE, "gbk", "gbk", "gb18030"),
    ("gb2312 label", CHINESE, "gbk", "gb2312", "gb18030"),
    ("gb18030", GB18030_ONLY, "gb18030", "gb18030", "gb18030"),
    ("big5", TRADITIONAL, "big5", "big5", "big5hkscs"),
    ("shift_jis", JAPANESE, "shift_jis", "shift_jis", "cp932"),
    ("utf-8", CHINESE + JAPANESE, "utf-8", "utf-8", "utf-8"),
]


@pytest.mark.parametrize("name, sentence, codec, label, expected", CASES, ids=[c[0] for c in CASES])
def test_labelled_by_http_header(name, sentence, codec, label, expected):
    page = html(sentence)
    text, used = decode_html(page.encode(codec), f"text/html; charset={label}")
    assert (text, used) == (page, expected)


@pytest.mark.parametrize("name, sentence, codec, label, expected", CASES, ids=[c[0] for c in CASES])
def test_labelled_by_meta_charset(name, sentence, codec, label, expected):
    page = html(sentence, head=f'<meta charset="{label}">')
    text, used = decode_html(page.encode(codec), "text/html")
    assert (text, used) == (page, expected)


@pytest.mark.parametrize("name, sentence, codec, label, expected", CASES, ids=[c[0] for c in CASES])
def test_labelled_by_meta_http_equiv(name, sentence, codec, label, expected):
    meta = f'<META HTTP-EQUIV="Content-Type" CONTENT="text/html; charset={label.upper()}">'
    page = html(sentence, head=meta)
    text, used = decode_html(page.encode(codec), "")
    assert (text, used) == (page, expected)


@pytest.mark.parametrize(
    "sentence, codec",
    [(CHINESE * 3, "gbk"), (TRADITIONAL * 3, "big5"), (JAPANESE * 3, "shift_jis"),
     (CHINESE + JAPANESE, "utf-8")],
    ids=["gbk", "big5", "shift_jis", "utf-8"],
)
def test_unlabelled_pages_are_detected(sentence, codec):
    page = html(sentence)
    text, _ = decode_html(page.encode(codec), "text/html")
    assert text == page


def test_utf8_bom_is_honoured_and_stripped():
    page = html(CHINESE)
    text, used = decode_html(codecs.BOM_UTF8 + page.encode("utf-8"), "text/html")
    assert (text, used) == (page, "utf-8")


@pytest.mark.parametrize("codec, bom, expected", [
    ("utf-16-le", codecs.BOM_UTF16_LE, "utf-16-le"),
    ("utf-16-be", codecs.BOM_UTF16_BE, "utf-16-be"),
])
def test_utf16_with_bom(codec, bom, expected):
    page = html(JAPANESE)
    text, used = decode_html(bom + page.encode(codec), "text/html")
    assert (text, used) == (page, expected)


def test_bom_beats_a_header_label_as_in_browsers():
    page = html(CHINESE)
    text, used = decode_html(codecs.BOM_UTF8 + page.encode("utf-8"), "text/html; charset=gbk")
    assert (text, used) == (page, "utf-8")


def test_header_beats_meta_even_when_it_lies():
    body = html(CHINESE, head='<meta charset="gbk">').encode("gbk")
    text, used = decode_html(body, "text/html; charset=iso-8859-1")
    assert used == "cp1252"
    assert text == body.decode("cp1252", errors="replace")
    assert CHINESE not in text


def test_unknown_header_label_falls_through_to_meta():
    page = html(CHINESE, head='<meta charset="gbk">')
    text, used = decode_html(page.encode("gbk"), "text/html; charset=no-such-charset")
    assert (text, used) == (page, "gb18030")


def test_meta_in_the_first_1024_bytes_is_read_even_in_the_body():
    page = "<html><body><p>" + "x" * 900 + '</p><meta charset="koi8-r"></body></html>'
    assert decode_html(page.encode("ascii"), "text/html")[1] == "koi8-r"


def test_meta_past_1024_bytes_outside_the_head_is_not_read():
    page = "<html><body><p>" + "x" * 1100 + '</p><meta charset="koi8-r"></body></html>'
    assert decode_html(page.encode("ascii"), "text/html")[1] == "utf-8"


def test_meta_late_in_a_long_head_is_read_as_blink_reads_it():
    style = "<style>" + "p { margin: 0 }\n" * 200 + "</style>"
    page = f'<html><head><title>t</title>{style}<link rel="icon" href="/i"><meta charset="koi8-r"></head>'
    assert page.index("<meta charset") > 3000
    assert find_meta_charset(page.encode("ascii")) == "koi8-r"


@pytest.mark.parametrize("hidden", [
    '<!-- <meta charset="koi8-r"> -->',
    '<meta name="description" content="charset=koi8-r">',
])
def test_meta_text_that_is_not_a_declaration_is_not_read(hidden):
    page = f"<html><head>{hidden}</head><body><p>caf\xe9</p></body></html>"
    assert find_meta_charset(page.encode("latin-1")) == ""


@pytest.mark.parametrize("hidden", [
    '<script>document.write(\'<meta charset="koi8-r">\')</script>',
    '<title>about <meta charset="koi8-r"></title>',
])
def test_meta_text_in_raw_text_past_1024_bytes_is_not_read(hidden):
    # The HTML Standard's prescan reads a "<meta" anywhere in the first 1024
    # bytes, inside <script> or <title> too (tests/test_prescan.py); the
    # crawler's scan of the rest of the head reads tags only.
    style = "<style>" + "p { margin: 0 }\n" * 80 + "</style>"
    page = f"<html><head>{style}{hidden}</head><body><p>caf\xe9</p></body></html>"
    assert page.index("<meta") > 1024
    assert find_meta_charset(page.encode("latin-1")) == ""


@pytest.mark.parametrize("meta, label", [
    ('<meta charset="windows-1250">', "windows-1250"),
    ("<meta charset=koi8-r>", "koi8-r"),
    ("<META CHARSET='Shift_JIS'/>", "Shift_JIS"),
    ('<meta content="text/html; charset=euc-kr" http-equiv="content-type">', "euc-kr"),
    ('<meta http-equiv=Content-Type content="text/html;charset=\'big5\'">', "big5"),
])
def test_meta_declarations_in_their_spellings(meta, label):
    assert find_meta_charset(f"<!DOCTYPE html><html><head>{meta}</head></html>".encode("ascii")) == label


def test_meta_beats_detection_even_when_it_lies():
    body = html("Le coût de la vie a beaucoup augmenté, même pour les élèves.",
                head='<meta charset="windows-1250">').encode("cp1252")
    text, used = decode_html(body, "text/html")
    assert (text, used) == (body.decode("cp1250"), "cp1250")


def test_meta_claiming_utf16_is_read_as_utf8():
    page = html(CHINESE, head='<meta charset="utf-16">')
    text, used = decode_html(page.encode("utf-8"), "text/html")
    assert (text, used) == (page, "utf-8")


def test_bad_bytes_become_replacement_characters():
    text, used = decode_html(b"<p>caf\xc3</p>", "text/html; charset=utf-8")
    assert (text, used) == ("<p>caf\ufffd</p>", "utf-8")


def test_empty_unlabelled_body_is_utf8():
    assert decode_html(b"", "") == ("", "utf-8")


@pytest.mark.parametrize("label, codec", [
    ("GB2312", "gb18030"), ("x-gbk", "gb18030"), ("chinese", "gb18030"), ("GBK", "gb18030"),
    ("big5", "big5hkscs"), ("sjis", "cp932"), ("x-sjis", "cp932"), ("Shift_JIS", "cp932"),
    ("iso-8859-1", "cp1252"), ("latin1", "cp1252"), ("US-ASCII", "cp1252"), ("ascii", "cp1252"),
    ("euc-kr", "cp949"), ("utf8", "utf-8"), ("UTF-8", "utf-8"), ("koi8-r", "koi8-r"),
    ("euc-jp", "euc_jp"), (' "utf-8" ', "utf-8"), ("windows-1250", "cp1250"), ("iso-8859-2", "iso8859-2"),
    ("iso-8859-7", "iso8859-7"), ("windows-1253", "cp1253"), ("ISO-8859-9", "cp1254"), ("latin5", "cp1254"),
    ("TIS-620", "cp874"), ("windows-874", "cp874"), ("iso-8859-11", "cp874"), ("iso-8859-8-i", "iso8859-8"),
    ("koi8-ru", "koi8-u"), ("KOI8-U", "koi8-u"), ("x-mac-cyrillic", "mac-cyrillic"), ("macintosh", "mac-roman"),
    ("ks_c_5601-1987", "cp949"), ("windows-1257", "cp1257"),
    ("utf-7", None), ("base64", None), ("rot13", None), ("no-such-thing", None), ("", None),
])
def test_labels_map_as_browsers_map_them(label, codec):
    assert codec_for_label(label) == codec


@pytest.mark.parametrize("value, charset", [
    ("text/html; charset=UTF-8", "UTF-8"),
    ('text/html; charset="gbk"', "gbk"),
    ("text/html;charset=big5;foo=bar", "big5"),
    ("text/html", ""),
    ("", ""),
])
def test_header_charset_parameter(value, charset):
    assert header_charset(value) == charset


# -- binary garbage behind an HTML label (getpage.sniff) ---------------------------


def is_binary(body, content_type):
    """The Fetcher's two steps: the bytes, then the decoded text."""
    return binary_bytes(body, content_type) or binary_text(decode_html(body, content_type)[0])


REAL_PAGES = [  # (name, body, Content-Type)
    *[(f"{c[0]}, labelled", html(c[1] * 20).encode(c[2]), f"text/html; charset={c[3]}") for c in CASES],
    *[(f"{c[0]}, unlabelled", html(c[1] * 20).encode(c[2]), "text/html") for c in CASES],
    ("utf-16-le with bom", codecs.BOM_UTF16_LE + html(CHINESE * 20).encode("utf-16-le"), "text/html"),
    ("utf-16-be with bom", codecs.BOM_UTF16_BE + html(JAPANESE * 20).encode("utf-16-be"), "text/html"),
    ("utf-16 by its label", html(TRADITIONAL * 20).encode("utf-16-le"), "text/html; charset=utf-16"),
    ("a few control characters", html("\x1b[1mbold\x1b[0m log line, \x0b a tab " * 5).encode(),
     "text/html"),
    ("gbk mislabelled as utf-8", html(CHINESE * 20).encode("gbk"), "text/html; charset=utf-8"),
    ("empty", b"", "text/html"),
    ("tiny", b"<p>hi</p>", "text/html"),
]


@pytest.mark.parametrize("name, body, content_type", REAL_PAGES, ids=[p[0] for p in REAL_PAGES])
def test_real_pages_are_not_binary(name, body, content_type):
    assert not is_binary(body, content_type)


GARBAGE = [  # (name, body, Content-Type)
    ("random bytes", random.Random(1).randbytes(50_000), "text/html"),
    ("random bytes, labelled utf-8", random.Random(2).randbytes(50_000), "text/html; charset=utf-8"),
    ("random bytes without NULs", bytes(b for b in random.Random(3).randbytes(50_000) if b), "text/html"),
    ("gzip data", gzip.compress(random.Random(5).randbytes(20_000), mtime=0), "text/html"),
    ("png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x01\x00" + bytes(300), "text/html"),
    ("html then a NUL", b"<html><body>" + b"a" * 1000 + b"\x00" + b"b" * 100, "text/html"),
]


@pytest.mark.parametrize("name, body, content_type", GARBAGE, ids=[g[0] for g in GARBAGE])
def test_binary_data_is_recognised(name, body, content_type):
    assert is_binary(body, content_type)


def test_only_the_first_4_kib_is_examined():
    late_nul = b"<html><body>" + b"a" * 5000 + b"\x00" + b"</body></html>"
    assert not binary_bytes(late_nul, "text/html")


def test_control_characters_are_counted_exactly():
    """control_count counts on UTF-8 bytes; the count must be the one of the
    text's characters, whatever the script (and lone surrogates too)."""
    reference = re.compile("[\x00-\x08\x0b\x0e-\x1f\x7f]")
    rng = random.Random(11)
    ranges = [(0, 0x80), (0x80, 0x800), (0x800, 0xD800), (0xD800, 0xE000), (0x10000, 0x110000)]
    for _ in range(3000):
        text = "".join(chr(rng.randrange(*rng.choice(ranges))) for _ in range(rng.randrange(60)))
        assert control_count(text) == len(reference.findall(text)), ascii(text)
    assert control_count("\t\n\x0c\r é 北 \x80\x9f") == 0  # C1 controls are not counted, as before
    assert control_count("\x00\x1b\x7f\x0b") == 4


def test_the_control_share_limit_is_8_percent():
    assert not binary_text("\x01" * 8 + "a" * 92)
    assert binary_text("\x01" * 9 + "a" * 91)


# -- detection: undeclared pages in single-byte code pages ---------------------------


WESTERN_CASES = [  # (language, sentence): undeclared windows-1252, the reported failures first
    ("French", "Le coût de la vie a beaucoup augmenté, et même les élèves disent que ce quartier est très "
               "sûr. Ma sœur préfère les œuvres de Molière."),
    ("Dutch", "De coördinatie tussen de ziekenhuizen in België verloopt beter; de ideeën van het nieuwe "
              "bestuur en het financiële rapport zijn naïef."),
    ("Swedish", "På vintern blir det mörkt redan vid tretiden, så vi tänder ljus i alla fönster och åker "
                "skridskor på sjön."),
    ("German", "Die Straßenbahn fährt alle zehn Minuten zur Universität, außer am Wochenende, sagt der "
               "Bürgermeister."),
]


@pytest.mark.parametrize("language, sentence", WESTERN_CASES, ids=[c[0] for c in WESTERN_CASES])
def test_undeclared_western_page_is_windows_1252(language, sentence):
    page = html(sentence)
    assert decode_html(page.encode("cp1252"), "text/html") == (page, "cp1252")


def test_undeclared_greek_iso_8859_7_keeps_its_accented_capitals():
    """ISO-8859-7 and windows-1253 put Ά on different bytes; read with the other one it becomes ¶ or ¢."""
    page = html("Άνοιξη στην Αθήνα. Ο Όλυμπος είναι το ψηλότερο βουνό της Ελλάδας. Έχουμε εισιτήρια "
                "για το πλοίο των οκτώ.")
    text, used = decode_html(page.encode("iso8859_7"), "text/html")
    assert text == page
    assert page.encode("iso8859_7").decode("cp1253", errors="replace") != page   # the case is a real one


SHORT_PAGES = [(language.code, codec, short_excerpts(language.sentences_in(codec))[0])
               for language in LANGUAGES for codec in language.legacy]


@pytest.mark.parametrize("language, codec, excerpt", SHORT_PAGES, ids=[f"{p[0]}-{p[1]}" for p in SHORT_PAGES])
def test_short_undeclared_pages_decode_right(language, codec, excerpt):
    """150-600 characters of prose, no declaration, in every legacy code page of every language of the
    charset experiment's corpus."""
    page = html(excerpt)
    assert decode_html(page.encode(codec), "text/html")[0] == page


def test_windows_1252_wins_a_close_call_for_western_text():
    """Short Catalan reads as windows-1250 to chardet (its à and ò are Slovak ŕ and ň there) by a
    hair; the Encoding Standard's default for Western text decides."""
    body = "<p>L’àvia cuina un arròs negre boníssim, i tota la família ve a dinar a casa seva.</p>".encode("cp1252")
    assert detect_codec(body, western_margin=float("inf")) == "cp1250"
    assert detect_codec(body) == "cp1252"


@pytest.mark.parametrize("text, codec, western", [
    ("Le coût de la vie, très sûr, œuvre, élève.", "cp1252", True),
    ("“Don’t,” she said — naïve café.", "cp1252", True),
    ("Zażółć gęślą jaźń, łódź.", "cp1250", False),                    # ł is ³, ą is ¹: signs in words
    ("Vecmāmiņa cep garšīgākos pīrāgus ar speķi.", "cp1257", False),  # â ð ç ... letters of no one language
    ("Příliš žluťoučký kůň úpěl ďábelské ódy.", "cp1250", False),
])
def test_reads_as_western(text, codec, western):
    assert reads_as_western(text.encode(codec)) is western


def test_without_a_detector_answer_the_fallback_is_windows_1252(monkeypatch):
    import getpage.charset
    monkeypatch.setattr(getpage.charset, "_detector_scores", lambda sample: {})
    assert detect_codec("caf\xe9".encode("latin-1")) == "cp1252"


def test_fetched_undeclared_windows_1252_page_over_http(serve):
    """A real server on loopback sends a French page with no charset anywhere."""
    page = html("Le coût de la vie a beaucoup augmenté, et même les élèves les plus économes trouvent ce "
                "quartier très sûr.")

    def handler(request):
        return Response(200, {"Content-Type": "text/html"}, page.encode("cp1252"))

    with serve(handler) as (base_url, log), Fetcher(local_config("CharsetTest/1.0", delay=0, timeout=3)) as fetcher:
        result = fetcher.fetch(base_url + "fr.html")
    assert (result.error, result.text, result.encoding) == ("", page, "cp1252")
    assert result.body.decode(result.encoding) == result.text
    assert "/fr.html" in [request.path for request in log]

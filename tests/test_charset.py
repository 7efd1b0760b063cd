"""charset.decode_html: the encoding of a page chosen the way browsers choose it;
and sniff's binary test, which must pass every real page in every encoding."""
import codecs
import gzip
import random
import re

import pytest

from getpage.charset import codec_for_label, decode_html, header_charset
from getpage.sniff import binary_bytes, binary_text, control_count

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


def test_meta_after_the_first_4_kib_is_not_read():
    late = "<html><body>" + "x" * 5000 + '<meta charset="koi8-r"></body></html>'
    assert decode_html(late.encode("ascii"), "text/html")[1] == "utf-8"
    early = "<html><body>" + "x" * 4000 + '<meta charset="koi8-r"></body></html>'
    assert decode_html(early.encode("ascii"), "text/html")[1] == "koi8-r"


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
    ("euc-jp", "euc_jp"), (' "utf-8" ', "utf-8"),
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
    ("gzip data", gzip.compress(random.Random(5).randbytes(20_000)), "text/html"),
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

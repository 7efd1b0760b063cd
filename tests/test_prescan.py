"""The HTML Standard's "prescan a byte stream to determine its encoding",
as a conformance table: each row names the step of the standard it shows
(https://html.spec.whatwg.org/#prescan-a-byte-stream-to-determine-its-encoding,
"get an attribute", "get an XML encoding", the "algorithm for extracting a
character encoding from a meta element", the Encoding Standard's "get an
encoding"), the bytes, and the encoding the prescan returns (the Encoding
Standard's name) or None."""
import random
import subprocess
import sys
from pathlib import Path

import pytest

from getpage.charset import codec_for_label, decode_html
from getpage import prescan as prescan_module
from getpage.prescan import declared_encoding, prescan
from getpage.sniff import binary_bytes

PAD = b"<p>" + b"x" * 1100 + b"</p>"

TABLE = [
    # step 3: prescan for UTF-16 XML declarations
    ("utf-16 xml declaration, little-endian", "<?xml".encode("utf-16-le"), "utf-16le"),
    ("utf-16 xml declaration, big-endian", "<?xml".encode("utf-16-be"), "utf-16be"),
    # loop: <meta charset>, "get an encoding"
    ("meta charset", b'<meta charset="shift_jis">', "shift_jis"),
    ("meta charset unquoted", b"<meta charset=koi8-r>", "koi8-r"),
    ("meta charset single quotes", b"<meta charset='gb2312'>", "gbk"),
    ("meta tag name case-insensitive", b"<MeTa CHARSET=big5>", "big5"),
    ("meta followed by slash", b"<meta/charset=euc-kr>", "euc-kr"),
    ("meta followed by a tab", b"<meta\tcharset=euc-jp>", "euc-jp"),
    ("meta followed by > is another tag", b"<meta><meta charset=utf-8>", "utf-8"),
    ("label: ascii whitespace stripped", b'<meta charset=" windows-1251 ">', "windows-1251"),
    ("label: latin1 is windows-1252", b"<meta charset=latin1>", "windows-1252"),
    ("label: us-ascii is windows-1252", b"<meta charset=us-ascii>", "windows-1252"),
    ("label: iso-8859-9 is windows-1254", b"<meta charset=iso-8859-9>", "windows-1254"),
    ("label: tis-620 is windows-874", b"<meta charset=tis-620>", "windows-874"),
    ("label: utf8 is utf-8", b"<meta charset=utf8>", "utf-8"),
    # processing: charset failure goes on to the next meta
    ("unknown label skipped, next meta read", b'<meta charset="foo-bar"><meta charset="windows-1251">',
     "windows-1251"),
    ("utf-32 is no label, next meta read", b"<meta charset=utf-32><meta charset=koi8-u>", "koi8-u"),
    ("utf-7 is no label", b"<meta charset=utf-7>", None),
    ("empty charset is failure", b'<meta charset=""><meta charset=big5>', "big5"),
    ("only unknown labels", b"<meta charset=nonsense>", None),
    # processing: UTF-16 and x-user-defined
    ("meta utf-16 is utf-8", b"<meta charset=utf-16>", "utf-8"),
    ("meta utf-16be is utf-8", b"<meta charset=utf-16be>", "utf-8"),
    ("meta unicode (a utf-16le label) is utf-8", b"<meta charset=unicode>", "utf-8"),
    ("meta x-user-defined is windows-1252", b"<meta charset=x-user-defined>", "windows-1252"),
    # attributes: http-equiv, content, need pragma, got pragma
    ("http-equiv content-type with content", b'<meta http-equiv="Content-Type" content="text/html; charset=gbk">',
     "gbk"),
    ("content before http-equiv", b'<meta content="text/html; charset=gbk" http-equiv=content-type>', "gbk"),
    ("content without http-equiv: need pragma unmet",
     b'<meta content="text/html; charset=gbk"><meta charset=koi8-r>', "koi8-r"),
    ("http-equiv of another kind", b'<meta http-equiv="refresh" content="0; charset=gbk">', None),
    ("charset after content wins, no pragma needed",
     b'<meta content="text/html; charset=gbk" charset=big5>', "big5"),
    ("content after charset does not replace it", b'<meta charset=big5 content="charset=gbk">', "big5"),
    ("unknown charset, content not used", b'<meta charset=nonsense content="charset=gbk" http-equiv=content-type>',
     None),
    ("repeated attribute: the first counts", b"<meta charset=big5 charset=gbk>", "big5"),
    ("content with an unknown label", b'<meta http-equiv=content-type content="charset=nonsense">'
     b"<meta charset=koi8-r>", "koi8-r"),
    # extracting a character encoding from a meta element
    ("extract: spaces around =", b'<meta http-equiv=content-type content="text/html; charset = euc-kr">',
     "euc-kr"),
    ("extract: quoted value", b"<meta http-equiv=content-type content=\"charset='koi8-r'\">", "koi8-r"),
    ("extract: unmatched quote", b"<meta http-equiv=content-type content='charset=\"koi8-r'>", None),
    ("extract: ends at ;", b'<meta http-equiv=content-type content="charset=koi8-r;x=y">', "koi8-r"),
    ("extract: a charset without = is skipped",
     b'<meta http-equiv=content-type content="charsetx; charset=big5">', "big5"),
    ("extract: case-insensitive", b'<meta http-equiv=content-type content="CHARSET=big5">', "big5"),
    # comments
    ("comment skipped", b'<!-- <meta charset="koi8-r"> --><meta charset=big5>', "big5"),
    ("comment <!--> ends at its own >", b"<!--><meta charset=big5>", "big5"),
    ("comment <!---> ends at its own >", b"<!---><meta charset=big5>", "big5"),
    ("unterminated comment ends the prescan", b"<!-- <meta charset=big5>", None),
    # other tags: their attributes are skipped with "get an attribute"
    ("meta inside an attribute value skipped", b'<a title="<meta charset=big5>"><meta charset=koi8-r>',
     "koi8-r"),
    ("single-quoted attribute value skipped", b"<a title='<meta charset=big5>'><meta charset=koi8-r>", "koi8-r"),
    ("unquoted value ends at >", b"<a href=x><meta charset=koi8-r>", "koi8-r"),
    ("closing tag's attributes skipped", b'</a title="<meta charset=big5>"><meta charset=koi8-r>', "koi8-r"),
    ("script content is not skipped", b"<script>x='<meta charset=big5>'</script>", "big5"),
    ("title content is not skipped", b"<title><meta charset=big5></title>", "big5"),
    # <!, </ and <? run to the next >
    ("doctype skipped", b"<!DOCTYPE html><meta charset=big5>", "big5"),
    ("processing instruction runs to its first >", b"<?php echo '<meta charset=big5>' ?><meta charset=koi8-r>",
     "koi8-r"),
    ("</ not followed by a letter", b"</ <meta charset=big5>><meta charset=koi8-r>", "koi8-r"),
    ("bogus <! runs to >", b"<!x <meta charset=big5>><meta charset=koi8-r>", "koi8-r"),
    ("< followed by a digit is text", b"<1<meta charset=big5>", "big5"),
    # get an attribute
    ("attribute name ends at /, the repeat ignored", b"<meta/charset/=big5 charset=koi8-r>", None),
    ("spaces before =", b"<meta charset  =  big5>", "big5"),
    ("attribute without a value", b"<meta http-equiv charset=big5>", "big5"),
    ("= starting a name is part of it", b"<meta =charset=big5 charset=koi8-r>", "koi8-r"),
    # the end: running out of bytes, 1024 bytes, get an XML encoding
    ("meta cut off by the end of the bytes", b"<meta charset=big5", None),
    ("no declaration", b"<html><head><title>x</title></head>", None),
    ("past 1024 bytes", PAD + b"<meta charset=big5>", None),
    ("xml declaration", b'<?xml version="1.0" encoding="ISO-8859-2"?><html>', "iso-8859-2"),
    ("xml declaration, single quotes", b"<?xml version='1.0' encoding='koi8-r'?>", "koi8-r"),
    ("xml declaration utf-16 is utf-8", b'<?xml version="1.0" encoding="UTF-16"?>', "utf-8"),
    ("xml declaration after a meta", b'<?xml version="1.0" encoding="koi8-r"?><meta charset=big5>', "big5"),
    ("xml declaration not first", b' <?xml version="1.0" encoding="koi8-r"?>', None),
    ("xml declaration with an unknown label", b'<?xml version="1.0" encoding="nonsense"?>', None),
]


@pytest.mark.parametrize("step, data, encoding", TABLE, ids=[row[0] for row in TABLE])
def test_prescan(step, data, encoding):
    assert prescan(data) == encoding


@pytest.mark.parametrize("step, data, encoding", [row for row in TABLE if row[0] != "past 1024 bytes"],
                         ids=[row[0] for row in TABLE if row[0] != "past 1024 bytes"])
def test_the_crawler_keeps_every_answer_the_prescan_gives(step, data, encoding):
    # The crawler's own step reads the rest of the head only where the
    # prescan found no <meta>: within the first 1024 bytes the answers agree.
    assert declared_encoding(data) == encoding


def test_the_crawler_reads_a_meta_late_in_the_head_before_the_xml_declaration():
    style = b"<style>" + b"p { margin: 0 }\n" * 80 + b"</style>"
    data = b'<?xml version="1.0" encoding="koi8-r"?><html><head>' + style + b"<meta charset=big5></head>"
    assert prescan(data) == "koi8-r"
    assert declared_encoding(data) == "big5"


def test_a_page_after_an_unknown_label_is_decoded_by_the_next_meta():
    page = ('<html><head><meta charset="foo-bar"><meta charset="windows-1251"></head>'
            "<body>Hello</body></html>")
    assert decode_html(page.encode("ascii"), "text/html") == (page, "cp1251")


# -- the regular expressions against the standard's steps, transcribed ---------

SPACE = b"\t\n\x0c\r "


class RanOut(Exception):
    pass


def at(data, position):
    if position >= len(data):
        raise RanOut
    return data[position]


def reference_get_attribute(data, position):
    """The standard's "get an attribute", byte by byte: (name, value,
    position), or (None, "", position) at a ">"; RanOut past the end."""
    while at(data, position) in SPACE + b"/":
        position += 1
    if at(data, position) == 0x3E:
        return None, "", position
    name, value = bytearray(), bytearray()
    while True:
        byte = at(data, position)
        if byte == 0x3D and name:
            position += 1
            break
        if byte in SPACE:
            while at(data, position) in SPACE:
                position += 1
            if at(data, position) != 0x3D:
                return name.decode("latin-1").lower(), "", position
            position += 1
            break
        if byte in b"/>":
            return name.decode("latin-1").lower(), "", position
        name.append(byte)
        position += 1
    while at(data, position) in SPACE:
        position += 1
    byte = at(data, position)
    if byte in b"\"'":
        quote = byte
        while True:
            position += 1
            if at(data, position) == quote:
                return name.decode("latin-1").lower(), value.decode("latin-1").lower(), position + 1
            value.append(at(data, position))
    if byte == 0x3E:
        return name.decode("latin-1").lower(), "", position
    value.append(byte)
    position += 1
    while at(data, position) not in SPACE + b">":
        value.append(at(data, position))
        position += 1
    return name.decode("latin-1").lower(), value.decode("latin-1").lower(), position


def reference_skip_tag(data, position):
    while at(data, position) not in SPACE + b">":
        position += 1
    while (attribute := reference_get_attribute(data, position))[0] is not None:
        position = attribute[2]
    return attribute[2]


def outcome(step, *args):
    try:
        return step(*args)
    except (RanOut, prescan_module._OutOfBytes):
        return "ran out"


def random_markup(generator):
    return bytes(generator.choice(b' \t\n/=>"\'aBm-') for _ in range(generator.randrange(0, 24)))


def test_get_attribute_reads_as_the_standards_steps_on_random_bytes():
    generator = random.Random(9309)
    for _ in range(20000):
        data = random_markup(generator)
        expected = outcome(reference_get_attribute, data, 0)
        found = outcome(prescan_module._get_attribute, data, 0)
        if found != "ran out" and found[0] is not None:
            found = (found[0], found[1].lower(), found[2])
        assert found == expected, data


def test_a_tag_is_skipped_as_the_standards_steps_skip_it_on_random_bytes():
    generator = random.Random(1024)
    for _ in range(20000):
        data = b"<a" + random_markup(generator)
        assert outcome(prescan_module._skip_tag, data, 0) == outcome(reference_skip_tag, data, 0), data


def test_a_utf16_page_without_a_bom_is_read_by_its_xml_declaration_and_is_not_binary():
    page = '<?xml version="1.0"?><html><body><p>日本語のページ</p></body></html>'
    body = page.encode("utf-16-le")
    assert not binary_bytes(body, "text/html")
    assert decode_html(body, "text/html") == (page, "utf-16-le")


def test_every_encoding_of_the_standard_has_a_python_codec_but_two():
    from webencodings.labels import LABELS

    from getpage.charset import _python_codec
    assert {name for name in set(LABELS.values()) if _python_codec(name) is None} == {"replacement",
                                                                                      "x-user-defined"}


@pytest.mark.parametrize("label, codec", [
    ("utf-32", None), ("latin-1", None), ("iso-2022-kr", None), ("hz-gb-2312", None), ("x-user-defined", None),
    ("unicode-1-1-utf-8", "utf-8"), ("x-cp1250", "cp1250"), ("ibm866", "cp866"), ("iso-8859-16", "iso8859-16"),
    ("csiso2022jp", "iso2022_jp"), ("unicodefffe", "utf-16-be"),
])
def test_header_labels_are_read_by_the_encoding_standards_table(label, codec):
    assert codec_for_label(label) == codec


def test_the_prescan_comparison_runs_and_ours_passes_every_row():
    script = Path(__file__).resolve().parent.parent / "experiments" / "compare_prescans.py"
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    ours = next(line for line in done.stdout.splitlines() if line.startswith("ours "))
    assert f"{len(TABLE)}/{len(TABLE)}" in ours

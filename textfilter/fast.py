"""The fast path of TextFilter + GetURLs: one lxml tree, no BeautifulSoup.

`read_page(html)` gives what parse() reads from the BeautifulSoup tree (the
text, the title, the <base href>, the links and the <meta> elements' robots
directives and refresh) from a tree that libxml2
builds in C, five to ten times faster. The answers are the same because both
trees come from the same parser fed the same way (lxml's HTMLParser, the
options BeautifulSoup passes, the whole text in one feed): BeautifulSoup
builds its tree from libxml2's parser events, lxml builds its tree from the
same events. The rules of text.py and links.py are applied to this tree
unchanged; only their bookkeeping is cheaper (see _flow).

Where the two trees can differ, read_page returns None and the caller uses
the BeautifulSoup reference instead:
- libxml2 stopped building (a fatal error: elements nested deeper than 255,
  or a text or attribute value over 10 MB), while BeautifulSoup, which
  builds its own tree from the events, goes on;
- there is no root element (an empty page, a page of comments only);
- a <title> has child elements (libxml2 reads title content as text, so the
  title rule for nested elements is not written here);
- a <!DOCTYPE> and a <listing>, <xmp> or <plaintext> are in the same page:
  a doctype splits BeautifulSoup's strings but leaves no node in lxml's
  tree, and only inside those three elements does a split change the text
  (a white-space-only string is shortened there; see _bs4_spaces).
Ordinary pages meet none of these, and tests/test_fast_parse.py checks that
they take this path and that its answers equal the reference's.
"""
from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass

from lxml import etree

from textfilter.links import URL_ATTRIBUTE, base_and_links
from textfilter.markup import BLOCKS, CELLS, DROPPED, PREFORMATTED, without_surrogates
from textfilter.robotsmeta import Refresh, meta_of

# Where the walk marks line and cell ends in the flat list of text pieces.
# Lone surrogates cannot occur in text that came through libxml2 (it hands
# over UTF-8, which has no form for them), so they cannot clash with the text.
_LINE = "\ud800"       # a block element opens or closes: the line ends
_CELL = "\ud801"       # a td or th opens or closes: the cell ends
_VERBATIM = "\ud802"   # the line that follows is preformatted text, kept as written
_DROP = object()       # the element is dropped with everything inside

_ROLE: dict[str, object] = {
    **dict.fromkeys(BLOCKS, _LINE),
    **dict.fromkeys(CELLS, _CELL),
    **dict.fromkeys(PREFORMATTED, _VERBATIM),
    **dict.fromkeys(DROPPED, _DROP),
}
_WALKED_TAGS = (*URL_ATTRIBUTE, "meta")
# How the reference's tree builder treats strings (BeautifulSoup's
# HTMLTreeBuilder; tests/test_fast_parse.py checks that these are its values,
# so that the two cannot drift apart, without loading it here): inside these
# elements white-space-only strings stay as they are (elsewhere they shrink,
# see _bs4_spaces) ...
_KEEPS_SPACES = frozenset({"pre", "textarea"})
# ... strings inside these are filed under their own type, not as text ...
_STRING_CONTAINERS = ("rt", "rp", "style", "script", "template")
# ... and this is what "white space" means to it.
_ASCII_SPACES = " \n\t\x0c\r"
_REWRITES_SPACES = ("listing", "xmp", "plaintext")
_FATAL = etree.ErrorLevels.FATAL


@dataclass(frozen=True, slots=True)
class Reading:
    """What parse() needs from a page, before any URL is resolved."""
    text: str                 # as text.page_text
    title: str                # as text.page_title
    base_href: str | None     # as the first item of links.extract_links
    links: tuple[str, ...]    # as the second item of links.extract_links
    robots: frozenset[str] = frozenset()   # as robotsmeta.meta_of
    refresh: Refresh | None = None         # as robotsmeta.meta_of


def read_page(html: str, robots_names: Collection[str] = ("robots",)) -> Reading | None:
    """The text, title, <base href>, links and <meta> robots directives and
    refresh of html, read from one lxml tree.

    None when this tree may differ from the BeautifulSoup reference's (see the
    module docstring); never raises for malformed HTML.
    """
    try:
        parser = _parsed(html)
    except UnicodeEncodeError:  # lone surrogates have no UTF-8 form for libxml2
        parser = _parsed(without_surrogates(html))
    root = parser.close()
    if root is None or _stopped_early(parser) or _doctype_splits_strings(root, html):
        return None
    top = _top_level_elements(root)
    title = _title(top)
    if title is None:
        return None
    pairs, metas = _url_attributes_and_metas(top)
    base_href, links = base_and_links(pairs)
    robots, refresh = meta_of(metas, robots_names)
    return Reading(text=layout_text(top), title=title, base_href=base_href, links=links,
                   robots=robots, refresh=refresh)


def _parsed(html: str) -> etree.HTMLParser:
    # The parser, options (huge_tree off) and single feed of BeautifulSoup's
    # lxml builder, which also drops a leading BOM: so the events are the same.
    parser = etree.HTMLParser(recover=True)
    parser.feed(html.removeprefix("\ufeff"))
    return parser


def _stopped_early(parser: etree.HTMLParser) -> bool:
    return any(error.level == _FATAL for error in parser.feed_error_log)


def _doctype_splits_strings(root: etree._Element, html: str) -> bool:
    return next(root.iter(_REWRITES_SPACES), None) is not None and "<!doctype" in html.lower()


def _top_level_elements(root: etree._Element) -> list[etree._Element]:
    """The document's elements in order: libxml2 keeps markup after </html> as
    siblings of the root (comments and processing instructions are left out)."""
    before = [node for node in root.itersiblings(preceding=True) if isinstance(node.tag, str)]
    after = [node for node in root.itersiblings() if isinstance(node.tag, str)]
    return [*reversed(before), root, *after]


# -- the text -------------------------------------------------------------------------

def layout_text(top: list[etree._Element]) -> str:
    """The text of these elements laid out by the rules of text.page_text (also
    used by maintext.py, so the two texts cannot drift apart). Two passes: the walk lays the pieces of
    text and the line and cell ends out in one list, then string operations
    in C cut it into lines and cells."""
    parts: list[str] = []
    for element in top:
        _flow(element, parts.append)
    lines: list[str] = []
    for chunk in "".join(parts).split(_LINE):
        if not chunk or chunk.isspace():
            continue
        if chunk[0] == _VERBATIM:
            lines += [line.rstrip() for line in chunk[1:].splitlines() if line.strip()]
        elif _CELL in chunk:
            row = "\t".join([cell for cell in map(_collapsed, chunk.split(_CELL)) if cell])
            if row:
                lines.append(row)
        else:
            lines.append(_collapsed(chunk))
    return "\n".join(lines)


def _collapsed(text: str) -> str:
    return " ".join(text.split())


def _flow(element: etree._Element, add: Callable[[str], None]) -> None:
    """Lay out element and its content, outside any preformatted element.

    Recursion is safe: a tree nested deeper than 255 never gets here (libxml2
    stops building it, and read_page hands the page to the reference).
    """
    tag = element.tag
    if not isinstance(tag, str):  # a comment or processing instruction: not text
        return
    role = _ROLE.get(tag)
    if role is _DROP:
        return
    if role is _VERBATIM:
        pieces: list[str] = []
        _verbatim(element, pieces, tag in _KEEPS_SPACES)
        add(_LINE + _VERBATIM + "".join(pieces) + _LINE)
        return
    if role is not None:
        add(role)
    if element.text:
        add(element.text)
    for child in element:
        _flow(child, add)
        if child.tail:
            add(child.tail)
    if role is not None:
        add(role)


def _verbatim(element: etree._Element, parts: list[str], keeps_spaces: bool) -> None:
    """Lay out element and its content inside a preformatted element: the
    source's line breaks stay, a block or a cell starts a new line."""
    tag = element.tag
    if not isinstance(tag, str):
        return
    role = _ROLE.get(tag)
    if role is _DROP:
        return
    keeps_spaces = keeps_spaces or tag in _KEEPS_SPACES
    breaks = role is _LINE or role is _CELL
    if breaks:
        parts.append("\n")
    if element.text:
        parts.append(_bs4_spaces(element.text, keeps_spaces))
    for child in element:
        _verbatim(child, parts, keeps_spaces)
        if child.tail:
            parts.append(_bs4_spaces(child.tail, keeps_spaces))
    if breaks:
        parts.append("\n")


def _bs4_spaces(string: str, keeps_spaces: bool) -> str:
    """string as BeautifulSoup stores it: outside pre and textarea, a string of
    ASCII white space only becomes "\\n" if it holds a line break, else " ".
    Outside preformatted text that changes nothing (white space collapses
    anyway), so only _verbatim asks."""
    if keeps_spaces or string.strip(_ASCII_SPACES):
        return string
    return "\n" if "\n" in string else " "


# -- the title and the links ----------------------------------------------------------

def _title(top: list[etree._Element]) -> str | None:
    """As text.page_title; None for a title with child elements (not modelled)."""
    for element in top:
        for title in element.iter("title"):
            if next(title.iterancestors("svg"), None) is not None:
                continue  # an SVG <title> labels a drawing, not the page
            if len(title):
                return None
            if next(title.iterancestors(_STRING_CONTAINERS), None) is not None:
                return ""  # BeautifulSoup files the text under the container, not as text
            return " ".join((title.text or "").split())
    return ""


def _url_attributes_and_metas(top: list[etree._Element]) -> tuple[list[tuple[str, str]], list]:
    """(tag, raw value) of each URL attribute, in document order, as
    links.soup_links, and the attributes of each <meta>: one walk for both."""
    pairs, metas = [], []
    for element in top:
        for node in element.iter(_WALKED_TAGS):
            if node.tag == "meta":
                metas.append(node.attrib)
            elif (value := node.get(URL_ATTRIBUTE[node.tag])) is not None:
                pairs.append((node.tag, value))
    return pairs, metas

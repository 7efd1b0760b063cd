"""TextFilter, main-content mode (--text main): the text of the page's main block only.

main_text(html) keeps what a reader came for (the article, the manual
section) and drops the page chrome around it (menus, breadcrumbs, sidebars,
footers, share bars, comment threads, link lists). It reads one lxml tree
and lays the kept block out exactly as the plain filter does (text.py: one
line per block, white space collapsed, table cells joined by tabs), so the
two texts can be compared line for line. Pure: no network, no files.

The layout is fast.py's own (layout_text, so that the two texts cannot
drift apart). The heuristic, in four steps, on one tree:

1. Boilerplate: an element is left out with everything inside when
   - its tag is nav, aside, form, footer, button, select, dialog or menu;
   - it is a <header>, or its class/id says "header", outside any
     article/main container (a header inside an article holds its title);
   - its role is navigation, banner, contentinfo, complementary, search,
     menu or menubar, or it carries the hidden attribute or aria-hidden=true;
   - its class or id names chrome: menu, nav..., sidebar, footer, comment,
     breadcrumb, share, social, related, cookie, banner, promo, sponsor,
     subscribe, newsletter, popup, modal, pagination, pager, toolbar,
     masthead, ad/ads/advert (html, body, article and main are never
     dropped for a class name: themes put "sidebar-left" on <body>).
   Everything else is counted: for each element, how many characters of
   text it holds outside links and inside links.
2. The start: the biggest semantic container (article, main, role=main,
   itemprop=articleBody) if it holds at least half the page's non-link
   text, else <body>.
3. The block: from the start, step down into the child that holds at least
   80% of the current element's non-link text, while there is one and what
   it leaves out holds no run of prose (no single string of 80 characters
   or more outside links). So a wrapper <div> around the whole story is
   stepped into, and so is a story column beside a column of short
   snippets; but a long section after an intro paragraph is not (the
   two are one text, as in a manual page). Below a semantic container only
   another semantic container is stepped into: there, what is left after
   step 1 is content.
4. Inside the block, link lists are cut: any list, table, div, section,
   details or figure whose text is more than half link text, and any
   paragraph that is more than 80% link text ("Read on: a | b | c").
The page's last <h1> before the block is put in front of it when it is "just
above": outside boilerplate, with fewer than 200 characters of non-link
text between the two (a byline, a date), so a title that the layout keeps
outside the story column is still the first line.

When nothing scores -- no <body>, a tree libxml2 stopped building (nesting
deeper than 255; the plain filter reads such pages another way), fewer
than 25 characters of non-link text outside boilerplate, or a block that is
empty once its link lists are cut -- the page has no main block to find
(a redirect stub, a link hub, a frameset) and main_text returns the plain
text instead of "": the page is still worth searching, and an empty
text/<id>.txt would look like a failed fetch.

The title stays separate: parse() gives it, and <head> is never read here.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from lxml import etree

from textfilter.fast import layout_text
from textfilter.parse import parse
from textfilter.markup import DROPPED, without_surrogates

_BOILERPLATE_TAGS = frozenset({"nav", "aside", "form", "footer", "button", "select", "dialog", "menu"})
_BOILERPLATE_ROLES = frozenset({
    "navigation", "banner", "contentinfo", "complementary", "search", "menu", "menubar",
})
# Class or id words that name chrome. "nav" and "ad" only as the start of a
# word ("site-nav", "navheader", "ad-slot"), so that "canvas" or "head" pass.
_BOILERPLATE_NAMES = re.compile(
    r"menu|sidebar|footer|comment|breadcrumb|share|sharing|social|related|cookie|banner|promo"
    r"|sponsor|subscribe|newsletter|popup|modal|pagination|pager|toolbar|masthead|advert"
    r"|(?:^|[\s_-])(?:nav|ads?(?:$|[\s_-]))"
)
_HEADER_NAME = re.compile(r"header")
_NEVER_BY_NAME = frozenset({"html", "body", "article", "main"})
_FATAL = etree.ErrorLevels.FATAL
_LINK_LISTS = frozenset({"ul", "ol", "dl", "table", "div", "section", "details", "figure"})

PREFERRED_SHARE = 0.5      # a semantic container is the start if it holds this share of the text
DOMINANT_SHARE = 0.8       # step into a child that holds this share of its parent's text
LIST_LINK_DENSITY = 0.5    # a list/table/div with more link text than this share is cut
PARAGRAPH_LINK_DENSITY = 0.8
PROSE_RUN = 80             # a run of text this long outside a child keeps us from stepping into it
HEADING_GAP = 200          # at most this many characters between an outside <h1> and the block
MIN_TEXT = 25              # with less non-link text than this, fall back to the plain text


def main_text(html: str) -> str:
    """The text of the page's main content block, laid out as the plain text is.

    html: the decoded page. Returns the plain text (parse(html, ..., "lxml")
    .text) when the page has no main block to find (see the module
    docstring); never raises for malformed HTML.
    """
    body = _body(html)
    if body is None:
        return _plain(html)
    tally = _Tally()
    tally.count(body, in_link=False, in_container=False)
    if tally.text(body) < MIN_TEXT:
        return _plain(html)
    block = _block(body, tally)
    heading = _heading_above(block, tally)
    _cut_link_lists(block, tally)
    text = layout_text([block])
    if not text:
        return _plain(html)
    return f"{layout_text([heading])}\n{text}" if heading is not None else text


def _plain(html: str) -> str:
    # The base URL only resolves links, and only the text is used here.
    return parse(html, "", "lxml").text


def _body(html: str) -> etree._Element | None:
    parser = etree.HTMLParser(recover=True)
    try:
        parser.feed(html.removeprefix("\ufeff"))
    except UnicodeEncodeError:  # lone surrogates have no UTF-8 form for libxml2
        parser = etree.HTMLParser(recover=True)
        parser.feed(without_surrogates(html).removeprefix("\ufeff"))
    root = parser.close()
    if root is None or any(error.level == _FATAL for error in parser.feed_error_log):
        return None  # no tree, or a truncated one: libxml2 stopped building it
    return root.find("body")


@dataclass(slots=True)
class _Counts:
    """What the tally knows of one element (a working record, filled in once)."""
    text: int = 0       # characters of text outside links, tails of children included
    links: int = 0      # characters of text inside links
    start: int = 0      # characters of non-link text before the element in document order
    order: int = 0      # the element's rank in document order
    longest: int = 0    # the longest single run of non-link text inside


_NOTHING = _Counts()


class _Tally:
    """Counts per element of one tree; boilerplate elements get no entry."""

    def __init__(self) -> None:
        self.counts: dict[etree._Element, _Counts] = {}
        self.boilerplate: set[etree._Element] = set()
        self.containers: list[etree._Element] = []   # in document order
        self.container_set: set[etree._Element] = set()
        self.headings: list[etree._Element] = []
        self._emitted = 0

    def of(self, element: etree._Element) -> _Counts:
        return self.counts.get(element, _NOTHING)

    def text(self, element: etree._Element) -> int:
        return self.of(element).text

    def count(self, element: etree._Element, in_link: bool, in_container: bool) -> _Counts:
        """Count element and its subtree; recursion is safe because libxml2
        stops building trees nested deeper than 255 (and _body then gives up)."""
        tag = element.tag
        if not isinstance(tag, str) or tag in DROPPED:
            return _NOTHING
        if _is_boilerplate(element, tag, in_container):
            self.boilerplate.add(element)
            return _NOTHING
        in_link = in_link or tag == "a"
        semantic = _is_container(element, tag)
        if semantic:
            self.containers.append(element)
            self.container_set.add(element)
        counts = self.counts[element] = _Counts(start=self._emitted, order=len(self.counts))
        self._own(counts, element.text, in_link)
        for child in element:
            inner = self.count(child, in_link, in_container or semantic)
            counts.text += inner.text
            counts.links += inner.links
            counts.longest = max(counts.longest, inner.longest)
            self._own(counts, child.tail, in_link)
        if tag == "h1":
            self.headings.append(element)
        return counts

    def _own(self, counts: _Counts, string: str | None, in_link: bool) -> None:
        if not string:
            return
        size = len(string.strip())
        if in_link:
            counts.links += size
        else:
            counts.text += size
            counts.longest = max(counts.longest, size)
            self._emitted += size


def _is_container(element: etree._Element, tag: str) -> bool:
    return (tag in ("article", "main") or element.get("role") == "main"
            or element.get("itemprop") == "articleBody")


def _is_boilerplate(element: etree._Element, tag: str, in_container: bool) -> bool:
    if tag in _BOILERPLATE_TAGS or (tag == "header" and not in_container):
        return True
    if element.get("role") in _BOILERPLATE_ROLES:
        return True
    if element.get("hidden") is not None or element.get("aria-hidden") == "true":
        return True
    if tag in _NEVER_BY_NAME:
        return False
    names = f"{element.get('class', '')} {element.get('id', '')}".lower()
    if _BOILERPLATE_NAMES.search(names):
        return True
    return not in_container and _HEADER_NAME.search(names) is not None


def _block(body: etree._Element, tally: _Tally) -> etree._Element:
    """Steps 2 and 3 of the module docstring."""
    current = body
    if tally.containers:
        biggest = max(tally.containers, key=tally.text)
        if tally.text(biggest) >= PREFERRED_SHARE * tally.text(body):
            current = biggest
    while (step := _step(current, tally)) is not None:
        current = step
    return current


def _step(current: etree._Element, tally: _Tally) -> etree._Element | None:
    """The element inside current that holds its content, if there is one."""
    within = current in tally.container_set
    for element in current.iterdescendants() if within else current:
        if within and element not in tally.container_set:
            continue
        if tally.text(element) >= DOMINANT_SHARE * tally.text(current):
            return None if _leaves_out_prose(current, element, tally) else element
    return None


def _leaves_out_prose(current: etree._Element, inner: etree._Element, tally: _Tally) -> bool:
    """Whether current holds a run of prose outside inner: then the two are
    parts of one text (an intro before the sections), not a column beside it."""
    node = inner
    while node is not current:
        parent = node.getparent()
        runs = [len(parent.text.strip()) if parent.text else 0]
        for sibling in parent:
            if sibling.tail:
                runs.append(len(sibling.tail.strip()))
            if sibling is not node:
                runs.append(tally.of(sibling).longest)
        if max(runs) >= PROSE_RUN:
            return True
        node = parent
    return False


def _heading_above(block: etree._Element, tally: _Tally) -> etree._Element | None:
    """The last <h1> before the block, if it is just above it (module docstring)."""
    below = tally.of(block)
    chosen = None
    for heading in tally.headings:
        above = tally.of(heading)
        if above.order >= below.order or heading in block.iterancestors():
            continue
        if above.text and below.start - (above.start + above.text) < HEADING_GAP:
            chosen = heading
    return chosen


def _cut_link_lists(block: etree._Element, tally: _Tally) -> None:
    """Step 4, and the boilerplate of step 1, removed from the block's subtree."""
    doomed = [element for element in block.iterdescendants()
              if element in tally.boilerplate or _is_link_list(element, tally)]
    for element in doomed:
        if element.getparent() is not None:
            _remove_keeping_tail(element)


def _is_link_list(element: etree._Element, tally: _Tally) -> bool:
    tag = element.tag
    if tag in _LINK_LISTS:
        limit = LIST_LINK_DENSITY
    elif tag == "p":
        limit = PARAGRAPH_LINK_DENSITY
    else:
        return False
    counts = tally.of(element)
    text, links = counts.text, counts.links
    return links > 0 and links > limit * (text + links)


def _remove_keeping_tail(element: etree._Element) -> None:
    # The tail is text that follows the element inside its parent: it stays.
    parent = element.getparent()
    tail = element.tail
    if tail:
        previous = element.getprevious()
        if previous is not None:
            previous.tail = (previous.tail or "") + tail
        else:
            parent.text = (parent.text or "") + tail
    parent.remove(element)

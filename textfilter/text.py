"""TextFilter: the readable text and the title of a parsed page.

The text is what a reader sees, one block per line:
- dropped with everything inside: <head> (the title is read on its own), <title>,
  <script>, <style>, <noscript>, <template>, <svg> (drawing commands and icon
  labels, rarely prose), <iframe>, <noembed>, <noframes> (their content is
  fallback markup kept as raw source), and comments, the doctype, CDATA
  sections and processing instructions;
- block elements (p, div, br, li, tr, h1-h6, table, pre ...) end the current
  line; inline elements (a, b, span ...) join their text to it, so
  "<b>Hel</b>lo" reads "Hello";
- td and th cells of one row stay on one line, separated by a tab;
- inside a line, any run of white space (Unicode's definition, so no-break and
  ideographic spaces too) becomes one space; lines are stripped;
- preformatted elements (pre, listing, xmp, plaintext, textarea) keep their
  own line breaks and indentation; only trailing white space is cut;
- there are no empty lines, and no line break after the last line.
So the only tabs in the text separate table cells or come from preformatted
source.
"""
from __future__ import annotations

from dataclasses import dataclass

from bs4 import BeautifulSoup, NavigableString, PageElement, Tag
from bs4.element import PreformattedString

from textfilter.markup import BLOCKS, CELLS, DROPPED, PREFORMATTED


def page_text(tree: BeautifulSoup) -> str:
    """The readable text of the page, as described in the module docstring."""
    lines = _Lines()
    # An explicit stack instead of recursion: pages nest tags thousands deep.
    stack: list[PageElement | _End] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, _End):
            lines.close(node.name)
        elif isinstance(node, Tag):
            if node.name not in DROPPED:
                lines.open(node.name)
                stack.append(_End(node.name))
                stack.extend(reversed(node.contents))
        elif _is_text(node):
            lines.add(node)
    return lines.finish()


def page_title(tree: BeautifulSoup) -> str:
    """The first <title> outside SVG, white space collapsed; "" if there is none."""
    for title in tree.find_all("title"):
        # An SVG <title> labels a drawing, not the page.
        if title.find_parent("svg") is None:
            return " ".join(title.get_text().split())
    return ""


@dataclass(frozen=True, slots=True)
class _End:
    """Stack marker: the element with this name closes here."""
    name: str


def _is_text(node: PageElement) -> bool:
    # Comments, CDATA, doctypes and processing instructions are all
    # PreformattedString; plain text is any other NavigableString.
    return isinstance(node, NavigableString) and not isinstance(node, PreformattedString)


class _Lines:
    """Collects text pieces into lines, told where elements open and close."""

    def __init__(self) -> None:
        self._lines: list[str] = []
        self._cells: list[str] = []     # finished cells of the current line
        self._pieces: list[str] = []    # text of the current cell, or of the preformatted block
        self._preformatted = 0          # how many preformatted elements are open

    def add(self, text: str) -> None:
        self._pieces.append(text)

    def open(self, name: str) -> None:
        if name in PREFORMATTED:
            if not self._preformatted:
                self._end_line()
            self._preformatted += 1
        else:
            self._boundary(name)

    def close(self, name: str) -> None:
        if name in PREFORMATTED:
            self._preformatted -= 1
            if not self._preformatted:
                self._end_preformatted()
        else:
            self._boundary(name)

    def finish(self) -> str:
        self._end_line()
        return "\n".join(self._lines)

    def _boundary(self, name: str) -> None:
        if self._preformatted:
            # Inside <pre> the source's own line breaks rule; a nested block or
            # cell still starts a new line, as it does on screen.
            if name in BLOCKS or name in CELLS:
                self._pieces.append("\n")
        elif name in CELLS:
            self._end_cell()
        elif name in BLOCKS:
            self._end_line()

    def _end_cell(self) -> None:
        cell = " ".join("".join(self._pieces).split())
        if cell:
            self._cells.append(cell)
        self._pieces = []

    def _end_line(self) -> None:
        self._end_cell()
        if self._cells:
            self._lines.append("\t".join(self._cells))
        self._cells = []

    def _end_preformatted(self) -> None:
        for line in "".join(self._pieces).splitlines():
            if line.strip():
                self._lines.append(line.rstrip())
        self._pieces = []

"""Extraction patterns: named CSS or XPath selectors applied to a page's HTML.

The R crawler's ExtractXpathPat/PatternsName, as values that pickle (they
travel to the parser worker processes). Pure: HTML text in, strings out.

    pattern = parse_pattern("title=css:h1.post-title")       # or NAME=xpath:EXPR
    ad = parse_selector("css:div.ad")                         # for --extract-exclude
    extraction = Extraction((pattern,), excludes=(ad,), url_regex=r"/\\d{4}/\\d{2}/")
    if extraction.applies_to(url):
        extraction.extract(html, url)   # {"title": ["..."]}

Spec syntax: ``NAME=css:SELECTOR``, ``NAME=xpath:EXPRESSION``, or
``NAME=SELECTOR`` (no prefix means CSS, the common case). NAME is a letter or
"_" then letters, digits, "_" or "-"; it becomes a column of extracted.csv,
so "id" and "url" are taken (in any case) and names are unique ignoring case.

What a match yields (``extract``), for each pattern in order:
- an element: its text as a reader sees it, white space collapsed to single
  spaces and stripped; text inside <script>, <style>, <template> and comments
  is left out, and block elements (p, li, div, br ...) separate words, so
  "<p>a</p><p>b</p>" gives "a b" while "<b>Hel</b>lo" gives "Hello";
- a string (XPath text() or @attribute, string(...)): the string, stripped;
- a number or boolean (count(...), boolean(...)): "3", "2.5", "true";
- empty strings are dropped, so a pattern that matched nothing, or only
  empty nodes, gives [].

Excluded sub-nodes (``excludes``) are removed from the tree before any
pattern runs; their tail text stays, since it belongs to the parent. Only
elements can be excluded: an exclude selector that yields strings removes
nothing, and the root element is never removed.

Selectors are compiled (and tried once on an empty page, which catches
unknown XPath functions and variables) when they are parsed, so a bad one
is refused before a crawl starts; each process, and each thread, compiles
again on first use and then reuses the compiled form.
"""
from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from typing import Iterable

from cssselect import HTMLTranslator, SelectorError
from lxml import etree, html as lxml_html

from textfilter.markup import BLOCKS, CELLS, PREFORMATTED, without_surrogates

KINDS = ("css", "xpath")
RESERVED_NAMES = ("id", "url")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
# Their text is not what a reader sees (code, rules, inert markup).
_UNREAD = frozenset({"script", "style", "template", "noscript"})
# Elements whose edges separate words, as TextFilter's lines and cells do.
_SEPARATES = BLOCKS | CELLS | PREFORMATTED
_EMPTY_PAGE = lxml_html.document_fromstring("<html><body></body></html>")


@dataclass(frozen=True)
class Selector:
    """A CSS selector or XPath expression, compiled on first use in each thread."""

    kind: str          # "css" or "xpath"
    expression: str    # as the user wrote it, without the prefix

    def select(self, root: etree._Element) -> list:
        """What the selector yields on root: elements, strings, or one number/boolean."""
        result = _compiled(self.kind, self.expression)(root)
        return result if isinstance(result, list) else [result]


@dataclass(frozen=True)
class ExtractPattern:
    """One named pattern: a column of extracted.csv."""

    name: str
    kind: str          # "css" or "xpath"
    expression: str

    @property
    def selector(self) -> Selector:
        return Selector(self.kind, self.expression)


def parse_pattern(spec: str) -> ExtractPattern:
    """ExtractPattern from "NAME=css:SEL", "NAME=xpath:EXPR" or "NAME=SEL" (CSS).

    Raises ValueError with a one-line message saying what is wrong and how
    to write it instead (bad or reserved name, missing "=", selector that
    does not compile).
    """
    name, equals, selector_spec = spec.partition("=")
    name = name.strip()
    if not equals:
        raise ValueError(f"extraction pattern {spec!r} has no '=': write NAME=css:SELECTOR "
                         f"or NAME=xpath:EXPRESSION, e.g. title=css:h1")
    _check_name(name, spec)
    selector = parse_selector(selector_spec)
    return ExtractPattern(name, selector.kind, selector.expression)


def parse_selector(spec: str) -> Selector:
    """Selector from "css:SEL", "xpath:EXPR" or a bare CSS selector; compiled now.

    Raises ValueError (one line) when the selector is empty or does not compile.
    """
    kind, expression = _split_kind(spec.strip())
    if not expression:
        raise ValueError(f"selector {spec!r} is empty: write css:SELECTOR or xpath:EXPRESSION")
    try:
        _compiled(kind, expression)(_EMPTY_PAGE)
    except (SelectorError, etree.XPathError) as error:
        raise ValueError(_compile_error(kind, expression, spec, error)) from None
    return Selector(kind, expression)


@dataclass(frozen=True)
class Extraction:
    """Patterns, sub-nodes to drop first, and which URLs to extract from.

    url_regex is searched for anywhere in the URL (re.search; anchor it with
    ^ or $ where needed); None means every page.
    """

    patterns: tuple[ExtractPattern, ...]
    excludes: tuple[Selector, ...] = ()
    url_regex: str | None = None

    def __post_init__(self) -> None:
        if not self.patterns:
            raise ValueError("no extraction pattern given: add --extract NAME=css:SELECTOR")
        seen: dict[str, str] = {}
        for pattern in self.patterns:
            _check_name(pattern.name, pattern.name)
            key = pattern.name.lower()
            if key in seen:
                raise ValueError(f"extraction name {pattern.name!r} is given twice (as "
                                 f"{seen[key]!r} too; names ignore case): give each pattern its own name")
            seen[key] = pattern.name
        if self.url_regex is not None:
            _url_regex(self.url_regex)

    @classmethod
    def from_specs(cls, patterns: Iterable[str], excludes: Iterable[str] = (),
                   url_regex: str | None = None) -> "Extraction":
        """Parse the command-line forms; ValueError (one line) on the first bad one.

        An empty url_regex ("") means every page, as None does.
        """
        return cls(tuple(parse_pattern(spec) for spec in patterns),
                   tuple(parse_selector(spec) for spec in excludes),
                   url_regex or None)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(pattern.name for pattern in self.patterns)

    def applies_to(self, url: str) -> bool:
        """Whether pages at url are extracted from (url_regex found in it)."""
        return self.url_regex is None or _url_regex(self.url_regex).search(url) is not None

    def extract(self, html: str, url: str) -> dict[str, list[str]]:
        """name -> the non-empty strings its pattern matched, in document order.

        Every name is a key, [] when nothing matched. url is the page's URL
        (kept for patterns that may one day depend on it; the tree does not).
        Never raises for malformed HTML; an empty page matches nothing.
        """
        root = _tree(html)
        if root is None:
            return {pattern.name: [] for pattern in self.patterns}
        for exclude in self.excludes:
            _drop(exclude.select(root))
        return {pattern.name: _strings(pattern.selector.select(root)) for pattern in self.patterns}


def element_text(element: etree._Element) -> str:
    """The element's readable text, white space collapsed (see the module docstring)."""
    pieces: list[str] = []
    # An explicit stack, not recursion: pages nest elements thousands deep.
    # Strings on the stack are text to emit; elements are subtrees to open.
    stack: list = [element]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            pieces.append(node)
            continue
        if not isinstance(node.tag, str) or node.tag in _UNREAD:
            continue  # comments, processing instructions, unread elements
        edge = " " if node.tag in _SEPARATES else ""
        pieces.append(edge + (node.text or ""))
        stack.append(edge)
        for child in reversed(node):
            stack.append(child.tail or "")
            stack.append(child)
    return " ".join("".join(pieces).split())


def _strings(results: list) -> list[str]:
    strings = (_string(result) for result in results)
    return [text for text in strings if text]


def _string(result) -> str:
    if isinstance(result, etree._Element):
        return element_text(result)
    if isinstance(result, bool):
        return "true" if result else "false"
    if isinstance(result, float):
        return str(int(result)) if result.is_integer() else repr(result)
    if isinstance(result, tuple):  # a namespace node: (prefix, uri)
        return str(result[1]).strip()
    return str(result).strip()


def _drop(results: list) -> None:
    for node in results:
        if isinstance(node, etree._Element) and node.getparent() is not None:
            node.drop_tree()


def _tree(html: str) -> etree._Element | None:
    # Fed like textfilter.fast feeds its parser: a str with an XML encoding
    # declaration is fine this way, lone surrogates are not.
    parser = lxml_html.HTMLParser(recover=True)
    try:
        parser.feed(html.removeprefix("\ufeff"))
    except UnicodeEncodeError:
        parser = lxml_html.HTMLParser(recover=True)
        parser.feed(without_surrogates(html.removeprefix("\ufeff")))
    try:
        return parser.close()
    except etree.XMLSyntaxError:  # nothing to build a tree from
        return None


def _check_name(name: str, spec: str) -> None:
    if not _NAME.fullmatch(name):
        raise ValueError(f"extraction name {name!r} in {spec!r} is not a valid column name: "
                         f"use a letter or _ then letters, digits, _ or -, e.g. title")
    if name.lower() in RESERVED_NAMES:
        raise ValueError(f"extraction name {name!r} is taken by the id and url columns of "
                         f"extracted.csv: choose another name")


def _split_kind(spec: str) -> tuple[str, str]:
    prefix, colon, rest = spec.partition(":")
    if colon and prefix.strip().lower() in KINDS:
        return prefix.strip().lower(), rest.strip()
    return "css", spec


def _compile_error(kind: str, expression: str, spec: str, error: Exception) -> str:
    reason = " ".join(str(error).split()) or type(error).__name__
    if kind == "xpath":
        return f"XPath {expression!r} does not compile ({reason}): fix the expression"
    hint = "fix the selector"
    if expression.startswith(("/", "(", ".")):
        hint = "an XPath expression needs the xpath: prefix"
    elif expression == spec.strip() and re.match(r"[A-Za-z]+:", expression):
        # No prefix was recognised, yet it starts like one: a misspelt prefix?
        hint = "the only prefixes are css: and xpath:"
    return f"CSS selector {expression!r} does not compile ({reason}): {hint}"


# Compiled selectors, per thread: an lxml XPath evaluator keeps per-call
# state, so threads do not share one.
_local = threading.local()


def _compiled(kind: str, expression: str) -> etree.XPath:
    cache: dict[tuple[str, str], etree.XPath] = _local.__dict__.setdefault("selectors", {})
    key = (kind, expression)
    if key not in cache:
        source = HTMLTranslator().css_to_xpath(expression) if kind == "css" else expression
        cache[key] = etree.XPath(source, smart_strings=False)
    return cache[key]


def _url_regex(pattern: str) -> re.Pattern:
    try:
        return re.compile(pattern)
    except re.error as error:
        raise ValueError(f"URL regular expression {pattern!r} does not compile ({error}): "
                         f"fix it, e.g. /posts/") from None

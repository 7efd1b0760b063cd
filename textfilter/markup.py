"""What every reader of a page shares and no parser provides: the elements the
text rules name, and the text libxml2 accepts.

Kept apart from text.py and tree.py, which need BeautifulSoup, so that the
lxml readers (fast.py, maintext.py, extract.py, relevance.py, links.py's
lxml extractor) load without it: BeautifulSoup with soupsieve takes ~60 ms
of every start-up that reads pages with lxml.
"""
from __future__ import annotations

import re

# The rules of the readable text (text.py) as data; fast.py applies the same
# sets to an lxml tree.
DROPPED = frozenset({
    "head", "title", "script", "style", "noscript", "template", "svg",
    "iframe", "noembed", "noframes",
})
BLOCKS = frozenset({
    "address", "article", "aside", "blockquote", "body", "br", "caption", "center",
    "dd", "details", "dialog", "dir", "div", "dl", "dt", "fieldset", "figcaption",
    "figure", "footer", "form", "frameset", "h1", "h2", "h3", "h4", "h5", "h6",
    "header", "hgroup", "hr", "html", "legend", "li", "main", "menu", "nav", "ol",
    "optgroup", "option", "p", "search", "section", "select", "summary", "table",
    "tbody", "tfoot", "thead", "tr", "ul",
})
CELLS = frozenset({"td", "th"})
PREFORMATTED = frozenset({"pre", "listing", "xmp", "plaintext", "textarea"})

_SURROGATE = re.compile("[\ud800-\udfff]")


def without_surrogates(html: str) -> str:
    """html with lone surrogates replaced by U+FFFD.

    Text decoded with errors="surrogateescape" carries lone surrogates, which
    libxml2 refuses (it takes UTF-8, and they have no UTF-8 form).
    """
    return _SURROGATE.sub("\ufffd", html)

"""Topical relevance: how close a text is to a topic, for focused crawling.

    Topic.from_text(text, background=()) -> Topic
    topic.relevance(text) -> float in [0, 1]
    anchors(html) -> [(href, anchor text), ...] of every <a> and <area>

Relevance is the cosine similarity of two TF-IDF vectors, the topic's and
the text's:
- terms: Unicode words (runs of letters and digits), casefolded, without a
  small list of English stop words; a Chinese or Japanese ideograph or kana
  is a term by itself, since those scripts put no spaces between words
  (character unigrams: crude, but they match without a dictionary);
- tf: sublinear, 1 + ln(count), so a word said fifty times does not drown
  the rest;
- idf: with a background (``background=docs``, any iterable of texts), the
  smoothed idf ln((1 + N) / (1 + df)) + 1 of those N documents, a term no
  document holds getting the largest value, ln(1 + N) + 1. Without one,
  every term weighs 1: plain sublinear tf with the stop words dropped.

Why a crawl uses no idf, or a fixed one: a crawl's Topic is made once, in
the Controller, and pickled into every parser process, where pages are
scored as they arrive. An idf that the pages seen so far update would need
those processes to share a document-frequency table on every page, and it
would make a page's score depend on which process saw which page first, so
two runs of one crawl would queue links in different orders. A frozen idf
keeps each score a pure function of (topic, text). The crawl has no
documents to take one from when it starts (the seeds are not fetched yet),
so unless the caller hands it a background it uses idf = 1. An English
word-frequency table could stand in for document frequencies, but it needs
a data dependency, helps only on English text and on terms the topic and
page share (in a cosine only shared terms add to the dot product; an idf
reweights a page's norm), and says nothing about the vocabulary of a
generated test web; the stop words already remove the words such a table
would weigh least.

Everything here is pure and pickles (a Topic holds only dicts and floats),
as the parser processes need.
"""
from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from lxml import etree

from textfilter.links import base_and_links
from textfilter.markup import DROPPED, without_surrogates

# Scripts written without spaces between words: each character is a term.
_UNSPACED = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002ffff"
_TERM = re.compile(f"[{_UNSPACED}]|[^\\W_{_UNSPACED}]+")
# A byte table for the fast path of terms(): ASCII letters to lower case,
# every other ASCII character that is not a letter or a digit to a space,
# the bytes of other characters unchanged (so the UTF-8 stays valid).
_ASCII_FOLD = (bytes(ord(c.lower()) if c.isalnum() else 32 for c in map(chr, range(128)))
               + bytes(range(128, 256)))

STOP_WORDS = frozenset("""
a about above after again against all am an and any are as at be because been
before being below between both but by can could did do does doing down during
each few for from further had has have having he her here hers herself him
himself his how i if in into is it its itself just me more most my myself no
nor not now of off on once only or other our ours ourselves out over own same
she should so some such than that the their theirs them themselves then there
these they this those through to too under until up very was we were what when
where which while who whom why will with would you your yours yourself
yourselves
""".split())


def terms(text: str) -> list[str]:
    """The terms of text in order: those of terms_reference, faster.

    A regular expression over Unicode classes is slow in CPython, and most
    text is mostly ASCII: a byte table folds and splits the ASCII in C, and
    only the words that keep a non-ASCII character go through the expression.
    Splitting first changes nothing: ASCII that is not a letter or a digit,
    and white space, end a term there too. (benchmarks/relevance.py measures
    both.)
    """
    words = text.encode("utf-8", "surrogatepass").translate(_ASCII_FOLD)
    words = words.decode("utf-8", "surrogatepass").split()
    if all(map(str.isascii, words)):
        return words
    found: list[str] = []
    for word in words:
        if word.isascii():
            found.append(word)
        else:
            found += _TERM.findall(word.casefold())
    return found


def terms_reference(text: str) -> list[str]:
    """The terms of text in order, as the module docstring defines them."""
    return _TERM.findall(text.casefold())


def term_counts(text: str) -> Counter[str]:
    """How often each term occurs in text, stop words left out."""
    return _counted(terms(text))


def _counted(words: list[str]) -> Counter[str]:
    counts = Counter(words)
    for word in STOP_WORDS.intersection(counts):
        del counts[word]
    return counts


def _tf(count: int) -> float:
    return 1.0 + math.log(count)


@dataclass(frozen=True, slots=True)
class Topic:
    """A topic as a unit-length TF-IDF vector, and the idf that made it."""
    weights: dict[str, float]           # term -> weight; the vector has length 1
    idf: dict[str, float] | None = None  # term -> idf; None: every term weighs 1
    unseen_idf: float = 1.0             # idf of a term the background never saw

    @classmethod
    def from_text(cls, text: str, background: Iterable[str] = ()) -> Topic:
        """The topic of text (keywords or a sample document); ValueError when
        it has no terms. background: documents to take the idf from."""
        idf, unseen = _smoothed_idf(background)
        topic = cls({}, idf, unseen)
        vector = topic._vector(term_counts(text))
        if not vector:
            raise ValueError(f"the topic has no words to match (only stop words or none): {text!r}")
        length = math.sqrt(sum(weight * weight for weight in vector.values()))
        return cls({term: weight / length for term, weight in vector.items()}, idf, unseen)

    def relevance(self, text: str) -> float:
        """Cosine similarity of text's vector and the topic's: 0.0 when they
        share no term (or text has none), 1.0 for the topic's own text."""
        words = terms(text)
        if self.weights.keys().isdisjoint(words):   # most anchors, off-topic pages: no counting
            return 0.0
        counts = _counted(words)
        dot = sum(weight * _tf(counts[term]) * self._idf(term)
                  for term, weight in self.weights.items() if term in counts)
        if dot == 0.0:
            return 0.0
        return min(1.0, dot / self._length(counts))

    def _idf(self, term: str) -> float:
        return 1.0 if self.idf is None else self.idf.get(term, self.unseen_idf)

    def _vector(self, counts: Counter[str]) -> dict[str, float]:
        return {term: _tf(count) * self._idf(term) for term, count in counts.items()}

    def _length(self, counts: Counter[str]) -> float:
        if self.idf is None:
            return math.sqrt(sum(_tf(count) ** 2 for count in counts.values()))
        return math.sqrt(sum(weight * weight for weight in self._vector(counts).values()))


def _smoothed_idf(documents: Iterable[str]) -> tuple[dict[str, float] | None, float]:
    """(term -> ln((1 + N) / (1 + df)) + 1, the value for df = 0); (None, 1.0)
    when there are no documents."""
    frequency: Counter[str] = Counter()
    total = 0
    for document in documents:
        frequency.update(term_counts(document).keys())
        total += 1
    if total == 0:
        return None, 1.0
    idf = {term: math.log((1 + total) / (1 + df)) + 1.0 for term, df in frequency.items()}
    return idf, math.log(1 + total) + 1.0


# -- anchor texts ---------------------------------------------------------------------

def anchors(html: str) -> list[tuple[str, str]]:
    """(href, anchor text) of every <a> and <area> that has a followable href,
    in document order.

    The hrefs are exactly those textfilter.links gives for these elements
    (the same parser fed the same way, and its rules for stripping and
    skipping). The text is what the anchor shows, white space collapsed:
    its text, with the alt text of any image inside; for an <area>, its alt
    text. Text inside elements TextFilter drops (script, style ...) is not
    read. libxml2 closes an open <a> when the next one starts, so anchors
    never nest.
    """
    try:
        return _anchors(html)
    except UnicodeEncodeError:  # lone surrogates have no UTF-8 form for libxml2
        return _anchors(without_surrogates(html))


def _anchors(html: str) -> list[tuple[str, str]]:
    parser = etree.HTMLParser(recover=True, target=_AnchorTexts())
    parser.feed(html.removeprefix("\ufeff"))   # as textfilter.links feeds it
    return parser.close()


class _AnchorTexts:
    """lxml parser target: each link element's href and the text it shows."""

    def __init__(self) -> None:
        self._found: list[tuple[str, list[str]]] = []   # (href, pieces of its text)
        self._open: list[list[str] | None] = []         # an open <a>'s pieces; None: no link
        self._dropped = 0                               # depth inside DROPPED elements

    def start(self, tag: str, attributes: dict[str, str]) -> None:
        if tag in DROPPED:
            self._dropped += 1
        elif tag == "a":
            self._open.append(self._link(attributes.get("href")))
        elif tag == "area":
            pieces = self._link(attributes.get("href"))
            if pieces is not None:
                pieces.append(attributes.get("alt", ""))
        elif tag == "img" and self._open and (alt := attributes.get("alt")):
            self.data(f" {alt} ")

    def end(self, tag: str) -> None:
        if tag in DROPPED:
            self._dropped -= 1
        elif tag == "a" and self._open:
            self._open.pop()

    def data(self, text: str) -> None:
        if self._open and not self._dropped and (pieces := self._open[-1]) is not None:
            pieces.append(text)

    def close(self) -> list[tuple[str, str]]:
        return [(href, " ".join("".join(pieces).split())) for href, pieces in self._found]

    def _link(self, value: str | None) -> list[str] | None:
        """A new entry's list of text pieces, or None when value is not followable."""
        if value is None:
            return None
        links = base_and_links([("a", value)])[1]
        if not links:
            return None
        pieces: list[str] = []
        self._found.append((links[0], pieces))
        return pieces

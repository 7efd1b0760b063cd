"""The URL-seen test: the ``UrlSeen`` protocol, its registry, and the baselines.

This module owns the contract every de-duplication structure meets, the name ->
implementation registry the Controller and ``experiments/`` choose from, and
the two baselines (a Python set of URLs, a set of MD5 digests).  The design
paper's three schemes live beside it: ``asciisum``, ``stringhash``,
``intstring``; the Bloom filter in ``bloom``.

The structures are not thread-safe; a shared one needs one lock around
``add`` (which is why ``add`` is a single check-and-record call).
"""
from __future__ import annotations

import hashlib
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Protocol, runtime_checkable

from urlfilter.asciisum import AsciiSumSeen
from urlfilter.bloom import BloomSeen
from urlfilter.intstring import IntStringSeen
from urlfilter.stringhash import StringHashSeen

__all__ = ["SEEN_ALGORITHMS", "Md5Seen", "SetSeen", "UrlSeen", "make_seen"]


@runtime_checkable
class UrlSeen(Protocol):
    """A set of URLs that answers "seen before?" and counts its own work.

    Every implementation works on the URL as given (normalize first); the
    exact ones (all but "bloom") never answer wrongly.
    """
    name: str

    def add(self, url: str) -> bool:
        """Record url; True if it was new (not seen before). One call, so a shared version can be atomic."""

    def __contains__(self, url: str) -> bool:
        """Seen already? Does not record."""

    def __len__(self) -> int:
        """Number of distinct URLs recorded (as the structure believes)."""

    def stats(self) -> dict[str, float | int]:
        """Counters: adds, new, lookups, probes, max_chain, distinct_keys, bytes (and extras).

        ``probes`` totals the comparisons made by add and __contains__ (string
        comparisons, or check-value comparisons for stringhash; one per
        operation for the C-level sets).  ``bytes`` is computed from the
        structure's parts and counts stored URL strings as owned by it.
        """


class SetSeen:
    """Baseline: a Python set of URL strings (hashing and probing run in C)."""
    name = "set"

    def __init__(self) -> None:
        self._urls: set[str] = set()
        self._adds = self._lookups = 0
        self._text_bytes = 0

    def add(self, url: str) -> bool:
        self._adds += 1
        urls = self._urls
        if url in urls:
            return False
        urls.add(url)
        self._text_bytes += sys.getsizeof(url)
        return True

    def __contains__(self, url: str) -> bool:
        self._lookups += 1
        return url in self._urls

    def __len__(self) -> int:
        return len(self._urls)

    def stats(self) -> dict[str, float | int]:
        # A set lookup probes inside C; it is counted as one probe.
        return {"adds": self._adds, "new": len(self._urls), "lookups": self._lookups,
                "probes": self._adds + self._lookups, "max_chain": 0,
                "distinct_keys": len(self._urls),
                "bytes": sys.getsizeof(self._urls) + self._text_bytes}


class Md5Seen:
    """Baseline: a set of 16-byte MD5 digests of the URL's UTF-8 bytes.

    Not exact in theory (a 128-bit collision), exact in practice; the URL
    text itself is not kept.
    """
    name = "md5"

    def __init__(self) -> None:
        self._digests: set[bytes] = set()
        self._adds = self._lookups = 0

    def add(self, url: str) -> bool:
        self._adds += 1
        digest = hashlib.md5(url.encode()).digest()
        digests = self._digests
        if digest in digests:
            return False
        digests.add(digest)
        return True

    def __contains__(self, url: str) -> bool:
        self._lookups += 1
        return hashlib.md5(url.encode()).digest() in self._digests

    def __len__(self) -> int:
        return len(self._digests)

    def stats(self) -> dict[str, float | int]:
        count = len(self._digests)
        digest_bytes = sys.getsizeof(bytes(16))
        return {"adds": self._adds, "new": count, "lookups": self._lookups,
                "probes": self._adds + self._lookups, "max_chain": 0, "distinct_keys": count,
                "bytes": sys.getsizeof(self._digests) + count * digest_bytes}


def _sieve(directory: str | Path | None = None) -> UrlSeen:
    """urlfilter.sieve.SieveSeen, imported when a crawl makes one: it loads
    numpy, about a tenth of a second of a process's start-up, which a crawl
    with another seen-set (a shared crawl's worker) need not pay."""
    from urlfilter.sieve import SieveSeen
    return SieveSeen(directory)


SEEN_ALGORITHMS: dict[str, Callable[..., UrlSeen]] = {
    "set": SetSeen,
    "ascii": AsciiSumSeen,
    "intstring": IntStringSeen,
    "stringhash": StringHashSeen,
    "md5": Md5Seen,
    "bloom": BloomSeen,
    "sieve": _sieve,
}


def make_seen(name: str, *, capacity: int = 1_000_000, error_rate: float = 1e-3,
              directory: str | Path | None = None) -> UrlSeen:
    """A new, empty structure by registry name; ValueError names the valid ones.

    ``capacity`` (URLs expected) and ``error_rate`` (target false-positive
    rate) size the Bloom filter only.  The other structures grow on demand:
    pre-sizing stringhash for a million URLs would cost 27 MB up front.
    ``directory`` is where the sieve keeps its file (emptied first; None: a
    temporary directory of its own); the in-RAM structures ignore it.
    """
    factory = SEEN_ALGORITHMS.get(name)
    if factory is None:
        raise ValueError(f"unknown URL-seen algorithm {name!r}; valid names: "
                         f"{', '.join(SEEN_ALGORITHMS)}")
    if name == "bloom":
        return factory(capacity=capacity, error_rate=error_rate)
    if name == "sieve":
        return factory(directory)
    return factory()

"""ASCII-sum buckets: the design paper's own URL-seen table.

This module owns ``AsciiSumSeen``.  The key of a URL is the sum of its UTF-8
byte values; row k of a two-level table holds a flag (does any URL with sum k
exist) and the chain of every URL with sum k.  Exact, but sums ignore
character order and fall in a narrow window, so chains grow long: that
weakness is what the dedup experiment measures.
"""
from __future__ import annotations

import sys

__all__ = ["AsciiSumSeen"]

_PAGE_BITS = 8
_PAGE_SIZE = 1 << _PAGE_BITS
_PAGE_MASK = _PAGE_SIZE - 1


class _Page:
    """Second level: rows k..k+255 of the table, allocated when first used."""
    __slots__ = ("flags", "chains")

    def __init__(self) -> None:
        self.flags = bytearray(_PAGE_SIZE)                          # 1 = row holds a chain
        self.chains: list[list[str] | None] = [None] * _PAGE_SIZE


class AsciiSumSeen:
    """Key = sum of the URL's bytes (computed in C by ``sum(bytes)``).

    The first level is a list indexed by key >> 8 of pages of 256 rows, so a
    row is found by two index operations and only the narrow band of sums
    that URLs really have is allocated.  A lookup compares the URL with the
    chain's members in C (``list.index``); every member compared counts as a
    probe.
    """
    name = "ascii"

    def __init__(self) -> None:
        self._pages: list[_Page | None] = []
        self._count = self._adds = self._lookups = self._probes = 0
        self._max_chain = self._keys = self._text_bytes = 0

    def add(self, url: str) -> bool:
        self._adds += 1
        key = sum(url.encode())
        chain = self._chain(key)
        if chain is not None and self._find(chain, url):
            return False
        if chain is None:
            chain = self._new_row(key)
        chain.append(url)
        self._count += 1
        self._text_bytes += sys.getsizeof(url)
        if len(chain) > self._max_chain:
            self._max_chain = len(chain)
        return True

    def __contains__(self, url: str) -> bool:
        self._lookups += 1
        chain = self._chain(sum(url.encode()))
        return chain is not None and self._find(chain, url)

    def __len__(self) -> int:
        return self._count

    def _chain(self, key: int) -> list[str] | None:
        """The chain of row ``key``, or None when the row's flag says no URL has this sum."""
        top = key >> _PAGE_BITS
        pages = self._pages
        if top >= len(pages):
            return None
        page = pages[top]
        if page is None or not page.flags[key & _PAGE_MASK]:
            return None
        return page.chains[key & _PAGE_MASK]

    def _find(self, chain: list[str], url: str) -> bool:
        try:
            position = chain.index(url)
        except ValueError:
            self._probes += len(chain)
            return False
        self._probes += position + 1
        return True

    def _new_row(self, key: int) -> list[str]:
        top = key >> _PAGE_BITS
        pages = self._pages
        if top >= len(pages):
            pages.extend([None] * (top + 1 - len(pages)))
        page = pages[top]
        if page is None:
            page = pages[top] = _Page()
        chain: list[str] = []
        page.chains[key & _PAGE_MASK] = chain
        page.flags[key & _PAGE_MASK] = 1
        self._keys += 1
        return chain

    def stats(self) -> dict[str, float | int]:
        """The UrlSeen counters; ``mean_chain`` is the mean length of the non-empty chains."""
        return {"adds": self._adds, "new": self._count, "lookups": self._lookups,
                "probes": self._probes, "max_chain": self._max_chain,
                "mean_chain": self._count / self._keys if self._keys else 0.0,
                "distinct_keys": self._keys, "bytes": self._bytes()}

    def chain_lengths(self) -> dict[int, int]:
        """Sum -> number of URLs with that sum, for every non-empty row, in ascending sum order."""
        lengths: dict[int, int] = {}
        for top, page in enumerate(self._pages):
            if page is None:
                continue
            for row, chain in enumerate(page.chains):
                if page.flags[row]:
                    lengths[top << _PAGE_BITS | row] = len(chain)
        return lengths

    def _bytes(self) -> int:
        total = sys.getsizeof(self._pages) + self._text_bytes
        for page in self._pages:
            if page is None:
                continue
            total += sys.getsizeof(page) + sys.getsizeof(page.flags) + sys.getsizeof(page.chains)
            total += sum(sys.getsizeof(chain) for chain in page.chains if chain is not None)
        return total

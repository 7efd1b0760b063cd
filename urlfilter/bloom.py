"""Bloom filter URL-seen structure: fixed memory, no false negatives, some false positives.

This module owns ``BloomSeen``, sized from the expected number of URLs n and
the target false-positive rate p.  A false positive makes the crawler skip a
URL it never fetched; it never fetches one twice.
"""
from __future__ import annotations

import math
import sys
from hashlib import blake2b

__all__ = ["BloomSeen", "bloom_size"]


def bloom_size(capacity: int, error_rate: float) -> tuple[int, int]:
    """(m bits, k hashes) for n = capacity and p = error_rate.

    m = ceil(-n ln p / (ln 2)**2), k = round((m / n) ln 2), at least 1.
    """
    if capacity < 1:
        raise ValueError(f"bloom capacity must be >= 1 URL, got {capacity}")
    if not 0 < error_rate < 1:
        raise ValueError(f"bloom error_rate must be between 0 and 1 (exclusive), got {error_rate}")
    bits = math.ceil(-capacity * math.log(error_rate) / math.log(2) ** 2)
    hashes = max(1, round(bits / capacity * math.log(2)))
    return bits, hashes


class BloomSeen:
    """A bit array of m bits set at k positions per URL.

    Positions come from one 16-byte BLAKE2b digest (computed in C) split into
    two 64-bit ints h1, h2 by double hashing: position_i = (h1 + i*h2) mod m.
    h2 is forced odd so that it is never 0.  ``add`` is True when at least one
    bit was newly set; ``len`` counts those answers, so it can fall short of
    the true number of distinct URLs by the false positives.  ``probes``
    counts bits examined.  False-positive rate stays near p while
    len <= capacity and rises beyond it.
    """
    name = "bloom"

    def __init__(self, capacity: int = 1_000_000, error_rate: float = 1e-3) -> None:
        self.capacity = capacity
        self.error_rate = error_rate
        self._m, self._k = bloom_size(capacity, error_rate)
        self._bits = bytearray((self._m + 7) // 8)
        self._count = self._adds = self._lookups = self._probes = self._ones = 0

    def _positions(self, url: str) -> list[int]:
        digest = blake2b(url.encode(), digest_size=16).digest()
        h1 = int.from_bytes(digest[:8], "little")
        h2 = int.from_bytes(digest[8:], "little") | 1
        m = self._m
        return [(h1 + i * h2) % m for i in range(self._k)]

    def add(self, url: str) -> bool:
        self._adds += 1
        self._probes += self._k
        bits = self._bits
        newly_set = 0
        for position in self._positions(url):
            byte, bit = position >> 3, 1 << (position & 7)
            if not bits[byte] & bit:
                bits[byte] |= bit
                newly_set += 1
        if not newly_set:
            return False
        self._ones += newly_set
        self._count += 1
        return True

    def __contains__(self, url: str) -> bool:
        self._lookups += 1
        bits = self._bits
        for examined, position in enumerate(self._positions(url), 1):
            if not bits[position >> 3] & (1 << (position & 7)):
                self._probes += examined
                return False
        self._probes += self._k
        return True

    def __len__(self) -> int:
        return self._count

    def stats(self) -> dict[str, float | int]:
        return {"adds": self._adds, "new": self._count, "lookups": self._lookups,
                "probes": self._probes, "max_chain": 0, "distinct_keys": 0,
                "bytes": sys.getsizeof(self._bits), "bits": self._m, "hashes": self._k,
                "fill": self._ones / self._m,
                "expected_fp_rate": (self._ones / self._m) ** self._k}

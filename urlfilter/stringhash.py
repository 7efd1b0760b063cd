"""StringHash: the Blizzard MPQ one-way hash table, used for URL dedup.

This module owns the MPQ string hash (``mpq_hash_reference``, the textbook
per-byte loop, and ``mpq_hashes``, all three hash types in one faster pass)
and ``StringHashSeen``, the table that stores two 32-bit check values per URL
instead of its text.

Unlike the original, which upper-cases its input (file names in an archive
are case-insensitive), bytes are hashed as given: URLs are case-sensitive.
"""
from __future__ import annotations

import sys
from array import array

__all__ = ["CRYPT_TABLE", "StringHashSeen", "mpq_hash_reference", "mpq_hashes"]

_MASK32 = 0xFFFFFFFF
_SEED1 = 0x7FED7FED
_SEED2 = 0xEEEEEEEE
_UINT32 = "I" if array("I").itemsize == 4 else "L"   # 4-byte unsigned on every common platform


def _crypt_table() -> tuple[int, ...]:
    """The 0x500-entry table, from seed 0x00100001 as in the MPQ format."""
    table = [0] * 0x500
    seed = 0x00100001
    for i in range(0x100):
        for j in range(5):
            seed = (seed * 125 + 3) % 0x2AAAAB
            high = (seed & 0xFFFF) << 16
            seed = (seed * 125 + 3) % 0x2AAAAB
            table[i + j * 0x100] = high | (seed & 0xFFFF)
    return tuple(table)


CRYPT_TABLE = _crypt_table()


def mpq_hash_reference(data: bytes, hash_type: int) -> int:
    """MPQ HashString of ``data`` for hash type 0 (slot), 1 (check A) or 2 (check B).

    The per-byte loop as published; no case folding.
    """
    seed1, seed2 = _SEED1, _SEED2
    for ch in data:
        seed1 = CRYPT_TABLE[(hash_type << 8) + ch] ^ ((seed1 + seed2) & _MASK32)
        seed2 = (ch + seed1 + seed2 + (seed2 << 5) + 3) & _MASK32
    return seed1


# The fast version runs the three hash types side by side in one Python int,
# each in its own 40-bit lane (SIMD within a register).  The operations of the
# recurrence are lane-wise: XOR never crosses lanes, and a sum or product
# before masking stays below 2**39 (seed2 * 33 + seed1 + ch + 3), so carries
# never reach the next lane and one AND with the lane mask does three masks.
_LANE = 40
_LANES_MASK = _MASK32 | _MASK32 << _LANE | _MASK32 << 2 * _LANE
_ONES = 1 | 1 << _LANE | 1 << 2 * _LANE
_PACKED_CRYPT = [CRYPT_TABLE[ch] | CRYPT_TABLE[0x100 + ch] << _LANE | CRYPT_TABLE[0x200 + ch] << 2 * _LANE
                 for ch in range(256)]
_PACKED_CH3 = [(ch + 3) * _ONES for ch in range(256)]
_PACKED_SEED1 = _SEED1 * _ONES
_PACKED_SEED2 = _SEED2 * _ONES


def mpq_hashes(data: bytes) -> tuple[int, int, int]:
    """(type 0, type 1, type 2) hashes of ``data`` in one pass; equals three ``mpq_hash_reference`` calls.

    About 3.5x faster than one fused per-byte loop over three plain ints, and
    4.5x faster than three reference calls (CPython 3.11: ~8 us for 80 bytes).
    """
    crypt, ch3, lanes = _PACKED_CRYPT, _PACKED_CH3, _LANES_MASK
    seed1, seed2 = _PACKED_SEED1, _PACKED_SEED2
    for ch in data:
        seed1 = crypt[ch] ^ (seed1 + seed2) & lanes
        seed2 = ch3[ch] + seed1 + seed2 * 33 & lanes
    return seed1 & _MASK32, seed1 >> _LANE & _MASK32, seed1 >> 2 * _LANE


class StringHashSeen:
    """Open-addressing table of (check A, check B) pairs, probed linearly.

    Slot i holds an exists flag and the URL's type-1 and type-2 hashes; the
    search starts at slot (type-0 hash) & (size - 1) and "seen" means both
    checks match.  No URL text is kept, so a false positive needs two
    different URLs whose 32-bit checks A and B both collide (a 64-bit
    collision; about n**2 / 2**65 expected false positives after n URLs).
    The type-0 hash is stored per slot too: without the text it is the only
    way to find a pair's new slot when the table doubles (load > 0.5).
    Storage is four flat arrays (13 bytes per slot), never an object per URL.
    ``probes`` counts the occupied slots whose checks were compared.
    """
    name = "stringhash"

    def __init__(self, initial_slots: int = 1024) -> None:
        size = 8
        while size < initial_slots:
            size *= 2
        self._allocate(size)
        self._count = self._adds = self._lookups = self._probes = 0
        self._max_chain = self._rehashes = 0
        self._displacement = 0     # sum over stored pairs of slots between home and slot

    def _allocate(self, size: int) -> None:
        self._mask = size - 1
        self._exists = bytearray(size)
        self._slot_hash = array(_UINT32, bytes(4 * size))
        self._check_a = array(_UINT32, bytes(4 * size))
        self._check_b = array(_UINT32, bytes(4 * size))

    def _search(self, h0: int, a: int, b: int) -> tuple[int, bool]:
        """(slot, found): the slot holding (a, b), or the empty slot that ends the run."""
        mask, exists, check_a, check_b = self._mask, self._exists, self._check_a, self._check_b
        slot = h0 & mask
        compared = 0
        while exists[slot]:
            compared += 1
            if check_a[slot] == a and check_b[slot] == b:
                break
            slot = (slot + 1) & mask
        else:
            self._note_probes(compared)
            return slot, False
        self._note_probes(compared)
        return slot, True

    def _note_probes(self, compared: int) -> None:
        self._probes += compared
        if compared > self._max_chain:
            self._max_chain = compared

    def add(self, url: str) -> bool:
        self._adds += 1
        h0, a, b = mpq_hashes(url.encode())
        slot, found = self._search(h0, a, b)
        if found:
            return False
        if 2 * (self._count + 1) > len(self._exists):
            self._grow()
            slot, _ = self._search(h0, a, b)
        self._store(slot, h0, a, b)
        self._displacement += (slot - h0) & self._mask
        self._count += 1
        return True

    def __contains__(self, url: str) -> bool:
        self._lookups += 1
        return self._search(*mpq_hashes(url.encode()))[1]

    def __len__(self) -> int:
        return self._count

    def _store(self, slot: int, h0: int, a: int, b: int) -> None:
        self._exists[slot] = 1
        self._slot_hash[slot] = h0
        self._check_a[slot] = a
        self._check_b[slot] = b

    def _grow(self) -> None:
        old = (self._exists, self._slot_hash, self._check_a, self._check_b)
        self._allocate(2 * len(self._exists))
        self._rehashes += 1
        exists, mask = self._exists, self._mask
        displacement = 0
        for slot, occupied in enumerate(old[0]):
            if occupied:
                h0 = old[1][slot]
                new = h0 & mask
                while exists[new]:
                    new = (new + 1) & mask
                self._store(new, h0, old[2][slot], old[3][slot])
                displacement += (new - h0) & mask
        self._displacement = displacement

    def stats(self) -> dict[str, float | int]:
        """The UrlSeen counters; ``mean_chain`` is the mean probe length of a stored pair
        (slots compared by a lookup that finds it: 1 + its distance from its home slot)."""
        memory = sum(sys.getsizeof(part) for part in
                     (self._exists, self._slot_hash, self._check_a, self._check_b))
        return {"adds": self._adds, "new": self._count, "lookups": self._lookups,
                "probes": self._probes, "max_chain": self._max_chain,
                "mean_chain": 1 + self._displacement / self._count if self._count else 0.0,
                "distinct_keys": self._count, "bytes": memory,
                "slots": len(self._exists), "rehashes": self._rehashes}

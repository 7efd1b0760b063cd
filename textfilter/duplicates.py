"""ContentSeen: the crawl's memory of page contents, for exact and near-duplicate verdicts.

Held by the Controller in one thread (no locks).  The parser processes
compute the fingerprints (textfilter/fingerprint.py); this module only
compares them.

    seen = ContentSeen(near=True, distance=3)
    verdict = seen.check(page_id, text_md5, simhash)   # -> ContentVerdict, then remembered
    seen.remember(page_id, text_md5, simhash)          # rebuild on resume, no verdict

Exact duplicates: a dict from text MD5 to the first page checked with it.

Near duplicates: the permuted-block tables of Manku, Jain & Das Sarma,
"Detecting near-duplicates for web crawling" (WWW 2007).  Two fingerprints
within Hamming distance d differ in at most d bits; cut the 64 bits into b
blocks and they agree exactly on at least b - d of them (pigeonhole).  One
table per choice of b - d blocks maps those bits to the fingerprints having
them; a lookup gathers the fingerprints sharing a key with the query and
measures their distance exactly.  NearIndex picks b so that every key has
at least 16 bits (d=3: 4 tables; d=5: 7 blocks, 21 tables of 18-19-bit
keys), so with n random fingerprints a lookup examines about
tables * n / 2**key_bits candidates: measured for d=5, 8 at 10**5 pages and
80 at 10**6 (k+1 tables of 10-11-bit blocks would give 390 and 3,900).
``candidates_examined`` counts them, so the claim can be checked.
"""
from __future__ import annotations

from array import array
from dataclasses import dataclass
from itertools import combinations
from math import comb

from textfilter.fingerprint import text_md5

__all__ = ["ContentSeen", "ContentVerdict", "NearIndex", "exact_key"]

BITS = 64
NO_TEXT_MD5 = text_md5("")   # pages without text: never duplicates of each other
KEY_BITS = 16       # each table's key has at least this many bits (when MAX_TABLES allows)
MAX_TABLES = 64     # memory: each table costs 4 bytes per fingerprint plus its chain heads
MIN_SLOT_BITS = 10  # chain heads per table at the start: 2**10
MAX_SLOT_BITS = 20  # and at most 2**20 (4 MB per table)


def exact_key(text_md5: str) -> str:
    """What a page is judged by for exact duplicates: its text MD5, or ''
    (no verdict) for a page without text, which is not a copy of every other
    empty page. A shared crawl sends this to Redis, whose script judges as
    ContentSeen does."""
    return "" if text_md5 == NO_TEXT_MD5 else text_md5


@dataclass(frozen=True)
class ContentVerdict:
    """What ContentSeen.check found for one page; all None = new content."""
    duplicate_of: int | None        # first page with the same text MD5
    near_duplicate_of: int | None   # closest earlier page within the distance (ties: smallest id)
    hamming: int | None             # SimHash distance to near_duplicate_of

    @property
    def is_new(self) -> bool:
        return self.duplicate_of is None and self.near_duplicate_of is None


NEW = ContentVerdict(None, None, None)


class NearIndex:
    """Fingerprints by page, found again within a Hamming distance without a scan of all of them.

    The tables: the 64 bits are cut into b blocks, and each table is keyed by
    one choice of b - d of them (d = the distance). Two fingerprints within d
    differ in at most d blocks, so they agree on all b - d blocks of at least
    one choice: one table holds the one under the other's key. b is the
    smallest number of blocks that gives every key at least KEY_BITS bits
    with at most MAX_TABLES tables (d=3: 4 tables of 16-bit keys; d=4: 15
    tables of 20-22 bits; d=5: 21 tables of 18-19 bits), so a lookup meets
    about tables * n / 2**key_bits random candidates (d=5: n/12,000 instead
    of n/270 with d+1 tables of 10-11 bits).

    A table is an array of chain heads indexed by the key's low bits, and one
    "next" array per table (array('i'): 4 bytes an entry, no Python object
    per entry); the heads grow with the number of fingerprints, each table's
    up to 2**min(its key bits, MAX_SLOT_BITS) slots. Growing rebuilds every
    chain at once: a pause of a fraction of a second at 32,769 and 131,073
    fingerprints, a few microseconds a page spread over the crawl.
    """

    def __init__(self, distance: int) -> None:
        if not 0 <= distance < BITS:
            raise ValueError(f"distance must be 0..{BITS - 1}, got {distance}")
        self.distance = distance
        self.candidates_examined = 0   # fingerprints compared exactly, over all lookups
        self._blocks, self._choices = _design(distance)
        self._key_bits = [sum(self._blocks[i][2] for i in choice) for choice in self._choices]
        self._key_parts = [_key_parts([self._blocks[i] for i in choice]) for choice in self._choices]
        self._max_slot_bits = min(max(self._key_bits), MAX_SLOT_BITS)
        self._prints: list[int] = []             # fingerprint of each entry
        self._first_page: dict[int, int] = {}   # fingerprint -> smallest page id having it
        self._make_tables(min(MIN_SLOT_BITS, self._max_slot_bits))

    def __len__(self) -> int:
        """Distinct fingerprints held."""
        return len(self._first_page)

    @property
    def tables(self) -> int:
        return len(self._choices)

    @property
    def slots(self) -> int:
        """Chain heads of the smallest table now (a lookup meets at most about
        tables * len(self) / slots entries)."""
        return min(len(heads) for heads in self._heads)

    def add(self, page_id: int, fingerprint: int) -> None:
        known = self._first_page.get(fingerprint)
        if known is not None:
            self._first_page[fingerprint] = min(known, page_id)
            return
        self._first_page[fingerprint] = page_id
        self._prints.append(fingerprint)
        self._link(len(self._prints) - 1, fingerprint)
        if len(self._prints) > (1 << self._slot_bits) // 2 and self._slot_bits < self._max_slot_bits:
            self._make_tables(min(self._slot_bits + 2, self._max_slot_bits))

    def closest(self, fingerprint: int) -> tuple[int, int] | None:
        """(page id, distance) of the nearest fingerprint within the distance, ties to the smallest
        page id; None when there is none."""
        best: tuple[int, int] | None = None   # (distance, page id)
        prints = self._prints
        for entry in self._candidates(fingerprint):
            candidate = prints[entry]
            distance = (candidate ^ fingerprint).bit_count()
            if distance <= self.distance:
                found = (distance, self._first_page[candidate])
                best = found if best is None or found < best else best
        return None if best is None else (best[1], best[0])

    def _candidates(self, fingerprint: int) -> set[int]:
        """Entries in the chains of the fingerprint's slots (a superset of those sharing a key)."""
        found: set[int] = set()
        for heads, chain, slot in zip(self._heads, self._next, self._slots(fingerprint)):
            entry = heads[slot]
            while entry >= 0:
                found.add(entry)
                entry = chain[entry]
        self.candidates_examined += len(found)
        return found

    def _link(self, entry: int, fingerprint: int) -> None:
        for heads, chain, slot in zip(self._heads, self._next, self._slots(fingerprint)):
            chain.append(heads[slot])
            heads[slot] = entry

    def _slots(self, fingerprint: int) -> list[int]:
        """The fingerprint's key in each table (its bits in that table's blocks),
        cut to a slot. The last answer is kept: a check asks for the same
        fingerprint's slots twice (closest, then add)."""
        if fingerprint == self._last[0]:
            return self._last[1]
        slots = []
        for parts, wanted in zip(self._key_parts, self._wanted):
            key = 0
            for shift, mask, offset in parts:   # the chosen blocks, side by side
                key |= ((fingerprint >> shift) & mask) << offset
            slots.append(key & wanted)          # SimHash bits are evenly spread: no hash needed
        self._last = (fingerprint, slots)
        return slots

    def _make_tables(self, slot_bits: int) -> None:
        """(Re)build every table with 2**slot_bits chain heads."""
        self._slot_bits = slot_bits
        self._last: tuple[int | None, list[int]] = (None, [])
        widths = [min(slot_bits, key_bits, MAX_SLOT_BITS) for key_bits in self._key_bits]
        self._wanted = [(1 << width) - 1 for width in widths]
        self._heads = [array("i", [-1]) * (1 << width) for width in widths]
        self._next = [array("i") for _ in self._choices]
        for entry, fingerprint in enumerate(self._prints):
            self._link(entry, fingerprint)


class ContentSeen:
    """Exact (MD5) and, when near=True, near (SimHash within distance) duplicate detection.

    "Earlier" means checked or remembered earlier.  Exact duplicates are not
    added to the near index (their fingerprint equals their original's, which
    is already there); near duplicates are, so a chain of small edits is
    followed page by page.
    """

    def __init__(self, near: bool, distance: int = 3) -> None:
        self.near = near
        self._first_by_md5: dict[str, int] = {}
        self._index = NearIndex(distance)

    @property
    def distance(self) -> int:
        return self._index.distance

    @property
    def candidates_examined(self) -> int:
        """Fingerprints compared exactly so far (the cost of the near lookups)."""
        return self._index.candidates_examined

    def __len__(self) -> int:
        """Distinct texts remembered."""
        return len(self._first_by_md5)

    def check(self, page_id: int, text_md5: str, simhash: int | None) -> ContentVerdict:
        """The verdict for this page against every earlier one; then the page is remembered.

        simhash may be None (no text to fingerprint, or exact mode): the page
        takes part in exact detection only.
        """
        if not exact_key(text_md5):
            return NEW
        first = self._first_by_md5.setdefault(text_md5, page_id)
        if first != page_id:
            return ContentVerdict(first, None, None)
        if not self.near or simhash is None:
            return NEW
        match = self._index.closest(simhash)
        self._index.add(page_id, simhash)
        return NEW if match is None else ContentVerdict(None, match[0], match[1])

    def remember(self, page_id: int, text_md5: str, simhash: int | None) -> None:
        """Record a page without a verdict (rebuilding after a resume, in page order)."""
        if not exact_key(text_md5):
            return
        if self._first_by_md5.setdefault(text_md5, page_id) == page_id and self.near and simhash is not None:
            self._index.add(page_id, simhash)


def _design(distance: int) -> tuple[list[tuple[int, int, int]], tuple[tuple[int, ...], ...]]:
    """The blocks (shift, mask, width) and the tables (which blocks key each)
    for a distance: the fewest blocks whose keys have KEY_BITS bits within
    MAX_TABLES tables; past that (distance 7 and up), the design with the
    longest keys that stays within MAX_TABLES."""
    best = None
    for blocks in range(distance + 1, BITS + 1):
        kept = blocks - distance
        tables = comb(blocks, kept)
        if tables > MAX_TABLES:
            continue
        key_bits = kept * (BITS // blocks)
        if key_bits >= KEY_BITS:
            best = blocks
            break
        if best is None or key_bits > (best - distance) * (BITS // best):
            best = blocks
    layout = _block_layout(best)
    return layout, tuple(combinations(range(best), best - distance))


def _key_parts(blocks: list[tuple[int, int, int]]) -> tuple[tuple[int, int, int], ...]:
    """(shift, mask, offset) that put these blocks side by side, the last one lowest."""
    parts, offset = [], 0
    for shift, mask, width in reversed(blocks):
        parts.append((shift, mask, offset))
        offset += width
    return tuple(parts)


def _block_layout(blocks: int) -> list[tuple[int, int, int]]:
    """(shift, mask, width) of `blocks` contiguous bit ranges covering 64 bits, sizes differing by at most 1."""
    size, extra = divmod(BITS, blocks)
    layout, shift = [], 0
    for block in range(blocks):
        width = size + (1 if block < extra else 0)
        layout.append((shift, (1 << width) - 1, width))
        shift += width
    return layout

"""ContentSeen: the crawl's memory of page contents, for exact and near-duplicate verdicts.

Held by the Controller in one thread (no locks).  The parser processes
compute the fingerprints (textfilter/fingerprint.py); this module only
compares them.

    seen = ContentSeen(near=True, distance=3)
    verdict = seen.check(page_id, text_md5, simhash)   # -> ContentVerdict, then remembered
    seen.remember(page_id, text_md5, simhash)          # rebuild on resume, no verdict

Exact duplicates: a dict from text MD5 to the first page checked with it.

Near duplicates: the permuted-block tables of Manku, Jain & Das Sarma,
"Detecting near-duplicates for web crawling" (WWW 2007).  The 64 bits are cut
into distance+1 contiguous blocks; two fingerprints within Hamming distance d
differ in at most d bits, so (pigeonhole) at least one of the d+1 blocks is
identical in both.  One dict per block maps a block value to the fingerprints
having it; a lookup gathers the fingerprints sharing any block with the query
and measures their distance exactly.  With n random fingerprints a lookup
examines about n * (d+1) / 2**(64/(d+1)) candidates: for d=3 (16-bit blocks)
about 6 at 10**5 pages and 61 at 10**6; for d=6 (9-bit blocks) about 1,400 at
10**5.  ``candidates_examined`` counts them, so the claim can be checked.
"""
from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ContentSeen", "ContentVerdict", "NearIndex"]

BITS = 64


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
    """Fingerprints by page, found again within a Hamming distance without a scan of all of them."""

    def __init__(self, distance: int) -> None:
        if not 0 <= distance < BITS:
            raise ValueError(f"distance must be 0..{BITS - 1}, got {distance}")
        self.distance = distance
        self.candidates_examined = 0   # fingerprints compared exactly, over all lookups
        self._blocks = _block_layout(distance + 1)
        self._tables: list[dict[int, list[int]]] = [{} for _ in self._blocks]
        self._first_page: dict[int, int] = {}   # fingerprint -> smallest page id having it

    def __len__(self) -> int:
        """Distinct fingerprints held."""
        return len(self._first_page)

    def add(self, page_id: int, fingerprint: int) -> None:
        known = self._first_page.get(fingerprint)
        if known is not None:
            self._first_page[fingerprint] = min(known, page_id)
            return
        self._first_page[fingerprint] = page_id
        for table, (shift, mask) in zip(self._tables, self._blocks):
            table.setdefault((fingerprint >> shift) & mask, []).append(fingerprint)

    def closest(self, fingerprint: int) -> tuple[int, int] | None:
        """(page id, distance) of the nearest fingerprint within the distance, ties to the smallest
        page id; None when there is none."""
        best: tuple[int, int] | None = None   # (distance, page id)
        for candidate in self._candidates(fingerprint):
            distance = (candidate ^ fingerprint).bit_count()
            if distance <= self.distance:
                found = (distance, self._first_page[candidate])
                best = found if best is None or found < best else best
        return None if best is None else (best[1], best[0])

    def _candidates(self, fingerprint: int) -> set[int]:
        candidates: set[int] = set()
        for table, (shift, mask) in zip(self._tables, self._blocks):
            candidates.update(table.get((fingerprint >> shift) & mask, ()))
        self.candidates_examined += len(candidates)
        return candidates


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
        if self._first_by_md5.setdefault(text_md5, page_id) == page_id and self.near and simhash is not None:
            self._index.add(page_id, simhash)


def _block_layout(blocks: int) -> list[tuple[int, int]]:
    """(shift, mask) of `blocks` contiguous bit ranges covering 64 bits, sizes differing by at most 1."""
    size, extra = divmod(BITS, blocks)
    layout, shift = [], 0
    for block in range(blocks):
        width = size + (1 if block < extra else 0)
        layout.append((shift, (1 << width) - 1))
        shift += width
    return layout

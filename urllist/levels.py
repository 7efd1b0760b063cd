"""Level tracking as counters: for each level, how many URLs were queued
and how many processed. Nothing is kept per URL, so the same arithmetic
works in RAM, over a disk queue, or across servers.

A level is *open* once its URL set is complete: level 0 as soon as seeds
exist, level k+1 when every URL of levels <= k was processed (only those
pages can add level k+1 URLs, and a level k+2 URL cannot exist before
level k+1 opens). The open level is the deepest opened one; a level is
*finished* when it and every level before it is processed (the
level-closed event the Controller reports).

The design paper's level flags are derived: flags[k] is the queue length m
at the end of level k, the number of URLs of levels 0..k, for every level
opened (its URLs are all known, so the sum is final).
"""
from __future__ import annotations

from itertools import accumulate


class Levels:
    def __init__(self) -> None:
        self.queued: list[int] = []      # level -> URLs queued at it
        self.processed: list[int] = []   # level -> URLs of it processed
        self.opened = 0                  # levels whose URLs are all known
        self.total = 0                   # URLs queued, all levels
        self.total_processed = 0

    def add(self, level: int) -> None:
        while len(self.queued) <= level:
            self.queued.append(0)
            self.processed.append(0)
        self.queued[level] += 1
        self.total += 1
        self.opened = self.opened or 1   # the seeds' level: open once it has a URL

    def done(self, level: int) -> None:
        self.processed[level] += 1
        self.total_processed += 1

    def open_next(self) -> bool:
        """Open the next level if the ones open are processed and it has URLs
        (True: one opened; call until False)."""
        if self.opened and self.opened < len(self.queued) and self.finished == self.opened:
            self.opened += 1
            return True
        return False

    @property
    def finished(self) -> int:
        """Levels completely processed, counted from level 0."""
        k = 0
        while k < self.opened and self.processed[k] == self.queued[k]:
            k += 1
        return k

    @property
    def current(self) -> int:
        """The open level: the one being processed now."""
        return max(self.opened - 1, 0)

    @property
    def flags(self) -> tuple[int, ...]:
        return tuple(accumulate(self.queued[:self.opened]))

    def exhausted(self) -> bool:
        return self.total_processed == self.total

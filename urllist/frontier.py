"""URL_List: the frontier, a total queue with the design paper's level flags.

Every accepted URL is appended once to the *total queue* in discovery
order; its position is its id. A read cursor hands URLs out. The
level-flag array records, for each level k, the queue length m at the
moment level k became complete (all of its URLs discovered): queue
positions [flags[k-1], flags[k]) are exactly the URLs of level k.

Why levels stay exact with parallel workers: ``pop`` never hands out a
URL of level k+1 while a URL of level k is still being processed. Level
k+1 URLs are only discovered by processing level k pages, so once level
k is fully processed every level k+1 URL is in the queue, and each URL
got the level of the first (hence shallowest) page that linked to it.
"""
from __future__ import annotations

from typing import Iterable, Protocol

from urllist.queued import QueuedUrl


class Frontier(Protocol):
    def push(self, items: Iterable[QueuedUrl]) -> None:
        """Append new URLs. Their ids must continue the queue (see next_id)."""

    def pop(self, n: int) -> list[QueuedUrl]:
        """Up to n items in crawl order, never mixing levels; [] = nothing ready now."""

    def done(self, item: QueuedUrl) -> None:
        """The item is fully processed: its children were pushed before this call."""

    @property
    def next_id(self) -> int:
        """The id the next pushed URL must carry (the queue length)."""


class MemoryFrontier:
    """The total queue kept in memory (a list): O(1) push, pop and done."""

    def __init__(self) -> None:
        self._queue: list[QueuedUrl] = []
        self._cursor = 0            # next position to hand out
        self._processed = 0         # items reported done
        self._in_flight = 0         # handed out, not yet done
        self._flags: list[int] = []  # flags[k] = queue length m when level k was complete
        self._done_before: set[int] = set()  # ids processed before a restart (see restore)

    @property
    def next_id(self) -> int:
        return len(self._queue)

    @property
    def level_flags(self) -> tuple[int, ...]:
        """Queue total m at the end of each level whose URLs are all known."""
        return tuple(self._flags)

    @property
    def current_level(self) -> int:
        """The level being handed out or processed now."""
        return max(len(self._flags) - 1, 0)

    @property
    def finished_levels(self) -> int:
        """How many levels are completely processed."""
        return sum(1 for m in self._flags if m <= self._processed) if self._flags else 0

    def __len__(self) -> int:
        return len(self._queue)

    def push(self, items: Iterable[QueuedUrl]) -> None:
        for item in items:
            if item.id != len(self._queue):
                raise ValueError(f"id {item.id} does not continue the queue at {len(self._queue)}")
            self._queue.append(item)

    def pop(self, n: int) -> list[QueuedUrl]:
        self._close_levels()
        if not self._flags or n <= 0:
            return []
        items: list[QueuedUrl] = []
        end = self._flags[-1]
        while self._cursor < end and len(items) < n:
            item = self._queue[self._cursor]
            self._cursor += 1
            if item.id not in self._done_before:
                items.append(item)
        self._in_flight += len(items)
        return items

    def done(self, item: QueuedUrl) -> None:
        if self._in_flight <= 0:
            raise ValueError(f"done({item.id}) for an item that was never handed out")
        self._in_flight -= 1
        self._processed += 1
        self._close_levels()

    def restore(self, items: Iterable[QueuedUrl], done_ids: set[int]) -> None:
        """Rebuild after a restart: the whole total queue, and the ids already processed.

        Crawling never hands out level k+1 before level k is processed, so the
        processed ids are all of levels 0..c-1 and some of level c; the level
        flags are the end positions of levels 0..c (and c+1 if c is complete).
        """
        if self._queue:
            raise ValueError("restore() needs an empty frontier")
        self.push(items)
        self._done_before = set(done_ids)
        self._processed = len(self._done_before)
        ends: dict[int, int] = {}
        for position, item in enumerate(self._queue):
            ends[item.level] = position + 1
        for level in sorted(ends):
            self._flags.append(ends[level])
            if self._processed < ends[level]:
                break

    def exhausted(self) -> bool:
        """True when every queued URL has been handed out and processed."""
        return self._processed == len(self._queue)

    def _close_levels(self) -> None:
        # The first flag is set once seeds exist; each later one when the
        # previous level is fully processed, so no URL of it can still be
        # waiting for its children to be queued.
        if not self._flags:
            if self._queue:
                self._flags.append(len(self._queue))
            return
        if self._processed == self._flags[-1] and len(self._queue) > self._flags[-1]:
            self._flags.append(len(self._queue))

"""URL_List's seam: the Frontier protocol, everything the Controller asks of
crawl state, so another frontier (a Redis one, a priority order) changes no
Controller code.

The design paper's total queue underlies it: every accepted URL is appended
once in discovery order, its position is its id, and the level-flag array
records, for each level k, the queue length m at the moment level k became
complete (all of its URLs discovered): ids [flags[k-1], flags[k]) are
exactly the URLs of level k. No frontier needs to keep that queue: ids
come from a counter and the flags from per-level counters
(urllist/levels.py), so a URL processed is forgotten. The breadth-first
implementation is urllist.hosts.HostFrontier (per-host queues in a
storage, RAM or disk; readiness, fetch-ahead).

Why levels stay exact with parallel workers and fetch-ahead: level k+1 URLs
are only discovered by processing level k pages, after every page of levels
<= k-1 was processed, so each URL has its final level when it is queued.
It may be fetched early; it is processed (its children queued) only once
level k is (``current_level`` tells the Controller which pages to park).
"""
from __future__ import annotations

from typing import Iterable, Protocol

from urllist.queued import QueuedUrl


class Frontier(Protocol):
    def push(self, items: Iterable[QueuedUrl]) -> None:
        """Append new URLs. Their ids must continue the queue (see next_id)."""

    def pop(self, n: int, now: float) -> list[QueuedUrl]:
        """Up to n URLs whose host may start now, a request slot reserved on
        each; the open level first, then (bounded) the next one."""

    def next_ready(self, now: float) -> float | None:
        """When the next host in the window may start; None: not without an
        event (a fetch ending, a level closing)."""

    def fetched(self, item: QueuedUrl) -> None:
        """The fetch of item ended, its slot released."""

    def requeue(self, item: QueuedUrl, host: str, not_before: float | None = None) -> None:
        """Hand item out again, first of host's queue, not before not_before
        (a retry, a redirect that goes on at host)."""

    def done(self, item: QueuedUrl) -> None:
        """The item is fully processed: its children were pushed before this call."""

    def exhausted(self) -> bool:
        """Every queued URL handed out and processed: the crawl is over."""

    def resume(self, journal_path, done_ids: set[int]) -> None:
        """Rebuild after a restart from the crawl's journal (urllist/journal.py)
        and the ids processed: each frontier reads what its order needs."""

    def restore(self, items: Iterable[QueuedUrl], done_ids: set[int]) -> None:
        """Rebuild from the whole total queue (streamed, in id order) and the
        ids processed (an order also takes the events it heard, see ordered.py)."""

    @property
    def next_id(self) -> int:
        """The id the next pushed URL must carry (the queue length)."""

    @property
    def level_flags(self) -> tuple[int, ...]:
        """Queue total m at the end of each level whose URLs are all known."""

    @property
    def current_level(self) -> int:
        """The open level: pages of a deeper one wait until it closes."""

    @property
    def finished_levels(self) -> int:
        """How many levels are completely processed (level closed events)."""

    def __len__(self) -> int:
        """The total queue's length."""

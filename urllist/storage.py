"""Where queued URLs wait: one FIFO queue per host (the ``HostQueues``
protocol), kept in RAM here (``MemoryQueues``) or spilled to disk past a
RAM budget (urllist/diskqueues.py).

A storage knows nothing of levels, readiness or politeness; the frontier
(urllist/hosts.py) is an *order* over it: which host goes next, and when.
A storage answers only: append to a host's queue, take a host's head, put
a URL handed out before back at a host's head, and what level that head
and id are (so the frontier can order hosts without taking).

Each host's queue is a "two-stack" FIFO: new URLs are appended to a tail
list; the head list holds the oldest ones in reverse, so taking one is a
``pop()`` from its end; when it runs dry, the tail is reversed into it.
Every URL is moved twice at most, and no per-URL link is kept. An empty
head or tail is the shared empty tuple, not a list of its own: with 10^6
hosts, an empty list each would be 56 MB.

A URL put back (a retry after a backoff, a redirect that goes on at
another host, a host's first robots.txt) waits in a short list of its own,
``back``, merged with the queue by id: a retry goes first (its id is
older than any its host still has waiting), and a level's URLs never wait
behind a deeper level's (ids grow with the level). Few URLs are ever put
back (at most those handed out), so ``back`` is a plain sorted list.
"""
from __future__ import annotations

import bisect
from typing import Protocol

from urllist.queued import QueuedUrl

NO_BLOCK = -1          # an empty on-disk chain (used by diskqueues.py)
ITEM_RAM_BYTES = 190   # RAM one queued URL costs besides its text: object, ints, list slot


class HostQueues(Protocol):
    """Per-host FIFO queues of QueuedUrl; not thread-safe."""

    def append(self, host: str, item: QueuedUrl) -> None:
        """Queue item last of host's queue."""

    def take(self, host: str) -> QueuedUrl:
        """Remove and return host's head (IndexError when host has none)."""

    def put_back(self, host: str, item: QueuedUrl) -> None:
        """Queue item, handed out before, back in host's queue in id order
        (first, for a retry of host's own URL)."""

    def head(self, host: str) -> tuple[int, int] | None:
        """(level, id) of host's head; None when host has nothing waiting."""

    def waiting(self, host: str) -> int:
        """How many URLs host has waiting."""

    def __len__(self) -> int:
        """URLs waiting over all hosts."""

    def stats(self) -> dict[str, int]:
        """ram_bytes (URLs held in RAM, estimated), disk_bytes (now and
        peak_disk_bytes), hosts (with URLs waiting), spilled (URLs written out)."""

    def close(self) -> None:
        """Give back what the storage holds outside RAM (its files)."""


class Host:
    """One host's queue: head (reversed) + on-disk chain + tail, and ``back``.
    The disk fields stay at NO_BLOCK in RAM-only storage; slots keep the
    state at a few dozen bytes besides the lists."""
    __slots__ = ("head", "tail", "back", "count", "first", "first_len", "first_level",
                 "first_id", "last")

    def __init__(self) -> None:
        self.head: list[QueuedUrl] | tuple = ()
        self.tail: list[QueuedUrl] | tuple = ()
        self.back: list[QueuedUrl] | None = None
        self.count = 0
        self.first = self.last = NO_BLOCK   # the chain's first and last block on disk
        self.first_len = self.first_level = self.first_id = 0   # and the first's URL

    def main_key(self) -> tuple[int, int] | None:
        """(level, id) of the queue's head (``back`` aside)."""
        if self.head:
            return _key(self.head[-1])
        if self.first != NO_BLOCK:
            return self.first_level, self.first_id
        return _key(self.tail[0]) if self.tail else None

    def back_first(self) -> bool:
        """Whether the next URL comes from ``back``."""
        if not self.back:
            return False
        key = self.main_key()
        return key is None or self.back[0].id < key[1]


class MemoryQueues:
    """Every host's queue in RAM: what a crawl that fits uses, and the RAM
    tier of DiskQueues."""

    def __init__(self) -> None:
        self._hosts: dict[str, Host] = {}
        self._len = 0
        self._ram = 0   # bytes the queued URLs take in RAM, estimated

    def append(self, host: str, item: QueuedUrl) -> None:
        state = self._hosts.get(host)
        if state is None:
            state = self._hosts[host] = Host()
        if state.tail:
            state.tail.append(item)
        else:
            state.tail = [item]
        state.count += 1
        self._len += 1
        self._ram += ITEM_RAM_BYTES + len(item.url)

    def take(self, host: str) -> QueuedUrl:
        state = self._hosts[host]
        if state.back_first():
            item = state.back.pop(0)
        else:
            if not state.head:
                self._refill(state)
            item = state.head.pop()
        state.count -= 1
        self._len -= 1
        self._ram -= ITEM_RAM_BYTES + len(item.url)
        if not state.count:
            del self._hosts[host]
        return item

    def _refill(self, state: Host) -> None:
        """The head ran dry: the oldest URLs after it become the head."""
        state.head, state.tail = state.tail, ()
        state.head.reverse()

    def put_back(self, host: str, item: QueuedUrl) -> None:
        state = self._hosts.get(host)
        if state is None:
            state = self._hosts[host] = Host()
        if state.back is None:
            state.back = []
        bisect.insort(state.back, item, key=_item_id)
        state.count += 1
        self._len += 1
        self._ram += ITEM_RAM_BYTES + len(item.url)

    def head(self, host: str) -> tuple[int, int] | None:
        state = self._hosts.get(host)
        if state is None:
            return None
        return _key(state.back[0]) if state.back_first() else state.main_key()

    def waiting(self, host: str) -> int:
        state = self._hosts.get(host)
        return state.count if state is not None else 0

    def __len__(self) -> int:
        return self._len

    def stats(self) -> dict[str, int]:
        return {"ram_bytes": self._ram, "disk_bytes": 0, "peak_disk_bytes": 0,
                "hosts": len(self._hosts), "spilled": 0}

    def close(self) -> None:
        """Nothing outside RAM."""


def _item_id(item: QueuedUrl) -> int:
    return item.id


def _key(item: QueuedUrl) -> tuple[int, int]:
    return item.level, item.id

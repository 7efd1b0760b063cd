"""QueuedUrl: one entry of the total queue (URL_List)."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)   # slots: ~100 bytes less per queued URL
class QueuedUrl:
    id: int              # position in the total queue, in discovery order, from 0
    url: str             # normalized absolute URL
    level: int           # shortest link distance from a seed (seeds are level 0)
    parent_id: int | None  # id of the page the URL was first found on; None for seeds


class TotalQueue:
    """The design paper's total queue: every accepted URL once, its position its id."""
    _queue: list[QueuedUrl]

    @property
    def next_id(self) -> int:
        return len(self._queue)

    def __len__(self) -> int:
        return len(self._queue)

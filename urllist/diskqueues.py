"""Per-host queues that spill to disk past a RAM budget (``DiskQueues``), so
a frontier of 10^8 URLs fits in a laptop's memory.

Below the budget it *is* MemoryQueues (urllist/storage.py): a small crawl
never touches the disk. Once the URLs held in RAM pass the budget, every
host's tail (its newest URLs) is written out as one block, and RAM is
left with each host's head only. A host's queue is then

    head (RAM, oldest)  ->  chain of blocks on disk  ->  tail (RAM, newest)

and taking from it reads the chain's first block back into the head when
the head runs dry. FIFO order holds because blocks are chained in the
order they were written.

On disk: blocks are appended to segment files in large buffered writes.
A block is a header (where the host's *next* block is, its length and its
first URL's level and id, and how many URLs this block holds) and its
records (id, parent id, level, URL). The next pointer of a host's last
block is written when the host's next block is (``pwrite`` of 24 bytes;
in the write buffer if not flushed yet). So RAM keeps per host only where
its chain begins and ends and its first URL's (level, id) (the frontier
orders hosts by it), never anything per URL on disk. Reads are ``pread``,
not mmap: mapped pages would count in the process's RSS.

A segment is closed (and its space given back) once every block in it was
read. Segment files are anonymous temporary files in the directory given
(a crawl's out/state): they vanish when closed or when the process dies,
so a killed crawl leaves no stale queue behind. They need not survive a
kill: the journal is the durable state, and --resume rebuilds the queues
from it (HostFrontier.restore).
"""
from __future__ import annotations

import os
import struct
import tempfile
from pathlib import Path

from urllist.queued import QueuedUrl
from urllist.storage import ITEM_RAM_BYTES, NO_BLOCK, Host, MemoryQueues

DEFAULT_RAM_BYTES = 256 << 20     # queued URLs held in RAM before spilling (--frontier-ram)
SEGMENT_BYTES = 64 << 20          # a segment file grows to about this, then a new one starts
WRITE_BUFFER_BYTES = 1 << 20      # blocks are written to the file in chunks of about this
MAX_BLOCK_URLS = 512              # a block read back is at most this many URLs in RAM
OFFSET_BITS = 40                  # a block's address: segment number << 40 | offset
HEADER = struct.Struct("<qIiqI")  # next block, its length, its first level and id; URLs in this block
LINK = struct.Struct("<qIiq")     # the header's first four fields, patched later
RECORD = struct.Struct("<qqiI")   # id, parent id (-1: none), level, URL length in bytes


class DiskQueues(MemoryQueues):
    """Per-host FIFO queues in RAM up to ``ram_bytes``, on disk past it."""

    def __init__(self, directory: Path | str, ram_bytes: int = DEFAULT_RAM_BYTES,
                 segment_bytes: int = SEGMENT_BYTES) -> None:
        super().__init__()
        self._budget = ram_bytes
        self._limit = ram_bytes      # spill when the RAM estimate passes this
        self._segments = Segments(Path(directory), segment_bytes)
        self._spilled = 0

    def append(self, host: str, item: QueuedUrl) -> None:
        super().append(host, item)
        if self._ram > self._limit:
            self._spill()

    def _spill(self) -> None:
        """Every host's tail goes to disk as a block at the end of its chain."""
        for state in self._hosts.values():
            if state.tail:
                self._write_tail(state)
        # Heads read back stay in RAM; if they alone fill the budget, the
        # next spill waits for half a budget of new URLs, not one.
        self._limit = max(self._budget, self._ram + self._budget // 2)

    def _write_tail(self, state: Host) -> None:
        tail = state.tail
        self._ram -= sum(ITEM_RAM_BYTES + len(item.url) for item in tail)
        self._spilled += len(tail)
        for start in range(0, len(tail), MAX_BLOCK_URLS):
            block = tail[start:start + MAX_BLOCK_URLS]
            data = encode(block)
            where = self._segments.write(data, len(block))
            level, first_id = block[0].level, block[0].id
            if state.first == NO_BLOCK:
                state.first, state.first_len = where, len(data)
                state.first_level, state.first_id = level, first_id
            else:
                self._segments.patch(state.last, LINK.pack(where, len(data), level, first_id))
            state.last = where
        state.tail = ()

    def _refill(self, state: Host) -> None:
        if state.first == NO_BLOCK:
            super()._refill(state)
            return
        data = self._segments.read(state.first, state.first_len)
        following, length, level, first_id, count = HEADER.unpack_from(data)
        self._segments.release(state.first, count)
        state.head = decode(data, count)
        state.head.reverse()
        self._ram += sum(ITEM_RAM_BYTES + len(item.url) for item in state.head)
        state.first, state.first_len = following, length
        state.first_level, state.first_id = level, first_id
        if following == NO_BLOCK:
            state.last = NO_BLOCK

    def stats(self) -> dict[str, int]:
        return {**super().stats(), "disk_bytes": self._segments.bytes,
                "peak_disk_bytes": self._segments.peak_bytes, "spilled": self._spilled}

    def close(self) -> None:
        self._segments.close()


def encode(items: list[QueuedUrl]) -> bytes:
    parts = [HEADER.pack(NO_BLOCK, 0, 0, 0, len(items))]
    for item in items:
        url = item.url.encode()
        parent = -1 if item.parent_id is None else item.parent_id
        parts.append(RECORD.pack(item.id, parent, item.level, len(url)))
        parts.append(url)
    return b"".join(parts)


def decode(data: bytes, count: int) -> list[QueuedUrl]:
    items = []
    pos = HEADER.size
    unpack, size = RECORD.unpack_from, RECORD.size
    for _ in range(count):
        item_id, parent, level, length = unpack(data, pos)
        pos += size
        items.append(QueuedUrl(item_id, data[pos:pos + length].decode(), level,
                               None if parent < 0 else parent))
        pos += length
    return items


class Segments:
    """Append-only segment files of blocks, each dropped once all its blocks
    were read. An address is segment << OFFSET_BITS | offset."""

    def __init__(self, directory: Path, segment_bytes: int) -> None:
        self._directory = directory
        self._segment_bytes = segment_bytes
        self._files: dict[int, object] = {}   # segment -> its open temporary file
        self._live: dict[int, int] = {}       # segment -> URLs in it not read back yet
        self._ends: dict[int, int] = {}       # segment -> its length, written or buffered
        self._current = -1
        self._buffer = bytearray()            # the current segment's end, not written yet
        self._flushed = 0                     # where the buffer begins in the current segment
        self.bytes = 0                        # disk held now (segments not dropped yet)
        self.peak_bytes = 0

    def write(self, data: bytes, urls: int) -> int:
        if self._current < 0 or self._ends[self._current] >= self._segment_bytes:
            self._start_segment()
        segment = self._current
        where = segment << OFFSET_BITS | self._ends[segment]
        self._buffer += data
        self._ends[segment] += len(data)
        self._live[segment] += urls
        self.bytes += len(data)
        self.peak_bytes = max(self.peak_bytes, self.bytes)
        if len(self._buffer) >= WRITE_BUFFER_BYTES:
            self._flush()
        return where

    def patch(self, where: int, data: bytes) -> None:
        segment, offset = where >> OFFSET_BITS, where & ((1 << OFFSET_BITS) - 1)
        if segment == self._current and offset >= self._flushed:
            start = offset - self._flushed
            self._buffer[start:start + len(data)] = data
        else:
            os.pwrite(self._files[segment].fileno(), data, offset)

    def read(self, where: int, length: int) -> bytes:
        segment, offset = where >> OFFSET_BITS, where & ((1 << OFFSET_BITS) - 1)
        if segment == self._current and offset + length > self._flushed:
            self._flush()
        data = os.pread(self._files[segment].fileno(), length, offset)
        if len(data) != length:
            raise OSError(f"frontier segment {segment}: short read at {offset}")
        return data

    def release(self, where: int, urls: int) -> None:
        """urls of the block at where were read: drop its segment once all were."""
        segment = where >> OFFSET_BITS
        self._live[segment] -= urls
        if self._live[segment]:
            return
        if segment == self._current:   # start it over: every block in it was read
            self._buffer.clear()
            self._files[segment].truncate(0)
            self.bytes -= self._ends[segment]
            self._ends[segment] = self._flushed = 0
        else:
            self._drop(segment)

    def _start_segment(self) -> None:
        if self._current >= 0:
            self._flush()
            if not self._live[self._current]:
                self._drop(self._current)
        else:
            self._directory.mkdir(parents=True, exist_ok=True)
        self._current += 1
        # Anonymous: gone when closed or when the process ends, however it ends.
        self._files[self._current] = tempfile.TemporaryFile(dir=self._directory, prefix="frontier-",
                                                            buffering=0)
        self._live[self._current] = self._ends[self._current] = 0
        self._flushed = 0

    def _drop(self, segment: int) -> None:
        self._files.pop(segment).close()
        self.bytes -= self._ends.pop(segment)
        del self._live[segment]

    def _flush(self) -> None:
        if self._buffer:
            os.pwrite(self._files[self._current].fileno(), self._buffer, self._flushed)
            self._flushed += len(self._buffer)
            self._buffer.clear()

    def close(self) -> None:
        for file in self._files.values():
            file.close()
        self._files.clear()
        self._live.clear()
        self._ends.clear()
        self._buffer.clear()
        self._current = -1
        self.bytes = 0

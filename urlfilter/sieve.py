"""SieveSeen: an exact URL-seen set whose RAM does not grow with the crawl.

The idea is BUbiNG's sieve, made to answer at once. Each URL becomes a 64-bit
fingerprint (BLAKE2b), kept at one of three levels, newest first:

1. the buffer, a set of the newest fingerprints (2**18 of them at most);
2. the run, a sorted array of older ones in RAM (2**23 at most, 64 MB):
   a full buffer is sorted and merged into it;
3. the file, a sorted file of all older ones on disk (``keys.<token>``,
   8 bytes each): a full run is merged into it, the old file streamed in
   8 MiB chunks into a new one that replaces it, so a merge never holds the
   file in RAM. RAM keeps a sparse index of the file: the first fingerprint
   of every 4 KiB block (1/512 of the file).

"Seen?" asks the buffer (a hash lookup), the run (a binary search), then the
index, which names the one block the fingerprint can be in: one ``pread`` of
4 KiB and a binary search there. That read comes from the operating system's
page cache (not counted as the process's RSS), or from the disk once the
file outgrows the cache. Why the run: a merge into the file rewrites the
whole file, so the fewer merges the better, and 8 bytes per fingerprint in a
sorted array hold eight times more than a Python set; 10^8 distinct URLs
cost 12 merges into the file.

RAM: about 90 MB when the buffer and the run are full (150 MB for the
moment a full buffer is merged into a full run: the run is copied), whatever
the size of the crawl, plus the index (1/64 byte per URL). Disk: 8 bytes
per URL.

Exactness: two different URLs with one fingerprint count as one, with
probability about n**2 / 2**65 over n URLs (2.7e-4 for 10^8 URLs), as for
StringHash's two 32-bit checks.

The file is a cache of what the crawl has recorded elsewhere, not a record:
a new sieve removes what an earlier one left in its directory (a crawl killed
with -9) and starts empty, and a resumed crawl adds its journaled URLs again.
Nothing is written before the first merge into the file, so a crawl that
finds fewer than 2**23 URLs never touches the disk; the files are removed
when the sieve is closed or collected.
"""
from __future__ import annotations

import os
import sys
import tempfile
import weakref
from array import array
from bisect import bisect_left, bisect_right
from hashlib import blake2b
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

__all__ = ["SieveSeen", "fingerprint"]

BUFFER_SIZE = 1 << 18              # new fingerprints kept unsorted in a set: about 18 MB
RUN_SIZE = 1 << 23                 # sorted fingerprints kept in RAM before a merge to disk: 64 MB
BLOCK_KEYS = 512                    # fingerprints per block read by one lookup: 4 KiB
BLOCK_BYTES = 8 * BLOCK_KEYS
MERGE_CHUNK = 1 << 20               # fingerprints of the old file merged at a time (8 MiB)
FILE_PREFIX, TEMPORARY_SUFFIX = "keys.", ".tmp"   # keys.<token>: the sorted file
_KEY = "Q" if array("Q").itemsize == 8 else "L"


def fingerprint(url: str) -> int:
    """The URL's 64-bit fingerprint: the first 8 bytes of BLAKE2b of its UTF-8 bytes."""
    return int.from_bytes(blake2b(url.encode(), digest_size=8).digest(), "little")


class _Files:
    """The sieve's open file and directory, apart from the sieve, so that a
    finalizer can remove them without keeping the sieve alive. The names
    carry a token of this sieve's own: an earlier sieve of the same directory
    (a crawl restarted in one process) removes its files, never these."""

    def __init__(self, directory: Path | None) -> None:
        self.directory = directory
        self.token = os.urandom(6).hex()
        self.fd = -1

    def path(self, suffix: str = "") -> Path:
        if self.directory is None:
            self.directory = Path(tempfile.mkdtemp(prefix="sieve-"))
        self.directory.mkdir(parents=True, exist_ok=True)
        return self.directory / f"{FILE_PREFIX}{self.token}{suffix}"

    def remove_stale(self) -> None:
        """What a sieve killed with its process left in the directory."""
        if self.directory is not None and self.directory.is_dir():
            for path in self.directory.glob(f"{FILE_PREFIX}*"):
                path.unlink(missing_ok=True)

    def remove(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
        if self.directory is None:
            return
        for suffix in ("", TEMPORARY_SUFFIX):
            (self.directory / f"{FILE_PREFIX}{self.token}{suffix}").unlink(missing_ok=True)
        try:
            self.directory.rmdir()
        except OSError:      # not empty (something else is in it) or gone already
            pass


class SieveSeen:
    """Exact (up to 64-bit fingerprint collisions) URL-seen set: RAM buffers over a sorted file."""
    name = "sieve"

    def __init__(self, directory: str | Path | None = None, buffer_size: int | None = None,
                 run_size: int | None = None) -> None:
        buffer_size = BUFFER_SIZE if buffer_size is None else buffer_size
        run_size = RUN_SIZE if run_size is None else run_size
        if buffer_size < 1 or run_size < buffer_size:
            raise ValueError(f"need 1 <= buffer_size <= run_size, got {buffer_size}, {run_size}")
        self._files = _Files(Path(directory) if directory is not None else None)
        self._files.remove_stale()   # this sieve starts empty
        self._closer = weakref.finalize(self, self._files.remove)
        self._buffer_size, self._run_size = buffer_size, run_size
        self._empty()
        self._adds = self._lookups = self._reads = self._flushes = 0

    def _empty(self) -> None:
        self._buffer: set[int] = set()   # newest fingerprints, unsorted
        self._set_run(array(_KEY))      # older ones, sorted, still in RAM
        self._index = array(_KEY)        # first fingerprint of each block of the file
        self._on_disk = 0                # fingerprints in the file

    def _set_run(self, run: np.ndarray | array) -> None:
        self._run = run
        self._run_keys = memoryview(run)   # indexed as Python ints: bisect without numpy scalars

    @property
    def directory(self) -> Path | None:
        """Where the sieve's file is (None until a flush made a temporary one)."""
        return self._files.directory

    def add(self, url: str) -> bool:
        self._adds += 1
        key = fingerprint(url)
        if self._holds(key):
            return False
        self._buffer.add(key)
        if len(self._buffer) >= self._buffer_size:
            self._sort_buffer()
        return True

    def __contains__(self, url: str) -> bool:
        self._lookups += 1
        return self._holds(fingerprint(url))

    def __len__(self) -> int:
        return len(self._buffer) + len(self._run) + self._on_disk

    def _holds(self, key: int) -> bool:
        if key in self._buffer:
            return True
        run = self._run_keys
        at = bisect_left(run, key)
        if at < len(run) and run[at] == key:
            return True
        return self._in_file(key)

    def _in_file(self, key: int) -> bool:
        block = bisect_right(self._index, key) - 1
        if block < 0:
            return False
        self._reads += 1
        keys = array(_KEY)
        keys.frombytes(os.pread(self._files.fd, BLOCK_BYTES, block * BLOCK_BYTES))
        at = bisect_left(keys, key)
        return at < len(keys) and keys[at] == key

    def _sort_buffer(self) -> None:
        """Merge the buffer into the sorted run in RAM; a full run goes to the file."""
        import numpy as np   # here, not at import: a crawl's start waits for no merge (~0.05 s)
        new = np.fromiter(self._buffer, dtype=np.uint64, count=len(self._buffer))
        new.sort()
        self._set_run(np.insert(self._run, np.searchsorted(self._run, new), new))
        self._buffer = set()
        if len(self._run) >= self._run_size:
            self.flush()

    def flush(self) -> None:
        """Merge what is in RAM into the sorted file (a new file replaces the old one)."""
        if self._buffer:
            self._buffer_size, size = 0, self._buffer_size   # sort without a nested flush
            self._sort_buffer()
            self._buffer_size = size
        if not len(self._run):
            return
        import numpy as np
        index_parts: list[np.ndarray] = []
        written = 0
        with open(self._files.path(TEMPORARY_SUFFIX), "wb") as out:
            for merged in self._merged_chunks(self._run):
                # A copy: a view would keep every merged chunk, the whole file, in RAM.
                index_parts.append(merged[(-written) % BLOCK_KEYS::BLOCK_KEYS].copy())
                merged.tofile(out)
                written += len(merged)
        os.replace(self._files.path(TEMPORARY_SUFFIX), self._files.path())
        self._reopen()
        self._index = array(_KEY, np.concatenate(index_parts).tobytes())
        self._on_disk = written
        self._set_run(array(_KEY))
        self._flushes += 1

    def _merged_chunks(self, new: np.ndarray):
        """The old file and the sorted new fingerprints, merged, in sorted chunks."""
        import numpy as np
        taken = 0
        if self._files.fd >= 0:
            with open(os.dup(self._files.fd), "rb") as old:   # the open file, whatever its name
                old.seek(0)
                while len(chunk := np.fromfile(old, dtype=np.uint64, count=MERGE_CHUNK)):
                    upto = int(np.searchsorted(new, chunk[-1], side="right"))
                    part = new[taken:upto]
                    taken = upto
                    yield np.insert(chunk, np.searchsorted(chunk, part), part)
        if taken < len(new):
            yield new[taken:]

    def _reopen(self) -> None:
        if self._files.fd >= 0:
            os.close(self._files.fd)
        self._files.fd = os.open(self._files.path(), os.O_RDONLY)

    def close(self) -> None:
        """Remove the sieve's files; the sieve is empty afterwards."""
        self._closer()
        self._closer = weakref.finalize(self, self._files.remove)
        self._empty()

    def stats(self) -> dict[str, float | int]:
        """The UrlSeen counters (one probe per operation), plus ``disk_reads``
        (blocks read by lookups), ``flushes`` and ``disk_bytes`` (the file)."""
        count = len(self)
        memory = (sys.getsizeof(self._buffer) + sum(map(sys.getsizeof, self._buffer))
                  + self._run_keys.nbytes + sys.getsizeof(self._index))
        return {"adds": self._adds, "new": count, "lookups": self._lookups,
                "probes": self._adds + self._lookups, "max_chain": 0, "distinct_keys": count,
                "bytes": memory, "disk_reads": self._reads, "flushes": self._flushes,
                "disk_bytes": 8 * self._on_disk}

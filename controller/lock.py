"""One crawl per output directory: a lock held for the whole run.

The lock is ``fcntl.flock`` on one file, ``DIR/state/lock``, which holds
the pid and start time of the crawl holding it, as text. The kernel drops
the lock when the process ends, however it ends, so a killed crawl needs no
clean-up: the next ``--resume`` gets the lock at once.

The file is never removed (``--overwrite`` keeps it): a crawl that deleted
it while another held it would let a third process lock a new file of the
same name while the first still runs. Should someone delete it anyway,
``take`` notices that its file is no longer the one at the path and opens
the new one.

The file descriptor is not inherited by the parser processes (they are
spawned, and Python opens files close-on-exec), so only the crawl's own
process holds the lock.

A crawl takes the lock exclusively and without waiting. ``holder`` (for
``crawler report``) asks with a shared, non-blocking try that creates no
file; so two reports never see each other, and a crawl that starts at the
very instant a report is asking is told that the directory is being read
(``LockHeld.holder`` is None), not that it is crawled.
"""
from __future__ import annotations

import fcntl
import os
from dataclasses import dataclass
from pathlib import Path

from controller.trace import utc_now


@dataclass(frozen=True)
class Holder:
    """The crawl holding a lock, as its lock file tells."""
    pid: int | None     # None: the file was being written, or is not ours
    started: str        # UTC, ISO 8601; "" if unknown


class LockHeld(Exception):
    """Another process holds the lock; ``holder`` None: a report, not a crawl."""

    def __init__(self, holder: Holder | None) -> None:
        super().__init__(holder)
        self.holder = holder


class CrawlLock:
    """An exclusive lock on one file, held until ``release`` or the process ends."""

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._fd = fd

    @classmethod
    def take(cls, path: Path, *, create: bool) -> CrawlLock | None:
        """The lock at ``path`` for this process, with its pid written in.

        Raises LockHeld when another process holds it. Without ``create``, a
        missing lock file gives None and nothing is created; with it, the
        file and its directories are made (OSError if they cannot be).
        """
        while True:
            fd = _open(path, create)
            if fd is None:
                return None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                held = LockHeld(_read(fd) if _exclusively_held(fd) else None)
                os.close(fd)
                raise held from None
            if _is_at(fd, path):
                break
            os.close(fd)   # removed or replaced after we opened it: lock the file there now
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()} {utc_now()}\n".encode("ascii"), 0)
        return cls(path, fd)

    def release(self) -> None:
        """Unlock (closing the file does); a second call does nothing."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    # A Crawl made but never run (a script's mistake, a test) must not keep
    # its directory locked for the rest of the process.
    __del__ = release


def holder(path: Path) -> Holder | None:
    """Who holds the lock at ``path``; None if no process does, or there is no
    such file. Never waits and never creates a file."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except (FileNotFoundError, NotADirectoryError):
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        return None   # closing the file below drops this shared lock
    except BlockingIOError:
        return _read(fd)
    finally:
        os.close(fd)


def _open(path: Path, create: bool) -> int | None:
    if create:
        path.parent.mkdir(parents=True, exist_ok=True)
        return os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        return os.open(path, os.O_RDWR)
    except (FileNotFoundError, NotADirectoryError):
        return None


def _exclusively_held(fd: int) -> bool:
    """Whether a crawl holds it, rather than reports asking (shared locks)."""
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    return False   # the caller closes fd, which drops this shared lock


def _is_at(fd: int, path: Path) -> bool:
    try:
        here = os.stat(path)
    except FileNotFoundError:
        return False
    mine = os.fstat(fd)
    return (here.st_dev, here.st_ino) == (mine.st_dev, mine.st_ino)


def _read(fd: int) -> Holder:
    words = os.pread(fd, 200, 0).decode("ascii", "replace").split()
    pid = int(words[0]) if words and words[0].isdigit() else None
    return Holder(pid, words[1] if pid is not None and len(words) > 1 else "")

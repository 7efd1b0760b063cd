"""Local failures: this machine could not write or read a crawl file (a
full disk, an I/O error, a read-only file system, too many open files).

They are never a page's error. The page whose file could not be written is
not recorded (its index row, the commit mark, is never written), the crawl
stops at once with one line that names the directory and the cause, and
``--resume`` goes on from there once the cause is fixed, as after a kill
(controller/resume.py).
"""
from __future__ import annotations

import errno
from dataclasses import dataclass
from pathlib import Path

EXIT_LOCAL = 3   # wget's exit status for a file I/O error

# errno -> (the cause in words, what to do before --resume)
CAUSES = {
    errno.ENOSPC: ("no space left on device", "free some"),
    errno.EDQUOT: ("disk quota exceeded", "free some space or raise the quota"),
    errno.EFBIG: ("file too large for the file system", "move the crawl to another file system"),
    errno.EROFS: ("read-only file system", "make it writable"),
    errno.EIO: ("input/output error", "check the disk (dmesg)"),
    errno.EMFILE: ("too many open files", "raise the limit (ulimit -n)"),
    errno.ENFILE: ("too many open files in the system", "close some programs"),
    errno.EACCES: ("permission denied", "make it writable"),
    errno.EPERM: ("operation not permitted", "make it writable"),
    errno.ENOMEM: ("out of memory", "free some memory"),
}


@dataclass(frozen=True)
class LocalFailure:
    out: Path
    cause: str    # "no space left on device"
    remedy: str   # "free some"
    file: str     # the file, relative to out when it is in it; "" if unknown

    @classmethod
    def of(cls, exc: OSError, out: Path) -> "LocalFailure":
        cause, remedy = CAUSES.get(exc.errno, (exc.strerror or str(exc), "fix it"))
        return cls(Path(out), cause.lower(), remedy, _relative(exc.filename, out))

    def line(self) -> str:
        """The one line a user sees (after "crawler: ")."""
        writing = f" (at {self.file})" if self.file else ""
        return (f"{self.cause} in {self.out}{writing}: {self.remedy}, then "
                f"crawler crawl --out {self.out} --resume")

    def detail(self) -> str:
        """stats.json's stop_detail."""
        return f"local-failure: {self.cause}" + (f" at {self.file}" if self.file else "")


class LocalFailureError(Exception):
    """A crawl could not start or continue: its files cannot be written."""

    def __init__(self, failure: LocalFailure) -> None:
        super().__init__(failure.line())
        self.failure = failure


def _relative(filename, out: Path) -> str:
    if not filename:
        return ""
    path = Path(str(filename))
    return str(path.relative_to(out)) if path.is_relative_to(out) else str(path)

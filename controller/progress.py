"""Live progress of a crawl: a redrawn line on a terminal, a few plain lines elsewhere.

Owns what a person sees while a crawl runs. ``Progress`` provides the two
callbacks ``controller.engine.Crawl`` takes, ``on_progress(Snapshot)`` and
``on_level(level, LevelTally)``, plus ``echo(line)`` for other messages
and ``close()``:

- on a terminal (the stream's ``isatty()``), one line redrawn in place:
  ``level 3  [######------]  52/130  230 URLs  225 pages  2 errors  143.8 URLs/s  539 KB/s  0:12``
  and, as each level ends, a line that stays: ``level 3 done: ...``;
- anywhere else (a pipe, a file, a CI log): only the ``level k done`` lines
  and one status line every LOG_SECONDS, never a carriage return or an
  escape sequence.

Why click's progress bar and not tqdm or rich: click is already a
dependency (the command line), so live progress adds nothing to install
for a tool that should install in seconds; its bar draws one padded line
with a carriage return, hides the cursor while it draws and prints
nothing on a non-terminal, which is all this needs. tqdm would be one
more dependency whose extras (nested bars, notebook widgets, its own
smoothed rate of its own counter) we would not use, and rich is larger
still. The rates shown are ours: URLs/s and KB/s over the last
WINDOW_SECONDS of crawl time (a sliding window over the snapshots), so a
slow level shows as slow at once instead of being averaged away.

Cost: each call does constant work, and the line is redrawn at most
1 / DRAW_SECONDS times a second, whatever the Controller sends. All
times come from the snapshots' ``elapsed``, never from a clock read
here, so the display is deterministic under test. "URLs/s" counts every
fetched URL, errors included, as stats.json's ``urls_per_second`` does.

Nobody may be reading any more: ``crawler crawl ... 2>&1 | head -1`` or a
pager quit early closes the pipe, a closed terminal or a dropped ssh
hangs the terminal up. Lines are then dropped (``closed_output``) and the
crawl goes on to its end, as wget and curl do: what a person sees never
decides how a crawl ends.
"""
from __future__ import annotations

import os
import select
import sys
from collections import deque
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TextIO

import click

from controller.tally import LevelTally, Snapshot

WINDOW_SECONDS = 5.0   # rates are measured over this much recent crawl time
DRAW_SECONDS = 0.2     # the live line is redrawn at most this often (5 times a second)
LOG_SECONDS = 10.0     # off a terminal, one status line this often
BAR_WIDTH = 24         # characters of the bar itself


@dataclass(frozen=True)
class Rates:
    urls_per_second: float
    kb_per_second: float   # KB = 1024 bytes of response body


class RateWindow:
    """URLs/s and KB/s over the last ``seconds`` of (elapsed, urls, bytes) samples."""

    def __init__(self, seconds: float = WINDOW_SECONDS) -> None:
        self.seconds = seconds
        self._samples: deque[tuple[float, int, int]] = deque()

    def add(self, elapsed: float, urls: int, size: int) -> None:
        self._samples.append((elapsed, urls, size))
        # Keep one sample at or before the window's start, so the rate spans
        # the whole window rather than only the samples inside it.
        while len(self._samples) > 2 and self._samples[1][0] <= elapsed - self.seconds:
            self._samples.popleft()

    def rates(self) -> Rates:
        if len(self._samples) < 2:
            return Rates(0.0, 0.0)
        (t0, urls0, bytes0), (t1, urls1, bytes1) = self._samples[0], self._samples[-1]
        span = t1 - t0
        if span <= 0:
            return Rates(0.0, 0.0)
        return Rates((urls1 - urls0) / span, (bytes1 - bytes0) / 1024 / span)


class Progress:
    """Progress display for one crawl; pass its methods to Crawl, call close() after run().

        progress = Progress()                       # stderr; live if stderr is a terminal
        crawl = Crawl(config, on_progress=progress.on_progress, on_level=progress.on_level)
        try:
            stats = crawl.run()
        finally:
            progress.close()
    """

    def __init__(self, stream: TextIO | None = None) -> None:
        """stream: where to write; default sys.stderr, so stdout keeps only results.
        The live line is drawn when stream.isatty(), plain lines otherwise."""
        self.stream = stream if stream is not None else sys.stderr
        self.live = _isatty(self.stream)
        self._window = RateWindow()
        self._bar = None                 # the live bar of the level being crawled
        self._bar_level = -1
        self._last: Snapshot | None = None
        self._last_draw = float("-inf")
        self._last_log = 0.0
        self.reader_gone = False         # nobody reads the stream any more: show nothing

    # -- the Controller's callbacks ----------------------------------------
    def on_progress(self, snapshot: Snapshot) -> None:
        self._window.add(snapshot.elapsed, snapshot.urls, snapshot.bytes)
        self._last = snapshot
        for note in snapshot.notes:
            self.echo(note)
        if self.reader_gone:
            return
        with self._unless_closed():
            if self.live and snapshot.elapsed - self._last_draw >= DRAW_SECONDS:
                self._draw(snapshot)
            elif not self.live and snapshot.elapsed - self._last_log >= LOG_SECONDS:
                self._write(self.status_line(snapshot) + "\n")
                self._last_log = snapshot.elapsed

    def on_level(self, level: int, row: LevelTally) -> None:
        self.echo(f"level {level} done: {row.urls} URLs fetched ({row.pages} pages, {row.errors} "
                  f"errors), {row.new_urls} new URLs queued, queue total {row.m}")

    def echo(self, line: str) -> None:
        """Print a line that stays (e.g. "stopping: ..."); the live line is redrawn below it."""
        if self.reader_gone:
            return
        with self._unless_closed():
            if self._bar is not None:
                # Overwrite the live line, then let click end it (newline, cursor shown).
                self._write("\r" + " " * (self._bar.max_width or 0) + "\r" + line)
                self._bar.render_finish()
                self._bar = None
            else:
                self._write(line + "\n")

    def close(self) -> None:
        """End the live line (drawn once more with the latest numbers); idempotent."""
        if self._bar is not None and not self.reader_gone:
            with self._unless_closed():
                if self._last is not None:
                    self._draw(self._last)
                self._bar.render_finish()
        self._bar = None

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- what is shown -------------------------------------------------------
    def status_line(self, snapshot: Snapshot) -> str:
        """The plain line written off a terminal every LOG_SECONDS."""
        return (f"progress {_clock(snapshot.elapsed)}: level {snapshot.level} "
                f"{snapshot.level_done}/{snapshot.level_size}, " + ", ".join(self._totals(snapshot)))

    def _totals(self, snapshot: Snapshot) -> list[str]:
        rates = self._window.rates()
        ahead = [f"{snapshot.ahead} ahead"] if snapshot.ahead else []
        return [f"{snapshot.urls} URLs", f"{snapshot.pages} pages", f"{snapshot.errors} errors",
                *ahead, f"{rates.urls_per_second:.1f} URLs/s", f"{rates.kb_per_second:.0f} KB/s"]

    def _draw(self, snapshot: Snapshot) -> None:
        if self._bar is None or self._bar_level != snapshot.level:
            if self._bar is not None:
                self._bar.render_finish()
            self._bar = _new_bar(snapshot.level, self.stream)
            self._bar_level = snapshot.level
        info = "  ".join([*self._totals(snapshot), _clock(snapshot.elapsed)])
        self._bar.length = max(snapshot.level_size, 1)
        self._bar.update(snapshot.level_done - self._bar.pos, info)
        self._last_draw = snapshot.elapsed

    def _write(self, text: str) -> None:
        self.stream.write(text)
        self.stream.flush()

    @contextmanager
    def _unless_closed(self):
        """A write that fails because nobody reads any more ends the display;
        any other failure is raised."""
        try:
            yield
        except OSError:
            if not closed_output(self.stream):
                raise
            self.reader_gone = True
            self._bar = None


def closed_output(stream) -> bool:
    """After a write to ``stream`` failed: True when nobody reads it any more
    (the reading end of its pipe or socket was closed, its terminal hung up).
    Its file descriptor then points at /dev/null, so later writes, and
    Python's own flush of the stream at exit, are dropped instead of raising
    again (the remedy of the Python docs' "Note on SIGPIPE"). False for any
    other failure (a full disk), which the caller raises."""
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):   # not a file descriptor: a test's StringIO
        return False
    poller = select.poll()
    poller.register(fd, 0)   # POLLERR and POLLHUP are reported whatever is asked for
    if not any(events & (select.POLLERR | select.POLLHUP) for _, events in poller.poll(0)):
        return False
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, fd)
    finally:
        os.close(devnull)
    return True


def _new_bar(level: int, stream: TextIO):
    # update_min_steps=0: redraw on every update, even when no URL finished
    # since the last one, so the rates and the clock keep moving.
    return click.progressbar(length=1, label=f"level {level}", show_pos=True, show_percent=False,
                             show_eta=False, item_show_func=lambda info: info, width=BAR_WIDTH,
                             file=stream, update_min_steps=0)


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):   # no isatty, or a closed stream
        return False


def _clock(seconds: float) -> str:
    """Elapsed time as M:SS, or H:MM:SS from an hour on."""
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02}:{secs:02}" if hours else f"{minutes}:{secs:02}"


def in_force(config) -> str:
    """The one line a crawl starts with: the limits and the politeness rate it
    runs under (a first crawl with the defaults should not surprise anyone)."""
    parts = [f"depth <= {config.max_depth}" if config.max_depth else "any depth",
             f"<= {config.max_pages} URLs" if config.max_pages else "no URL limit"]
    if config.max_seconds:
        parts.append(f"<= {config.max_seconds:g} s")
    if config.delay == "auto":
        parts.append(f"each host's interval set from its response times and errors "
                     f"(--delay auto, {config.min_delay:g}-{config.max_delay:g} s, "
                     f"--per-host {config.per_host})")
    elif config.delay:
        rate = config.per_host / config.delay
        parts.append(f"{rate:g} request/s per host (--delay {config.delay:g}"
                     + (f", --per-host {config.per_host})" if config.per_host > 1 else ")"))
    else:
        parts.append(f"no delay between requests to a host (--per-host {config.per_host})")
    parts.append("robots.txt obeyed (its Crawl-delay wins if longer)" if config.obey_robots
                 else "robots.txt ignored")
    return "crawling with " + ", ".join(parts)

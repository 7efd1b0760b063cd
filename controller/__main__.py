"""`python -m controller` and the `crawler` command start here.

This module imports nothing else until main() runs, so that a Ctrl-C while
the crawler's modules load is what it is at any later moment: one line and
exit status 130, not a traceback of whichever import it interrupted.
"""
import os
import sys

EXIT_INTERRUPTED = 130   # controller.cli.EXIT_INTERRUPTED, which is not loaded yet


def main() -> None:
    try:
        from controller.cli import main as run
    except KeyboardInterrupt:
        _aborted()
        # Nothing is open yet. os._exit, because CPython ends a process whose
        # KeyboardInterrupt came out of an exec() (dataclasses build their
        # methods so) by SIGINT at exit, even when the interrupt was handled.
        os._exit(EXIT_INTERRUPTED)
    try:
        run()
    except KeyboardInterrupt:   # one that came after click had let go
        _aborted()
        sys.exit(EXIT_INTERRUPTED)


def _aborted() -> None:
    try:
        sys.stderr.write("crawler: aborted\n")
        sys.stderr.flush()
    except OSError:   # nobody reads stderr any more: the status still says it
        pass


if __name__ == "__main__":
    main()

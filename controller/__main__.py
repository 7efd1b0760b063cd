"""`python -m controller` and the `crawler` command start here.

This module imports nothing else until main() runs, so that a Ctrl-C while
the crawler's modules load is what it is at any later moment: one line and
exit status 130, not a traceback of whichever import it interrupted.
"""
import sys

EXIT_INTERRUPTED = 130


def main() -> None:
    try:
        from controller.cli import main as run
        run()
    except KeyboardInterrupt:
        try:
            sys.stderr.write("crawler: aborted\n")
            sys.stderr.flush()
        except OSError:   # nobody reads stderr any more: the status still says it
            pass
        sys.exit(EXIT_INTERRUPTED)


if __name__ == "__main__":
    main()

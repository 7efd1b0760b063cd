"""`python -m controller` and the `crawler` command start here.

A stop signal while the crawler's modules load is held until they are
loaded, and then ends the process with one line, `crawler: aborted`, and
exit status 128 + the signal's number (130 for Ctrl-C). A KeyboardInterrupt
raised in the middle of an import is not reliable: where it lands in a
callback (importlib's module locks use weakref callbacks) Python prints and
forgets it, and the crawl would start as if no Ctrl-C had come.
"""
import os
import signal
import sys

# The signals that stop a crawl (controller.cli.SIGNAL_STOPS, not loaded yet).
STOPS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def main() -> None:
    received: list[int] = []
    held = _hold(received)
    try:
        from controller.cli import main as run
    except KeyboardInterrupt:   # one that came before the signals were held
        received.append(signal.SIGINT)
    for sig, handler in held.items():
        signal.signal(sig, handler)
    if received:
        _aborted()
        # os._exit: nothing is open yet, and CPython ends a process whose
        # KeyboardInterrupt came out of an exec() by SIGINT at exit, even
        # when it was handled.
        os._exit(128 + received[0])
    try:
        run()
    except KeyboardInterrupt:   # one that came after click had let go
        _aborted()
        sys.exit(128 + signal.SIGINT)


def _hold(received: list[int]) -> dict:
    """Record the stop signals instead of acting on them; the handlers they
    had. A SIGHUP ignored from the start (nohup) stays ignored."""
    held = {}
    for sig in STOPS:
        if signal.getsignal(sig) != signal.SIG_IGN:
            held[sig] = signal.signal(sig, lambda signum, frame: received.append(signum))
    return held


def _aborted() -> None:
    try:
        sys.stderr.write("crawler: aborted\n")
        sys.stderr.flush()
    except OSError:   # nobody reads stderr any more: the status still says it
        pass


if __name__ == "__main__":
    main()

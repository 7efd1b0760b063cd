"""`python -m controller` and the `crawler` command start here.

A stop signal while the crawler's modules load is held until they are
loaded, and then ends the process with one line, `crawler: aborted`, and
exit status 128 + the signal's number (130 for Ctrl-C). A KeyboardInterrupt
raised in the middle of an import is not reliable: where it lands in a
callback (importlib's module locks use weakref callbacks) Python prints and
forgets it, and the crawl would start as if no Ctrl-C had come.
"""
import atexit
import gc
import os
import signal
import sys
import threading

# The signals that stop a crawl (controller.cli.SIGNAL_STOPS, not loaded yet).
STOPS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def main() -> None:
    received: list[int] = []
    held = _hold(received)
    # Loading the modules makes many objects and no garbage: no collection
    # while it runs (~10 ms of CPU), and none of them scanned again later.
    gc.disable()
    try:
        from getpage import tlsbundle
        tlsbundle.check_ahead()   # the environment's CA bundle, checked while the rest loads
        from controller.cli import main as run
    except KeyboardInterrupt:   # one that came before the signals were held
        received.append(signal.SIGINT)
    finally:
        gc.freeze()
        gc.enable()
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
    except SystemExit as done:
        _exit(done)


def _exit(done: SystemExit) -> None:
    """End the process as the interpreter ends it -- it waits for the threads
    that are not daemons, then runs what Python runs at exit -- but without
    its teardown: freeing every module and object the crawl loaded takes
    tenths of a second that the system does at once. Daemon threads (a
    shared crawl's Redis listeners) end with the process, as at any exit.
    With output that cannot be flushed, the ordinary exit (which reports
    the error)."""
    code = done.code
    if code is not None and not isinstance(code, int):
        print(code, file=sys.stderr)   # what sys.exit("message") prints
        code = 1
    # The interpreter's first step at exit: the threading module's exit
    # functions (executors tell their threads to end), then every thread
    # that is not a daemon joined. Here too, a parser pool's manager thread
    # may still be joining its processes.
    threading._shutdown()
    atexit._run_exitfuncs()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except OSError:
        raise done from None
    os._exit(code or 0)


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

"""`python startpoint.py POINT crawler-args...`: the crawler, sent SIGINT at
one chosen moment of its start-up, to its whole process group as a
terminal's Ctrl-C is, for the tests that a signal from outside cannot aim:

  import  while the crawler's modules load (as controller.engine is imported)
  import-callback  the same, caught by Python inside a weakref callback, as
          importlib's module-lock callbacks are (it prints and forgets the
          KeyboardInterrupt raised there)
  config  once the crawl is set up, before its signal handlers exist
  spawn   once the first parser process runs Python, while it starts up
"""
import os
import signal
import sys
import time
import weakref
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def interrupt():
    os.killpg(0, signal.SIGINT)


def interrupt_in_a_callback():
    class Probe:
        pass

    def callback(ref):
        interrupt()
        for _ in range(1000):   # Python handles the signal here, inside the callback
            pass
    probe = Probe()
    keep = weakref.ref(probe, callback)
    del probe
    return keep


class InterruptOnImport:
    """A module finder that finds nothing: it sends the signal when `name` is imported."""

    def __init__(self, name, how=interrupt):
        self.name = name
        self.how = how

    def find_spec(self, name, path=None, target=None):
        if name == self.name:
            sys.meta_path.remove(self)
            self.how()
        return None


def after(owner, name, wait=lambda *args: None):
    original = getattr(owner, name)

    def wrapped(*args, **kwargs):
        result = original(*args, **kwargs)
        setattr(owner, name, original)   # once
        wait(*args)
        interrupt()
        return result
    setattr(owner, name, wrapped)


def python_started(popen, *args):
    """Until the process `popen` started catches SIGINT: Python runs in it and
    would turn a Ctrl-C into a KeyboardInterrupt wherever it is."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            status = Path(f"/proc/{popen.pid}/status").read_text()
        except OSError:   # it has ended: nothing to wait for
            return
        caught = int(status.split("SigCgt:")[1].split()[0], 16)
        if caught & 1 << (signal.SIGINT - 1):
            return
        time.sleep(0.001)   # polling an observable condition, bounded by the deadline


point, args = sys.argv[1], sys.argv[2:]
if point == "import":
    sys.meta_path.insert(0, InterruptOnImport("controller.engine"))
elif point == "import-callback":
    sys.meta_path.insert(0, InterruptOnImport("controller.engine", interrupt_in_a_callback))
elif point == "config":
    from controller.engine import Crawl
    after(Crawl, "__init__")
elif point == "spawn":
    from multiprocessing import popen_spawn_posix
    after(popen_spawn_posix.Popen, "_launch", wait=python_started)
else:
    raise SystemExit(f"no such point: {point}")
sys.argv = ["crawler", *args]
from controller.__main__ import main  # noqa: E402 (after the hooks, as the crawler starts)
main()

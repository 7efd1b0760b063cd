"""`python startpoint.py POINT crawler-args...`: the crawler, sent SIGINT at
one chosen moment of its start-up, to its whole process group as a
terminal's Ctrl-C is, for the tests that a signal from outside cannot aim:

  import  while the crawler's modules load (as controller.engine is imported)
  config  once the crawl is set up, before its signal handlers exist
  spawn   right after the first parser process is launched, while it starts Python
"""
import os
import signal
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def interrupt():
    os.killpg(0, signal.SIGINT)


class InterruptOnImport:
    """A module finder that finds nothing: it sends the signal when `name` is imported."""

    def __init__(self, name):
        self.name = name

    def find_spec(self, name, path=None, target=None):
        if name == self.name:
            sys.meta_path.remove(self)
            interrupt()
        return None


def after(owner, name):
    original = getattr(owner, name)

    def wrapped(*args, **kwargs):
        result = original(*args, **kwargs)
        setattr(owner, name, original)   # once
        interrupt()
        return result
    setattr(owner, name, wrapped)


point, args = sys.argv[1], sys.argv[2:]
if point == "import":
    sys.meta_path.insert(0, InterruptOnImport("controller.engine"))
elif point == "config":
    from controller.engine import Crawl
    after(Crawl, "__init__")
elif point == "spawn":
    from multiprocessing import popen_spawn_posix
    after(popen_spawn_posix.Popen, "_launch")
else:
    raise SystemExit(f"no such point: {point}")
sys.argv = ["crawler", *args]
from controller.__main__ import main  # noqa: E402 (after the hooks, as the crawler starts)
main()

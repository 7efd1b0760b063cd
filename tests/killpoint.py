"""`python killpoint.py POINT crawler-args...`: the crawler, killed at once
(os._exit, as kill -9 would) at one chosen point of a recrawl pass, for the
crash tests that a signal from outside cannot aim. A point is a named step
of a commit (controller/commit.py: ``STEPS``) or of admission:

  after-archive  a changed page's WARC record is written, its visit row not
  after-row      a changed page's visit row is written, its files not in place
  enqueue        the first link new to the crawl is queued, the others not
  commit:STEP:N  a crawl's Nth commit in this run has done STEP, the next steps not
  leased:N       a shared crawl's worker's Nth sync after which it holds leased URLs
"""
import itertools
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from controller.cli import main  # noqa: E402
from controller.commit import Commit  # noqa: E402
from controller.revisits import RevisitAdmission, RevisitCommit  # noqa: E402
from urllist.redisqueue import RedisFrontier  # noqa: E402

KILLED = 137


def after(owner, name, when):
    original = getattr(owner, name)

    def wrapped(*args, **kwargs):
        result = original(*args, **kwargs)
        if when(*args, **kwargs):
            os._exit(KILLED)
        return result
    setattr(owner, name, wrapped)


point, args = sys.argv[1], sys.argv[2:]
if point == "after-archive":
    after(RevisitCommit, "archive", lambda self, page: page.outcome == "changed")
elif point == "after-row":
    after(RevisitCommit, "row", lambda self, page: page.outcome == "changed")
elif point == "enqueue":
    after(RevisitAdmission, "enqueue", lambda self, urls, level, parent_id: True)
elif point.startswith("commit:"):
    _, step, nth = point.split(":")
    calls = itertools.count(1)
    after(Commit, step, lambda self, page: next(calls) == int(nth))
elif point.startswith("leased:"):
    syncs = itertools.count(1)
    after(RedisFrontier, "_sync",
          lambda self, *args, **kwargs: bool(self._held_ids) and next(syncs) == int(point[7:]))
else:
    raise SystemExit(f"no such point: {point}")
sys.argv = ["crawler", *args]
main()

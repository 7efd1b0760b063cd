"""`python killpoint.py POINT crawler-args...`: the crawler, killed at once
(os._exit, as kill -9 would) at one chosen point of a recrawl pass, for the
crash tests that a signal from outside cannot aim:

  after-archive  a changed page's WARC record is written, its visit row not
  after-row      a changed page's visit row is written, its files not in place
  enqueue        the first link new to the crawl is queued, the others not
  commit:N       the N-th page this process commits has all of its journal
                 lines written (children, order event, links not queued), its row not
"""
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import controller.revisits as revisits  # noqa: E402
from controller.cli import main  # noqa: E402
from controller.engine import Crawl  # noqa: E402

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
    after(revisits.Revisits, "_archive_visit", lambda self, row, result, outcome: outcome == "changed")
elif point == "after-row":
    after(revisits.VisitLog, "add", lambda self, entry: entry["outcome"] == "changed")
elif point == "enqueue":
    after(Crawl, "_enqueue", lambda self, urls, level, parent_id: isinstance(self, revisits.Revisits)
          and self.frontier is self._main)
elif point.startswith("commit:"):
    from urllist.journal import QueueJournal
    pages = iter(range(int(point.split(":")[1]) - 1, -1, -1))   # the seeds' line is not a page's
    after(QueueJournal, "skipped", lambda self, source, *_: source is not None and next(pages) == 0)
else:
    raise SystemExit(f"no such point: {point}")
sys.argv = ["crawler", *args]
main()

"""Resuming a crawl in another order than bfs (``--order``, urllist.ordered).

An order's state (levels lowered along out-links, PageRank's in-links,
OPIC's cash, best-first's and shark's scores, aco's pheromone) is a
function of the pages it heard of, in the order it heard of them. So the
journal keeps, for each page, what the order heard (a ``P`` line, written
before the page's index row), and a resumed crawl replays the committed
pages, in the order the journal holds their lines (commit order), through
the same calls: the state is the uninterrupted crawl's after its last
committed page.

One thing is cut first: the children journaled by a page that was being
committed when the crawl stopped. The page is fetched again, and its
children are queued again then, where the uninterrupted crawl queued
them; left in the queue they would be scored (and could be fetched)
before the page that found them.
"""
from __future__ import annotations

from pathlib import Path

from controller.resume import PreviousCrawl
from controller.store import OutputError
from urllist.journal import Replay, cut_uncommitted_tail, replay
from urllist.ordered import OrderedFrontier


def replay_order(frontier: OrderedFrontier, journal_path: Path, previous: PreviousCrawl) -> Replay:
    """Rebuild ``frontier`` from the journal and the committed rows; the
    journal (its uncommitted tail cut) as the rest of the restore reads it."""
    done = previous.done_ids
    cut_uncommitted_tail(journal_path, done)
    journal = replay(journal_path)
    try:
        frontier.restore(journal.items, done, journal.scored)
    except ValueError as exc:
        raise OutputError(f"--resume: {journal_path}: {exc} (a journal written before orders "
                          f"were resumable?); start the crawl again with --overwrite") from None
    return journal

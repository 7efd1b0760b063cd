"""URL_List's journal read back: the records as written, streamed, and the
order a resumed crawl admits queued URLs and redirect marks in."""
from __future__ import annotations

import random

from urllist import QueuedUrl
from urllist.journal import (QueueJournal, ScoredPage, SeenMark, Skipped, in_level_order,
                             queue_and_scores, queued, replay)


def journal_of(tmp_path, items, marks=(), skipped=()):
    journal = QueueJournal(tmp_path / "queue.log")
    journal.queued(items)
    for source, url in marks:
        journal.seen(source, url)
    for source, counts in skipped:
        journal.skipped(source, counts, {"h/p/<n>": 2})
    journal.close()
    return journal.path


def test_replay_gives_every_record_as_written_and_drops_a_torn_last_line(tmp_path):
    items = [QueuedUrl(0, "http://h/", 0, None), QueuedUrl(1, "http://h/a", 1, 0)]
    path = journal_of(tmp_path, items, marks=[(0, "http://h/b")], skipped=[(None, {"seen": 3})])
    with open(path, "a", encoding="utf-8") as f:
        f.write("Q\t2\t1\t0\thttp://h/torn")   # no newline: cut by power loss
    assert list(replay(path)) == [*items, SeenMark(0, "http://h/b"),
                                  Skipped(None, {"seen": 3, "patterns": {"h/p/<n>": 2}})]
    assert list(queued(path)) == items


def test_replay_of_a_missing_journal_is_empty(tmp_path):
    assert list(replay(tmp_path / "none.log")) == []
    assert queue_and_scores(tmp_path / "none.log") == ([], [])


def test_queue_and_scores_pairs_each_p_line_with_the_queue_length_it_was_written_at(tmp_path):
    journal = QueueJournal(tmp_path / "queue.log")
    seeds = [QueuedUrl(0, "http://h/", 0, None), QueuedUrl(1, "http://g/", 0, None)]
    children = [QueuedUrl(2, "http://h/a", 1, 0), QueuedUrl(3, "http://h/b", 1, 0)]
    first = ScoredPage(0, False, 0.5, [2, 3, 1], [0.25, 0.0, 1.0])
    second = ScoredPage(1, True, None, [0], [0.0])
    journal.queued(seeds)
    journal.queued(children)
    journal.scored(first)
    journal.seen(1, "http://g/moved")
    journal.scored(second)
    journal.close()
    assert queue_and_scores(journal.path) == ([*seeds, *children], [(4, first), (4, second)])
    assert [r for r in replay(journal.path) if isinstance(r, ScoredPage)] == [first, second]


def test_in_level_order_is_a_stable_sort_by_level_with_the_marks_after_the_queue(tmp_path):
    rng = random.Random(7)
    items = [QueuedUrl(i, f"http://h/{i}", rng.randrange(4), None) for i in range(200)]
    marks = [(rng.randrange(4), f"http://h/m{k}") for k in range(20)]
    path = journal_of(tmp_path, items)
    expected = sorted([(item.level, item.url) for item in items] + marks, key=lambda pair: pair[0])
    assert list(in_level_order(path, marks, {item.level for item in items})) == expected


def test_in_level_order_of_an_ascending_journal_needs_no_levels(tmp_path):
    items = [QueuedUrl(i, f"http://h/{i}", i // 50, None) for i in range(200)]
    marks = [(3, "http://h/m3"), (0, "http://h/m0"), (1, "http://h/m1")]
    path = journal_of(tmp_path, items)
    order = list(in_level_order(path, marks))
    assert order == sorted([(item.level, item.url) for item in items] + marks,
                           key=lambda pair: pair[0])
    assert order.index((0, "http://h/m0")) == 50   # after level 0's 50 URLs, before level 1's

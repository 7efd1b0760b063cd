"""URL_List: the total queue hands out levels in order and records level flags
(with no fetch-ahead, max_ahead=0: the design paper's strict level order)."""
import pytest

from getpage.politeness import PolitenessGate
from urllist import HostFrontier, QueuedUrl


def strict_frontier():
    """Every URL its own host, none ever waiting: only the level rules act."""
    return HostFrontier(lambda url: url, PolitenessGate(0.0, 1000))


def items(start, urls, level, parent=None):
    return [QueuedUrl(start + i, u, level, parent) for i, u in enumerate(urls)]


def test_pop_never_mixes_levels_and_flags_record_queue_totals():
    f = strict_frontier()
    f.push(items(0, ["s1", "s2"], 0))
    first = f.pop(10, 0.0)
    assert [i.url for i in first] == ["s1", "s2"]
    f.push(items(2, ["a", "b"], 1, parent=0))
    assert f.pop(10, 0.0) == []            # level 0 still in progress: level 1 must wait
    f.done(first[0])
    f.push(items(4, ["c"], 1, parent=1))
    assert f.pop(10, 0.0) == []
    f.done(first[1])
    assert f.level_flags == (2, 5)    # level 0 ends at 2, level 1 at 5
    assert f.finished_levels == 1
    level1 = f.pop(2, 0.0)
    assert [i.url for i in level1] == ["a", "b"]
    assert [i.url for i in f.pop(5, 0.0)] == ["c"]


def test_done_out_of_order_finishes_level_only_when_all_are_done():
    f = strict_frontier()
    f.push(items(0, ["x", "y", "z"], 0))
    got = f.pop(3, 0.0)
    f.push(items(3, ["child"], 1))
    f.done(got[2])
    f.done(got[0])
    assert f.finished_levels == 0 and f.pop(1, 0.0) == []
    f.done(got[1])
    assert f.finished_levels == 1
    assert [i.url for i in f.pop(1, 0.0)] == ["child"]


def test_exhausted_when_everything_is_processed():
    f = strict_frontier()
    f.push(items(0, ["only"], 0))
    (item,) = f.pop(1, 0.0)
    assert not f.exhausted()
    f.done(item)
    assert f.exhausted() and f.pop(1, 0.0) == [] and f.finished_levels == 1


def test_ids_must_continue_the_queue():
    f = strict_frontier()
    f.push(items(0, ["a"], 0))
    with pytest.raises(ValueError):
        f.push(items(5, ["b"], 1))
    assert f.next_id == 1

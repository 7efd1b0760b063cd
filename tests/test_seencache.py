"""SeenCache answers exactly as the structure behind it, and spares it repeats."""
import random

import pytest

from urlfilter import SEEN_ALGORITHMS, SeenCache, make_seen


@pytest.mark.parametrize("name", sorted(SEEN_ALGORITHMS))
def test_cache_in_front_answers_like_the_structure_alone(name):
    rng = random.Random(7)
    urls = [f"http://h.test/p/{rng.randrange(3000)}.html" for _ in range(20_000)]
    plain, cached = make_seen(name, capacity=10_000), SeenCache(make_seen(name, capacity=10_000), 256)
    assert [cached.add(u) for u in urls] == [plain.add(u) for u in urls]
    assert len(cached) == len(plain)
    assert all((u in cached) == (u in plain) for u in urls[:500])


def test_repeats_are_answered_by_the_cache_not_the_structure():
    cached = SeenCache(make_seen("ascii"), size=2)
    assert cached.add("http://h.test/a") and cached.add("http://h.test/b")
    assert not cached.add("http://h.test/a") and not cached.add("http://h.test/a")
    stats = cached.stats()
    assert stats["cache_hits"] == 2 and stats["adds"] == 2     # the structure saw each URL once
    cached.add("http://h.test/c")                              # evicts b (least recently used)
    assert not cached.add("http://h.test/b")                   # the structure still knows it
    assert cached.stats()["adds"] == 4


def test_cache_size_must_be_positive():
    with pytest.raises(ValueError):
        SeenCache(make_seen("set"), 0)

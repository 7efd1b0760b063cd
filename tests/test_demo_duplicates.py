"""The demo site's planted duplicates: what a content-dedup crawler must flag, and must not.

Judged with the crawler's own TextFilter (the text it fingerprints) and, for
near duplicates, with its SimHash: exact copies have their original's text;
near copies differ by one line and lie within SimHash distance 3; every other
page the crawl reaches (look-alikes included) is farther than that from every
other. The ground truth must not depend on whether a crawler expands exact
copies, since a content-dedup crawler does not.
"""
from __future__ import annotations

import difflib
import itertools
import random
from urllib.parse import urljoin, urlsplit

import pytest

from demosite.model import REDIRECT_FROM, REDIRECT_TO, Page, SiteModel
from demosite.site import canonical_target
from demosite.truth import ground_truth
from textfilter import parse

HOST = "127.0.0.1:8000"
ORIGIN = f"http://{HOST}"
DEPTH = 6  # the default depth of `crawler demo`
NEAR_DISTANCE = 5  # the crawler's default --simhash-distance
MARGIN = 3         # bits between the threshold and the closest distinct pair: not a lucky pass


def page_text(site, path: str) -> str:
    return parse(served_html(site, path), ORIGIN + path, "lxml").text


def served_html(site, path: str) -> str:
    answer = site.respond(path, HOST)
    assert answer.status == 200, path
    content_type = answer.headers["Content-Type"]
    charset = content_type.partition("charset=")[2] or site._model.lookup(path).charset
    return answer.body.decode(charset)


def resolved_links(site, path: str) -> list[str]:
    """The page's links as served, resolved against its URL and <base href>.

    In-site links become canonical path?query (fragment dropped), others stay as written.
    """
    parsed = parse(served_html(site, path), ORIGIN + path, "lxml")
    found = []
    for href in parsed.links:
        url = urljoin(parsed.base_url, href)
        parts = urlsplit(url)
        in_site = parts.scheme.lower() == "http" and parts.netloc.lower() == HOST
        found.append(canonical_target(url) if in_site else href)
    return found


@pytest.fixture(scope="module")
def truth(demo_site):
    return demo_site.ground_truth(DEPTH)


@pytest.fixture(scope="module")
def crawled_texts(demo_site, truth):
    """row's path -> text of every HTML page a correct crawl to DEPTH fetches."""
    fetched = {path: path for path in truth.url_levels
               if path in demo_site.paths() or path.startswith("/calendar/")}
    fetched[REDIRECT_FROM] = REDIRECT_TO
    return {row: page_text(demo_site, path) for row, path in fetched.items()}


# --- what is planted ------------------------------------------------------------


def test_every_kind_of_copy_is_planted_in_the_promised_numbers(demo_site):
    exact, near = demo_site.planted_duplicates(), demo_site.planted_near_duplicates()
    assert 15 <= len(exact) <= 25 and 10 <= len(near) <= 15
    assert not exact.keys() & near.keys()
    kinds = {
        "mirror": [d for d in exact if d.startswith("/mirror/")],
        "print": [d for d in exact if d.endswith("?print=1")],
        "newsletter": [d for d in exact if d.endswith("?utm_source=newsletter&utm_medium=email")],
        "session": [d for d in exact if "?sessionid=" in d],
        "date line": [d for d in near if d.endswith("-updated.html")],
        "advert": [d for d in near if d.endswith("?ref=partner")],
    }
    assert all(len(found) >= 3 for found in kinds.values()), kinds
    assert sum(map(len, kinds.values())) == len(exact) + len(near)
    assert "/mirror/science/" in exact  # a section page is mirrored too, not only articles
    assert len(demo_site.planted_look_alikes()) >= 3


def test_planted_maps_are_copies_the_caller_may_change(demo_site):
    demo_site.planted_duplicates().clear()
    demo_site.planted_near_duplicates().clear()
    assert demo_site.planted_duplicates() and demo_site.planted_near_duplicates()


def test_every_copy_is_served_and_lies_deeper_than_its_original(demo_site, truth):
    """A crawler finishing level k before k+1 meets the original first, so flags the copy."""
    planted = {**demo_site.planted_duplicates(), **demo_site.planted_near_duplicates(),
               **demo_site.planted_look_alikes()}
    for copy, original in planted.items():
        assert copy in demo_site.paths() and original in demo_site.paths()
        assert truth.url_levels[copy] > truth.url_levels[original], copy


# --- exact duplicates -------------------------------------------------------------


def test_exact_copies_have_their_originals_text(demo_site):
    for copy, original in demo_site.planted_duplicates().items():
        text = page_text(demo_site, copy)
        assert text == page_text(demo_site, original), copy
        assert len(text.split()) > 200  # whole pages, not empty shells


def test_exact_copies_link_where_their_originals_link(demo_site):
    """Position by position; only a same-document link may lead to the copy instead."""
    for copy, original in demo_site.planted_duplicates().items():
        copied, kept = resolved_links(demo_site, copy), resolved_links(demo_site, original)
        assert len(copied) == len(kept), copy
        for mine, theirs in zip(copied, kept):
            assert mine == theirs or (mine, theirs) == (copy, original), (copy, mine, theirs)


def test_mirror_copies_resolve_through_a_base_href_naming_the_original(demo_site):
    mirrored = {c: o for c, o in demo_site.planted_duplicates().items() if c.startswith("/mirror/")}
    for copy, original in mirrored.items():
        html = served_html(demo_site, copy)
        assert f'<base href="{demo_site.base_href(original) or original}">' in html
        assert copy.startswith("/mirror/") and copy[len("/mirror"):] == original


def test_not_expanding_exact_copies_changes_no_level(demo_site, truth):
    model = demo_site._model
    entries = dict(model.entries)
    for copy in demo_site.planted_duplicates():
        page = entries[copy]
        assert isinstance(page, Page)
        entries[copy] = Page(page.path, page.title, links=())  # a crawler that drops its links
    pruned = SiteModel(model.seed, entries)
    for depth in (4, DEPTH, DEPTH + 2):
        assert ground_truth(pruned, depth) == demo_site.ground_truth(depth)


def test_no_two_other_pages_share_a_text(crawled_texts, demo_site):
    copies = demo_site.planted_duplicates()
    distinct = [text for path, text in crawled_texts.items() if path not in copies]
    assert len(set(distinct)) == len(distinct)
    assert set(copies) <= crawled_texts.keys()


# --- near duplicates ----------------------------------------------------------------


def changed_lines(old: str, new: str) -> tuple[list[str], list[str]]:
    """(lines only old has, lines only new has)."""
    diff = list(difflib.ndiff(old.splitlines(), new.splitlines()))
    return ([line[2:] for line in diff if line.startswith("- ")],
            [line[2:] for line in diff if line.startswith("+ ")])


def test_near_copies_differ_by_a_date_line_or_an_advert(demo_site):
    for copy, original in demo_site.planted_near_duplicates().items():
        removed, added = changed_lines(page_text(demo_site, original), page_text(demo_site, copy))
        if copy.endswith("-updated.html"):
            assert len(removed) == len(added) == 1, copy
            assert removed[0].startswith("Updated 2026-") and added[0].startswith("Updated 2026-")
            assert removed[0] < added[0]  # a later date
        else:
            assert removed == [] and added == ["Advertisement: Demo Daily Plus, half price."], copy


def test_near_copies_link_where_their_originals_link(demo_site):
    for copy, original in demo_site.planted_near_duplicates().items():
        copied, kept = resolved_links(demo_site, copy), resolved_links(demo_site, original)
        assert [mine == theirs or (mine, theirs) == (copy, original)
                for mine, theirs in zip(copied, kept)] == [True] * len(kept), copy
        assert len(copied) == len(kept)


def test_look_alikes_share_template_and_links_but_not_prose(demo_site):
    for look_alike, article in demo_site.planted_look_alikes().items():
        removed, added = changed_lines(page_text(demo_site, article),
                                       page_text(demo_site, look_alike))
        kept = page_text(demo_site, article).splitlines()
        assert len(removed) > len(kept) / 3  # the prose is its own
        assert "Home" in page_text(demo_site, look_alike).splitlines()  # the same chrome
        pair = {look_alike, article}
        assert set(resolved_links(demo_site, look_alike)) - pair == \
            set(resolved_links(demo_site, article)) - pair


# --- judged by the crawler's own fingerprints -----------------------------------------


@pytest.fixture(scope="module")
def fingerprint():
    return pytest.importorskip("textfilter.fingerprint")


def test_exact_copies_have_their_originals_md5_and_no_other_page_does(fingerprint, demo_site,
                                                                       crawled_texts):
    digests = {path: fingerprint.text_md5(text) for path, text in crawled_texts.items()}
    copies = demo_site.planted_duplicates()
    for copy, original in copies.items():
        assert digests[copy] == digests[original]
    others = [digest for path, digest in digests.items() if path not in copies]
    assert len(set(others)) == len(others)


def test_simhash_catches_every_near_copy_and_no_distinct_page(fingerprint, demo_site,
                                                              crawled_texts):
    hashes = {path: fingerprint.simhash(text) for path, text in crawled_texts.items()}
    near = demo_site.planted_near_duplicates()
    for copy, original in near.items():
        assert fingerprint.hamming(hashes[copy], hashes[original]) <= NEAR_DISTANCE, copy
    copies = demo_site.planted_duplicates().keys() | near.keys()
    distinct = sorted(path for path in hashes if path not in copies)
    closest = min(fingerprint.hamming(hashes[a], hashes[b])
                  for a, b in itertools.combinations(distinct, 2))
    assert closest >= NEAR_DISTANCE + MARGIN
    for look_alike, article in demo_site.planted_look_alikes().items():
        assert fingerprint.hamming(hashes[look_alike], hashes[article]) >= NEAR_DISTANCE + MARGIN


@pytest.mark.parametrize("order_seed", [1, 2, 3])
def test_a_level_by_level_crawl_flags_exactly_the_planted_copies(demo_site, truth, crawled_texts,
                                                                 fingerprint, order_seed):
    """The issue's "done when", short of the crawl: in any order within a level,
    ContentSeen flags every planted copy, as a copy of its original, and nothing else."""
    duplicates = pytest.importorskip("textfilter.duplicates")
    rows = list(crawled_texts)
    random.Random(order_seed).shuffle(rows)
    rows.sort(key=truth.url_levels.__getitem__)  # stable: shuffled within each level
    ids = {row: page_id for page_id, row in enumerate(rows)}
    seen = duplicates.ContentSeen(near=True, distance=NEAR_DISTANCE)
    exact, near = {}, {}
    for row in rows:
        text = crawled_texts[row]
        verdict = seen.check(ids[row], fingerprint.text_md5(text), fingerprint.simhash(text))
        if verdict.duplicate_of is not None:
            exact[row] = rows[verdict.duplicate_of]
        elif verdict.near_duplicate_of is not None:
            near[row] = rows[verdict.near_duplicate_of]
    assert exact == demo_site.planted_duplicates()
    assert near == demo_site.planted_near_duplicates()

"""Topical relevance (textfilter.relevance) and what the Digester makes of it.

Relevance orders texts sensibly; anchors() finds exactly the links GetURLs
finds in <a> and <area>, with the text each one shows (checked against the
demo site's own link labels); a Digester with a topic gives every link a
score, and one without a topic gives what it always gave.
"""
from __future__ import annotations

import dataclasses
import pickle
import random
import threading

import pytest
from test_links import FRAGMENTS, LINK_CASES, ORDINARY_PAGES
from test_textfilter import GARBAGE

from controller.digest import Digester, DigestJob, DigestPool
from demosite import DemoSite
from getpage import decode_html
from textfilter import extract_links
from textfilter.links import base_and_links
from textfilter.relevance import STOP_WORDS, Topic, anchors, term_counts, terms, terms_reference
from textfilter.tree import build_tree
from urlfilter import UrlRules, normalize

HOST = "127.0.0.1:8000"
ORIGIN = f"http://{HOST}"
SITE = DemoSite()
JAZZ = ("Jazz is a music genre that originated in the African-American communities of New "
        "Orleans. Jazz musicians improvise; swing and blue notes mark jazz music, and the "
        "saxophone and the trumpet lead many jazz bands.")


def demo_html(path: str) -> str:
    response = SITE.respond(path, HOST)
    return decode_html(response.body, response.headers["Content-Type"])[0]


# -- relevance ------------------------------------------------------------------------

def test_an_on_topic_text_scores_higher_than_an_off_topic_one() -> None:
    topic = Topic.from_text("jazz music history improvisation")
    on_topic = topic.relevance(JAZZ)
    off_topic = topic.relevance("The recipe: boil the pasta for nine minutes, then add the "
                                "tomato sauce and the basil; history says Naples made it first.")
    assert 0.0 < off_topic < on_topic < 1.0


def test_a_text_scores_one_against_itself_and_zero_against_nothing() -> None:
    topic = Topic.from_text(JAZZ)
    assert topic.relevance(JAZZ) == pytest.approx(1.0, abs=1e-12)
    assert topic.relevance("") == 0.0
    assert topic.relevance("the and of") == 0.0            # stop words only
    assert topic.relevance("database index query") == 0.0  # no shared term


def test_case_and_stop_words_do_not_count() -> None:
    topic = Topic.from_text("Jazz Music")
    assert topic.relevance("JAZZ music") == pytest.approx(1.0, abs=1e-12)
    assert topic.relevance("the jazz of the music that was") == pytest.approx(1.0, abs=1e-12)
    assert term_counts("The STRASSE and die Straße") == {"strasse": 2, "die": 1}
    assert {"the", "and", "of", "is"} <= STOP_WORDS


def test_tf_is_sublinear_and_the_score_stays_within_one() -> None:
    topic = Topic.from_text("jazz music")
    once, often = topic.relevance("jazz music guitar"), topic.relevance("jazz " * 50 + "music guitar")
    assert 0.0 < once <= 1.0 and 0.0 < often <= 1.0
    assert often > once                     # more of a topic word helps ...
    assert topic.relevance("jazz " * 50) < topic.relevance("jazz music")   # ... less than coverage


def test_a_chinese_ideograph_is_a_term_of_its_own() -> None:
    assert term_counts("网络爬虫 crawler2024 x_y") == {
        "网": 1, "络": 1, "爬": 1, "虫": 1, "crawler2024": 1, "x": 1, "y": 1}
    assert Topic.from_text("网络爬虫").relevance("广度优先的网络爬虫") > 0.5


# Characters where folding, splitting or the word classes are awkward.
ODD_CHARACTERS = ("ſKﬁßİéÉ\u0301ΣσςＡ٣²½网络爬虫のカナ한국어\u00a0\u3000\u2028\u0085\x1c—–«»"
                  "_-.,;:!?'\"/\\()[]{}<>@#$%^&*+=|~`\t\n\r \U0001f600\U00020000\ud800\udc80")


def test_the_fast_terms_are_the_reference_terms() -> None:
    rng = random.Random(150)
    pool = ODD_CHARACTERS + "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789" * 2
    for _ in range(3000):
        text = "".join(rng.choice(pool) for _ in range(rng.randrange(0, 40)))
        assert terms(text) == terms_reference(text), repr(text)
    for path in SITE.paths()[::10]:
        text = demo_html(path)
        assert terms(text) == terms_reference(text), path


def test_a_topic_without_words_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="no words"):
        Topic.from_text("the of and, !")


def test_background_idf_lets_the_rare_topic_word_decide() -> None:
    background = ["music for the evening", "music and dance", "a history of music", "jazz"]
    topic = Topic.from_text("jazz music", background=background)
    assert topic.weights["jazz"] > topic.weights["music"]
    assert topic.relevance("jazz tonight") > topic.relevance("music tonight")
    plain = Topic.from_text("jazz music")
    assert plain.relevance("jazz tonight") == pytest.approx(plain.relevance("music tonight"))


def test_a_topic_pickles_for_the_parser_processes() -> None:
    topic = Topic.from_text("jazz music", background=["jazz", "music history"])
    copy = pickle.loads(pickle.dumps(topic))
    assert copy == topic and copy.relevance(JAZZ) == topic.relevance(JAZZ)


# -- anchors: the same hrefs as GetURLs, with their text --------------------------------

def links_of_anchors(html: str, tags: tuple[str, ...] = ("a", "area")) -> tuple[str, ...]:
    """GetURLs' links restricted to tags, read from the BeautifulSoup reference tree."""
    pairs = [(e.name, e["href" if e.name in ("a", "area") else "src"])
             for e in build_tree(html).find_all(list(tags))
             if e.get("href" if e.name in ("a", "area") else "src") is not None]
    return base_and_links(pairs)[1]


def assert_hrefs_are_getourls_own(html: str) -> None:
    # The restriction is faithful: with frames added back it is extract_links itself.
    assert links_of_anchors(html, ("a", "area", "frame", "iframe")) == extract_links(html, "lxml")[1]
    assert tuple(href for href, _ in anchors(html)) == links_of_anchors(html)


TRICKY = {
    "nested tags in an anchor": ("<p><a href=/x>Jazz <b>and <i>blues</i></b>\n  today</a>",
                                 [("/x", "Jazz and blues today")]),
    "an image's alt text": ("<a href=/logo><img src=l.png alt='Demo &amp; Daily'></a>"
                            "<a href=/both>see <img alt=Map src=m.png> here</a>",
                            [("/logo", "Demo & Daily"), ("/both", "see Map here")]),
    "an area's alt text": ("<map><area href=/north alt='North side'><area href=/south></map>",
                           [("/north", "North side"), ("/south", "")]),
    "entities": ("<a href='/a?x=1&amp;y=2'>caf&eacute; &lt;&gt; &#x4e2d;&#25991;</a>",
                 [("/a?x=1&y=2", "café <> 中文")]),
    "unclosed anchors": ("<div><a href=/one>one<a href=/two>two</div><p>after",
                         [("/one", "one"), ("/two", "two")]),
    "an anchor left open to the end": ("<a href=/open>open <span>all the way",
                                       [("/open", "open all the way")]),
    "script and style inside an anchor": ("<a href=/s>shown<script>hidden()</script>"
                                          "<style>a{}</style> too</a>", [("/s", "shown too")]),
    "skipped schemes and missing hrefs": ("<a name=top>top</a><a href='javascript:go()'>js</a>"
                                          "<a href=' /kept '>kept</a><a href>empty</a>",
                                          [("/kept", "kept"), ("", "empty")]),
    "frames are not anchors": ("<iframe src=/frame title=Weather></iframe><a href=/a>a</a>",
                               [("/a", "a")]),
}


@pytest.mark.parametrize(("html", "expected"), TRICKY.values(), ids=TRICKY.keys())
def test_anchors_on_tricky_html(html: str, expected: list[tuple[str, str]]) -> None:
    assert anchors(html) == expected
    assert_hrefs_are_getourls_own(html)


@pytest.mark.parametrize("html", [case[1] for case in LINK_CASES]
                         + [page[0] for page in ORDINARY_PAGES.values()] + list(GARBAGE.values()))
def test_anchors_find_the_links_getourls_finds(html: str) -> None:
    assert_hrefs_are_getourls_own(html)


def test_anchors_agree_with_getourls_on_random_awkward_pages() -> None:
    rng = random.Random(15)
    found = 0
    for _ in range(400):
        html = "".join(rng.choice(FRAGMENTS) for _ in range(rng.randrange(1, 14)))
        assert_hrefs_are_getourls_own(html)
        found += len(anchors(html))
    assert found > 200


def expected_anchors(path: str) -> list[tuple[str, str]]:
    """(href, label) of each link the demo site says it put in an <a> or <area>."""
    pairs = []
    for link in SITE.links(path):
        hrefs = base_and_links([("a", link.href_for(HOST))])[1]
        if link.role != "iframe" and hrefs:
            pairs.append((hrefs[0], " ".join(link.label.split())))
    return pairs


@pytest.mark.parametrize("path", SITE.paths())
def test_anchors_on_the_demo_site_show_its_own_labels(path: str) -> None:
    html = demo_html(path)
    assert_hrefs_are_getourls_own(html)
    assert sorted(anchors(html)) == sorted(expected_anchors(path))


# -- the Digester ----------------------------------------------------------------------

RULES = UrlRules(scope="host", seed_hosts=frozenset({HOST}))
HOME_TOPIC = Topic.from_text("world news and the weather forecast")


def digest_of(tmp_path, path: str, **fields):
    (tmp_path / "pages").mkdir(exist_ok=True)
    (tmp_path / "text").mkdir(exist_ok=True)
    html = demo_html(path)
    job = DigestJob(1, ORIGIN + path, html.encode("utf-8"), html)
    return Digester(tmp_path, RULES, "lxml", **fields)(job)


def test_each_link_gets_the_best_relevance_of_the_anchors_leading_to_it(tmp_path) -> None:
    digest = digest_of(tmp_path, "/", topic=HOME_TOPIC)
    assert len(digest.link_relevance) == len(digest.links)
    best: dict[str, float] = {}
    for link in SITE.links("/"):
        if link.target is not None and link.role != "iframe":
            url = normalize(ORIGIN + link.target, None)
            best[url] = max(best.get(url, 0.0), HOME_TOPIC.relevance(link.label))
    scores = dict(zip(digest.links, digest.link_relevance))
    assert {url: score for url, score in scores.items() if url in best} == {
        url: score for url, score in best.items() if url in scores}
    assert max(scores.values()) > 0.0 and min(scores.values()) == 0.0


def test_a_link_only_a_frame_leads_to_scores_zero(tmp_path) -> None:
    anchored = {link.target for link in SITE.links("/") if link.role != "iframe"}
    framed_only = [link for link in SITE.links("/")
                   if link.role == "iframe" and link.target not in anchored]
    assert framed_only and all(HOME_TOPIC.relevance(link.label) > 0.0 for link in framed_only)
    digest = digest_of(tmp_path, "/", topic=HOME_TOPIC)
    scores = dict(zip(digest.links, digest.link_relevance))
    assert [scores[normalize(ORIGIN + link.target, None)] for link in framed_only] == [0.0] * len(framed_only)


def test_the_page_text_is_scored(tmp_path) -> None:
    digest = digest_of(tmp_path, "/", topic=HOME_TOPIC)
    text = (tmp_path / digest.text_path).read_text(encoding="utf-8")
    assert digest.relevance == HOME_TOPIC.relevance(text) > 0.0


def test_without_a_topic_the_digest_is_what_it_was(tmp_path) -> None:
    with_topic = digest_of(tmp_path, "/", topic=HOME_TOPIC)
    without = digest_of(tmp_path, "/")
    assert (without.relevance, without.link_relevance) == (None, ())
    assert without == dataclasses.replace(with_topic, relevance=None, link_relevance=())


def test_a_digester_with_a_topic_runs_in_a_parser_process(tmp_path) -> None:
    for folder in ("pages", "text"):
        (tmp_path / folder).mkdir()
    digester = Digester(tmp_path, RULES, "lxml", topic=HOME_TOPIC)
    html = demo_html("/")
    job = DigestJob(1, ORIGIN + "/", html.encode("utf-8"), html)
    pool = DigestPool(digester, 1)
    try:
        in_process = pool.submit(job).result(timeout=60)
    finally:
        pool.close()
    assert in_process == digester(job)
    assert in_process.link_relevance and in_process.relevance is not None


def test_a_stopped_pool_is_closed_only_once_its_manager_thread_has_ended(tmp_path):
    """stop() lets the workers end while the crawl finishes its files; close()
    must then still wait for the pool's manager thread: exiting while it
    closes its pipe made the pool's own exit handler write to the closed
    pipe (a traceback, exit status 1)."""
    from concurrent.futures.process import _ExecutorManagerThread
    for folder in ("pages", "text"):
        (tmp_path / folder).mkdir()
    digester = Digester(tmp_path, RULES, "lxml")
    html = demo_html("/")
    pool = DigestPool(digester, 1)
    try:
        pool.submit(DigestJob(1, ORIGIN + "/", html.encode("utf-8"), html)).result(timeout=60)
        pool.stop()
    finally:
        pool.close()
    assert not [t for t in threading.enumerate() if isinstance(t, _ExecutorManagerThread)]

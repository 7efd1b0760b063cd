"""Planted duplicates: pages a content-dedup crawler must flag, and look-alikes it must not.

Exact duplicates (their text is identical to the original's text):

    /mirror/<section>/ ...           a mirrored section: the section page and a
                                     few of its articles, each linked from its
                                     original ("Mirror copy")
    story-N.html?print=1             print views, linked from their articles
    story-N.html?utm_source=newsletter&utm_medium=email
                                     the featured articles, from /newsletter.html
    story-N.html?sessionid=<hex>     from the article's comments page

Near duplicates (the original's page but for one line or one block):

    story-N-updated.html             a date line one day later, from the article
    story-N.html?ref=partner         an added advertisement, from the comments page

Look-alikes (distinct pages, never to be flagged): story-N-analysis.html has
story N's template, menus, breadcrumbs, links and title stem, and prose of
its own.

Two rules keep the ground truth independent of which copy a crawler expands
(a crawler does not follow an exact duplicate's links):

- A copy's links, resolved against the copy's URL and <base href>, are the
  original's links, except that a same-document link ("#comments") of a query
  variant or an -updated page resolves to the copy itself. Query variants and
  -updated pages live in the original's directory, so relative hrefs resolve
  the same; a mirror copy keeps the original's hrefs and carries
  <base href="the original's path"> (in <head>, so the text stays the same).
- A copy is linked only from its original, from pages below the original
  (its comments), or from /newsletter.html (two clicks from "/", for articles
  featured on "/"), so its BFS level is greater than its original's: a
  crawler that finishes level k before k+1 meets the original first, and the
  copy is the page it flags.
"""
from __future__ import annotations

import datetime
import random
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from demosite.links import Link

if TYPE_CHECKING:  # model imports this module; the types are only annotations here
    from demosite.model import Article, Page

MIRROR_ROOT = "/mirror"
PRINT_QUERY = "print=1"
NEWSLETTER = "/newsletter.html"
NEWSLETTER_QUERY = "utm_source=newsletter&utm_medium=email"
PARTNER_QUERY = "ref=partner"
ADVERT = "Advertisement: Demo Daily Plus, half price."
LONG_READ_PARAGRAPHS = 32  # of an original with a near duplicate (other articles: 7-13)

# How many articles each kind of copy is planted on.
MIRRORED_ARTICLES = 4
PRINTED = 6
SESSIONS = 4
UPDATED = 6
PARTNERED = 6
ANALYSED = 3


@dataclass(frozen=True)
class Plan:
    """Which originals get which copies; drawn from the seed before any page is made."""

    mirror_section: str
    mirrored: tuple[Article, ...]  # articles of mirror_section copied under MIRROR_ROOT
    printed: tuple[Article, ...]
    newsletter: tuple[Article, ...]  # the featured articles, linked with utm_ parameters
    sessions: dict[Article, str]  # article -> its sessionid value
    updated: tuple[Article, ...]
    partnered: tuple[Article, ...]
    analysed: tuple[Article, ...]

    @property
    def near_originals(self) -> frozenset[Article]:
        """Articles with a near duplicate: rendered at full length (see model)."""
        return frozenset(self.updated + self.partnered)


def plan(seed: int, sections: Sequence[str], articles: Sequence[Article],
         featured: Sequence[Article]) -> Plan:
    """Pick the originals with randomness of their own, so the rest of the site stays as it was."""
    rng = random.Random(f"{seed}:planted")
    mirror_section = rng.choice(list(sections))
    mirrored = rng.sample([a for a in articles if a.section == mirror_section],
                          MIRRORED_ARTICLES)
    # Each remaining article plays at most one part, so a copy has one original.
    pool = [a for a in articles if a.section != mirror_section and a not in featured]
    kinds = (PRINTED, SESSIONS, UPDATED, PARTNERED, ANALYSED)
    picked = rng.sample(pool, sum(kinds))
    groups, start = [], 0
    for size in kinds:
        groups.append(tuple(picked[start:start + size]))
        start += size
    printed, sessions, updated, partnered, analysed = groups
    return Plan(
        mirror_section=mirror_section,
        mirrored=tuple(mirrored),
        printed=printed,
        newsletter=tuple(featured),
        sessions={article: f"{rng.getrandbits(64):016x}" for article in sessions},
        updated=updated,
        partnered=partnered,
        analysed=analysed,
    )


def mirror_path(path: str) -> str:
    return MIRROR_ROOT + path


def print_path(article: Article) -> str:
    return f"{article.path}?{PRINT_QUERY}"


def newsletter_path(article: Article) -> str:
    return f"{article.path}?{NEWSLETTER_QUERY}"


def session_path(article: Article, session: str) -> str:
    return f"{article.path}?sessionid={session}"


def updated_path(article: Article) -> str:
    return f"{article.directory}story-{article.number}-updated.html"


def partner_path(article: Article) -> str:
    return f"{article.path}?{PARTNER_QUERY}"


def analysis_path(article: Article) -> str:
    return f"{article.directory}story-{article.number}-analysis.html"


def dateline(seed: int, path: str) -> str:
    """An article's date line; days stop at 27 so that the next day differs in one number."""
    rng = random.Random(f"{seed}:{path}:date")
    day = datetime.date(2026, rng.randint(1, 11), rng.randint(1, 27))
    return f"Updated {day.isoformat()} {rng.randint(6, 22):02d}:{rng.choice((0, 15, 30, 45)):02d}"


def next_day(line: str) -> str:
    """The same date line one day later (a dateline() line, whose day is at most 27)."""
    word, day, time = line.split(" ")
    later = datetime.date.fromisoformat(day) + datetime.timedelta(days=1)
    return f"{word} {later.isoformat()} {time}"


def mirror_copy(original: Page) -> Page:
    """The original under MIRROR_ROOT, its hrefs resolved by a <base href> naming it."""
    base = original.base or original.path
    return replace(original, path=mirror_path(original.path), base=base,
                   text_of=original.text_of or original.path)


def variant(original: Page, path: str, **changes) -> Page:
    """A copy at path in the original's directory: same hrefs, same prose unless changed.

    Its same-document links now lead to the copy itself (unless a <base href>
    decides where they lead, as it does for the original).
    """
    ref = original.base or path
    links = tuple(replace(link, target=ref) if _same_document(link) else link
                  for link in original.links)
    fields = {"text_of": original.text_of or original.path, **changes}
    return replace(original, path=path, links=links, **fields)


def _same_document(link: Link) -> bool:
    return link.href.startswith("#")

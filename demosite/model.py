"""The demo site's content model: which resources exist and what links where.

`build_site(seed)` lays out the whole finite site with one random.Random(seed),
so a seed always gives the same site. The calendar trap is the only infinite
part; its month pages are made on demand by `calendar_page`.

Shape (levels are shortest click distances from "/"; shortcuts such as
featured and related articles pull some pages closer):

    /                                   home: menu, map, iframe, private area
    /news/ /science/ ... (6 sections)   each with 3 categories
    /news/world/                        category
    /news/world/articles.html[?page=2]  article lists, 4 articles a page
    /news/world/story-N.html            articles, with related articles
    /news/world/story-N/comments.html   comments; below them older comments
                                        (?page=2) and attachments, sometimes
    /private/ -> /archive/...           robots-disallowed, leads to pages
                                        reachable no other way
    /calendar/2026/11/                  the trap: months link to months forever
    /mirror/..., story-N.html?print=1   planted exact and near duplicates and
    story-N-updated.html ...            look-alikes: see demosite.planted
"""
from __future__ import annotations

import random
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from demosite import planted
from demosite.links import Link, LinkList

SECTIONS: dict[str, tuple[str, ...]] = {
    "news": ("world", "business", "politics"),
    "science": ("space", "physics", "biology"),
    "sports": ("football", "tennis", "cycling"),
    "arts": ("painting", "music", "cinema"),
    "travel": ("europe", "asia", "americas"),
    "events": ("concerts", "festivals", "lectures"),
}
ARTICLES_PER_LIST_PAGE = 4

# robots.txt rules for every user agent, as path prefixes.
DISALLOWED_PREFIXES = ("/private/", "/search")
# The only non-HTML extensions the site links to; every crawler's
# extension deny-list is expected to contain all of them.
DENIED_EXTENSIONS = frozenset({".png", ".css", ".js", ".pdf"})

TRAP_START = "/calendar/2026/11/"
REDIRECT_FROM = "/old/news.html"
REDIRECT_TO = "/news/moved-here.html"

# path -> a sentence that appears in the page once it is decoded correctly.
EXPECTED_TEXTS: Mapping[str, str] = MappingProxyType({
    "/intl/": "Grüße aus dem Übersetzungsbüro, 世界へようこそ。",
    "/intl/gbk.html": "这是一个用于测试网页爬虫的简体中文页面。",
    "/intl/big5.html": "這是一個用於測試網頁爬蟲的繁體中文頁面。",
    "/intl/shift_jis.html": "これはクローラーのテスト用の日本語ページです。",
})


@dataclass(frozen=True)
class Page:
    """An HTML page."""

    path: str  # canonical path?query
    title: str
    links: tuple[Link, ...]
    paragraphs: int = 4  # paragraphs of generated text
    table: bool = False  # whether the page carries a data table
    base: str = ""  # <base href>, "" for none
    status: int = 200
    charset: str = "utf-8"  # the codec the page is encoded with
    charset_in_header: bool = True  # Content-Type: text/html; charset=...
    charset_meta: str = "charset"  # "charset", "http-equiv" or "" (none)
    sentence: str = ""  # a known sentence, see EXPECTED_TEXTS
    text_of: str = ""  # whose prose the page shows: a path, "" for its own
    dateline: str = ""  # a line under the heading, "Updated 2026-11-28 08:15"; "" for none
    advert: str = ""  # an advertisement block after the first paragraph; "" for none
    print_view: bool = False  # a print stylesheet in <head> (which changes no text)


@dataclass(frozen=True)
class Redirect:
    path: str
    location: str  # canonical path?query on this site
    status: int = 301


@dataclass(frozen=True)
class Blob:
    """A non-HTML resource."""

    path: str
    content_type: str
    body: bytes


Entry = Page | Redirect | Blob


def is_disallowed(target: str) -> bool:
    """Whether robots.txt forbids target to every user agent."""
    return target.startswith(DISALLOWED_PREFIXES)


def is_denied(target: str) -> bool:
    """Whether target's last path segment has a deny-listed extension."""
    name = target.partition("?")[0].rsplit("/", 1)[-1]
    return "." in name and name[name.rindex(".") :].lower() in DENIED_EXTENSIONS


def robots_txt() -> str:
    rules = "".join(f"Disallow: {prefix}\n" for prefix in DISALLOWED_PREFIXES)
    return (
        "# Crawlers are welcome; please keep out of the staff area.\n"
        "User-agent: BadBot\nDisallow: /\n\n"
        f"User-agent: *\n{rules}"
    )


@dataclass(frozen=True)
class Article:
    section: str
    category: str
    number: int  # 1-based position in its category

    @property
    def directory(self) -> str:
        return f"/{self.section}/{self.category}/"

    @property
    def path(self) -> str:
        return f"{self.directory}story-{self.number}.html"

    @property
    def folder(self) -> str:
        """Where its comments and attachments live."""
        return f"{self.directory}story-{self.number}/"

    @property
    def list_page(self) -> str:
        lists = self.directory + "articles.html"
        return lists if self.number <= ARTICLES_PER_LIST_PAGE else lists + "?page=2"

    @property
    def title(self) -> str:
        return f"{self.category.title()} story {self.number}"


class SiteModel:
    """Every resource of one generated site, looked up by canonical path?query.

    duplicates, near_duplicates and look_alikes map a planted page to the
    page it copies or resembles (see demosite.planted).
    """

    def __init__(self, seed: int, entries: dict[str, Entry],
                 duplicates: Mapping[str, str] = MappingProxyType({}),
                 near_duplicates: Mapping[str, str] = MappingProxyType({}),
                 look_alikes: Mapping[str, str] = MappingProxyType({})):
        self.seed = seed
        self.entries = entries
        self.duplicates = duplicates
        self.near_duplicates = near_duplicates
        self.look_alikes = look_alikes

    def lookup(self, target: str) -> Entry | None:
        """The resource at a canonical target; None means 404."""
        return self.entries.get(target) or calendar_page(self.seed, target)

    def html_paths(self) -> list[str]:
        """Every page answered 200 text/html, trap excluded, in layout order."""
        return [path for path, entry in self.entries.items()
                if isinstance(entry, Page) and entry.status == 200]


def page_rng(seed: int, path: str) -> random.Random:
    """Randomness private to one page, so pages made on demand stay stable."""
    return random.Random(f"{seed}:{path}")


def add_chrome(links: LinkList, rng: random.Random) -> None:
    """The menu and footer every page repeats (hence many duplicate links)."""
    links.add("/", "Home", rng.choice(("absolute", "relative")), role="menu")
    for section in SECTIONS:
        spelling = rng.choices(("absolute", "spaced", "full-url"), (6, 1, 1))[0]
        links.add(f"/{section}/", section.title(), spelling, role="menu")
    links.add("/about.html", "About", rng.choice(("absolute", "full-url", "escaped")), role="footer")
    links.add("/contact.html", "Contact", "absolute", role="footer")
    links.add("/intl/", "International", "absolute", role="footer")
    links.add("/people/~editor.html", "The editor",
              rng.choice(("absolute", "escaped", "escaped-lower")), role="footer")


Fill = Callable[[LinkList, random.Random], None]


def new_page(seed: int, path: str, title: str, fill: Fill, base: str = "", **fields) -> Page:
    """A page whose own links are added by fill(links, rng), plus the chrome."""
    rng = page_rng(seed, path)
    links = LinkList(base or path)
    fill(links, rng)
    add_chrome(links, rng)
    return Page(path, title, links.done(), base=base, **fields)


_MONTH = re.compile(r"/calendar/(\d{4})/(\d{2})/")


def calendar_page(seed: int, target: str) -> Page | None:
    """A month of the endless calendar, or None if target is not one."""
    match = _MONTH.fullmatch(target)
    if not match:
        return None
    year, month = int(match.group(1)), int(match.group(2))
    if year < 1 or not 1 <= month <= 12:
        return None
    earlier = (year, month - 1) if month > 1 else (year - 1, 12)
    later = (year, month + 1) if month < 12 else (year + 1, 1)

    def fill(links: LinkList, rng: random.Random) -> None:
        if earlier[0] >= 1:
            links.add("/calendar/%04d/%02d/" % earlier, "Previous month", "relative")
        if later[0] <= 9999:
            links.add("/calendar/%04d/%02d/" % later, "Next month", "absolute")
        links.add("/events/", "All events", "relative", role="crumb")

    return new_page(seed, target, f"Calendar {year:04d}-{month:02d}", fill, paragraphs=3)


def build_site(seed: int) -> SiteModel:
    """Lay out the whole finite site for a seed."""
    layout = _Layout(seed)
    return SiteModel(seed, layout.entries, MappingProxyType(layout.duplicates),
                     MappingProxyType(layout.near_duplicates), MappingProxyType(layout.look_alikes))


class _Layout:
    """Builds the entries in a fixed order, so one seed gives one site."""

    def __init__(self, seed: int):
        self.seed = seed
        self.rng = random.Random(seed)
        self.entries: dict[str, Entry] = {}
        self.articles = self._plan_articles()
        self.featured = self.rng.sample(self._second_list_page(), 3)
        self.plan = planted.plan(seed, tuple(SECTIONS), self._all_articles(), self.featured)
        self.duplicates: dict[str, str] = {}
        self.near_duplicates: dict[str, str] = {}
        self.look_alikes: dict[str, str] = {}
        self._home()
        self._corners()
        for section in SECTIONS:
            self._section(section)
        self._private_and_archive()
        self._misc()
        self._planted()

    def _plan_articles(self) -> dict[tuple[str, str], list[Article]]:
        return {
            (section, category): [Article(section, category, number)
                                  for number in range(1, self.rng.randint(6, 8) + 1)]
            for section, categories in SECTIONS.items() for category in categories
        }

    def _all_articles(self) -> list[Article]:
        return [article for group in self.articles.values() for article in group]

    def _second_list_page(self) -> list[Article]:
        return [a for a in self._all_articles() if a.number > ARTICLES_PER_LIST_PAGE]

    def _put(self, path: str, title: str, fill: Fill, base: str = "", **fields) -> None:
        self.entries[path] = new_page(self.seed, path, title, fill, base, **fields)

    def _home(self) -> None:
        def fill(links: LinkList, rng: random.Random) -> None:
            links.same_document("top", "Back to top")
            links.add("/private/", "Staff area", "relative")
            for index, article in enumerate(self.featured):
                links.add(article.path, article.title, "absolute", role="related",
                          fragment="summary" if index == 0 else "")
            links.add("/maps/north.html", "Northern region", "absolute", role="area")
            links.add("/maps/south.html", "Southern region", "relative", role="area")
            links.add("/widgets/weather.html", "Weather", "dot-relative", role="iframe")
            links.add("/images/logo.png", "Our logo (PNG)", "absolute")
            links.leaving("mailto:desk@demo.invalid", "Write to the desk")
            links.leaving("tel:+1-555-0100", "Call the desk")
            links.leaving("javascript:void(0)", "Toggle dark mode")
            links.leaving("http://example.invalid/partners", "Our partners")
            links.leaving("//example.invalid/cdn/", "Mirror")

        self._put("/", "Demo Daily", fill, paragraphs=5)

    def _corners(self) -> None:
        """Pages hanging off the home page and the footer."""
        picks = self.rng.sample(self._all_articles(), 3)

        def about(links: LinkList, rng: random.Random) -> None:
            links.add("/search?q=crawler", "Search the site for 'crawler'")
            links.add("/download?file=report", "Annual report (download)", "relative")
            links.add(planted.NEWSLETTER, "Our newsletter", "relative")
            links.leaving("http://example.invalid/about-us", "Our parent company")

        def contact(links: LinkList, rng: random.Random) -> None:
            links.leaving("mailto:editor@demo.invalid?subject=Hello", "Email the editor")
            links.leaving("tel:+1-555-0199", "Phone")
            links.leaving("javascript:history.back()", "Go back")

        def intl(links: LinkList, rng: random.Random) -> None:
            links.add("/intl/gbk.html", "简体中文 (GBK)", "relative")
            links.add("/intl/big5.html", "繁體中文 (Big5)", "dot-relative")
            links.add("/intl/shift_jis.html", "日本語 (Shift_JIS)", "absolute")

        def editor(links: LinkList, rng: random.Random) -> None:
            for article in picks:
                links.add(article.path, article.title, "relative", role="related")
            links.add("/about.html", "About us", "relative")

        def maps(other: str) -> Fill:
            def fill(links: LinkList, rng: random.Random) -> None:
                links.add(other, "The other region", "relative")
                links.add("/travel/", "Travel guides", "absolute")
            return fill

        def weather(links: LinkList, rng: random.Random) -> None:
            links.add("/widgets/forecast.html", "Ten-day forecast", "relative")

        def forecast(links: LinkList, rng: random.Random) -> None:
            links.add("/widgets/weather.html", "Today", "relative")

        self._put("/about.html", "About Demo Daily", about, paragraphs=6)
        self._put("/contact.html", "Contact", contact, paragraphs=3)
        self._put("/intl/", "International editions", intl, paragraphs=3,
                  sentence=EXPECTED_TEXTS["/intl/"])
        self._put("/people/~editor.html", "From the editor", editor, paragraphs=5)
        self._put("/maps/north.html", "Northern region", maps("/maps/south.html"))
        self._put("/maps/south.html", "Southern region", maps("/maps/north.html"))
        self._put("/widgets/weather.html", "Weather", weather, paragraphs=3)
        self._put("/widgets/forecast.html", "Forecast", forecast, paragraphs=3)
        self._intl_pages()

    def _intl_pages(self) -> None:
        def back(links: LinkList, rng: random.Random) -> None:
            links.add("/intl/", "International editions", "relative", role="crumb")

        declared = {  # path: (codec, charset in header?, meta style)
            "/intl/gbk.html": ("gbk", True, ""),
            "/intl/big5.html": ("big5", False, "charset"),
            "/intl/shift_jis.html": ("shift_jis", False, "http-equiv"),
        }
        for path, (codec, in_header, meta) in declared.items():
            self._put(path, f"International ({codec})", back, paragraphs=3, charset=codec,
                      charset_in_header=in_header, charset_meta=meta,
                      sentence=EXPECTED_TEXTS[path])

    def _section(self, section: str) -> None:
        root = f"/{section}/"
        others = [a for a in self._all_articles() if a.section != section]
        popular = self.rng.sample(others, 2)
        base = f"/{section}/{SECTIONS[section][0]}/" if section == "travel" else ""

        def fill(links: LinkList, rng: random.Random) -> None:
            links.add("/", "Home", "absolute", role="crumb")
            spellings = ("relative", "dot-relative", "absolute")
            for category, spelling in zip(SECTIONS[section], spellings):
                links.add(f"{root}{category}/", category.title(), spelling)
            for index, article in enumerate(popular):
                links.add(article.path, article.title, "absolute", role="related",
                          fragment="comments" if index else "")
            self._section_extras(section, links)
            if section == self.plan.mirror_section:
                links.add(planted.mirror_path(root), "Mirror copy", "absolute")

        self._put(root, section.title(), fill, base=base, paragraphs=4)
        for category in SECTIONS[section]:
            self._category(section, category)

    def _section_extras(self, section: str, links: LinkList) -> None:
        """The odd links each section carries (listed in the docstring of demosite.site)."""
        if section == "news":
            links.add(REDIRECT_FROM, "News archive")
        elif section == "science":
            links.add("/science/physics/", "Physics (again)", "dot-segments")
            links.add("/broken.html", "Live results")
            links.add("/feed", "Feed (JSON)", "relative")
        elif section == "sports":
            links.add("/missing.html", "Last season")
        elif section == "arts":
            links.add("/arts/painting/", "Painting (again)", "escaped")
        elif section == "travel":
            # The page's <base href> is the first category, so these relative
            # hrefs resolve against it, not against /travel/.
            links.add("/travel/europe/story-2.html", "Europe in spring", "relative")
            links.same_document("top", "Back to top")
        elif section == "events":
            links.add(TRAP_START, "Calendar")

    def _category(self, section: str, category: str) -> None:
        root = f"/{section}/{category}/"
        articles = self.articles[(section, category)]
        top = self.rng.choice(articles[ARTICLES_PER_LIST_PAGE:]) if self.rng.random() < 0.5 else None

        def fill(links: LinkList, rng: random.Random) -> None:
            links.add("/", "Home", "relative", role="crumb")
            links.add(f"/{section}/", section.title(), "relative", role="crumb")
            links.add(root + "articles.html", "All articles", "relative")
            if top:
                links.add(top.path, f"Top story: {top.title}", "relative")
            links.same_document("top", "Back to top")

        self._put(root, f"{section.title()}: {category.title()}", fill, paragraphs=3)
        self._list_pages(section, category, articles)
        for article in articles:
            self._article(article, articles)

    def _list_pages(self, section: str, category: str, articles: list[Article]) -> None:
        first = f"/{section}/{category}/articles.html"
        second = first + "?page=2"

        def crumbs(links: LinkList) -> None:
            links.add("/", "Home", "absolute", role="crumb")
            links.add(f"/{section}/", section.title(), "relative", role="crumb")
            links.add(f"/{section}/{category}/", category.title(), "relative", role="crumb")

        def page_one(links: LinkList, rng: random.Random) -> None:
            crumbs(links)
            for article in articles[:ARTICLES_PER_LIST_PAGE]:
                links.add(article.path, article.title,
                          "relative" if article.number % 2 else "dot-relative")
            links.add(second, "Next page", "query")

        def page_two(links: LinkList, rng: random.Random) -> None:
            crumbs(links)
            for article in articles[ARTICLES_PER_LIST_PAGE:]:
                links.add(article.path, article.title, "relative")
            links.add(first, "Previous page", "relative")
            links.add(second, "This page", "query")
            links.same_document("top", "Back to top")

        title = f"{category.title()} articles"
        self._put(first, title, page_one, paragraphs=3)
        self._put(second, title + ", page 2", page_two, paragraphs=3)

    def _article(self, article: Article, siblings: list[Article]) -> None:
        related = self.rng.sample([a for a in self._all_articles() if a != article], 3)
        attached = self.rng.random() < 0.3
        folder = article.folder

        def fill(links: LinkList, rng: random.Random) -> None:
            links.add("/", "Home", "absolute", role="crumb")
            links.add(f"/{article.section}/", article.section.title(), "relative", role="crumb")
            links.add(article.directory, article.category.title(), "relative", role="crumb")
            links.add(article.list_page, "Article list", "relative")
            links.add(folder + "comments.html", "Comments", "relative")
            if article.number > 1:
                links.add(siblings[article.number - 2].path, "Previous story", "dot-relative")
            if article.number < len(siblings):
                links.add(siblings[article.number].path, "Next story", "relative")
            for index, other in enumerate(related):
                links.add(other.path, other.title, "absolute", role="related",
                          fragment="summary" if index == 0 else "")
            links.same_document("comments", "Jump to comments")
            self._copies_linked_from(article, links)

        paragraphs = self.rng.randint(7, 13)
        if article in self.plan.near_originals:
            # Long reads: the smaller the share of shingles one changed line
            # or block makes, the fewer SimHash bits it flips (demosite.planted).
            paragraphs = planted.LONG_READ_PARAGRAPHS
        self._put(article.path, article.title, fill, paragraphs=paragraphs, table=True,
                  dateline=planted.dateline(self.seed, article.path))
        self._comments(article, attached)
        if attached:
            self._attachments(article)

    def _copies_linked_from(self, article: Article, links: LinkList) -> None:
        """The article's links to its planted copies, if it has any."""
        plan = self.plan
        if article in plan.printed:
            links.add(planted.print_path(article), "Print this story", "query")
        if article in plan.mirrored:
            links.add(planted.mirror_path(article.path), "Mirror copy", "absolute")
        if article in plan.updated:
            links.add(planted.updated_path(article), "Updated version", "relative")
        if article in plan.analysed:
            links.add(planted.analysis_path(article), "Analysis", "relative")

    def _comments(self, article: Article, attached: bool) -> None:
        """Comments, then older comments and attachments one click further down."""
        first = article.folder + "comments.html"
        older = first + "?page=2" if self.rng.random() < 0.5 else ""

        def crumbs(links: LinkList) -> None:
            links.add(article.path, article.title, "relative", role="crumb")
            links.add(article.directory + "articles.html", "Article list", "relative")
            links.add(f"/{article.section}/", article.section.title(), "relative")

        def page_one(links: LinkList, rng: random.Random) -> None:
            crumbs(links)
            if attached:
                links.add(article.folder + "attachments.html", "Attachments", "relative")
            if older:
                links.add(older, "Older comments", "query")
            links.same_document("reply", "Reply")
            if article in self.plan.sessions:
                session = self.plan.sessions[article]
                links.add(planted.session_path(article, session), "Back to the story", "relative")
            if article in self.plan.partnered:
                links.add(planted.partner_path(article), "Partner edition", "relative")

        def page_two(links: LinkList, rng: random.Random) -> None:
            crumbs(links)
            links.add(first, "Newer comments", "relative")

        title = f"Comments on {article.title}"
        self._put(first, title, page_one, paragraphs=self.rng.randint(3, 6))
        if older:
            self._put(older, title + ", older", page_two, paragraphs=self.rng.randint(3, 5))

    def _attachments(self, article: Article) -> None:
        report = article.folder + "report.pdf"

        def fill(links: LinkList, rng: random.Random) -> None:
            links.add(article.path, article.title, "relative", role="crumb")
            links.add(report, "Full report (PDF)", "relative")
            links.add(article.folder + "comments.html", "Comments", "relative")

        self._put(article.folder + "attachments.html", f"Attachments of {article.title}", fill,
                  paragraphs=3)
        self.entries[report] = Blob(report, "application/pdf", _PDF)

    def _private_and_archive(self) -> None:
        """Reachable only through /private/, which robots.txt forbids."""
        tree = {
            "/private/": ("Staff area", ["/private/reports.html", "/private/staff.html"]),
            "/private/reports.html": ("Reports", ["/archive/2019.html", "/archive/2020.html"]),
            "/private/staff.html": ("Staff", ["/archive/staff-list.html"]),
            "/archive/2019.html": ("Archive 2019", ["/archive/2019/q1.html", "/archive/2019/q2.html"]),
            "/archive/2020.html": ("Archive 2020", ["/archive/2020/q1.html"]),
            "/archive/staff-list.html": ("Staff list", []),
            "/archive/2019/q1.html": ("2019 Q1", ["/archive/2019/q1/notes.html"]),
            "/archive/2019/q2.html": ("2019 Q2", []),
            "/archive/2020/q1.html": ("2020 Q1", ["/archive/2020/q1/notes.html"]),
            "/archive/2019/q1/notes.html": ("Notes, 2019 Q1", []),
            "/archive/2020/q1/notes.html": ("Notes, 2020 Q1", []),
        }
        for path, (title, children) in tree.items():
            def fill(links: LinkList, rng: random.Random, children=children) -> None:
                for child in children:
                    links.add(child, child.rsplit("/", 1)[-1], "relative")
            self._put(path, title, fill, paragraphs=3)

    def _misc(self) -> None:
        results = self.rng.sample(self._all_articles(), 3)

        def search(links: LinkList, rng: random.Random) -> None:
            for article in results:
                links.add(article.path, article.title, "absolute", role="related")

        def moved(links: LinkList, rng: random.Random) -> None:
            links.add("/news/moved-here/followup.html", "Follow-up", "relative")

        def followup(links: LinkList, rng: random.Random) -> None:
            # Not back to REDIRECT_TO: the redirect must stay its only way in.
            links.add("/news/", "News", "relative", role="crumb")

        def broken(links: LinkList, rng: random.Random) -> None:
            # Only an error page links here: a crawler must not follow it.
            links.add("/errors/report.html", "Report this error")

        self._put("/search?q=crawler", "Search results for 'crawler'", search, paragraphs=3)
        self.entries[REDIRECT_FROM] = Redirect(REDIRECT_FROM, REDIRECT_TO)
        self._put(REDIRECT_TO, "This article has moved here", moved, paragraphs=4)
        self._put("/news/moved-here/followup.html", "Follow-up", followup, paragraphs=3)
        self._put("/broken.html", "Internal server error", broken, paragraphs=1, status=500)
        self._put("/errors/report.html", "Error report", lambda links, rng: None, paragraphs=3)
        self.entries["/feed"] = Blob("/feed", "application/json", _feed(self._all_articles()))
        self.entries["/download?file=report"] = Blob(
            "/download?file=report", "application/octet-stream", bytes(range(256)) * 8)
        self.entries["/images/logo.png"] = Blob("/images/logo.png", "image/png", _PNG)
        self.entries["/static/site.css"] = Blob("/static/site.css", "text/css", _CSS)

    def _planted(self) -> None:
        """The newsletter, then every planted copy, made from its finished original."""
        plan = self.plan

        def newsletter(links: LinkList, rng: random.Random) -> None:
            links.add("/about.html", "About Demo Daily", "relative", role="crumb")
            for article in plan.newsletter:
                links.add(planted.newsletter_path(article), article.title, "absolute")

        self._put(planted.NEWSLETTER, "The Demo Daily newsletter", newsletter, paragraphs=3)
        self._copy(planted.mirror_copy(self._page(f"/{plan.mirror_section}/")))
        for article in plan.mirrored:
            self._copy(planted.mirror_copy(self._page(article.path)))
        for article in plan.printed:
            self._copy(planted.variant(self._page(article.path), planted.print_path(article),
                                       print_view=True))
        for article in plan.newsletter:
            self._copy(planted.variant(self._page(article.path), planted.newsletter_path(article)))
        for article, session in plan.sessions.items():
            self._copy(planted.variant(self._page(article.path),
                                       planted.session_path(article, session)))
        for article in plan.updated:
            page = self._page(article.path)
            self._copy(planted.variant(page, planted.updated_path(article),
                                       dateline=planted.next_day(page.dateline)), near=True)
        for article in plan.partnered:
            self._copy(planted.variant(self._page(article.path), planted.partner_path(article),
                                       advert=planted.ADVERT), near=True)
        for article in plan.analysed:
            page = self._page(article.path)
            look_alike = planted.variant(page, planted.analysis_path(article), text_of="",
                                         title=f"{article.title}: analysis")
            self.entries[look_alike.path] = look_alike
            self.look_alikes[look_alike.path] = article.path

    def _page(self, path: str) -> Page:
        entry = self.entries[path]
        assert isinstance(entry, Page), path
        return entry

    def _copy(self, page: Page, near: bool = False) -> None:
        self.entries[page.path] = page
        (self.near_duplicates if near else self.duplicates)[page.path] = page.text_of


def _feed(articles: list[Article]) -> bytes:
    items = ",".join(f'{{"title": "{a.title}", "path": "{a.path}"}}' for a in articles[:10])
    return f'{{"items": [{items}]}}'.encode()


# A valid 1x1 grey PNG.
_PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010800000000"
    "3a7e9b550000000a4944415478da63680000008200815b5a1a4b0000000049454e44ae426082"
)
_PDF = b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n"
_CSS = b"body { font-family: serif; max-width: 48em; margin: auto; }\n"

"""BlogSite: a generated blog for measuring extraction patterns, with its answer.

The shape of the R crawler paper's extraction benchmark: by default 1,000
pages, 800 posts each with a title and a post body, and 200 menu pages
that list them. `DemoServer(BlogSite())` serves it; `posts()` is the
ground truth every extracted value is checked against.

Menu pages (menu_pages of them, 1 at least), split 2 : 2 : 1:
    /  /page/2/ ... /page/L/                 every post, newest first, 10 a page
    /category/<c>/  /category/<c>/page/k/    up to 8 categories, each its posts
    /archive/<yyyy>/<mm>/                    one page per month, its posts
Posts:
    /<yyyy>/<mm>/<dd>/<slug>-<n>.html        matched by POST_URL_REGEX

Every page has a sidebar linking to the home page, each category's first
page and every archive month; paginations link to the first and last page,
pages k±1 and k±2, and every 5th page. In the default site a crawl from "/"
reaches every post by depth 2 and every menu page by depth 3: --max-depth 3
(`levels()` gives each page's level, `max_level()` the depth needed).

What makes a post worth extracting from: the title is <h1 class="post-title">
(sometimes with more classes, a series <span>, an <em>, a comment), while
the site name is an <h1> too and listing pages use <h2 class="post-title">;
the post is <div class="post-body">, whose paragraphs hold links, <strong>,
<code>, words split by inline tags ("<em>Hel</em>lo"), entities (named and
numeric), no-break spaces, curly quotes, accents, CJK and emoji, with
headings, lists, quotes, tables, figures, code blocks, an inline <script>,
a comment, and in about half the posts an advertisement <div class="ad">
(between blocks, sometimes in a nested section) that --extract-exclude must
remove; outside the post are a related-posts list, comments in
<div class="comment-body">, share links and a sidebar (with an ad too).

The selectors that extract everything exactly (see EXTRACT_OPTIONS):
title=css:h1.post-title, post=css:div.post-body, excluding css:div.ad,
on pages matching POST_URL_REGEX. A post's text in `posts()` is what a
reader sees in the body without the ad: white space collapsed, blocks
separated by one space (textfilter.extract's rule), built from the model,
never by parsing the HTML.
"""
from __future__ import annotations

import datetime
import functools
import html
import random
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from demosite.site import Response, canonical_target

SITE_NAME = "Field Notes"
POSTS_PER_PAGE = 10
POST_URL_REGEX = r"/\d{4}/\d{2}/\d{2}/[^/?#]+\.html$"
EXTRACT_OPTIONS = (
    "--extract", "title=css:h1.post-title",
    "--extract", "post=css:div.post-body",
    "--extract-exclude", "css:div.ad",
    "--extract-from", POST_URL_REGEX,
)
CATEGORIES = ("travel", "cooking", "gardening", "music", "science", "books", "cycling", "photography")
_LATEST_MONTH = (2026, 5)
_HTML = "text/html; charset=utf-8"
_ROBOTS = "# Everything may be crawled.\nUser-agent: *\nDisallow:\n"

_WORDS = """
    river bridge market garden lantern harbour orchard village meadow valley
    kitchen recipe bread butter tomato basil onion pepper saffron lemon
    guitar melody rhythm chord concert record violin chorus tempo
    planet orbit comet telescope cell protein fossil climate glacier
    novel chapter author library poem essay story letter
    wheel saddle climb descent route chain valve tyre
    camera lens shutter light shadow portrait frame
    quiet bright early late simple careful steady rapid gentle local
    old small large rare common useful strange modern ancient green
    finds shows opens builds grows changes reads writes visits tries
    and the of in on with for from after before about between under
""".split()
# Words that exercise decoding: accents, curly quotes, CJK, emoji, symbols.
_RICH_WORDS = (
    "café", "naïve", "Zürich", "crème brûlée", "São Paulo", "façade", "jalapeño",
    "東京", "北京の春", "“slow travel”", "it’s", "€12", "10 km", "50 °C", "🙂", "—",
    "Fish & Chips", "a < b", "x > y", "smørrebrød", "Ångström",
)
_NAMED = {"&": "&amp;", "<": "&lt;", ">": "&gt;", "é": "&eacute;", "ï": "&iuml;",
          "ü": "&uuml;", "—": "&mdash;", "’": "&rsquo;", "“": "&ldquo;", "”": "&rdquo;",
          "€": "&euro;", "°": "&deg;", "ç": "&ccedil;", "ñ": "&ntilde;", "…": "&hellip;"}


# --- the model: what exists, as plain text --------------------------------

@dataclass(frozen=True)
class Run:
    """A piece of inline text, perhaps inside an inline element."""
    text: str
    tag: str = ""      # "", "strong", "em", "code", "a"
    href: str = ""     # for tag "a": a canonical path on this site, or an external URL


@dataclass(frozen=True)
class Block:
    """A block of the post body; its text is the runs' texts, or the items'."""
    kind: str                        # p, h2, ul, blockquote, pre, table, figure, section
    runs: tuple[Run, ...] = ()       # p, h2, blockquote, pre, figure (the caption)
    items: tuple[str, ...] = ()      # ul items; table cells, row by row
    columns: int = 0                 # table
    inner: tuple["Block", ...] = ()  # section: nested blocks

    def text(self) -> str:
        own = "".join(run.text for run in self.runs)
        parts = [own] + list(self.items) + [block.text() for block in self.inner]
        return " ".join(" ".join(parts).split())


@dataclass(frozen=True)
class Post:
    number: int                      # 1 = oldest
    path: str
    date: datetime.date
    category: str
    title: tuple[Run, ...]
    title_classes: str               # class attribute of the <h1>
    body_classes: str                # class attribute of the post-body <div>
    blocks: tuple[Block, ...]
    ad: str                          # "": none; "between": after blocks[ad_after]; "nested": in the last section
    ad_after: int
    related: tuple[str, ...]         # paths of related posts
    comments: tuple[tuple[str, str], ...]  # (author, comment text)
    entity_style: str                # "raw", "named" or "numeric"

    @property
    def title_text(self) -> str:
        return " ".join("".join(run.text for run in self.title).split())

    @property
    def body_text(self) -> str:
        return " ".join(" ".join(block.text() for block in self.blocks).split())

    def body_links(self) -> list[str]:
        runs = [run for block in _all_blocks(self.blocks) for run in block.runs]
        return [run.href for run in runs if run.tag == "a" and run.href.startswith("/")]


@dataclass(frozen=True)
class MenuPage:
    path: str
    heading: str
    posts: tuple[int, ...]           # post numbers listed, in order
    series: tuple[str, ...]          # the paginated series this page belongs to
    position: int                    # its index in series


def _all_blocks(blocks: tuple[Block, ...]) -> list[Block]:
    found: list[Block] = []
    for block in blocks:
        found.append(block)
        found.extend(_all_blocks(block.inner))
    return found


# --- the site ---------------------------------------------------------------

class BlogSite:
    """A generated blog; deterministic: a seed always gives the same bytes."""

    POST_URL_REGEX = POST_URL_REGEX
    EXTRACT_OPTIONS = EXTRACT_OPTIONS

    def __init__(self, seed: int = 2026, content_pages: int = 800, menu_pages: int = 200):
        if content_pages < 0 or menu_pages < 1:
            raise ValueError("a blog needs content_pages >= 0 and menu_pages >= 1 (the home page)")
        self.seed = seed
        layout = _Layout(seed, content_pages, menu_pages)
        self._posts: dict[str, Post] = {post.path: post for post in layout.posts}
        self._by_number = {post.number: post for post in layout.posts}
        self._menus: dict[str, MenuPage] = {menu.path: menu for menu in layout.menus}
        self._months = layout.month_paths

    def respond(self, path_and_query: str, host: str) -> Response:
        """Answer a GET for a request target; host is the Host header value."""
        target = canonical_target(path_and_query)
        if target == "/robots.txt":
            return Response(200, {"Content-Type": "text/plain; charset=utf-8"}, _ROBOTS.encode())
        if target in self._posts or target in self._menus:
            return Response(200, {"Content-Type": _HTML}, self._render(target, host))
        return Response(404, {"Content-Type": _HTML},
                        b"<!DOCTYPE html>\n<title>Not found</title><h1>Not found</h1>\n")

    def robots_txt(self) -> str:
        return _ROBOTS

    def posts(self) -> Mapping[str, tuple[str, str]]:
        """path -> (title, post text): what title=h1.post-title and post=div.post-body
        without div.ad must extract, each as one string (see the module docstring)."""
        return MappingProxyType({path: (post.title_text, post.body_text)
                                 for path, post in self._posts.items()})

    def post_paths(self) -> list[str]:
        return list(self._posts)

    def menu_paths(self) -> list[str]:
        return list(self._menus)

    def paths(self) -> list[str]:
        """Every page answered 200 text/html: menus first, then posts oldest first."""
        return self.menu_paths() + self.post_paths()

    def links(self, path: str) -> list[str]:
        """The in-site paths the page at path links to (canonical, in document order, distinct)."""
        if path in self._posts:
            post = self._posts[path]
            category = [_category_path(post.category)] if post.category else []
            own = post.body_links() + list(post.related) + category
        elif path in self._menus:
            menu = self._menus[path]
            own = [self._by_number[n].path for n in menu.posts] + _pagination(menu.series, menu.position)
        else:
            return []
        return list(dict.fromkeys(own + self._sidebar_links()))

    def levels(self) -> dict[str, int]:
        """path -> its shortest click distance from "/" (the level a BFS crawl gives it)."""
        level = {"/": 0}
        frontier = ["/"]
        while frontier:
            following = []
            for path in frontier:
                for target in self.links(path):
                    if target not in level:
                        level[target] = level[path] + 1
                        following.append(target)
            frontier = following
        return level

    def max_level(self) -> int:
        """The --max-depth a crawl from "/" needs to reach every page."""
        return max(self.levels().values())

    # --- rendering ----------------------------------------------------------

    def _sidebar_links(self) -> list[str]:
        return ["/"] + [_category_path(c) for c in self._categories()] + list(self._months)

    def _categories(self) -> list[str]:
        return [c for c in CATEGORIES if _category_path(c) in self._menus]

    @functools.lru_cache(maxsize=4096)
    def _render(self, path: str, host: str) -> bytes:
        if path in self._posts:
            post = self._posts[path]
            main, title = _post_main(post, host, self._posts), post.title_text
        else:
            menu = self._menus[path]
            main, title = _menu_main(menu, [self._by_number[n] for n in menu.posts], host), menu.heading
        sidebar = _sidebar(self._categories(), self._months, host)
        return _page(title, main, sidebar, host).encode("utf-8")


# --- layout: which pages exist ------------------------------------------------

class _Layout:
    def __init__(self, seed: int, content_pages: int, menu_pages: int):
        self.rng = random.Random(f"blog:{seed}")
        listing = max(1, 2 * menu_pages // 5)
        category_pages = min(2 * menu_pages // 5, menu_pages - listing)
        months = menu_pages - listing - category_pages
        self.categories = CATEGORIES[:min(len(CATEGORIES), category_pages)]
        self.month_keys = [_month_back(i) for i in range(max(months, 1))]
        self.posts = self._posts(content_pages)
        self.month_paths = tuple(f"/archive/{y:04d}/{m:02d}/" for y, m in self.month_keys[:months])
        newest_first = tuple(post.number for post in reversed(self.posts))
        self.menus = (self._series(["/"] + [f"/page/{k}/" for k in range(2, listing + 1)],
                                   "Latest posts", newest_first)
                      + self._category_menus(category_pages, newest_first)
                      + self._month_menus(newest_first))

    def _posts(self, count: int) -> list[Post]:
        # Post i (0 = oldest) falls in month chunk j, so every month has posts.
        months = len(self.month_keys)
        deck = [self.categories[i % len(self.categories)] if self.categories else ""
                for i in range(count)]
        self.rng.shuffle(deck)
        plans = []
        for i in range(count):
            year, month = self.month_keys[months - 1 - (i * months // max(count, 1))]
            plans.append((i + 1, year, month, deck[i]))
        paths = {number: _post_path(self.rng, number, year, month) for number, year, month, _ in plans}
        return [_make_post(number, paths, category, self.rng.randrange(1 << 30))
                for number, year, month, category in plans]

    def _series(self, paths: list[str], heading: str, posts: tuple[int, ...]) -> tuple[MenuPage, ...]:
        chunks = [posts[k * len(posts) // len(paths):(k + 1) * len(posts) // len(paths)]
                  for k in range(len(paths))]
        return tuple(MenuPage(path, heading if k == 0 else f"{heading}, page {k + 1}",
                              chunk, tuple(paths), k)
                     for k, (path, chunk) in enumerate(zip(paths, chunks)))

    def _category_menus(self, pages: int, newest_first: tuple[int, ...]) -> tuple[MenuPage, ...]:
        menus: tuple[MenuPage, ...] = ()
        by_number = {post.number: post for post in self.posts}
        for index, category in enumerate(self.categories):
            count = pages // len(self.categories) + (index < pages % len(self.categories))
            first = _category_path(category)
            paths = [first] + [f"{first}page/{k}/" for k in range(2, count + 1)]
            mine = tuple(n for n in newest_first if by_number[n].category == category)
            menus += self._series(paths, f"Category: {category.title()}", mine)
        return menus

    def _month_menus(self, newest_first: tuple[int, ...]) -> tuple[MenuPage, ...]:
        by_number = {post.number: post for post in self.posts}
        menus: tuple[MenuPage, ...] = ()
        for path in self.month_paths:
            year, month = int(path.split("/")[2]), int(path.split("/")[3])
            mine = tuple(n for n in newest_first
                         if (by_number[n].date.year, by_number[n].date.month) == (year, month))
            name = datetime.date(year, month, 1).strftime("%B %Y")
            menus += (MenuPage(path, f"Archive: {name}", mine, (path,), 0),)
        return menus


def _month_back(i: int) -> tuple[int, int]:
    year, month = _LATEST_MONTH
    index = year * 12 + (month - 1) - i
    return index // 12, index % 12 + 1


def _category_path(category: str) -> str:
    return f"/category/{category}/"


def _post_path(rng: random.Random, number: int, year: int, month: int) -> str:
    day = rng.randint(1, 28)
    slug = "-".join(rng.sample(_WORDS[:60], 3))
    return f"/{year:04d}/{month:02d}/{day:02d}/{slug}-{number}.html"


def _pagination(series: tuple[str, ...], position: int) -> list[str]:
    """The first and last page, k±1, k±2 and every 5th: a few clicks reach any page."""
    wanted = {0, len(series) - 1} | {position + d for d in (-2, -1, 1, 2)}
    wanted |= set(range(4, len(series), 5))
    return [series[k] for k in sorted(wanted) if 0 <= k < len(series) and k != position]


# --- generated text -------------------------------------------------------------

def _make_post(number: int, paths: dict[int, str], category: str, seed: int) -> Post:
    rng = random.Random(seed)
    path = paths[number]
    year, month, day = (int(part) for part in path.split("/")[1:4])
    blocks = tuple(_block(rng, paths, number) for _ in range(rng.randint(4, 9)))
    if rng.random() < 0.3:  # the ad may hide inside a nested section
        blocks += (Block("section", inner=(_paragraph(rng, paths, number), _paragraph(rng, paths, number))),)
    ads = ("", "", "between", "nested") if blocks[-1].kind == "section" else ("", "between")
    others = [n for n in paths if n != number]
    return Post(
        number=number, path=path, date=datetime.date(year, month, day), category=category,
        title=_title(rng, number),
        title_classes=rng.choice(("post-title", "post-title", "post-title entry-title", "entry-title post-title")),
        body_classes=rng.choice(("post-body", "post-body", "post-body e-content")),
        blocks=blocks,
        ad=rng.choice(ads), ad_after=rng.randrange(len(blocks)),
        related=tuple(paths[n] for n in rng.sample(others, min(3, len(others)))),
        comments=tuple((rng.choice(("Ana", "Bo", "Chen", "Dita", "Émile")), _sentence(rng))
                       for _ in range(rng.randint(0, 4))),
        entity_style=rng.choice(("raw", "named", "numeric")),
    )


def _title(rng: random.Random, number: int) -> tuple[Run, ...]:
    words = [rng.choice(_WORDS[:60]) for _ in range(rng.randint(2, 5))]
    if rng.random() < 0.4:
        words.insert(rng.randrange(len(words) + 1), rng.choice(_RICH_WORDS))
    runs: list[Run] = []
    if rng.random() < 0.2:
        runs += [Run(f"Part {rng.randint(1, 9)}:", "span"), Run(" ")]
    emphasised = rng.randrange(len(words)) if rng.random() < 0.3 else None
    for index, word in enumerate(words):
        if index:
            runs.append(Run(" "))
        runs.append(Run(word.capitalize() if index == 0 else word, "em" if index == emphasised else ""))
    runs.append(Run(f" (no. {number})"))
    return tuple(runs)


def _sentence(rng: random.Random) -> str:
    words = [rng.choice(_WORDS) for _ in range(rng.randint(5, 12))]
    if rng.random() < 0.35:
        words.insert(rng.randrange(len(words) + 1), rng.choice(_RICH_WORDS))
    return " ".join(words).capitalize() + rng.choice((".", ".", ".", "!", "?", "…"))


def _runs(rng: random.Random, paths: dict[int, str], number: int, sentences: int) -> tuple[Run, ...]:
    """Sentences as runs: some words strong/em/code/linked, some split by a tag."""
    text = " ".join(_sentence(rng) for _ in range(sentences))
    runs: list[Run] = []
    for index, word in enumerate(text.split(" ")):
        space = " " if index else ""
        roll = rng.random()
        if roll < 0.04:
            runs += [Run(space), Run(word, rng.choice(("strong", "em", "code")))]
        elif roll < 0.06 and len(word) > 3:  # "<em>Hel</em>lo": one word, two elements
            runs += [Run(space), Run(word[:2], "em"), Run(word[2:])]
        elif roll < 0.08:
            runs += [Run(space), Run(word, "a", _link_target(rng, paths, number))]
        else:
            runs.append(Run(space + word))
    return _merged(runs)


def _link_target(rng: random.Random, paths: dict[int, str], number: int) -> str:
    others = [n for n in (number - 1, number + 1, 1) if n in paths and n != number]
    if others and rng.random() < 0.7:
        return paths[rng.choice(others)]
    return f"https://example.invalid/ref/{rng.randint(1, 999)}"


def _merged(runs: list[Run]) -> tuple[Run, ...]:
    merged: list[Run] = []
    for run in runs:
        if merged and not run.tag and not merged[-1].tag:
            merged[-1] = Run(merged[-1].text + run.text)
        elif run.text:
            merged.append(run)
    return tuple(merged)


def _paragraph(rng: random.Random, paths: dict[int, str], number: int) -> Block:
    return Block("p", _runs(rng, paths, number, rng.randint(1, 4)))


def _block(rng: random.Random, paths: dict[int, str], number: int) -> Block:
    kind = rng.choices(("p", "h2", "ul", "blockquote", "pre", "table", "figure"),
                       (10, 2, 2, 1, 1, 1, 1))[0]
    if kind == "p":
        return _paragraph(rng, paths, number)
    if kind == "h2":
        return Block("h2", (Run(_sentence(rng).rstrip(".!?…")),))
    if kind == "ul":
        return Block("ul", items=tuple(_sentence(rng) for _ in range(rng.randint(2, 5))))
    if kind == "blockquote":
        return Block("blockquote", _runs(rng, paths, number, 2))
    if kind == "pre":
        return Block("pre", (Run(f"total = price * {rng.randint(2, 9)}  # {rng.choice(_RICH_WORDS)}\n"
                                 f"if total > 10 and total < 99:\n    print(total)"),))
    if kind == "table":
        columns = rng.randint(2, 3)
        return Block("table", items=tuple(rng.choice(_WORDS) for _ in range(columns * rng.randint(2, 4))),
                     columns=columns)
    return Block("figure", (Run(_sentence(rng)),))


# --- HTML ---------------------------------------------------------------------------

def _escape(text: str, style: str) -> str:
    escaped = "".join(_escape_char(ch, style) for ch in text)
    # A no-break space before units and numbers, as typesetters write them.
    return escaped.replace(" km", "&nbsp;km").replace(" °C", "&nbsp;°C")


def _escape_char(ch: str, style: str) -> str:
    if ch in "&<>" or (style == "named" and ch in _NAMED):
        return _NAMED[ch]
    if style == "numeric" and ord(ch) > 127:
        return f"&#{ord(ch)};"
    return ch


def _href(path: str, host: str, full: bool = False) -> str:
    return html.escape(f"http://{host}{path}" if full else path)


def _run_html(run: Run, style: str, host: str) -> str:
    text = _escape(run.text, style)
    if run.tag == "a":
        # Some links are spelled as full URLs; the target decides, so a page
        # always renders the same.
        return f'<a href="{_href(run.href, host, run.href.endswith("0.html"))}">{text}</a>'
    if run.tag == "span":
        return f'<span class="series">{text}</span>'
    return f"<{run.tag}>{text}</{run.tag}>" if run.tag else text


def _runs_html(runs: tuple[Run, ...], style: str, host: str) -> str:
    return "".join(_run_html(run, style, host) for run in runs)


def _block_html(block: Block, style: str, host: str) -> str:
    inline = _runs_html(block.runs, style, host)
    if block.kind in ("p", "h2", "pre"):
        return f"<{block.kind}>{inline}</{block.kind}>"
    if block.kind == "blockquote":
        return f"<blockquote>\n  <p>{inline}</p>\n</blockquote>"
    if block.kind == "ul":
        return "<ul>\n" + "".join(f"  <li>{_escape(item, style)}</li>\n" for item in block.items) + "</ul>"
    if block.kind == "table":
        rows = [block.items[k:k + block.columns] for k in range(0, len(block.items), block.columns)]
        cells = ["<tr>" + "".join(f"<td>{_escape(cell, style)}</td>" for cell in row) + "</tr>" for row in rows]
        return "<table class=\"data\">\n" + "\n".join(cells) + "\n</table>"
    if block.kind == "figure":
        return (f'<figure><img src="/images/figure.jpg" alt="A picture of {_escape(block.runs[0].text[:20], style)}">'
                f"\n  <figcaption>{inline}</figcaption></figure>")
    return _section_html(block, style, host, ad=False)


def _section_html(block: Block, style: str, host: str, ad: bool) -> str:
    children = [_block_html(inner, style, host) for inner in block.inner]
    if ad:
        children.insert(1, _AD)
    return "<div class=\"section\">\n" + "\n".join(children) + "\n</div>"


_AD = ('<div class="ad" data-slot="inline">Advertisement: <a href="https://ads.example.invalid/click?id=7">'
       'Try Crunchy Granola&trade; today</a><script>loadAd("inline")</script></div>')


def _body_html(post: Post, host: str) -> str:
    style = post.entity_style
    parts = [_block_html(block, style, host) for block in post.blocks]
    if post.ad == "nested":
        parts[-1] = _section_html(post.blocks[-1], style, host, ad=True)
    elif post.ad == "between":
        parts.insert(post.ad_after + 1, _AD)
    if post.number % 3 == 0:
        parts.insert(1, '<script>window.embeds = (window.embeds || 0) + 1;</script>')
    if post.number % 4 == 0:
        parts.insert(len(parts) // 2, "<!-- more -->")
    return "\n".join(parts)


def _post_main(post: Post, host: str, posts: dict[str, Post]) -> str:
    style = post.entity_style
    title = _runs_html(post.title, style, host)
    if post.number % 5 == 0:
        title += "<!-- draft title -->"
    related = "".join(f'  <li><a href="{_href(path, host)}">{_escape(posts[path].title_text, style)}</a></li>\n'
                      for path in post.related)
    comments = "".join(
        f'<div class="comment"><p class="comment-author">{_escape(author, style)}</p>'
        f'<div class="comment-body"><p>{_escape(text, style)}</p></div></div>\n'
        for author, text in post.comments)
    return (
        f'<article class="post" id="post-{post.number}">\n'
        f'<header class="entry-header">\n<h1 class="{post.title_classes}">\n    {title}\n</h1>\n'
        f'<p class="meta">Posted on <time datetime="{post.date.isoformat()}">'
        f'{post.date.day} {post.date.strftime("%B %Y")}</time>{_category_link(post.category, host)}</p>\n'
        f'</header>\n'
        f'<div class="{post.body_classes}">\n{_body_html(post, host)}\n</div>\n'
        f'<footer class="entry-footer"><a class="share" href="https://share.example.invalid/?u='
        f'{post.number}">Share</a></footer>\n</article>\n'
        f'<section class="related"><h2>Related posts</h2>\n<ul>\n{related}</ul></section>\n'
        f'<section class="comments"><h2>{len(post.comments)} comments</h2>\n{comments}</section>\n'
    )


def _category_link(category: str, host: str) -> str:
    if not category:
        return ""
    return f' in <a href="{_href(_category_path(category), host)}">{category.title()}</a>'


def _menu_main(menu: MenuPage, posts: list[Post], host: str) -> str:
    excerpts = "".join(
        f'<article class="excerpt"><h2 class="post-title"><a href="{_href(post.path, host, k % 4 == 1)}">'
        f'{_escape(post.title_text, "raw")}</a></h2>\n<p class="meta">{post.date.isoformat()}</p>\n'
        f'<div class="summary"><p>{_escape(" ".join(post.body_text.split()[:25]), "raw")}…</p></div>'
        f'<a class="more" href="{_href(post.path, host)}">Read more</a></article>\n'
        for k, post in enumerate(posts))
    pages = "".join(f'<a href="{_href(path, host)}">{menu.series.index(path) + 1}</a> '
                    for path in _pagination(menu.series, menu.position))
    nothing = "" if posts else "<p>No posts yet.</p>\n"
    return (f'<h1 class="page-title">{html.escape(menu.heading)}</h1>\n{excerpts}{nothing}'
            f'<nav class="pagination">{pages}</nav>\n')


def _sidebar(categories: list[str], months: tuple[str, ...], host: str) -> str:
    category_links = "".join(f'<li><a href="{_href(_category_path(c), host)}">{c.title()}</a></li>'
                             for c in categories)
    month_links = "".join(f'<li><a href="{_href(path, host)}">{path[9:16]}</a></li>' for path in months)
    return (f'<aside class="sidebar">\n<div class="widget"><h3>Categories</h3><ul>{category_links}</ul></div>\n'
            f'<div class="widget ad">Advertisement: Visit our sponsor</div>\n'
            f'<div class="widget"><h3>Archive</h3><ul>{month_links}</ul></div>\n</aside>\n')


def _page(title: str, main: str, sidebar: str, host: str) -> str:
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        f"<title>{html.escape(title)} · {SITE_NAME}</title>\n"
        "<style>.ad{background:#ffd}.sidebar{float:right}</style>\n"
        "<script>window.dataLayer = [];</script>\n</head>\n<body>\n"
        f'<header class="site-header"><h1 class="site-title"><a href="{_href("/", host)}">{SITE_NAME}</a></h1>'
        '<nav class="menu"><a href="/">Home</a></nav></header>\n'
        f'<div class="layout">\n<main>\n{main}</main>\n{sidebar}</div>\n'
        f'<footer class="site-footer"><p>&copy; 2026 {SITE_NAME}. Made with care.</p></footer>\n'
        "</body>\n</html>\n"
    )

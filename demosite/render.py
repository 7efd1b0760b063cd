"""Turning a page of the content model into the HTML bytes the server sends.

Owns the page template and the generated prose (paragraphs, headings, a list,
a table, a date line, an advertisement). Text comes from a random.Random
seeded by the site seed and the page path (or, for a planted copy, its
original's path: Page.text_of), so a page renders to the same bytes every
time; only full-url links depend on the request, through the Host header.
"""
from __future__ import annotations

import functools
import html
import random

from demosite.links import Link
from demosite.model import Page

_WORDS = """
    crawler breadth first level queue frontier harbour market river station
    library museum garden festival concert lecture season match league coach
    planet orbit telescope particle energy cell protein forest climate ocean
    mountain valley village city bridge tower street square train ferry road
    painter canvas colour museum gallery melody rhythm film director actor
    stage audience ticket review report council budget policy election vote
    trade export price growth company worker union school teacher student
    research study result method sample measure theory model signal noise
    morning evening summer winter spring autumn weather rain wind snow storm
    quiet bright early late simple careful steady rapid gentle local public
    open new old small large famous rare common useful strange modern ancient
    and the of in on with for from after before during about between under
    builds finds shows opens closes moves grows changes reads writes visits
""".split()


_LANGUAGES = {"gbk": "zh-CN", "big5": "zh-TW", "shift_jis": "ja"}


def render(page: Page, host: str, seed: int) -> bytes:
    """The page's HTML, encoded with its charset; host fills full-url links."""
    return _render(page, host, seed)


@functools.lru_cache(maxsize=2048)
def _render(page: Page, host: str, seed: int) -> bytes:
    rng = random.Random(f"{seed}:{page.text_of or page.path}:text")
    parts = [
        _head(page),
        "<body>\n<header>\n<a id=\"top\"></a>"
        "<img src=\"/images/logo.png\" alt=\"Demo Daily\" width=\"120\" height=\"40\">\n",
        _menu(page.links, "menu", host),
        "</header>\n",
        _crumbs(page, host),
        "<main>\n<article>\n",
        f"<h1>{html.escape(page.title)}</h1>\n",
        f"<p class=\"dateline\">{html.escape(page.dateline)}</p>\n" if page.dateline else "",
        _prose(page, rng),
        _link_list(page.links, "body", host, "Read on"),
        "</article>\n",
        _link_list(page.links, "related", host, "Related articles", element="aside"),
        _map(page.links, host),
        _iframes(page.links, host),
        "</main>\n",
        _footer(page.links, host),
        "</body>\n</html>\n",
    ]
    return "".join(parts).encode(page.charset)


def _head(page: Page) -> str:
    meta = {
        "charset": f"<meta charset=\"{page.charset}\">\n",
        "http-equiv": "<meta http-equiv=\"Content-Type\" "
                      f"content=\"text/html; charset={page.charset}\">\n",
        "": "",
    }[page.charset_meta]
    base = f"<base href=\"{html.escape(page.base)}\">\n" if page.base else ""
    # A print view differs from its page in styling only, never in text.
    styles = _PRINT_STYLE if page.print_view else ""
    return (
        f"<!DOCTYPE html>\n<html lang=\"{_LANGUAGES.get(page.charset, 'en')}\">\n<head>\n"
        f"{meta}<title>{html.escape(page.title)}</title>\n{base}"
        "<meta name=\"viewport\" content=\"width=device-width\">\n"
        f"<link rel=\"stylesheet\" href=\"/static/site.css\">\n{styles}</head>\n"
    )


_PRINT_STYLE = "<style media=\"print\">nav, footer, aside { display: none; }</style>\n"


def _anchor(link: Link, host: str, quote: str = "\"") -> str:
    href = html.escape(link.href_for(host), quote=True)
    return f"<a href={quote}{href}{quote}>{html.escape(link.label)}</a>"


def _of_role(links: tuple[Link, ...], role: str) -> list[Link]:
    return [link for link in links if link.role == role]


def _menu(links: tuple[Link, ...], role: str, host: str) -> str:
    items = "".join(f"<li>{_anchor(link, host)}</li>\n" for link in _of_role(links, role))
    return f"<nav class=\"menu\">\n<ul>\n{items}</ul>\n</nav>\n"


def _crumbs(page: Page, host: str) -> str:
    trail = [_anchor(link, host) for link in _of_role(page.links, "crumb")]
    trail.append(html.escape(page.title))
    return "<nav class=\"breadcrumb\">" + " &raquo; ".join(trail) + "</nav>\n"


def _link_list(links: tuple[Link, ...], role: str, host: str, heading: str,
               element: str = "section") -> str:
    chosen = _of_role(links, role)
    if not chosen:
        return ""
    items = "".join(f"<li>{_anchor(link, host)}</li>\n" for link in chosen)
    return f"<{element} class=\"{role}\">\n<h2>{heading}</h2>\n<ul>\n{items}</ul>\n</{element}>\n"


def _map(links: tuple[Link, ...], host: str) -> str:
    areas = _of_role(links, "area")
    if not areas:
        return ""
    shapes = "".join(
        f"<area shape=\"rect\" coords=\"{60 * i},0,{60 * i + 59},40\" "
        f"href=\"{html.escape(link.href_for(host))}\" alt=\"{html.escape(link.label)}\">\n"
        for i, link in enumerate(areas)
    )
    return ("<figure>\n<img src=\"/images/logo.png\" alt=\"Regions\" usemap=\"#regions\">\n"
            f"<map name=\"regions\">\n{shapes}</map>\n</figure>\n")


def _iframes(links: tuple[Link, ...], host: str) -> str:
    return "".join(
        f"<iframe src=\"{html.escape(link.href_for(host))}\" title=\"{html.escape(link.label)}\""
        " width=\"300\" height=\"120\"></iframe>\n"
        for link in _of_role(links, "iframe")
    )


def _footer(links: tuple[Link, ...], host: str) -> str:
    # Single-quoted attributes on purpose: link extractors must accept both.
    items = " | ".join(_anchor(link, host, quote="'") for link in _of_role(links, "footer"))
    return f"<footer>\n<p>{items}</p>\n<p>&copy; Demo Daily</p>\n</footer>\n"


def _prose(page: Page, rng: random.Random) -> str:
    blocks = []
    if page.sentence:
        blocks.append(f"<p class=\"lead\">{html.escape(page.sentence)}</p>\n")
    for index in range(page.paragraphs):
        if index and index % 3 == 0:
            blocks.append(f"<h2>{_sentence(rng, 3, 6).rstrip('.')}</h2>\n")
        blocks.append(f"<p>{_paragraph(rng)}</p>\n")
        if index == 0 and page.advert:
            blocks.append(f"<aside class=\"advert\"><p>{html.escape(page.advert)}</p></aside>\n")
    if page.paragraphs >= 3:
        blocks.append(_word_list(rng))
    if page.table:
        blocks.append(_table(rng))
    return "".join(blocks)


def _sentence(rng: random.Random, shortest: int, longest: int) -> str:
    words = rng.choices(_WORDS, k=rng.randint(shortest, longest))
    return " ".join(words).capitalize() + "."


def _paragraph(rng: random.Random) -> str:
    return " ".join(_sentence(rng, 6, 14) for _ in range(rng.randint(4, 7)))


def _word_list(rng: random.Random) -> str:
    items = "".join(f"<li>{_sentence(rng, 2, 5)}</li>\n" for _ in range(rng.randint(3, 6)))
    return f"<ul class=\"facts\">\n{items}</ul>\n"


def _table(rng: random.Random) -> str:
    rows = "".join(
        f"<tr><td>{rng.choice(_WORDS).title()}</td><td>{rng.randint(1, 999)}</td>"
        f"<td>{rng.randint(0, 100)}%</td></tr>\n"
        for _ in range(rng.randint(3, 7))
    )
    return ("<table>\n<caption>Figures</caption>\n"
            "<tr><th>Item</th><th>Count</th><th>Share</th></tr>\n"
            f"{rows}</table>\n")

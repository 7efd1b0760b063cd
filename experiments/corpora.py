"""URL corpora for the dedup experiment: the streams of URLs a URL-seen filter is fed.

A corpus is a stream, not a set: duplicates stay in it, in the order a
crawler would meet them, because answering "seen before?" for a duplicate is
half of what the filter does.  Three sources, named by a spec string:

- ``generated``: a seeded generator of realistic URLs (several hosts, news
  dates, slugs, product pages with query strings, listings, searches) with a
  chosen duplicate ratio.  A chosen share of the new URLs are "trap twins"
  of an earlier URL -- digits of its id permuted, two slug words swapped, or
  two query parameters swapped -- so they have the same ASCII sum (and
  length) but are different URLs, as real sites produce them;
- ``crawl:DIR``: the URLs of a ``crawler crawl`` output directory: the
  level-0 URLs of ``index.csv`` (the seeds, which the crawler marks seen
  first), then every ``to_url`` of ``edges.csv`` in the order written
  (discovery order), duplicates included;
- ``file:PATH``: a text file of URLs, one per line (blank lines and lines
  starting with "#" are skipped).

Every corpus is deterministic: the same spec, size and seed give the same
stream in every process (no set or dict is iterated to build it).
"""
from __future__ import annotations

import csv
import random
import re
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Corpus", "crawl_urls", "file_urls", "generate_urls", "load_corpus", "trap_twin"]

DEFAULT_SEED = 2026
DEFAULT_DUPLICATE_RATIO = 0.25
DEFAULT_TRAP_RATIO = 0.2


@dataclass(frozen=True)
class Corpus:
    """A stream of URLs and what it is.

    ``spec`` is the source as given ("generated", "crawl:DIR", "file:PATH");
    ``description`` says source, size and seed in one line for the outputs.
    """
    spec: str
    urls: tuple[str, ...]
    seed: int | None
    description: str


def load_corpus(spec: str, size: int, *, seed: int = DEFAULT_SEED,
                duplicate_ratio: float = DEFAULT_DUPLICATE_RATIO,
                trap_ratio: float = DEFAULT_TRAP_RATIO) -> Corpus:
    """The corpus named by spec, cut to at most ``size`` URLs.

    A generated corpus has exactly ``size`` URLs; a crawl or file corpus has
    as many as its source holds, up to ``size``.  ValueError says what is
    wrong with a bad spec or an unreadable source.
    """
    if size < 1:
        raise ValueError(f"corpus size must be at least 1 URL, got {size}")
    kind, _, argument = spec.partition(":")
    if spec == "generated":
        urls = generate_urls(size, seed=seed, duplicate_ratio=duplicate_ratio,
                             trap_ratio=trap_ratio)
        return Corpus(spec, tuple(urls), seed,
                      f"generated: {size:,} URLs, seed {seed}, duplicate ratio "
                      f"{duplicate_ratio:g}, trap ratio {trap_ratio:g}")
    if kind == "crawl" and argument:
        urls = crawl_urls(Path(argument))[:size]
        return Corpus(spec, tuple(urls), None, f"crawl {argument}: {len(urls):,} URLs "
                                              f"(seeds, then edges.csv in discovery order)")
    if kind == "file" and argument:
        urls = file_urls(Path(argument))[:size]
        return Corpus(spec, tuple(urls), None, f"file {argument}: {len(urls):,} URLs")
    raise ValueError(f"unknown corpus {spec!r}; use generated, crawl:DIR or file:PATH")


# -- crawl directories and files ----------------------------------------------------

def crawl_urls(directory: Path) -> list[str]:
    """Seeds (level-0 rows of index.csv, if present) then edges.csv's to_url column, in file order."""
    edges = directory / "edges.csv"
    if not edges.is_file():
        raise ValueError(f"{directory} is not a crawl directory: it has no edges.csv")
    urls = _seed_urls(directory / "index.csv")
    with edges.open(newline="", encoding="utf-8", errors="replace") as file:
        urls += [row["to_url"] for row in csv.DictReader(file) if row.get("to_url")]
    return urls


def _seed_urls(index: Path) -> list[str]:
    if not index.is_file():
        return []
    with index.open(newline="", encoding="utf-8", errors="replace") as file:
        return [row["url"] for row in csv.DictReader(file) if row.get("level") == "0"]


def file_urls(path: Path) -> list[str]:
    """One URL per line; blank lines and "#" comments skipped; undecodable bytes become U+FFFD."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as error:
        raise ValueError(f"cannot read URL file {path}: {error.strerror}") from None
    return [line.strip() for line in text.splitlines()
            if line.strip() and not line.lstrip().startswith("#")]


# -- the generator ---------------------------------------------------------------

_HOSTS = (
    "https://www.dailyexample.com", "https://news.example.org", "http://www.example-times.net",
    "https://shop.example.com", "https://www.example-store.co.uk", "https://blog.example.io",
    "http://forum.example.edu", "https://www.example.gov", "https://media.example.cn",
    "http://www.example.de", "https://example.com.au", "https://sports.example.org",
)
_SECTIONS = (
    "world", "politics", "business", "tech", "science", "health", "sports", "arts",
    "travel", "food", "opinion", "education", "climate", "local", "markets", "culture",
)
_WORDS = (
    "city", "council", "votes", "new", "plan", "for", "river", "park", "school", "budget",
    "rises", "falls", "after", "storm", "hits", "coast", "team", "wins", "final", "league",
    "market", "shares", "record", "high", "low", "bank", "rates", "study", "finds", "link",
    "between", "sleep", "and", "memory", "first", "look", "at", "the", "festival", "music",
    "review", "film", "star", "returns", "home", "election", "results", "live", "updates",
    "heat", "wave", "warning", "issued", "across", "north", "south", "east", "west", "rail",
    "strike", "ends", "talks", "deal", "signed", "over", "water", "prices", "energy", "bill",
    "cuts", "jobs", "report", "says", "young", "people", "online", "safety", "rules", "change",
    "court", "ruling", "on", "data", "privacy", "space", "mission", "launch", "delayed",
    "museum", "opens", "doors", "to", "public", "chef", "shares", "recipe", "winter", "summer",
)
_CATEGORIES = ("shoes", "shirts", "laptops", "phones", "garden", "kitchen", "books", "toys",
               "watches", "bags", "lamps", "chairs")
_COLORS = ("red", "blue", "green", "black", "white", "grey", "navy", "olive")
_SORTS = ("new", "top", "price", "relevance", "date")
_USERS = ("anna", "li_wei", "jsmith", "maria88", "kenji", "olu", "priya", "tom_h", "sofia",
          "dmitri", "amelie", "chen.yu")


def _slug(rng: random.Random) -> str:
    return "-".join(rng.choice(_WORDS) for _ in range(rng.randint(3, 7)))


def _date(rng: random.Random) -> str:
    return f"{rng.randint(2008, 2026)}/{rng.randint(1, 12):02d}/{rng.randint(1, 28):02d}"


def _news(rng: random.Random, host: str) -> str:
    return (f"{host}/{rng.choice(_SECTIONS)}/{_date(rng)}/{_slug(rng)}-"
            f"{rng.randint(10_000, 9_999_999)}.html")


def _product(rng: random.Random, host: str) -> str:
    return (f"{host}/products/{rng.choice(_CATEGORIES)}/{_slug(rng)}?id={rng.randint(100, 999_999)}"
            f"&color={rng.choice(_COLORS)}&size={rng.randint(1, 48)}")


def _blog(rng: random.Random, host: str) -> str:
    return f"{host}/blog/{_date(rng)[:7]}/{_slug(rng)}/"


def _search(rng: random.Random, host: str) -> str:
    return (f"{host}/search?q={rng.choice(_WORDS)}+{rng.choice(_WORDS)}"
            f"&sort={rng.choice(_SORTS)}&page={rng.randint(1, 60)}")


def _listing(rng: random.Random, host: str) -> str:
    section = rng.choice(_SECTIONS)
    if rng.random() < 0.5:
        return f"{host}/{section}/?page={rng.randint(2, 500)}"
    return f"{host}/{section}/page/{rng.randint(2, 500)}/"


def _people(rng: random.Random, host: str) -> str:
    if rng.random() < 0.5:
        return f"{host}/tag/{rng.choice(_WORDS)}-{rng.choice(_WORDS)}"
    return f"{host}/users/{rng.choice(_USERS)}{rng.randint(1, 9999)}/posts?page={rng.randint(1, 40)}"


_TEMPLATES = (_news, _product, _blog, _search, _listing, _people)
_TEMPLATE_WEIGHTS = (35, 15, 15, 10, 10, 15)


def _fresh_url(rng: random.Random) -> str:
    template = rng.choices(_TEMPLATES, _TEMPLATE_WEIGHTS)[0]
    return template(rng, rng.choice(_HOSTS))


_DIGIT_RUN = re.compile(r"\d{3,}")
_SLUG = re.compile(r"[a-z]+(?:-[a-z]+)+")
_QUERY_PAIR = re.compile(r"[^?&=]+=[^&]*")


def trap_twin(rng: random.Random, url: str) -> str | None:
    """A different URL with the same bytes in another order, or None when rng's choice finds none.

    Three ways, as real sites produce them: permute the digits of a number
    (story-4371.html, story-4317.html), swap two words of a slug, swap two
    query parameters (?id=5&color=red, ?color=red&id=5).
    """
    way = rng.randrange(3)
    if way == 0:
        runs = _DIGIT_RUN.findall(url)
        if runs:
            run = rng.choice(runs)
            digits = list(run)
            rng.shuffle(digits)
            return _differs(url, url.replace(run, "".join(digits), 1))
    elif way == 1:
        slugs = _SLUG.findall(url)
        if slugs:
            slug = max(slugs, key=len)
            words = slug.split("-")
            i, j = rng.sample(range(len(words)), 2)
            words[i], words[j] = words[j], words[i]
            return _differs(url, url.replace(slug, "-".join(words), 1))
    else:
        head, mark, query = url.partition("?")
        pairs = _QUERY_PAIR.findall(query)
        if mark and len(pairs) >= 2 and "&".join(pairs) == query:
            i, j = rng.sample(range(len(pairs)), 2)
            pairs[i], pairs[j] = pairs[j], pairs[i]
            return _differs(url, f"{head}?{'&'.join(pairs)}")
    return None


def _differs(url: str, twin: str) -> str | None:
    return twin if twin != url else None


def generate_urls(count: int, *, seed: int = DEFAULT_SEED,
                  duplicate_ratio: float = DEFAULT_DUPLICATE_RATIO,
                  trap_ratio: float = DEFAULT_TRAP_RATIO) -> list[str]:
    """A stream of ``count`` URLs; each is a repeat of an earlier one with probability duplicate_ratio.

    A new URL is a trap twin of an earlier new URL with probability
    trap_ratio (when one can be made), otherwise drawn from the templates.
    A repeat is, with even odds, one of the last 1,000 new URLs (menus and
    related links repeat locally) or any earlier one.  The first
    ``count`` URLs of a longer stream with the same arguments are this stream.
    """
    if not 0 <= duplicate_ratio < 1:
        raise ValueError(f"duplicate ratio must be in [0, 1), got {duplicate_ratio}")
    if not 0 <= trap_ratio <= 1:
        raise ValueError(f"trap ratio must be in [0, 1], got {trap_ratio}")
    rng = random.Random(seed)
    known: set[str] = set()
    new_urls: list[str] = []
    stream: list[str] = []
    for _ in range(count):
        if new_urls and rng.random() < duplicate_ratio:
            stream.append(_repeat(rng, new_urls))
            continue
        url = _new_url(rng, new_urls, known, trap_ratio)
        known.add(url)
        new_urls.append(url)
        stream.append(url)
    return stream


def _repeat(rng: random.Random, new_urls: list[str]) -> str:
    if rng.random() < 0.5:
        return new_urls[-rng.randint(1, min(1000, len(new_urls)))]
    return new_urls[rng.randrange(len(new_urls))]


def _new_url(rng: random.Random, new_urls: list[str], known: set[str], trap_ratio: float) -> str:
    if new_urls and rng.random() < trap_ratio:
        twin = trap_twin(rng, new_urls[rng.randrange(len(new_urls))])
        if twin is not None and twin not in known:
            return twin
    while True:
        url = _fresh_url(rng)
        if url not in known:
            return url

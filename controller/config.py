"""CrawlConfig: every setting of one crawl, validated once, passed explicitly.

A CrawlConfig checks itself when it is made (``__post_init__``), whoever
makes it: the command line, a script, or ``--resume`` from the settings a
crawl saved. A setting out of its range is a ConfigError (a ValueError)
whose one-line message names the setting and says what it accepts; the
seeds are normalized as links are, so scope compares like with like.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, fields
from pathlib import Path

from getpage.cookies import load_cookie_file
from getpage.pacing import DEFAULT_MAX_DELAY, DEFAULT_MIN_DELAY
from getpage.headers import is_secret_header, parse_header
from getpage.proxies import missing_password, parse_proxy, without_password
from getpage.tlsbundle import problem as ca_bundle_problem
from textfilter import EXTRACTORS
from urlfilter import SCOPES, SEEN_ALGORITHMS, check_drop_param, normalize
from urllist.orders import NAMES as ORDER_NAMES
from urllist.orders import ORDERS, make_order

VERSION = "0.1.0"
PRODUCT = "bfs-crawler"
ABOUT_URL = "https://pypi.org/project/bfs-crawler/"
DEFAULT_USER_AGENT = f"{PRODUCT}/{VERSION} (+{ABOUT_URL})"

CONTENT_DEDUP_MODES = ("off", "exact", "near")
TEXT_MODES = ("plain", "main")
# Past 8, distinct pages of one site start to count as near duplicates (the
# closest distinct pairs in experiments/compare_near_dup.py are 6-8 bits
# apart), and the near index's keys get so short that a lookup meets a fifth
# of all earlier pages or more (textfilter/duplicates.py).
MAX_SIMHASH_DISTANCE = 8


def default_processes() -> int:
    """One parser process per core but one: the Controller process (fetch threads,
    frontier, seen-set, files) keeps a core busy itself. Measured on 2 cores:
    1 parser process beat 2 in both pages/s and CPU per page."""
    return max(1, (os.cpu_count() or 1) - 1)


class ConfigError(ValueError):
    """A setting CrawlConfig refuses. ``problem`` says what is wrong and what is
    accepted; the message is "field: problem", or the problem alone when it
    already names the setting (``named``, messages of the leaf packages)."""

    def __init__(self, field_name: str, problem: str, *, named: bool = False) -> None:
        super().__init__(problem if named else f"{field_name}: {problem}")
        self.field = field_name
        self.problem = problem
        self.named = named


@dataclass(frozen=True)
class CrawlConfig:
    seeds: tuple[str, ...]            # http(s) URLs, level 0; normalized and deduplicated here
    out: Path                         # output directory (a str is made a Path)
    max_depth: int = 3                # deepest level fetched; 0 = no limit
    max_pages: int = 1000             # URLs fetched at most; 0 = no limit
    max_seconds: float = 0            # wall-clock budget; 0 = no limit
    workers: int = 8                  # fetching threads
    processes: int = field(default_factory=lambda: default_processes())  # parser processes; 0 = parse in the fetch threads
    per_host: int = 1                 # requests in flight per host
    delay: float | str = 1.0          # seconds between two requests to one host, or "auto"
    min_delay: float = DEFAULT_MIN_DELAY  # --delay auto: the interval's floor, seconds
    max_delay: float = DEFAULT_MAX_DELAY  # --delay auto: its ceiling (Crawl-delay wins over it)
    timeout: float = 10.0             # seconds per request (connect and whole body)
    max_bytes: int = 10_000_000       # decoded body cap per page, bytes
    max_redirects: int = 10
    user_agent: str = DEFAULT_USER_AGENT  # NAME/VERSION first (robots.txt matches NAME), see user_agent_problem
    obey_robots: bool = True
    scope: str = "host"               # host | domain | any
    include: tuple[str, ...] = ()     # regexes; a URL must match one (if any given)
    exclude: tuple[str, ...] = ()     # regexes; a URL matching one is skipped
    max_url_length: int = 2048        # characters; longer URLs are skipped (traps); 0 = no limit
    max_path_repeats: int = 2         # a run of path segments repeated back to back more often is a trap; 0 = no limit
    max_pages_per_host: int = 0       # URLs queued per host at most; 0 = no limit
    max_query_variants: int = 100     # distinct query strings per path at most; 0 = no limit
    max_pattern_depth: int = 10       # levels a URL pattern (path, digits as <n>) may reach below its first; 0 = no limit
    dedup: str = "sieve"              # URL-seen algorithm, see urlfilter.SEEN_ALGORITHMS
    seen_cache: int = 16_384          # recently seen URLs answered before the dedup structure; 0 = off
    frontier_ram: int = 256           # MB of queued URLs kept in RAM; past it they wait on disk
    bloom_capacity: int = 1_000_000   # expected URLs, for --dedup bloom
    bloom_error: float = 1e-3         # target false-positive rate, for --dedup bloom
    extractor: str = "lxml"           # page reader: lxml (fast), bs4 (reference), regex (paper's links)
    fold_www: bool = False            # treat www.host and host as one
    drop_query: bool = False          # drop every query string before dedup
    drop_params: tuple[str, ...] = () # query parameter names (globs) dropped before dedup, e.g. utm_*
    retries: int = 2                  # extra attempts after connection errors, timeouts, 429 and 5xx
    retry_backoff: float = 0.5        # seconds; attempt n waits up to backoff * 2**n (full jitter)
    max_retry_after: float = 30.0     # seconds; a longer Retry-After gives up instead of waiting
    allow_private: bool = False       # follow links to private/loopback addresses even from public seeds
    # Proxies and TLS (getpage/proxies.py): a password in ``proxy`` is a
    # secret, never saved (controller/resume.py settings_of keeps the user).
    proxy: str = field(default="", repr=False)  # --proxy URL for every scheme; "" = the environment's
    no_proxy: bool = False            # ignore the proxy variables of the environment
    ca_certificate: str = ""          # PEM file of the CAs to trust; "" = certifi's (or the environment's)
    no_check_certificate: bool = False  # do not verify TLS certificates at all
    content_dedup: str = "exact"      # off | exact | near: which duplicate pages are recognised
    simhash_distance: int = 5         # Hamming distance at most this = near duplicate (see experiments/README.md)
    text_mode: str = "plain"          # plain: all visible text; main: the main content block only
    extract: tuple[str, ...] = ()     # NAME=css:SELECTOR or NAME=xpath:EXPR, see textfilter.extract
    extract_from: str = ""            # regex; extract only from pages whose URL matches ("" = all)
    extract_exclude: tuple[str, ...] = ()  # css:/xpath: selectors of sub-nodes dropped before extracting
    extract_jsonl: bool = False       # also write extracted.jsonl (exact lists of matches)
    warc: bool = False                # also write crawl.warc.gz (request/response records)
    order: str = "bfs"                # crawl order, see urllist.orders (bfs: level by level)
    order_params: tuple[str, ...] = ()  # KEY=VALUE parameters of the order
    topic: str = ""                   # keywords or a sample document, for the focused orders
    sitemaps: bool = False            # read the Sitemap: lines of the seeds' robots.txt
    sitemap_urls: tuple[str, ...] = ()  # sitemaps to read besides (--sitemap URL)
    progress: bool = True             # print level summaries to stderr while crawling
    # What requests show besides the User-Agent (getpage/identity.py). Secrets
    # (http_password, secret headers' values) are never saved: see public_settings.
    headers: tuple[str, ...] = ()     # "Name: value" lines sent with every request (--header)
    cookies: bool = True              # keep the cookies servers set, send them back (False: --no-cookies)
    load_cookies: str = ""            # Netscape cookies.txt file loaded into the jar first ("" = none)
    http_user: str = ""               # HTTP Basic/Digest user for the seeds' origins
    http_password: str = field(default="", repr=False)  # its password; never written to a file
    auth_no_challenge: bool = False   # send Basic credentials unasked (wget's --auth-no-challenge)

    def __post_init__(self) -> None:
        set_field = object.__setattr__   # frozen: the checked values are set once, here
        for name, value in _typed_fields(self):
            set_field(self, name, value)
        for name, rule in RANGES.items():
            _check(name, rule.problem(getattr(self, name)))
        for name, choices in CHOICES.items():
            _check(name, _choice_problem(getattr(self, name), choices))
        _check("delay", _delay_problem(self))
        _check("min_delay", _bounds_problem(self), named=True)
        _check_patterns(self)
        _check_extraction(self)
        _check("user_agent", user_agent_problem(self.user_agent))
        _check("order_params", _order_problem(self))
        _check("topic", _topic_problem(self), named=True)
        _check("sitemap_urls", _sitemap_problem(self), named=True)
        _check("headers", _request_problem(self), named=True)
        _check("proxy", _proxy_problem(self), named=True)
        _check("ca_certificate", _ca_problem(self.ca_certificate))
        set_field(self, "seeds", _normalized_seeds(self))


@dataclass(frozen=True)
class Range:
    """The values a number setting accepts: ``kind`` int, or float (ints too)."""
    kind: type
    low: float
    high: float | None = None
    open_ends: bool = False    # low and high themselves excluded

    def problem(self, value) -> str:
        kinds = (int,) if self.kind is int else (int, float)
        fits = isinstance(value, kinds) and not isinstance(value, bool) and (
            (self.low < value if self.open_ends else self.low <= value) and
            (self.high is None or (value < self.high if self.open_ends else value <= self.high)))
        return "" if fits else f"must be {self}, not {value!r}"

    def __str__(self) -> str:
        what = "an integer" if self.kind is int else "a number"
        if self.high is not None:
            return f"{what} {'strictly ' if self.open_ends else ''}between {self.low} and {self.high}"
        return f"{what} {'>' if self.open_ends else '>='} {self.low}"


# Every number setting and the values it accepts (0 means "no limit" where the
# field's comment says so).
RANGES = {
    "max_depth": Range(int, 0), "max_pages": Range(int, 0), "max_seconds": Range(float, 0),
    "workers": Range(int, 1), "processes": Range(int, 0), "per_host": Range(int, 1),
    "min_delay": Range(float, 0), "max_delay": Range(float, 0), "timeout": Range(float, 0, open_ends=True),
    "max_bytes": Range(int, 1), "max_redirects": Range(int, 0),
    "max_url_length": Range(int, 0), "max_path_repeats": Range(int, 0),
    "max_pages_per_host": Range(int, 0), "max_query_variants": Range(int, 0),
    "max_pattern_depth": Range(int, 0),
    "seen_cache": Range(int, 0), "frontier_ram": Range(int, 1), "bloom_capacity": Range(int, 1),
    "bloom_error": Range(float, 0, 1, open_ends=True), "retries": Range(int, 0),
    "retry_backoff": Range(float, 0), "max_retry_after": Range(float, 0),
    "simhash_distance": Range(int, 0, MAX_SIMHASH_DISTANCE),
}
CHOICES = {
    "scope": SCOPES, "dedup": tuple(sorted(SEEN_ALGORITHMS)),
    "extractor": tuple(sorted(EXTRACTORS)), "content_dedup": CONTENT_DEDUP_MODES,
    "text_mode": TEXT_MODES, "order": ORDER_NAMES,
}


def order_params(config: CrawlConfig) -> dict[str, str]:
    return dict(param.split("=", 1) for param in config.order_params)


def _order_problem(config: CrawlConfig) -> str:
    bad = [param for param in config.order_params if "=" not in param]
    if bad:
        return f"{bad[0]!r} is not KEY=VALUE"
    if config.order == "bfs":
        return "bfs has no parameters" if config.order_params else ""
    try:
        make_order(config.order, order_params(config))
    except ValueError as exc:
        return str(exc)
    return ""


def _topic_problem(config: CrawlConfig) -> str:
    if config.order in ORDERS and ORDERS[config.order].needs_topic and not config.topic.strip():
        return f"--order {config.order} needs a topic: give --topic TEXT or --topic-file FILE"
    if config.topic.strip():
        from textfilter.relevance import Topic   # loaded only for --topic
        try:
            Topic.from_text(config.topic)
        except ValueError as exc:
            return f"--topic: {exc}"
    return ""


# RFC 9110 section 10.1.5: product = token ["/" product-version], both tokens of tchar.
_TOKEN = r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+"
_PRODUCT = re.compile(rf"({_TOKEN})(?:/({_TOKEN}))?")
# RFC 9309 product tokens (what robots.txt groups are matched on) start so.
_ROBOTS_TOKEN_START = re.compile(r"[A-Za-z_-]")


def user_agent_problem(agent: str) -> str:
    """What is wrong with ``agent`` as the crawler's User-Agent; "" if nothing.

    It must begin with a product, NAME or NAME/VERSION of RFC 9110 token
    characters, whose NAME starts as an RFC 9309 product token does (a
    letter, '-' or '_'), because robots.txt groups are matched on it. After
    a space anything printable may follow (comments, more products), except
    that a NAME without a version must be followed by a comment: "a b/1"
    reads as a name with a space in it, of which robots.txt would see "a".
    One line of printable ASCII: a newline would end the header.
    """
    if not agent.strip():
        return f"{agent!r} is empty: give a product such as mybot/1.0 (+https://example.org/bot)"
    odd = next((char for char in agent if not " " <= char <= "~"), None)
    if odd is not None:
        return (f"{agent!r} holds {odd!r}: a User-Agent is one line of printable ASCII "
                f"(no newline, tab or other control character)")
    if agent != agent.strip():
        return f"{agent!r} has leading or trailing spaces (a quoting slip?)"
    product, _, rest = agent.partition(" ")
    match = _PRODUCT.fullmatch(product)
    if match is None:
        return (f"{agent!r} does not begin with a product NAME or NAME/VERSION made of letters, "
                f"digits and !#$%&'*+-.^_`|~ (RFC 9110); put a space before anything else")
    if not _ROBOTS_TOKEN_START.match(product):
        return (f"{agent!r}: the product name must start with a letter, '-' or '_' "
                f"(robots.txt groups are matched on its letters)")
    if rest and match.group(2) is None and not rest.startswith("("):
        return (f"{agent!r} reads as a name with a space, of which robots.txt groups would "
                f"match only {product!r}: write the name as one token ({product}-{rest}) "
                f"or give it a version ({product}/1.0 {rest})")
    return ""


def _check(name: str, problem: str, *, named: bool = False) -> None:
    if problem:
        raise ConfigError(name, problem, named=named)


def _typed_fields(config: CrawlConfig):
    """(name, value) of the fields whose value is converted: out to a Path, lists
    to tuples; raises ConfigError for a value of the wrong type."""
    for spec in fields(config):
        value = getattr(config, spec.name)
        if spec.type == "bool":
            _check(spec.name, "" if isinstance(value, bool) else f"must be True or False, not {value!r}")
        elif spec.type == "str":
            _check(spec.name, "" if isinstance(value, str) else f"must be a string, not {value!r}")
        elif spec.type == "tuple[str, ...]":
            yield spec.name, _strings(spec.name, value)
        elif spec.type == "Path":
            _check(spec.name, "" if isinstance(value, (str, os.PathLike))
                   else f"must be a path (str or pathlib.Path), not {value!r}")
            yield spec.name, Path(value)


def _strings(name: str, values) -> tuple[str, ...]:
    if isinstance(values, (list, tuple)) and all(isinstance(value, str) for value in values):
        return tuple(values)
    raise ConfigError(name, f"must be a list or tuple of strings, not {values!r}")


def _choice_problem(value, choices: tuple[str, ...]) -> str:
    return "" if value in choices else f"{value!r} is not one of {', '.join(choices)}"


AUTO_DELAY = "auto"


def _delay_problem(config: CrawlConfig) -> str:
    """--delay is seconds or "auto"."""
    if config.delay == AUTO_DELAY:
        return ""
    problem = Range(float, 0).problem(config.delay)
    return problem and problem + " (or auto)"


def _bounds_problem(config: CrawlConfig) -> str:
    """--min-delay/--max-delay bound --delay auto only, lower bound first."""
    if config.delay != AUTO_DELAY:
        if (config.min_delay, config.max_delay) != (DEFAULT_MIN_DELAY, DEFAULT_MAX_DELAY):
            return (f"--min-delay and --max-delay bound --delay auto, and this delay is fixed "
                    f"(--delay {config.delay:g}): give --delay auto, or drop them")
    elif config.min_delay > config.max_delay:
        return (f"--min-delay {config.min_delay:g} is above --max-delay {config.max_delay:g}: "
                f"give a smaller --min-delay or a larger --max-delay")
    return ""


def fixed_delay(config: CrawlConfig) -> float:
    """The delay a host starts with: the fixed one, or auto's floor."""
    return config.min_delay if config.delay == AUTO_DELAY else config.delay


def _check_patterns(config: CrawlConfig) -> None:
    """Regular expressions compile; --drop-param globs are names, not name=value."""
    regexes = [("include", p) for p in config.include] + [("exclude", p) for p in config.exclude]
    if config.extract_from:
        regexes.append(("extract_from", config.extract_from))
    for name, pattern in regexes:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ConfigError(name, f"{pattern!r} is not a valid regular expression: {exc}") from None
    for pattern in config.drop_params:
        try:
            check_drop_param(pattern)
        except ValueError as exc:
            raise ConfigError("drop_params", str(exc), named=True) from None


def _check_extraction(config: CrawlConfig) -> None:
    if not config.extract:
        given = [name for name in ("extract_from", "extract_exclude", "extract_jsonl")
                 if getattr(config, name)]
        if given:
            raise ConfigError("extract", f"nothing is extracted, so {', '.join(given)} would do "
                                         f"nothing; add at least one --extract NAME=SELECTOR")
        return
    from textfilter.extract import Extraction   # lxml.html, cssselect: loaded only for --extract
    try:
        Extraction.from_specs(config.extract, config.extract_exclude, config.extract_from)
    except ValueError as exc:
        raise ConfigError("extract", str(exc)) from None


# The combinations of --order with another way of crawling that still make
# no sense, and why: the one place they are refused (a usage error, exit 2).
# Every other one works under every order: --resume and recrawl replay the
# order's journaled page events (urllist/ordered.py, resume), --sitemaps
# queues listed pages as links no page scored yet.
ORDER_REFUSALS = {
    # A shared crawl runs an order by the terms each URL keeps in its host's
    # partition (urllist/orders.py, "Shared"). Refused: what needs one
    # process's view of the whole crawl, in the order's own words
    # (Order.shared_refusal).
    "--redis": "",
    # An order's scores (PageRank, OPIC cash, anchor scores) and its level
    # corrections need every known URL and the link graph at hand: its
    # queue stays in RAM, and only the breadth-first lines spill to disk.
    "--frontier-ram": "an order other than bfs keeps its queue, scores and link graph in RAM "
                      "(its scores need the whole graph found so far); --frontier-ram bounds "
                      "the breadth-first queue",
}


def order_refusal(order: str, way: str, params: tuple[str, ...] = ()) -> str:
    """Why --order ``order`` (with --order-param ``params``) cannot go with
    ``way`` (a key of ORDER_REFUSALS); "" if it can."""
    if order == "bfs" or order not in ORDERS or way not in ORDER_REFUSALS:
        return ""
    reason = ORDER_REFUSALS[way]
    if way == "--redis":
        try:
            made = make_order(order, dict(p.split("=", 1) for p in params if "=" in p))
        except ValueError:
            return ""   # the order's parameters are refused on their own
        if made.shared:
            return ""
        reason = made.shared_refusal
    return f"--order {order} does not go with {way}: {reason}; or use --order bfs"


def _sitemap_problem(config: CrawlConfig) -> str:
    for url in config.sitemap_urls:
        problem = typed_url_problem(url) or (normalize(url) is None and "is not an http(s) URL")
        if problem:
            return (f"--sitemap: {shown(url)!r} {problem}; give the sitemap's full URL, "
                    f"e.g. http://host/sitemap.xml")
    return ""


def _request_problem(config: CrawlConfig) -> str:
    """What is wrong with the headers, cookie and login settings; "" if nothing."""
    for line in config.headers:
        try:
            parse_header(line)
        except ValueError as exc:
            return str(exc)
    if config.load_cookies:
        if not config.cookies:
            return ("--load-cookies loads cookies and --no-cookies sends none: give one of them")
        try:
            load_cookie_file(config.load_cookies)
        except ValueError as exc:
            return str(exc)
    if config.http_password and not config.http_user:
        return "--http-password needs --http-user (the user name to send it with)"
    if config.auth_no_challenge and not config.http_user:
        return "--auth-no-challenge sends --http-user's credentials: give --http-user too"
    return ""


def request_headers(config: CrawlConfig) -> tuple[tuple[str, str], ...]:
    """The (name, value) pairs of the --header lines."""
    return tuple(parse_header(line) for line in config.headers)


def public_settings(settings: dict) -> dict:
    """``settings`` (a CrawlConfig as a dict) without its secrets: no
    http_password, no proxy password, no header with a secret value; ``withheld`` names what
    was left out. Every file that holds settings is written from this."""
    public = {name: value for name, value in settings.items() if name != "http_password"}
    if settings.get("proxy"):   # its password is asked for again (proxies.missing_password)
        public["proxy"] = without_password(settings["proxy"])
    lines = settings.get("headers", ())
    secret = [line for line in lines if is_secret_header(line.partition(":")[0])]
    public["headers"] = [line for line in lines if line not in secret]
    gone = (["--http-password"] if settings.get("http_password") else []) + [
        f"--header {line.partition(':')[0]}" for line in secret]
    if gone:
        public["withheld"] = gone
    return public
def _proxy_problem(config: CrawlConfig) -> str:
    """What is wrong with --proxy (and --no-proxy beside it); "" if nothing."""
    if not config.proxy:
        return ""
    if config.no_proxy:
        return "give --proxy URL or --no-proxy, not both"
    try:
        proxy = parse_proxy(config.proxy, "--proxy")
    except ValueError as exc:
        return str(exc)
    if missing_password(config.proxy):
        return (f"--proxy {config.proxy} names the user {proxy.username!r} but no password (a crawl "
                f"never saves the proxy's password): give it again, --proxy "
                f"{config.proxy.replace('@', ':PASSWORD@', 1)}")
    return ""


def _ca_problem(path: str) -> str:
    return ca_bundle_problem(path) if path else ""


def _normalized_seeds(config: CrawlConfig) -> tuple[str, ...]:
    """The seeds normalized with the same flags as links, duplicates dropped, in order."""
    if not config.seeds:
        raise ConfigError("seeds", "none given: give at least one start URL, e.g. http://host/")
    normalized = []
    for seed in config.seeds:
        if problem := typed_url_problem(seed):
            raise ConfigError("seeds", f"{shown(seed)!r} {problem} (seeds must look like http://host/path)")
        url = normalize(seed, fold_www=config.fold_www, drop_query=config.drop_query,
                        drop_params=config.drop_params)
        if url is None:
            bare_host = seed.strip() and "://" not in seed and not seed.startswith(("/", "."))
            hint = f"; did you mean http://{seed}/ ?" if bare_host else ""
            raise ConfigError("seeds", f"{seed!r} is not an http(s) URL{hint} "
                                       f"(seeds must look like http://host/path)")
        normalized.append(url)
    return tuple(dict.fromkeys(normalized))


# A URL as typed: a scheme, then what follows its colon.
_TYPED_SCHEME = re.compile(r"\s*([A-Za-z][A-Za-z0-9+.-]*):(.*)", re.DOTALL)


def typed_url_problem(seed: str) -> str:
    """What is wrong with a seed as typed, checked as wget checks a URL given
    to it: after the scheme, "//" and a non-empty host. "" when nothing is.

    Links on pages are read as browsers read them (the WHATWG URL parser
    turns "http:///x" into host "x"); a seed is what its user typed, and
    one without a host is a typing mistake to report, not to repair.
    A seed with no scheme is left to the normalizer's message.
    """
    typed = _TYPED_SCHEME.fullmatch(seed)
    if typed is None or typed.group(1).lower() not in ("http", "https"):
        return ""
    scheme, rest = typed.group(1), typed.group(2)
    if not rest.startswith("//"):
        return f"has no '//' after '{scheme}:'"
    authority = re.split(r"[/?#\\]", rest[2:], maxsplit=1)[0]
    userinfo, at, host = authority.rpartition("@")
    host = host if host.startswith("[") else host.partition(":")[0]
    if not host.strip():
        return f"has no host after '{scheme}://'"
    if at and ":" in userinfo:
        return ("has a password in it, which would be written to index.csv and the settings: "
                "give the user and password with --http-user and --http-password instead")
    return ""


def shown(url: str) -> str:
    """``url`` as an error message may show it: a password in it masked."""
    return without_password(url)

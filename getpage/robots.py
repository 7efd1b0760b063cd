"""robots.txt: what a site allows this crawler, per RFC 9309.

Owns three things, none of which touches the network:

* ``RobotsRules``: the verdict for one origin (scheme://host:port), built
  from robots.txt text with protego, or from the fact that robots.txt was
  unavailable (4xx: everything allowed), unreachable (5xx, network
  failure: everything disallowed) or blocked (the host's address is one
  the crawler must not connect to: everything disallowed);
* ``rules_for_response``: the RFC's mapping of a robots.txt response to
  rules;
* ``RobotsCache``: one ``RobotsRules`` per origin, loaded once by an
  injected loader (the Fetcher's HTTP code) while concurrent callers for
  the same origin wait for that one load.

protego does the parsing and matching. Where it departs from RFC 9309 this
module corrects it before protego sees the text: protego also lets a group
apply when its user-agent is a prefix of ours ("User-agent: bfs" would
catch "bfsbot"), whereas the RFC matches the product token exactly, case
insensitively, and falls back to the "*" group otherwise. Every user-agent
line is therefore rewritten to either our own token, "*", or a name that
can never match. And protego ends a group's run of user-agent lines at any
other line (an unknown record, a Crawl-delay), where RFC 9309 §2.2.4 says
records other than user-agent, allow and disallow must not change how those
are read: the allow and disallow rules are therefore parsed from the text
without the other records found inside a run of user-agent lines, so the
run stays one group. Crawl-delay and Sitemap, records the RFC does not
define, are read from the text as written, a Crawl-delay belonging to the
user-agent lines above it as the crawlers that defined it read it (a
"User-agent: otherbot / Crawl-delay: 10" group does not slow this crawler).
"""
from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from urllib.parse import urlsplit

from protego import Protego

from .addresses import DEFAULT_PORTS, url_authority

# RFC 9309 §2.5: crawlers must parse at least the first 500 KiB.
MAX_ROBOTS_BYTES = 500 * 1024
# RFC 9309 §2.3.1.2: follow at least five consecutive redirects.
MAX_ROBOTS_REDIRECTS = 5
# RFC 9309 §2.4: a cached robots.txt answer may be used for at most 24 hours.
ROBOTS_TTL_SECONDS = 24 * 3600

# RFC 9309 §2.2.1: a product token is letters, underscores and hyphens.
_TOKEN = re.compile(r"[A-Za-z_-]+")
# The user-agent line spellings protego accepts ("User-agent:", "useragent",
# "User agent foo" ...), with the value up to a comment.
_USER_AGENT_LINE = re.compile(
    r"^(\s*user[-\s]?agent)(\s*:\s*|\s+)([^#]*)(.*)$", re.IGNORECASE | re.DOTALL
)
# An allow or disallow line (with the typos of "disallow" that Google's
# parser and protego both accept): the lines that end a run of user-agent
# lines (RFC 9309 §2.1).
_RULE_LINE = re.compile(r"^\s*(allow|disallow|dissallow|dissalow|disalow|diasllow|disallaw)\s*(:|\s)",
                        re.IGNORECASE)
# A user-agent name protego can never find inside a product token, because
# tokens have no digits or dots; groups for other crawlers get this name.
_OTHER_AGENT = "0.other-crawler"


def product_token(user_agent: str) -> str:
    """The product token of a User-Agent header, lower case.

    "BfsBot/0.1 (+http://example.org/bot)" -> "bfsbot". Raises ValueError
    if the header does not start with a token.
    """
    match = _TOKEN.match(user_agent.strip())
    if not match:
        raise ValueError(f"User-Agent {user_agent!r} does not start with a product token")
    return match.group(0).lower()


def origin_of(url: str) -> str:
    """"scheme://host[:port]" of an absolute URL, lower case, default port left out.

    Raises ValueError for a URL without a host or with a bad port.
    """
    scheme, host, port = url_authority(url)
    if not host:
        raise ValueError(f"no host in {url!r}")
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    if port is None or port == DEFAULT_PORTS.get(scheme):
        return f"{scheme}://{host}"
    return f"{scheme}://{host}:{port}"


def robots_url(origin: str) -> str:
    return f"{origin}/robots.txt"


@dataclass(frozen=True)
class RobotsRules:
    """What one origin's robots.txt says to this crawler.

    ``source`` is "parsed" (rules from a robots.txt), "unavailable"
    (robots.txt missing: everything allowed), "unreachable" (server or
    network failure: everything disallowed) or "blocked" (the origin's
    host resolves to an address the crawler may not connect to, so
    robots.txt was never asked for: everything disallowed, and ``reason``
    is the "blocked: ..." error value). ``crawl_delay`` is in seconds,
    None when not given.
    """

    source: str
    token: str = ""
    crawl_delay: float | None = None
    parser: Protego | None = None
    reason: str = ""  # why robots.txt was unreachable or blocked, e.g. "http 503", "connection: refused"
    text: str = ""    # the robots.txt the rules were parsed from ("parsed" only)
    # Its Sitemap: lines as written (each once, in order; "parsed" only):
    # they belong to no group, so every crawler reads them.
    sitemaps: tuple[str, ...] = ()

    def record(self) -> dict:
        """What another process needs to have the same rules (a shared crawl);
        the sitemaps come back with the text."""
        return {"source": self.source, "reason": self.reason, "text": self.text}

    @classmethod
    def from_record(cls, record: dict, token: str) -> RobotsRules:
        if record["source"] == "parsed":
            return parse_robots(record["text"], token)
        return cls(record["source"], reason=record["reason"])

    @classmethod
    def unavailable(cls) -> RobotsRules:
        return cls("unavailable")

    @classmethod
    def unreachable(cls, reason: str) -> RobotsRules:
        return cls("unreachable", reason=reason)

    @classmethod
    def blocked(cls, reason: str) -> RobotsRules:
        return cls("blocked", reason=reason)

    def allows(self, url: str) -> bool:
        """May this crawler fetch ``url`` (an absolute URL of this origin)?"""
        if urlsplit(url).path == "/robots.txt":
            return True  # RFC 9309 §2.2.2: robots.txt itself is always allowed
        if self.parser is None:
            return self.source == "unavailable"
        return self.parser.can_fetch(url, self.token)


def parse_robots(text: str, token: str) -> RobotsRules:
    """Rules for the crawler whose product token is ``token``, from robots.txt text."""
    token = token.lower()
    parser = Protego.parse(_rewrite_user_agents(text, token, rfc_groups=True))
    # protego memoises group matching and indexes rules on first use; doing
    # that here, once, makes later concurrent queries read-only.
    parser.can_fetch("/", token)
    records = Protego.parse(_rewrite_user_agents(text, token, rfc_groups=False))
    return RobotsRules("parsed", token, records.crawl_delay(token), parser, text=text,
                       sitemaps=tuple(dict.fromkeys(records.sitemaps)))


def rules_for_response(status: int, body: bytes, token: str) -> RobotsRules:
    """RFC 9309 §2.3.1: rules from the final (non-redirect) robots.txt response.

    2xx: parse the first 500 KiB as UTF-8. 429 and 5xx: unreachable, so
    everything is disallowed (a 429 asks us to back off, so it is read as a
    server error, as major crawlers do). Other 4xx, and anything else:
    unavailable, so everything is allowed.
    """
    if 200 <= status < 300:
        return parse_robots(_robots_text(body), token)
    if status == 429 or status >= 500:
        return RobotsRules.unreachable(f"http {status}")
    return RobotsRules.unavailable()


def _robots_text(body: bytes) -> str:
    if len(body) > MAX_ROBOTS_BYTES:
        # Drop the line the cut went through rather than parse half a rule.
        body = body[:MAX_ROBOTS_BYTES].rpartition(b"\n")[0]
    # A UTF-8 byte order mark is skipped, and so is the start of one that
    # an editor cut short, as Google's parser skips it.
    for bom in (b"\xef\xbb\xbf", b"\xef\xbb", b"\xef"):
        if body.startswith(bom):
            body = body[len(bom):]
            break
    return body.decode("utf-8", errors="replace")


def _rewrite_user_agents(text: str, token: str, *, rfc_groups: bool) -> str:
    """The text protego reads: user-agent lines rewritten (``_rewrite_line``);
    with ``rfc_groups``, lines other than allow and disallow found inside a
    run of user-agent lines dropped, so that protego sees the run whole."""
    lines: list[str] = []
    in_agents = False
    for line in text.splitlines():
        if _USER_AGENT_LINE.match(line):
            lines.append(_rewrite_line(line, token))
            in_agents = True
        elif rfc_groups and in_agents and not _RULE_LINE.match(line):
            continue
        else:
            lines.append(line)
            in_agents = in_agents and not line.split("#", 1)[0].strip()
    return "\n".join(lines)


def _rewrite_line(line: str, token: str) -> str:
    match = _USER_AGENT_LINE.match(line)
    if not match:
        return line
    value = match.group(3).strip()
    if not value:
        return line
    if value == "*" or (value.startswith("*") and value[1:2].isspace()):
        name = "*"
    else:
        # Like Google's parser, read "FooBot/1.2" as the token "FooBot".
        found = _TOKEN.match(value)
        name = token if found and found.group(0).lower() == token else _OTHER_AGENT
    return f"User-agent: {name}"


class RobotsCache:
    """One ``RobotsRules`` per origin, loaded once and kept ``ttl`` seconds.

    ``load(origin)`` fetches and interprets robots.txt; it is called at
    most once per origin and lifetime even when many threads ask at once:
    the first caller loads, the others wait for its answer. RFC 9309 §2.4
    lets a crawler keep an answer at most 24 hours; a long crawl, or a
    recrawl of a site, asks again after that (``clock``, in seconds, says
    when).
    """

    def __init__(self, load: Callable[[str], RobotsRules], *, ttl: float = ROBOTS_TTL_SECONDS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._load = load
        self._ttl = ttl
        self._clock = clock
        self._lock = threading.Lock()
        self._entries: dict[str, Future[RobotsRules]] = {}
        # Loaded rules and when they expire, read without the lock: every
        # fetch asks. A dict read is atomic; an origin is added only once
        # its rules are final, and replaced whole.
        self._loaded: dict[str, tuple[RobotsRules, float]] = {}

    def known(self, origin: str) -> bool:
        """True while origin's rules are loaded and fresh: asking costs no request."""
        loaded = self._loaded.get(origin)
        return loaded is not None and self._clock() < loaded[1]

    def loading_elsewhere(self, origin: str) -> bool:
        """True while another caller is loading origin's rules (asking now would wait)."""
        with self._lock:
            entry = self._entries.get(origin)
            return entry is not None and not entry.done()

    def rules(self, origin: str) -> RobotsRules:
        loaded = self._loaded.get(origin)
        if loaded is not None and self._clock() < loaded[1]:
            return loaded[0]
        with self._lock:
            entry = self._entries.get(origin)
            loader = entry is None or (entry.done() and self._expired(origin))
            if loader:
                entry = self._entries[origin] = Future()
        if loader:
            self._fill(origin, entry)
        return entry.result()

    def _expired(self, origin: str) -> bool:
        loaded = self._loaded.get(origin)
        return loaded is None or self._clock() >= loaded[1]

    def _fill(self, origin: str, entry: Future[RobotsRules]) -> None:
        try:
            rules = self._load(origin)
            self._loaded[origin] = (rules, self._clock() + self._ttl)
            entry.set_result(rules)
        except BaseException as exc:
            # A failing loader is a bug: let every waiter see it, and let a
            # later call try again instead of caching the failure.
            with self._lock:
                del self._entries[origin]
            entry.set_exception(exc)
            raise

"""Scope and filter rules: which normalized URLs the crawl may enqueue.

This module owns ``UrlRules``, a frozen value built once from the seeds and the
user's options.  ``reject_reason(url)`` answers with a short reason word rather
than a bool, so the Controller can count and trace why links were dropped.
Pure: no sockets, no files.

Every link of every crawled page is checked here, so ``reject_reason`` reads
the common shape of a normalized URL (http(s)://host/path?query) with one
split and a few string tests; ``reject_reason_reference`` is the plain
step-by-step version it must agree with, and the one it hands any other shape
to.
"""
from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

__all__ = ["DEFAULT_DENY_EXTENSIONS", "SCOPES", "UrlRules"]

SCOPES = ("host", "domain", "any")

# Extensions of the path's last segment that are never HTML.  "xml" stays
# allowed (sitemaps and feeds); "json" and "csv" are denied: they are data
# files that hold no links for an HTML crawler and are often large.  "txt"
# stays allowed because plain-text pages are text worth keeping.
DEFAULT_DENY_EXTENSIONS: frozenset[str] = frozenset("""
    jpg jpeg png gif bmp svg webp ico tif tiff
    mp3 mp4 avi mov wmv flv mkv webm ogg wav m4a
    zip tar gz tgz bz2 xz 7z rar
    pdf doc docx xls xlsx ppt pptx odt ods
    exe dmg iso bin apk msi
    css js woff woff2 ttf eot otf
    json csv
""".split())


_HTTP_HEADS = ("http://", "https://")


def _split_url(url: str) -> tuple[str, str]:
    """(host[:port], path) of a normalized URL; userinfo is not part of the first."""
    _, sep, rest = url.partition("://")
    if not sep:
        return "", ""
    end = len(rest)
    for delimiter in "/?#":
        found = rest.find(delimiter)
        if 0 <= found < end:
            end = found
    netloc = rest[:end].rpartition("@")[2]
    path = rest[end:].partition("?")[0].partition("#")[0]
    return netloc, path


def _host_of(netloc: str) -> str:
    """The host part of host[:port] (IPv6 keeps its brackets)."""
    if netloc.startswith("["):
        return netloc[:netloc.find("]") + 1]
    return netloc.partition(":")[0]


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return True


def _seed_domain(host: str) -> str:
    return host[4:] if host.startswith("www.") and not _is_ip(host) else host


def _compile(patterns: Iterable[str | re.Pattern], kind: str) -> tuple[re.Pattern, ...]:
    compiled = []
    for pattern in patterns:
        if isinstance(pattern, re.Pattern):
            compiled.append(pattern)
            continue
        try:
            compiled.append(re.compile(pattern))
        except re.error as error:
            raise ValueError(f"bad {kind} pattern {pattern!r}: {error}") from None
    return tuple(compiled)


def repeats_too_often(path: str, max_repeats: int) -> bool:
    """True when some run of segments repeats back to back more than max_repeats
    times: /a/b/a/b/a/b has the run a/b three times, a typical spider trap
    (relative links that resolve one level deeper on every page)."""
    segments = [s for s in path.split("/") if s]
    n = len(segments)
    for period in range(1, n // (max_repeats + 1) + 1):
        # ``same`` counts consecutive positions equal to the one a period back;
        # period * r such positions mean the run occurs r + 1 times in a row.
        same = 0
        for i in range(period, n):
            same = same + 1 if segments[i] == segments[i - period] else 0
            if same >= period * max_repeats:
                return True
    return False


def _extension(path: str) -> str:
    """Lower-case extension of the last path segment, ignoring ';params'; '' if none."""
    segment = path.rpartition("/")[2].partition(";")[0]
    stem, dot, extension = segment.rpartition(".")
    return extension.lower() if dot and stem else ""


@dataclass(frozen=True)
class UrlRules:
    """What may be enqueued.  All URLs given to it are normalized (see ``normalize``).

    scope "host": the URL's host[:port] is one of ``seed_hosts`` (scheme and
    userinfo are ignored, so http and https of one host are both in scope).
    scope "domain": the URL's host equals, or is a subdomain of, a seed's
    domain, which is the seed's host without a leading "www." and without its
    port.  No public-suffix list is used: a seed "http://co.uk/" would admit
    every *.co.uk host.  An IP-address seed admits only that IP (any port).
    scope "any": every host.
    """
    scope: str                                 # "host" | "domain" | "any"
    seed_hosts: frozenset[str]                 # host[:port] of the seeds, as in normalized URLs
    include: tuple[re.Pattern, ...] = ()       # if non-empty, a URL must match (re.search) one
    exclude: tuple[re.Pattern, ...] = ()       # a URL matching (re.search) any is rejected
    max_url_length: int = 2048                 # characters; longer URLs are rejected; 0 = no limit
    max_path_repeats: int = 2                  # a run of path segments may repeat back to back this often; 0 = no limit
    deny_extensions: frozenset[str] = DEFAULT_DENY_EXTENSIONS  # lower case, without the dot
    _domains: frozenset[str] = field(init=False, repr=False, compare=False, default=frozenset())
    _ip_hosts: frozenset[str] = field(init=False, repr=False, compare=False, default=frozenset())

    def __post_init__(self) -> None:
        if self.scope not in SCOPES:
            raise ValueError(f"unknown scope {self.scope!r}; valid scopes: {', '.join(SCOPES)}")
        if self.max_url_length < 0:
            raise ValueError(f"max_url_length must be >= 0 (0 = no limit), got {self.max_url_length}")
        hosts = {_host_of(netloc) for netloc in self.seed_hosts}
        ips = frozenset(host for host in hosts if _is_ip(host))
        # Frozen: the derived lookup sets are written once, here.
        object.__setattr__(self, "_ip_hosts", ips)
        object.__setattr__(self, "_domains", frozenset(_seed_domain(h) for h in hosts - ips))

    @classmethod
    def from_seeds(cls, seeds: Iterable[str], scope: str = "host",
                   include: Iterable[str | re.Pattern] = (),
                   exclude: Iterable[str | re.Pattern] = (),
                   max_url_length: int = 2048, max_path_repeats: int = 2) -> UrlRules:
        """Rules for normalized seed URLs; ValueError names a bad regex or scope."""
        seed_hosts = frozenset(_split_url(seed)[0].lower() for seed in seeds)
        return cls(scope=scope, seed_hosts=seed_hosts,
                   include=_compile(include, "include"), exclude=_compile(exclude, "exclude"),
                   max_url_length=max_url_length, max_path_repeats=max_path_repeats)

    def reject_reason(self, url: str) -> str | None:
        """None if the normalized ``url`` may be enqueued, else why not.

        Reasons, checked cheapest first so the first that applies is given:
        "length", "scope", "extension", "repeats", "exclude", "include".
        Same answers as ``reject_reason_reference`` for every string; written
        out in one function because it runs once per link of every page.
        """
        if self.max_url_length and len(url) > self.max_url_length:
            return "length"
        # One split gives scheme, host[:port] and the path's segments of
        # "http(s)://host[:port]/seg/seg?query"; any other shape (another
        # scheme, userinfo, a fragment) goes to the reference.
        if not url.startswith(_HTTP_HEADS):
            return self.reject_reason_reference(url)
        head = url.partition("?")[0] if "?" in url else url
        parts = head.split("/")
        netloc = parts[2]
        if "@" in netloc or "#" in head:
            return self.reject_reason_reference(url)
        if not (netloc in self.seed_hosts if self.scope == "host" else self._in_scope(netloc)):
            return "scope"
        last = parts[-1] if len(parts) > 3 else ""
        if ";" in last:
            extension = _extension(last)
        else:
            # An extension follows the last '.', after a non-empty stem.
            dot = last.rfind(".")
            extension = last[dot + 1:].lower() if dot > 0 else ""
        if extension in self.deny_extensions:
            return "extension"
        repeats = self.max_path_repeats
        # A run needs more segments than repeats, and some segment twice (the
        # set also holds "http:", "" and the host, which can only send more
        # paths to the full check).
        if repeats and len(parts) > repeats + 3 and len(set(parts)) < len(parts) \
                and repeats_too_often(head[len(parts[0]) + 2 + len(netloc):], repeats):
            return "repeats"
        if self.exclude or self.include:
            return self._pattern_reason(url)
        return None

    def reject_reason_reference(self, url: str) -> str | None:
        """What ``reject_reason`` answers, computed step by step (kept to test it against)."""
        if self.max_url_length and len(url) > self.max_url_length:
            return "length"
        netloc, path = _split_url(url)
        if not self._in_scope(netloc):
            return "scope"
        if _extension(path) in self.deny_extensions:
            return "extension"
        if self.max_path_repeats and repeats_too_often(path, self.max_path_repeats):
            return "repeats"
        return self._pattern_reason(url)

    def _pattern_reason(self, url: str) -> str | None:
        if self.exclude and any(pattern.search(url) for pattern in self.exclude):
            return "exclude"
        if self.include and not any(pattern.search(url) for pattern in self.include):
            return "include"
        return None

    def _in_scope(self, netloc: str) -> bool:
        if self.scope == "any":
            return True
        if self.scope == "host":
            return netloc in self.seed_hosts
        return self._in_domain(_host_of(netloc))

    def _in_domain(self, host: str) -> bool:
        if host in self._ip_hosts:
            return True
        # Walk the host's suffixes: cost grows with its labels, not with the seeds.
        host = host.rstrip(".")
        while host:
            if host in self._domains:
                return True
            host = host.partition(".")[2]
        return False

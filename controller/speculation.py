"""Speculative fetch-ahead: fetching URLs before they are queued.

Why: with one level fetched ahead (urllist/hosts.py), a host whose next
level is not known yet waits for the slowest host's level to end. Its next
URLs are already in hand, though: on its pages that were fetched ahead and
are parked. Their levels are not final (a page of the open level may still
link to them), but a page's bytes do not depend on its level. So such a URL
may be fetched early, when its host has nothing else to do, and the
response kept until the URL is queued for real; then the kept response
takes the place of a fetch. Levels stay exact, since they are still given
by the queue; a URL is requested once, since only URLs that are not in
the URL-seen set are speculated, and each at most once (one exception: a
redirect that reaches a URL whose speculative fetch has already started
is followed, as it would be without speculation, and that URL is
requested again; refusing the redirect could lose the page when the page
that linked to it turns out to be a duplicate whose links are not
queued); and politeness is kept, since a speculative fetch takes its
host's slot like any other. --max-depth and --max-pages bound it too: each
speculated URL carries the deepest level it could have.

A speculative fetch follows no redirect and checks no redirect target
(that would mark targets seen): it stops pending at the target, and the
real item goes on from there. Its page is parsed for its links only (so
speculation can go deeper), and fully once it has an id.

What it costs: at most ``limit`` responses kept in memory, and requests
for URLs that are never queued after all (none on a site whose links are
all followed; with --max-pages, a few at the end).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from urllist import QueuedUrl


@dataclass
class Speculation:
    limit: int                                   # URLs speculated (waiting, fetching or kept) at most
    waiting: dict[str, QueuedUrl] = field(default_factory=dict)   # url -> item not handed out yet
    fetching: dict[str, QueuedUrl] = field(default_factory=dict)  # url -> item in a fetch thread
    kept: dict[str, object] = field(default_factory=dict)         # url -> the Visit its fetch gave
    claims: dict[str, QueuedUrl] = field(default_factory=dict)    # url -> real item waiting for its fetch
    bounds: dict[str, int] = field(default_factory=dict)          # url -> the deepest level it can have
    fetches: int = 0                             # speculative fetches that ended
    used: int = 0                                # of them, handed to a queued URL

    def stats(self) -> dict:
        return {"fetches": self.fetches, "used": self.used, "kept_unused": len(self.kept)}

    def __len__(self) -> int:
        return len(self.waiting) + len(self.fetching) + len(self.kept)

    def __contains__(self, url: str) -> bool:
        return url in self.waiting or url in self.fetching or url in self.kept

    def wants(self, url: str) -> bool:
        return len(self) < self.limit and url not in self

    def add(self, item: QueuedUrl, bound: int) -> None:
        self.waiting[item.url] = item
        self.bounds[item.url] = bound

    def evict(self, open_level: int) -> list[QueuedUrl]:
        """Forget what can no longer be queued: a URL whose level would be at
        most ``bound`` and is not queued once that level is past never will
        be. The waiting items among them, to withdraw."""
        stale = [url for url, bound in self.bounds.items()
                 if bound < open_level and url not in self.fetching]
        withdrawn = []
        for url in stale:
            del self.bounds[url]
            self.kept.pop(url, None)
            if url in self.waiting:
                withdrawn.append(self.waiting.pop(url))
        return withdrawn

    def handed_out(self, item: QueuedUrl) -> bool:
        """Whether the frontier handed out one of the items speculated here
        (now fetching); False for a queued URL's item."""
        if self.waiting.get(item.url) != item:
            return False
        self.fetching[item.url] = self.waiting.pop(item.url)
        return True

    def fetched(self, item: QueuedUrl, visit) -> QueuedUrl | None:
        """Keep a speculative fetch's visit; the real item if one was waiting for it."""
        del self.fetching[item.url]
        self.fetches += 1
        claim = self.claims.pop(item.url, None)
        if claim is None:
            self.kept[item.url] = visit
        else:
            self.used += 1
        return claim

    def forget(self, url: str) -> QueuedUrl | None:
        """url is taken care of otherwise (a redirect reached it): drop what was
        kept for it; the waiting item to withdraw, if it had not started."""
        self.bounds.pop(url, None)
        self.kept.pop(url, None)
        return self.waiting.pop(url, None)

    def dropped(self, item: QueuedUrl) -> None:
        """A speculative fetch that gave nothing to keep (a stop cancelled it)."""
        self.fetching.pop(item.url, None)
        self.bounds.pop(item.url, None)

    def claim(self, item: QueuedUrl):
        """The real item for a URL just queued: "taken" (its fetch is under way
        and will be handed over), the kept Visit, the waiting speculative item
        to withdraw, or None (never speculated)."""
        self.bounds.pop(item.url, None)
        if item.url in self.fetching:
            self.claims[item.url] = item
            return "taken"
        if item.url in self.kept:
            self.used += 1
            return self.kept.pop(item.url)
        return self.waiting.pop(item.url, None)

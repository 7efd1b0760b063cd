"""Admission: which URLs become queued items, and at which level.

Every URL the crawl comes to passes here on its way into URL_List: the
seeds and the sitemaps' URLs when the crawl begins, a page's links when its
commit queues its children (controller/commit.py), and each redirect target
GetPage is about to follow. A URL is queued if URL_Filter's stateful half
lets it in: it is new to the URL-seen set and the trap guard admits it at
its level. What was queued, and what a redirect marked seen, goes to the
journal first, so a resumed crawl rebuilds the same queue and seen-set.

The loop (controller/engine.py) holds one admission, chosen by the wiring
for the crawl's mode:

- ``Admission``: one machine (any --order): this process's seen-set, trap
  guard and journal. Redirect checks come from fetch threads, so the
  seen-set is touched under ``lock``.
- ``SharedAdmission``: one worker of a crawl in Redis: the seeds are
  Redis's already, links are queued by the commit's Redis script, and a
  redirect target is marked seen in Redis under the page's lease.
- ``RevisitAdmission`` (controller/revisits.py): a recrawl pass.
"""
from __future__ import annotations

import threading

from getpage import host_key
from urlfilter.traps import pattern_of
from urllist import QueuedUrl


class Admission:
    """One machine: this process's seen-set, trap guard and journal."""

    local_budget = True    # --max-pages is counted here (a shared crawl's, in Redis)
    fetches_ahead = True   # URLs may be fetched before they are queued (controller/speculation.py)
    repeatable = True      # one fetch thread fetches in the same order every run

    def __init__(self, crawl) -> None:
        self.crawl = crawl
        self.lock = threading.Lock()   # the seen-set, for the fetch threads' redirect checks
        self.redirected: list[str] = []   # speculated URLs a redirect reached first

    def begin(self) -> None:
        """The seeds (level 0) and the sitemaps' URLs (level 1), or the
        queue a resumed crawl holds already."""
        crawl = self.crawl
        if crawl.resumed and len(crawl.frontier):   # else it stopped before its seeds were queued
            crawl.trace.resume(crawl.tally.urls, len(crawl.frontier))
            return
        crawl.trace.start(crawl.config.seeds)
        config = crawl.config
        listed = self._sitemap_urls() if config.sitemaps or config.sitemap_urls else []
        self.enqueue(config.seeds, level=0, parent_id=None)
        self._enqueue_listed(listed)
        crawl.journal.skipped(None, dict(crawl.tally.skipped), dict(crawl.trap_cuts))

    def _sitemap_urls(self) -> list[str]:
        """The pages the sitemaps list (controller/sitemaps.py), read before
        the first page is fetched, so their level is known before level 0
        closes."""
        from controller.sitemaps import gather
        crawl, config = self.crawl, self.crawl.config
        found = gather(crawl.fetcher, config.seeds if config.sitemaps else (), config.sitemap_urls,
                       scope=self._out_of_scope, max_urls=config.max_pages)
        crawl.store.add_sitemap_urls(found.urls)
        crawl.sitemap_stats = {"files": found.files, "listed": len(found.urls), "queued": 0,
                               "dropped": dict(found.dropped), "problems": list(found.problems)}
        return [url for url in (crawl.digester.normalize(entry.url, None) for entry in found.urls)
                if url]

    def _enqueue_listed(self, urls: list[str]) -> None:
        """At level 1: as if a seed linked to each (a sitemap is the site's own
        list of its pages); through URL_Filter and the URL-seen set like links."""
        if urls:
            self.crawl.sitemap_stats["queued"] = len(self.enqueue(urls, level=1, parent_id=None))

    def _out_of_scope(self, url: str) -> str | None:
        target = self.crawl.digester.normalize(url, None)
        return "not http(s)" if target is None else (self.crawl.rules.reject_reason(target) or None)

    def enqueue(self, urls, level: int, parent_id: int | None) -> list[QueuedUrl]:
        """Queue the URLs new to the crawl that the trap guard admits at
        ``level``; journaled before they are pushed."""
        crawl = self.crawl
        items: list[QueuedUrl] = []
        with self.lock:
            for url in urls:
                reason = crawl.traps.admit(url, level) if crawl.seen.add(url) else "seen"
                if reason:
                    crawl.tally.skipped[reason] += 1
                    if reason == "pattern-depth":
                        self.trap_cut((pattern_of(url),), level)
                else:
                    items.append(QueuedUrl(crawl.frontier.next_id + len(items), url, level, parent_id))
            crawl.journal.queued(items)
        crawl.frontier.push(items, taken=crawl.claim(items))
        return items

    def beyond_depth(self, urls) -> None:
        """Links of a page at --max-depth that no page before had: URLs the
        limit kept out. Marking them seen is safe: every page processed from
        now on is at the same depth, so none of them could ever be queued."""
        with self.lock:
            self.crawl.tally.skipped["depth"] += sum(map(self.crawl.seen.add, urls))

    def trap_cut(self, patterns, level: int) -> None:
        """Count the trap guard's refusals by pattern; the first of each
        pattern is a TRAP line (log once, count always)."""
        crawl = self.crawl
        for pattern in patterns:
            crawl.trap_cuts[pattern] += 1
            if crawl.trap_cuts[pattern] == 1:
                crawl.trace.trap(level, pattern)

    def speculable(self, urls, bound: int, wanted) -> list[str]:
        """Of ``urls``, those ``wanted`` that no page queued yet and that the
        trap guard would admit at level ``bound``: what may be fetched ahead."""
        crawl = self.crawl
        with self.lock:
            return [url for url in urls
                    if wanted(url) and url not in crawl.seen and crawl.traps.would_admit(url, bound)]

    def speculate(self, url: str, bound: int) -> QueuedUrl:
        """The frontier's item for url, fetched before it is queued."""
        return self.crawl.frontier.speculate(url, host_key(url))

    def take_redirected(self) -> list[str]:
        with self.lock:
            taken, self.redirected = self.redirected, []
        return taken

    def redirect_check(self, url: str) -> str | None:
        """Called by GetPage, in a fetch thread, for each redirect hop: the
        target must pass URL_Filter and be new, so a page reached by a
        redirect is still fetched once. None: it may be followed."""
        target, refusal = self.judged(url)
        if refusal:
            return refusal
        crawl = self.crawl
        with self.lock:
            if not crawl.seen.add(target):
                return "target already seen"
            if target in crawl.speculation:
                # The redirect wins, as it would without speculation (nothing
                # may be lost: the page that linked to it may turn out a
                # duplicate whose links are not queued). A speculative fetch
                # of it not started yet is withdrawn by the loop.
                self.redirected.append(target)
            crawl.journal.seen(crawl.fetching_now.item_id, target)
            return crawl.traps.admit(target, crawl.fetching_now.level)

    def judged(self, url: str) -> tuple[str | None, str | None]:
        """A redirect target normalized, and why URL_Filter refuses it (None: it may go)."""
        target = self.crawl.digester.normalize(url, None)
        if target is None:
            return None, "not http(s)"
        reason = self.crawl.rules.reject_reason(target)
        return target, (f"out of {reason} rules" if reason else None)


class SharedAdmission(Admission):
    """One worker of a crawl in Redis: Redis's seen-set, trap counters and queue."""

    local_budget = False    # Redis counts the pages of every worker
    repeatable = False      # the workers' race decides who fetches what

    def begin(self) -> None:
        """The seeds went to Redis when the crawl was created: joining is all."""
        self.crawl.commit.join()

    def redirect_check(self, url: str) -> str | None:
        target, refusal = self.judged(url)
        if refusal:
            return refusal
        # Marked seen under this URL's lease: if the lease is lost, the mark goes too.
        verdict = self.crawl.frontier.mark_seen(self.crawl.fetching_now.item_id, target,
                                                *trap_keys(target))
        if verdict == 1 and target in self.crawl.speculation:
            with self.lock:   # the redirect wins, as on one machine (Admission.redirect_check)
                self.redirected.append(target)
        return SHARED_MARKS[verdict]

    def speculable(self, urls, bound: int, wanted) -> list[str]:
        """Of ``urls``, those ``wanted`` that this worker has not seen Redis
        judge: Redis's claim decides the rest (new, unclaimed, admitted)."""
        known = self.crawl.frontier.known_seen
        return [url for url in urls if wanted(url) and not known(url)]

    def speculate(self, url: str, bound: int) -> QueuedUrl:
        """Claimed in Redis with the frontier's next pop: fetched by this
        worker alone, and the offer that queues it leases it to this worker."""
        return self.crawl.frontier.speculate(url, *trap_keys(url), bound)


# What RedisFrontier.mark_seen answers -> what a redirect check returns.
SHARED_MARKS = {1: None, 0: "target already seen", 2: "trap limit full",
                -1: "lease lost to another worker"}


def trap_keys(url: str) -> tuple[str, str, str]:
    """(politeness host, path if the URL has a query, pattern or ''): what
    the shared crawl's trap limits count, as urlfilter.TrapGuard counts them."""
    path, has_query, _ = url.partition("?")
    try:
        host = host_key(url)
    except ValueError:
        host = ""
    return host, path if has_query else "", pattern_of(url) or ""

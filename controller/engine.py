"""Controller: the level-tracked breadth-first crawl loop.

The loop (``Crawl.run``) is the design paper's flow chart: take URLs from
URL_List, let worker threads GetPage them, let parser processes digest the
HTML (TextFilter + GetURLs + the stateless half of URL_Filter, see
digest.py), ask the URL-seen set which links are new, append those to
URL_List, record the page, and repeat until a stop condition holds. Every
piece of crawl state (seen-set, frontier, index, counters) is touched by
this thread alone, apart from the seen-set check of redirect targets,
which takes a lock.

Content dedup: a page whose text an earlier page already had (same MD5 of
its normalized text) is recorded with ``duplicate_of``, its links are not
queued and it keeps no file the first copy has (its text file is the first
copy's; its html file too, when the bytes are equal);
with ``--content-dedup near`` a page within ``--simhash-distance`` of an
earlier one is marked ``near_duplicate_of`` but kept and followed, because
"near" is a threshold and losing a distinct page to a false match costs
more than keeping a copy (index.csv lets users drop them afterwards).

One loop for one machine and for many: with ``shared`` (a crawl in Redis,
controller/shared.py) the frontier, the seen-set, the trap counters, the
exact-content memory and the politeness gate are Redis's
(urllist/redisqueue.py), and a page's children, verdict and commit go to
Redis in one call (``_commit_shared``) instead of to this process's own
structures (``_commit_local``); the rest of the loop does not know which.
"""
from __future__ import annotations

import json
import threading
import time
from collections import Counter
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from queue import Empty, SimpleQueue
from dataclasses import dataclass, replace

from controller.config import CrawlConfig
from controller.speculation import Speculation
from controller.orderreplay import restore_frontier
from controller.resume import (JOURNAL_FILE, STATE_DIR, WARC_FILE, PreviousCrawl, finished_crawl,
                               load_previous, prepare_out_dir, save_settings, settings_of)
from controller.shared import WORKER_ID_FILE
from controller.stats import TRAP_PATTERNS_KEPT, build_stats, trap_note
from controller import wiring
from controller.digest import Digest, DigestJob, DigestPool
from controller.store import PageStore
from controller.tally import Snapshot, Tally
from controller.trace import TraceLog, utc_now
from controller.extracted import ExtractedWriter, ExtractionTally
from controller.localfailure import LocalFailure, LocalFailureError
from getpage import Ask, Fetcher, FetchResult, host_key
from textfilter.duplicates import ContentVerdict
from textfilter.fingerprint import body_md5
from urlfilter.traps import pattern_of
from urllist import QueuedUrl
from urllist.journal import PATTERNS_KEY, QueueJournal, Replay, ScoredPage, replay

NO_VERDICT = ContentVerdict(None, None, None)
POLL_SECONDS = 0.25  # how often the loop looks at stop requests while waiting
PROGRESS_SECONDS = 0.2  # a progress display is updated at most this often
MAX_IN_FLIGHT_PER_WORKER = 4  # fetched pages waiting for a parser, per fetch thread, at most


@dataclass(frozen=True)
class Restored:
    """Totals of the earlier runs of a resumed crawl (rates cover this run only)."""
    urls: int = 0
    pages: int = 0
    bytes: int = 0


@dataclass(frozen=True)
class Visit:
    """One URL on its way through the loop: fetched, then (HTML only) digested."""
    result: FetchResult
    fetched_at: str
    digest: Digest | None = None

    @property
    def needs_digest(self) -> bool:
        return self.result.is_html and self.digest is None


class Crawl:
    """One crawl into config.out; ``resume=True`` continues the crawl found there."""

    stays_finished = True   # resuming a finished crawl does nothing (a recrawl goes on)

    def __init__(self, config: CrawlConfig, *, fetcher=None, on_level=None, on_progress=None,
                 resume: bool = False, overwrite: bool = False, shared=None) -> None:
        # A finished crawl resumed: nothing to do, and no file is touched
        # (not even the lock's); run() gives its stats as they are.
        self.finished = (finished_crawl(config) if resume and shared is None and self.stays_finished
                         else None)   # a shared crawl's worker asks Redis, not its files
        if self.finished is not None:
            return
        # One crawl per directory, held until run() ends (or this process does).
        self.lock = prepare_out_dir(config, resume, overwrite)
        self.shared = shared   # a controller.shared.Shared: this process is one worker of many
        try:
            self._open(config, fetcher, resume)
        except OSError as exc:   # a file of the crawl cannot be read or written (a full disk)
            self.lock.release()
            raise LocalFailureError(LocalFailure.of(exc, config.out)) from None
        except BaseException:
            self.lock.release()
            raise
        self.on_level = on_level          # called with (level, LevelTally) when a level ends
        self.on_progress = on_progress    # called with a Snapshot a few times a second at most

    def _open(self, config: CrawlConfig, fetcher, resume: bool) -> None:
        # Read (and tidy) what a stopped crawl left before any file is reopened.
        previous = load_previous(config.out, config.max_depth) if resume else None
        self.config = config
        self.resumed = resume
        self.rules = wiring.url_rules(config)
        self.traps = wiring.trap_guard(config)
        self.trap_cuts: Counter[str] = Counter()   # pattern -> links --max-pattern-depth skipped
        self.seen = wiring.url_seen(config)
        self.store = PageStore(config.out, append=resume)   # first: a bad --out fails before any lookup
        self._gate = getattr(fetcher, "gate", None) or wiring.politeness(config, self.shared)
        self.fetcher = fetcher or wiring.fetcher(config, self._gate, self._redirect_check,
                                                 self.shared)
        self._scheduled = isinstance(self.fetcher, Fetcher)
        self.frontier = wiring.frontier(config, self._gate, self.shared, self.store.sync)
        self.digester = wiring.digester(config, self.rules)
        self.contents = wiring.content_seen(config)
        self.in_links: Counter[str] = Counter()   # link target -> pages linking to it
        self._open_content_files(previous)
        self.trace = TraceLog(config.out / "trace.log", append=resume)
        self.journal = QueueJournal(config.out / STATE_DIR / JOURNAL_FILE)
        self.tally = Tally()
        self._init_loop_state(config)
        if previous:
            self._restore_tallies(previous)
            if self.shared is None:
                self._restore(previous, replay(self.journal.path))
        else:
            save_settings(config)

    def _init_loop_state(self, config: CrawlConfig) -> None:
        """What the loop keeps while it runs: stops, counts, fetches in flight."""
        self._last_progress = 0.0
        self.stop_reason = ""
        self.parser_failure = ""     # why the parser processes broke, if they did
        self.local_failure: LocalFailure | None = None   # a crawl file could not be written
        self.seeds_failed: list[dict] = []   # seeds whose row has an error
        self._stop_now = False       # a stop that does not wait for the URLs handed out
        self._cancelled = False      # fetches waiting for their host were told to give up
        self._seen_lock = threading.Lock()
        self._worker = threading.local()
        self._handed_out = 0
        self._local_budget = bool(config.max_pages) and self.shared is None   # else Redis counts
        self._local_ids: set[int] = set()   # ids of the rows this directory holds already
        self._ordered = config.order != "bfs"   # urllist.ordered: levels corrected, none parked
        # One fetch thread: the next URL is chosen once the page before it is
        # recorded, so that every run (and a resumed one) chooses from the
        # same state: the same fetch order, under every order. (A shared
        # crawl's order is its workers' race anyway.)
        self._one_by_one = config.workers == 1 and self.shared is None
        self._fetching = 0             # URLs in fetch threads
        self._resume: dict = {}        # id -> Continuation of a fetch that goes on later
        self._parked: list[tuple[QueuedUrl, Visit]] = []   # fetched ahead of their level
        self._speculation = Speculation(wiring.SPECULATE_PER_WORKER * config.workers)
        self._adopted: list[tuple[QueuedUrl, Visit]] = []  # queued URLs whose fetch was speculative
        self._redirected: list[str] = []   # speculated URLs a redirect reached first (fetch threads add)
        self._levels_closed = 0
        self._children_before: Counter[int] = Counter()  # queued by a page fetched again after a kill
        self.restored = Restored()     # what earlier runs of a resumed crawl had done
        self._started = 0.0
        self.sitemap_stats: dict | None = None   # what --sitemaps / --sitemap found
        self.parsers: DigestPool | None = None
        self._in_flight: dict[Future, tuple[QueuedUrl, Visit | None]] = {}   # fetching or digesting
        self._done: SimpleQueue[Future] = SimpleQueue()                       # futures that finished

    def _open_content_files(self, previous: PreviousCrawl | None) -> None:
        """extracted.csv (--extract) and crawl.warc.gz (--warc), continued on --resume."""
        config, resume = self.config, previous is not None
        self.extracted = self.extraction_tally = self.warc = None
        if config.extract:
            names = self.digester.extraction.names
            self.extracted = ExtractedWriter(config.out, names, config.extract_jsonl, append=resume)
            self.extraction_tally = (ExtractionTally.read(config.out, names) if resume
                                     else ExtractionTally(names))
        if config.warc:
            from controller.warc import WarcArchive   # warcio: loaded only for --warc
            self.warc = WarcArchive(config.out / WARC_FILE, append=resume, info=settings_of(config),
                                    responses=previous.warc_responses if resume else None)

    # -- the loop ---------------------------------------------------------
    def run(self) -> dict:
        if self.finished is not None:
            return self.finished
        self._started = time.monotonic()
        try:
            try:
                with ThreadPoolExecutor(self.config.workers, thread_name_prefix="getpage") as fetchers:
                    self._run_loop(fetchers)
            finally:
                if self.parsers:   # also when the loop raises (a second Ctrl-C): no worker outlives us
                    self.parsers.close()
            return self._finish()
        finally:
            self.lock.release()   # last: whoever takes it next finds complete files

    def _run_loop(self, fetchers: ThreadPoolExecutor) -> None:
        """The loop, stopped at once by a local failure: every file the loop
        thread touches is local, and a fetch never raises for the network
        (getpage's contract), so an OSError here is this machine's."""
        try:
            self._begin()
            self.parsers = (DigestPool(self.digester, self.config.processes)
                            if self.config.processes else None)
            self._loop(fetchers)
        except OSError as exc:
            self._failed_locally(exc)

    def _failed_locally(self, exc: OSError) -> None:
        """Nothing more is recorded: the page being recorded and those in
        flight stay uncommitted, for --resume (controller/resume.py)."""
        self.local_failure = self.local_failure or LocalFailure.of(exc, self.config.out)
        self.stop_reason = ""
        self.request_stop("local-failure")
        self._cancel_waiting()

    def _begin(self) -> None:
        if self.shared is not None:
            self._join_shared()
        elif self.resumed and len(self.frontier):   # else it stopped before its seeds were queued
            self.trace.resume(self.tally.urls, len(self.frontier))
        else:
            self.trace.start(self.config.seeds)
            listed = self._sitemap_urls() if self.config.sitemaps or self.config.sitemap_urls else []
            self._enqueue(self.config.seeds, level=0, parent_id=None)
            self._enqueue_listed(listed)
            self.journal.skipped(None, dict(self.tally.skipped), dict(self.trap_cuts))

    def _sitemap_urls(self) -> list[str]:
        """The pages the sitemaps list (controller/sitemaps.py), read before
        the first page is fetched, so their level is known before level 0
        closes."""
        from controller.sitemaps import gather
        config = self.config
        found = gather(self.fetcher, config.seeds if config.sitemaps else (), config.sitemap_urls,
                       scope=self._out_of_scope, max_urls=config.max_pages)
        self.store.add_sitemap_urls(found.urls)
        self.sitemap_stats = {"files": found.files, "listed": len(found.urls), "queued": 0,
                              "dropped": dict(found.dropped), "problems": list(found.problems)}
        return [url for url in (self.digester.normalize(entry.url, None) for entry in found.urls) if url]

    def _enqueue_listed(self, urls: list[str]) -> None:
        """At level 1: as if a seed linked to each (a sitemap is the site's own
        list of its pages); through URL_Filter and the URL-seen set like links."""
        if urls:
            self.sitemap_stats["queued"] = len(self._enqueue(urls, level=1, parent_id=None))

    def _out_of_scope(self, url: str) -> str | None:
        target = self.digester.normalize(url, None)
        return "not http(s)" if target is None else (self.rules.reject_reason(target) or None)

    def _loop(self, fetchers: ThreadPoolExecutor) -> None:
        """The paper's flow chart: hand out URLs, fetch, digest, record, until done."""
        while not self._over():
            self._hand_out(fetchers)
            self._report_progress()
            for future in _finished(self._done, self._wait_seconds()):
                item, visit = self._in_flight.pop(future)
                fetch_ended = visit is None
                visit = self._collect(item, future, visit)
                if fetch_ended and not self._one_by_one:
                    self._hand_out(fetchers)   # its host may go on now: before any recording
                if visit is not None:
                    self._dispatch(item, visit)
                self._adopt()

    def _dispatch(self, item: QueuedUrl, visit: Visit) -> None:
        """A fetched page goes to a parser; a digested (or non-HTML) one is processed."""
        if visit.needs_digest:
            self._digest(item, visit)
        else:
            self._process(item, visit)

    def _hand_out(self, fetchers: ThreadPoolExecutor) -> None:
        for item in self._next_batch(self._in_flight):
            self._track(fetchers.submit(self._visit, item), item)

    def _over(self) -> bool:
        """Stopping: once the requests already sent are in. Otherwise: once every
        queued URL is processed (not when nothing is in flight: every host
        may just be waiting out its delay)."""
        if self.stop_reason:
            return not self._in_flight
        if self.frontier.exhausted() and not self._in_flight:
            return True
        if not self._in_flight and self.frontier.next_ready(self._gate.clock()) is None:
            raise RuntimeError("the frontier holds URLs that no host will ever be ready for")
        return False

    def _wait_seconds(self) -> float:
        """How long the loop may wait for a finished future: until the next host
        is ready, if a fetch thread is free to take it."""
        if (self._fetching >= self.config.workers or self.stop_reason or self._one_at_a_time()
                or len(self._in_flight) >= MAX_IN_FLIGHT_PER_WORKER * self.config.workers):
            return POLL_SECONDS   # nothing could be handed out: wait for a future
        ready = self.frontier.next_ready(self._gate.clock())
        if ready is None:
            return POLL_SECONDS
        return min(POLL_SECONDS, max(0.0, ready - self._gate.clock()))

    def _track(self, future: Future, item: QueuedUrl, visit: Visit | None = None) -> None:
        """Remember what a future stands for; it reports itself on the done-queue.
        (One queue instead of wait() over every future: wait() locks each of
        them on every turn of the loop, and the lock traffic cost real CPU.)"""
        self._in_flight[future] = (item, visit)
        future.add_done_callback(self._done.put)

    def _one_at_a_time(self) -> bool:
        """One fetch thread, and a page handed out not recorded yet: no URL now."""
        return self._one_by_one and bool(self._in_flight)

    def request_stop(self, reason: str) -> None:
        """Stop handing out URLs; requests already sent finish and are recorded.
        Safe in a signal handler: the loop does the rest (``_next_batch``)."""
        self.stop_reason = self.stop_reason or reason
        # --max-pages alone lets the URLs handed out be fetched: they are
        # within the budget the user asked for.
        self._stop_now = self._stop_now or reason != "max-pages"

    # -- steps of the loop ------------------------------------------------
    def _next_batch(self, in_flight: dict) -> list[QueuedUrl]:
        limits = self.config
        fetching = self._fetching
        if len(in_flight) >= MAX_IN_FLIGHT_PER_WORKER * limits.workers:
            return []   # parsers are behind: bodies would pile up in memory
        if self._one_at_a_time():
            return []
        if limits.max_seconds and time.monotonic() - self._started >= limits.max_seconds:
            self.request_stop("max-seconds")
        if self._local_budget and self._handed_out >= limits.max_pages:
            self.request_stop("max-pages")
        if self.stop_reason:
            self._cancel_waiting()
            return []
        n = limits.workers - fetching
        if self._local_budget:
            n = min(n, limits.max_pages - self._handed_out)
            self.frontier.budget = limits.max_pages - self._handed_out
        batch = self.frontier.pop(n, self._gate.clock())
        for item in batch:
            if item.id < 0:
                self._speculation.handed_out(item)
            else:
                self._handed_out += 1
        self._fetching += len(batch)
        return batch

    def _visit(self, item: QueuedUrl) -> Visit:
        """Runs in a fetch thread: GetPage (and the digest too, without parser
        processes). The frontier reserved a request slot on the URL's host
        (or its continuation's) for it, so it never waits for the host."""
        fetched_at = utc_now()
        self._worker.item_id = item.id   # for _redirect_check, which GetPage calls in this thread
        self._worker.level = item.level
        resume = self._resume.get(item.id)
        if self._scheduled:
            result = self.fetcher.fetch(item.url, reserved=True, resume=resume,
                                        speculative=item.id < 0, ask=self._ask(item))
        else:   # a fetcher that knows no gate (tests): the slot is given back here
            try:
                result = self.fetcher.fetch(item.url)
            finally:
                self._gate.release(host_key(item.url))
        visit = Visit(result, fetched_at)
        if visit.needs_digest and self.parsers is None:
            visit = replace(visit, digest=self.digester(self._job(item, visit)))
        return visit

    def _ask(self, item: QueuedUrl) -> Ask | None:
        """What the fetch of item asks for beyond a page (a recrawl's validators)."""
        return None

    def _cancel_waiting(self) -> None:
        """A stop takes one request's time, not workers x delay: fetches still
        waiting for their host give up and their URLs stay uncommitted."""
        if self._stop_now and not self._cancelled:
            self._cancelled = True
            cancel = getattr(self.fetcher, "cancel_waiting", None)
            if cancel is not None:
                cancel()

    def _collect(self, item: QueuedUrl, future: Future, visit: Visit | None) -> Visit | None:
        """The Visit a finished future stands for: a fetch, or the digest of
        one; None for a URL to leave uncommitted (never sent, or its parser
        process died), so that --resume fetches it, or to hand out again
        (a fetch that goes on later: a retry, a redirect to another host)."""
        if visit is None:
            self._fetching -= 1
            visit = future.result()
            if item.id < 0:
                return self._speculated(item, visit)
            pending = visit.result.pending
            if pending is not None:
                self._resume[item.id] = pending
                self._handed_out -= 1
                self.frontier.requeue(item, host_key(pending.url), pending.not_before)
                return None
            self._resume.pop(item.id, None)
            self.frontier.fetched(item)
            return None if visit.result.cancelled else visit
        try:
            digest = future.result()
        except BrokenProcessPool as exc:
            self._parsers_broke(exc)
            return None
        except OSError:            # its files could not be saved: this machine's failure
            raise
        except Exception as exc:   # the digest itself failed on this page: record, go on
            digest = Digest(error=f"parse: {type(exc).__name__}: {exc}")
        if item.id < 0:            # a speculative page's links: speculate further
            if item.url in self._speculation.bounds:
                self._offer(digest.followed, self._speculation.bounds[item.url] + 1)
            return None
        return replace(visit, digest=digest)

    # -- speculative fetch-ahead (controller/speculation.py) -----------------
    def _offer(self, links, bound: int) -> None:
        """Speculate the links, of a page, that no page queued yet; ``bound`` is
        the deepest level they can have."""
        limits = self.config
        if self.shared or self.stop_reason or (limits.max_depth and bound > limits.max_depth):
            return   # a shared crawl fetches nothing it has not leased
        if limits.max_pages:
            # A page budget may end before the URLs that come first in
            # breadth-first order are even found; a page fetched for a
            # level beyond them could never be recorded.
            return
        for item in self._speculation.evict(self.frontier.current_level):
            self.frontier.unspeculate(item)
        with self._seen_lock:
            for url in links:
                if (self._speculation.wants(url) and url not in self.seen
                        and self.traps.would_admit(url, bound)):
                    self._speculation.add(self.frontier.speculate(url, host_key(url)), bound)

    def _speculated(self, item: QueuedUrl, visit: Visit) -> None:
        """A speculative fetch ended: hand it to its real item, or keep it (and
        read its links, to speculate one step further)."""
        self.frontier.fetched(item)
        if visit.result.cancelled:
            self._speculation.dropped(item)
            return None
        bound = self._speculation.bounds.get(item.url, 0) + 1   # for the links on it
        claim = self._speculation.fetched(item, visit)
        if claim is not None:
            self._adopted.append((claim, visit))
        elif visit.digest is not None:   # --processes 0: read in the fetch thread
            self._offer(visit.digest.followed, bound)
        elif visit.needs_digest:
            self._digest(item, visit)   # links only: a negative id saves no files
        return None

    def _claim(self, items: list[QueuedUrl]) -> frozenset[int]:
        """Ids of the URLs just queued whose fetch was speculative (handed
        over now, or when it ends); withdraw those still waiting."""
        taken = set()
        for item in items:
            state = self._speculation.claim(item)
            if state == "taken":
                taken.add(item.id)
            elif isinstance(state, Visit):
                taken.add(item.id)
                self._adopted.append((item, state))
            elif state is not None:
                self.frontier.unspeculate(state)
        return frozenset(taken)

    def _adopt(self) -> None:
        """Queued URLs whose response a speculative fetch got: on as if fetched now."""
        while self._redirected:
            with self._seen_lock:
                url = self._redirected.pop()
            waiting = self._speculation.forget(url)
            if waiting is not None:
                self.frontier.unspeculate(waiting)
        while self._adopted:
            item, visit = self._adopted.pop(0)
            if self.stop_reason or (self.config.max_pages and self._handed_out >= self.config.max_pages):
                continue   # stays uncommitted, as a URL never handed out (--resume fetches it)
            self._handed_out += 1
            pending = visit.result.pending
            if pending is not None:   # a redirect, a retry: the real item goes on from there
                self._resume[item.id] = pending
                self._handed_out -= 1
                self.frontier.requeue(item, host_key(pending.url), pending.not_before)
            elif not visit.result.cancelled:
                self._dispatch(item, replace(visit, digest=None))

    def _process(self, item: QueuedUrl, visit: Visit) -> None:
        """Record a page, or park it when it was fetched ahead of its level:
        its children's level is known only once the open level closes."""
        if item.level > self.frontier.current_level:
            self._parked.append((item, visit))
            if visit.digest is not None:
                self._offer(visit.digest.followed, item.level + 1)
            return
        self._record(item, visit)
        # Parked pages are all of the level after the open one: once it opens,
        # all of them are recorded (which may open the next, parking none).
        while self._parked and self._parked[0][0].level <= self.frontier.current_level:
            ready, self._parked = self._parked, []
            for parked_item, parked_visit in sorted(ready, key=lambda pair: pair[0].id):
                self._record(parked_item, parked_visit)

    def _digest(self, item: QueuedUrl, visit: Visit) -> None:
        if self.parsers is None:   # --processes 0: here (a speculative page adopted)
            self._process(item, replace(visit, digest=self.digester(self._job(item, visit))))
            return
        try:
            self._track(self.parsers.submit(self._job(item, visit)), item, visit)
        except BrokenProcessPool as exc:
            self._parsers_broke(exc)

    def _parsers_broke(self, exc: BrokenProcessPool) -> None:
        """A parser process died (killed, out of memory): every page it and
        the other parsers held is lost to this run, not to the crawl."""
        self.parser_failure = self.parser_failure or f"{type(exc).__name__}: {exc}"
        self.request_stop("parser-died")

    @staticmethod
    def _job(item: QueuedUrl, visit: Visit) -> DigestJob:
        result = visit.result
        return DigestJob(item.id, result.final_url, result.body, result.text,
                         robots_tags=result.robots_tags, refresh=result.headers.get("refresh"))

    def _record(self, item: QueuedUrl, visit: Visit) -> None:
        """Children are journaled before the page's index row, the commit mark."""
        result, digest = visit.result, visit.digest or Digest()
        if self.shared is not None:
            settled = self._commit_shared(item, visit, digest)
            if settled is None or item.id in self._local_ids:
                # Its lease went to another worker, which records it; or this
                # worker, reclaimed while alive and given it again, has its row.
                return
            digest, verdict, new_count = settled
        else:
            skipped_before, cuts_before = Counter(self.tally.skipped), Counter(self.trap_cuts)
            digest, verdict, new_count = self._commit_local(item, digest)
            # What this page did not queue, by reason: journaled before its
            # row, so that a resumed crawl counts it as if never interrupted.
            self.journal.skipped(item.id, dict((self.tally.skipped - skipped_before)
                                               + Counter(digest.skipped)),
                                 dict(self.trap_cuts - cuts_before))
        original = verdict.duplicate_of
        self.in_links.update(digest.links)   # every target, known yet or not: order-free
        error = result.error or digest.error
        if error and item.level == 0:
            self.seeds_failed.append({"url": item.url, "error": error})
        self.trace.fetch(item.level, item.id, result.status, len(result.body),
                         result.elapsed_ms, item.url, error)
        if self.shared is None:
            self._archive(item, result, digest, original)
        row = _row(item, visit, digest, new_count, verdict)
        if self._ordered:   # the level now; the final one is filled in at the end
            row["level"] = row["level_at_fetch"] = self.frontier.levels[item.id]
        self.store.add_row(row)
        if self.shared is not None:
            self._local_ids.add(item.id)
            self.frontier.written(item.id)
        self.tally.count_page(item.level, error, digest, new_count, len(result.body))
        self.tally.count_content(item.level, original is not None, verdict.near_duplicate_of is not None)
        self.frontier.done(item)
        self._close_levels()

    def _join_shared(self) -> None:
        """Join the shared crawl: whatever this worker id held before (it was
        killed) goes back to the queue at once, and rows it committed but
        did not write are written now."""
        freed, rows = self.frontier.join()
        (self.config.out / STATE_DIR / WORKER_ID_FILE).write_text(self.shared.worker + "\n",
                                                                 encoding="utf-8")
        if self.resumed:
            self.trace.resume(self.tally.urls, len(self.frontier))
        else:
            self.trace.start(self.config.seeds)
        for item_id in sorted(set(rows) - self._local_ids):
            self._recover_row(*rows[item_id])
        for item_id in rows:
            self.frontier.written(item_id)
        self.tally.skipped["released-on-join"] += freed

    def _recover_row(self, new: int, original: int | None, row_json: str) -> None:
        row = json.loads(row_json)
        row["new_links"] = new
        if original is not None:
            row["duplicate_of"] = original
            digest = self._as_duplicate(None, Digest(html_path=row["html_path"],
                                                     text_path=row["text_path"],
                                                     body_md5=row["body_md5"]), original)
            row["html_path"], row["text_path"] = digest.html_path, digest.text_path
        self.trace.fetch(row["level"], row["id"], row["status"] or 0, row["bytes"],
                         row["elapsed_ms"], row["url"], row["error"])
        self.store.add_row(row)
        self.tally.count_row({key: "" if value is None else str(value) for key, value in row.items()})

    def _commit_local(self, item: QueuedUrl, digest: Digest):
        """Content verdict and children, from this process's own memory."""
        verdict = self._judge_content(item, digest)
        original = verdict.duplicate_of
        if original is not None:
            digest = self._as_duplicate(item, digest, original)
        new = []
        if self._ordered:
            new = self._order_links(item, digest, duplicate=original is not None)
        elif original is None:
            self._count_nofollow(digest)
            links = digest.followed
            if self._expands(item):
                new = self._enqueue(links, item.level + 1, item.id)
            else:
                self._count_beyond_depth(links)
        self.store.add_edges(item.id, item.url, digest.links)
        queued_before = self._children_before.pop(item.id, 0)
        # Fetched again after a stop: the children it had journaled then were
        # new to the crawl, not links seen before.
        self.tally.skipped["seen"] -= queued_before
        return digest, verdict, len(new) + queued_before

    def _order_links(self, item: QueuedUrl, digest: Digest, duplicate: bool) -> list[QueuedUrl]:
        """Another order than bfs: every new link is queued (one beyond
        --max-depth waits in the frontier for a shorter path), known ones
        may lower levels, and the order hears of the page."""
        frontier, order = self.frontier, self.frontier.order
        if not duplicate:
            self._count_nofollow(digest)
        followed = digest.followed
        links = list(zip(followed, digest.link_relevance or (0.0,) * len(followed)))
        wanted = [url for url, score in links if order.admits(score, digest.relevance)]
        new = [] if duplicate else self._enqueue(wanted, frontier.levels[item.id] + 1, item.id)
        known = [(frontier.id_of(url), score) for url, score in links]
        targets, anchors = [t for t, _ in known if t is not None], [s for t, s in known if t is not None]
        started = time.thread_time()
        frontier.linked(item.id, targets)
        if not duplicate:
            order.page(item, targets, anchors, digest.relevance)
        order.cpu_seconds += time.thread_time() - started   # what ordering costs
        self.journal.scored(ScoredPage(item.id, duplicate, digest.relevance, targets, anchors))
        return new

    def _commit_shared(self, item: QueuedUrl, visit: Visit, digest: Digest):
        """Content verdict, children and commit in one Redis script; the row
        as it stands before the verdict goes with it, so that a worker killed
        right after can write it when it comes back (_recover_rows). None if
        the lease was lost: another worker fetches the page again."""
        # Written before the commit, and ignored unless a row follows: a worker
        # killed just after the commit still has all of the page but its row,
        # which Redis keeps for it. (No WARC revisit records: the original
        # may be in another worker's archive.)
        self.store.add_edges(item.id, item.url, digest.links)
        self._archive(item, visit.result, digest, None)
        links = [(url, *_trap_keys(url)) for url in digest.followed]
        commit = self.frontier.commit(item, digest.content_md5, links, self._expands(item),
                                      _row(item, visit, digest, 0, NO_VERDICT))
        if not commit.accepted:
            self.tally.skipped["lease-lost"] += 1
            return None
        for reason, count in commit.skipped.items():
            self.tally.skipped[reason] += count
        if commit.duplicate_of is None:   # a duplicate's links are not queued anyway
            self._count_nofollow(digest)
        self._trap_cut(commit.cut, item.level + 1)
        verdict = self._shared_verdict(item, digest, commit.duplicate_of)
        if verdict.duplicate_of is not None:
            digest = self._as_duplicate(item, digest, verdict.duplicate_of)
        return digest, verdict, commit.new_count

    def _shared_verdict(self, item: QueuedUrl, digest: Digest, original: int | None) -> ContentVerdict:
        """Exact duplicates across all workers (Redis); near ones among this
        worker's own pages only (a SimHash index is not shared)."""
        if original is not None:
            return ContentVerdict(original, None, None)
        near = self._judge_content(item, digest)
        return ContentVerdict(None, near.near_duplicate_of, near.hamming)

    # -- content: duplicates, extraction, WARC ----------------------------
    def _judge_content(self, item: QueuedUrl, digest: Digest) -> ContentVerdict:
        if self.contents is None or not digest.content_md5:
            return NO_VERDICT
        return self.contents.check(item.id, digest.content_md5, digest.simhash)

    def _as_duplicate(self, item: QueuedUrl, digest: Digest, original: int) -> Digest:
        """A duplicate shares its original's text file, and its html file only
        when the bytes are equal too: a row's html_path always holds the bytes
        its own URL served (the same article in another encoding or markup is
        text-equal but not byte-equal). The parser process saved both files
        before the Controller, which holds the content memory, could judge."""
        out = self.config.out
        (out / digest.text_path).unlink(missing_ok=True)
        html_path = digest.html_path
        original_html = f"pages/{original}.html"
        original_file = out / original_html
        if original_file.is_file() and body_md5(original_file.read_bytes()) == digest.body_md5:
            (out / html_path).unlink(missing_ok=True)
            html_path = original_html
        return replace(digest, html_path=html_path, text_path=f"text/{original}.txt",
                       extracted=None)

    def _archive(self, item: QueuedUrl, result: FetchResult, digest: Digest,
                 original: int | None) -> None:
        """Extraction rows and WARC records go out before the index row (the
        commit mark), so a resumed crawl can drop those of uncommitted pages."""
        if self.extracted is not None and digest.extracted is not None:
            self.extracted.add(item.id, result.final_url or item.url, digest.extracted)
            self.extraction_tally.count(digest.extracted)
        if self.warc is not None and result.exchanges:
            revisit = self.warc.response_of(original) if original is not None else None
            self.warc.write_page(result.exchanges, page_id=item.id, revisit_of=revisit)

    # -- URL_Filter and URL_List ------------------------------------------
    def _count_nofollow(self, digest: Digest) -> None:
        """A nofollow page's links are not queued (Digest.followed), but
        counted, and still in edges.csv: the page does link to them."""
        if kept_out := len(digest.links) - len(digest.followed):
            self.tally.skipped["nofollow"] += kept_out

    def _expands(self, item: QueuedUrl) -> bool:
        return not self.config.max_depth or item.level < self.config.max_depth

    def _enqueue(self, urls, level: int, parent_id: int | None) -> list[QueuedUrl]:
        items: list[QueuedUrl] = []
        with self._seen_lock:
            for url in urls:
                reason = self.traps.admit(url, level) if self.seen.add(url) else "seen"
                if reason:
                    self.tally.skipped[reason] += 1
                    if reason == "pattern-depth":
                        self._trap_cut((pattern_of(url),), level)
                else:
                    items.append(QueuedUrl(self.frontier.next_id + len(items), url, level, parent_id))
            self.journal.queued(items)
        self.frontier.push(items, taken=self._claim(items))
        return items

    def _trap_cut(self, patterns, level: int) -> None:
        """Count the trap guard's refusals by pattern; the first of each
        pattern is a TRAP line (log once, count always)."""
        for pattern in patterns:
            self.trap_cuts[pattern] += 1
            if self.trap_cuts[pattern] == 1:
                self.trace.trap(level, pattern)

    def _count_beyond_depth(self, urls) -> None:
        """Links of a page at --max-depth that no page before had: URLs the
        limit kept out. Marking them seen is safe: every page processed from
        now on is at the same depth, so none of them could ever be queued."""
        with self._seen_lock:
            self.tally.skipped["depth"] += sum(map(self.seen.add, urls))

    def _redirect_check(self, url: str) -> str | None:
        """Called by GetPage for each redirect hop: the target must pass URL_Filter
        and be new, so a page reached by a redirect is still fetched once."""
        target, refusal = self._judged(url)
        if refusal:
            return refusal
        if self.shared is not None:
            # Marked seen under this URL's lease: if the lease is lost, the mark goes too.
            verdict = self.frontier.mark_seen(self._worker.item_id, target, *_trap_keys(target))
            return SHARED_MARKS[verdict]
        with self._seen_lock:
            if not self.seen.add(target):
                return "target already seen"
            if target in self._speculation:
                # The redirect wins, as it would without speculation (nothing
                # may be lost: the page that linked to it may turn out a
                # duplicate whose links are not queued). A speculative fetch
                # of it not started yet is withdrawn by the loop.
                self._redirected.append(target)
            self.journal.seen(self._worker.item_id, target)
            return self.traps.admit(target, self._worker.level)

    def _judged(self, url: str) -> tuple[str | None, str | None]:
        """A redirect target normalized, and why URL_Filter refuses it (None: it may go)."""
        target = self.digester.normalize(url, None)
        if target is None:
            return None, "not http(s)"
        reason = self.rules.reject_reason(target)
        return target, (f"out of {reason} rules" if reason else None)

    def _restore_tallies(self, previous: PreviousCrawl) -> None:
        """Counters, seed failures, content memory and in-links from the rows on disk."""
        for row in previous.rows:
            self.tally.count_row(row)
            if row["level"] == "0" and row["error"]:
                self.seeds_failed.append({"url": row["url"], "error": row["error"]})
            if self.contents is not None and row["content_md5"] and not row["duplicate_of"]:
                self.contents.remember(int(row["id"]), row["content_md5"],
                                       int(row["simhash"], 16) if row["simhash"] else None)
        self.in_links.update(previous.link_targets)
        self._local_ids = previous.done_ids
        self.restored = Restored(self.tally.urls, self.tally.pages, self.tally.bytes)

    def _restore(self, previous: PreviousCrawl, journal: Replay) -> None:
        """Rebuild frontier, seen-set, trap counters and tallies from the disk."""
        journal = restore_frontier(self.frontier, self.journal.path, journal, previous)
        done = previous.done_ids
        level_of = {item.id: item.level for item in journal.items}
        marks = [(level_of[source], url) for source, url in journal.seen_marks if source in done]
        # In level order, as they were first queued: the trap guard's pattern
        # rule remembers the level each pattern first appeared at.
        for level, url in sorted([(item.level, item.url) for item in journal.items] + marks,
                                 key=lambda pair: pair[0]):
            self.seen.add(url)
            self.traps.admit(url, level)
        for url in previous.beyond_depth:   # as _count_beyond_depth marked them
            self.seen.add(url)
        for source, counts in journal.skipped:
            if source is None or source in done:
                counts = dict(counts)
                self.trap_cuts.update(counts.pop(PATTERNS_KEY, {}))
                self.tally.skipped.update(counts)
        self._children_before = Counter(item.parent_id for item in journal.items
                                        if item.parent_id is not None and item.parent_id not in done)
        self._handed_out = len(done)
        flags = self.frontier.level_flags
        for k in range(self.frontier.finished_levels):
            self.tally.level(k).m = flags[k + 1] if k + 1 < len(flags) else len(self.frontier)
        self._levels_closed = self.frontier.finished_levels

    def _report_progress(self) -> None:
        now = time.monotonic()
        if self.on_progress is None or now - self._last_progress < PROGRESS_SECONDS:
            return
        self._last_progress = now
        flags = self.frontier.level_flags
        level = min(self.frontier.current_level, len(flags))   # an --order's: no level closes
        start = flags[level - 1] if level else 0
        done_before = sum(self.tally.level(k).urls for k in range(level))
        self.on_progress(Snapshot(
            elapsed=now - self._started, level=level,
            level_done=self.tally.urls - done_before,
            level_size=(flags[level] if level < len(flags) else len(self.frontier)) - start,
            urls=self.tally.urls, pages=self.tally.pages, errors=self.tally.errors,
            bytes=self.tally.bytes, queue_total=len(self.frontier),
            ahead=len(self._parked) + len(self._speculation.kept)))

    # -- levels and the end -----------------------------------------------
    def _close_levels(self) -> None:
        flags = self.frontier.level_flags
        while self._levels_closed < self.frontier.finished_levels:
            k = self._levels_closed
            self._levels_closed += 1
            level = self.tally.level(k)
            level.m = flags[k + 1] if k + 1 < len(flags) else len(self.frontier)
            self.trace.level(k, level.urls, level.new_urls, level.m)
            self.journal.sync()
            self.store.sync()
            if self.on_level:
                self.on_level(k, level)

    def speculation_stats(self) -> dict:
        return self._speculation.stats()

    def stop_detail(self, reason: str) -> str:
        """The stop reason in words, with what the limit left out, and the
        traps the pattern rule stopped following, whatever ended the crawl."""
        if reason == "max-depth":
            detail = (f"max-depth: {self.tally.skipped['depth']} URLs beyond depth "
                      f"{self.config.max_depth}")
        elif reason == "parser-died":
            detail = f"parser-died: {self.parser_failure}"
        elif reason == "local-failure":
            detail = self.local_failure.detail()
        else:
            detail = reason
        return detail + trap_note(self.trap_patterns())

    def trap_patterns(self) -> dict[str, int]:
        """URL pattern -> links the pattern rule did not follow, most first."""
        return dict(self.trap_cuts.most_common(TRAP_PATTERNS_KEPT))

    def _finish(self) -> dict:
        if self.shared is not None:
            self.frontier.leave()   # what it still holds goes to the others now
            if not self.stop_reason and self.frontier.limit_reached:
                self.stop_reason = "max-pages"
        if self._ordered:   # found only beyond --max-depth, by every path
            self.tally.skipped["depth"] += self.frontier.deferred
        # Every file whole on disk before END and stats.json say how the
        # crawl ended: a local failure on the way is the end's reason.
        self._locally(self.store.close)
        for writer in (self.extracted, self.warc):
            if writer is not None:
                self._locally(writer.close)
        self._locally(self.journal.close)
        if not self.local_failure:   # in_links first: END and stats.json say the crawl is complete
            self._locally(self.store.fill_in_links, self.in_links,
                          lambda url: self.digester.normalize(url, None),
                          levels=self.frontier.levels if self._ordered else None)
        reason = self.stop_reason or ("max-depth" if self.tally.skipped["depth"] else "queue-empty")
        if self._ordered and not self.local_failure:   # the table by final level, not the level a URL was queued at
            self.tally.recount_levels(self.store.rows())
        elapsed = time.monotonic() - self._started   # as END says: the files are closed by now
        stats = self._stats(reason, elapsed)
        self._locally(self.trace.end, stats["stop_reason"], self.tally.urls, elapsed)
        self._locally(self.store.write_stats, stats)
        self._locally(self.trace.close)
        self.fetcher.close()
        if self.local_failure:   # stats.json itself may be what could not be written
            stats["local_failure"] = self.local_failure.line()
        return stats

    def _stats(self, reason: str, elapsed: float) -> dict:
        if self.local_failure:
            self.stop_reason = reason = "local-failure"
        stats = build_stats(self, reason, elapsed)
        if self._ordered:
            stats["order"] = {**self.frontier.order.stats(), "level_corrections":
                              self.frontier.corrections, "deferred_beyond_depth": self.frontier.deferred}
        if self.sitemap_stats is not None:
            stats["sitemaps"] = self.sitemap_stats
        if self.shared is not None:   # this worker's part of a shared crawl
            stats["shared"] = {"crawl_id": self.shared.crawl.crawl_id, "worker": self.shared.worker}
        if self.local_failure:
            stats["local_failure"] = self.local_failure.line()
        return stats

    def _locally(self, step, *args, **kwargs) -> None:
        """One step of the end; a local failure in it is remembered (the
        first one is the crawl's) and the other steps still run."""
        try:
            step(*args, **kwargs)
        except OSError as exc:
            self.local_failure = self.local_failure or LocalFailure.of(exc, self.config.out)


# What RedisFrontier.mark_seen answers -> what a redirect check returns.
SHARED_MARKS = {1: None, 0: "target already seen", 2: "trap limit full",
                -1: "lease lost to another worker"}


def _trap_keys(url: str) -> tuple[str, str, str]:
    """(politeness host, path if the URL has a query, pattern or ''): what
    the shared crawl's trap limits count, as urlfilter.TrapGuard counts them."""
    path, has_query, _ = url.partition("?")
    try:
        host = host_key(url)
    except ValueError:
        host = ""
    return host, path if has_query else "", pattern_of(url) or ""


def _finished(done: SimpleQueue, timeout: float) -> list[Future]:
    """Futures that finished: wait up to ``timeout`` for one, then take all there are."""
    try:
        futures = [done.get(timeout=timeout)]
    except Empty:
        return []
    while True:
        try:
            futures.append(done.get_nowait())
        except Empty:
            return futures


def _row(item: QueuedUrl, visit: Visit, digest: Digest, new_links: int,
         verdict: ContentVerdict) -> dict:
    result, saved = visit.result, bool(digest.html_path)
    return {
        "id": item.id, "url": item.url, "final_url": result.final_url, "level": item.level,
        "parent_id": item.parent_id, "status": result.status or "",
        "content_type": result.content_type, "encoding": result.encoding,
        "bytes": len(result.body), "text_chars": digest.text_chars if saved else "",
        "filtered_ratio": digest.filtered_ratio if saved else "",
        "out_links": len(digest.links), "new_links": new_links, "fetched_at": visit.fetched_at,
        "elapsed_ms": round(result.elapsed_ms, 1), "html_path": digest.html_path,
        "text_path": digest.text_path, "error": result.error or digest.error,
        "title": digest.title, "content_md5": digest.content_md5, "body_md5": digest.body_md5,
        "simhash": "" if digest.simhash is None else f"{digest.simhash:016x}",
        "duplicate_of": verdict.duplicate_of, "near_duplicate_of": verdict.near_duplicate_of,
        "hamming": verdict.hamming, "level_at_fetch": item.level,
        "relevance": digest.relevance, **validators(result.headers), "visits": 1, "changes": 0,
        "via": _via(item), "robots_directives": digest.robots,
    }


def _via(item: QueuedUrl) -> str:
    """How the crawl came to the URL: only seeds and sitemap URLs have no parent."""
    if item.parent_id is not None:
        return "link"
    return "seed" if item.level == 0 else "sitemap"


def validators(headers: dict[str, str]) -> dict[str, str]:
    """The final response's ETag and Last-Modified: what a revisit sends back."""
    return {"etag": headers.get("etag", ""), "last_modified": headers.get("last-modified", "")}

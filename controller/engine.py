"""Controller: the level-tracked breadth-first crawl loop.

The loop (``Crawl._loop``) is the design paper's flow chart: take URLs from
URL_List, let worker threads GetPage them, let parser processes digest the
HTML (TextFilter + GetURLs + the stateless half of URL_Filter, see
digest.py), and hand each page to the commit, which asks admission to
queue its new links and records the page; repeat until a stop condition
holds. Every piece of crawl state (seen-set, frontier, index, counters) is
touched by this thread alone, apart from the seen-set check of redirect
targets, which takes admission's lock.

Where a URL goes: admission (controller/admission.py) turns seeds, sitemap
URLs, a page's links and redirect targets into queued items; the frontier
(urllist, known here by its protocol alone) hands them out host by host
and level by level; a fetch thread fetches one; a parser process digests
it; a page fetched ahead of its level is parked until its level opens
(its children's level is known only then); then the commit
(controller/commit.py) makes it durable in its named steps, the index row
last.

The loop knows no crawl mode. The wiring (controller/wiring.py) chooses a
``Mode`` for it: which admission and which commit. One machine in
breadth-first order, one machine in another --order, one worker of a crawl
shared through Redis (controller/shared.py), or one pass of revisits
(controller/revisits.py): the same loop, with another admission and
commit.

Content dedup: a page whose text an earlier page already had (same MD5 of
its normalized text) is recorded with ``duplicate_of``, its links are not
queued and it keeps no file the first copy has (its text file is the first
copy's; its html file too, when the bytes are equal);
with ``--content-dedup near`` a page within ``--simhash-distance`` of an
earlier one is marked ``near_duplicate_of`` but kept and followed, because
"near" is a threshold and losing a distinct page to a false match costs
more than keeping a copy (index.csv lets users drop them afterwards).

Speculative fetch-ahead (controller/speculation.py): a URL found on a
parked page may be fetched before it is queued, when its host has nothing
else to do; the frontier hands such items out with the others, and the
loop tells them apart once, when they are handed out.
"""
from __future__ import annotations

import threading
import time
from collections import Counter
# BrokenExecutor, not process.BrokenProcessPool: the parser pool's module
# (and multiprocessing) loads only when the pool starts.
from concurrent.futures import BrokenExecutor, Future, ThreadPoolExecutor
from queue import Empty, SimpleQueue
from dataclasses import dataclass, replace

from controller.commit import Visit
from controller.config import CrawlConfig
from controller.speculation import Speculation
from controller.resume import (JOURNAL_FILE, STATE_DIR, WARC_FILE, PreviousCrawl, load_previous,
                               prepare_out_dir, save_settings, settings_of)
from controller.stats import TRAP_PATTERNS_KEPT, trap_note
from controller import pace, wiring
from controller.digest import Digest, DigestPool
from controller.store import PageStore
from controller.tally import Snapshot, Tally
from controller.trace import TraceLog, utc_now
from controller.extracted import ExtractedWriter, ExtractionTally
from controller.localfailure import LocalFailure, LocalFailureError
from getpage import Fetcher, host_key
from urllist import QueuedUrl
from urllist.journal import QueueJournal

POLL_SECONDS = 0.25  # how often the loop looks at stop requests while waiting
# The parser processes start once no request is in flight and none is due
# for this long (Crawl._start_parsers): ~5 ms of the loop's to spawn them.
SPAWN_QUIET_SECONDS = 0.02
PROGRESS_SECONDS = 0.2  # a progress display is updated at most this often
PACE_SECONDS = 1.0      # how often the hosts' paces are looked at for a progress note
PACE_NOTES = 5          # hosts named for their Crawl-delay, at most
MAX_IN_FLIGHT_PER_WORKER = 4  # fetched pages waiting for a parser, per fetch thread, at most


@dataclass(frozen=True)
class Restored:
    """Totals of the earlier runs of a resumed crawl (rates cover this run only)."""
    urls: int = 0
    pages: int = 0
    bytes: int = 0


class Crawl:
    """One crawl into config.out; ``resume=True`` continues the crawl found
    there; ``mode`` (controller.wiring.Mode): its admission and commit, else
    the wiring's choice for config and ``shared``."""

    def __init__(self, config: CrawlConfig, *, fetcher=None, on_level=None, on_progress=None,
                 resume: bool = False, overwrite: bool = False, shared=None, mode=None) -> None:
        mode = mode or wiring.mode(config, shared)
        # A finished crawl resumed: nothing to do, and no file is touched
        # (not even the lock's); run() gives its stats as they are.
        self.finished = mode.finished(config) if resume else None
        if self.finished is not None:
            return
        # One crawl per directory, held until run() ends (or this process does).
        self.lock = prepare_out_dir(config, resume, overwrite)
        self.shared = shared   # a controller.shared.Shared: this process is one worker of many
        try:
            self._open(config, fetcher, resume, mode)
        except OSError as exc:   # a file of the crawl cannot be read or written (a full disk)
            self.lock.release()
            raise LocalFailureError(LocalFailure.of(exc, config.out)) from None
        except BaseException:
            self.lock.release()
            raise
        self.on_level = on_level          # called with (level, LevelTally) when a level ends
        self.on_progress = on_progress    # called with a Snapshot a few times a second at most

    def _open(self, config: CrawlConfig, fetcher, resume: bool, mode) -> None:
        # Read (and tidy) what a stopped crawl left before any file is reopened.
        previous = load_previous(config.out, config.max_depth, mode.pending(config)) if resume else None
        self.config = config
        self.resumed = resume
        self.rules = wiring.url_rules(config)
        self.traps = wiring.trap_guard(config)
        self.trap_cuts: Counter[str] = Counter()   # pattern -> links --max-pattern-depth skipped
        self.seen = wiring.url_seen(config, self.shared)
        self.store = PageStore(config.out, append=resume)   # first: a bad --out fails before any lookup
        self.gate = getattr(fetcher, "gate", None) or wiring.politeness(config, self.shared)
        self.fetcher = fetcher or wiring.fetcher(config, self.gate, self._redirect_check,
                                                 self.shared)
        self._scheduled = isinstance(self.fetcher, Fetcher)
        self.frontier = wiring.frontier(config, self.gate, self.shared, self.store.sync,
                                        self._wake_up, (self.claim, self._forget_speculated))
        self.digester = wiring.digester(config, self.rules)
        self.contents = wiring.content_seen(config)
        self._open_content_files(previous)
        self.trace = TraceLog(config.out / "trace.log", append=resume)
        self.journal = QueueJournal(config.out / STATE_DIR / JOURNAL_FILE)
        self.tally = Tally()
        self.admission, self.commit = mode.admission(self), mode.commit(self)
        self._init_loop_state(config)
        if previous:
            self._restore_tallies(previous)
            self.commit.restore(previous)
        else:
            save_settings(config)

    def _init_loop_state(self, config: CrawlConfig) -> None:
        """What the loop keeps while it runs: stops, counts, fetches in flight."""
        self._last_progress = 0.0
        self._pace_looked = float("-inf")
        self._pace_said: set[str] = set()
        self._pace_named = 0
        self.stop_reason = ""
        self.parser_failure = ""     # why the parser processes broke, if they did
        self.local_failure: LocalFailure | None = None   # a crawl file could not be written
        self.seeds_failed: list[dict] = []   # seeds whose row has an error
        self._stop_now = False       # a stop that does not wait for the URLs handed out
        self._cancelled = False      # fetches waiting for their host were told to give up
        self.fetching_now = threading.local()   # a fetch thread's item: its redirect checks' source
        self.handed_out = 0
        self._local_budget = bool(config.max_pages) and self.admission.local_budget
        # One fetch thread: the next URL is chosen once the page before it is
        # recorded, so that every run (and a resumed one) chooses from the
        # same state: the same fetch order, under every order.
        self._one_by_one = config.workers == 1 and self.admission.repeatable
        self._fetching = 0             # URLs in fetch threads
        self._resume: dict = {}        # id -> Continuation of a fetch that goes on later
        self._parked: list[tuple[QueuedUrl, Visit]] = []   # fetched ahead of their level
        self.speculation = Speculation(wiring.SPECULATE_PER_WORKER * config.workers
                                       if self.admission.fetches_ahead else 0)
        self._adopted: list[tuple[QueuedUrl, Visit]] = []  # queued URLs whose fetch was speculative
        self.levels_closed = 0
        self.restored = Restored()     # what earlier runs of a resumed crawl had done
        self.started = 0.0
        self.sitemap_stats: dict | None = None   # what --sitemaps / --sitemap found
        self.parsers: DigestPool | None = None
        self._read_here = False   # a page was read in a fetch thread (no parser had started)
        # fetching or digesting: future -> (item, its Visit once fetched, fetched ahead?)
        self._in_flight: dict[Future, tuple[QueuedUrl, Visit | None, bool]] = {}
        self._done: SimpleQueue[Future | None] = SimpleQueue()   # futures that finished

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

    def _restore_tallies(self, previous: PreviousCrawl) -> None:
        """Counters, seed failures and content memory from the rows on disk."""
        for row in previous.rows():
            self.tally.count_row(row)
            if row["level"] == "0" and row["error"]:
                self.seeds_failed.append({"url": row["url"], "error": row["error"]})
            if self.contents is not None and row["content_md5"] and not row["duplicate_of"]:
                self.contents.remember(int(row["id"]), row["content_md5"],
                                       int(row["simhash"], 16) if row["simhash"] else None)
        self.restored = Restored(self.tally.urls, self.tally.pages, self.tally.bytes)

    def _redirect_check(self, url: str) -> str | None:
        """GetPage's question for each redirect hop (in a fetch thread): admission's."""
        return self.admission.redirect_check(url)

    # -- the loop ---------------------------------------------------------
    def run(self) -> dict:
        if self.finished is not None:
            return self.finished
        self.started = time.monotonic()
        try:
            try:
                with ThreadPoolExecutor(self.config.workers, thread_name_prefix="getpage") as fetchers:
                    self._run_loop(fetchers)
            finally:
                if self.parsers:   # they end while the crawl's files are finished
                    self.parsers.stop()
            return self.commit.finish()
        finally:
            if self.parsers:   # also when the loop raises (a second Ctrl-C): no worker outlives us
                self.parsers.close()
            self.lock.release()   # last: whoever takes it next finds complete files

    def _run_loop(self, fetchers: ThreadPoolExecutor) -> None:
        """The loop, stopped at once by a local failure: every file the loop
        thread touches is local, and a fetch never raises for the network
        (getpage's contract), so an OSError here is this machine's."""
        try:
            self.admission.begin()
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

    def _loop(self, fetchers: ThreadPoolExecutor) -> None:
        """The paper's flow chart: hand out URLs, fetch, digest, record, until done."""
        while not self._over():
            self._hand_out(fetchers)
            self._adopt()           # URLs a shared crawl's frontier gave this worker, fetched ahead
            self._commit_parked()   # the open level may have closed elsewhere (a shared crawl)
            self._report_progress()
            self._start_parsers()
            for future in _finished(self._done, self._wait_seconds()):
                item, visit, ahead = self._in_flight.pop(future)
                fetch_ended = visit is None
                visit = self._collect(item, future, visit, ahead)
                if fetch_ended and not self._one_by_one and self._hand_out_first(item, visit):
                    self._hand_out(fetchers)   # its host may go on now: before any recording
                if visit is not None:
                    self._dispatch(item, visit)
                self._adopt()
                self._hand_out_due(fetchers)

    def _start_parsers(self) -> None:
        """The parser processes start at the loop's first quiet moment, after
        the first requests: a process's start (an interpreter and its
        imports, a tenth of a second of a core) slowed them, and the servers
        answering them, on a machine of two cores. Quiet: nothing in flight
        and no host due for SPAWN_QUIET_SECONDS; or pages coming in (until a
        parser has started, they are read in the fetch threads)."""
        if self.parsers is not None or not self.config.processes or self.stop_reason:
            return
        if not self._read_here:
            if self._in_flight:
                return
            now = self.gate.clock()
            due = self.frontier.next_ready(now)
            if due is not None and due - now < SPAWN_QUIET_SECONDS:
                return
        self.parsers = DigestPool(self.digester, self.config.processes)

    def _hand_out_due(self, fetchers: ThreadPoolExecutor) -> None:
        """A host whose time came while pages were being recorded goes now,
        not after the rest of them: every wait adds to its next delay. (A
        commit that hands the next URLs out itself has done so already.)"""
        if not self.commit.hand_out_first:
            return
        now = self.gate.clock()
        ready = self.frontier.next_ready(now)
        if ready is not None and ready <= now:
            self._hand_out(fetchers)

    def _hand_out_first(self, item: QueuedUrl, visit: Visit | None) -> bool:
        """Whether a fetch that just ended frees its thread for the next URL
        before its page is recorded: yes, unless the page is recorded now and
        its commit hands the next URLs out itself (a shared crawl's)."""
        return (self.commit.hand_out_first or visit is None
                or self.commit.wants_digest(item, visit))

    def _dispatch(self, item: QueuedUrl, visit: Visit) -> None:
        """A fetched page goes to a parser if the commit wants it read; else it is processed."""
        if self.commit.wants_digest(item, visit):
            self._digest(item, visit)
        else:
            self._process(item, visit)

    def _hand_out(self, fetchers: ThreadPoolExecutor) -> None:
        for item, ahead in self._next_batch():
            self._track(fetchers.submit(self._visit, item, ahead), item, ahead=ahead)

    def _over(self) -> bool:
        """Stopping: once the requests already sent are in. Otherwise: once every
        queued URL is processed (not when nothing is in flight: every host
        may just be waiting out its delay)."""
        if self.stop_reason:
            return not self._in_flight
        if self.frontier.exhausted() and not self._in_flight:
            return True
        if not self._in_flight and self.frontier.next_ready(self.gate.clock()) is None:
            raise RuntimeError("the frontier holds URLs that no host will ever be ready for")
        return False

    def _wait_seconds(self) -> float:
        """How long the loop may wait for a finished future: until the next host
        is ready, if a fetch thread is free to take it."""
        if not self._in_flight and self.frontier.exhausted():
            return 0.0   # the last pop heard the crawl end (a shared crawl's): end now
        if (self._fetching >= self.config.workers or self.stop_reason or self._one_at_a_time()
                or len(self._in_flight) >= MAX_IN_FLIGHT_PER_WORKER * self.config.workers):
            return POLL_SECONDS   # nothing could be handed out: wait for a future
        ready = self.frontier.next_ready(self.gate.clock())
        if ready is None:
            return POLL_SECONDS
        return min(POLL_SECONDS, max(0.0, ready - self.gate.clock()))

    def _wake_up(self) -> None:
        """From another thread: the frontier may have URLs now (the loop's wait ends)."""
        self._done.put(None)

    def _track(self, future: Future, item: QueuedUrl, visit: Visit | None = None,
               ahead: bool = False) -> None:
        """Remember what a future stands for; it reports itself on the done-queue.
        (One queue instead of wait() over every future: wait() locks each of
        them on every turn of the loop, and the lock traffic cost real CPU.)"""
        self._in_flight[future] = (item, visit, ahead)
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
    def _next_batch(self) -> list[tuple[QueuedUrl, bool]]:
        """URLs to fetch now, each with whether it is fetched ahead of being queued."""
        limits = self.config
        if len(self._in_flight) >= MAX_IN_FLIGHT_PER_WORKER * limits.workers:
            return []   # parsers are behind: bodies would pile up in memory
        if self._one_at_a_time():
            return []
        if limits.max_seconds and time.monotonic() - self.started >= limits.max_seconds:
            self.request_stop("max-seconds")
        if self._local_budget and self.handed_out >= limits.max_pages:
            self.request_stop("max-pages")
        if self.stop_reason:
            self._cancel_waiting()
            return []
        n = limits.workers - self._fetching
        if self._local_budget:
            n = min(n, limits.max_pages - self.handed_out)
            self.frontier.budget = limits.max_pages - self.handed_out
        batch = [(item, self.speculation.handed_out(item))
                 for item in self.frontier.pop(n, self.gate.clock())]
        self.handed_out += sum(not ahead for _, ahead in batch)
        self._fetching += len(batch)
        return batch

    def _visit(self, item: QueuedUrl, ahead: bool) -> Visit:
        """Runs in a fetch thread: GetPage (and the digest too, without parser
        processes). The frontier reserved a request slot on the URL's host
        (or its continuation's) for it, so it never waits for the host."""
        fetched_at = utc_now()
        self.fetching_now.item_id = item.id   # for redirect checks, which GetPage makes in this thread
        self.fetching_now.level = item.level
        resume = self._resume.get(item.id)
        if self._scheduled:
            result = self.fetcher.fetch(item.url, reserved=True, resume=resume,
                                        speculative=ahead, ask=self.commit.ask(item))
        else:   # a fetcher that knows no gate (tests): the slot is given back here
            try:
                result = self.fetcher.fetch(item.url)
            finally:
                self.gate.release(host_key(item.url))
        visit = Visit(result, fetched_at)
        # While no parser process has started, the first pages are read here:
        # the links of the seeds decide when their hosts' next requests can go.
        if not (self.parsers and self.parsers.started) and self.commit.wants_digest(item, visit):
            visit = replace(visit, digest=self.digester(self.commit.job(item, visit)))
            self._read_here = True
        return visit

    def _cancel_waiting(self) -> None:
        """A stop takes one request's time, not workers x delay: fetches still
        waiting for their host give up and their URLs stay uncommitted."""
        if self._stop_now and not self._cancelled:
            self._cancelled = True
            cancel = getattr(self.fetcher, "cancel_waiting", None)
            if cancel is not None:
                cancel()

    def _collect(self, item: QueuedUrl, future: Future, visit: Visit | None,
                 ahead: bool) -> Visit | None:
        """The Visit a finished future stands for: a fetch, or the digest of
        one; None for a URL to leave uncommitted (never sent, or its parser
        process died), so that --resume fetches it, or to hand out again
        (a fetch that goes on later: a retry, a redirect to another host)."""
        if visit is None:
            self._fetching -= 1
            visit = future.result()
            if ahead:
                return self._speculated(item, visit)
            pending = visit.result.pending
            if pending is not None:
                self._resume[item.id] = pending
                self.handed_out -= 1
                self.frontier.requeue(item, host_key(pending.url), pending.not_before)
                return None
            self._resume.pop(item.id, None)
            self.frontier.fetched(item)
            return None if visit.result.cancelled else visit
        try:
            digest = future.result()
        except BrokenExecutor as exc:
            self._parsers_broke(exc)
            return None
        except OSError:            # its files could not be saved: this machine's failure
            raise
        except Exception as exc:   # the digest itself failed on this page: record, go on
            digest = Digest(error=f"parse: {type(exc).__name__}: {exc}")
        if ahead:                  # a speculative page's links: speculate further
            if item.url in self.speculation.bounds:
                self._offer(digest.followed, self.speculation.bounds[item.url] + 1)
            return None
        return replace(visit, digest=digest)

    # -- speculative fetch-ahead (controller/speculation.py) -----------------
    def _offer(self, links, bound: int) -> None:
        """Speculate the links, of a page, that no page queued yet; ``bound`` is
        the deepest level they can have."""
        limits = self.config
        if self.stop_reason or (limits.max_depth and bound > limits.max_depth):
            return
        if limits.max_pages:
            # A page budget may end before the URLs that come first in
            # breadth-first order are even found; a page fetched for a
            # level beyond them could never be recorded.
            return
        for item in self.speculation.evict(self.frontier.current_level):
            self.frontier.unspeculate(item)
        for url in self.admission.speculable(links, bound, self.speculation.wants):
            if self.speculation.wants(url):
                self.speculation.add(self.admission.speculate(url, bound), bound)

    def _speculated(self, item: QueuedUrl, visit: Visit) -> None:
        """A speculative fetch ended: hand it to its real item, or keep it (and
        read its links, to speculate one step further)."""
        self.frontier.fetched(item)
        if visit.result.cancelled:
            self.speculation.dropped(item)
            return None
        bound = self.speculation.bounds.get(item.url, 0) + 1   # for the links on it
        claim = self.speculation.fetched(item, visit)
        if claim is not None:
            self._adopted.append((claim, visit))
        elif visit.digest is not None:   # --processes 0: read in the fetch thread
            self._offer(visit.digest.followed, bound)
        elif visit.needs_digest:
            self._digest(item, visit, ahead=True)   # links only: a negative id saves no files
        return None

    def claim(self, items: list[QueuedUrl]) -> frozenset[int]:
        """Ids of the URLs just queued whose fetch was speculative (handed
        over now, or when it ends); withdraw those still waiting."""
        taken = set()
        for item in items:
            state = self.speculation.claim(item)
            if state == "taken":
                taken.add(item.id)
            elif isinstance(state, Visit):
                taken.add(item.id)
                self._adopted.append((item, state))
            elif state is not None:
                self.frontier.unspeculate(state)
        return frozenset(taken)

    def _forget_speculated(self, urls) -> None:
        """These URLs are taken care of otherwise: no speculative fetch of them."""
        for url in urls:
            waiting = self.speculation.forget(url)
            if waiting is not None:
                self.frontier.unspeculate(waiting)

    def _adopt(self) -> None:
        """Queued URLs whose response a speculative fetch got: on as if fetched now."""
        self._forget_speculated(self.admission.take_redirected())
        while self._adopted:
            item, visit = self._adopted.pop(0)
            if self.stop_reason or (self.config.max_pages and self.handed_out >= self.config.max_pages):
                continue   # stays uncommitted, as a URL never handed out (--resume fetches it)
            self.handed_out += 1
            pending = visit.result.pending
            if pending is not None:   # a redirect, a retry: the real item goes on from there
                self._resume[item.id] = pending
                self.handed_out -= 1
                self.frontier.requeue(item, host_key(pending.url), pending.not_before)
            elif not visit.result.cancelled:
                self._dispatch(item, replace(visit, digest=None))

    def _process(self, item: QueuedUrl, visit: Visit) -> None:
        """Commit a page, or park it when it was fetched ahead of its level:
        its children's level is known only once the open level closes."""
        if item.level > self.frontier.current_level:
            self._parked.append((item, visit))
            if visit.digest is not None:
                self._offer(visit.digest.followed, item.level + 1)
            return
        self.commit(item, visit)
        self._commit_parked()

    def _commit_parked(self) -> None:
        """Parked pages are all of the level after the open one: once it opens,
        all of them are committed, in id order (which may open the next,
        parking none)."""
        while self._parked and self._parked[0][0].level <= self.frontier.current_level:
            ready, self._parked = self._parked, []
            for parked_item, parked_visit in sorted(ready, key=lambda pair: pair[0].id):
                self.commit(parked_item, parked_visit)

    def _digest(self, item: QueuedUrl, visit: Visit, ahead: bool = False) -> None:
        if self.parsers is None:   # --processes 0: here (a speculative page adopted)
            self._process(item, replace(visit, digest=self.digester(self.commit.job(item, visit))))
            return
        try:
            self._track(self.parsers.submit(self.commit.job(item, visit)), item, visit, ahead)
        except BrokenExecutor as exc:
            self._parsers_broke(exc)

    def _parsers_broke(self, exc: BrokenExecutor) -> None:
        """A parser process died (killed, out of memory): every page it and
        the other parsers held is lost to this run, not to the crawl."""
        self.parser_failure = self.parser_failure or f"{type(exc).__name__}: {exc}"
        self.request_stop("parser-died")

    def _report_progress(self) -> None:
        now = time.monotonic()
        if self.on_progress is None or now - self._last_progress < PROGRESS_SECONDS:
            return
        self._last_progress = now
        notes = self._pace_notes(now)
        flags = self.frontier.level_flags
        level = min(self.frontier.current_level, len(flags))   # an --order's: no level closes
        start = flags[level - 1] if level else 0
        done_before = sum(self.tally.level(k).urls for k in range(level))
        self.on_progress(Snapshot(
            elapsed=now - self.started, level=level,
            level_done=self.tally.urls - done_before,
            level_size=(flags[level] if level < len(flags) else len(self.frontier)) - start,
            urls=self.tally.urls, pages=self.tally.pages, errors=self.tally.errors,
            bytes=self.tally.bytes, queue_total=len(self.frontier),
            ahead=len(self._parked) + len(self.speculation.kept), notes=notes))

    def _pace_notes(self, now: float) -> tuple[str, ...]:
        """Hosts whose robots.txt Crawl-delay now sets their pace, said once
        each (PACE_NOTES hosts at most, then that there are more), looked for
        once in PACE_SECONDS: the gate's records are walked, one per host."""
        if now - self._pace_looked < PACE_SECONDS or self._pace_named > PACE_NOTES:
            return ()
        self._pace_looked = now
        lines = pace.crawl_delay_note(self.gate.paces(), self._pace_said)
        room = PACE_NOTES - self._pace_named
        if len(lines) > room:
            lines = lines[:room] + ["pace: more hosts have a Crawl-delay in robots.txt "
                                    "(stats.json: pace)"]
        self._pace_named += len(lines)
        return tuple(lines)

    def pace(self) -> dict:
        """stats.json's "pace": what set each host's interval, summed up."""
        return pace.summary(self.gate.paces(), self.gate.policy.describe())

    # -- levels and the end -----------------------------------------------
    def close_levels(self) -> None:
        """The levels the frontier finished: a LEVEL line, the files synced, on_level told."""
        flags = self.frontier.level_flags
        while self.levels_closed < self.frontier.finished_levels:
            k = self.levels_closed
            self.levels_closed += 1
            level = self.tally.level(k)
            level.m = flags[k + 1] if k + 1 < len(flags) else len(self.frontier)
            self.trace.level(k, level.urls, level.new_urls, level.m)
            self.journal.sync()
            self.store.sync()
            if self.on_level:
                self.on_level(k, level)

    def speculation_stats(self) -> dict:
        return self.speculation.stats()

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


def _finished(done: SimpleQueue, timeout: float) -> list[Future]:
    """Futures that finished: wait up to ``timeout`` for one, then take all
    there are (a None is a wake-up, no future)."""
    try:
        futures = [done.get(timeout=timeout)]
    except Empty:
        return []
    while True:
        try:
            futures.append(done.get_nowait())
        except Empty:
            return [future for future in futures if future is not None]
